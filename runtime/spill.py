"""Spill files: rows an operator moves to disk when its slot is past the memory budget
(runtime/memory.py), as Arrow IPC streams (LZ4-compressed) under 'io.tmp.dirs'.

``write_table`` / ``read_batches`` keep an external sort's sorted runs; ``PartitionedSpill``
splits rows by a hash of their keys into partitions that are read back one at a time (grace
hash join, hybrid hash aggregation). Each spill level hashes other bits of the
key's hash, so a partition that is still too large splits again on the next level; the bits
below 16 pick a subtask (runtime/native/partitioner.py) and are never used here.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from sqlengine.errors import ExecutionError
from sqlengine.runtime.native.partitioner import hash_rows, split

if TYPE_CHECKING:
    from sqlengine.runtime.operators.base import Operator

PARTITIONS = 16
READ_ROWS = 65536  # a partition is read back in batches of about this many rows
MAX_LEVEL = 6  # 16 + 4 * 6 + 4 <= 64 hash bits


def _options() -> pa.ipc.IpcWriteOptions:
    codec = "lz4" if pa.Codec.is_available("lz4") else None
    return pa.ipc.IpcWriteOptions(compression=codec)


class SpillDirectory:
    """A private directory for one operator's spill files, removed by ``close``."""

    def __init__(self, parent: str | None, what: str) -> None:
        try:
            self.path = tempfile.mkdtemp(prefix=f"sqlengine-spill-{what}-", dir=parent)
        except OSError as e:
            where = parent or tempfile.gettempdir()
            msg = (f"cannot create a spill directory in {where!r} ('io.tmp.dirs'): "
                   f"{e.strerror or e}")
            raise ExecutionError(msg) from e
        self.count = 0

    def new_file(self) -> str:
        self.count += 1
        return os.path.join(self.path, f"{self.count}.arrow")

    def close(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


class SpillsToDisk:
    """What an operator that spills holds: its ``directory`` (None until it spills) and its
    ``level`` (0 at the top; a partition's sub-operator works one level down, in its parent's
    directory); ``close`` removes the directory, at the top level only."""

    directory: SpillDirectory | None = None
    level = 0

    def close(self) -> None:
        if self.directory is not None and self.level == 0:
            self.directory.close()
        self.directory = None

    def snapshot_state(self) -> dict[str, object]:
        """State on disk is not in a checkpoint (spilling is batch mode's): refused."""
        from sqlengine.runtime.operators.base import NotCheckpointable

        if self.directory is not None:
            raise NotCheckpointable(getattr(self, "name", type(self).__name__))
        return super().snapshot_state()  # type: ignore[misc]


def write_table(path: str, table: pa.Table, chunk_rows: int = 65536) -> None:
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema,
                                                          options=_options()) as writer:
        for batch in table.to_batches(max_chunksize=chunk_rows):
            writer.write_batch(batch)


def read_batches(path: str, remove: bool = True) -> Iterator[pa.RecordBatch]:
    """The batches of a spill file, one at a time; the file is removed once read."""
    with pa.OSFile(path, "rb") as source:
        reader = pa.ipc.open_stream(source)
        yield from reader
    if remove:
        os.unlink(path)


class PartitionedSpill:
    """Rows of one schema, split into PARTITIONS files by the hash of key columns."""

    def __init__(self, directory: SpillDirectory, schema: pa.Schema, level: int) -> None:
        if level > MAX_LEVEL:
            raise ExecutionError("spilled partitions are still past the memory budget after "
                                 f"{MAX_LEVEL} rounds of splitting (a single key holds too "
                                 "many rows): raise 'taskmanager.memory.managed.size'")
        self.directory = directory
        self.schema = schema
        self.shift = np.uint64(16 + 4 * level)
        self.paths = [directory.new_file() for _ in range(PARTITIONS)]
        self.rows = [0] * PARTITIONS
        self.bytes = [0] * PARTITIONS
        self._sinks: list[pa.NativeFile | None] = [None] * PARTITIONS
        self._writers: list[pa.ipc.RecordBatchStreamWriter | None] = [None] * PARTITIONS

    def partition_of(self, keys: list[pa.Array]) -> np.ndarray:
        mask = np.uint64(PARTITIONS - 1)
        return ((hash_rows(keys) >> self.shift) & mask).astype(np.int64)

    def write(self, batch: pa.RecordBatch, keys: list[pa.Array]) -> None:
        if batch.num_rows == 0:
            return
        parts = split(batch, self.partition_of(keys), PARTITIONS)
        for p, part in enumerate(parts):
            if part is None or part.num_rows == 0:
                continue
            writer = self._writers[p]
            if writer is None:
                sink = pa.OSFile(self.paths[p], "wb")
                self._sinks[p] = sink
                writer = pa.ipc.new_stream(sink, self.schema, options=_options())
                self._writers[p] = writer
            writer.write_batch(part)
            self.rows[p] += part.num_rows
            self.bytes[p] += part.nbytes

    def finish(self) -> None:
        for p in range(PARTITIONS):
            writer, sink = self._writers[p], self._sinks[p]
            if writer is not None:
                writer.close()
            if sink is not None:
                sink.close()
            self._writers[p] = self._sinks[p] = None

    def partition(self, p: int) -> Iterator[pa.RecordBatch]:
        """Partition ``p``'s rows in batches of about READ_ROWS rows (the file is removed
        once read)."""
        if self.rows[p] == 0:
            return iter(())
        return coalesced(read_batches(self.paths[p]), self.schema)


def coalesced(batches: Iterator[pa.RecordBatch], schema: pa.Schema,
              rows: int = READ_ROWS) -> Iterator[pa.RecordBatch]:
    """Small batches joined into batches of at least ``rows`` rows (the last may be less)."""
    waiting: list[pa.RecordBatch] = []
    count = 0
    for batch in batches:
        waiting.append(batch)
        count += batch.num_rows
        if count >= rows:
            yield pa.Table.from_batches(waiting, schema).combine_chunks().to_batches()[0]
            waiting, count = [], 0
    if count:
        yield pa.Table.from_batches(waiting, schema).combine_chunks().to_batches()[0]


def budget_of(op: Operator) -> int:
    """The slot's budget an operator's own sub-operators are held to (0: none)."""
    memory = getattr(getattr(op, "ctx", None), "memory", None)
    return memory.limit if memory is not None else 0


def aggregate_partitions(op: Operator, spilled: PartitionedSpill, directory: str | None,
                         make: Callable[[], Operator]) -> Iterator[pa.RecordBatch]:
    """Each spilled partition of an aggregation ``op`` aggregated by an operator of its own
    (``make()``, one level down), which spills again if it grows past the budget."""
    limit = budget_of(op)
    for p in range(PARTITIONS):
        if not spilled.rows[p]:
            continue
        sub = make()
        sub.level = op.level + 1  # type: ignore[attr-defined]
        if hasattr(op, "ctx"):
            sub.open(op.ctx)
        for batch in spilled.partition(p):
            sub.process_batch(batch)
            if limit and sub.state_bytes() > limit:
                sub.spill(directory)  # (a no-op once it spills)
        yield from sub.end_input()
        op.spilled_bytes += sub.spilled_bytes
