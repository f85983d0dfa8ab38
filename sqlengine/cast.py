"""CAST with Flink's semantics over Arrow arrays: truncation, HALF_UP, errors naming the value."""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.bitmap import is_bitmap
from sqlengine.bitmap import texts as bitmap_texts
from sqlengine.errors import DataValueError, ExecutionError

# What a string must look like to cast to a type (used by TRY_CAST and to name a bad value).
# CAST's integer text (BinaryStringData.toInt / toLong): only spaces are trimmed, a tab is
# no integer text (PyFlink 2.3: TRY_CAST('\t42\t' AS INT) is NULL, AS DOUBLE 42.0).
_CAST_TEXT = {"int": r"^ *[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+) *$"}

VALID_TEXT = {
    "int": r"^\s*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*$",  # (a fraction is dropped)
    # (Java's Double.parseDouble: a type suffix f / d is allowed, 'inf' is no number)
    "float": r"^\s*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?|NaN|Infinity)\s*$",
    "decimal": r"^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*$",
    "bool": r"^\s*(?i:true|false|t|f|yes|no|y|n|1|0)\s*$",
    "date": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}\s*$",
    "timestamp": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
                 r"( [0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)?\s*$",
    # TIMESTAMP_LTZ: a TIMESTAMP's text (in the session time zone) or one in UTC ending 'Z'
    # (as Flink's csv and json formats write it: '2020-12-30T12:13:14.123Z').
    "ltz": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
           r"([ T][0-9]{1,2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)?Z?\s*$",
    "time": r"^\s*[0-9]{1,2}:[0-9]{1,2}(:[0-9]{1,2}(\.[0-9]{1,9})?)?\s*$",
    "bytes": r"(?s)^.*$",
}

# BOOLEAN text, in any case (Flink's BinaryStringDataUtil.toBoolean)
_TRUE_TEXT = ["true", "t", "yes", "y", "1"]
_FALSE_TEXT = ["false", "f", "no", "n", "0"]

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
        return "ltz" if t.tz is not None else "timestamp"
    if pa.types.is_time(t):
        return "time"
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    return None


def _nested(arr: pa.Array, target: pa.DataType, safe: bool, zone: str) -> pa.Array:
    """An ARRAY, MAP or ROW cast element by element with CAST's own rules (a DECIMAL 1.5 in
    an ARRAY<INT> is 1, as a scalar's cast). A ROW is cast field by field in order (Flink's:
    the names are the target's; Arrow would match fields by name). TRY_CAST: a value one of
    whose elements does not fit is NULL as a whole, as in Flink."""
    src = arr.type
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    null = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else \
        np.zeros(len(arr), dtype=bool)

    def cast_part(part: pa.Array, to: pa.DataType) -> tuple[pa.Array, np.ndarray]:
        out = cast_array(part, to, safe, zone=zone)
        lost = np.zeros(len(part), dtype=bool)
        if safe and out.null_count > part.null_count:
            lost = np.asarray(pc.and_(pc.is_valid(part), pc.is_null(out))
                              .to_numpy(zero_copy_only=False))
        return out, lost

    if pa.types.is_struct(src):
        if src.num_fields != target.num_fields:
            raise ExecutionError(f"cannot CAST {T.type_name(src)} to {T.type_name(target)}: "
                                 f"{src.num_fields} fields to {target.num_fields}")
        children = []
        for i in range(src.num_fields):
            child, lost = cast_part(arr.field(i), target.field(i).type)
            children.append(child)
            null |= lost
        return pa.StructArray.from_arrays(children, fields=list(target),
                                          mask=pa.array(null) if null.any() else None)
    offsets, children = own_elements(arr)
    rebased = pa.array(offsets, pa.int32())
    if pa.types.is_map(src):
        keys, lost_k = cast_part(children[0], target.key_type)
        items, lost_i = cast_part(children[1], target.item_type)
        lost = lost_k | lost_i
    else:
        values, lost = cast_part(children[0], target.value_type)
    if lost.any():  # (TRY_CAST) the values holding an element that did not fit
        counts = np.concatenate([[0], np.cumsum(lost)])
        null |= (counts[offsets[1:]] - counts[offsets[:-1]]) > 0
    mask = pa.array(null) if null.any() else None
    if pa.types.is_map(src):
        return pa.MapArray.from_arrays(rebased, keys, items, type=target, mask=mask)
    return pa.ListArray.from_arrays(rebased, values, type=target, mask=mask)


def own_elements(arr: pa.Array) -> tuple[np.ndarray, list[pa.Array]]:
    """A LIST or MAP array's offsets from 0 (int64) and its element arrays (values; or keys
    and items) cut to the elements its own rows hold: a slice of a bigger array (a batch cut
    from another) keeps its parent's offsets and children whole."""
    offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
    first, last = int(offsets[0]), int(offsets[-1])
    kids = [arr.keys, arr.items] if pa.types.is_map(arr.type) else [arr.values]
    return offsets - first, [k.slice(first, last - first) for k in kids]


_NESTED = (pa.types.is_struct, pa.types.is_list, pa.types.is_map)


