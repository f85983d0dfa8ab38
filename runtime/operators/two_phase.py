"""Two-phase aggregation (batch mode, parallelism > 1): a local pre-aggregation chained before
the shuffle turns each batch into one partial row per group, so the exchange carries partials
instead of rows; the global aggregation after the shuffle merges the partials of its keys and
finalizes them at the end of input. Both phases are Arrow group-bys (runtime/operators/
partials.py)."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from sqlengine.plan.expressions import AggCall, ColumnRef, Expr
from sqlengine.runtime.elements import data_part
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.partials import Partials


class LocalAggregateOperator(Operator):
    name = "LocalAggregate"

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...]) -> None:
        self.partials = Partials(keys, aggs)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        table = self.partials.aggregate(pa.table(self.partials.row_columns(data)))
        return table.to_batches()


class GlobalAggregateOperator(Operator):
    name = "GlobalAggregate"

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...],
                 partial_schema: pa.Schema, schema: pa.Schema) -> None:
        # The partials arrive keyed by position: k0, k1, ... then the partial columns.
        refs = tuple(ColumnRef(i, f"k{i}", partial_schema.field(i).type)
                     for i in range(len(keys)))
        self.partials = Partials(refs, aggs)
        self.schema = schema
        self.pending: list[pa.Table] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.pending.append(pa.Table.from_batches([data_part(batch)]))
        if len(self.pending) > 64:
            self.pending = [self.partials.aggregate(pa.concat_tables(self.pending))]
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if not self.pending:
            return ()
        merged = self.partials.aggregate(pa.concat_tables(self.pending))
        self.pending = []
        cols = self.partials.finalize(merged, {}, self.schema)
        return pa.Table.from_arrays(cols, schema=self.schema).to_batches(max_chunksize=65536)
