"""Event-time windows: assignment (the window TVF), window aggregation, session aggregation.

Lateness follows Flink's window operators, judged per row against the watermark in effect
before that row (the ``$wm`` column): a row joins each of its windows that has not fired yet
(window_end - 1 + allowed lateness > watermark) and is dropped, and counted, when it joins
none. A fired window's result is emitted once when the watermark passes window_end - 1; with
allowed lateness its state stays that much longer and a late row updates the result (-U/+U).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import from_local, to_local
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.partials import with_row_count
from sqlengine.runtime.elements import (
    MAX_WATERMARK,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    Watermark,
    data_part,
    has_rowkind,
    millis,
    row_watermarks,
    signs,
    with_meta,
)
from sqlengine.runtime.operators.base import NotRescalable, Operator
from sqlengine.runtime.operators.partials import Partials
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.session_admission import admit
from sqlengine.runtime.state.key_groups import owned
from sqlengine.runtime.timers import TimerService
from sqlengine.runtime.windows import assign, fire_times, local_marks, sessions, window_times

_TS = pa.timestamp("ms")


_MAX_PAIRS = 1 << 22  # (row, window) pairs a window TVF builds at once


class WindowAssignOperator(Operator):
    """The window TVF: one output row per (row, window) pair, with window_start, window_end
    and window_time appended; under a windowed aggregate, join or Top-N (``drop_late``), pairs
    whose window has fired are dropped."""

    name = "WindowTVF"
    state_fields = ("late_dropped", "timers")

    def __init__(self, kind: str, time_index: int, size: int, slide: int, offset: int,
                 lateness: int, schema: pa.Schema, proctime: bool = False,
                 drop_late: bool = True, sliced: bool = False, zone: str = "") -> None:
        self.kind = kind
        # Windows over a TIMESTAMP_LTZ column aligned to this zone's wall clock (batch mode:
        # see WindowTVF.zone); the window columns are its wall-clock times, window_time the
        # instant of end - 1 ms.
        self.zone = zone
        # HOP into a slicing aggregate: a row's window columns are its slide-long slice's,
        # and it is late when the last window holding it has fired.
        self.sliced = sliced
        self.drop_late = drop_late  # (a TVF on its own keeps late rows, as Flink's)
        self.time_index = time_index
        self.size = size
        self.slide = slide
        self.offset = offset
        self.lateness = lateness
        self.schema = schema
        self.timers = TimerService()
        self.late_dropped = 0
        self.proctime = proctime  # processing time is never late

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        copies = -(-self.size // self.slide) if self.kind in ("hop", "cumulate") and self.slide \
            and not self.sliced else 1
        step = max(1, _MAX_PAIRS // copies)
        if batch.num_rows <= step:
            return self._assign(batch)
        # (a slice at a time: a row is copied into every window it falls in)
        return [out for start in range(0, batch.num_rows, step)
                for out in self._assign(batch.slice(start, step))]

    def _assign(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        times = batch.column(self.time_index)
        if times.null_count:  # (batch mode's plain TIMESTAMP: no window, as in Flink)
            batch = batch.filter(pc.is_valid(times))
            if batch.num_rows == 0:
                return []
        data = data_part(batch)
        # (an updating input's rows keep their kinds: a window aggregate over a changelog
        # takes the retractions off its windows)
        kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False) \
            if has_rowkind(batch) else None
        ts = millis(data.column(self.time_index))
        if self.zone and not self.proctime:  # (PROCTIME() is the zone's wall clock already)
            ts = millis(to_local(pa.array(ts, pa.timestamp("ms", tz="UTC")), self.zone))
        row_wm = row_watermarks(batch) if not self.proctime else None
        if row_wm is None:
            row_wm = np.full(len(ts), self.watermark, dtype=np.int64)
        if self.sliced:
            return self._assign_slices(data, ts, row_wm, kinds)
        windows = assign(self.kind, ts, self.size, self.slide, self.offset)
        last_time = fire_times(windows.end, self.zone)
        if self.kind == "session" or not self.drop_late:
            # A row whose own window [ts, ts + gap) has passed may still merge into its key's
            # open session (Flink merges first, then judges): the session operator decides.
            keep = np.ones(len(windows.rows), dtype=bool)
        else:
            keep = last_time + self.lateness > row_wm[windows.rows]
        rows = windows.rows[keep]
        if len(rows) < len(windows.rows):  # (a row is dropped when none of its windows is kept)
            kept = np.zeros(len(ts), dtype=bool)
            kept[rows] = True
            self.late_dropped += len(ts) - int(np.count_nonzero(kept))
        elif len(rows) == 0:
            self.late_dropped += len(ts)
        if len(rows) == 0:
            return []
        out = data.take(pa.array(rows))
        start = pa.array(windows.start[keep], _TS)
        end = pa.array(windows.end[keep], _TS)
        arrays = [*out.columns, start, end, self._window_time(windows.end[keep] - 1)]
        result = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        return [with_meta(result, row_wm[rows], None if kinds is None else kinds[rows])]

    def _window_time(self, last: np.ndarray) -> pa.Array:
        """window_time: the window's last millisecond (as the zone's wall clock reads it,
        an instant, with Java's reading of a time the clocks skip or pass twice)."""
        if not self.zone:
            return pa.array(last, _TS)
        return from_local(pa.array(last, _TS), self.zone).cast(pa.timestamp("ms", tz="UTC"))

    def _assign_slices(self, data: pa.RecordBatch, ts: np.ndarray, row_wm: np.ndarray,
                       kinds: np.ndarray | None) -> list[pa.RecordBatch]:
        """Each row once, with its slice's end as window_end and, as window_start, the end of
        the first of its windows that had not fired by the row's watermark (the slice's end
        for a row on time): a row partly late counts only in its windows still open, as
        when it is copied into each of its windows. Dropped (and counted) when all of its
        windows have fired."""
        step = self.slide
        slices = assign("tumble", ts, step, 0, self.offset)
        ends = slices.end
        # (>= 0: the slice's first window has fired; watermarks clipped to the slice's
        # neighbourhood, as the start's or the end of input's would overflow int64)
        behind = np.clip(row_wm, ends - 2 * step, ends + self.size) + 1 - ends
        first = ends + np.where(behind >= 0, behind // step + 1, 0) * step
        keep = first <= ends + self.size - step
        rows = np.flatnonzero(keep)
        self.late_dropped += len(ts) - len(rows)
        if not len(rows):
            return []
        out = data.take(pa.array(rows)) if len(rows) < len(ts) else data
        arrays = [*out.columns, pa.array(first[rows], _TS), pa.array(ends[rows], _TS),
                  self._window_time(ends[rows] - 1)]
        result = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        return [with_meta(result, row_wm[rows], None if kinds is None else kinds[rows])]

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if not self.proctime:
            self.timers.move_watermark(wm.timestamp)
        return ()

    def state_summary(self) -> Mapping[str, object]:
        return {"late_records_dropped": self.late_dropped}

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism: the lowest of the old watermarks (it holds no rows)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]


