"""WindowJoinOperator: a join of two windowed inputs on the same window (window_start and
window_end among the equi-join keys). Rows wait until the watermark closes their window; then
that window's rows from both sides are joined at once and the result is insert-only, also for
a LEFT JOIN. A row for a window that already closed is late: dropped and counted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
from sqlengine.runtime.elements import MIN_WATERMARK, Watermark, data_part, millis, with_meta
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.join import JoinOperator

from sqlengine.plan.expressions import Expr


class WindowJoinOperator(Operator):
    name = "WindowJoin"

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, end_indexes: tuple[int, int]) -> None:
        self.args = (kind, left_keys, right_keys, condition, left_schema, right_schema, schema)
        self.schemas = (left_schema, right_schema)
        self.end_indexes = end_indexes
        self.rows: list[list[pa.RecordBatch]] = [[], []]
        self.watermark = MIN_WATERMARK
        self.late_dropped = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        ends = millis(data.column(self.end_indexes[input_index]))
        on_time = ends - 1 > self.watermark
        self.late_dropped += int((~on_time).sum())
        if on_time.any():
            self.rows[input_index].append(data.filter(pa.array(on_time)))
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before = self.watermark
        self.watermark = wm.timestamp
        fired: list[pa.Table] = []
        for side in (0, 1):
            table = pa.Table.from_batches(self.rows[side], self.schemas[side])
            ends = millis(table.column(self.end_indexes[side]))
            fire = ends - 1 <= wm.timestamp
            fired.append(table.filter(pa.array(fire)))
            rest = table.filter(pa.array(~fire))
            self.rows[side] = rest.to_batches() if rest.num_rows else []
        if fired[0].num_rows == 0:
            return ()  # inner and left joins emit nothing without left rows
        join = JoinOperator(*self.args, emit="final")  # type: ignore[misc]
        for side in (0, 1):
            for b in fired[side].to_batches():
                join.process_batch(b, side)
        out = [*join.end_input(0), *join.end_input(1)]
        return [with_meta(b, np.full(b.num_rows, before, dtype=np.int64)) for b in out
                if b.num_rows]

    def snapshot_state(self) -> Mapping[str, object]:
        return {"buffered_rows": sum(b.num_rows for side in self.rows for b in side),
                "late_records_dropped": self.late_dropped}