def cast_array(arr: pa.Array, target: pa.DataType, safe: bool = False,
               checked: bool = False, zone: str = "UTC") -> pa.Array:
    """CAST ``arr`` to ``target``; ``safe`` (TRY_CAST) gives NULL where the value does not fit;
    ``checked``: a string ``arr``'s values already match ``VALID_TEXT`` of the target's kind;
    ``zone``: the session time zone a TIMESTAMP_LTZ is read and written in (its casts to and
    from STRING, TIMESTAMP, DATE and TIME).

    Raises:
        ExecutionError: naming the first value that cannot be cast.
    """
    src = arr.type
    if src == target:
        return arr
    if src == pa.null():
        return pa.nulls(len(arr), target)
    if T.is_variant(src) and T.is_string(target):  # (its JSON text: printing it)
        from sqlengine.variant import texts

        return texts(arr)
    if T.is_opaque(src) or T.is_opaque(target):
        if is_bitmap(src) and T.is_string(target):
            return bitmap_texts(arr)  # ({1,2,3}, as Flink's CAST of a BITMAP)
        msg = f"cannot CAST {T.type_name(src)} to {T.type_name(target)}"
        raise ExecutionError(msg)
    if T.is_ltz(src) != T.is_ltz(target) and (T.is_ltz(src) or T.is_ltz(target)):
        return _ltz_cast(arr, target, safe, checked, zone)
    if T.is_string(src) and not T.is_string(target):
        return _from_string(arr, target, safe, checked)
    if T.is_string(target):
        return _to_string(arr, zone)
    if any(is_kind(src) and is_kind(target) for is_kind in _NESTED) and \
            pa.types.is_map(src) == pa.types.is_map(target):
        return _nested(arr, target, safe, zone)
    try:
        special = _special(arr, src, target)
        if special is not None:
            return special
        if pa.types.is_floating(src) and pa.types.is_integer(target):
            return _float_to_int(arr, target)
        if pa.types.is_integer(src) and pa.types.is_integer(target):
            return arr.cast(target, safe=False)  # Java narrowing wraps around
        if pa.types.is_decimal(src) and pa.types.is_integer(target):
            return pc.trunc(arr).cast(target, safe=False)
        if pa.types.is_floating(src) and pa.types.is_decimal(target):
            return _float_to_decimal(arr, target)
        if pa.types.is_decimal(target) and pa.types.is_decimal(src):
            if src.scale > target.scale:
                arr = round_decimal(arr, target.scale)
            return fit_decimal(arr, target)
        if pa.types.is_decimal(src) and pa.types.is_floating(target):
            # Through the decimal's text: Arrow's own cast multiplies by a power of ten and is
            # off by an ulp (0.3 became 0.30000000000000004); Java's doubleValue is exact.
            return arr.cast(pa.string()).cast(target)
        if pa.types.is_timestamp(src) and pa.types.is_date(target):
            return pc.floor_temporal(arr, unit="day").cast(target)
        if pa.types.is_integer(src) and pa.types.is_decimal(target):
            # Arrow wants room for every int32/int64 value; check the actual values instead.
            room = target.precision - target.scale  # (digits before the point)
            if room < 19:  # (DECIMAL(38, 37): 2 fits, 20 is NULL, as Flink's)
                ints = arr.cast(pa.int64())
                fits = pc.and_(pc.less(ints, 10 ** room), pc.greater(ints, -(10 ** room)))
                values = pc.if_else(fits, ints, 0).cast(pa.decimal128(38, 0)).cast(
                    pa.decimal128(38, target.scale)).cast(target)
                return pc.if_else(fits, values, pa.nulls(len(values), target))
            return fit_decimal(arr.cast(pa.decimal128(38, target.scale)), target)
        if pa.types.is_boolean(src) and T.is_numeric(target):
            return arr.cast(pa.int8()).cast(target)
        if (pa.types.is_integer(src) or pa.types.is_floating(src)) and \
                pa.types.is_floating(target):
            # Java's widening to float / double rounds to the nearest (16777217 becomes
            # 1.6777216E7); Arrow's safe cast refuses the lost precision.
            return arr.cast(target, safe=False)
        return arr.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        if safe:
            return _try_elementwise(arr, target)
        bad = _first_bad(arr, target)
        msg = f"cannot CAST {bad} from {T.type_name(src)} to {T.type_name(target)}: {e}"
        raise DataValueError(msg) from None


_DAY = 86_400
_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}


def arrow_zone(zone: str) -> str:
    """A session time zone as Arrow names it: 'UTC', an IANA name, or an offset '+08:00'
    (Java's 'GMT+8' / 'UTC+08:00')."""
    m = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?", zone.strip())
    if m:
        return f"{m.group(1)}{int(m.group(2)):02d}:{m.group(3) or '00'}"
    return "UTC" if zone.strip().upper() in ("UTC", "GMT", "Z", "") else zone.strip()


def to_local(arr: pa.Array, zone: str) -> pa.Array:
    """TIMESTAMP_LTZ values (instants) as the wall-clock TIMESTAMPs of ``zone``."""
    naive = pa.timestamp(arr.type.unit)
    z = arrow_zone(zone)
    if z == "UTC":
        return arr.cast(naive)
    return pc.local_timestamp(arr.cast(pa.timestamp(arr.type.unit, tz=z))).cast(naive)


def from_local(arr: pa.Array, zone: str, later: bool = False) -> pa.Array:
    """Wall-clock TIMESTAMPs of ``zone`` as TIMESTAMP_LTZ instants, as Java's
    LocalDateTime.atZone: a time the clocks skip (a DST gap) moves on by the gap's length, a
    time they pass twice (the fall back) takes the earlier offset; ``later``: the later one
    (standard time), as java.util's SimpleDateFormat reads it (UNIX_TIMESTAMP, CONVERT_TZ)."""
    unit = arr.type.unit
    ltz = pa.timestamp(unit, tz="UTC")
    z = arrow_zone(zone)
    if z == "UTC":
        return arr.cast(ltz)
    first = pc.assume_timezone(arr, timezone=z, ambiguous="latest" if later else "earliest",
                               nonexistent="earliest")
    back = pc.local_timestamp(first)
    gap = pc.fill_null(pc.not_equal(back.cast(pa.int64()), arr.cast(pa.int64())), False)
    if pc.any(gap).as_py():  # offset before the gap: local(T - 1) - (T - 1)
        before = pc.subtract(first.cast(pa.int64()), 1)
        local_before = pc.local_timestamp(before.cast(pa.timestamp(unit, tz=z)))
        offset = pc.subtract(local_before.cast(pa.int64()), before)
        shifted = pc.subtract(arr.cast(pa.int64()), offset)
        first = pc.if_else(gap, shifted, first.cast(pa.int64())).cast(
            pa.timestamp(unit, tz=z))
    return first.cast(ltz)


