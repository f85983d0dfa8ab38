"""SessionAssignOperator: the SESSION window TVF on its own (``SELECT * FROM SESSION(...)``).

Each row gets the window of its merged session (rows whose [t, t + gap) windows touch or
overlap share one, per PARTITION BY key), so a row waits until the watermark closes its
session (last row + gap - 1 at or below the watermark), as Flink's session assignment does;
at the end of the input every waiting row goes out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa

from sqlengine.runtime.elements import (
    ROWKIND,
    Watermark,
    data_part,
    has_rowkind,
    millis,
    row_watermarks,
    with_meta,
    with_rowkind,
)
from sqlengine.runtime.operators.base import NotRescalable, Operator
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.session_admission import admit
from sqlengine.runtime.windows import fire_times, local_marks, sessions, window_times

_TS = pa.timestamp("ms")
_END = np.iinfo(np.int64).max


class SessionAssignOperator(Operator):
    name = "SessionAssign"
    state_fields = ("closed", "late_dropped", "rows", "watermark")

    def __init__(self, partition: tuple[int, ...], start_pos: int, gap: int,
                 schema: pa.Schema, zone: str = "") -> None:
        # The input has the placeholder columns window_start (the row's time), window_end and
        # window_time at start_pos, start_pos + 1, start_pos + 2.
        self.partition = partition
        # Sessions of this zone's wall clock (over a TIMESTAMP_LTZ column, WindowTVF.zone):
        # the rows' times are its readings, a session closes when it shows the end - 1 ms.
        self.zone = zone
        self.start_pos = start_pos
        self.gap = gap
        self.schema = schema
        self.rows: list[pa.RecordBatch] = []
        # Rows of sessions that closed inside a batch (runtime/session_admission.py), with
        # their window columns set, out at the next watermark.
        self.closed: list[pa.Table] = []
        self.watermark = np.iinfo(np.int64).min
        self.late_dropped = 0

    def _key_time(self, rows: pa.RecordBatch | pa.Table) -> pa.Table:
        cols = [rows.column(i) for i in (*self.partition, self.start_pos)]
        names = [*(f"k{j}" for j in range(len(self.partition))), "t"]
        return pa.Table.from_arrays(cols, names=names)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if has_rowkind(batch):  # (an updating input's rows wait with their kinds)
            data = with_rowkind(data, batch.column(batch.num_columns - 1).to_numpy(
                zero_copy_only=False))
        buffered = pa.Table.from_batches(self.rows).combine_chunks() if self.rows else None
        adm = admit(None if buffered is None else self._key_time(buffered),
                    self._key_time(data), [f"k{j}" for j in range(len(self.partition))], "t",
                    self.gap, local_marks(row_watermarks(batch), self.zone))
        keep = adm.keep if adm.keep is not None else np.ones(data.num_rows, dtype=bool)
        self.late_dropped += int((~keep).sum())
        if len(adm.closed_buffered) and buffered is not None:
            left = np.ones(buffered.num_rows, dtype=bool)
            left[adm.closed_buffered] = False
            self.closed.append(self._windowed(buffered.take(pa.array(adm.closed_buffered)),
                                              adm.buffered_start, adm.buffered_end))
            self.rows = buffered.filter(pa.array(left)).to_batches()
        if len(adm.closed_batch):
            self.closed.append(self._windowed(pa.Table.from_batches([data]).take(
                pa.array(adm.closed_batch)), adm.batch_start, adm.batch_end))
            keep = keep.copy()
            keep[adm.closed_batch] = False
        data = data.filter(pa.array(keep))
        if data.num_rows:
            self.rows.append(data)
        wm = row_watermarks(batch)
        if wm is None or not len(wm):
            return ()
        # The sessions the watermark closed between this batch's rows leave now, each stamped
        # with the watermark before the rise that fired it (as Flink's timers emit between
        # records): by their own time, a session's rows can be late for an operator after this.
        levels = np.unique(np.maximum(wm.astype(np.int64), self.watermark))
        out = self._emit(int(levels[-1]), levels)
        self.watermark = int(levels[-1])
        return out

    def _windowed(self, rows: pa.Table, starts: np.ndarray, ends: np.ndarray) -> pa.Table:
        cols = list(rows.columns)
        cols[self.start_pos] = pa.array(starts, _TS)
        cols[self.start_pos + 1] = pa.array(ends, _TS)
        cols[self.start_pos + 2] = window_times(ends, self.zone)
        return pa.Table.from_arrays(cols, names=self.schema.names +
                                    ([ROWKIND] if len(cols) > len(self.schema) else []))

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if wm.timestamp <= self.watermark:
            return ()
        levels = np.array([wm.timestamp], dtype=np.int64)
        out = self._emit(wm.timestamp, levels)
        self.watermark = wm.timestamp
        return out

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        return self._emit(_END, np.array([_END], dtype=np.int64))

    def _emit(self, watermark: int, levels: np.ndarray) -> list[pa.RecordBatch]:
        """The rows of the sessions closed by ``watermark``, the last of the rising
        ``levels`` (above ``self.watermark``): a session fires at the first level reaching its
        end - 1 and its rows leave stamped with the level before that one, in firing order.
        Emitted before the watermark that fired them, as Flink's timers, they are not late for
        an operator by their time after this one."""
        ready: list[pa.Table] = []
        if self.closed:
            closed = pa.concat_tables(self.closed)
            ends = millis(closed.column(self.start_pos + 1).combine_chunks()).astype(np.int64)
            due = fire_times(ends, self.zone) <= watermark
            ready.append(closed.filter(pa.array(due)))
            self.closed = [closed.filter(pa.array(~due))] if not due.all() else []
        out = self._close_sessions(watermark)
        if out is not None:
            ready.append(out)
        ready = [t for t in ready if t.num_rows]
        if not ready:
            return []
        rows = pa.concat_tables(ready).combine_chunks()
        fire = fire_times(millis(rows.column(self.start_pos + 1)).astype(np.int64), self.zone) \
            if watermark != _END else np.full(rows.num_rows, _END, dtype=np.int64)
        before = np.concatenate([[self.watermark], levels]).astype(np.int64)
        stamps = before[np.searchsorted(levels, fire, "left")]
        order = np.argsort(stamps, kind="stable")
        rows, stamps = rows.take(pa.array(order)), stamps[order]
        batch = rows.to_batches()[0]
        return [with_meta(data_part(batch), stamps,
                          batch.column(batch.num_columns - 1) if has_rowkind(batch) else None)]

    def _close_sessions(self, watermark: int) -> pa.Table | None:
        """The waiting rows whose session the watermark closes, with its window columns."""
        if not self.rows:
            return None
        table = pa.Table.from_batches(self.rows).combine_chunks()
        ts = millis(table.column(self.start_pos)).astype(np.int64)
        keys = dense_ids([table.column(i).combine_chunks() for i in self.partition],
                         table.num_rows)
        order = np.lexsort((ts, keys))
        change = np.zeros(len(order), dtype=bool)
        change[1:] = keys[order][1:] != keys[order][:-1]
        sid, starts, ends = sessions(change, ts[order], self.gap)
        closed = (fire_times(ends, self.zone) <= watermark)[sid] if watermark != _END else \
            np.ones(len(order), dtype=bool)
        if not closed.any():
            return None
        ordered = table.take(pa.array(order))
        self.rows = ordered.filter(pa.array(~closed)).to_batches()
        out = ordered.filter(pa.array(closed))
        done = sid[closed]
        return self._windowed(out, starts[done], ends[done])

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the waiting
        rows (and the closed sessions' rows not out yet) of the PARTITION BY keys it now
        owns; the watermark is the old subtasks' lowest."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        if not self.partition:  # (one subtask reads every row: no other parallelism)
            raise NotRescalable(self.name)
        from sqlengine.runtime.state.key_groups import owned

        def mine(rows: pa.RecordBatch | pa.Table) -> pa.RecordBatch | pa.Table:
            keys = [rows.column(i) for i in self.partition]
            keys = [k.combine_chunks() if isinstance(k, pa.ChunkedArray) else k for k in keys]
            return rows.filter(pa.array(owned(keys, subtask, parallelism)))

        self.rows = [b for s in states for b in map(mine, s["rows"]) if b.num_rows]  # type: ignore[attr-defined]
        self.closed = [t for s in states for t in map(mine, s["closed"]) if t.num_rows]  # type: ignore[attr-defined]
        self.watermark = min(int(s["watermark"]) for s in states)  # type: ignore[call-overload]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]

    def state_summary(self) -> Mapping[str, object]:
        return {"waiting_rows": sum(b.num_rows for b in self.rows) +
                sum(t.num_rows for t in self.closed),
                "late_records_dropped": self.late_dropped}
