"""CAST with Flink's semantics over Arrow arrays: truncation, HALF_UP, errors naming the value."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.errors import ExecutionError

# What a string must look like to cast to a type (used by TRY_CAST and to name a bad value).
VALID_TEXT = {
    "int": r"^\s*[+-]?[0-9]+\s*$",
    "float": r"^\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|NaN|Infinity|inf)\s*$",
    "decimal": r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$",
    "bool": r"^\s*(?i:true|false|t|f|yes|no|y|n|1|0)\s*$",
    "date": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\s*$",
    "timestamp": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
                 r"([ T][0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)?\s*$",
}

_CANONICAL_TIMESTAMP = r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?$"


def text_kind(t: pa.DataType) -> str | None:
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_floating(t):
        return "float"
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_date(t):
        return "date"
    if pa.types.is_timestamp(t):
        return "timestamp"
    return None


def cast_array(arr: pa.Array, target: pa.DataType, safe: bool = False,
               checked: bool = False) -> pa.Array:
    """CAST ``arr`` to ``target``; ``safe`` (TRY_CAST) gives NULL where the value does not fit;
    ``checked``: a string ``arr``'s values already match ``VALID_TEXT`` of the target's kind.

    Raises:
        ExecutionError: naming the first value that cannot be cast.
    """
    src = arr.type
    if src == target:
        return arr
    if src == pa.null():
        return pa.nulls(len(arr), target)
    if T.is_string(src) and not T.is_string(target):
        return _from_string(arr, target, safe, checked)
    if T.is_string(target):
        return _to_string(arr)
    try:
        if pa.types.is_floating(src) and pa.types.is_integer(target):
            return pc.trunc(arr).cast(target)  # Java narrowing: toward zero
        if pa.types.is_decimal(src) and pa.types.is_integer(target):
            return pc.trunc(arr).cast(target, safe=False)
        if pa.types.is_decimal(target) and (pa.types.is_floating(src) or
                                            pa.types.is_decimal(src)):
            if pa.types.is_decimal(src) and src.scale <= target.scale:
                return arr.cast(target)
            rounded = pc.round(arr, ndigits=target.scale, round_mode="half_towards_infinity")
            return rounded.cast(target, safe=False) if pa.types.is_decimal(src) \
                else rounded.cast(target)
        if pa.types.is_decimal(src) and pa.types.is_floating(target):
            # Through the decimal's text: Arrow's own cast multiplies by a power of ten and is
            # off by an ulp (0.3 became 0.30000000000000004); Java's doubleValue is exact.
            return arr.cast(pa.string()).cast(target)
        if pa.types.is_timestamp(src) and pa.types.is_date(target):
            return pc.floor_temporal(arr, unit="day").cast(target)
        if pa.types.is_integer(src) and pa.types.is_decimal(target):
            # Arrow wants room for every int32/int64 value; check the actual values instead.
            return arr.cast(pa.decimal128(38, target.scale)).cast(target)
        if pa.types.is_boolean(src) and T.is_numeric(target):
            return arr.cast(pa.int8()).cast(target)
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        if safe:
            return _try_elementwise(arr, target)
        bad = _first_bad(arr, target)
        msg = f"cannot CAST {bad} from {T.type_name(src)} to {T.type_name(target)}: {e}"
        raise ExecutionError(msg) from None


def _from_string(arr: pa.Array, target: pa.DataType, safe: bool, checked: bool = False
                 ) -> pa.Array:
    kind = text_kind(target)
    if kind is None:
        msg = f"CAST from STRING to {T.type_name(target)} is not supported"
        raise ExecutionError(msg)
    ok = pa.scalar(True) if checked else pc.fill_null(
        pc.match_substring_regex(arr, VALID_TEXT[kind]), True)
    if not (checked or pc.all(ok).as_py()):
        if not safe:
            idx = pc.index(ok, False).as_py()
            msg = f"cannot CAST {arr[idx].as_py()!r} to {T.type_name(target)}: not a valid value"
            raise ExecutionError(msg)
        arr = pc.if_else(ok, arr, pa.nulls(len(arr), arr.type))
    trimmed = pc.utf8_trim_whitespace(arr)
    try:
        if kind == "bool":
            low = pc.utf8_lower(trimmed)
            truthy = pc.is_in(low, pa.array(["true", "t", "yes", "y", "1"]))
            return pc.if_else(pc.is_null(low), pa.nulls(len(low), pa.bool_()), truthy)
        if kind == "decimal":
            as_dec = trimmed.cast(pa.decimal128(38, min(target.scale + 1, 38)))
            return cast_array(as_dec, target)
        if kind == "int":
            return trimmed.cast(pa.int64()).cast(target)
        if kind == "timestamp":
            if pc.all(pc.fill_null(pc.match_substring_regex(trimmed, _CANONICAL_TIMESTAMP),
                                   True)).as_py():
                try:  # all 'yyyy-MM-dd HH:mm[:ss[.f]]': Arrow's parser reads them as they are
                    return trimmed.cast(target)
                except pa.ArrowInvalid:
                    pass
            filled = pc.if_else(pc.match_substring_regex(trimmed, r"^\S+$"),
                                pc.binary_join_element_wise(trimmed, " 00:00:00", ""), trimmed)
            return pc.replace_substring(filled, "T", " ").cast(target)
        return trimmed.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        if safe:
            return _try_elementwise(arr, target)
        msg = f"cannot CAST STRING to {T.type_name(target)}: {e}"
        raise ExecutionError(msg) from None


def _to_string(arr: pa.Array) -> pa.Array:
    t = arr.type
    if pa.types.is_boolean(t):
        return pc.if_else(arr, "TRUE", "FALSE")
    if pa.types.is_timestamp(t):
        return _timestamp_text(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t) or \
            pa.types.is_struct(t):
        return _nested_text(arr)
    if pa.types.is_date(t):
        return pc.strftime(arr, format="%Y-%m-%d")
    return arr.cast(pa.string())


def _nested_text(arr: pa.Array) -> pa.Array:
    """Flink's text of ARRAY '[1, 2]', MAP '{a=1, b=2}' and ROW '(1, x)' values (a NULL
    inside is 'NULL'), built from the children's text without a row loop."""
    t = arr.type
    if pa.types.is_struct(t):
        fields = [pc.fill_null(cast_array(pc.struct_field(arr, [i]), pa.string()), "NULL")
                  for i in range(t.num_fields)]
        body = pc.binary_join_element_wise(*fields, ", ") if len(fields) > 1 else fields[0]
        out = pc.binary_join_element_wise("(", body, ")", "")
    else:
        offsets = arr.offsets
        if pa.types.is_map(t):
            entries = arr.values
            keys = pc.fill_null(cast_array(pc.struct_field(entries, [0]), pa.string()), "NULL")
            items = pc.fill_null(cast_array(pc.struct_field(entries, [1]), pa.string()), "NULL")
            texts = pc.binary_join_element_wise(keys, items, "=")
            opening, closing = "{", "}"
        else:
            texts = pc.fill_null(cast_array(arr.values, pa.string()), "NULL")
            opening, closing = "[", "]"
        lists = pa.ListArray.from_arrays(offsets, texts)
        out = pc.binary_join_element_wise(opening, pc.binary_join(lists, ", "), closing, "")
    return pc.if_else(pc.is_valid(arr), out, pa.nulls(len(arr), pa.string())) \
        if arr.null_count else out