def _ltz_cast(arr: pa.Array, target: pa.DataType, safe: bool, checked: bool,
              zone: str) -> pa.Array:
    """A cast to or from TIMESTAMP_LTZ (not both): through the wall clock of ``zone``;
    numbers are seconds since 1970 (as Flink's CAST of a number to TIMESTAMP_LTZ)."""
    src = arr.type
    if T.is_ltz(src):
        if T.is_numeric(target) or pa.types.is_boolean(target):
            if not T.is_numeric(target):
                msg = f"cannot CAST {T.type_name(src)} to {T.type_name(target)}"
                raise ExecutionError(msg)
            ticks = arr.cast(pa.int64())
            secs = pc.floor(pc.divide(ticks.cast(pa.float64()), float(_PER_SECOND[src.unit])))
            return cast_array(secs.cast(pa.int64()) if T.is_integer(target) else
                              pc.divide(ticks.cast(pa.float64()),
                                        float(_PER_SECOND[src.unit])), target, safe)
        return cast_array(to_local(arr, zone), target, safe, checked, zone)
    unit = target.unit
    if T.is_numeric(src):
        per = _PER_SECOND[unit]
        if T.is_integer(src):
            ticks = pc.multiply_checked(arr.cast(pa.int64()), per)
        else:
            ticks = pc.floor(pc.multiply(arr.cast(pa.float64()), float(per))).cast(pa.int64())
        return ticks.cast(target)
    if T.is_string(src):
        if not checked:
            ok = pc.fill_null(pc.match_substring_regex(arr, VALID_TEXT["ltz"]), True)
            if not pc.all(ok).as_py():
                if not safe:
                    idx = pc.index(ok, False).as_py()
                    msg = (f"cannot CAST {arr[idx].as_py()!r} to {T.type_name(target)}: not "
                           "a valid value")
                    raise DataValueError(msg)
                arr = pc.if_else(ok, arr, pa.nulls(len(arr), arr.type))
        utc = pc.fill_null(pc.match_substring_regex(arr, r"Z\s*$"), False)
        text = pc.replace_substring_regex(arr, r"Z(\s*)$", r"\1")
        text = pc.replace_substring_regex(  # (ISO-8601's 'T' between the date and the time)
            text, r"^(\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2})T", r"\1 ")
        naive = cast_array(text, pa.timestamp(unit), safe, True, zone)
        local = from_local(naive, zone)
        if pc.any(utc).as_py():  # (text ending 'Z' is a UTC time)
            return pc.if_else(utc, naive.cast(target), local)
        return local
    naive = cast_array(arr, pa.timestamp(unit), safe, checked, zone)
    return from_local(naive, zone)


def ltz_text(arr: pa.Array, iso: bool) -> pa.Array:
    """TIMESTAMP_LTZ values as UTC text ending 'Z', as Flink's formats write them: csv's and
    json's 'SQL' standard '2020-12-30 12:13:14.123Z', json's 'ISO-8601' (``iso``)
    '2020-12-30T12:13:14.123Z'."""
    text = cast_array(arr, pa.string())
    if iso:
        text = pc.replace_substring(text, " ", "T", max_replacements=1)
    return pc.binary_join_element_wise(text, pa.scalar("Z"), "")


def _ticks(arr: pa.Array) -> np.ndarray:
    raw = arr.cast(pa.int32() if pa.types.is_time32(arr.type) else pa.int64())
    return raw.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _mask(arr: pa.Array) -> np.ndarray | None:
    return pc.is_null(arr).to_numpy(zero_copy_only=False) if arr.null_count else None


