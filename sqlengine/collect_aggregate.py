"""Flink's COLLECT(x): the MULTISET of a group's non-NULL values, each with its count (a
group of NULLs only gives the empty multiset, not NULL). A built-in aggregate on the Python
aggregates' path, as the bitmap aggregates (bitmap_aggregates.py): an accumulator per group,
a dict of each value to its count; a retraction takes one count out, and a value whose
count falls to 0 goes.

The entries come in the order Flink's java.util.HashMap of its internal values keeps them
(what CAST(m AS STRING), UNNEST and the json format show, PyFlink 2.3): by bucket, h XOR
(h shifted right by 16 bits, unsigned), masked by capacity - 1, for a capacity of 16 doubled
while more than 3/4 full, the
value's hash h being Integer / Long / Boolean.hashCode, or for a string Flink's
BinaryStringData hash (Murmur3-32, seed 42, over its UTF-8 bytes); within a bucket in the
order the values came. Values of other types keep the order they came in.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

KEY = "py:collect:builtin"


@dataclass(frozen=True)
class Collect:
    """COLLECT's aggregate function object (PyFlink's AggregateFunction methods)."""

    name: str = "COLLECT"

    def argument_refusal(self, t: pa.DataType) -> str | None:
        from sqlengine import types as T

        if T.is_nested(t) or T.is_opaque(t):
            return f"COLLECT of {T.type_name(t)} values is not supported (of numbers, " \
                "strings, booleans and times it is)"
        return None

    def null_type(self) -> pa.DataType:
        return pa.string()

    def result_for(self, t: pa.DataType) -> pa.DataType:
        from sqlengine.types import multiset_of

        return multiset_of(t)

    def create_accumulator(self) -> dict[Any, int]:
        return {}

    def accumulate(self, acc: dict[Any, int], value: object) -> None:
        if value is not None:
            value = _Double(value) if isinstance(value, float) else value
            acc[value] = acc.get(value, 0) + 1

    def retract(self, acc: dict[Any, int], value: object) -> None:
        if value is None:
            return
        value = _Double(value) if isinstance(value, float) else value
        left = acc.get(value, 0) - 1
        if left > 0:
            acc[value] = left
        else:
            acc.pop(value, None)

    def accumulate_arrays(self, acc: dict[Any, int], arg: pa.Array,
                          signs: np.ndarray | None) -> None:
        values = arg.to_pylist()
        if signs is None and not pa.types.is_floating(arg.type):
            for v in values:
                if v is not None:
                    acc[v] = acc.get(v, 0) + 1
            return
        if signs is None:
            for v in values:
                self.accumulate(acc, v)
            return
        for v, sign in zip(values, signs.tolist()):
            if sign > 0:
                self.accumulate(acc, v)
            else:
                self.retract(acc, v)

    def merge(self, acc: dict[Any, int], others: list[dict[Any, int]]) -> None:
        for other in others:
            for v, n in other.items():
                acc[v] = acc.get(v, 0) + n

    def get_value(self, acc: dict[Any, int]) -> list[tuple[object, int]]:
        entries = [(v, n) for v, n in acc.items() if n > 0]
        return java_hash_map_order(entries)


class _Double(float):
    """A DOUBLE / FLOAT element, equal to another as Java's Double.equals has it: by its bits,
    so 0.0 and -0.0 are two elements (as in Flink) and every NaN is one."""

    def _bits(self) -> bytes:
        return b"nan" if self != self else struct.pack(">d", self)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Double) and self._bits() == other._bits()

    def __hash__(self) -> int:
        return hash(self._bits())

    def __reduce__(self) -> tuple[type, tuple[float]]:  # (pickled accumulators keep it)
        return _Double, (float(self),)


def java_hash_map_order(entries: list[tuple[object, int]]) -> list[tuple[object, int]]:
    """The entries in java.util.HashMap's iteration order over Flink's internal values (see
    the module's docstring); as they are where a value has no hash known here."""
    hashes = [_hash(v) for v, _ in entries]
    if not entries or any(h is None for h in hashes):
        return entries
    capacity = 16
    while len(entries) > capacity * 3 // 4:
        capacity *= 2
    buckets = [((h ^ (h >> 16)) & (capacity - 1)) for h in hashes]  # type: ignore[operator]
    order = sorted(range(len(entries)), key=lambda i: buckets[i])
    return [entries[i] for i in order]


def _hash(v: object) -> int | None:
    """Flink's internal value's hashCode as an unsigned 32-bit int (None: not known here)."""
    if isinstance(v, bool):
        return 1231 if v else 1237
    if isinstance(v, int):
        if -(2**31) <= v < 2**31:
            return v & 0xFFFFFFFF  # (Integer, Short, Byte: the value)
        return (v ^ (v >> 32)) & 0xFFFFFFFF  # (Long)
    if isinstance(v, str):
        return _murmur(v.encode("utf-8"))
    return None


def _murmur(b: bytes, seed: int = 42) -> int:
    """Murmur3-32 as Flink's BinaryStringData.hashCode: 4-byte little-endian words, then each
    tail byte as a signed int."""
    m = 0xFFFFFFFF

    def mix_k(k: int) -> int:
        k = (k * 0xCC9E2D51) & m
        k = ((k << 15) | (k >> 17)) & m
        return (k * 0x1B873593) & m

    def mix_h(h: int, k: int) -> int:
        h ^= k
        h = ((h << 13) | (h >> 19)) & m
        return (h * 5 + 0xE6546B64) & m

    h, n = seed, len(b)
    whole = n - n % 4
    for i in range(0, whole, 4):
        h = mix_h(h, mix_k(int.from_bytes(b[i:i + 4], "little")))
    for i in range(whole, n):
        x = b[i] - 256 if b[i] > 127 else b[i]
        h = mix_h(h, mix_k(x & m))
    h ^= n
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & m
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & m
    h ^= h >> 16
    return h


FUNCTIONS: dict[str, Collect] = {KEY: Collect()}
