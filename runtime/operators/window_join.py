"""WindowJoinOperator: a join of two windowed inputs on the same window (window_start and
window_end among the equi-join keys). Rows wait until the watermark closes their window; then
that window's rows from both sides are joined at once and the result is insert-only, also for
a LEFT JOIN. A row for a window that already closed is late: dropped and counted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa

from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import (
    Watermark,
    data_part,
    millis,
    row_watermarks,
    with_meta,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import NotRescalable, Operator
from sqlengine.runtime.operators.join import JoinOperator
from sqlengine.runtime.state.key_groups import owned
from sqlengine.runtime.timers import TimerService
from sqlengine.runtime.windows import fire_times


class WindowJoinOperator(Operator):
    name = "WindowJoin"
    state_fields = ("late_dropped", "timers")
    zone: str = ""  # windows of this zone's wall clock (set by the factory)

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, end_indexes: tuple[int, int]) -> None:
        self.args = (kind, left_keys, right_keys, condition, left_schema, right_schema, schema)
        self.schemas = (left_schema, right_schema)
        self.end_indexes = end_indexes
        # Each side's rows wait for their window to fire.
        self.timers = TimerService(sides=2)
        self.late_dropped = 0

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the waiting rows
        of each side whose join key it now owns (each side is hashed on its join keys)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        keys = (self.args[1], self.args[2])
        if not keys[0]:
            raise NotRescalable(self.name)
        self.timers = TimerService(sides=2)
        for side in (0, 1):
            def mine(rows: pa.RecordBatch, exprs: tuple[Expr, ...] = keys[side]) -> np.ndarray:
                return owned([evaluate(e, rows) for e in exprs], subtask, parallelism)

            for s in states:
                self.timers.event_time[side].absorb(
                    s["timers"].event_time[side], mine)  # type: ignore[attr-defined]
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        fire_at = fire_times(millis(data.column(self.end_indexes[input_index])), self.zone)
        late = self.timers.is_late(fire_at)
        row_wm = row_watermarks(batch)  # (the watermark before each row: min of both inputs')
        if row_wm is not None:
            late |= fire_at <= row_wm
        self.late_dropped += int(late.sum())
        if not late.all():
            on_time = ~late
            self.timers.register_event_time(data.filter(pa.array(on_time)), fire_at[on_time],
                                            input_index)
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before = self.timers.move_watermark(wm.timestamp)
        fired: list[pa.Table] = []
        for side in (0, 1):
            due = self.timers.due(side)
            fired.append(due if due is not None else self.schemas[side].empty_table())
        if fired[0].num_rows == 0 and self.args[0] not in ("right", "full"):
            return ()  # (only right and full joins emit rows without left rows)
        join = JoinOperator(*self.args, emit="final")
        for side in (0, 1):
            for b in fired[side].to_batches():
                join.process_batch(b, side)
        out = [*join.end_input(0), *join.end_input(1)]
        return [with_meta(b, np.full(b.num_rows, before, dtype=np.int64)) for b in out
                if b.num_rows]

    def state_summary(self) -> Mapping[str, object]:
        return {"buffered_rows": sum(t.num_rows for t in self.timers.event_time),
                "late_records_dropped": self.late_dropped}