def _rescale(ticks: np.ndarray, src_unit: str, dst_unit: str) -> np.ndarray:
    """Ticks of one unit in another: more digits multiply, fewer floor (Flink drops the
    digits beyond the precision)."""
    a, b = _PER_SECOND[src_unit], _PER_SECOND[dst_unit]
    if b < a:
        return np.floor_divide(ticks, a // b)
    if b > a and len(ticks) and np.abs(ticks).max() > np.iinfo(np.int64).max // (b // a):
        raise pa.ArrowInvalid(_NS_RANGE if dst_unit == "ns" else "out of range")
    return ticks * (b // a)


# (TIMESTAMP(7..9) are Arrow's nanoseconds, an int64 from 1970: it wrapped round silently)
_NS_RANGE = ("out of the range TIMESTAMP(7) to TIMESTAMP(9) hold here (1677-09-21 00:12:43 to "
             "2262-04-11 23:47:16)")


def _ns_checked(text: pa.Array, parsed: pa.Array) -> pa.Array:
    """``parsed`` (``text`` read as a TIMESTAMP), unless a nanosecond one wrapped round: Arrow
    reads '0001-01-01' into nanoseconds as 1754-08-30 without a word."""
    if not (pa.types.is_timestamp(parsed.type) and parsed.type.unit == "ns"):
        return parsed
    whole = pc.replace_substring_regex(text, r"\.[0-9]*$", "").cast(pa.timestamp("s"))
    again = pc.floor_temporal(parsed, unit="second").cast(pa.timestamp("s"))
    if not pc.all(pc.fill_null(pc.equal(whole, again), True)).as_py():
        raise pa.ArrowInvalid(_NS_RANGE)
    return parsed


def _special(arr: pa.Array, src: pa.DataType, target: pa.DataType) -> pa.Array | None:
    """The casts of TIME, between TIMESTAMP precisions and to BINARY(n) (None: another)."""
    if pa.types.is_timestamp(src) and pa.types.is_timestamp(target):
        ticks = _rescale(_ticks(arr), src.unit, target.unit)
        return pa.array(ticks, pa.int64(), mask=_mask(arr)).cast(target)
    if pa.types.is_time(target) and (pa.types.is_timestamp(src) or pa.types.is_time(src)):
        per = _PER_SECOND[src.unit]
        of_day = np.mod(_ticks(arr), _DAY * per)
        ticks = _rescale(of_day, src.unit, target.unit)
        store = pa.int32() if pa.types.is_time32(target) else pa.int64()
        return pa.array(ticks.astype(store.to_pandas_dtype()), store,
                        mask=_mask(arr)).cast(target)
    if pa.types.is_time(src) and pa.types.is_timestamp(target):
        ticks = _rescale(_ticks(arr), src.unit, target.unit)  # on 1970-01-01
        return pa.array(ticks, pa.int64(), mask=_mask(arr)).cast(target)
    if pa.types.is_decimal(src) and pa.types.is_boolean(target):  # (not 0 is TRUE, as Flink)
        return pc.not_equal(arr, pa.scalar(decimal.Decimal(0)).cast(src))
    if pa.types.is_boolean(src) and pa.types.is_decimal(target):  # (TRUE is 1)
        return pc.if_else(arr, pa.scalar(decimal.Decimal(1)).cast(target),
                          pa.scalar(decimal.Decimal(0)).cast(target))
    if pa.types.is_fixed_size_binary(target) and (pa.types.is_binary(src) or
                                                  pa.types.is_fixed_size_binary(src)):
        width = target.byte_width
        values = [None if v is None else v[:width].ljust(width, b"\0")
                  for v in arr.to_pylist()]
        return pa.array(values, target)
    return None


def _float_to_int(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Java's narrowing of a double: toward zero, NaN is 0, beyond the range of an int (long
    for BIGINT) the nearest bound, then an INT's bits kept for TINYINT / SMALLINT."""
    x = np.trunc(arr.cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False))
    x = np.where(np.isnan(x), 0.0, x)
    bits = 63 if target == T.BIGINT else 31
    big, small = x >= 2.0**bits, x < -(2.0**bits)
    inside = np.where(big | small, 0.0, x).astype(np.int64)
    out = np.where(big, 2**bits - 1, np.where(small, -(2**bits), inside))
    return pa.array(out.astype(np.int64), pa.int64(), mask=_mask(arr)).cast(target,
                                                                           safe=False)


def _overflow_checked(arr: pa.Array, out: pa.Array, target: pa.DataType,
                      safe: bool) -> pa.Array:
    """A cast's result ``out`` whose NULLs where ``arr`` has a value are values too large
    for ``target``: TRY_CAST keeps them NULL, CAST fails naming the first (Flink 2.3's CAST
    of a STRING: 'Overflow'; they were NULL without a word. A number too large for a
    DECIMAL is NULL in Flink, an error nowhere)."""
    if safe or out.null_count == arr.null_count:
        return out
    lost = pc.and_(pc.is_valid(arr), pc.is_null(out))
    value = arr[pc.index(lost, True).as_py()].as_py()
    msg = f"cannot CAST {value!r} to {T.type_name(target)}: out of its range"
    raise DataValueError(msg)


def round_decimal(arr: pa.Array, digits: int, mode: str = "half_towards_infinity"
                  ) -> pa.Array:
    """A DECIMAL rounded to ``digits`` (HALF_UP by default), one integral digit wider so
    that the carry fits (999.995 rounds to 1000.00): Arrow's own rounding gives 0.000 for a
    value that no longer fits its precision, without an error, once an array holds more
    than one value."""
    t = arr.type
    wide = pa.decimal128(t.precision + 1, t.scale) if t.precision < 38 else \
        pa.decimal256(t.precision + 1, t.scale)
    return pc.round(arr.cast(wide), ndigits=digits, round_mode=mode)


def fit_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``arr`` (a decimal with the target's scale or fewer digits) as ``target``; a value
    with too many digits is NULL, as Flink's DecimalData.fromBigDecimal gives (a CAST of a
    STRING then fails, see _overflow_checked)."""
    try:
        return arr.cast(target)
    except pa.ArrowInvalid:
        pass
    # (a DECIMAL(75, s) read from text is compared as it is: 39 digits do not fit 38)
    if pa.types.is_decimal256(arr.type):
        wide = arr
    else:
        # (the source's integral digits at the target's scale: DECIMAL(10, 2) to
        # DECIMAL(38, 37) needs 45 digits, past Arrow's 38 of decimal128)
        digits = arr.type.precision - arr.type.scale + target.scale
        wide = arr.cast(pa.decimal128(38, target.scale) if digits <= 38 else
                        pa.decimal256(min(digits, 76), target.scale))
    bound = pa.scalar(decimal.Decimal(10) ** (target.precision - target.scale), wide.type)
    fits = pc.less(pc.abs(wide), bound)
    return pc.if_else(fits, wide, pa.nulls(len(wide), wide.type)).cast(target)


# Python's decimal arithmetic in 80 digits: exact for any value of 76 digits (the default
# context's 28 round a DECIMAL(38, s)).
WIDE_DECIMALS = decimal.Context(prec=80)


def _cut_to(scale: int) -> Callable[[object], decimal.Decimal | None]:
    """A decimal text cut (toward zero) to ``scale`` digits after the point: the HALF_UP
    rounding to one digit fewer that follows reads only the digit kept last."""
    quantum = decimal.Decimal(1).scaleb(-scale)

    def cut(v: object) -> decimal.Decimal | None:
        try:
            d = decimal.Decimal(str(v).strip())
            return d.quantize(quantum, rounding=decimal.ROUND_DOWN, context=WIDE_DECIMALS)
        except decimal.InvalidOperation:
            return None

    return cut


def _float_to_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """Flink's BigDecimal.valueOf(double): the double's shortest decimal text, rounded
    HALF_UP to the scale; NULL where the digits do not fit (NaN and infinity cannot be)."""
    quantum = decimal.Decimal(1).scaleb(-target.scale)
    limit = decimal.Decimal(10) ** (target.precision - target.scale)

    def one(v: float) -> decimal.Decimal | None:
        if math.isnan(v) or math.isinf(v):
            msg = "not a number"
            raise pa.ArrowInvalid(msg)
        # (a FLOAT widens to DOUBLE first, as Flink: 0.1f is 0.10000000149011612)
        d = decimal.Decimal(_shortest(v, False))
        if abs(d) >= limit:
            return None
        # (a context of 80 digits: the default 28 cannot quantize to DECIMAL(38, 30))
        d = d.quantize(quantum, rounding=decimal.ROUND_HALF_UP, context=WIDE_DECIMALS)
        return d if abs(d) < limit else None

    return per_distinct(arr, one, target)


def per_distinct(arr: pa.Array, fn: Callable[[object], object], out: pa.DataType
                  ) -> pa.Array:
    """``fn`` of each distinct non-NULL value, spread back over ``arr``."""
    encoded = pc.dictionary_encode(arr)
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    results = pa.array([fn(v) for v in encoded.dictionary.to_pylist()], out)
    return pc.take(results, encoded.indices)


def _shortest(v: float, single: bool) -> str:
    """The shortest decimal text that reads back as ``v`` (as a FLOAT if ``single``)."""
    if single:
        return np.format_float_positional(np.float32(v), unique=True, trim="0")
    return repr(float(v))


# A \u00xx escape with a lower-case hex digit (not an escaped backslash followed by 'u')
_LOWER_HEX = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")


def jackson_escapes(text: str) -> str:
    """JSON text written by Python's json module as Jackson writes it: a control character
    escaped with capital hex digits (\u001F, Python writes \u001f)."""
    if "\\u00" not in text:
        return text
    return _LOWER_HEX.sub(lambda m: f"{m.group(1)}\\u00{m.group(2).upper()}", text)


def java_double_text(v: float, single: bool = False) -> str:
    """Java's Double.toString (Float.toString if ``single``): '1.0', '0.001', '1.0E20',
    '1.0E-5', 'NaN', 'Infinity'."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    d = decimal.Decimal(_shortest(v, single)).normalize()
    sign, digits, exponent = d.as_tuple()
    text = "".join(map(str, digits))
    e = len(digits) + int(exponent) - 1  # the scientific exponent
    if -3 <= e < 7:
        if e >= 0:
            whole, frac = text[:e + 1].ljust(e + 1, "0"), text[e + 1:]
        else:
            whole, frac = "0", "0" * (-e - 1) + text
        body = f"{whole}.{frac or '0'}"
    else:
        body = f"{text[0]}.{text[1:] or '0'}E{e}"
    return ("-" if sign else "") + body


def java_double_texts(arr: pa.Array) -> pa.Array:
    """java_double_text of each DOUBLE / FLOAT, vectorised: from 10^-3 to 10^7 (and zero)
    Java prints the shortest digits plainly, as Arrow's cast does, with '.0' on a whole
    number; the other values (E notation, NaN, Infinity) are written one distinct value at a
    time."""
    single = arr.type == pa.float32()
    text = pc.cast(arr, pa.string())
    size = pc.abs(arr)
    plain = pc.or_(pc.and_(pc.greater_equal(size, 1e-3), pc.less(size, 1e7)),
                   pc.equal(size, 0))
    plain = pc.fill_null(plain, True)
    text = pc.if_else(pc.match_substring(text, "."), text, pc.binary_join_element_wise(
        text, ".0", ""))
    if pc.all(plain).as_py():
        return text
    rest = pc.invert(plain)
    others = per_distinct(arr.filter(rest), lambda v: java_double_text(v, single),
                           pa.string())
    return pc.replace_with_mask(text, rest, others)


def _from_string(arr: pa.Array, target: pa.DataType, safe: bool, checked: bool = False
                 ) -> pa.Array:
    kind = text_kind(target)
    if kind is None:
        msg = f"CAST from STRING to {T.type_name(target)} is not supported"
        raise ExecutionError(msg)
    if kind in ("date", "timestamp") and not checked:  # (CAST's reading, not csv's / json's)
        return _datetime_of_text(arr, target, safe)
    if kind == "bool" and not checked:
        return _boolean_of_text(arr, safe)
    ok = pa.scalar(True) if checked else pc.fill_null(
        pc.match_substring_regex(arr, _CAST_TEXT.get(kind, VALID_TEXT[kind])), True)
    if not (checked or pc.all(ok).as_py()):
        if not safe:
            idx = pc.index(ok, False).as_py()
            msg = f"cannot CAST {arr[idx].as_py()!r} to {T.type_name(target)}: not a valid value"
            raise DataValueError(msg)
        arr = pc.if_else(ok, arr, pa.nulls(len(arr), arr.type))
    trimmed = pc.utf8_trim_whitespace(arr)
    try:
        if kind == "bool":
            low = pc.utf8_lower(trimmed)
            truthy = pc.is_in(low, pa.array(_TRUE_TEXT))
            return pc.if_else(pc.is_null(low), pa.nulls(len(low), pa.bool_()), truthy)
        if kind == "decimal":
            # (one more digit than the target's scale, for rounding; 75 digits of room, so
            # that 38 nines with that digit still read)
            wide = pa.decimal256(75, min(target.scale + 1, 75))
            try:
                as_dec = trimmed.cast(wide)
            except pa.ArrowInvalid:  # (more digits than that: cut to it, as the rounding
                as_dec = per_distinct(trimmed, _cut_to(wide.scale), wide)  # reads only it)
            return _overflow_checked(arr, cast_array(as_dec, target), target, safe)
        if kind == "int":  # ('+42' is 42; '42.5' is 42: Flink drops a fraction)
            digits = pc.replace_substring_regex(trimmed, r"^\+|\.[0-9]*$", "")
            digits = pc.replace_substring_regex(digits, r"^([+-]?)$", r"\10")
            return digits.cast(pa.int64()).cast(target)
        if kind == "float":
            trimmed = pc.replace_substring_regex(trimmed, r"([0-9.])[fFdD]$", r"\1")
        if kind == "time":
            return _parse_time(trimmed, target)
        if kind == "bytes":
            return cast_array(arr.cast(pa.binary()), target)  # (UTF-8, untrimmed)
        if kind == "date":
            return _pad_date(trimmed).cast(target)
        if kind == "timestamp":
            trimmed = _drop_digits(_pad_date(trimmed), T.precision_of(target))
            if pc.all(pc.fill_null(pc.match_substring_regex(trimmed, _CANONICAL_TIMESTAMP),
                                   True)).as_py():
                try:  # all 'yyyy-MM-dd HH:mm[:ss[.f]]': Arrow's parser reads them as they are
                    return _ns_checked(trimmed, trimmed.cast(target))
                except pa.ArrowInvalid:
                    pass
            # (a date alone is its midnight; as Flink's, a 'T' between date and time is not
            # TIMESTAMP text: TIMESTAMP_LTZ's reading turns ISO-8601 text into this first)
            filled = pc.if_else(pc.match_substring_regex(trimmed,
                                                         r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"),
                                pc.binary_join_element_wise(trimmed, " 00:00:00", ""), trimmed)
            return _ns_checked(filled, filled.cast(target))
        return trimmed.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        if safe:
            return _try_elementwise(arr, target, checked)
        # (Arrow's words for a number past the type's range: "Failed to parse string: 'x' as
        # a scalar of type int64", "Integer value x not in range: ...")
        m = re.search(r"Failed to parse string: '([^']*)'|Integer value (\S+) not in range",
                      str(e))
        if m is not None:
            msg = (f"cannot CAST {m.group(1) or m.group(2)!r} to {T.type_name(target)}: out of "
                   "its range")
        else:
            msg = f"cannot CAST STRING to {T.type_name(target)}: {e}"
        raise DataValueError(msg) from None


def plain_cast(col: pa.Array, t: pa.DataType, date_alone: bool = False) -> pa.Array | None:
    """STRING ``col`` cast by Arrow's parser directly when every value is in the plainest text
    of ``t`` (``-42``, ``2024-01-02``, ``2024-01-02 03:04:05.678`` with at most the type's
    digits of a second): one check and one cast, instead of the general readings' passes.
    None when a value is not that plain or Arrow refuses one (a month 13, an INT past its
    range, a day past its month's end): the general reading then reads it or names it.
    ``date_alone``: a TIMESTAMP's text may be a date alone (CAST's reading; the csv format
    takes the general path for it)."""
    kind = text_kind(t)
    if kind == "int":
        pattern = r"^-?[0-9]{1,18}$"
    elif kind == "date":
        pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    elif kind == "timestamp" and pa.types.is_timestamp(t) and t.tz is None:
        digits = T.precision_of(t)
        fraction = rf"(\.[0-9]{{1,{digits}}})?" if digits else ""
        pattern = (rf"^[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}"
                   rf"( [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}{fraction}){'?' if date_alone else ''}$")
    else:
        return None
    if not pc.all(pc.fill_null(pc.match_substring_regex(col, pattern), True)).as_py():
        return None
    try:
        return _ns_checked(col, col.cast(t))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _boolean_of_text(arr: pa.Array, safe: bool) -> pa.Array:
    """As Flink's CAST (BinaryStringDataUtil.toBoolean): 'true' 't' 'yes' 'y' '1' and
    'false' 'f' 'no' 'n' '0' in any case, untrimmed ('true ' is not BOOLEAN text)."""
    low = pc.utf8_lower(arr)
    truthy = pc.is_in(low, pa.array(_TRUE_TEXT))
    known = pc.or_(truthy, pc.is_in(low, pa.array(_FALSE_TEXT)))
    bad = pc.and_(pc.is_valid(arr), pc.invert(known))
    if not safe and pc.any(bad).as_py():
        value = arr[pc.index(bad, True).as_py()].as_py()
        msg = f"cannot CAST {value!r} to BOOLEAN: not a valid value"
        raise DataValueError(msg)
    return pc.if_else(known, truthy, pa.scalar(None, pa.bool_()))


def _datetime_of_text(arr: pa.Array, target: pa.DataType, safe: bool) -> pa.Array:
    """STRING to DATE or TIMESTAMP(p) as Flink's CAST reads it (cast_datetime_text.py)."""
    from sqlengine.cast_datetime_text import parse_dates, parse_timestamps

    plain = plain_cast(arr, target, date_alone=True)  # (else a day past its month's end...)
    if plain is not None:
        return plain
    if pa.types.is_date(target):
        values, ok = parse_dates(arr)
        store: pa.DataType = pa.int32()
    else:
        values, ok = parse_timestamps(arr, target.unit)
        store = pa.int64()
    bad = ~ok & pc.is_valid(arr).to_numpy(zero_copy_only=False)
    if bad.any() and not safe:
        value = arr[int(np.argmax(bad))].as_py()
        why = _NS_RANGE if pa.types.is_timestamp(target) and target.unit == "ns" and bool(
            parse_timestamps(arr.slice(int(np.argmax(bad)), 1), "us")[1][0]) \
            else "not a valid value"
        msg = f"cannot CAST {value!r} to {T.type_name(target)}: {why}"
        raise DataValueError(msg)
    out = pa.array(values.astype(store.to_pandas_dtype()), store, mask=~ok)
    return out.cast(pa.date32()).cast(target) if pa.types.is_date(target) else out.cast(target)


def _pad_date(s: pa.Array) -> pa.Array:
    """'2020-1-2 ...' as '2020-01-02 ...' (Flink reads one-digit months and days)."""
    s = pc.replace_substring_regex(s, r"^([0-9]{4})-([0-9])([^0-9])", r"\1-0\2\3")
    s = pc.replace_substring_regex(s, r"^([0-9]{4}-[0-9]{2})-([0-9])([^0-9]|$)", r"\1-0\2\3")
    return pc.replace_substring_regex(s, r"^([0-9-]{10}[ T])([0-9]):", r"\10\2:")


def _drop_digits(s: pa.Array, keep: int) -> pa.Array:
    """The fraction of a second cut to ``keep`` digits (Flink truncates the rest)."""
    pattern = r"\.[0-9]*$" if keep == 0 else rf"(\.[0-9]{{{keep}}})[0-9]+$"
    return pc.replace_substring_regex(s, pattern, "" if keep == 0 else r"\1")


def _parse_time(s: pa.Array, target: pa.DataType) -> pa.Array:
    """'H:m[:s[.f...]]' as TIME(p), a field of one or two digits ('1:2:3' is 01:02:03, as
    Flink reads it; digits beyond p dropped); a bad hour, minute or second fails."""
    parts = pc.extract_regex(s, pattern=r"^(?P<h>[0-9]{1,2}):(?P<m>[0-9]{1,2})"
                                        r"(?::(?P<s>[0-9]{1,2})(?:\.(?P<f>[0-9]{1,9}))?)?$")
    if parts.null_count > s.null_count:
        msg = "not a time of day"
        raise pa.ArrowInvalid(msg)

    def field(name: str) -> np.ndarray:
        text = pc.struct_field(parts, name)
        text = pc.if_else(pc.equal(text, ""), "0", text)
        return text.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)

    h, m, sec = field("h"), field("m"), field("s")
    if np.any((h > 23) | (m > 59) | (sec > 59)):
        msg = "hour, minute or second out of range"
        raise pa.ArrowInvalid(msg)
    frac = pc.utf8_rpad(pc.struct_field(parts, "f"), width=9, padding="0")
    nanos = frac.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    per = _PER_SECOND[target.unit]
    ticks = (h * 3600 + m * 60 + sec) * per + nanos // (1_000_000_000 // per)
    store = pa.int32() if pa.types.is_time32(target) else pa.int64()
    return pa.array(ticks.astype(store.to_pandas_dtype()), store, mask=_mask(s)).cast(target)


def _to_string(arr: pa.Array, zone: str = "UTC") -> pa.Array:
    t = arr.type
    if pa.types.is_boolean(t):
        return pc.if_else(arr, "TRUE", "FALSE")
    if pa.types.is_floating(t):
        return java_double_texts(arr)
    if pa.types.is_time(t):
        return _time_text(arr)
    if t == T.INTERVAL_DAY_TIME:
        return per_distinct(arr.cast(pa.int64()), _day_time_text, pa.string())
    if t == T.INTERVAL_YEAR_MONTH:
        return per_distinct(arr, lambda v: _year_month_text(v.months), pa.string())
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        raw = arr.cast(pa.binary())
        try:
            return raw.cast(pa.string())  # (UTF-8)
        except pa.ArrowInvalid:
            # Not UTF-8: each malformed sequence becomes U+FFFD, as Java's new String(bytes,
            # UTF_8) in Flink gives (per value Python, only for such an array)
            return pa.array([None if v is None else v.decode("utf-8", "replace")
                             for v in raw.to_pylist()], pa.string())
    if pa.types.is_timestamp(t):
        return _timestamp_text(arr)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t) or \
            pa.types.is_struct(t):
        return _nested_text(arr, zone)
    if pa.types.is_date(t):
        return _few_distinct(arr, date_text)
    if pa.types.is_decimal(t):
        return decimal_text(arr)
    return arr.cast(pa.string())


