"""IntervalJoinOperator: ``l.ts BETWEEN r.ts + lower AND r.ts + upper`` joins on rowtimes.

Each side keeps its rows only while a row of the other side can still match: a left row at
``t`` matches right rows in ``[t - upper, t - lower]``, so it can be dropped once the watermark
passes ``t - lower`` (a LEFT JOIN emits it null-padded then, if it never matched), and a right
row at ``t`` once the watermark passes ``t + upper``. The output is insert-only.

Late rows follow Flink's TimeIntervalJoin (checked with PyFlink 2.3): a row arriving behind the
watermark is not dropped as such. It joins the other side's rows in its range that have not
expired by the watermark before it (a left row expires once that watermark is past
``t - lower``, a right row once it is past ``t + upper``), and it is kept for later rows only
when it arrived before its own expiry. Each row is held with the watermark it arrived under
(``arrival``), and a pair is judged at the later of its two rows' arrivals: the earlier row
must have been kept and not have expired by then. The later of the two is the one with the
higher arrival watermark, not the one read second: a self-join's two inputs are the same rows
in the same order, read here one whole batch after the other. A row that was not kept is
held only until the next watermark (for its twin on the other input), then dropped, a LEFT
JOIN's unmatched left row null-padded. Rows that arrive behind their expiry and join nothing
there are counted as late records dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import (
    MIN_WATERMARK,
    Watermark,
    data_part,
    millis,
    row_watermarks,
    with_meta,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import NotRescalable, Operator
from sqlengine.runtime.operators.join import equality_key
from sqlengine.runtime.state.key_groups import owned
from sqlengine.runtime.timers import TimerService

_POS = "$pos"



class IntervalJoinOperator(Operator):
    name = "IntervalJoin"
    state_fields = ("arrival", "late_arrivals", "late_dropped", "matched", "matched_right",
                    "rows", "timers")

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, left_time: int, right_time: int, lower: int,
                 upper: int) -> None:
        self.kind = kind
        self.key_exprs = (left_keys, right_keys)
        self.condition = condition
        self.schemas = (left_schema, right_schema)
        self.schema = schema
        self.times = (left_time, right_time)
        self.lower, self.upper = lower, upper
        # The output watermark is held back by the largest distance of a match, as Flink's
        # (TimeIntervalJoin.getMaxOutputDelay): a joined or null-padded row is emitted at most
        # that far behind the watermark, and is then not late for a window after the join.
        self.output_delay = max(0, -lower, upper)
        self.rows: list[pa.Table | None] = [None, None]
        self.matched = np.zeros(0, dtype=bool)  # per held left row (LEFT / FULL JOIN)
        self.matched_right = np.zeros(0, dtype=bool)  # per held right row (FULL JOIN)
        # Per held row of each side: the watermark before it when it arrived.
        self.arrival: list[np.ndarray] = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        # Each kept row's cleanup timer: left t - lower, right t + upper (kept with the rows).
        self.timers = TimerService()
        self.late_dropped = 0
        self.late_arrivals = 0  # rows at or behind the watermark when they arrived

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the kept rows
        of each side whose join key it now owns (with the left rows' matched flags)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        if not self.key_exprs[0]:
            raise NotRescalable(self.name)
        matched: list[np.ndarray] = []
        matched_right: list[np.ndarray] = []
        for side in (0, 1):
            parts: list[pa.Table] = []
            arrivals: list[np.ndarray] = []
            for s in states:
                table: pa.Table | None = s["rows"][side]  # type: ignore[index]
                if table is None or table.num_rows == 0:
                    continue
                keys = self._keys(table, side)
                mask = owned([keys[f"k{i}"].combine_chunks()
                              for i in range(len(self.key_exprs[side]))], subtask, parallelism)
                parts.append(table.filter(pa.array(mask)))
                arrivals.append(np.asarray(s["arrival"][side])[mask])  # type: ignore[index]
                flags = np.asarray(s["matched"])
                if side == 0 and len(flags) == len(mask):  # (kept for a LEFT JOIN only)
                    matched.append(flags[mask])
                right_flags = np.asarray(s.get("matched_right", ()))  # type: ignore[attr-defined]
                if side == 1 and len(right_flags) == len(mask):  # (a FULL JOIN's)
                    matched_right.append(right_flags[mask])
            self.rows[side] = pa.concat_tables(parts) if parts else None
            self.arrival[side] = np.concatenate(arrivals) if arrivals else \
                np.zeros(0, np.int64)
        self.matched = np.concatenate(matched) if matched else np.zeros(0, dtype=bool)
        self.matched_right = np.concatenate(matched_right) if matched_right else \
            np.zeros(0, dtype=bool)
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]
        self.late_arrivals = sum(int(s.get("late_arrivals", 0)) for s in states) \
            if subtask == 0 else 0  # type: ignore[call-overload]

    def _keys(self, data: pa.RecordBatch | pa.Table, side: int) -> pa.Table:
        batch = data if isinstance(data, pa.RecordBatch) else \
            data.combine_chunks().to_batches()[0]
        cols = {f"k{i}": equality_key(evaluate(k, batch))
                for i, k in enumerate(self.key_exprs[side])}
        if not cols:  # (no equality key: every pair of rows in range, one subtask)
            cols["k0"] = pa.array(np.zeros(batch.num_rows, dtype=np.int8))
        cols[_POS] = pa.array(np.arange(batch.num_rows, dtype=np.int64))
        return pa.table(cols)

    def _pairs(self, left: pa.Table, right: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        if left.num_rows == 0 or right.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        lk, rk = self._keys(left, 0), self._keys(right, 1)
        names = [c for c in lk.column_names if c != _POS]
        for n in names:
            lk = lk.filter(pc.is_valid(lk[n]))
            rk = rk.filter(pc.is_valid(rk[n]))
        joined = lk.join(rk, keys=names, join_type="inner", right_suffix="_r",
                         use_threads=False)
        li = joined[_POS].to_numpy()
        ri = joined[_POS + "_r"].to_numpy()
        lt = millis(left.column(self.times[0]).combine_chunks())[li]
        rt = millis(right.column(self.times[1]).combine_chunks())[ri]
        ok = (lt - rt >= self.lower) & (lt - rt <= self.upper)
        li, ri = li[ok], ri[ok]
        if self.condition is not None and len(li):
            rows = self._combine(left.take(pa.array(li)), right.take(pa.array(ri)))
            keep = pc.fill_null(evaluate(self.condition, rows), False)
            mask = keep.to_numpy(zero_copy_only=False)
            li, ri = li[mask], ri[mask]
        order = np.lexsort((ri, li))
        return li[order], ri[order]

    def _combine(self, left: pa.Table, right: pa.Table) -> pa.RecordBatch:
        cols = [c.combine_chunks() for c in (*left.columns, *right.columns)]
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        side = input_index
        times = millis(data.column(self.times[side]))
        row_wm = row_watermarks(batch)
        # The watermark before each row (its own input's, bounded by the other input's).
        w = row_wm if row_wm is not None else np.full(len(times), self.watermark)
        w = w.astype(np.int64, copy=False)
        new = pa.Table.from_batches([data])
        other = self.rows[1 - side]
        out: list[pa.RecordBatch] = []
        joined = np.zeros(new.num_rows, dtype=bool)
        if other is not None and other.num_rows:
            li, ri = self._pairs(new, other) if side == 0 else self._pairs(other, new)
            ni, oi = (li, ri) if side == 0 else (ri, li)
            o_times, o_w = self._times(other, 1 - side), self.arrival[1 - side]
            new_first = o_w[oi] > w[ni]  # (the held row arrived under a later watermark)
            ok = np.where(new_first,
                          self._kept(times[ni], w[ni], side)
                          & self._alive(times[ni], o_w[oi], side),
                          self._alive(o_times[oi], w[ni], 1 - side))
            li, ri = li[ok], ri[ok]
            if len(li):
                if side == 0:
                    left_rows, right_rows = new.take(pa.array(li)), other.take(pa.array(ri))
                    joined[li] = True
                    if len(self.matched_right) == other.num_rows:
                        self.matched_right[ri] = True
                else:
                    left_rows, right_rows = other.take(pa.array(li)), new.take(pa.array(ri))
                    self.matched[li] = True
                    joined[ri] = True
                out.append(self._combine(left_rows, right_rows))
        kept = self._kept(times, w, side)
        self.late_dropped += int((~kept & ~joined).sum())
        self.late_arrivals += int((times <= w).sum())
        # Every row is held (one that was not kept only until the next watermark expires it).
        if side == 0:
            self.matched = np.concatenate([self.matched, joined])
        else:
            self.matched_right = np.concatenate([self.matched_right, joined])
        self.arrival[side] = np.concatenate([self.arrival[side], w])
        held = self.rows[side]
        self.rows[side] = new if held is None else pa.concat_tables([held, new])
        stamp = self._held(self.watermark)
        return [with_meta(b, np.full(b.num_rows, stamp, dtype=np.int64)) for b in out]

    def _held(self, watermark: int) -> int:
        """The output watermark for an input watermark (held back by ``output_delay``)."""
        return max(MIN_WATERMARK, watermark - self.output_delay)

    def _kept(self, times: np.ndarray, w: np.ndarray, side: int) -> np.ndarray:
        """Rows at ``times`` arriving under watermarks ``w``: kept for later rows (Flink caches
        a row while the watermark is below its expiry)."""
        return w < (times - self.lower if side == 0 else times + self.upper)

    def _alive(self, times: np.ndarray, w: np.ndarray, side: int) -> np.ndarray:
        """Held rows at ``times``: not yet expired under watermarks ``w``."""
        return (times - self.lower if side == 0 else times + self.upper) >= w

    def _times(self, rows: pa.Table, side: int) -> np.ndarray:
        return millis(rows.column(self.times[side]).combine_chunks())

    def _padded(self, rows: pa.Table, side: int = 0) -> pa.RecordBatch:
        """Unmatched rows of ``side`` with NULLs for the other side's columns."""
        nulls = [pa.nulls(rows.num_rows, f.type) for f in self.schemas[1 - side]]
        own = [c.combine_chunks() for c in rows.columns]
        return pa.RecordBatch.from_arrays([*own, *nulls] if side == 0 else [*nulls, *own],
                                          schema=self.schema)

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        # (rows it fires leave before the held-back watermark, stamped with the one before)
        stamp = self._held(self.watermark)
        self.timers.move_watermark(wm.timestamp)
        out: list[pa.RecordBatch] = []
        left, right = self.rows
        # (expired once the watermark is past the row's last matching time, as Flink's)
        if left is not None and left.num_rows:
            expired = self.timers.fired(self._times(left, 0) - self.lower + 1)
            if expired.any():
                if self.kind in ("left", "full"):
                    lonely = expired & ~self.matched
                    if lonely.any():
                        out.append(self._padded(left.filter(pa.array(lonely))))
                self.rows[0] = left.filter(pa.array(~expired))
                self.matched = self.matched[~expired]
                self.arrival[0] = self.arrival[0][~expired]
        if right is not None and right.num_rows:
            expired = self.timers.fired(self._times(right, 1) + self.upper + 1)
            if expired.any():
                if self.kind == "full":  # (its unmatched right rows, as Flink's)
                    lonely = expired & ~self.matched_right
                    if lonely.any():
                        out.append(self._padded(right.filter(pa.array(lonely)), 1))
                self.rows[1] = right.filter(pa.array(~expired))
                self.matched_right = self.matched_right[~expired]
                self.arrival[1] = self.arrival[1][~expired]
        return [with_meta(b, np.full(b.num_rows, stamp, dtype=np.int64)) for b in out]

    def state_summary(self) -> Mapping[str, object]:
        return {"left_rows": 0 if self.rows[0] is None else self.rows[0].num_rows,
                "right_rows": 0 if self.rows[1] is None else self.rows[1].num_rows,
                "late_records_dropped": self.late_dropped,
                "late_records_arrived": self.late_arrivals}
