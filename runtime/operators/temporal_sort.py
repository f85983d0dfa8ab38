"""TemporalSortOperator: streaming ORDER BY on an ascending time attribute first (Flink's
RowTimeSortOperator and ProcTimeSortOperator).

By event time the rows wait until the watermark reaches their time and then leave in order:
by time, rows of one time by the other ORDER BY keys, then in arrival order. As Flink's, a row
is late, and dropped, when its time is not after the last time already emitted (not when it is
behind the watermark: such a row still leaves, in order, at the next rise of the watermark).
Within a batch, each row has met the watermark its source had emitted before it: every rise of
it fires the rows it passed before the rows after it arrive, as Flink's timers do between
records, computed for the whole batch at once. By processing time the rows leave as they
come, each batch ordered by the other keys (Flink orders the rows of one millisecond)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.elements import (
    MIN_WATERMARK,
    Watermark,
    data_part,
    millis,
    row_watermarks,
    with_meta,
)
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.sort import sort_order

_TS = "$ts"  # the row's time in ms
_SEQ = "$seq"  # its arrival
_RISE = "$rise"  # the rise of the watermark that fires it (within one batch)


class TemporalSortOperator(Operator):
    name = "TemporalSort"
    state_fields = ("waiting", "seq", "last_emitted", "watermark", "late_dropped")

    def __init__(self, keys: tuple[SortKey, ...], time_index: int, time_kind: str,
                 schema: pa.Schema) -> None:
        self.keys = keys  # the time column's key first
        self.time_index = time_index
        self.rowtime = time_kind == "ROWTIME"
        self.schema = schema
        self.waiting: pa.Table | None = None  # data columns, then $ts and $seq
        self.seq = 0
        self.last_emitted = MIN_WATERMARK  # the last time whose rows left
        self.watermark = MIN_WATERMARK
        self.late_dropped = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        if not self.rowtime:
            return self._by_arrival(batch, data)
        column = data.column(self.time_index)
        valid = np.asarray(column.is_valid(), dtype=bool)
        ts = millis(pc.fill_null(column, pa.scalar(0).cast(column.type))
                    if column.null_count else column)
        seqs = np.arange(self.seq, self.seq + data.num_rows, dtype=np.int64)
        self.seq += data.num_rows
        row_wm = row_watermarks(batch)
        row_wm = np.full(len(ts), self.watermark, dtype=np.int64) if row_wm is None else \
            np.maximum(row_wm.astype(np.int64), self.watermark)
        # Rise i brings the watermark to levels[i]; rise 0 is none if it stays where it was.
        # A row arrives after the rise of its own level and fires at the first later rise
        # reaching its time (a held row: at the first rise reaching it).
        levels, level = np.unique(row_wm, return_inverse=True)
        first_rise = 0 if levels[0] > self.watermark else 1
        held = self.waiting
        held_ts = held[_TS].to_numpy() if held is not None else np.zeros(0, np.int64)
        held_rise = np.maximum(np.searchsorted(levels, held_ts, "left"), first_rise)
        new_rise = np.maximum(np.searchsorted(levels, ts, "left"), level + 1)
        # emitted[i]: the last time emitted once rise i has fired (a late row's time is not
        # above what was emitted before it arrived, so counting it raises no maximum)
        rises = len(levels)
        emitted = np.full(rises + 1, self.last_emitted, dtype=np.int64)
        np.maximum.at(emitted, np.minimum(held_rise, rises), held_ts)
        np.maximum.at(emitted, np.minimum(new_rise[valid], rises), ts[valid])
        emitted = np.maximum.accumulate(emitted)
        on_time = valid & (ts > emitted[level])
        self.late_dropped += int((~on_time).sum())
        idx = np.flatnonzero(on_time)
        rows = pa.Table.from_batches([data.take(pa.array(idx, pa.int64()))]).append_column(
            _TS, pa.array(ts[idx], pa.int64())).append_column(
            _SEQ, pa.array(seqs[idx], pa.int64()))
        if held is not None:
            rows = pa.concat_tables([held, rows])
        rise = np.concatenate([held_rise, new_rise[idx]])
        before = np.concatenate([[self.watermark], levels]).astype(np.int64)  # (rise i's)
        self.watermark = max(self.watermark, int(levels[-1]))
        fired = rise < rises
        return self._fire(rows, fired, rise, before)

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if wm.timestamp <= self.watermark:
            return ()
        before = self.watermark
        self.watermark = wm.timestamp
        if self.waiting is None or not self.rowtime:
            return ()
        fired = self.waiting[_TS].to_numpy() <= self.watermark
        rise = np.zeros(self.waiting.num_rows, dtype=np.int64)
        return self._fire(self.waiting, fired, rise, np.array([before], dtype=np.int64))

    def _fire(self, rows: pa.Table, fired: np.ndarray, rise: np.ndarray,
              before: np.ndarray) -> list[pa.RecordBatch]:
        """Emit the ``fired`` rows, by the rise firing them, then in order; keep the rest.
        ``before[i]``: the watermark before rise i (what the emitted rows met)."""
        rest = rows.filter(pa.array(~fired))
        self.waiting = rest if rest.num_rows else None
        if not fired.any():
            return []
        out = rows.filter(pa.array(fired))
        rise = rise[fired]
        self.last_emitted = max(self.last_emitted, int(pc.max(out[_TS]).as_py()))
        data = out.select(list(range(len(self.schema))))
        order = sort_order(data, self.keys, first=[("r", pa.array(rise)),
                                                   ("t", out[_TS].combine_chunks())],
                           last=[("s", out[_SEQ].combine_chunks())])
        met = before[rise][order.to_numpy()]
        data = data.take(order).combine_chunks()
        batches, start = [], 0
        for b in data.to_batches():
            if b.num_rows:
                batches.append(with_meta(b, met[start:start + b.num_rows]))
                start += b.num_rows
        return batches

    def _by_arrival(self, batch: pa.RecordBatch, data: pa.RecordBatch
                    ) -> list[pa.RecordBatch]:
        if len(self.keys) == 1:
            return [batch]
        table = pa.Table.from_batches([data])
        order = sort_order(table, self.keys[1:])
        out = table.take(order).combine_chunks().to_batches()[0]
        wm = row_watermarks(batch)
        return [with_meta(out, wm[order.to_numpy()] if wm is not None else None)]

    def state_summary(self) -> Mapping[str, object]:
        return {"waiting_rows": 0 if self.waiting is None else self.waiting.num_rows,
                "late_records_dropped": self.late_dropped}
