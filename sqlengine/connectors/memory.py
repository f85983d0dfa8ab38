"""In-memory tables registered through the API: Arrow tables, pandas frames, batch iterators."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pyarrow as pa

from sqlengine.connectors.base import Connector, SourceCursor, SourceRead, strided_done
from sqlengine.errors import ConnectorError
from sqlengine.statistics import Estimate, table_stats

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema, SourceSpec

BATCH_ROWS = 65536


class MemoryData:
    """Registered data: a table (re-readable) or a one-shot iterator of batches."""

    def __init__(self, table: pa.Table | None = None,
                 iterator: Iterator[pa.RecordBatch] | None = None,
                 schema: pa.Schema | None = None) -> None:
        self.table = table
        self.iterator = iterator
        self.schema = table.schema if table is not None else schema
        self.bounded = table is not None
        self.consumed = False
        self.explicit_watermarks = False  # the iterator interleaves Watermark elements


def memory_batches(name: str, data: object, schema: pa.Schema,
                   split: tuple[int, int] = (0, 1),
                   cursor: SourceCursor | None = None) -> Iterator[object]:
    """A registered table's batches (batch i goes to subtask i mod parallelism); an iterator
    is read by the first subtask only (it can be read once)."""
    if not isinstance(data, MemoryData):
        msg = f"table {name!r} has no registered data"
        raise ConnectorError(msg)
    index, parallelism = split
    if data.table is not None:
        batches = [b for b in _as_schema(data.table, schema).to_batches(
            max_chunksize=BATCH_ROWS) if b.num_rows]
        if cursor is None:
            yield from batches[index::parallelism]
            return
        key = f"memory:{index}/{parallelism}"  # (its value: the next batch this subtask reads)
        for b in range(index, len(batches), parallelism):
            if strided_done(cursor.start, "memory", b):
                continue
            cursor.position = {k: v for k, v in cursor.position.items()
                               if not k.startswith("memory:")} | {key: b + parallelism}
            yield batches[b]
        return
    if index > 0:
        return
    if data.consumed:
        msg = f"table {name!r} was registered from an iterator, which can be read only once"
        raise ConnectorError(msg)
    data.consumed = True
    for b in data.iterator or ():
        if b is None or not isinstance(b, pa.RecordBatch | pa.Table):
            yield b  # a Watermark, a WatermarkStatus, or None (no data right now)
            continue
        if isinstance(b, pa.Table):
            yield from (x for x in _as_schema(b, schema).to_batches() if x.num_rows)
        else:
            yield _as_schema(pa.Table.from_batches([b]), schema).to_batches()[0]


def _as_schema(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """``table`` as the registered schema's types: a rowtime registered from microseconds or
    nanoseconds (a pandas DataFrame's) is a TIMESTAMP(3), its values cut to milliseconds, as
    Flink's casts cut them (Arrow's safe cast failed on them: "would lose data")."""
    try:
        return table.cast(schema)
    except pa.ArrowInvalid:
        cols = [c.cast(f.type, safe=not (pa.types.is_timestamp(c.type) and
                                         pa.types.is_timestamp(f.type)))
                for c, f in zip(table.columns, schema)]
        return pa.Table.from_arrays(cols, schema=schema)


class Memory(Connector):
    """Data registered through the API (not named in CREATE TABLE)."""

    holds_nested = True

    name = "memory"
    is_source = True
    listed = False

    def bounded(self, table: TableDef) -> bool:
        return bool(getattr(table.data, "bounded", True))

    def statistics(self, source: SourceSpec, schema: Schema, data: object | None,
                   read: frozenset[str] | None = None) -> Estimate | None:
        """Measured on a registered table (an iterator is not known ahead)."""
        table = getattr(data, "table", None)
        return table_stats(table, read) if isinstance(table, pa.Table) else None

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        if isinstance(read.data, MemoryData) and read.data.table is None:
            return ("it was registered from an iterator, whose rows cannot be read again "
                    "after a restore (register a table)")
        return None

    def open_source(self, read: SourceRead) -> Iterator[object]:
        return memory_batches(read.table, read.data, read.schema, read.split, read.cursor)


CONNECTOR = Memory()
