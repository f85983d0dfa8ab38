"""Deduplication keeping the first row (Flink's RowTimeDeduplicateKeepFirstRowFunction and
ProcTimeDeduplicateKeepFirstRowFunction): ROW_NUMBER() OVER (PARTITION BY k ORDER BY time ASC)
= 1 in streaming mode, with insert-only output.

By event time, each key's row with the smallest time waits (of equal times the first to
arrive) until the watermark reaches its time, is emitted once, and the key ignores every row
after that; a row whose time is below the watermark in effect before it is late and dropped.
By processing time, each key's first row is emitted as it arrives. (Keeping the last row is
the changelog TopNOperator in rank.py.) Keeping the first row by event time does not depend on
how rows are batched: a row that could still replace a waiting one cannot be late, and a
waiting row whose time the watermark has passed can no longer be replaced.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import Watermark, data_part, millis, row_watermarks, with_meta
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.rank import (
    PID,
    SEQ,
    partition_ids,
    remap_rows,
    rescale_partitions,
)
from sqlengine.runtime.timers import TimerService

TS = "$ts"


class FirstRowOperator(Operator):
    """Keeps each partition's first row: by event time (``time_index`` the rowtime column)
    when the watermark passes it, or by arrival (``time_index`` None, processing time)."""

    name = "Deduplicate"
    state_fields = ("emitted", "ids", "late_dropped", "seq", "timers", "waiting")

    def __init__(self, partition: tuple[Expr, ...], schema: pa.Schema,
                 time_index: int | None) -> None:
        self.partition = partition
        self.schema = schema  # input columns + the row number (always 1)
        self.time_index = time_index
        self.ids: dict[tuple, int] = {}
        self.emitted = np.zeros(0, dtype=bool)  # per partition id: its row was emitted
        self.waiting: pa.Table | None = None  # one row per partition: data + $pid $ts $seq
        self.timers = TimerService()
        self.seq = 0
        self.late_dropped = 0

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes the partitions it now owns from every
        old subtask: whether their row was emitted, and the row waiting for its time."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        self.ids, maps = rescale_partitions(self.partition, [s["ids"] for s in states],  # type: ignore[misc]
                                            subtask, parallelism)
        self.emitted = np.zeros(len(self.ids), dtype=bool)
        waiting = []
        for s, m in zip(states, maps):
            old: np.ndarray = s["emitted"]  # type: ignore[assignment]
            n = min(len(old), len(m))
            moved = m[:n] >= 0
            self.emitted[m[:n][moved]] = old[:n][moved]
            if (t := remap_rows(s["waiting"], m)) is not None:  # type: ignore[arg-type]
                waiting.append(t)
        self.waiting = pa.concat_tables(waiting) if waiting else None
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.seq = max(int(s["seq"]) for s in states)  # type: ignore[call-overload]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]

    def _done(self, pids: np.ndarray) -> np.ndarray:
        if len(pids) and int(pids.max()) >= len(self.emitted):
            grown = np.zeros(max(int(pids.max()) + 1, 2 * len(self.emitted)), dtype=bool)
            grown[: len(self.emitted)] = self.emitted
            self.emitted = grown
        return self.emitted[pids]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        if self.time_index is None:
            return self._first_arrivals(batch, data)
        ts = millis(data.column(self.time_index))
        row_wm = row_watermarks(batch)
        if row_wm is None:
            row_wm = np.full(len(ts), self.watermark, dtype=np.int64)
        on_time = ts >= row_wm  # Flink: late when rowtime < the current watermark
        self.late_dropped += int((~on_time).sum())
        pids = partition_ids(self.partition, data, self.ids)
        keep = on_time & ~self._done(pids)
        if not keep.any():
            return ()
        idx = np.flatnonzero(keep)
        seqs = np.arange(self.seq, self.seq + data.num_rows, dtype=np.int64)
        self.seq += data.num_rows
        new = pa.Table.from_batches([data.take(pa.array(idx))]).append_column(
            PID, pa.array(pids[idx])).append_column(TS, pa.array(ts[idx])).append_column(
            SEQ, pa.array(seqs[idx]))
        candidates = new if self.waiting is None else pa.concat_tables([self.waiting, new])
        # Per partition the smallest time, of equal times the first to arrive.
        order = pc.sort_indices(candidates.select([PID, TS, SEQ]), sort_keys=[
            (PID, "ascending"), (TS, "ascending"), (SEQ, "ascending")]).to_numpy()
        sorted_pids = candidates[PID].to_numpy()[order]
        first = np.r_[True, sorted_pids[1:] != sorted_pids[:-1]]
        self.waiting = candidates.take(pa.array(order[first]))
        return ()

    def _first_arrivals(self, batch: pa.RecordBatch, data: pa.RecordBatch
                        ) -> list[pa.RecordBatch]:
        pids = partition_ids(self.partition, data, self.ids)
        fresh = np.flatnonzero(~self._done(pids))
        if len(fresh) == 0:
            return []
        _, first = np.unique(pids[fresh], return_index=True)
        rows = np.sort(fresh[first])  # each new partition's first row, in arrival order
        self.emitted[pids[rows]] = True
        out = self._output(pa.Table.from_batches([data.take(pa.array(rows))]))
        wm = row_watermarks(batch)
        return [with_meta(out, wm[rows] if wm is not None else None)]

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before = self.timers.move_watermark(max(wm.timestamp, self.watermark))
        if self.time_index is None or self.waiting is None:
            return ()
        due = pc.less_equal(self.waiting[TS], wm.timestamp)
        fired = self.waiting.filter(due)
        if fired.num_rows == 0:
            return ()
        self.waiting = self.waiting.filter(pc.invert(due))
        self.emitted[fired[PID].to_numpy()] = True
        fired = fired.sort_by([(TS, "ascending"), (SEQ, "ascending")])  # timer order
        out = self._output(fired)
        return [with_meta(out, np.full(out.num_rows, before, dtype=np.int64))]

    def _output(self, table: pa.Table) -> pa.RecordBatch:
        width = len(self.schema) - 1
        cols = [table.column(i).combine_chunks() for i in range(width)]
        cols.append(pa.array(np.ones(table.num_rows, dtype=np.int64)))
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def state_summary(self) -> Mapping[str, object]:
        return {"waiting_rows": 0 if self.waiting is None else self.waiting.num_rows,
                "late_records_dropped": self.late_dropped}
