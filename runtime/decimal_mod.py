"""MOD of DECIMAL values (Java's BigDecimal.remainder: the sign of the dividend), vectorised on
the unscaled integers when they fit in 64 bits, exact with Python decimals otherwise."""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import WIDE_DECIMALS
from sqlengine.errors import DataValueError

# (80 digits: the default context's 28 cannot hold a DECIMAL(38, 30))


def _unscaled(a: pa.Array, scale: int) -> np.ndarray | None:
    """The values times 10**scale as int64, or None when some would not fit."""
    digits = a.type.precision - a.type.scale + scale
    if digits > 18:
        return None
    wide = a.cast(pa.decimal128(max(digits, 1), scale)).fill_null(0)
    words = np.frombuffer(wide.buffers()[1], dtype=np.int64)
    return words[2 * wide.offset:2 * (wide.offset + len(wide)):2].copy()


def decimal_mod(a: pa.Array, b: pa.Array, out: pa.DataType) -> pa.Array:
    scale = out.scale
    nulls = pc.or_(pc.is_null(a), pc.is_null(b))
    ua, ub = _unscaled(a, scale), _unscaled(b, scale)
    if ua is None or ub is None:
        left, right = a.to_pylist(), b.to_pylist()
        if any(y == 0 for y in right if y is not None):
            raise DataValueError("division by zero in MOD")
        vals = [None if x is None or y is None else
                WIDE_DECIMALS.remainder(decimal.Decimal(x), decimal.Decimal(y)).quantize(
                    decimal.Decimal(1).scaleb(-scale), context=WIDE_DECIMALS)
                for x, y in zip(left, right)]
        return pa.array(vals, out)
    valid = ~np.asarray(nulls.to_numpy(zero_copy_only=False))
    if np.any((ub == 0) & valid):
        raise DataValueError("division by zero in MOD")
    rem = np.fmod(ua, np.where(ub == 0, 1, ub))  # C's fmod: the dividend's sign, as Java
    data = np.empty(2 * len(rem), dtype=np.int64)
    data[0::2] = rem
    data[1::2] = np.where(rem < 0, -1, 0)
    raw = pa.Array.from_buffers(out, len(rem), [None, pa.py_buffer(data.tobytes())])
    return pc.if_else(nulls, pa.nulls(len(rem), out), raw)
