"""DistinctCounts: how many rows of each group hold each value, for COUNT/SUM/AVG(DISTINCT x)
over a changelog (a row counts when the first copy of its value comes into its group and stops
counting when the last copy is retracted).

Held in numpy, with no Python object per (group, value) pair: each distinct value gets a
small integer id (a :class:`KeyIndex` over the values: vectorised for integer-like values), a
pair is the int64 ``slot << 32 | id``, and the pairs' counts are kept in sorted arrays found
by binary search. New pairs go into a second, smaller sorted level that is merged into the
first once it has grown past about the square root of the first's size (an insert moves the
small level only; a merge, now and then, the large one). A pair whose count falls to zero
keeps its place (absent and zero are the same) until the next merge drops it.

Several DISTINCT aggregates of one argument (COUNT(DISTINCT bidder), COUNT(DISTINCT bidder)
FILTER (WHERE ...), SUM(DISTINCT bidder)) share one instance, a count column each (as Flink's
distinct views shared by filter): the pairs are found once per batch for all of them.

While groups x values stays small (a few groups of many values, as a GROUP BY channel, day
counting distinct bidders), the counts are a dense array indexed by ``slot * id_cap + id``
instead: no sort and no search per batch, one scatter-add. It turns into the sorted levels,
for good, once it would outgrow ``DENSE_MIN`` entries and 8 per pair counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError
from sqlengine.runtime.operators.key_index import KeyIndex

_ID_BITS = 32
_MAX_SLOT = (1 << (63 - _ID_BITS)) - 1
MIN_RECENT = 1 << 16  # (pairs the recent level holds before a merge, at least)
DENSE_MIN = 1 << 21  # (entries a dense count array may always have: 16 MB)


@dataclass(frozen=True, slots=True)
class PairChanges:
    """What a batch changed, one entry per distinct (slot, value) pair it touched (at least
    every pair whose count crossed zero in some column)."""

    slots: np.ndarray  # the pair's group slot
    first: np.ndarray  # the batch row that first held the pair (for its value)
    became: np.ndarray  # [pair, column]: the count went from 0 to positive: the value counts
    gone: np.ndarray  # [pair, column]: from positive to 0: it stops counting


class _Level:
    """Sorted packed pairs with their counts: ``counts[column]`` is a contiguous array per
    column (inserting into a 2-D array's rows is many times slower)."""

    __slots__ = ("counts", "keys")

    def __init__(self, columns: int) -> None:
        self.keys = np.zeros(0, dtype=np.int64)
        self.counts = np.zeros((columns, 0), dtype=np.int64)

    def find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions of ``keys`` (sorted) and whether each is held."""
        pos = np.searchsorted(self.keys, keys)
        if not len(self.keys):
            return pos, np.zeros(len(keys), dtype=bool)
        hit = self.keys[np.minimum(pos, len(self.keys) - 1)] == keys
        return pos, hit & (pos < len(self.keys))


class DistinctCounts:
    def __init__(self, value_type: pa.DataType, columns: int = 1) -> None:
        self.value_type = value_type
        self.columns = columns
        self.ids = KeyIndex([value_type])
        self.values: list[pa.Array] = []  # id -> value, in id order, a chunk per batch
        self.main = _Level(columns)
        self.recent = _Level(columns)
        self.live = np.zeros(columns, dtype=np.int64)  # pairs with a positive count, per column
        # Dense counts (None: the sorted levels): [column, slot * id_cap + id].
        self.dense: np.ndarray | None = np.zeros((columns, 0), dtype=np.int64)
        self.slot_cap = self.id_cap = 0
        self.retracted = False  # (a count went down since the last merge: zeros to drop)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        if self.dense is not None:  # (its non-zero entries only)
            at = np.flatnonzero(self.dense.any(axis=0))
            state["dense"] = (at, self.dense[:, at])
        else:
            state["dense"] = None
        return state

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state)
        if self.dense is not None:  # (its non-zero entries, spread out again)
            at, counts = self.dense  # type: ignore[misc]
            self.dense = np.zeros((self.columns, self.slot_cap * self.id_cap), dtype=np.int64)
            self.dense[:, at] = counts

    def __len__(self) -> int:
        """Pairs counted, over all columns."""
        return int(self.live.sum())

    def nbytes(self) -> int:
        dense = self.dense.nbytes if self.dense is not None else 0
        return (self.main.keys.nbytes + self.main.counts.nbytes + self.recent.keys.nbytes
                + self.recent.counts.nbytes + self.ids.nbytes() + dense
                + sum(v.nbytes for v in self.values))

    def _value_ids(self, values: pa.Array) -> np.ndarray:
        """Each row's value id (new values get the next ids)."""
        enc = pc.dictionary_encode(values)
        unique = enc.dictionary
        before = len(self.ids)
        ids = self.ids.assign([unique])
        if len(self.ids) > before:
            self.values.append(unique.filter(pa.array(ids >= before)))
        if len(self.ids) >= 1 << _ID_BITS:
            raise ExecutionError(f"DISTINCT aggregate: more than {1 << _ID_BITS} distinct "
                                 "values")
        return ids[enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)]

    def update(self, slots: np.ndarray, values: pa.Array, signs: np.ndarray) -> PairChanges:
        """Count rows in (sign +1) or out (-1), 0 leaving a column alone: row i is value
        ``values[i]`` (not NULL) of the group at ``slots[i]``; ``signs`` is [row, column]
        (or [row] for one column, and then so are the changes' ``became`` / ``gone``)."""
        flat = signs.ndim == 1
        signs = signs.astype(np.int64).reshape(len(signs), -1)
        if len(slots) and int(slots.max()) > _MAX_SLOT:
            raise ExecutionError(f"DISTINCT aggregate: more than {_MAX_SLOT} groups")
        ids = self._value_ids(values)
        if self.dense is not None and self._dense_fits(int(slots.max()) + 1 if len(slots)
                                                       else 0):
            change = self._update_dense(slots.astype(np.int64), ids, signs)
        else:
            change = self._update_levels(slots, ids, signs)
        if flat:
            return PairChanges(change.slots, change.first, change.became[:, 0],
                               change.gone[:, 0])
        return change

    def _update_levels(self, slots: np.ndarray, ids: np.ndarray, signs: np.ndarray
                       ) -> PairChanges:
        packed = (slots.astype(np.int64) << _ID_BITS) | ids
        keys, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        # (a weighted bincount per column: exact, the weights are small integers)
        deltas = np.stack([np.bincount(inverse, weights=signs[:, c], minlength=len(keys))
                           for c in range(self.columns)]).astype(np.int64)
        old = np.zeros_like(deltas)
        main_pos, in_main = self.main.find(keys)
        old[:, in_main] = self.main.counts[:, main_pos[in_main]]
        rest = ~in_main
        recent_pos, in_recent = self.recent.find(keys[rest])
        old_rest = np.zeros((self.columns, int(rest.sum())), dtype=np.int64)
        old_rest[:, in_recent] = self.recent.counts[:, recent_pos[in_recent]]
        old[:, rest] = old_rest
        new = old + deltas
        self.main.counts[:, main_pos[in_main]] = new[:, in_main]
        new_rest = new[:, rest]
        self.recent.counts[:, recent_pos[in_recent]] = new_rest[:, in_recent]
        fresh = ~in_recent & new_rest.any(axis=0)
        added = int(fresh.sum())
        if added:
            at = recent_pos[fresh]
            self.recent.keys = np.insert(self.recent.keys, at, keys[rest][fresh])
            self.recent.counts = np.stack([np.insert(c, at, n[fresh]) for c, n in
                                           zip(self.recent.counts, new_rest)])
        became = (old <= 0) & (new > 0)
        gone = (old > 0) & (new <= 0)
        self.live += became.sum(axis=1) - gone.sum(axis=1)
        self.retracted = self.retracted or bool((deltas < 0).any())
        # (merged when it holds about sqrt(main x pairs added per batch): an insert moves the
        # recent level, a merge the main one; this balances the two)
        if len(self.recent.keys) > max(MIN_RECENT, math.isqrt(len(self.main.keys) * added)):
            self._merge()
        return PairChanges(keys >> _ID_BITS, first, became.T, gone.T)

    def _dense_fits(self, slots: int) -> bool:
        """Grow the dense array to hold ``slots`` slots and every value id, if that stays
        within its budget; else turn it into the sorted levels (for good) and say no."""
        assert self.dense is not None
        ids = len(self.ids)
        if slots <= self.slot_cap and ids <= self.id_cap:
            return True
        slot_cap = max(self.slot_cap, 8)
        while slot_cap < slots:
            slot_cap *= 2
        id_cap = max(self.id_cap, 1024)
        while id_cap < ids:
            id_cap *= 2
        if slot_cap * id_cap * self.columns > max(DENSE_MIN, 8 * len(self)):
            self._to_levels()
            return False
        grown = np.zeros((self.columns, slot_cap, id_cap), dtype=np.int64)
        grown[:, :self.slot_cap, :self.id_cap] = self.dense.reshape(
            self.columns, self.slot_cap, self.id_cap)
        self.dense = grown.reshape(self.columns, -1)
        self.slot_cap, self.id_cap = slot_cap, id_cap
        return True

    def _to_levels(self) -> None:
        """The dense counts become the main sorted level (slot-major order is key order)."""
        if self.dense is None:
            return
        at = np.flatnonzero(self.dense.any(axis=0))
        if self.id_cap:
            self.main.keys = ((at // self.id_cap) << _ID_BITS) | (at % self.id_cap)
        self.main.counts = self.dense[:, at]
        self.dense = None
        self.slot_cap = self.id_cap = 0

    def _update_dense(self, slots: np.ndarray, ids: np.ndarray, signs: np.ndarray
                      ) -> PairChanges:
        dense = self.dense
        assert dense is not None
        at = slots * self.id_cap + ids
        old = dense[:, at]
        for column, counts in enumerate(dense):
            np.add.at(counts, at, signs[:, column])
        new = dense[:, at]  # (rows of one pair all read the same counts, before and after)
        became = (old <= 0) & (new > 0)
        gone = (old > 0) & (new <= 0)
        flipped = np.flatnonzero((became | gone).any(axis=0))
        if len(flipped):
            _, first = np.unique(at[flipped], return_index=True)
            flipped = flipped[first]  # (one row per pair: its first)
        became, gone = became[:, flipped], gone[:, flipped]
        self.live += became.sum(axis=1) - gone.sum(axis=1)
        return PairChanges(slots[flipped], flipped, became.T, gone.T)

    def _merge(self) -> None:
        """The recent level merged into the main one (both sorted, no key in both)."""
        at = np.searchsorted(self.main.keys, self.recent.keys)
        n, m = len(self.main.keys), len(self.recent.keys)
        new_at = at + np.arange(m)  # (the recent pairs' places in the merged arrays)
        old = np.ones(n + m, dtype=bool)
        old[new_at] = False
        keys = np.empty(n + m, dtype=np.int64)
        keys[new_at], keys[old] = self.recent.keys, self.main.keys
        counts = np.empty((self.columns, n + m), dtype=np.int64)
        for column in range(self.columns):
            counts[column, new_at] = self.recent.counts[column]
            counts[column, old] = self.main.counts[column]
        if self.retracted:  # (pairs counted out of every column are dropped here)
            keep = counts.any(axis=0)
            keys, counts = keys[keep], counts[:, keep]
            self.retracted = False
        self.main.keys, self.main.counts = keys, counts
        self.recent = _Level(self.columns)

    def pairs(self) -> tuple[np.ndarray, pa.Array, np.ndarray]:
        """Every pair with a non-zero count: its slot, its value, its counts ([pair, column],
        or [pair] for one column)."""
        if self.dense is not None:
            at = np.flatnonzero(self.dense.any(axis=0))
            counts = self.dense[:, at]
            slots, ids = (at // self.id_cap, at % self.id_cap) if self.id_cap else (at, at)
        else:
            self._merge()
            keys, counts = self.main.keys, self.main.counts
            slots, ids = keys >> _ID_BITS, keys & ((1 << _ID_BITS) - 1)
        values = pa.concat_arrays(self.values) if self.values else \
            pa.array([], self.value_type)
        return slots, values.take(pa.array(ids)), counts[0] if self.columns == 1 else counts.T

    def forget(self, slots: np.ndarray) -> None:
        """Drop every pair of the groups at ``slots`` (cleared or expired): their values
        count again from none."""
        if not len(slots):
            return
        if self.dense is not None:
            inside = slots[slots < self.slot_cap]
            if not len(inside) or not self.id_cap:
                return
            view = self.dense.reshape(self.columns, self.slot_cap, self.id_cap)
            self.live -= (view[:, inside, :] > 0).sum(axis=(1, 2))
            view[:, inside, :] = 0
            return
        for level in (self.main, self.recent):
            gone = np.isin(level.keys >> _ID_BITS, slots)
            if gone.any():
                self.live -= (level.counts[:, gone] > 0).sum(axis=1)
                level.keys = level.keys[~gone]
                level.counts = level.counts[:, ~gone]

    def adopt(self, old: DistinctCounts, mapping: np.ndarray) -> None:
        """Take ``old``'s pairs of the slots ``mapping`` names (old slot -> new slot, -1: not
        taken): a restore at another parallelism."""
        self._to_levels()
        slots, values, counts = old.pairs()
        counts = counts.reshape(len(counts), -1).T  # ([column, pair])
        if not len(slots):
            return
        inside = slots < len(mapping)
        new_slots = np.full(len(slots), -1, dtype=np.int64)
        new_slots[inside] = mapping[slots[inside]]
        take = np.flatnonzero(new_slots >= 0)
        if not len(take):
            return
        ids = self._value_ids(values.take(pa.array(take)))
        keys = (new_slots[take] << _ID_BITS) | ids
        merged = np.concatenate([self.main.keys, self.recent.keys, keys])
        all_counts = np.concatenate([self.main.counts, self.recent.counts, counts[:, take]],
                                    axis=1)
        order = np.argsort(merged, kind="stable")
        self.main.keys, self.main.counts = merged[order], all_counts[:, order]
        self.recent = _Level(self.columns)
        self.live += (counts[:, take] > 0).sum(axis=1)