def decimal_text(arr: pa.Array) -> pa.Array:
    """DECIMAL values as Flink's CAST writes them, plainly with their scale's digits
    (0.000000000000000000; Arrow writes a small one as 0E-18 or 1.0E-7)."""
    text = arr.cast(pa.string())
    sci = pc.fill_null(pc.match_substring(text, "E"), False)
    if not pc.any(sci).as_py():
        return text
    plain = per_distinct(arr.filter(sci), lambda v: format(v, "f"), pa.string())
    return pc.replace_with_mask(text, sci, plain)


_PROBE = 4096  # the leading values whose distinct count decides _few_distinct's way


def _few_distinct(arr: pa.Array, text: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``text`` (a vectorised formatting) of ``arr``; when the first values repeat (window
    bounds, dates: at most one distinct in 8 of the first 4,096), of its distinct values only,
    taken back per row (~3x faster at ~1,000 distinct; a probe costs ~1% otherwise)."""
    if isinstance(arr, pa.Array) and len(arr) >= 2 * _PROBE and \
            pc.count_distinct(arr.slice(0, _PROBE)).as_py() * 8 <= _PROBE:
        encoded = pc.dictionary_encode(arr)
        return pc.take(text(encoded.dictionary), encoded.indices)
    return text(arr)


def _nested_text(arr: pa.Array, zone: str = "UTC") -> pa.Array:
    """Flink's text of ARRAY '[1, 2]', MAP '{a=1, b=2}' and ROW '(1, x)' values (a NULL
    inside is 'NULL'), built from the children's text without a row loop."""
    t = arr.type
    if pa.types.is_struct(t):
        fields = [pc.fill_null(cast_array(pc.struct_field(arr, [i]), pa.string(),
                                              zone=zone), "NULL")
                  for i in range(t.num_fields)]
        body = pc.binary_join_element_wise(*fields, ", ") if len(fields) > 1 else fields[0]
        out = pc.binary_join_element_wise("(", body, ")", "")
    else:
        offsets = arr.offsets
        if pa.types.is_map(t):
            entries = arr.values
            keys = pc.fill_null(cast_array(pc.struct_field(entries, [0]), pa.string(),
                                                  zone=zone), "NULL")
            items = pc.fill_null(cast_array(pc.struct_field(entries, [1]), pa.string(),
                                                   zone=zone), "NULL")
            texts = pc.binary_join_element_wise(keys, items, "=")
            opening, closing = "{", "}"
        else:
            texts = pc.fill_null(cast_array(arr.values, pa.string(), zone=zone), "NULL")
            opening, closing = "[", "]"
        lists = pa.ListArray.from_arrays(offsets, texts)
        out = pc.binary_join_element_wise(opening, pc.binary_join(lists, ", "), closing, "")
    return pc.if_else(pc.is_valid(arr), out, pa.nulls(len(arr), pa.string())) \
        if arr.null_count else out


