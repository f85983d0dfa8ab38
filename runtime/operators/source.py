"""SourceOperator: reads a connector's batches, applies pushed-down filters and projection."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

from runtime.connectors.filesystem import ReadStats
from runtime.evaluate import evaluate
from runtime.operators.base import Operator
from sqlengine.errors import ConnectorError
from sqlengine.plan.expressions import Expr
from sqlengine.plan.nodes import SourceSpec


class SourceOperator(Operator):
    """The head of a source vertex; the executor polls ``batches()``."""

    name = "Source"

    def __init__(self, source: SourceSpec, table_schema: pa.Schema,
                 projection: tuple[int, ...] | None, filters: tuple[Expr, ...],
                 data: object | None = None) -> None:
        self.source = source
        self.table_schema = table_schema
        self.projection = projection
        self.filters = filters
        self.data = data
        self.stats = ReadStats()

    def _needed_columns(self) -> list[int] | None:
        if self.projection is None:
            return None
        cols = set(self.projection)
        for f in self.filters:
            cols |= f.columns()
        return sorted(cols)

    def _raw(self) -> Iterator[pa.RecordBatch]:
        options = dict(self.source.options)
        connector = self.source.connector
        if connector == "filesystem":
            from runtime.connectors.filesystem import read_files

            return read_files(self.source.table, options, self.table_schema, self.stats,
                              self._needed_columns())
        if connector == "datagen":
            from runtime.connectors.datagen import DatagenReader

            return DatagenReader(self.source.table, options, self.table_schema).batches()
        if connector == "memory":
            from runtime.connectors.memory import memory_batches

            return memory_batches(self.source.table, self.data, self.table_schema)
        msg = f"table {self.source.table!r}: connector {connector!r} cannot be read"
        raise ConnectorError(msg)

    def batches(self) -> Iterator[pa.RecordBatch]:
        for batch in self._raw():
            yield from self.process_batch(batch)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        for f in self.filters:
            if batch.num_rows == 0:
                break
            batch = batch.filter(pc.fill_null(evaluate(f, batch), False))
        if batch.num_rows == 0:
            return ()
        if self.projection is not None:
            batch = batch.select(list(self.projection))
        return (batch,)
