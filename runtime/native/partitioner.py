"""Stream partitioners: which downstream subtask(s) each row of a batch goes to.

Hash partitioning follows Flink's key groups: a key's hash picks one of ``MAX_PARALLELISM``
key groups, and the key group picks the subtask (``group * parallelism // MAX_PARALLELISM``),
so a key always lands on the same subtask for a given parallelism. The hash is vectorised over
Arrow buffers with numpy (pyarrow has no row-hash kernel): equal SQL values hash equally
whatever their physical type (INT and BIGINT, TIMESTAMP units, DECIMAL scales), which a join
needs when its two sides' key types differ.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.errors import ExecutionError
from sqlengine.optimizer.physical import Partitioning
from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import data_part
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.key_bytes import key_bytes

MAX_PARALLELISM = 128  # Flink's default number of key groups
_NULL_HASH = np.uint64(0x9E3779B97F4A7C15)
_BYTE_BASE = np.uint64(0x100000001B3)


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: spreads every input bit over the whole word."""
    with np.errstate(over="ignore"):
        h = h ^ (h >> np.uint64(30))
        h = h * np.uint64(0xBF58476D1CE4E5B9)
        h = h ^ (h >> np.uint64(27))
        h = h * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def _bytes_hash(arr: pa.Array) -> np.ndarray:
    """A polynomial hash of each string / binary value (with its length)."""
    arr = arr.cast(pa.large_binary())
    n = len(arr)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset:arr.offset + n + 1]
    data = arr.buffers()[2]
    start, end = int(offsets[0]), int(offsets[-1])
    lengths = np.diff(offsets)
    if end == start:
        return lengths.astype(np.uint64)
    values = np.frombuffer(data, dtype=np.uint8)[start:end].astype(np.uint64)
    begins = offsets[:-1] - start
    position = np.arange(end - start, dtype=np.int64) - np.repeat(begins, lengths)
    longest = int(lengths.max())
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(longest, _BYTE_BASE, dtype=np.uint64))
        weighted = values * powers[position]
    # reduceat needs in-range starts; empty values (length 0) take 0 below.
    sums = np.add.reduceat(np.append(weighted, np.uint64(0)), np.minimum(begins, end - start))
    sums[lengths == 0] = 0
    with np.errstate(over="ignore"):
        return sums + lengths.astype(np.uint64)


def _value_hash(arr: pa.Array) -> np.ndarray:
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if isinstance(t, pa.ExtensionType):  # (a BITMAP: its canonical bytes)
        arr = arr.storage
        t = arr.type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
            pa.types.is_large_binary(t):
        return _bytes_hash(arr)
    if pa.types.is_timestamp(t):
        arr = arr.cast(pa.timestamp("ms"), safe=False)
        t = arr.type
    if pa.types.is_time(t):
        arr = arr.cast(pa.time32("ms"), safe=False)
        t = arr.type
    if pa.types.is_decimal(t) or pa.types.is_floating(t):
        # Whole numbers hash as the integer they equal (so 5.0, DECIMAL 5 and BIGINT 5 meet
        # on one subtask, as a join of a DOUBLE and a BIGINT key needs); others by their bits.
        values = pc.fill_null(arr.cast(pa.float64(), safe=False), 0.0).to_numpy(
            zero_copy_only=False) + 0.0  # -0.0 == 0.0
        whole = (np.floor(values) == values) & (np.abs(values) < 2.0**63)
        ints = np.where(whole, values, 0.0).astype(np.int64).view(np.uint64)
        return np.where(whole, ints, values.view(np.uint64))
    if pa.types.is_integer(t) or pa.types.is_boolean(t) or pa.types.is_temporal(t):
        ints = arr.cast(pa.int64()) if not pa.types.is_temporal(t) else \
            arr.view(pa.int32() if t.bit_width == 32 else pa.int64()).cast(pa.int64())
        return pc.fill_null(ints, 0).to_numpy(zero_copy_only=False).view(np.uint64)
    if pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or \
            pa.types.is_fixed_size_list(t) or pa.types.is_map(t):
        return _nested_hash(arr)
    return _bytes_hash(arr.cast(pa.string()))


def _nested_hash(arr: pa.Array) -> np.ndarray:
    """A hash of each ROW / ARRAY / MAP value's key bytes (runtime/key_bytes.py, which GROUP BY
    groups them by): equal values hash equal in any batch and process."""
    if not T.groupable(arr.type):
        raise ExecutionError(f"values of type {T.type_name(arr.type)} cannot be hashed to a "
                             "subtask")
    return _bytes_hash(key_bytes([arr], [None], pa.binary()).fill_null(b""))


def hash_rows(columns: list[pa.Array]) -> np.ndarray:
    """One 64-bit hash per row over the given key columns (NULL hashes as a constant)."""
    n = len(columns[0]) if columns else 0
    h = np.zeros(n, dtype=np.uint64)
    for col in columns:
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        v = _value_hash(col)
        if col.null_count:
            v = np.where(col.is_null().to_numpy(zero_copy_only=False), _NULL_HASH, v)
        with np.errstate(over="ignore"):
            h = h * np.uint64(31) + v
    return _mix(h)


def key_groups(columns: list[pa.Array]) -> np.ndarray:
    return (hash_rows(columns) % np.uint64(MAX_PARALLELISM)).astype(np.int64)