# The days of -9999-01-01 and 9999-12-31, between which Arrow's strftime writes a date's year
# (it wraps around past year 32767), and the days of 400 Gregorian years, after which the
# calendar repeats itself (146,097 days); 2000-01-01 starts such a cycle.
_FIRST_DAY, _LAST_DAY = -4_371_587, 2_932_896
_CYCLE_DAYS, _CYCLE_START = 146_097, 10_957


def date_text(arr: pa.Array) -> pa.Array:
    """'YYYY-MM-DD' of DATE values, the year in full: '12345-01-01', '-0044-03-15' (the
    astronomical year, 0 for 1 BC, as ISO 8601 writes it and Arrow's strftime within 32,767
    years). Beyond years ±9,999 the same day a whole number of 400-year cycles from 2000 is
    written and the cycles' years added to its year (a DATE reaches ±5.8 million years)."""
    days = arr.cast(pa.int32())
    low, high = pc.min_max(days).values()
    if low.as_py() is None or (low.as_py() >= _FIRST_DAY and high.as_py() <= _LAST_DAY):
        return pc.strftime(arr.cast(pa.date32()), format="%Y-%m-%d")
    raw = days.fill_null(_CYCLE_START).to_numpy().astype(np.int64)
    cycles = (raw - _CYCLE_START) // _CYCLE_DAYS
    near = pa.array(raw - cycles * _CYCLE_DAYS, pa.int32()).cast(pa.date32())
    text = pc.strftime(near, format="%Y-%m-%d")  # (years 2000 to 2399)
    years = pc.cast(pc.utf8_slice_codeunits(text, 0, 4), pa.int64()).to_numpy() + 400 * cycles
    digits = pc.utf8_lpad(pa.array(np.abs(years)).cast(pa.string()), width=4, padding="0")
    sign = pc.if_else(pa.array(years < 0), "-", "")
    out = pc.binary_join_element_wise(sign, digits, pc.utf8_slice_codeunits(text, 4), "")
    if days.null_count:
        out = pc.if_else(pc.is_valid(days), out, pa.nulls(len(days), pa.string()))
    return out