def _timestamp_text(arr: pa.Array) -> pa.Array:
    """'YYYY-MM-DD HH:MM:SS[.fff]' per timestamp (the unit's digits, as Flink prints them).

    Arrow's strftime costs about a microsecond per value; here it formats only the distinct
    days, and the time of day is integer arithmetic (floored, so times before 1970 are right)
    turned into text by Arrow's number casts."""
    digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[arr.type.unit]
    per_second = 10 ** digits
    raw = arr.cast(pa.int64()).fill_null(0).to_numpy()
    seconds, frac = np.divmod(raw, per_second)
    days, of_day = np.divmod(seconds, 86_400)
    encoded = pc.dictionary_encode(pa.array(days.astype(np.int32), pa.int32()))
    day_text = pc.strftime(encoded.dictionary.cast(pa.date32()), format="%Y-%m-%d")
    parts = [pc.take(day_text, encoded.indices)]
    hms = (of_day // 3600, of_day // 60 % 60, of_day % 60)
    for v in hms:
        parts.append(pc.utf8_lpad(pa.array(v).cast(pa.string()), width=2, padding="0"))
    out = pc.binary_join_element_wise(parts[0], pc.binary_join_element_wise(
        *parts[1:], ":"), " ")
    if digits:
        text = pc.utf8_lpad(pa.array(frac).cast(pa.string()), width=digits, padding="0")
        out = pc.binary_join_element_wise(out, text, ".")
    if arr.null_count:
        out = pc.if_else(pc.is_valid(arr), out, pa.nulls(len(arr), pa.string()))
    return out


def _first_bad(arr: pa.Array, target: pa.DataType) -> str:
    # Bisect to the first value that fails: a handful of vectorised casts, not a row loop.
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            cast_array(arr.slice(lo, mid - lo), target)
            lo = mid
        except ExecutionError:
            hi = mid
    return repr(arr[lo].as_py()) if len(arr) else "a value"


def _try_elementwise(arr: pa.Array, target: pa.DataType) -> pa.Array:
    # TRY_CAST after a failed vectorised cast: bisect into good and bad ranges.
    if len(arr) == 0:
        return pa.array([], target)
    try:
        return cast_array(arr, target)
    except ExecutionError:
        if len(arr) == 1:
            return pa.nulls(1, target)
        mid = len(arr) // 2
        return pa.concat_arrays([_try_elementwise(arr.slice(0, mid), target),
                                 _try_elementwise(arr.slice(mid), target)])
