"""BuildIndex: a batch join's built side, hashed once and probed by every batch of the other.

A hash join in batch mode builds one side and probes it with the other side's batches. Arrow's
join (Acero) hashes its build input on every call, so probing batch by batch would hash the
built side once per batch. For integer-like keys (integers, dates, times, timestamps; several
of them packed into one int64 when their ranges allow) the built side's keys are indexed once
here, in numpy, with no Python object per key:

- keys spanning a range at most a few times their number, or a few million (ids, dates:
  TPC-H's keys), are dense: unique ones (a primary key) get a slot array, the row of key
  ``k`` at ``slot[k - lo]`` (one scatter to build, one gather per probing batch); repeated
  ones an offsets array (a counting sort), the rows of ``k`` at ``rows[offsets[k - lo]:
  offsets[k - lo + 1]]``; keys that come sorted (a file written in key order) are not
  sorted again;
- other keys are sorted once and found by binary search (``np.searchsorted``).

``probe`` answers the pairs (probing row, built row) of equal keys, probing rows in their
order and, for each, its built rows in theirs. Keys of any other type (strings, decimals,
floats) get no index (``build`` answers None): the join hashes them with Acero.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

# A dense array while the keys' range is at most this many times their number, or at most
# DENSE_SLACK keys (32 MB of int32 slots or offsets: a gather beats a binary search by far).
DENSE_FACTOR = 4
DENSE_SLACK = 1 << 23
MAX_CANDIDATES = 8  # built rows per indexed key when other key columns are compared after
_BITS = 62  # packed keys stay below 2^62: no overflow in the arithmetic on them


def integer_like(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) and t != pa.uint64()) or pa.types.is_date(t) or \
        pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t)


def _int64(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Values without NULLs as int64 (a view where the type is 64 bits wide)."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if not pa.types.is_integer(t):
        arr = arr.view(pa.int32() if t.bit_width == 32 else pa.int64())
    values = arr.to_numpy(zero_copy_only=False)
    return values.astype(np.int64, copy=False)


class BuildIndex:
    """The built side's keys -> its rows (see the module's note)."""

    def __init__(self, cols: list[np.ndarray], positions: np.ndarray) -> None:
        n = len(positions)
        lows = [int(v.min()) for v in cols]
        widths = [int(v.max()) - lo + 1 for v, lo in zip(cols, lows, strict=True)]
        # The key columns indexed: the widest ones (the most selective, as a rule) while
        # their packed range stays dense; the others (``rest``) are compared on the candidate
        # pairs. With no dense column, all columns packed (when they fit) and sorted.
        limit = DENSE_FACTOR * n + DENSE_SLACK
        indexed: list[int] = []
        span = 1
        for i in sorted(range(len(cols)), key=widths.__getitem__, reverse=True):
            if span * widths[i] <= limit:
                indexed.append(i)
                span *= widths[i]
        if indexed and len(indexed) < len(cols):
            # Too many candidates a probing key would compare (a dense column repeats, the
            # selective one is sparse): all columns sorted instead.
            distinct = int(np.unique(_pack([cols[i] for i in indexed], [lows[i] for i in indexed],
                                           [widths[i] for i in indexed])[0]).size)
            if n > MAX_CANDIDATES * distinct:
                indexed = []
        self.dense = bool(indexed)
        if not indexed:
            indexed = list(range(len(cols)))
        self.indexed = sorted(indexed)
        self.rest = [i for i in range(len(cols)) if i not in indexed]
        self.lows = [lows[i] for i in self.indexed]
        self.widths = [widths[i] for i in self.indexed]
        keys, _ = _pack([cols[i] for i in self.indexed], self.lows, self.widths)
        self.offsets: np.ndarray | None = None  # dense, repeated keys: rows[off[k]:off[k+1]]
        self.slot: np.ndarray | None = None  # dense, unique keys: the row of key k, or -1
        self.sorted_keys: np.ndarray | None = None
        self.rest_values: list[np.ndarray] = []
        small = np.int32 if n < 2**31 else np.int64
        if self.dense:
            # Unique keys (a primary key): one scatter, no sort. A repeated key overwrote a
            # slot, so fewer slots are taken than there are keys.
            slot = np.full(span, -1, dtype=small)
            slot[keys] = np.arange(n, dtype=small)
            self.unique = int(np.count_nonzero(slot >= 0)) == n
            if self.unique:
                self.slot = slot
                self.rows = positions
                self.rest_values = [cols[i] for i in self.rest]
                return
            del slot
            counts = np.bincount(keys, minlength=span)
            self.offsets = np.zeros(span + 1, dtype=small)
            np.cumsum(counts, out=self.offsets[1:])
        order = _grouping_order(keys)
        self.rows = positions if order is None else positions[order]  # grouped by key
        self.rest_values = [cols[i] if order is None else cols[i][order] for i in self.rest]
        if not self.dense:
            self.sorted_keys = keys if order is None else keys[order]
            self.unique = bool(n < 2 or (self.sorted_keys[1:] != self.sorted_keys[:-1]).all())

    @classmethod
    def build(cls, keys: pa.Table) -> BuildIndex | None:
        """The index of a built side's valid keys (columns ``k0, k1, ...`` without NULLs,
        then ``$pos``), or None when a key is not integer-like, or no key column is dense
        and the packed keys would not fit 62 bits."""
        names = [c for c in keys.column_names if c != "$pos"]
        if not names or keys.num_rows == 0 or \
                not all(integer_like(keys.schema.field(n).type) for n in names):
            return None
        index = cls([_int64(keys[n]) for n in names], keys["$pos"].to_numpy())
        if not index.dense and sum(max(w - 1, 1).bit_length() for w in index.widths) > _BITS:
            return None
        return index

    def probe(self, keys: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """Pairs (probing row position, built row position) of equal keys; ``keys`` are the
        probing side's valid keys (``k0, k1, ..., $pos``)."""
        positions = keys["$pos"].to_numpy()
        empty = np.zeros(0, np.int64)
        if keys.num_rows == 0:
            return empty, empty
        packed, inside, rest = self._packed(keys)
        if inside is not None:
            positions, packed = positions[inside], packed[inside]
            rest = [v[inside] for v in rest]
            if not len(packed):
                return empty, empty
        if self.slot is not None:
            at = self.slot[packed]
            hit = at >= 0
            probing, at = np.flatnonzero(hit), at[hit].astype(np.int64)
            return self._checked(positions, rest, probing, at)
        if self.offsets is not None:
            start = self.offsets[packed].astype(np.int64)
            count = self.offsets[packed + 1] - start
        else:
            assert self.sorted_keys is not None
            start = np.searchsorted(self.sorted_keys, packed, side="left")
            count = np.searchsorted(self.sorted_keys, packed, side="right") - start
        if self.unique:
            hit = count > 0
            probing, at = np.flatnonzero(hit), start[hit]
        else:
            total = int(count.sum())
            if total == 0:
                return empty, empty
            probing = np.repeat(np.arange(len(packed), dtype=np.int64), count)
            # Each probing row's built rows: start, start + 1, ... (count of them).
            at = np.repeat(start - (np.cumsum(count) - count), count) + \
                np.arange(total, dtype=np.int64)
        return self._checked(positions, rest, probing, at)

    def _packed(self, keys: pa.Table) -> tuple[np.ndarray, np.ndarray | None, list[np.ndarray]]:
        """Probing keys (``k0, k1, ..., $pos``) as the index reads them: the indexed columns
        packed, the mask of those inside the built ranges (None: all), the other columns."""
        cols = [_int64(keys[n]) for n in keys.column_names if n != "$pos"]
        packed, inside = _pack([cols[i] for i in self.indexed], self.lows, self.widths)
        return packed, inside, [cols[i] for i in self.rest]

    def counts(self, keys: pa.Table) -> np.ndarray:
        """Per probing row (of ``keys``, as ``probe`` takes them): how many built rows share
        its indexed key columns, an upper bound of its pairs (other key columns are
        compared after)."""
        if keys.num_rows == 0:
            return np.zeros(0, np.int64)
        packed, inside, _ = self._packed(keys)
        if self.slot is not None:
            count = (self.slot[packed] >= 0).astype(np.int64)
        elif self.offsets is not None:
            count = (self.offsets[packed + 1] - self.offsets[packed]).astype(np.int64)
        else:
            assert self.sorted_keys is not None
            count = np.searchsorted(self.sorted_keys, packed, side="right") - \
                np.searchsorted(self.sorted_keys, packed, side="left")
        return count if inside is None else np.where(inside, count, 0)

    def _checked(self, positions: np.ndarray, rest: list[np.ndarray], probing: np.ndarray,
                 at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The candidate pairs (probing index, index into ``rows``) whose other key columns
        are equal too, as (probing row position, built row position)."""
        if rest:
            same = rest[0][probing] == self.rest_values[0][at]
            for v, built in zip(rest[1:], self.rest_values[1:], strict=True):
                same &= v[probing] == built[at]
            probing, at = probing[same], at[same]
        return positions[probing], self.rows[at]

    def nbytes(self) -> int:
        size = self.rows.nbytes + sum(v.nbytes for v in self.rest_values)
        for part in (self.offsets, self.slot):
            if part is not None:
                size += part.nbytes
        if self.sorted_keys is not None:
            size += self.sorted_keys.nbytes
        return size


def _grouping_order(keys: np.ndarray) -> np.ndarray | None:
    """The stable order that groups equal keys (None: they already come sorted, as a file
    written in key order gives them)."""
    if len(keys) < 2 or bool((keys[1:] >= keys[:-1]).all()):
        return None
    return np.argsort(keys, kind="stable")


def _pack(cols: list[np.ndarray], lows: list[int], widths: list[int]
          ) -> tuple[np.ndarray, np.ndarray | None]:
    """The key columns packed into one int64 (relative to the built side's lows), and the
    mask of the rows whose keys lie within the built side's ranges (None: all)."""
    inside: np.ndarray | None = None
    packed: np.ndarray | None = None
    for v, lo, width in zip(cols, lows, widths, strict=True):
        rel = v - lo
        ok = (rel >= 0) & (rel < width)
        if not ok.all():
            inside = ok if inside is None else inside & ok
        packed = rel if packed is None else packed * width + rel
    assert packed is not None
    if inside is not None:  # (outside values may have wrapped: masked out by the caller)
        packed = np.where(inside, packed, 0)
    return packed, inside


class CodedIndex:
    """A BuildIndex over keys of any other type (strings, decimals, floats), each key column
    coded by its position among the built side's distinct values (``pc.index_in``); a
    probing key the built side lacks codes as -1, outside every range. For a join with a
    residual condition, whose candidate pairs are found a slice at a time (``counts``)."""

    def __init__(self, values: list[pa.Array], index: BuildIndex) -> None:
        self.values = values
        self.index = index

    @classmethod
    def build(cls, keys: pa.Table) -> CodedIndex | None:
        names = [c for c in keys.column_names if c != "$pos"]
        if not names or keys.num_rows == 0:
            return None
        values = [pc.unique(keys[n]) for n in names]
        index = BuildIndex.build(cls._coded(keys, names, values))
        return None if index is None else cls(values, index)

    @staticmethod
    def _coded(keys: pa.Table, names: list[str], values: list[pa.Array]) -> pa.Table:
        cols = {n: pc.fill_null(pc.index_in(keys[n], value_set=v), -1).cast(pa.int64())
                for n, v in zip(names, values, strict=True)}
        cols["$pos"] = keys["$pos"]
        return pa.table(cols)

    def _code(self, keys: pa.Table) -> pa.Table:
        return self._coded(keys, [c for c in keys.column_names if c != "$pos"], self.values)

    def probe(self, keys: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        return self.index.probe(self._code(keys))

    def counts(self, keys: pa.Table) -> np.ndarray:
        return self.index.counts(self._code(keys))

    def nbytes(self) -> int:
        return self.index.nbytes() + sum(v.nbytes for v in self.values)
