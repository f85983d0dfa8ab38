"""OverAggregateOperator: aggregates over a rowtime-ordered frame ending at the current row.

Rows wait until the watermark passes their time (then no row can come before them), are
sorted by (partition, time, arrival), and every frame is computed at once: COUNT, SUM and AVG
from prefix sums, MIN and MAX from a sparse table (range-minimum queries), so the work is
vectorised whatever the frame. RANGE frames include the current row's peers (equal times), as
in SQL. Rows still inside some future frame stay as history; the rest is freed. With
UNBOUNDED PRECEDING every future frame reaches back to the partition's first row: each key
keeps its aggregates' parts over its emitted rows instead (over_carry.py), and its last n rows
for LAG(x, n). The output is insert-only.

Lateness is Flink's (checked with PyFlink 2.3 on disordered input). With UNBOUNDED PRECEDING
a row at or behind the watermark is dropped and counted (AbstractRowTimeUnboundedPrecedingOver).
With ROWS n PRECEDING (RowTimeRowsBoundedPrecedingFunction's last triggering time per key) a row
is dropped only when a row of its own PARTITION BY key at or after its time has already been
emitted; a row behind the watermark is otherwise kept and emitted at the next watermark
advance. Within a batch this follows the per-row watermarks: an earlier row counts as emitted
before a later one once the watermark has advanced past its time (and past the watermark it
arrived under) by the later row. With RANGE ... PRECEDING Flink's per-key timers, cleanup
timers included, are replayed (over_triggers.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import NotSupportedError
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.nodes import WindowCall
from sqlengine.runtime.elements import (
    Watermark,
    data_part,
    millis,
    row_watermarks,
    with_meta,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Clock, NotRescalable, Operator
from sqlengine.runtime.operators.over_carry import (
    carried,
    carry_parts,
    carry_rows,
    combine,
    decimal_average,
    first_rows,
    lag_rows,
    numeric_or_time,
)
from sqlengine.runtime.operators.over_triggers import RangeTriggers
from sqlengine.runtime.operators.partials import sum_type
from sqlengine.runtime.operators.python_aggregate import PythonAggregate, is_python
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.operators.window_functions import aggregate_frames, first_last
from sqlengine.runtime.prefix_sums import prefix_sums
from sqlengine.runtime.state.key_groups import owned
from sqlengine.runtime.timers import TimerService

_HIST = "$history"
_MIN = int(np.iinfo(np.int64).min)
_FOLDED = "$folded"  # per history row: kept only for DISTINCT aggregates (over_carry.py)
_EPOCH = "$epoch"  # per row: how often its key's state had been cleared when it arrived



def _sparse_table(values: np.ndarray, fn: np.ufunc) -> list[np.ndarray]:
    levels = [values]
    k = 1
    while 2 * k <= len(values):
        prev = levels[-1]
        levels.append(fn(prev[:-k], prev[k:]))
        k *= 2
    return levels


def _range_query(levels: list[np.ndarray], fn: np.ufunc, lo: np.ndarray, hi: np.ndarray
                 ) -> np.ndarray:
    """fn over values[lo..hi] (inclusive) for every pair, from the sparse table."""
    length = hi - lo + 1
    k = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    out = np.empty(len(lo), dtype=levels[0].dtype)
    for level in np.unique(k):
        sel = k == level
        table = levels[level]
        span = 1 << int(level)
        out[sel] = fn(table[lo[sel]], table[hi[sel] - span + 1])
    return out


class OverAggregateOperator(Operator):
    name = "OverAggregate"
    state_fields = ("carry", "history", "last_fired", "late_dropped", "range_triggers", "seq",
                    "timers")

    def __init__(self, partition: tuple[Expr, ...], time_index: int, frame: str,
                 preceding: int | None, aggs: tuple[AggCall, ...], schema: pa.Schema,
                 ttl_ms: int = 0, clock: Clock = time) -> None:
        # 'table.exec.state.ttl' (ROWS frames and UNBOUNDED PRECEDING, as Flink's cleanup
        # timers of KeyedProcessFunctionWithCleanupState): a key no row reached and none of
        # whose rows was emitted for the TTL, with no row waiting for the watermark, is
        # forgotten without a word (its carried aggregates, kept rows and last emitted
        # time); its next row starts it again. Flink clears it between the TTL and 1.5 x
        # the TTL after its last use; keys are looked over here at most every half TTL, so
        # within the same span. ``touched``: each key's last use on ``clock``'s monotonic
        # time (in a checkpoint: its age).
        self.ttl = ttl_ms / 1000.0 if not (frame == "range" and preceding is not None) else 0
        self.clock = clock
        self.touched: dict[tuple[object, ...], float] = {}
        self.next_scan = -math.inf
        self.partition = partition
        self.time_index = time_index
        self.frame = frame
        self.preceding = preceding
        self.aggs = aggs
        self.schema = schema
        self.width = len(schema) - len(aggs)
        self.timers = TimerService()  # each row waits for the watermark to pass its time
        self.history: pa.Table | None = None  # emitted rows still inside future frames
        self.seq = 0
        self.late_dropped = 0
        self.last_fired: dict[tuple[object, ...], int] = {}  # per key: latest time emitted
        # RANGE with a bounded PRECEDING: Flink's per-key timers replayed (over_triggers.py).
        self.range_triggers = RangeTriggers(preceding) if frame == "range" and \
            preceding is not None else None
        # UNBOUNDED PRECEDING: per key, the aggregates' parts over its emitted rows and its
        # last rows for LAG instead of every row (over_carry.py); None: every row stays.
        self.parts = carry_parts(aggs) if preceding is None else None
        self.lag_rows = lag_rows(aggs)
        self.carry: pa.Table | None = None

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if self.ttl:
            self._expire()
            self._touch(self._keys(data)[1])  # (a late row too, as Flink's processElement)
        times = millis(data.column(self.time_index))
        row_wm = row_watermarks(batch)
        late, epochs = self._late(data, times, row_wm)
        self.late_dropped += int(late.sum())
        if not late.all():
            on_time = ~late
            tagged = data.append_column(_EPOCH, pa.array(epochs))
            self.timers.register_event_time(tagged.filter(pa.array(on_time)), times[on_time])
        return ()

    # -- 'table.exec.state.ttl' -------------------------------------------------------------
    def _touch(self, keys: list[tuple[object, ...]]) -> None:
        self.touched.update(dict.fromkeys(keys, self.clock.monotonic()))

    def _expire(self) -> None:
        """Forget the keys unused for the TTL that have no row waiting (looked over at most
        every half TTL)."""
        now = self.clock.monotonic()
        if now < self.next_scan:
            return
        self.next_scan = now + self.ttl / 2
        stale = {k for k, t in self.touched.items() if t <= now - self.ttl}
        if not stale:
            return
        stale -= self._waiting_times().keys()
        for k in stale:
            del self.touched[k]
            self.last_fired.pop(k, None)
        if self.history is not None and self.history.num_rows:
            ids, keys = self._keys(self.history.select(list(range(self.width))))
            gone = np.array([k in stale for k in keys], dtype=bool)
            if gone.any():
                self.history = self.history.filter(pa.array(~gone[ids]))
        if self.carry is not None and self.carry.num_rows:
            cols = [self.carry.column(f"p{i}").to_pylist() for i in range(len(self.partition))]
            keys = list(zip(*cols)) if cols else [()] * self.carry.num_rows
            gone = np.array([k in stale for k in keys], dtype=bool)
            if gone.any():
                self.carry = self.carry.filter(pa.array(~gone))

    def snapshot_state(self) -> dict[str, object]:
        state = super().snapshot_state()
        if self.ttl:  # (ages: a monotonic reading means nothing in another process)
            now = self.clock.monotonic()
            state["touched"] = {k: now - t for k, t in self.touched.items()}
        return state

    def restore_state(self, state: Mapping[str, object]) -> None:
        super().restore_state(state)
        self._restore_touched([state], lambda keys: [True] * len(keys))

    def _restore_touched(self, states: list[Mapping[str, object]],
                         mine: Callable[[list[tuple]], list[bool]]) -> None:
        """Each key's last use from its age in the checkpoint (the time the job was down
        does not count); a key without one (an older checkpoint) counts as used now."""
        if not self.ttl:
            return
        now = self.clock.monotonic()
        self.touched = {}
        for s in states:
            ages: dict[tuple, float] = s.get("touched") or {}  # type: ignore[assignment]
            keys = list(ages)
            for k, ok in zip(keys, mine(keys)):
                if ok:
                    self.touched[k] = now - ages[k]
        for k in self.last_fired:
            self.touched.setdefault(k, now)

    def _forget(self, cleared: set[object]) -> None:
        """Keys whose state Flink cleared: their history from before the clearing goes (rows
        after it are another epoch, framed apart) and so does their last emitted time."""
        if not cleared or self.range_triggers is None:
            return
        for k in cleared:
            self.last_fired.pop(k, None)  # type: ignore[call-overload]
        if self.history is None or self.history.num_rows == 0:
            return
        ids, keys = self._keys(self.history.select(list(range(self.width))))
        current = np.array([self.range_triggers.epoch(k) for k in keys], dtype=np.int64)
        stale = self.history[_EPOCH].to_numpy() < current[ids]
        if stale.any():
            self.history = self.history.filter(pa.array(~stale))

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the waiting
        rows, the history, the emitted times (and a bounded RANGE frame's replayed timers) of
        the partitions it now owns."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        if not self.partition:
            raise NotRescalable(self.name)

        def mine(rows: pa.RecordBatch | pa.Table) -> np.ndarray:
            if isinstance(rows, pa.Table):
                rows = rows.combine_chunks().to_batches()[0]
            return owned([evaluate(p, rows) for p in self.partition], subtask, parallelism)

        def mine_keys(keys: list[tuple]) -> list[bool]:
            cols = [pa.array([k[i] for k in keys], type=p.dtype)
                    for i, p in enumerate(self.partition)]
            return owned(cols, subtask, parallelism).tolist() if keys else []

        self.timers = TimerService()
        history: list[pa.Table] = []
        self.last_fired = {}
        for s in states:
            self.timers.event_time[0].absorb(s["timers"].event_time[0], mine)  # type: ignore[attr-defined]
            old: pa.Table | None = s["history"]  # type: ignore[assignment]
            if old is not None and old.num_rows:
                history.append(old.filter(pa.array(mine(old))))
            fired: dict[tuple, int] = s["last_fired"]  # type: ignore[assignment]
            keys = list(fired)
            for k, ok in zip(keys, mine_keys(keys)):
                if ok:
                    self.last_fired[k] = fired[k]
        self.history = pa.concat_tables(history) if history else None
        carries = [c.filter(pa.array(owned([c.column(f"p{i}").combine_chunks()
                                             for i in range(len(self.partition))],
                                            subtask, parallelism)))
                   for c in (s.get("carry") for s in states) if c is not None and c.num_rows]
        self.carry = pa.concat_tables(carries) if carries else None
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.seq = max(int(s["seq"]) for s in states)  # type: ignore[call-overload]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]
        self._restore_touched(states, mine_keys)
        if self.range_triggers is not None:
            self.range_triggers = RangeTriggers.merged(
                [s["range_triggers"] for s in states], mine_keys)  # type: ignore[misc]

    def _keys(self, data: pa.RecordBatch | pa.Table) -> tuple[np.ndarray, list[tuple]]:
        """Dense key ids per row, and the key (a tuple of values) of each id."""
        if isinstance(data, pa.Table):
            data = data.combine_chunks().to_batches()[0] if data.num_rows else \
                pa.RecordBatch.from_pylist([], schema=data.schema)
        parts = [evaluate(p, data) for p in self.partition]
        ids = dense_ids(parts, data.num_rows)
        if not len(ids):
            return ids, []
        _, first = np.unique(ids, return_index=True)
        values = [p.take(pa.array(first)).to_pylist() for p in parts]
        return ids, [tuple(v) for v in zip(*values)] if values else [()] * len(first)

    def _late(self, data: pa.RecordBatch, times: np.ndarray, row_wm: np.ndarray | None
              ) -> tuple[np.ndarray, np.ndarray]:
        """Which rows are dropped as late (see the module's note), and each row's epoch."""
        n = len(times)
        w = row_wm if row_wm is not None else np.full(n, self.watermark)
        no_epochs = np.zeros(n, dtype=np.int64)
        if self.preceding is None:
            # UNBOUNDED PRECEDING: Flink's AbstractRowTimeUnboundedPrecedingOver drops every
            # row at or behind the watermark.
            return times <= w, no_epochs
        if self.range_triggers is not None:
            ids, keys = self._keys(data)
            return self.range_triggers.arrive([keys[i] for i in ids.tolist()], times, w)
        behind = np.flatnonzero(times <= w)
        late = np.zeros(n, dtype=bool)
        if not len(behind):
            return late, no_epochs
        ids, keys = self._keys(data)
        start = self.watermark
        waiting: dict[tuple[object, ...], np.ndarray] | None = None
        # One step per row behind the watermark (rare), not per row.
        for r in behind.tolist():
            key, ts, wr = keys[ids[r]], int(times[r]), int(w[r])
            if self.last_fired.get(key, _MIN) >= ts:
                late[r] = True
                continue
            mine = (ids[:r] == ids[r]) & ~late[:r]
            if np.any(mine & (times[:r] >= ts) & (times[:r] <= wr) & (w[:r] < wr)):
                late[r] = True
                continue
            if wr > start:
                if waiting is None:
                    waiting = self._waiting_times()
                t = waiting.get(key)
                if t is not None and np.any((t >= ts) & (t <= wr)):
                    late[r] = True
        return late, no_epochs

    def _waiting_times(self) -> dict[tuple[object, ...], np.ndarray]:
        """Per key, the times of rows from earlier batches still waiting for the watermark."""
        rows = self.timers.event_time[0].batches
        if not rows:
            return {}
        table = pa.Table.from_batches(rows)
        times = millis(table.column(self.time_index))
        ids, keys = self._keys(table)
        return {k: times[ids == i] for i, k in enumerate(keys)}

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if self.ttl:
            self._expire()
        before, ready = self.timers.advance_watermark(wm.timestamp)
        out = self._emit(before, ready)
        if self.range_triggers is not None:  # (after the rows due: their timers come first)
            self.range_triggers.advance(wm.timestamp)
            self._forget(self.range_triggers.take_cleared())
        return out

    def _emit(self, before: int, ready: pa.Table | None) -> list[pa.RecordBatch]:
        if ready is None:
            return []
        n_new = ready.num_rows
        seq = np.arange(self.seq, self.seq + n_new, dtype=np.int64)
        self.seq += n_new
        no = pa.array(np.zeros(n_new, dtype=bool))
        ready = ready.append_column("$seq", pa.array(seq)).append_column(
            _HIST, no).append_column(_FOLDED, no)
        history = self.history
        if history is not None and _FOLDED not in history.column_names:  # (an older snapshot)
            history = history.append_column(_FOLDED, pa.array(np.zeros(history.num_rows,
                                                                        dtype=bool)))
        rows = ready if history is None else pa.concat_tables([history, ready])
        out = self._compute(rows)
        return [with_meta(b, np.full(b.num_rows, before, dtype=np.int64)) for b in out]

    def _compute(self, rows: pa.Table) -> list[pa.RecordBatch]:
        batch = rows.combine_chunks().to_batches()[0]
        data = pa.RecordBatch.from_arrays(batch.columns[: self.width],
                                          schema=pa.schema(list(self.schema)[: self.width]))
        pids = dense_ids([*(evaluate(p, data) for p in self.partition),
                          batch.column(self.width)], batch.num_rows)
        times = millis(data.column(self.time_index))
        seq = batch.column(self.width + 1).to_numpy()
        order = np.lexsort((seq, times, pids))
        pids, times = pids[order], times[order]
        sorted_rows = rows.take(pa.array(order))
        sorted_data = data.take(pa.array(order))
        n = len(order)
        part_start, first, lo, hi = self._frames(pids, times)
        is_new = ~sorted_rows[_HIST].to_numpy()
        folded = np.asarray(sorted_rows[_FOLDED].to_numpy(zero_copy_only=False))
        if self.parts is not None:
            # The parts and LAG see the rows not folded into the carry yet (``live``); the
            # DISTINCT aggregates every row kept (over_carry.first_rows).
            live = np.flatnonzero(~folded)
            sub = sorted_data.take(pa.array(live)) if folded.any() else sorted_data
            s_start, s_first, s_lo, s_hi = self._frames(pids[live], times[live])
            keyvals = [evaluate(p, sub) for p in self.partition]
            slots = carry_rows(self.carry, keyvals, len(live))
            part_vals = [[self._aggregate(p, sub, s_lo, s_hi) for p in ps]
                         for ps in self.parts]
            old_vals = [[carried(self.carry, f"c{j}_{i}", slots, v.type)
                         for i, v in enumerate(vs)] for j, vs in enumerate(part_vals)]
            values = [self._aggregate(a, sorted_data, lo, hi) if a.distinct else
                      _spread(self._aggregate(a, sub, s_lo, s_hi) if not ps else
                              _finish(a, [combine(p, o, v) for p, o, v in zip(ps, olds, vs)]),
                              live, n)
                      for a, ps, olds, vs in zip(self.aggs, self.parts, old_vals, part_vals)]
        else:
            values = [self._python(a, sorted_data, lo, hi, is_new, first) if is_python(a)
                      else self._aggregate(a, sorted_data, lo, hi) for a in self.aggs]
        # Each key's latest emitted time (for lateness, and for what history must keep).
        ids, keys = self._keys(sorted_data)
        if self.ttl and is_new.any():  # (emitting a key's rows uses its state)
            self._touch([keys[i] for i in np.unique(ids[is_new]).tolist()])
        if is_new.any():
            newest = np.full(len(keys), _MIN)
            np.maximum.at(newest, ids[is_new], times[is_new])
            for k, t in zip(keys, newest.tolist()):
                if t > self.last_fired.get(k, _MIN):
                    self.last_fired[k] = t
        lowest = _MIN
        last_of_row = np.array([self.last_fired.get(k, lowest) for k in keys],
                               dtype=np.int64)[ids] if len(keys) else np.zeros(0, np.int64)
        out_cols = [*sorted_data.columns, *values]
        result = pa.Table.from_arrays(out_cols, schema=self.schema).filter(pa.array(is_new))
        # Keep the rows a later row's frame can still reach.
        now_folded = np.zeros(n, dtype=bool)
        if self.preceding is None and self.parts is None:
            keep = np.ones(n, dtype=bool)
        elif self.preceding is None:
            m = len(live)
            s_last = np.repeat(np.r_[s_start[1:], m] - 1, np.diff(np.r_[s_start, m]))
            s_keep = s_last - np.arange(m) < self.lag_rows
            self._carry_over(sub, keyvals, slots, old_vals, s_keep, s_start, s_first)
            stays_live = np.zeros(n, dtype=bool)
            stays_live[live[s_keep]] = True
            keep = stays_live | first_rows(self.aggs, sorted_data, pids)
            now_folded = keep & ~stays_live
        elif self.frame == "range":
            # A kept late row of a key comes after its latest emitted time: its frame reaches
            # back to that time - preceding at most.
            keep = times >= np.minimum(last_of_row, self.watermark) + 1 - self.preceding
        else:
            last = np.repeat(np.r_[part_start[1:], n] - 1, np.diff(np.r_[part_start, n]))
            keep = last - np.arange(n) < self.preceding
        hist = sorted_rows.filter(pa.array(keep))
        hist = hist.set_column(hist.column_names.index(_HIST), _HIST,
                               pa.array(np.ones(hist.num_rows, dtype=bool)))
        self.history = hist.set_column(hist.column_names.index(_FOLDED), _FOLDED,
                                       pa.array(now_folded[keep]))
        # Emit in time order across partitions, as the rows' event times say.
        order_out = np.argsort(millis(result.column(self.time_index).combine_chunks()),
                               kind="stable")
        result = result.take(pa.array(order_out))
        return [b for b in result.to_batches(65536) if b.num_rows]

    def _frames(self, pids: np.ndarray, times: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For rows sorted by partition and time: the partitions' first positions, and per
        row its partition's first row and its frame's first and last row."""
        n = len(pids)
        idx = np.arange(n)
        part_start = np.flatnonzero(np.r_[True, pids[1:] != pids[:-1]])
        first = np.repeat(part_start, np.diff(np.r_[part_start, n]))
        key = pids.astype(np.int64) * (1 << 44) + (times - times.min() if n else times)
        if self.frame == "range":
            hi = np.searchsorted(key, key, side="right") - 1  # peers with equal time included
            lo = first if self.preceding is None else np.maximum(
                first, np.searchsorted(key, key - self.preceding, side="left"))
        else:
            hi = idx
            lo = first if self.preceding is None else np.maximum(first, idx - self.preceding)
        return part_start, first, lo, hi

    def _carry_over(self, data: pa.RecordBatch, keyvals: list[pa.Array], slots: np.ndarray,
                    old_vals: list[list[pa.Array]], keep: np.ndarray, part_start: np.ndarray,
                    first: np.ndarray) -> None:
        """Fold the rows history lets go (``~keep``) into their keys' carry."""
        assert self.parts is not None
        n = len(keep)
        last_drop = np.maximum.reduceat(np.where(keep, -1, np.arange(n)), part_start) \
            if n else np.zeros(0, np.int64)
        has = last_drop >= part_start
        if not has.any():
            return
        hi = np.repeat(np.maximum(last_drop, part_start), np.diff(np.r_[part_start, n]))
        sel = pa.array(part_start[has])
        cols: dict[str, pa.Array] = {f"p{i}": k.take(sel) for i, k in enumerate(keyvals)}
        for j, ps in enumerate(self.parts):
            for i, p in enumerate(ps):
                dropped = self._aggregate(p, data, first, hi).take(sel)
                cols[f"c{j}_{i}"] = combine(p, old_vals[j][i].take(sel), dropped)
        updated = pa.table(cols)
        if self.carry is None or self.carry.num_rows == 0:
            self.carry = updated
            return
        touched = slots[part_start[has]]
        stays = np.ones(self.carry.num_rows, dtype=bool)
        stays[touched[touched >= 0]] = False
        self.carry = pa.concat_tables([self.carry.filter(pa.array(stays)),
                                       updated.cast(self.carry.schema)])

    @staticmethod
    def _python(a: AggCall, data: pa.RecordBatch, lo: np.ndarray, hi: np.ndarray,
                want: np.ndarray, first: np.ndarray) -> pa.Array:
        """A Python aggregate over each new row's frame (python_aggregate.py)."""
        keep = pc.fill_null(evaluate(a.filter, data), False).to_numpy(zero_copy_only=False) \
            if a.filter is not None else None
        return PythonAggregate(a).over([evaluate(x, data) for x in a.args], keep, lo, hi,
                                       want, first)

    def _aggregate(self, a: AggCall, data: pa.RecordBatch, lo: np.ndarray, hi: np.ndarray
                   ) -> pa.Array:
        n = data.num_rows
        keep = np.ones(n, dtype=bool)
        if a.filter is not None:
            keep = pc.fill_null(evaluate(a.filter, data), False).to_numpy(zero_copy_only=False)
        if a.func == "count_star":
            counts = np.r_[0, np.cumsum(keep.astype(np.int64))]
            return pa.array(counts[hi + 1] - counts[lo])
        if a.func == "lag":
            return _lag(a, data, lo, hi)
        arg = evaluate(a.args[0], data)
        if a.distinct or a.func in ("array_agg", "listagg") or (
                a.func in ("min", "max") and not numeric_or_time(a.type)) or (
                a.func in ("sum", "avg") and pa.types.is_decimal(arg.type)):
            # (as over bounded input: lists and texts per frame, strings' MIN / MAX through
            # their order codes, DECIMAL sums exactly, each value once for DISTINCT; a frame
            # holds its own row)
            call = WindowCall(a.func, a.args, a.type, None, a)
            return aggregate_frames(call, data, lo, hi, np.zeros(n, dtype=bool), n)
        if a.func in ("first_value", "last_value"):  # (its first / last non-NULL value)
            if not keep.all():
                arg = pc.if_else(pa.array(keep), arg, pa.nulls(n, arg.type))
            return first_last(arg, a.func, lo, hi, np.zeros(n, dtype=bool), n).cast(a.type)
        valid = keep & arg.is_valid().to_numpy(zero_copy_only=False)
        counts = np.r_[0, np.cumsum(valid.astype(np.int64))]
        count = counts[hi + 1] - counts[lo]
        if a.func == "count":
            return pa.array(count)
        empty = count == 0
        if a.func not in ("min", "max", "sum", "avg"):  # (it was summed: wrong, or failed)
            msg = f"{a.sql()} OVER a frame in streaming mode is not supported yet"
            raise NotSupportedError(msg)
        if a.func in ("min", "max"):
            raw = arg
            if pa.types.is_timestamp(raw.type):
                raw = raw.cast(pa.int64())  # (in its own unit: a TIMESTAMP(9) keeps its digits)
            elif pa.types.is_date(raw.type):
                raw = raw.cast(pa.timestamp("ms")).cast(pa.int64())
            as_float = pa.types.is_floating(raw.type)
            # (NaN above every number, as GROUP BY's MIN / MAX: MIN skips it, fmin, but for
            # a frame of NaNs; MAX is NaN where one is, maximum)
            fill = (np.nan if a.func == "min" else -np.inf) if as_float else \
                (np.iinfo(np.int64).max if a.func == "min" else _MIN)
            vals = pc.fill_null(raw.cast(pa.float64() if as_float else pa.int64()),
                                0).to_numpy(zero_copy_only=False).copy()
            vals[~valid] = fill
            fn = (np.fmin if as_float else np.minimum) if a.func == "min" else np.maximum
            res = _range_query(_sparse_table(vals, fn), fn, lo, hi)
            out = pa.array(res, mask=empty)
            if pa.types.is_date(a.type):
                return out.cast(pa.timestamp("ms")).cast(pa.date32())
            return out.cast(a.type)
        wide = sum_type(arg.type)
        if pa.types.is_decimal(wide):
            msg = f"{a.sql()} OVER a frame of DECIMAL values is not supported yet"
            raise NotSupportedError(msg)
        vals = pc.fill_null(arg.cast(wide), 0).to_numpy(zero_copy_only=False).copy()
        vals[~valid] = 0
        total = prefix_sums(vals).between(lo, hi + 1)
        if a.func == "sum":
            return pa.array(total, mask=empty).cast(a.type, safe=False)
        return _average(total, count, a.type)

    def state_summary(self) -> Mapping[str, object]:
        return {"history_rows": 0 if self.history is None else self.history.num_rows,
                "carried_keys": 0 if self.carry is None else self.carry.num_rows,
                "late_records_dropped": self.late_dropped}


def _spread(values: pa.Array, rows: np.ndarray, n: int) -> pa.Array:
    """``values`` of the rows at positions ``rows`` (ascending) of n, NULL elsewhere."""
    if len(rows) == n:
        return values
    where = np.full(n, -1, dtype=np.int64)
    where[rows] = np.arange(len(rows))
    return values.take(pa.array(np.where(where < 0, 0, where), mask=where < 0))


def _average(total: np.ndarray, count: np.ndarray, t: pa.DataType) -> pa.Array:
    empty = count == 0
    safe = np.where(empty, 1, count)
    if pa.types.is_integer(t):
        avg = np.sign(total) * (np.abs(total) // safe)  # Flink: integer AVG truncates
    else:
        avg = total / safe
    return pa.array(avg, mask=empty).cast(t, safe=False)


def _finish(a: AggCall, parts: list[pa.Array]) -> pa.Array:
    """An aggregate's value from its parts (over_carry.carry_parts) over a whole frame."""
    if a.func == "avg":
        total, count = parts
        if pa.types.is_decimal(a.type):
            return decimal_average(total, count, a.type)
        return _average(pc.fill_null(total, 0).to_numpy(zero_copy_only=False),
                        pc.fill_null(count, 0).to_numpy(zero_copy_only=False), a.type)
    value = parts[0]
    return value if value.type == a.type else value.cast(a.type, safe=False)


def _lag(a: AggCall, data: pa.RecordBatch, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    """LAG(x, n, default) over the frame ending at ``hi``, as Flink's LagAggFunction in an
    OVER aggregate: the value n rows before the frame's last row (for RANGE, the last of the
    current row's peers), ``default`` when the frame holds no such row; a NULL value stays
    NULL. Frames start at their partition's first row (UNBOUNDED PRECEDING)."""
    value, offset, default = a.args
    n = int(offset.value)  # type: ignore[attr-defined]  # (a literal: the binder checks)
    src = hi - n
    inside = src >= lo
    values = evaluate(value, data)
    taken = values.take(pa.array(np.where(inside, src, 0)))
    fallback = evaluate(default, data)
    if fallback.type != taken.type:
        fallback = fallback.cast(taken.type)
    return pc.if_else(pa.array(inside), taken, fallback).cast(a.type)