# Arrow's text of a timestamp is Flink's ('YYYY-MM-DD HH:MM:SS' and the unit's digits) for
# years 1 to 9999: the first and the last instant of that range, in seconds.
_FIRST_SECOND, _LAST_SECOND = -62_135_596_800, 253_402_300_799


def _timestamp_text(arr: pa.Array) -> pa.Array:
    """'YYYY-MM-DD HH:MM:SS[.fff]' per timestamp (the unit's digits, as Flink prints them).

    Years 1 to 9999: Arrow's cast to string, whose text is the same (~0.1 us per value; of
    the distinct values only when they repeat, see _few_distinct);
    other years (Arrow writes "<value out of range>" beyond them) format the distinct days
    with strftime."""
    digits = T.UNIT_DIGITS[arr.type.unit]
    per_second = _PER_SECOND[arr.type.unit]
    ticks = arr.cast(pa.int64())
    low, high = pc.min_max(ticks).values()
    if low.as_py() is None or (low.as_py() >= _FIRST_SECOND * per_second
                               and high.as_py() < (_LAST_SECOND + 1) * per_second):
        return _few_distinct(arr, lambda a: a.cast(pa.string()))
    raw = ticks.fill_null(0).to_numpy()
    seconds, frac = np.divmod(raw, per_second)
    days, of_day = np.divmod(seconds, 86_400)
    encoded = pc.dictionary_encode(pa.array(days.astype(np.int32), pa.int32()))
    day_text = date_text(encoded.dictionary.cast(pa.date32()))
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