def split(batch: pa.RecordBatch, targets: np.ndarray, n: int) -> list[pa.RecordBatch | None]:
    """The rows of ``batch`` for each of ``n`` targets (None where a target gets none)."""
    counts = np.bincount(targets, minlength=n)
    if counts.max() == batch.num_rows:  # all rows go to one target
        return [batch if c else None for c in counts]
    order = np.argsort(targets, kind="stable")
    taken = batch.take(pa.array(order))
    out: list[pa.RecordBatch | None] = []
    start = 0
    for c in counts:
        out.append(taken.slice(start, int(c)) if c else None)
        start += int(c)
    return out


class Partitioner:
    """Routes a producer subtask's batches to ``n`` consumer channels."""

    def __init__(self, n: int) -> None:
        self.n = n

    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        raise NotImplementedError


class ForwardPartitioner(Partitioner):
    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        return [(0, batch)]


class GlobalPartitioner(Partitioner):
    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        return [(0, batch)]


class BroadcastPartitioner(Partitioner):
    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        return [(i, batch) for i in range(self.n)]


class RebalancePartitioner(Partitioner):
    """Round-robin, batch by batch (the vectorised form of Flink's per-record rebalance);
    each producer subtask starts at its own channel so that they do not all begin at 0."""

    def __init__(self, n: int, start: int = 0) -> None:
        super().__init__(n)
        self._next = itertools.cycle(list(range(start % n, n)) + list(range(start % n)))

    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        return [(next(self._next), batch)]


class HashPartitioner(Partitioner):
    def __init__(self, n: int, keys: tuple[Expr, ...]) -> None:
        super().__init__(n)
        self.keys = keys

    def targets(self, batch: pa.RecordBatch) -> np.ndarray:
        data = data_part(batch)
        groups = key_groups([evaluate(k, data) for k in self.keys])
        return groups * self.n // MAX_PARALLELISM

    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        if self.n == 1:
            return [(0, batch)]
        parts = split(batch, self.targets(batch), self.n)
        return [(i, b) for i, b in enumerate(parts) if b is not None]


class RangePartitioner(Partitioner):
    """Rows to subtasks by key ranges: ``boundaries`` holds n - 1 key rows in order (from a
    sample, as Flink's RangePartitionRewriter); a row goes to the number of boundaries that
    sort before or equal to it (NULLs sort last). Vectorised: the boundaries and the batch's
    keys are sorted together and each row counts the boundaries ahead of it."""

    def __init__(self, n: int, keys: tuple[Expr, ...], boundaries: pa.Table,
                 descending: tuple[bool, ...] | None = None) -> None:
        super().__init__(n)
        if boundaries.num_rows != n - 1:
            msg = f"a range partitioning into {n} needs {n - 1} boundaries"
            raise ValueError(msg)
        self.keys = keys
        self.boundaries = boundaries
        self.descending = descending or tuple(False for _ in keys)

    def targets(self, batch: pa.RecordBatch) -> np.ndarray:
        data = data_part(batch)
        names = [f"k{i}" for i in range(len(self.keys))]
        cols = [evaluate(k, data) for k in self.keys]
        rows = pa.table([*cols, pa.array(np.ones(len(data), dtype=np.int8))],
                        names=[*names, "$row"])
        bounds = pa.table([*(self.boundaries.column(i).cast(c.type)
                             for i, c in enumerate(cols)),
                           pa.array(np.zeros(self.boundaries.num_rows, dtype=np.int8))],
                          names=[*names, "$row"])
        both = pa.concat_tables([bounds, rows])
        order = pa.compute.sort_indices(both, sort_keys=[
            *((n, "descending" if d else "ascending") for n, d in zip(names,
                                                                      self.descending)),
            ("$row", "ascending")]).to_numpy()
        is_row = both.column("$row").to_numpy()[order].astype(bool)
        ahead = np.cumsum(~is_row)  # boundaries sorted at or before each position
        out = np.empty(len(data), dtype=np.int64)
        out[order[is_row] - bounds.num_rows] = ahead[is_row]
        return out

    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        parts = split(batch, self.targets(batch), self.n)
        return [(i, b) for i, b in enumerate(parts) if b is not None]


class PrecomputedPartitioner(Partitioner):
    """RANGE after a range assignment: each row carries the number of its range."""

    def __init__(self, n: int, column: Expr) -> None:
        super().__init__(n)
        self.column = column

    def route(self, batch: pa.RecordBatch) -> list[tuple[int, pa.RecordBatch]]:
        targets = evaluate(self.column, data_part(batch)).to_numpy(
            zero_copy_only=False).astype(np.int64)
        parts = split(batch, np.minimum(targets, self.n - 1), self.n)
        return [(i, b) for i, b in enumerate(parts) if b is not None]


def partitioner(kind: Partitioning, keys: tuple[Expr, ...], n: int,
                subtask: int = 0) -> Partitioner:
    if kind is Partitioning.FORWARD:
        return ForwardPartitioner(n)
    if kind is Partitioning.HASH:
        return HashPartitioner(n, keys)
    if kind is Partitioning.BROADCAST:
        return BroadcastPartitioner(n)
    if kind is Partitioning.REBALANCE:
        return RebalancePartitioner(n, subtask)
    if kind is Partitioning.SINGLE:
        return GlobalPartitioner(n)
    if kind is Partitioning.RANGE and len(keys) == 1:
        return PrecomputedPartitioner(n, keys[0])
    msg = f"no partitioner for {kind.value} yet"
    raise NotImplementedError(msg)
