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

With 'table.exec.state.ttl' a key whose row was emitted longer than the TTL after its state
was written (its first row's arrival) is forgotten (partition_ttl.py): its next row is
emitted again, as Flink's expired deduplication state lets it through.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import Watermark, data_part, millis, row_watermarks, with_meta
from sqlengine.runtime.operators.base import Clock, Operator
from sqlengine.runtime.operators.partition_ttl import (
    KeepsPartitionTtl,
    PartitionTtl,
    compact,
    fit,
    worth_compacting,
)
from sqlengine.runtime.operators.rank import (
    PID,
    SEQ,
    partition_ids,
    remap_rows,
    rescale_partitions,
)
from sqlengine.runtime.timers import TimerService

TS = "$ts"


class FirstRowOperator(KeepsPartitionTtl, Operator):
    """Keeps each partition's first row: by event time (``time_index`` the rowtime column)
    when the watermark passes it, or by arrival (``time_index`` None, processing time)."""

    name = "Deduplicate"
    state_fields = ("emitted", "ids", "late_dropped", "seq", "timers", "waiting")

    def __init__(self, partition: tuple[Expr, ...], schema: pa.Schema,
                 time_index: int | None, ttl_ms: int = 0, clock: Clock = time) -> None:
        self.ttl = PartitionTtl(ttl_ms / 1000.0, clock) if ttl_ms else None
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
            if self.ttl is not None and s.get("ttl") is not None:
                self.ttl.remapped(m, s["ttl"], len(self.ids))  # type: ignore[arg-type]
            if (t := remap_rows(s["waiting"], m)) is not None:  # type: ignore[arg-type]
                waiting.append(t)
        self.waiting = pa.concat_tables(waiting) if waiting else None
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.seq = max(int(s["seq"]) for s in states)  # type: ignore[call-overload]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]

    def _expire(self) -> None:
        """Forget the keys whose row was emitted and whose state is older than the TTL (a
        row still waiting for the watermark stays: its timer is not state that expires)."""
        assert self.ttl is not None
        old = self.ttl.expired(self.emitted)
        if not len(old):
            return
        self.emitted[old] = False
        n = len(self.ids)
        live = fit(self.emitted, n, False)
        if self.waiting is not None and self.waiting.num_rows:
            live[self.waiting[PID].to_numpy()] = True
        if worth_compacting(self.ids, int(live.sum())):
            self.ids, mapping = compact(self.ids, live)
            self.emitted = fit(self.emitted, n, False)[live]
            self.ttl.written = fit(self.ttl.written, n, -np.inf)[live]
            if self.waiting is not None:
                self.waiting = self.waiting.set_column(
                    self.waiting.schema.get_field_index(PID), PID,
                    pa.array(mapping[self.waiting[PID].to_numpy()]))

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
        if self.ttl is not None:
            self._expire()
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
        if self.ttl is not None:  # (a key's state is written when its waiting row changes)
            fresh = pc.greater_equal(self.waiting[SEQ], int(seqs[0]))
            self.ttl.touch(self.waiting.filter(fresh)[PID].to_numpy())
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
        if self.ttl is not None:
            self.ttl.touch(pids[rows])
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
