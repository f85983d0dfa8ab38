"""ROUND and TRUNCATE with Flink's semantics (SqlFunctionUtils.sround / struncate).

Every type rounds HALF_UP (ties away from zero) or truncates toward zero at ``digits`` places
after the point (before it when negative). A DOUBLE is rounded as the decimal Java prints for it
(``BigDecimal.valueOf``): ``ROUND(1.005E0, 2)`` is 1.01 although the double is just below 1.005.
An integer result wraps around when it overflows its type, as Java's narrowing does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import fit_decimal, round_decimal
from sqlengine.runtime.string_kernels import as_int

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]

_EXACT = 2.0**52  # at and above, a double (times 10^digits) has no fraction left to round


def rounding(truncate: bool) -> Kernel:
    """The kernel of ROUND (``truncate`` False) or TRUNCATE."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        x = args[0]
        if len(lits) > 1 and lits[1] is None:
            return pa.nulls(len(x), out)
        digits = as_int(lits[1]) if len(lits) > 1 else 0
        if pa.types.is_integer(x.type):
            return _integer(x, digits, truncate, out)
        if pa.types.is_decimal(x.type):
            return _decimal(x, digits, truncate, out)
        return _double(x.cast(pa.float64()), digits, truncate).cast(out)

    return kernel


def _integer(x: Array, digits: int, truncate: bool, out: pa.DataType) -> Array:
    if digits >= 0:
        return x.cast(out)
    if -digits > 18:
        return pc.if_else(pc.is_null(x), pa.scalar(None, out), pa.scalar(0, out))
    q = np.uint64(10 ** -digits)
    v = x.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    # (in unsigned 64 bits: |v| + q / 2 of a BIGINT near its limit does not fit a signed one)
    a = np.where(v < 0, -(v.astype(np.uint64)), v.astype(np.uint64))
    r = (a // q if truncate else (a + q // np.uint64(2)) // q) * q
    signed = np.where(v < 0, -r, r).view(np.int64)  # (a result past the BIGINT wraps round)
    res = signed.astype(out.to_pandas_dtype())  # wraps, as Java's (int) does
    return pa.array(res, out, mask=pc.is_null(x).to_numpy(zero_copy_only=False))


def _decimal(x: Array, digits: int, truncate: bool, out: pa.DataType) -> Array:
    t = x.type
    if digits >= t.scale:
        return x.cast(out)
    if -digits > t.precision - t.scale:  # (coarser than its largest value: every one is 0)
        return pc.if_else(pc.is_null(x), pa.scalar(None, out), pa.scalar(0, out).cast(out))
    mode = "towards_zero" if truncate else "half_towards_infinity"
    # (a carry past ``out``'s digits, 38 nines to the tens, is NULL, as Flink's)
    return fit_decimal(round_decimal(x, digits, mode), out)


def _double(x: Array, digits: int, truncate: bool) -> Array:
    """Round or truncate doubles as the shortest decimal that prints each (Java's
    Double.toString), not as their exact binary value.

    With y = |x| * 10^digits and n = floor(y), the decimal's side of the cut (n + 1/2 for
    rounding, n + 1 for truncation) is read by comparing x with the double nearest to the cut:
    that double is x exactly when the decimal Java prints for x is the cut itself."""
    v = x.fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float64)
    if digits > 300:  # finer than any double's digits: nothing to cut
        return x
    digits = max(digits, -300)  # coarser than any finite double: every value goes to 0
    a = np.abs(v)
    up, down = (10.0**digits, 1.0) if digits >= 0 else (1.0, 10.0**-digits)
    with np.errstate(over="ignore", invalid="ignore"):
        y = a * up / down
        n = np.floor(y)
        ok = np.isfinite(y) & (y < _EXACT)
        n = np.where(ok, n, 0.0)
        # Float error may put n one off: the true floor is n - 1 if |x| is below n's own cut.
        n = np.where(_scaled_back(n, up, down) > a, n - 1, n)
        cut = n + (1.0 if truncate else 0.5)
        r = np.where(a >= _scaled_back(cut, up, down), n + 1, n)
        res = np.where(ok, np.where(r == 0, 0.0, np.copysign(_scaled_back(r, up, down), v)),
                       v)
    return pa.array(res, pa.float64(), mask=pc.is_null(x).to_numpy(zero_copy_only=False))


def _scaled_back(m: np.ndarray, up: float, down: float) -> np.ndarray:
    """m / 10^digits, correctly rounded (one IEEE operation)."""
    return m / up if up != 1.0 else m * down