class WindowAggregateOperator(Operator):
    """GROUP BY window_start, window_end [, keys] over TUMBLE / HOP / CUMULATE windows."""

    name = "WindowAggregate"
    state_fields = ("distinct", "fired", "fired_distinct", "late_dropped", "pending",
                    "pending_rows", "timers")
    # Windows of this zone's wall clock fire when it shows their end - 1 ms (set by the
    # factory; see WindowTVF.zone).
    zone: str = ""

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...], schema: pa.Schema,
                 end_pos: int, lateness: int, proctime: bool = False, start_pos: int = -1,
                 slice_size: int = 0, slice_step: int = 0, counted: bool = False,
                 signed: bool = False) -> None:
        # ``counted``: the partials carry, as c<len(aggs)>, the rows each group stands for
        # (a COUNT(*) after the aggregates); ``signed``: the input is an updating one, whose
        # retractions count as negative rows (Flink's window aggregation over a changelog),
        # and a window whose rows were all retracted is not emitted (its count is 0).
        counted = counted or signed
        self.signed = signed
        self.partials = Partials(keys, with_row_count(aggs) if counted else aggs, signed)
        self.schema = schema
        self.rows_column = f"c{len(aggs)}" if counted else ""
        # (finalize takes a type per aggregate: the row count's is the last)
        self.final_schema = schema.append(pa.field(self.rows_column, pa.int64())) \
            if counted else schema
        self.end_key = f"k{end_pos}"
        self.start_key = f"k{start_pos}"
        # Slicing (HOP windows slice_size long every slice_step): its rows come with their
        # slice as window bounds and ``pending`` holds per-slice partial aggregates; a window
        # firing merges its slices (see _fire_slices). A slice is kept until the last window
        # holding it fires (its end - 1 + size - step: what ``_process`` judges lateness by).
        self.slice_size, self.slice_step = slice_size, slice_step
        self.slice_extra = slice_size - slice_step if slice_step else 0
        self.lateness = lateness
        self.pending: list[pa.Table] = []
        self.pending_rows = 0
        self.distinct: dict[int, list[pa.Table]] = {j: [] for j in self.partials.distinct}
        self.fired: pa.Table | None = None  # fired groups kept for allowed lateness
        self.fired_distinct: dict[int, pa.Table] = {}
        # Each window's timer is its end - 1 (timers kept with the pending groups); a
        # processing-time window's clock moves the same timers.
        self.timers = TimerService()
        self.late_dropped = 0
        # Processing-time windows fire by the wall clock (the task's processing-time timers,
        # and as batches arrive; all at the end of input); watermarks do not move them.
        self.proctime = proctime
        self.uses_processing_time = proctime

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def on_processing_time(self, now_ms: int) -> Iterable[pa.RecordBatch]:
        return self._fire(now_ms) if self.proctime and self.pending else ()

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        out = self._process(batch)
        if self.proctime:
            out += self._fire(int(time.time() * 1000))
        return out

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if self.proctime and wm.timestamp != MAX_WATERMARK.timestamp:
            return ()
        return self._fire(wm.timestamp)

    def _input_table(self, batch: pa.RecordBatch) -> pa.Table:
        """The keys and the partials' per-row inputs of a batch of rows (aggregated as they
        are, late rows apart: DECIMAL sums may come unscaled, see Partials.row_columns)."""
        return pa.table(self.partials.row_columns(batch, unscaled=True,
                                                  sign=signs(batch) if self.signed else None))

    def _rows_of(self, table: pa.Table, mask: np.ndarray) -> int:
        """How many input rows the rows of ``table`` under ``mask`` stand for."""
        return int(mask.sum())

    def _process(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        table = self._input_table(batch)
        ends = millis(table[self.end_key].combine_chunks())
        fired = self.timers.fired(fire_times(ends, self.zone) + self.slice_extra)
        out: list[pa.RecordBatch] = []
        if fired.any() and self.proctime and not self.slice_step and not self.zone and \
                self.start_key in table.column_names:
            # A processing-time row is never late: a window that fired before the row came
            # through the shuffle gives the row to the window of this operator's clock, as
            # Flink's window operator assigns it (its rows were dropped, q12 at p=2 on a busy
            # machine)
            table = self._to_current_windows(table, fired, ends)
            fired = np.zeros(table.num_rows, dtype=bool)
        if fired.any():
            late = table.filter(pa.array(fired))
            table = table.filter(pa.array(~fired))
            expired = self.timers.fired(self._fire_times(late) + self.lateness)
            self.late_dropped += self._rows_of(late, expired)
            late = late.filter(pa.array(~expired))
            if late.num_rows:
                out += self._late_update(late)
        if table.num_rows:
            self.pending.append(self.partials.aggregate(table))
            for j in self.partials.distinct:
                self.distinct[j].append(self.partials.distinct_values(table, j))
            self.pending_rows += self.pending[-1].num_rows
            if len(self.pending) > 64:
                self._compact()
        return out

    def _to_current_windows(self, table: pa.Table, fired: np.ndarray, ends: np.ndarray
                            ) -> pa.Table:
        """``table`` with the tumbling windows of its ``fired`` rows moved to the window of
        the same size and alignment that holds the current processing time."""
        starts = millis(table[self.start_key].combine_chunks())
        size = ends - starts
        now = max(int(time.time() * 1000), self.timers.watermark + 1)
        now_at = np.maximum(now, ends)
        moved = starts + size * ((now_at - starts) // np.maximum(size, 1))
        new_starts = np.where(fired, moved, starts)
        for key, values in ((self.start_key, new_starts), (self.end_key, new_starts + size)):
            col = table[key]
            i = table.column_names.index(key)
            table = table.set_column(i, key, pa.array(values).cast(
                pa.timestamp("ms")).cast(col.type))
        return table

    def _compact(self) -> None:
        merged = self.partials.aggregate(pa.concat_tables(self.pending))
        self.pending = [merged]
        for j in self.partials.distinct:
            self.distinct[j] = [self.partials.merge_values(pa.concat_tables(self.distinct[j]),
                                                           j)]

    def _fire(self, timestamp: int) -> list[pa.RecordBatch]:
        if self.slice_step:
            return self._fire_slices(timestamp)
        wm = Watermark(timestamp)
        before = self.timers.move_watermark(wm.timestamp)
        out: list[pa.RecordBatch] = []
        if self.pending:
            self._compact()
            state = self.pending[0]
            fire = pa.array(self.timers.fired(self._fire_times(state)))
            if pc.any(fire).as_py():
                done = state.filter(fire)
                self.pending = [state.filter(pc.invert(fire))]
                done_distinct = {}
                for j in self.partials.distinct:
                    pairs = self.distinct[j][0]
                    pend = pa.array(self.timers.fired(self._fire_times(pairs)))
                    done_distinct[j] = pairs.filter(pend)
                    self.distinct[j] = [pairs.filter(pc.invert(pend))]
                out += self._emit(done, done_distinct, before)
                if self.lateness > 0:
                    self._keep_fired(done, done_distinct)
        self._expire(wm.timestamp)
        return out

    def _fire_times(self, table: pa.Table) -> np.ndarray:
        """When the windows of ``table``'s rows fire."""
        return fire_times(millis(table[self.end_key].combine_chunks()), self.zone)

    def _fire_slices(self, timestamp: int) -> list[pa.RecordBatch]:
        """The windows whose time (end - 1) the watermark passed since the last one: each
        merged from the partials of the slices it covers (a slice's windows end at its end,
        its end + step, ..., its end + size - step); slices whose last window fired go."""
        before = self.timers.move_watermark(timestamp)
        if not self.pending:
            return []
        self._compact()
        state = self.pending[0]
        ends = millis(state[self.end_key].combine_chunks())
        # (window_start holds the end of the first window the slice's rows count in)
        firsts = millis(state[self.start_key].combine_chunks())
        step, n = self.slice_step, self.slice_size // self.slice_step
        out: list[pa.RecordBatch] = []
        # (slices with a window firing now: the first at or before the watermark, the last
        # after the one before)
        touched = np.flatnonzero((ends - 1 <= timestamp) & (ends - 1 + self.slice_extra > before))
        if len(touched):
            rows = np.repeat(touched, n)
            window_ends = ends[rows] + np.tile(np.arange(n, dtype=np.int64) * step, len(touched))
            now = (window_ends - 1 > before) & (window_ends - 1 <= timestamp) & \
                (window_ends >= firsts[rows])
            rows, window_ends = rows[now], window_ends[now]
            picked = state.take(pa.array(rows))
            ts_type = state.schema.field(self.end_key).type
            for key, values in ((self.end_key, window_ends),
                                (self.start_key, window_ends - self.slice_size)):
                i = picked.schema.get_field_index(key)
                picked = picked.set_column(i, key, pa.array(values, _TS).cast(ts_type))
            out += self._emit(self.partials.aggregate(picked), {}, before)
        gone = ends - 1 + self.slice_extra <= timestamp
        if gone.any():
            self.pending = [state.filter(pa.array(~gone))]
        return out

    def _emit(self, groups: pa.Table, distinct: dict[int, pa.Table], wm_before: int,
              kind: int | None = None) -> list[pa.RecordBatch]:
        if self.signed and groups.num_rows:  # (windows whose every row was retracted)
            groups = groups.filter(pc.not_equal(groups[self.rows_column], 0))
        if groups.num_rows == 0:
            return []
        # Results leave in window order (as Flink's timers fire), then by key.
        order = pc.sort_indices(groups, sort_keys=[(self.end_key, "ascending")] + [
            (k, "ascending") for k in self.partials.key_names if k != self.end_key])
        groups = groups.take(order)
        cols = self._finalize(groups, distinct)
        batch = pa.RecordBatch.from_arrays(cols, schema=self.schema)
        # Rows leave before the watermark that fired them, so downstream windows take them.
        wm = np.full(batch.num_rows, wm_before, dtype=np.int64)
        return [with_meta(batch, wm, None if kind is None else
                          np.full(batch.num_rows, kind, dtype=np.int8))]

    def _finalize(self, groups: pa.Table, distinct: dict[int, pa.Table]) -> list[pa.Array]:
        return self.partials.finalize(groups, distinct, self.final_schema)[:len(self.schema)]

    def _keep_fired(self, done: pa.Table, distinct: dict[int, pa.Table]) -> None:
        self.fired = done if self.fired is None else pa.concat_tables([self.fired, done])
        for j, pairs in distinct.items():
            old = self.fired_distinct.get(j)
            self.fired_distinct[j] = pairs if old is None else pa.concat_tables([old, pairs])

    def _expire(self, wm: int) -> None:
        if self.fired is None:
            return
        alive = pa.array(self._fire_times(self.fired) + self.lateness > wm)
        self.fired = self.fired.filter(alive)
        for j, pairs in self.fired_distinct.items():
            keep = pa.array(self._fire_times(pairs) + self.lateness > wm)
            self.fired_distinct[j] = pairs.filter(keep)

    def _late_update(self, late: pa.Table) -> list[pa.RecordBatch]:
        """Late rows for fired windows within the allowed lateness: -U the old result, +U the
        new one, for every group they touch."""
        assert self.fired is not None
        names = self.partials.key_names
        touched = self.partials.aggregate(late)
        touched_keys = touched.select(names)
        mask = _member(self.fired.select(names), touched_keys)
        old = self.fired.filter(mask)
        rest = self.fired.filter(pc.invert(mask))
        new = self.partials.aggregate(pa.concat_tables([old, touched]))
        old_d, new_d = {}, {}
        for j in self.partials.distinct:
            pairs = self.fired_distinct.get(j)
            pairs = pairs if pairs is not None else self.partials.distinct_values(late, j)[:0]
            in_touched = _member(pairs.select(names), touched_keys)
            old_d[j] = pairs.filter(in_touched)
            new_d[j] = _dedupe(pa.concat_tables([old_d[j],
                                                 self.partials.distinct_values(late, j)]))
            self.fired_distinct[j] = pa.concat_tables([pairs.filter(pc.invert(in_touched)),
                                                       new_d[j]])
        self.fired = pa.concat_tables([rest, new])
        before = self._emit(old, old_d, self.watermark, UPDATE_BEFORE)
        after = self._emit(new, new_d, self.watermark, UPDATE_AFTER)
        return before + after if old.num_rows else self._emit(new, new_d, self.watermark)

    def state_summary(self) -> Mapping[str, object]:
        return {"late_records_dropped": self.late_dropped,
                "open_groups": sum(t.num_rows for t in self.pending)}

    # The state columns of the keys its input is hash-partitioned on (the group keys but
    # window_start / window_end): set by the factory; what a rescaled restore splits by.
    partition_keys: list[str] | None = None

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes the groups whose partition key it now
        owns (by key group, as the exchange routes them) from every old subtask's state."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        names = self.partition_keys
        if not names:
            raise NotRescalable(self.name)

        def mine(t: pa.Table) -> pa.Table:
            keep = owned([t[n].combine_chunks() for n in names], subtask, parallelism)
            return t.filter(pa.array(keep))

        pending = [mine(t) for s in states for t in s["pending"]]  # type: ignore[attr-defined]
        self.pending = [t for t in pending if t.num_rows]
        self.pending_rows = sum(t.num_rows for t in self.pending)
        self.distinct = {j: [mine(t) for s in states
                             for t in s["distinct"][j]]  # type: ignore[index]
                         for j in self.partials.distinct}
        fired = [mine(s["fired"]) for s in states if s["fired"] is not None]  # type: ignore[arg-type]
        self.fired = pa.concat_tables(fired) if fired else None
        self.fired_distinct = {}
        for j in self.partials.distinct:
            parts = [mine(s["fired_distinct"][j]) for s in states  # type: ignore[index]
                     if j in s["fired_distinct"]]  # type: ignore[operator]
            if parts:
                self.fired_distinct[j] = pa.concat_tables(parts)
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]


class SessionAggregateOperator(Operator):
    """GROUP BY window_start, window_end [, keys] over SESSION windows: rows wait per key until
    the watermark closes their session (last row + gap - 1 <= watermark)."""

    name = "SessionAggregate"
    state_fields = ("closed", "late_dropped", "rows", "timers")

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...], schema: pa.Schema,
                 start_pos: int, end_pos: int, gap: int, time_pos: int = -1,
                 signed: bool = False, zone: str = "") -> None:
        # Sessions of this zone's wall clock (over a TIMESTAMP_LTZ column, WindowTVF.zone):
        # the rows' times are its readings, a session fires when it shows the end - 1 ms.
        self.zone = zone
        # ``signed``: over an updating input, retractions are negative rows (they place
        # and merge sessions as rows do, as in Flink) and a session whose rows were all
        # retracted is not emitted (c<len(aggs)>, its rows' count, is 0).
        self.signed = signed
        self.partials = Partials(keys, with_row_count(aggs) if signed else aggs, signed)
        self.rows_column = f"c{len(aggs)}"
        self.final_schema = schema.append(pa.field(self.rows_column, pa.int64())) \
            if signed else schema
        self.schema = schema
        self.start_key = f"k{start_pos}"
        self.end_key = f"k{end_pos}"
        # (GROUP BY window_time too: its session's end - 1 ms, set with the bounds)
        self.time_key = f"k{time_pos}" if time_pos >= 0 else None
        window = (self.start_key, self.end_key, self.time_key)
        self.others = [k for k in self.partials.key_names if k not in window]
        self.gap = gap
        self.rows: list[pa.Table] = []
        # Rows of sessions that closed inside a batch (runtime/session_admission.py), their
        # window columns set, out at the next watermark.
        self.closed: list[pa.Table] = []
        self.timers = TimerService()  # a session's timer: its end - 1
        self.late_dropped = 0

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the waiting and
        closed rows of the keys it now owns (the exchange hashes the keys but the window's)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        names = self.others

        def mine(t: pa.Table) -> pa.Table:
            if not names:
                return t if subtask == 0 else t.slice(0, 0)
            keep = owned([t[n].combine_chunks() for n in names], subtask, parallelism)
            return t.filter(pa.array(keep))

        self.rows = [t for s in states for t in map(mine, s["rows"])  # type: ignore[call-overload]
                     if t.num_rows]
        self.closed = [t for s in states for t in map(mine, s["closed"])  # type: ignore[call-overload]
                       if t.num_rows]
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        # The assigner put each row's own time in window_start.
        table = pa.table(self.partials.row_columns(
            batch, sign=signs(batch) if self.signed else None))
        buffered = pa.concat_tables(self.rows) if self.rows else None
        adm = admit(buffered, table, self.others, self.start_key, self.gap,
                    local_marks(row_watermarks(batch), self.zone))
        keep = adm.keep if adm.keep is not None else np.ones(table.num_rows, dtype=bool)
        self.late_dropped += int((~keep).sum())
        if len(adm.closed_buffered) and buffered is not None:
            left = np.ones(buffered.num_rows, dtype=bool)
            left[adm.closed_buffered] = False
            self.closed.append(self._windowed(buffered.take(pa.array(adm.closed_buffered)),
                                              adm.buffered_start, adm.buffered_end))
            self.rows = [buffered.filter(pa.array(left))]
        if len(adm.closed_batch):
            self.closed.append(self._windowed(table.take(pa.array(adm.closed_batch)),
                                              adm.batch_start, adm.batch_end))
            keep = keep.copy()
            keep[adm.closed_batch] = False
        table = table.filter(pa.array(keep))
        if table.num_rows:
            self.rows.append(table)
        return ()

    def _windowed(self, rows: pa.Table, starts: np.ndarray, ends: np.ndarray) -> pa.Table:
        names = rows.column_names
        rows = rows.set_column(names.index(self.start_key), self.start_key,
                               pa.array(starts, _TS))
        if self.time_key is not None:
            rows = rows.set_column(names.index(self.time_key), self.time_key,
                                   window_times(ends, self.zone))
        return rows.set_column(names.index(self.end_key), self.end_key, pa.array(ends, _TS))

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before = self.timers.move_watermark(wm.timestamp)
        ready: list[pa.Table] = []
        if self.closed:
            closed = pa.concat_tables(self.closed)
            due = self.timers.fired(fire_times(millis(closed[self.end_key].combine_chunks()),
                                               self.zone))
            ready = [closed.filter(pa.array(due))]
            self.closed = [closed.filter(pa.array(~due))] if not due.all() else []
        if not self.rows:
            return self._aggregate(ready, before)
        table = pa.concat_tables(self.rows).combine_chunks()
        ts = millis(table[self.start_key].combine_chunks())
        key_ids = _dense_ids(table, self.others)
        order = np.lexsort((ts, key_ids))
        ts_sorted = ts[order]
        ids_sorted = key_ids[order]
        change = np.zeros(len(order), dtype=bool)
        change[1:] = ids_sorted[1:] != ids_sorted[:-1]
        sid, starts, ends = sessions(change, ts_sorted, self.gap)
        fire_session = self.timers.fired(fire_times(ends, self.zone))
        fire_row = fire_session[sid]
        if not fire_row.any():
            return self._aggregate(ready, before)
        sorted_table = table.take(pa.array(order))
        done = sorted_table.filter(pa.array(fire_row))
        self.rows = [sorted_table.filter(pa.array(~fire_row))]
        sid_done = sid[fire_row]
        ready.append(self._windowed(done, starts[sid_done], ends[sid_done]))
        return self._aggregate(ready, before)

    def _aggregate(self, ready: list[pa.Table], before: int) -> Iterable[pa.RecordBatch]:
        """The results of the closed sessions' rows (window columns set)."""
        ready = [t for t in ready if t.num_rows]
        if not ready:
            return ()
        done = pa.concat_tables(ready).combine_chunks()
        groups = self.partials.aggregate(done)
        if self.signed:  # (sessions whose every row was retracted)
            groups = groups.filter(pc.not_equal(groups[self.rows_column], 0))
            if groups.num_rows == 0:
                return ()
        distinct = {j: self.partials.distinct_values(done, j) for j in self.partials.distinct}
        order_out = pc.sort_indices(groups, sort_keys=[(self.end_key, "ascending")] + [
            (k, "ascending") for k in self.partials.key_names if k != self.end_key])
        groups = groups.take(order_out)
        cols = self.partials.finalize(groups, distinct, self.final_schema)[:len(self.schema)]
        batch = pa.RecordBatch.from_arrays(cols, schema=self.schema)
        return (with_meta(batch, np.full(batch.num_rows, before, dtype=np.int64)),)

    def state_summary(self) -> Mapping[str, object]:
        return {"buffered_rows": sum(t.num_rows for t in self.rows) +
                sum(t.num_rows for t in self.closed),
                "late_records_dropped": self.late_dropped}


def _dense_ids(table: pa.Table, names: list[str]) -> np.ndarray:
    """One integer per distinct combination of the named columns (NULL is a value)."""
    return dense_ids([table[n].combine_chunks() for n in names], table.num_rows)


def _member(table: pa.Table, keys: pa.Table) -> pa.Array:
    """Per row of ``table``: is its key combination among ``keys``? (NULL matches NULL.)"""
    names = table.column_names
    pos = pa.array(np.arange(table.num_rows, dtype=np.int64))
    marked = keys.append_column("$hit", pa.array(np.ones(keys.num_rows, dtype=np.int8)))
    joined = table.append_column("$pos", pos).join(
        marked, keys=names, join_type="left outer", use_threads=False,
        coalesce_keys=True).sort_by("$pos")
    hit = joined["$hit"].combine_chunks()
    # Arrow's join never matches NULL keys; treat NULL = NULL as a match for group keys.
    if any(table[n].null_count for n in names):
        ids = _dense_ids(pa.concat_tables([table, keys]), names)
        in_keys = np.isin(ids[: table.num_rows], ids[table.num_rows:])
        return pa.array(in_keys)
    return pc.is_valid(hit)


def _dedupe(table: pa.Table) -> pa.Table:
    return table.group_by(table.column_names, use_threads=False).aggregate([])