def _time_text(arr: pa.Array) -> pa.Array:
    """'HH:mm:ss[.f]' with the precision's digits (TIME(0): none)."""
    digits = T.precision_of(arr.type)
    per = _PER_SECOND[arr.type.unit]
    ticks = _ticks(arr)
    secs, frac = np.divmod(ticks, per)
    parts = [pc.utf8_lpad(pa.array(v).cast(pa.string()), width=2, padding="0")
             for v in (secs // 3600, secs // 60 % 60, secs % 60)]
    out = pc.binary_join_element_wise(*parts, ":")
    if digits:
        text = pc.utf8_lpad(pa.array(frac).cast(pa.string()), width=digits, padding="0")
        out = pc.binary_join_element_wise(out, text, ".")
    if arr.null_count:
        out = pc.if_else(pc.is_valid(arr), out, pa.nulls(len(arr), pa.string()))
    return out


def _day_time_text(ms: int) -> str:
    """Flink's text of a day-time interval: '+2 00:00:00.000'."""
    sign = "-" if ms < 0 else "+"
    ms = abs(ms)
    secs, frac = divmod(ms, 1000)
    days, rem = divmod(secs, _DAY)
    return f"{sign}{days} {rem // 3600:02d}:{rem // 60 % 60:02d}:{rem % 60:02d}.{frac:03d}"


def _year_month_text(months: int) -> str:
    """Flink's text of a year-month interval: '+1-02'."""
    sign = "-" if months < 0 else "+"
    years, rest = divmod(abs(months), 12)
    return f"{sign}{years}-{rest:02d}"


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


def _try_elementwise(arr: pa.Array, target: pa.DataType, checked: bool = False) -> pa.Array:
    # TRY_CAST after a failed vectorised cast: bisect into good and bad ranges.
    if len(arr) == 0:
        return pa.array([], target)
    try:
        return cast_array(arr, target, checked=checked)
    except ExecutionError:
        if len(arr) == 1:
            return pa.nulls(1, target)
        mid = len(arr) // 2
        return pa.concat_arrays([_try_elementwise(arr.slice(0, mid), target, checked),
                                 _try_elementwise(arr.slice(mid), target, checked)])
