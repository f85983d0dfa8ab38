"""In-memory tables registered through the API: Arrow tables, pandas frames, batch iterators."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from sqlengine.errors import ConnectorError

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
                   split: tuple[int, int] = (0, 1)) -> Iterator[pa.RecordBatch]:
    """A registered table's batches (batch i goes to subtask i mod parallelism); an iterator
    is read by the first subtask only (it can be read once)."""
    if not isinstance(data, MemoryData):
        msg = f"table {name!r} has no registered data"
        raise ConnectorError(msg)
    index, parallelism = split
    if data.table is not None:
        batches = [b for b in data.table.cast(schema).to_batches(max_chunksize=BATCH_ROWS)
                   if b.num_rows]
        yield from batches[index::parallelism]
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
            yield from (x for x in b.cast(schema).to_batches() if x.num_rows)
        else:
            yield pa.Table.from_batches([b]).cast(schema).to_batches()[0]
