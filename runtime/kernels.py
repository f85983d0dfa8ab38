"""Arrow implementations of the scalar functions in ``sqlengine.functions`` (Flink semantics)."""

from __future__ import annotations

import decimal
import functools
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import WIDE_DECIMALS, own_elements, round_decimal
from sqlengine.errors import DataValueError, ExecutionError
from sqlengine.runtime import decimal_int64, intervals
from sqlengine.runtime.column_arguments import constants_or_columns
from sqlengine.runtime.rounding import rounding
from sqlengine.runtime.string_kernels import (
    NOT_LINE_END,
    as_int,
    char_fit,
    position,
    substring,
    varchar_fit,
)
from sqlengine.runtime.timestamp_units import timestampadd, timestampdiff

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def _nonzero_where_null(a: Array, b: Array) -> Array:
    """``b`` with 1 where it is 0 and ``a`` is NULL: NULL / 0 is NULL (Flink's generated code
    tests for NULL first), only a value divided by 0 fails."""
    if not a.null_count:
        return b
    zero = pa.scalar(0, b.type)
    return pc.if_else(pc.fill_null(pc.and_(pc.is_null(a), pc.equal(b, zero)), False),
                      pa.scalar(1, b.type), b)


def _divide(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a, b = args
    if pa.types.is_integer(out):
        b = _nonzero_where_null(a, b)
        if pc.any(pc.equal(b, 0)).as_py():
            raise DataValueError("division by zero")
        return _int_quotient(a, b)
    if pa.types.is_decimal(out):
        return _decimal_divide(a, b, out)
    return pc.divide(a.cast(out), b.cast(out))


def _int_quotient(a: Array, b: Array) -> Array:
    """a / b of integers truncated toward zero, as Java's; the smallest value / -1 wraps to
    itself, as in Java (Arrow gives 0)."""
    q = pc.divide(a, b)
    if not pc.any(pc.equal(b, -1)).as_py():
        return q
    low = pa.scalar(np.iinfo(q.type.to_pandas_dtype()).min, q.type)
    wraps = pc.fill_null(pc.and_(pc.equal(a, low), pc.equal(b, -1)), False)
    return pc.if_else(wraps, low, q)


def _fitted(a: Array) -> Array:
    """A decimal array cast to the least precision that holds its values (same scale), so that
    Arrow's result types (which add the operands' precisions) stay within 38 / 76 digits
    where Flink's declared types (DECIMAL(38, s) after SUM) would pass them."""
    t = a.type
    if not pa.types.is_decimal(t):
        return a
    top = pc.max(pc.abs(a)).as_py()
    digits = len(str(int(top))) if top else 1
    precision = max(digits + t.scale, 1)
    if precision >= t.precision:
        return a
    return a.cast(pa.decimal128(precision, t.scale) if precision <= 38
                  else pa.decimal256(precision, t.scale))


def _wide(a: Array) -> Array:
    t = a.type
    return a.cast(pa.decimal256(t.precision, t.scale)) if pa.types.is_decimal128(t) else a


def _decimal_divide(a: Array, b: Array, out: pa.DataType) -> Array:
    b = _nonzero_where_null(a, b)
    if pc.any(pc.equal(b, pa.scalar(0, b.type))).as_py():
        raise DataValueError("division by zero")
    fa, fb = _fitted(a), _fitted(b)
    # Scale the dividend so Arrow's (truncating) quotient keeps one digit more than the result
    # needs; rounding HALF_UP on that digit is then exact.
    want = out.scale + 1 + fb.type.scale
    extra = max(0, want - fa.type.scale)
    digits = fa.type.precision + extra
    try:
        wide = pa.decimal128(digits, fa.type.scale + extra) if digits <= 38 else \
            pa.decimal256(digits, fa.type.scale + extra)
        wa = fa.cast(wide)
        try:
            q = pc.divide(wa, fb)
        except pa.ArrowInvalid:
            q = pc.divide(_wide(wa), _wide(fb))
    except (pa.ArrowInvalid, ValueError):
        # (past Arrow's 76 digits: DECIMAL(38, 37) / DECIMAL(38, 37), say)
        return _exact_decimal("divide", [a, b], out)
    return _to_decimal(q, out)


def _exact_decimal(op: str, args: list[Array], out: pa.DataType) -> Array:
    """``op`` ("add", "subtract", "multiply" or "divide", by a divisor not 0) of two exact
    arrays as ``out`` in Python integers, rounded HALF_UP, NULL past ``out``'s digits (as
    Flink's DecimalData): only where even Arrow's 76 digits cannot hold the exact result (per
    value Python, rare)."""
    def parts(a: Array) -> tuple[list[object], int]:
        if isinstance(a, pa.ChunkedArray):
            a = a.combine_chunks()
        t = a.type if pa.types.is_decimal(a.type) else T.as_decimal(a.type)
        a = a.cast(t) if t != a.type else a
        ints = decimal_int64.unscaled_ints(a.fill_null(pa.scalar(decimal.Decimal(0), t)))
        valid = a.is_valid().to_pylist()
        return [int(v) if ok else None for v, ok in zip(ints, valid)], t.scale

    (va, sa), (vb, sb) = parts(args[0]), parts(args[1])
    scale = sa + sb if op == "multiply" else max(sa, sb)
    limit = 10 ** out.precision
    d = 10 ** max(scale - out.scale, 0)
    up = 10 ** max(out.scale - scale, 0)
    values: list[object] = []
    for x, y in zip(va, vb):
        if x is None or y is None:
            values.append(None)
            continue
        if op == "divide":
            # x / 10^sa / (y / 10^sb) * 10^out.scale, rounded HALF_UP
            shift = out.scale + sb - sa
            num, den = (x * 10 ** shift, y) if shift >= 0 else (x, y * 10 ** -shift)
            q, rem = divmod(abs(num), abs(den))
            q += 2 * rem >= abs(den)
            r = -q if (num < 0) != (den < 0) else q
            values.append(decimal.Decimal(r).scaleb(-out.scale, WIDE_DECIMALS)
                          if abs(r) < limit else None)
            continue
        if op == "multiply":
            r = x * y
        else:
            x, y = x * 10 ** (scale - sa), y * 10 ** (scale - sb)
            r = x + y if op == "add" else x - y
        r = (-((-r + d // 2) // d) if r < 0 else (r + d // 2) // d) * up
        values.append(decimal.Decimal(r).scaleb(-out.scale, WIDE_DECIMALS)
                      if abs(r) < limit else None)
    return pa.array(values, pa.decimal128(38, out.scale)).cast(out)


def _to_decimal(res: Array, out: pa.DataType) -> Array:
    """Round HALF_UP to ``out``'s scale and cast; a value past ``out``'s digits is NULL, as
    Flink's decimal arithmetic gives (DecimalData.fromBigDecimal)."""
    if res.type == out:
        return res
    if pa.types.is_decimal(res.type) and res.type.scale != out.scale:
        res = round_decimal(res, out.scale)
    try:
        return res.cast(out)
    except pa.ArrowInvalid:
        if not pa.types.is_decimal(res.type):
            raise
    bound = pa.scalar(decimal.Decimal(10) ** (out.precision - out.scale), res.type)
    fits = pc.fill_null(pc.less(pc.abs(res), bound), False)
    return pc.if_else(fits, res, pa.nulls(len(res), res.type)).cast(out)


def _sum_precision(types: list[pa.DataType]) -> int:
    """Arrow's precision of a decimal sum or difference."""
    scale = max(t.scale for t in types)
    return scale + max(t.precision - t.scale for t in types) + 1


def _product_precision(types: list[pa.DataType]) -> int:
    """Arrow's precision of a decimal product."""
    return sum(t.precision for t in types) + 1


def _decimal_or(fn: Callable[..., Array], precision: Callable[[list[pa.DataType]], int]
                ) -> Kernel:
    """``fn``, for decimals within Arrow's 38 digits: ``precision`` is Arrow's result
    precision for the operands' types; past 38 the operands are first fitted to their values
    (no attempt that raises: one per batch was a tenth of TPC-H q01)."""
    op = fn.__name__

    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if pa.types.is_decimal(out):
            fast = decimal_int64.arith(op, args, out)
            if fast is not None:
                return fast
            types = [a.type for a in args]
            try:
                if all(pa.types.is_decimal128(t) for t in types) and precision(types) > 38:
                    raise pa.ArrowInvalid("(past 38 digits)")
                res = fn(*args)
            except pa.ArrowInvalid:  # Arrow's result precision passed 38: fit, then widen
                fitted = [_fitted(a) for a in args]
                try:
                    res = fn(*fitted)
                except pa.ArrowInvalid:
                    try:
                        res = fn(*[_wide(a) for a in fitted])
                    except pa.ArrowInvalid:  # (past 76 digits: DECIMAL(38, 37) * itself)
                        return _exact_decimal(op, args, out)
            return _to_decimal(res, out)
        a, b = args
        if lits[1] is not None and len(b):  # (a literal side as a scalar)
            b = _scalar(lits[1], b)
        elif lits[0] is not None and len(a):
            a = _scalar(lits[0], a)
        res = fn(a, b)
        if res.type != out:
            res = res.cast(out, safe=False)
        return res

    return kernel


def _temporal_or(kernel: Kernel, sign: int) -> Kernel:
    """DATE / TIMESTAMP plus or minus an interval (``runtime.intervals``), else ``kernel``."""
    def temporal(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a, b = args
        if T.is_temporal(out) and T.is_interval(b.type):
            return intervals.shift(a, b, lits[1], sign)
        if T.is_temporal(out) and T.is_interval(a.type):
            return intervals.shift(b, a, lits[0], sign)
        return kernel(args, lits, out)

    return temporal


def _scalar_subquery_value(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """(row count, value) of a scalar subquery per correlation key: more rows than one is
    an error, as in every SQL engine."""
    rows, value = args
    if pc.any(pc.greater(rows, 1)).as_py():
        raise ExecutionError("a scalar subquery returned more than one row")
    return value


def _mod(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a, b = args
    if pa.types.is_integer(out):
        b = _nonzero_where_null(a, b)
        if pc.any(pc.equal(b, 0)).as_py():
            raise DataValueError("division by zero in MOD")
        rest = pc.subtract(a, pc.multiply(_int_quotient(a, b), b))
        return rest if rest.type == out else rest.cast(out)  # (|rest| < |b|: it fits)
    if pa.types.is_decimal(out):
        from sqlengine.runtime.decimal_mod import decimal_mod

        return decimal_mod(a, b, out)
    q = pc.trunc(pc.divide(a, b))
    return pc.subtract(a, pc.multiply(q, b))


def _compare(fn: Callable[..., Array]) -> Kernel:
    """A comparison (or AND / OR); a literal side is passed as a scalar, not as a repeated
    array (half the memory traffic: string equality in TPC-H q19 and q12)."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a, b = args
        if pa.types.is_null(a.type) or pa.types.is_null(b.type):  # (a bare NULL: NULL = NULL)
            like = b.type if pa.types.is_null(a.type) else a.type
            like = pa.bool_() if pa.types.is_null(like) else like
            a, b = a.cast(like), b.cast(like)
        if lits[1] is not None and len(b):
            b = _scalar(lits[1], b)
        elif lits[0] is not None and len(a):
            a = _scalar(lits[0], a)
        if fast is not None and pa.types.is_decimal128(a.type) and a.type.precision <= 18:
            got = _small_decimal_compare(fast, a, b)
            if got is not None:
                return got
        return fn(a, b)

    fast = _NUMPY_COMPARE.get(fn)
    return kernel


_NUMPY_COMPARE: dict[Callable[..., Array], Callable[..., np.ndarray]] = {
    pc.less: np.less, pc.less_equal: np.less_equal, pc.greater: np.greater,
    pc.greater_equal: np.greater_equal, pc.equal: np.equal, pc.not_equal: np.not_equal}


def _small_decimal_compare(op: Callable[..., np.ndarray], a: object, b: object
                           ) -> Array | None:
    """A comparison of DECIMAL(p <= 18, s) values without NULLs with one another or with a
    scalar of the same type, on their unscaled integers: the low 64 bits of each 128-bit
    value hold it whole (|v| < 10^18). Twice as fast as Arrow's decimal kernels (TPC-H q06,
    q19). None where it does not apply."""
    if not isinstance(a, pa.Array) or a.null_count:
        return None
    if isinstance(b, pa.Scalar):
        if b.type != a.type or not b.is_valid:
            return None
        other: object = int(b.as_py().scaleb(a.type.scale))
    elif isinstance(b, pa.Array) and b.type == a.type and not b.null_count:
        other = decimal_int64.words(b)[0]
    else:
        return None
    return pa.array(op(decimal_int64.words(a)[0], other))


def _float_equal(negated: bool) -> Kernel:
    """= / <>: ROW, ARRAY and MAP values whole (``_same``); others as Arrow compares them. A
    NaN equals nothing, itself included, as Flink's generated Java compares doubles (PyFlink
    2.3: NaN = NaN is FALSE, NaN <> NaN TRUE; PostgreSQL and DuckDB differ), but a ROW's or
    ARRAY's NaN fields equal each other (Flink compares those values whole)."""
    plain = _compare(pc.not_equal if negated else pc.equal)

    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a, b = args
        if _nested_pair(a.type, b.type):
            a, b = _whole(a), _whole(b)
            same = _same(a, b)
            same = pc.invert(same) if negated else same
            either = pc.or_(pc.is_null(a), pc.is_null(b))
            return pc.if_else(either, pa.scalar(None, pa.bool_()), same)
        if pa.types.is_map(a.type) or pa.types.is_map(b.type):
            raise ExecutionError("a MAP compares only with a MAP")
        return plain(args, lits, out)

    return kernel


def _nested_pair(a: pa.DataType, b: pa.DataType) -> bool:
    return (pa.types.is_struct(a) and pa.types.is_struct(b)) or \
        (_is_list(a) and _is_list(b)) or (pa.types.is_map(a) and pa.types.is_map(b))


def _whole(a: Array) -> Array:
    return a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a


def _same(a: Array, b: Array) -> Array:
    """Whole-value equality, never NULL: two NULLs are the same, a NULL and a value are not,
    ROW / ARRAY / MAP values are the same when every field / element / entry is (NULL the
    same as NULL inside them), and NaN is the same as NaN. How Flink 2.3 compares ROW and
    ARRAY values that are not constants: ``r = r`` is TRUE for a row of NULL fields, a JOIN
    ON r1 = r2 matches rows with NULL fields (PyFlink 2.3 on json files)."""
    a, b = _whole(a), _whole(b)
    if pa.types.is_null(a.type) or pa.types.is_null(b.type):
        like = b.type if pa.types.is_null(a.type) else a.type
        a, b = a.cast(like), b.cast(like)
    if pa.types.is_struct(a.type) and pa.types.is_struct(b.type):
        eq = _rows_equal(a, b, _same_kernel)
    elif _is_list(a.type) and _is_list(b.type):
        eq = _lists_equal(a, b, _same_kernel)
    elif pa.types.is_map(a.type) and pa.types.is_map(b.type):
        eq = _maps_equal(a, b, _same_kernel)
    elif pa.types.is_map(a.type) or pa.types.is_map(b.type):
        raise ExecutionError("a MAP compares only with a MAP")
    else:
        eq = pc.equal(a, b)
        if pa.types.is_floating(a.type) and pa.types.is_floating(b.type):
            eq = pc.or_kleene(eq, pc.and_(pc.is_nan(a), pc.is_nan(b)))
    both_null = pc.and_(pc.is_null(a), pc.is_null(b))
    return pc.fill_null(pc.or_(both_null, pc.fill_null(eq, False)), False)


def _same_kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return _same(args[0], args[1])


def _rows_equal(a: Array, b: Array, equal: Kernel) -> Array:
    """ROW = ROW: every field equal (as the fields' comparisons AND-ed; NULL where either row
    is NULL); Arrow has no comparison of structs."""
    if a.type.num_fields != b.type.num_fields:
        msg = f"cannot compare rows of {a.type.num_fields} and {b.type.num_fields} fields"
        raise ExecutionError(msg)
    a, b = _whole(a), _whole(b)
    out: Array | None = None
    for i in range(a.type.num_fields):
        part = equal([pc.struct_field(a, [i]), pc.struct_field(b, [i])], [None, None],
                     pa.bool_())
        out = part if out is None else pc.and_kleene(out, part)
    if out is None:  # (rows without fields are equal)
        out = pa.array(np.ones(len(a), dtype=bool))
    either = pc.or_(pc.is_null(a), pc.is_null(b))
    return pc.if_else(either, pa.scalar(None, pa.bool_()), out)


def _maps_equal(a: Array, b: Array, equal: Kernel) -> Array:
    """MAP = MAP: the same keys, each with an equal value (a NULL value equal to a NULL one),
    whatever the entries' order; NULL where either map is NULL. Each map's entries are
    sorted by key (per row, vectorised), then keys and values compare as ARRAYs."""
    ka, va = _entries_by_key(a)
    kb, vb = _entries_by_key(b)
    return pc.and_kleene(_lists_equal(ka, kb, equal), _lists_equal(va, vb, equal))


def _entries_by_key(m: Array) -> tuple[pa.ListArray, pa.ListArray]:
    if isinstance(m, pa.ChunkedArray):
        m = m.combine_chunks()
    if T.is_nested(m.type.key_type):
        raise ExecutionError(f"cannot compare MAPs keyed by {T.type_name(m.type.key_type)}")
    offsets, (keys, items) = own_elements(m)
    row = np.repeat(np.arange(len(m), dtype=np.int64), np.diff(offsets))
    order = pc.sort_indices(pa.table({"r": row, "k": keys}),
                            sort_keys=[("r", "ascending"), ("k", "ascending")])
    rebased = pa.array(offsets, pa.int32())
    mask = m.is_null() if m.null_count else None
    return (pa.ListArray.from_arrays(rebased, keys.take(order), mask=mask),
            pa.ListArray.from_arrays(rebased, items.take(order), mask=mask))


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def _lists_equal(a: Array, b: Array, equal: Kernel) -> Array:
    """ARRAY = ARRAY: as long, and equal element by element with a NULL element equal to a
    NULL one (as Flink's, PostgreSQL's and DuckDB's array equality); NULL where either array
    is NULL. Arrow has no comparison of lists."""
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    if isinstance(b, pa.ChunkedArray):
        b = b.combine_chunks()
    valid = pc.and_(pc.is_valid(a), pc.is_valid(b))
    same_length = pc.fill_null(pc.equal(pc.list_value_length(a), pc.list_value_length(b)),
                               False)
    rows = np.flatnonzero(pc.and_(valid, same_length).to_numpy(zero_copy_only=False))
    out = np.zeros(len(a), dtype=bool)
    if len(rows):
        take = pa.array(rows)
        ea, eb = pc.list_flatten(a.take(take)), pc.list_flatten(b.take(take))
        both_null = pc.and_(pc.is_null(ea), pc.is_null(eb))
        eq = pc.fill_null(equal([ea, eb], [None, None], pa.bool_()), False)
        differs = pc.invert(pc.or_(both_null, eq)).to_numpy(zero_copy_only=False)
        parent = pc.list_parent_indices(a.take(take)).to_numpy(zero_copy_only=False)
        same = np.ones(len(rows), dtype=bool)
        same[np.unique(parent[differs])] = False
        out[rows] = same
    return pa.array(out, mask=~valid.to_numpy(zero_copy_only=False))


def _scalar(value: object, like: Array) -> object:
    """``value`` as a scalar of ``like``'s type (the array itself when it will not convert).
    Kept per literal and type: a query's every batch compares with the same literals."""
    try:
        got = _scalar_of(type(value), repr(value), value, like.type)
    except TypeError:  # (a value that cannot be hashed)
        got = _make_scalar(value, like.type)
    return like if got is None else got


@functools.lru_cache(maxsize=4096)
def _scalar_of(kind: type, text: str, value: object, dtype: pa.DataType) -> pa.Scalar | None:
    # (keyed by the value's type and text too: 1, 1.0 and True are equal keys, as 0.0 and -0.0)
    return _make_scalar(value, dtype)


def _make_scalar(value: object, dtype: pa.DataType) -> pa.Scalar | None:
    try:
        return pa.scalar(value, dtype)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
        return None


def _is_bool(value: bool, negated: bool) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        hit = pc.fill_null(pc.equal(args[0], value), False)
        return pc.invert(hit) if negated else hit

    return kernel


def _like(negated: bool) -> Kernel:
    """``x [NOT] LIKE p [ESCAPE e]``. Without ESCAPE no character escapes, a backslash
    stands for itself (Flink, DuckDB)."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        pattern = lits[1]
        escape = lits[2] if len(lits) > 2 else None
        if pattern is None or (len(lits) > 2 and escape is None):
            return pa.nulls(len(args[0]), pa.bool_())
        res = match_like(args[0], str(pattern), None if escape is None else str(escape))
        return pc.invert(res) if negated else res

    return kernel


def match_like(values: Array, pattern: str, escape: str | None) -> Array:
    """Whether each value matches a LIKE pattern: plain comparisons for a literal, a prefix,
    a suffix or an infix, an anchored RE2 expression otherwise. Not Arrow's match_like: its
    suffix path loses an escaped character (``%\\\\`` matched no text ending in a backslash,
    pyarrow 26)."""
    chars = _escaped(pattern, escape, "LIKE") if escape is not None else \
        [(False, c) for c in pattern]
    parts: list[tuple[str, str]] = []  # ("text", literal), ("%", ""), ("_", "")
    for literal, c in chars:
        kind = c if not literal and c in "%_" else "text"
        if kind == "text" and parts and parts[-1][0] == "text":
            parts[-1] = ("text", parts[-1][1] + c)
        elif kind != "%" or not parts or parts[-1][0] != "%":
            parts.append((kind, c if kind == "text" else ""))
    kinds = [k for k, _ in parts]
    texts = [t for k, t in parts if k == "text"]
    if "_" not in kinds and len(texts) <= 1:
        text = texts[0] if texts else ""
        lead, tail = kinds[:1] == ["%"], kinds[-1:] == ["%"]
        if lead and tail:
            return pc.match_substring(values, text)
        if lead or tail:
            return pc.ends_with(values, text) if lead else pc.starts_with(values, text)
        return pc.equal(values, pa.scalar(text, values.type))
    regex = "".join(".*" if k == "%" else NOT_LINE_END if k == "_" else
                    "".join(c if c.isalnum() or ord(c) > 127 else f"\\x{{{ord(c):02x}}}"
                            for c in t) for k, t in parts)
    return pc.match_substring_regex(values, "(?s)^" + regex + "$")


# What an escape character may stand before (Calcite's, as Flink checks a pattern): '%', '_'
# and itself in LIKE; the regular-expression operators too in SIMILAR TO.
_ESCAPABLE = {"LIKE": "%_", "SIMILAR TO": "[]()|^-+*_%?{}"}


def _escaped(pattern: str, escape: str, name: str) -> list[tuple[bool, str]]:
    """The pattern's characters, each marked as escaped (taken literally) or not. An escape
    before another character is an error, as in Flink ('a!b' ESCAPE '!' is not 'ab')."""
    if len(escape) != 1:
        raise ExecutionError(f"the ESCAPE of {name} must be one character, got {escape!r}")
    out: list[tuple[bool, str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            if i + 1 == len(pattern):
                raise ExecutionError(f"invalid escape sequence in {name} pattern {pattern!r}: "
                                     f"{escape!r} at its end")
            if pattern[i + 1] != escape and pattern[i + 1] not in _ESCAPABLE[name]:
                raise ExecutionError(f"invalid escape sequence in {name} pattern {pattern!r}: "
                                     f"{escape!r} before {pattern[i + 1]!r} (it escapes "
                                     f"{', '.join(_ESCAPABLE[name])} and itself)")
            out.append((True, pattern[i + 1]))
            i += 2
            continue
        out.append((False, c))
        i += 1
    return out


def similar_to_regex(pattern: str, escape: str | None) -> str:
    """A SIMILAR TO pattern as an anchored regular expression: ``%`` any text, ``_`` one
    character, the regular-expression operators (``|``, ``*``, ``+``, ``?``, ``{m,n}``,
    ``(...)``, ``[...]``) as they are; an escaped character stands for itself."""
    chars = _escaped(pattern, escape, "SIMILAR TO") if escape is not None else \
        [(False, c) for c in pattern]
    out = []
    for literal, c in chars:
        if literal:
            out.append(re.escape(c))
        elif c == "%":
            out.append(".*")
        elif c == "_":
            out.append(NOT_LINE_END)
        elif c in "$\\":  # (no anchor, no regex escape in SIMILAR TO: letters, as Flink's)
            out.append(re.escape(c))
        else:
            out.append(c)
    regex = "(?s)^(?:" + "".join(out) + ")$"
    try:
        re.compile(regex)
    except re.error as e:
        raise ExecutionError(f"invalid SIMILAR TO pattern {pattern!r}: {e}") from None
    return regex


def _similar(negated: bool) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        pattern = lits[1]
        escape = lits[2] if len(lits) > 2 else None
        if pattern is None or (len(lits) > 2 and escape is None):
            return pa.nulls(len(args[0]), pa.bool_())
        regex = similar_to_regex(str(pattern), None if escape is None else str(escape))
        res = pc.match_substring_regex(args[0], regex)
        return pc.invert(res) if negated else res

    return kernel


def _concat(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return pc.binary_join_element_wise(*args, "", null_handling="emit_null")


def _trim(where: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if len(args) > 1 and lits[1] is None:
            return pa.nulls(len(args[0]), pa.string())  # (TRIM(BOTH NULL FROM s))
        chars = str(lits[1]) if len(args) > 1 else " "
        fn = {"both": pc.utf8_trim, "left": pc.utf8_ltrim, "right": pc.utf8_rtrim}[where]
        return fn(args[0], characters=chars)

    return kernel


def _pad(left: bool) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        s = args[0]
        given, pad = lits[1], lits[2]
        if given is None or pad is None:
            return pa.nulls(len(s), pa.string())
        width = as_int(given)
        if width < 0 or pad == "":
            return pa.nulls(len(s), pa.string())
        if len(str(pad)) == 1:
            padded = (pc.utf8_lpad if left else pc.utf8_rpad)(s, width=width, padding=str(pad))
        else:
            # Multi-character padding: repeat it and cut to length.
            fill = str(pad) * (width // len(str(pad)) + 1)
            need = pc.max_element_wise(pc.subtract(width, pc.utf8_length(s)), 0)
            pieces = pc.utf8_slice_codeunits(pa.array([fill] * len(s), pa.string()), 0, width)
            pieces = _slice_each(pieces, need)
            padded = pc.binary_join_element_wise(*((pieces, s) if left else (s, pieces)), "")
        return pc.utf8_slice_codeunits(padded, 0, width)

    return kernel


def _slice_each(strings: Array, lengths: Array) -> Array:
    # Per-row lengths: Arrow's slice takes scalars, so group by distinct length (few in practice).
    out = strings
    for n in pc.unique(lengths).to_pylist():
        if n is None:
            continue
        mask = pc.equal(lengths, n)
        out = pc.if_else(mask, pc.utf8_slice_codeunits(strings, 0, int(n)), out)
    return out


def _repeat(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    # (a NULL count is NULL, as Flink's; it was read as 0)
    n = pc.max_element_wise(args[1].cast(pa.int64()), 0, skip_nulls=False)
    return pc.binary_repeat(args[0], n)


def _floor_ceil(fn: Callable[..., Array]) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        x = args[0]
        if pa.types.is_integer(x.type):
            return x
        if pa.types.is_decimal(x.type):  # (room for a carry: 99.5, and 9.5 in (38, 37))
            p, s = x.type.precision + 1, x.type.scale
            x = x.cast(pa.decimal128(p, s) if p <= 38 else pa.decimal256(p, s))
        res = fn(x)
        return res.cast(out, safe=False) if res.type != out else res

    return kernel


def _sign(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    x = args[0]
    if pa.types.is_decimal(x.type):  # (Arrow's sign has no decimal kernel)
        zero = pa.scalar(0, pa.int8())
        res = pc.subtract(pc.greater(x, zero).cast(pa.int8()), pc.less(x, zero).cast(pa.int8()))
        return res.cast(pa.decimal128(38, out.scale)).cast(out, safe=False)
    res = pc.sign(x)
    if pa.types.is_floating(x.type):  # (Java's Math.signum: a zero keeps its sign, -0.0)
        res = pc.if_else(pc.equal(x, 0), x, res)
    return res.cast(out, safe=False) if res.type != out else res


def _checked_math(fn: Callable[..., Array], name: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        # Flink (Java Math) returns NaN for ln(-1) and sqrt(-1): use the unchecked kernels.
        return fn(*args)

    return kernel


def _coalesce(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return pc.coalesce(*args)


def _minmax(fn: Callable[..., Array]) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if len(args) == 1:
            return args[0]
        any_null = pc.is_null(args[0])
        for a in args[1:]:
            any_null = pc.or_(any_null, pc.is_null(a))
        if pa.types.is_timestamp(args[0].type) and args[0].type.tz:  # (TIMESTAMP_LTZ:
            # Arrow has no kernel for zoned timestamps; the instants order as their ticks)
            res = fn(*(a.cast(pa.int64()) for a in args), skip_nulls=True).cast(args[0].type)
        elif pa.types.is_boolean(args[0].type):  # (FALSE < TRUE; Arrow has no kernel)
            res = fn(*(a.cast(pa.int8()) for a in args), skip_nulls=True).cast(pa.bool_())
        else:
            res = fn(*args, skip_nulls=True)
        if fn is pc.max_element_wise and pa.types.is_floating(res.type):
            # (Flink orders NaN above every number, as Java's Double.compareTo: GREATEST of
            # a NaN is NaN; Arrow's skips it. LEAST takes the smallest number either way.)
            nan = pc.is_nan(args[0])
            for a in args[1:]:
                nan = pc.or_(nan, pc.is_nan(a))
            res = pc.if_else(pc.fill_null(nan, False), pa.scalar(float("nan"), res.type), res)
        return pc.if_else(any_null, pa.nulls(len(res), res.type), res)

    return kernel


def _if(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return pc.if_else(pc.fill_null(args[0], False), args[1], args[2])


def _nullif(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    if _nested_pair(args[0].type, args[1].type):  # (ROW / ARRAY / MAP values whole)
        same = pc.fill_null(_same(args[0], args[1]), False)
    else:
        same = pc.fill_null(pc.equal(args[0], args[1]), False)
    a = args[0] if args[0].type == out else args[0].cast(out)
    return pc.if_else(same, pa.nulls(len(a), out), a)


def _char_length(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return pc.utf8_length(args[0]).cast(pa.int32())


def _negate(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a = args[0]
    if pa.types.is_duration(a.type):  # (a day-time interval)
        return pc.negate(a.cast(pa.int64())).cast(a.type)
    return pc.negate(a)


def _months_or(kernel: Kernel) -> Kernel:
    """``kernel`` over year-month intervals as their months (Arrow has no kernels for its
    interval type): INTERVAL '1' MONTH < INTERVAL '1' YEAR, one plus another, their negation;
    a DATE or TIMESTAMP moved by one stays ``kernel``'s (runtime.intervals)."""
    def run(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if T.is_temporal(out) or not any(a.type == T.INTERVAL_YEAR_MONTH for a in args):
            return kernel(args, lits, out)
        ints = [pa.array(intervals.months(a), mask=a.is_null().to_numpy(zero_copy_only=False)
                         if a.null_count else None)
                if a.type == T.INTERVAL_YEAR_MONTH else a for a in args]
        if out != T.INTERVAL_YEAR_MONTH:
            return kernel(ints, [None] * len(lits), out)
        got = kernel(ints, [None] * len(lits), pa.int64())
        mask = got.is_null().to_numpy(zero_copy_only=False) if got.null_count else None
        return intervals.month_intervals(
            np.asarray(got.fill_null(0).to_numpy(zero_copy_only=False)), mask)

    return run


def _unary(fn: Callable[..., Array]) -> Kernel:
    return lambda args, lits, out: fn(args[0])


_EXTRACT = {
    "year": pc.year, "quarter": pc.quarter, "month": pc.month, "week": pc.iso_week,
    "day": pc.day, "doy": pc.day_of_year, "hour": pc.hour, "minute": pc.minute,
    "second": pc.second, "millisecond": pc.millisecond,
}


def _extract(unit: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        x = args[0]
        if unit == "dow":  # Flink: 1 = Sunday ... 7 = Saturday
            res = pc.day_of_week(x, count_from_zero=False, week_start=7)
        else:
            res = _EXTRACT[unit](x)
        return res.cast(pa.int64())

    return kernel


_JAVA_TOKEN = re.compile(r"''|'(?:[^']|'')*'?|([A-Za-z])\1*|.", re.DOTALL)


def java_pattern_tokens(pattern: str) -> list[str]:
    """A Java DateTimeFormatter pattern as its tokens: a field's letters ('yyyy'), a literal
    as quoted text ('o'clock' for the quoted 'o''clock', '' for a quote), or one other
    character; the brackets of optional sections dropped (their fields printed). '#', '{'
    and '}' are reserved: refused, as Java refuses them."""
    tokens = []
    for m in _JAVA_TOKEN.finditer(pattern):
        token = m.group(0)
        if token in ("[", "]"):
            continue
        if token in ("#", "{", "}"):
            msg = f"DATE_FORMAT pattern {pattern!r}: {token!r} is a reserved character"
            raise ExecutionError(msg)
        if token.startswith("'") and token != "''":
            if len(token) < 2 or not token.endswith("'"):
                msg = f"DATE_FORMAT pattern {pattern!r}: a quoted text is not closed"
                raise ExecutionError(msg)
            token = "'" + token[1:-1].replace("''", "'") + "'"
        tokens.append(token)
    return tokens


def java_to_strftime(pattern: str) -> str:
    """A Java DateTimeFormatter pattern ('yyyy-MM-dd HH:mm:ss') as a strftime format."""

    table = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "hh": "%I",
             "mm": "%M", "ss": "%S", "a": "%p", "EEE": "%a", "MMM": "%b", "DDD": "%j"}
    out = []
    for token in java_pattern_tokens(pattern):
        if token.startswith("'"):
            out.append(token[1:-1].replace("%", "%%") or "'")
        elif token in table:
            out.append(table[token])
        elif token[0].isascii() and token[0].isalpha():
            # (Java reserves every letter; one we cannot format is refused, not copied)
            msg = f"unsupported DATE_FORMAT pattern letter {token!r} in {pattern!r}"
            raise ExecutionError(msg)
        else:
            out.append(token.replace("%", "%%"))
    return "".join(out)


_FORMAT_DISTINCT = 1024  # longer columns are formatted a distinct value at a time


def _format_distinct(x: Array, fmt: str) -> Array | None:
    """DATE_FORMAT of a TIMESTAMP(0) column through its distinct values at the finest unit
    the pattern shows (a day for 'yyyy-MM-dd', a minute for 'HH:mm'): Arrow's strftime takes
    ~1 us a value, and a column of event times repeats its days and minutes. None for a
    pattern with quoted text (its letters are not fields)."""
    if "'" in fmt:
        return None
    step = 1 if any(c in fmt for c in "sS") else 60 if any(c in fmt for c in "HhkKma") \
        else 86400
    secs = pc.fill_null(x.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    if step > 1:
        secs = secs // step * step
    encoded = pc.dictionary_encode(pa.array(secs))
    values = encoded.dictionary.cast(pa.timestamp("s"))
    texts = pc.strftime(values, format=java_to_strftime(fmt)).take(encoded.indices)
    if x.null_count:
        texts = pc.if_else(pc.is_valid(x), texts, pa.nulls(len(texts), pa.string()))
    return texts


def _date_format(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    fmt = str(lits[1]) if len(lits) > 1 and lits[1] is not None else "yyyy-MM-dd HH:mm:ss"
    x = args[0]
    if pa.types.is_timestamp(x.type) and x.type.unit != "s":
        # No fractions (%S alone), floored: a cast truncates toward zero, so 1969's
        # 15:23:38.5 came out as 15:23:39.
        per = {"ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[x.type.unit]
        ticks = pc.fill_null(x.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        nulls = x.is_null().to_numpy(zero_copy_only=False) if x.null_count else None
        x = pa.array(ticks // per, pa.timestamp("s"), mask=nulls)
    if fmt == "":  # (Java formats with an empty pattern to an empty string)
        return pc.if_else(pc.is_null(args[0]), pa.scalar(None, pa.string()),
                          pa.scalar("", pa.string()))
    runs = re.findall(r"'[^']*'|S+", fmt)
    if any(r != "SSS" and "S" in r for r in runs):
        # (a fraction of other than 3 digits, or an S quoted as text: formatted one value
        # at a time by the caller, as Java does: 'SSSSSS' was milliseconds twice)
        raise ExecutionError(f"DATE_FORMAT pattern {fmt!r}: fraction digits other than SSS")
    pieces = fmt.split("SSS")
    if len(pieces) == 1 and pa.types.is_timestamp(x.type) and len(x) > _FORMAT_DISTINCT:
        coarse = _format_distinct(x, fmt)
        if coarse is not None:
            return coarse
    texts = [pc.strftime(x, format=java_to_strftime(p)) if p else None for p in pieces]
    if len(pieces) == 1:
        return texts[0]
    ms = pc.utf8_lpad(pc.millisecond(args[0]).cast(pa.string()), width=3, padding="0")
    parts: list[Array] = []
    for i, t in enumerate(texts):
        if i:
            parts.append(ms)
        if t is not None:
            parts.append(t)
    return pc.binary_join_element_wise(*parts, "")


_last_split: tuple[object, object, str, pa.ListArray] | None = None


def _same_data(s: Array) -> object:
    """What tells one array's data from another's: a column read twice from a batch is two
    Python objects over the same buffers (held by the cache, so their addresses are not
    reused meanwhile)."""
    chunks = s.chunks if isinstance(s, pa.ChunkedArray) else [s]
    return tuple((c.offset, len(c), tuple(b.address if b is not None else 0
                                          for b in c.buffers())) for c in chunks)


_JAVA_WHITESPACE = "[\t\n\x0b\f\r\x1c-\x1f \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029" \
    "\u205f\u3000]"


def _split(s: Array, sep: str) -> pa.ListArray:
    """``s`` split at ``sep``; the last split is kept, so SPLIT_INDEX(url, '/', 3),
    SPLIT_INDEX(url, '/', 4)... of one batch's column split it once."""
    global _last_split
    last = _last_split
    key = _same_data(s)
    if last is not None and last[1] == key and last[2] == sep and last[0].type == s.type:
        return last[3]
    # (Flink's SPLIT_INDEX is commons-lang's splitByWholeSeparatorPreserveAllTokens: an
    # empty separator splits at each whitespace character, as Java's isWhitespace)
    parts = pc.split_pattern(s, sep) if sep else pc.split_pattern_regex(s, _JAVA_WHITESPACE)
    if isinstance(parts, pa.ChunkedArray):
        parts = parts.combine_chunks()
    _last_split = (s, key, sep, parts)
    return parts


def _split_index(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    s = args[0]
    sep, idx = lits[1], lits[2]
    if sep is None or idx is None or as_int(idx) < 0:
        return pa.nulls(len(s), pa.string())
    parts = _split(s, str(sep))
    offsets = parts.offsets.to_numpy()
    at = offsets[:-1] + as_int(idx)
    present = at < offsets[1:]  # (a NULL string's list is empty here)
    if parts.null_count:
        present &= parts.is_valid().to_numpy(zero_copy_only=False)
    # (an empty string has no parts at all in commons-lang: NULL at every index)
    present &= pc.fill_null(pc.not_equal(s, ""), False).to_numpy(zero_copy_only=False)
    return parts.values.take(pa.array(np.where(present, at, 0), mask=~present))


KERNELS: dict[str, Kernel] = {
    "add": _months_or(_temporal_or(_decimal_or(pc.add, _sum_precision), 1)),
    "subtract": _months_or(_temporal_or(_decimal_or(pc.subtract, _sum_precision), -1)),
    "multiply": _decimal_or(pc.multiply, _product_precision),
    "divide": _divide,
    "mod": _mod,
    "negate": _months_or(_negate),
    "eq": _months_or(_float_equal(False)),
    "ne": _months_or(_float_equal(True)),
    "lt": _months_or(_compare(pc.less)),
    "le": _months_or(_compare(pc.less_equal)),
    "gt": _months_or(_compare(pc.greater)),
    "ge": _months_or(_compare(pc.greater_equal)),
    "and": _compare(pc.and_kleene),
    "or": _compare(pc.or_kleene),
    "not": _unary(pc.invert),
    "scalar_subquery_value": _scalar_subquery_value,
    "is_null": _unary(pc.is_null),
    "is_not_null": _unary(pc.is_valid),
    "is_true": _is_bool(True, False),
    "is_false": _is_bool(False, False),
    "is_not_true": _is_bool(True, True),
    "is_not_false": _is_bool(False, True),
    "like": constants_or_columns(_like(False), (1, 2)),
    "not_like": constants_or_columns(_like(True), (1, 2)),
    "similar_to": constants_or_columns(_similar(False), (1, 2)),
    "not_similar_to": constants_or_columns(_similar(True), (1, 2)),
    "concat_op": _concat,
    "concat": _concat,
    "reverse": _unary(pc.utf8_reverse),
    "char_length": _char_length,
    "trim": constants_or_columns(_trim("both"), (1,)),
    "ltrim": constants_or_columns(_trim("left"), (1,)),
    "rtrim": constants_or_columns(_trim("right"), (1,)),
    "substring": substring,
    "position": constants_or_columns(position, (0,)),
    "char_fit": char_fit,
    "varchar_fit": varchar_fit,
    "lpad": constants_or_columns(_pad(True), (1, 2)),
    "rpad": constants_or_columns(_pad(False), (1, 2)),
    "repeat": _repeat,
    "abs": _unary(pc.abs),
    "sign": _sign,
    "floor": _floor_ceil(pc.floor),
    "ceil": _floor_ceil(pc.ceil),
    "round": rounding(truncate=False),
    "truncate": rounding(truncate=True),
    "timestampadd": timestampadd,
    "timestampdiff": timestampdiff,
    "power": _checked_math(pc.power, "power"),
    "sqrt": _checked_math(pc.sqrt, "sqrt"),
    "ln": _checked_math(pc.ln, "ln"),
    "log10": _checked_math(pc.log10, "log10"),
    "exp": _checked_math(pc.exp, "exp"),
    "coalesce": _coalesce,
    "greatest": _minmax(pc.max_element_wise),
    "least": _minmax(pc.min_element_wise),
    "if": _if,
    "nullif": _nullif,
    "date_format": _date_format,
    "split_index": constants_or_columns(_split_index, (1, 2)),
    **{f"extract_{u}": _extract(u) for u in (*_EXTRACT, "dow")},
}


def _families() -> None:
    """The kernels of the function families that have modules of their own."""
    from sqlengine.runtime import (
        kernels_bitmap,
        kernels_json,
        kernels_math,
        kernels_nested,
        kernels_text,
        kernels_time,
        kernels_variant,
        key_bytes,
        variance,
    )

    for family in (kernels_bitmap, kernels_json, kernels_math, kernels_nested, kernels_text,
                   kernels_time, kernels_variant, variance, key_bytes):
        KERNELS.update(family.KERNELS)


_families()


def kernel_for(name: str) -> Kernel:
    """The Arrow kernel of a bound function name (a Python function's: its caller)."""
    if name.startswith("py:"):
        from sqlengine.runtime.kernels_python import kernel

        return kernel(name)
    return KERNELS[name]

