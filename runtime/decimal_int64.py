"""DECIMAL arithmetic on the unscaled values as 64-bit integers (numpy), when they fit.

Arrow computes decimal128 ``+ - *`` in 128-bit arithmetic and, past 38 digits of result
precision, refuses; the kernels then fit and widen their operands and cast the result back to
the declared type, several passes over every batch (TPC-H q01's three decimal expressions were
half of its time). Most decimal values people compute with (money, quantities, rates) have at
most 18 digits, so their unscaled values (value * 10^scale) are int64s: this module does the
same exact arithmetic on those, when bounds show that no intermediate can overflow, and builds
the decimal128 result directly from the 64-bit words. Anything else (a value past int64, a
possible overflow, decimal256) answers ``None`` and the caller takes Arrow's path, which gives
the same values.

Rounding to a smaller result scale is HALF_UP (away from zero on a tie), as Flink's and the
Arrow path's ``half_towards_infinity``.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import Call, Expr, Literal

_LIMIT = (1 << 63) - 1


def words(a: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A decimal128 array's (low, high) 64-bit words per value, without copying."""
    n = len(a)
    w = np.frombuffer(a.buffers()[1], dtype=np.int64)[2 * a.offset:2 * (a.offset + n)]
    return w[0::2], w[1::2]


def unscaled64(a: pa.Array) -> np.ndarray | None:
    """The unscaled values of a decimal128 array without NULLs as int64 (a view), or None
    when some value does not fit 64 bits."""
    low, high = words(a)
    if a.type.precision <= 18 or np.array_equal(high, low >> 63):
        return low
    return None


def from_unscaled64(values: np.ndarray, dtype: pa.DataType,
                    validity: pa.Buffer | None = None, null_count: int = 0) -> pa.Array:
    """The decimal128 array of the int64 unscaled ``values`` (each must fit ``dtype``)."""
    n = len(values)
    return pa.Array.from_buffers(dtype, n, [validity, pa.py_buffer(words_of(values))],
                                 null_count=null_count)


def words_of(values: np.ndarray) -> np.ndarray:
    """The 16-byte little-endian words of int64 ``values`` widened to 128 bits (low, high),
    as an (n, 2) array (written column by column: ~10x faster than strided slices)."""
    w = np.empty((len(values), 2), dtype=np.int64)
    w[:, 0] = values
    np.right_shift(values, 63, out=w[:, 1])
    return w


def _operand(a: pa.Array) -> tuple[np.ndarray, int, int] | None:
    """(unscaled int64 values, scale, bound on their magnitude) of a decimal128 or integer
    array without NULLs."""
    t = a.type
    if pa.types.is_decimal128(t):
        v = unscaled64(a)
        if v is None:
            return None
        scale = t.scale
        bound = 10 ** t.precision - 1 if t.precision <= 18 else _magnitude(v)
    elif pa.types.is_integer(t):
        if pa.types.is_uint64(t):
            return None
        v = a.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        scale = 0
        bits = t.bit_width
        bound = _magnitude(v) if bits == 64 else 1 << bits
    else:
        return None
    return v, scale, bound


def _literal_operand(lit: Literal) -> tuple[np.int64, int, int] | None:
    """A decimal or integer literal as an operand: its unscaled value (a numpy scalar, which
    broadcasts over the other operand's rows), scale and exact magnitude."""
    t, value = lit.type, lit.value
    if value is None or isinstance(value, bool):
        return None
    if pa.types.is_decimal128(t) and isinstance(value, decimal.Decimal | int):
        unscaled_value = decimal.Decimal(value).scaleb(t.scale)
        if unscaled_value != unscaled_value.to_integral_value():
            return None
        v, scale = int(unscaled_value), t.scale
    elif pa.types.is_integer(t) and isinstance(value, int):
        v, scale = value, 0
    else:
        return None
    return (np.int64(v), scale, abs(v)) if abs(v) <= _LIMIT else None


def _magnitude(v: np.ndarray) -> int:
    if np.ndim(v) == 0:
        return abs(int(v))
    if len(v) == 0:
        return 0
    lo, hi = int(v.min()), int(v.max())
    return max(-lo, hi)


def _zero(t: pa.DataType) -> pa.Scalar:
    return pa.scalar(decimal.Decimal(0), t) if pa.types.is_decimal(t) else pa.scalar(0, t)


def _plan(op: str, sa: int, ba: int, sb: int, bb: int) -> tuple[int, int, int, int] | None:
    """(result scale, bound on the result's magnitude, factors scaling each operand) of
    ``op``, or None when an intermediate could pass int64."""
    if op == "multiply":
        bound = ba * bb
        return (sa + sb, bound, 1, 1) if bound <= _LIMIT else None
    if op in ("add", "subtract"):
        scale = max(sa, sb)
        ka, kb = 10 ** (scale - sa), 10 ** (scale - sb)
        bound = ba * ka + bb * kb
        return (scale, bound, ka, kb) if bound <= _LIMIT else None
    return None


Operand = tuple[np.ndarray, int, int]  # (unscaled int64 values, scale, bound on magnitude)


