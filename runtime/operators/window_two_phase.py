"""Two-phase window aggregation (TUMBLE / HOP / CUMULATE at parallelism > 1; Flink's
LocalWindowAggregate and GlobalWindowAggregate): the local phase, chained after the window
assignment before the shuffle, turns each batch into one partial row per key and window (a
slice, for a slicing HOP); the global phase merges those into its windows (slices) and fires
them as the one-phase WindowAggregate does. The exchange carries partial rows instead of
rows (Nexmark q5's bids: ~14 rows per partial row).

Lateness is judged by the window assignment, before the shuffle, by each row's own
watermark (a slicing HOP's rows get the end of their first window still open as
window_start); it drops the rows of no open window. The partial rows keep the window bounds
as keys, and count their rows (c<len(aggs)>), so that a partial row the global phase finds
late counts as the rows it stands for."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.partials import with_row_count
from sqlengine.runtime.elements import conformed, data_part, signs
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.partials import Partials
from sqlengine.runtime.operators.window import WindowAggregateOperator


class LocalWindowAggregateOperator(Operator):
    """Each batch of windowed (sliced) rows pre-aggregated per key, the window's bounds
    among the keys."""

    name = "LocalWindowAggregate"
    state_fields = ()

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...],
                 schema: pa.Schema, signed: bool = False) -> None:
        self.partials = Partials(keys, with_row_count(aggs), signed)
        self.schema = schema  # (the partial rows': k0.., the partial columns, the row count)
        self.signed = signed  # (an updating input: retractions are negative rows)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        sign = signs(batch) if self.signed else None
        merged = self.partials.aggregate(pa.table(self.partials.row_columns(
            data, unscaled=True, sign=sign)))
        return [conformed(b, self.schema) for b in merged.to_batches()]


class GlobalWindowAggregateOperator(WindowAggregateOperator):
    """A WindowAggregate whose input is the local phase's partial rows."""

    name = "GlobalWindowAggregate"

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...], schema: pa.Schema,
                 partial_schema: pa.Schema, end_pos: int, start_pos: int, slice_size: int,
                 slice_step: int, signed: bool = False) -> None:
        super().__init__(keys, aggs, schema, end_pos, 0, False, start_pos, slice_size,
                         slice_step, counted=True, signed=signed)
        self.partial_schema = partial_schema

    def _input_table(self, batch: pa.RecordBatch) -> pa.Table:
        return pa.Table.from_batches([conformed(data_part(batch), self.partial_schema)])

    def _rows_of(self, table: pa.Table, mask: np.ndarray) -> int:
        rows = table[self.rows_column].combine_chunks().filter(pa.array(mask))
        return int(pc.sum(rows).as_py() or 0)

