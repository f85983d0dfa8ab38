"""RAND, RAND_INTEGER and UUID: the volatile functions drawing random numbers.

RAND(seed) and RAND_INTEGER(seed, bound) repeat Flink's values exactly: Flink gives each call
a ``java.util.Random(seed)`` whose draws go to the rows in order; its 48-bit linear
congruential generator is reproduced here for a whole batch at once (the states of n draws
are ``A_k * s + C_k`` mod 2^48 with ``A_k``/``C_k`` built by doubling, products wrapping
modulo 2^64, which 2^48 divides). A call's generator continues across batches (per call and
thread). Without a seed the values come from numpy's generator.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError

_MULT = 0x5DEECE66D
_ADD = 0xB
_MASK = (1 << 48) - 1
_U_MASK = np.uint64(_MASK)

# (id of the call expression, thread) -> (the call, the generator's 48-bit state). The entry
# holds its call: while it is there no later object gets that id, so a later query's RAND(seed)
# starts from its seed instead of going on from a finished query's draws.
_STATES: OrderedDict[tuple[int, int], tuple[object, int]] = OrderedDict()
_LOCK = threading.Lock()
_RNG = np.random.default_rng()


def _steps(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(A_k, C_k) for k = 1..n: the state after k steps is A_k * s + C_k (mod 2^48)."""
    a = np.empty(n, dtype=np.uint64)
    c = np.empty(n, dtype=np.uint64)
    if n == 0:
        return a, c
    a[0], c[0] = _MULT, _ADD
    m = 1
    while m < n:
        k = min(m, n - m)
        am, cm = a[m - 1], c[m - 1]
        with np.errstate(over="ignore"):
            a[m:m + k] = (a[:k] * am) & _U_MASK
            c[m:m + k] = (c[:k] * am + cm) & _U_MASK
        m += k
    return a, c


def _draw(call: object, seed: int, steps: int) -> np.ndarray:
    """The next ``steps`` 48-bit states of the call's java.util.Random."""
    key = _key(call)
    with _LOCK:
        held = _STATES.get(key)
        state = (seed ^ _MULT) & _MASK if held is None else held[1]
        a, c = _steps(steps)
        with np.errstate(over="ignore"):
            states = (a * np.uint64(state) + c) & _U_MASK
        _STATES[key] = (call, int(states[-1]) if steps else state)
        _STATES.move_to_end(key)
        while len(_STATES) > 4096:
            _STATES.popitem(last=False)
    return states


def _key(call: object) -> tuple[int, int]:
    return id(call), threading.get_ident()


def rand(call: object, seed: int | None, n: int) -> pa.Array:
    """RAND([seed]) for ``n`` rows."""
    if seed is None:
        return pa.array(_RNG.random(n), pa.float64())
    states = _draw(call, seed, 2 * n)
    hi = (states[0::2] >> np.uint64(22)).astype(np.int64)  # next(26)
    lo = (states[1::2] >> np.uint64(21)).astype(np.int64)  # next(27)
    return pa.array(((hi << 27) + lo) * (1.0 / (1 << 53)), pa.float64())


def rand_integer(call: object, seed: int | None, bound: pa.Array, n: int) -> pa.Array:
    """RAND_INTEGER([seed,] bound) for ``n`` rows: java.util.Random.nextInt(bound)."""
    bounds = bound.fill_null(1).to_numpy(zero_copy_only=False).astype(np.int64)
    if (bounds <= 0)[pc.is_valid(bound).to_numpy(zero_copy_only=False)].any():
        raise ExecutionError("RAND_INTEGER: the bound must be positive")
    if seed is None:
        out = np.floor(_RNG.random(n) * bounds).astype(np.int64)
    else:
        out = _next_int(call, seed, bounds)
    res = pa.array(out.astype(np.int32), pa.int32())
    return pc.if_else(pc.is_valid(bound), res, pa.nulls(n, pa.int32())) if bound.null_count \
        else res


def _next_int(call: object, seed: int, bounds: np.ndarray) -> np.ndarray:
    out = np.empty(len(bounds), dtype=np.int64)
    done = 0
    while done < len(bounds):
        rest = bounds[done:]
        states = _draw(call, seed, len(rest))
        bits = (states >> np.uint64(17)).astype(np.int64)  # next(31)
        power = (rest & -rest) == rest
        val = np.where(power, (rest * bits) >> 31, bits % rest)
        # Java rejects a draw when bits - val + (bound - 1) overflows an int: rare; the
        # rows from the first rejected one are drawn again after rewinding.
        bad = ~power & (bits - val + (rest - 1) >= (1 << 31))
        if not bad.any():
            out[done:] = val
            break
        first = int(np.argmax(bad))
        out[done:done + first] = val[:first]
        with _LOCK:  # row ``first`` draws again from the state after its rejected draw
            _STATES[_key(call)] = (call, int(states[first]))
        done += first
    return out


def uuids(n: int) -> pa.Array:
    """UUID(): random (version 4, IETF variant) UUIDs as text, 8-4-4-4-12 lower-case hex."""
    raw = np.frombuffer(_RNG.bytes(16 * n), dtype=np.uint8).reshape(n, 16).copy()
    raw[:, 6] = (raw[:, 6] & 0x0F) | 0x40
    raw[:, 8] = (raw[:, 8] & 0x3F) | 0x80
    table = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    digits = np.empty((n, 32), dtype=np.uint8)
    digits[:, 0::2] = table[raw >> 4]
    digits[:, 1::2] = table[raw & 15]
    chars = np.full((n, 36), ord("-"), dtype=np.uint8)
    for a, b in ((0, 8), (8, 12), (12, 16), (16, 20), (20, 32)):
        at = a + (a >= 8) + (a >= 12) + (a >= 16) + (a >= 20)
        chars[:, at:at + b - a] = digits[:, a:b]
    return pa.array(np.ascontiguousarray(chars).view("S36").ravel()).cast(pa.string())
