"""Kernels of ``sqlengine.functions_math`` (Java's Math semantics: NaN outside a function's
domain, never an error), BIN / HEX as Java's Long.toBinaryString / toHexString print them."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def _unary(fn: Callable[[Array], Array]) -> Kernel:
    return lambda args, lits, out: fn(args[0])


def _numpy_unary(fn: Callable[[np.ndarray], np.ndarray]) -> Kernel:
    """A numpy ufunc over DOUBLE values, NULL where the input is NULL."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a = args[0]
        values = a.fill_null(0.0).to_numpy(zero_copy_only=False) if a.null_count else \
            a.to_numpy(zero_copy_only=False)
        with np.errstate(all="ignore"):
            res = fn(values)
        return pa.array(res, pa.float64(), mask=a.is_null().to_numpy(zero_copy_only=False)
                        if a.null_count else None)

    return kernel


def _log(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """LOG(x) is the natural logarithm; LOG(base, x) is ln(x) / ln(base)."""
    if len(args) == 1:
        return pc.ln(args[0])
    return pc.divide(pc.ln(args[1]), pc.ln(args[0]))


def _bits(values: np.ndarray, width: int) -> Array:
    """Java's Long.toBinaryString (width 1) / toHexString (width 4) of int64 values: the
    unsigned two's complement digits without leading zeros."""
    u = values.astype(np.int64).view(np.uint64)
    digits = 64 // width
    shifts = np.arange(digits - 1, -1, -1, dtype=np.uint64) * np.uint64(width)
    mask = np.uint64((1 << width) - 1)
    nibbles = ((u[:, None] >> shifts[None, :]) & mask).astype(np.uint8)
    table = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
    chars = np.ascontiguousarray(table[nibbles])
    text = pa.array(chars.view(f"S{digits}").ravel()).cast(pa.string())
    trimmed = pc.utf8_ltrim(text, characters="0")
    return pc.if_else(pc.equal(trimmed, ""), "0", trimmed)


def _bin(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return _integer_digits(args[0], 1)


def _integer_digits(a: Array, width: int) -> Array:
    values = a.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    res = _bits(values, width)
    return pc.if_else(pc.is_valid(a), res, pa.nulls(len(a), pa.string())) if a.null_count \
        else res


def _hex(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a = args[0]
    if pa.types.is_string(a.type) or pa.types.is_large_string(a.type) or \
            pa.types.is_binary(a.type):
        return hex_bytes(a)
    return _integer_digits(a, 4)


_HEX = set("0123456789abcdefABCDEF")


def _unhex_one(text: str) -> bytes | None:
    """Flink's UNHEX (EncodingUtils.unhex): digit pairs from the end; of an odd number of
    digits the first is checked but dropped, its byte left 0; a non-hex character gives
    NULL."""
    if not set(text) <= _HEX:
        return None
    if len(text) % 2:
        return b"\x00" + bytes.fromhex(text[1:])
    return bytes.fromhex(text)


def _unhex(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    from sqlengine.runtime.kernels_text import per_distinct

    return per_distinct(args[0], _unhex_one, pa.binary())


def hex_bytes(a: Array) -> Array:
    """Every byte of each (UTF-8) value as two upper-case hex digits."""
    b = a.cast(pa.binary()) if not pa.types.is_binary(a.type) else a
    b = pc.fill_null(b, b"") if b.null_count else b
    b = b.take(pa.array(np.arange(len(b)))) if b.offset else b  # (offset 0 buffers)
    offsets = np.frombuffer(b.buffers()[1], dtype=np.int32)[:len(b) + 1]
    data = b.buffers()[2]
    raw = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None \
        else np.zeros(0, np.uint8)
    table = np.frombuffer(b"0123456789ABCDEF", dtype=np.uint8)
    pairs = np.empty(2 * len(raw), dtype=np.uint8)
    pairs[0::2] = table[raw >> 4]
    pairs[1::2] = table[raw & 15]
    new_offsets = ((offsets - offsets[0]) * 2).astype(np.int32)
    res = pa.Array.from_buffers(pa.string(), len(b), [None, pa.py_buffer(new_offsets),
                                                      pa.py_buffer(pairs)])
    return pc.if_else(pc.is_valid(a), res, pa.nulls(len(a), pa.string())) if a.null_count \
        else res


def _cot(values: np.ndarray) -> np.ndarray:
    return 1.0 / np.tan(values)


KERNELS: dict[str, Kernel] = {
    "sin": _unary(pc.sin), "cos": _unary(pc.cos), "tan": _unary(pc.tan),
    "asin": _unary(pc.asin), "acos": _unary(pc.acos), "atan": _unary(pc.atan),
    "sinh": _numpy_unary(np.sinh), "cosh": _numpy_unary(np.cosh),
    "tanh": _numpy_unary(np.tanh), "cot": _numpy_unary(_cot),
    "degrees": _numpy_unary(np.degrees), "radians": _numpy_unary(np.radians),
    "log2": _unary(pc.log2),
    "atan2": lambda args, lits, out: pc.atan2(args[0], args[1]),
    "log": _log,
    "bin": _bin,
    "hex": _hex,
    "unhex": _unhex,
}

# Functions of no argument: the value for a batch of ``n`` rows.
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
