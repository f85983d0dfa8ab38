"""KeyIndex: a grouping operator's keys -> state slots (0, 1, 2, ... in order of arrival).

One integer-like key (integers, dates, times, timestamps) is kept in numpy, with no Python
object per key: while the keys span a range at most a few times their number (ids, dates),
a dense array indexed by key - smallest key holds each key's slot (one gather per batch);
otherwise the keys are kept sorted with their slots beside them, found by binary search
(``np.searchsorted``, the batch's keys sorted first) and merged in with one ``np.insert``.
Any other key (strings, several columns, decimals, floats) goes through a dict of Python
values: one C-level lookup per key of the batch.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _integer_like(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) and t != pa.uint64()) or pa.types.is_date(t) or \
        pa.types.is_timestamp(t) or pa.types.is_time(t)


def _as_int64(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray | None]:
    """The values as int64 (NULLs as 0) and the NULL mask (None: no NULLs)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    t = arr.type
    if not pa.types.is_integer(t):
        arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    values = pc.fill_null(arr, 0).cast(pa.int64()).to_numpy(zero_copy_only=False)
    nulls = arr.is_null().to_numpy(zero_copy_only=False) if arr.null_count else None
    return values, nulls


_NAN = float("nan")


class NegativeZero(float):
    """-0.0 as a dict key apart from 0.0 (which Python's == and hash take as one), as Flink
    groups them (its keys compare as bytes) and Arrow's grouping does: a streaming GROUP BY
    gave a group of 0.0 whose rows went to -0.0's once the two met in the dict. Still the
    float -0.0 in arithmetic."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NegativeZero)

    def __ne__(self, other: object) -> bool:
        return not isinstance(other, NegativeZero)

    def __hash__(self) -> int:
        return 0x2D302E30  # (not 0.0's)

    def __repr__(self) -> str:
        return "-0.0"


_NEGATIVE_ZERO = NegativeZero(-0.0)


def python_keys(column: pa.Array | pa.ChunkedArray) -> list[object]:
    """A key column's Python values, as Flink groups them: every NaN the one object
    ``_NAN`` (NaN equals nothing, itself included, and a dict finds a key by identity first,
    so each batch's NaN made a group of its own: streaming GROUP BY y gave (NaN, 1) four
    times where Arrow's grouping of one batch, and DuckDB, give (NaN, 4)), and -0.0 apart
    from 0.0 (NegativeZero)."""
    values = column.to_pylist()
    if not pa.types.is_floating(column.type):
        return values
    if pc.any(pc.is_nan(column)).as_py():
        values = [_NAN if v != v else v for v in values]  # (only a column holding a NaN)
    numbers = column.to_numpy(zero_copy_only=False) if not isinstance(
        column, pa.ChunkedArray) else column.combine_chunks().to_numpy(zero_copy_only=False)
    negative = np.flatnonzero(np.signbit(numbers) & (numbers == 0))
    for i in negative.tolist():
        values[i] = _NEGATIVE_ZERO
    return values


class KeyIndex:
    def __init__(self, key_types: list[pa.DataType]) -> None:
        self.width = len(key_types)
        self.vectorised = self.width == 1 and _integer_like(key_types[0])
        self.size = 0
        self.map: dict[object, int] = {}
        # Keys given slots but not put in ``map`` yet (the first batch's, in slot order):
        # a batch aggregation that sees all its keys at once never builds the dict.
        self.deferred: list[pa.Array] | None = None
        self.sorted_keys = np.zeros(0, dtype=np.int64)
        self.sorted_slots = np.zeros(0, dtype=np.int64)
        self.null_slot = -1
        self.dense: np.ndarray | None = np.zeros(0, dtype=np.int64)  # None: sorted arrays
        self.base = 0  # the key at dense[0]
        self.lo = self.hi = 0  # the smallest and largest key held

    def __len__(self) -> int:
        return self.size

    def nbytes(self) -> int:
        """Memory held, about: 16 bytes a key in numpy; a dict entry and its key objects."""
        if self.vectorised:
            dense = self.dense.nbytes if self.dense is not None else 0
            return dense + self.sorted_keys.nbytes + self.sorted_slots.nbytes
        return self.size * (100 + 64 * self.width)

    def _undefer(self) -> None:
        """Put the deferred keys (slots 0, 1, ...) into ``map``."""
        if self.deferred is not None:
            keys = self._python_keys(self.deferred)
            self.map.update(zip(keys, range(len(keys))))
            self.deferred = None

    def _python_keys(self, columns: list[pa.Array]) -> list[object]:
        lists = [python_keys(c) for c in columns]
        return lists[0] if len(lists) == 1 else list(zip(*lists))

    def lookup(self, columns: list[pa.Array], rows: int = 1) -> np.ndarray:
        """Each row's slot, -1 where its key is not in the index (``rows``: without key
        columns, the number of rows)."""
        if not self.width:
            return np.full(rows, 0 if self.size else -1, dtype=np.int64)
        if not self.vectorised:
            if self.size == 0:  # (nothing to find: no conversion of the keys)
                return np.full(len(columns[0]), -1, dtype=np.int64)
            self._undefer()
            keys = self._python_keys(columns)
            return np.fromiter(map(self.map.get, keys, itertools.repeat(-1)), dtype=np.int64,
                               count=len(keys))
        values, nulls = _as_int64(columns[0])
        if self.dense is not None:
            at = values - self.base
            inside = (at >= 0) & (at < len(self.dense))
            out = np.full(len(values), -1, dtype=np.int64)
            out[inside] = self.dense[at[inside]]
        else:
            out = self._sorted_lookup(values)
        if nulls is not None:
            out[nulls] = self.null_slot
        return out

    def _sorted_lookup(self, values: np.ndarray) -> np.ndarray:
        n_known = len(self.sorted_keys)
        if not n_known:
            return np.full(len(values), -1, dtype=np.int64)
        order = np.argsort(values, kind="stable")  # (sorted needles: cache-friendly)
        pos = np.empty(len(values), dtype=np.int64)
        pos[order] = np.searchsorted(self.sorted_keys, values[order])
        inside = np.minimum(pos, n_known - 1)
        hit = (pos < n_known) & (self.sorted_keys[inside] == values)
        return np.where(hit, self.sorted_slots[inside], -1)

    def _insert(self, values: np.ndarray, slots: np.ndarray) -> None:
        """Add new (non-NULL) keys with their slots."""
        if not len(values):
            return
        if self.dense is not None:
            known = len(self.dense) > 0  # (allocated with the first keys)
            lo = min(int(values.min()), self.lo) if known else int(values.min())
            hi = max(int(values.max()), self.hi) if known else int(values.max())
            if hi - lo + 1 <= max(1 << 22, 4 * self.size):  # (32 MB, or 32 bytes a key)
                self.lo, self.hi = lo, hi
                end = self.base + len(self.dense)
                if not known or lo < self.base or hi >= end:
                    # (room to grow by the span each way, or the new span if more)
                    slack = hi - lo + 1 if known else 0
                    new_base, new_end = (self.base, end) if known else (lo, hi + 1)
                    if lo < new_base:
                        new_base = min(lo, self.base - slack)
                    if hi >= new_end:
                        new_end = max(hi + 1, end + slack)
                    grown = np.empty(new_end - new_base, dtype=np.int64)
                    if known:  # (-1 in the new margins, the old entries between them)
                        start = self.base - new_base
                        grown[:start] = -1
                        grown[start:start + len(self.dense)] = self.dense
                        grown[start + len(self.dense):] = -1
                    else:
                        grown.fill(-1)
                    self.dense, self.base = grown, new_base
                self.dense[values - self.base] = slots
                return
            # Too sparse for a dense array: to sorted arrays from here on.
            held = np.nonzero(self.dense >= 0)[0]
            self.sorted_keys = held + self.base
            self.sorted_slots = self.dense[held]
            self.dense = None
        order = np.argsort(values, kind="stable")
        values, slots = values[order], slots[order]
        at = np.searchsorted(self.sorted_keys, values)
        self.sorted_keys = np.insert(self.sorted_keys, at, values)
        self.sorted_slots = np.insert(self.sorted_slots, at, slots)

    def assign(self, columns: list[pa.Array], rows: int = 1) -> np.ndarray:
        """Each row's slot, new keys getting the next slots in order of first appearance
        (the rows' keys must be distinct)."""
        if self.width and not self.vectorised and self.size == 0 and self.deferred is None:
            n = len(columns[0])
            self.deferred = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c
                             for c in columns]
            self.size = n
            return np.arange(n, dtype=np.int64)
        found = self.lookup(columns, rows)
        missing = np.nonzero(found < 0)[0]
        if not len(missing):
            return found
        fresh = np.arange(self.size, self.size + len(missing), dtype=np.int64)
        found[missing] = fresh
        self.size += len(missing)
        if not self.width:
            return found
        if not self.vectorised:
            keys = self._python_keys(columns)
            self.map.update(zip([keys[i] for i in missing], fresh.tolist()))
            return found
        values, nulls = _as_int64(columns[0])
        new_values = values[missing]
        new_slots = fresh
        if nulls is not None:
            is_null = nulls[missing]
            if is_null.any():
                self.null_slot = int(new_slots[is_null][0])
                new_values, new_slots = new_values[~is_null], new_slots[~is_null]
        self._insert(new_values, new_slots)
        return found