def combine(op: str, left: Operand, right: Operand, out: pa.DataType,
            valid: pa.Array | None = None) -> Operand | None:
    """``op`` of two int64 operands as ``out``'s unscaled values (rounded HALF_UP to its
    scale), or None when an intermediate could pass int64 or the result overflows ``out``
    (``valid``: the rows that count for that check)."""
    (va, sa, ba), (vb, sb, bb) = left, right
    planned = _plan(op, sa, ba, sb, bb)
    if planned is None:  # (the declared precisions allow an overflow: the values may not)
        ba, bb = min(ba, _magnitude(va)), min(bb, _magnitude(vb))
        planned = _plan(op, sa, ba, sb, bb)
        if planned is None:
            return None
    scale, bound, ka, kb = planned
    if op == "multiply":
        res = va * vb
    else:
        if ka != 1:
            va = va * ka
        if kb != 1:
            vb = vb * kb
        res = va + vb if op == "add" else va - vb
    if out.scale < scale:
        d = 10 ** (scale - out.scale)
        if d > 2 * bound:  # (every value rounds to 0; d itself may pass int64)
            res, bound = np.zeros_like(res), 0
        else:
            # (res + d // 2 may pass int64 for a large d: Python integers then)
            wide = res if bound + d // 2 <= _LIMIT else res.astype(object)
            res = np.where(wide < 0, -((-wide + d // 2) // d), (wide + d // 2) // d)
            res = res.astype(np.int64)
            bound = (bound + d // 2) // d
    elif out.scale > scale:
        k = 10 ** (out.scale - scale)
        if bound * k > _LIMIT:
            return None
        res, bound = res * k, bound * k
    if out.precision < 19 and bound >= 10 ** out.precision:
        counted = res if valid is None else res[valid.to_numpy(zero_copy_only=False)]
        if _magnitude(counted) >= 10 ** out.precision:
            return None  # (an overflow of the result type: Arrow's path reports it)
    return res, out.scale, bound


def unscaled(expr: Expr, batch: pa.RecordBatch, memo: dict | None,
             evaluate: Callable[..., pa.Array]) -> Operand | None:
    """A DECIMAL expression's unscaled int64 values at its type's scale, computed without
    building the decimal128 arrays of ``+ - *`` on the way (an aggregate summing it takes
    int64 values: TPC-H's ``SUM(l_extendedprice * (1 - l_discount))``); None when a value is
    NULL or does not fit, and the caller evaluates the expression as usual."""
    key = ("$unscaled", expr)
    try:
        if memo is not None and key in memo:
            return memo[key]
    except TypeError:  # (a literal value that cannot be hashed)
        memo = None
    found: Operand | None = None
    t = expr.dtype
    if isinstance(expr, Call) and expr.name in ("add", "subtract", "multiply") and \
            len(expr.args) == 2 and pa.types.is_decimal128(t):
        left = unscaled(expr.args[0], batch, memo, evaluate)
        right = unscaled(expr.args[1], batch, memo, evaluate) if left is not None else None
        if left is not None and right is not None:
            found = combine(expr.name, left, right, t)
    elif isinstance(expr, Literal):
        # (one value, broadcast by numpy: ``1 - l_discount`` builds no array of ones)
        found = _literal_operand(expr)
    if found is None:
        arr = evaluate(expr, batch, memo)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        found = None if arr.null_count else _operand(arr)
    if memo is not None:
        memo[key] = found
    return found


def summable(expr: Expr, batch: pa.RecordBatch, memo: dict | None,
             evaluate: Callable[..., pa.Array]) -> pa.Array | None:
    """A DECIMAL expression's values as int64 unscaled values at its type's scale that a SUM
    over the batch's rows can add in int64 without overflow (no value NULL, every one fits,
    their bound times the rows below 2^63); None otherwise, and the caller sums decimals."""
    found = unscaled(expr, batch, memo, evaluate)
    if found is None or found[1] != expr.dtype.scale or \
            found[2] * max(batch.num_rows, 1) >= 1 << 63:
        return None
    values = found[0]
    if np.ndim(values) == 0:  # (a literal)
        values = np.full(batch.num_rows, values, dtype=np.int64)
    return pa.array(values, pa.int64())


def arith(op: str, args: list[pa.Array], out: pa.DataType) -> pa.Array | None:
    """``op`` ("add", "subtract" or "multiply") of two decimal/integer arrays, as ``out``
    (decimal128), in int64 arithmetic; None when it cannot be done exactly that way."""
    if not pa.types.is_decimal128(out) or len(args) != 2:
        return None
    a, b = args
    if len(a) != len(b):
        return None
    validity, nulls, valid = None, 0, None
    if a.null_count or b.null_count:
        valid = pc.and_(pc.is_valid(a), pc.is_valid(b))
        nulls = len(valid) - valid.true_count
        if nulls == len(valid):
            return None
        validity = valid.buffers()[1] if valid.offset == 0 else None
        if validity is None:
            return None
        a = a.fill_null(_zero(a.type)) if a.null_count else a
        b = b.fill_null(_zero(b.type)) if b.null_count else b
    left, right = _operand(a), _operand(b)
    if left is None or right is None:
        return None
    done = combine(op, left, right, out, valid)
    if done is None:
        return None
    res = done[0]
    return from_unscaled64(res, out, validity, nulls)


def unscaled_ints(part: pa.Array) -> np.ndarray:
    """A decimal128 (or decimal256) array's unscaled values (value * 10^scale): int64 when
    every value fits, else Python ints (object array). Read from the 16-byte (32-byte)
    little-endian buffer, no copy."""
    n = len(part)
    width = 4 if pa.types.is_decimal256(part.type) else 2  # (int64 words per value)
    words = np.frombuffer(part.buffers()[1], dtype=np.int64)[width * part.offset:
                                                              width * (part.offset + n)]
    low = words[0::width]
    if all(np.array_equal(words[i::width], low >> 63) for i in range(1, width)):
        return low.copy()
    return np.array([int.from_bytes(words[width * i: width * (i + 1)].tobytes(), "little",
                                    signed=True) for i in range(n)], dtype=object)
