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

from sqlengine.runtime.elements import Watermark, data_part, millis, row_watermarks, with_meta
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.operators.window import late_rows_kept
from sqlengine.runtime.windows import sessions

_TS = pa.timestamp("ms")
_END = np.iinfo(np.int64).max


class SessionAssignOperator(Operator):
    name = "SessionAssign"

    def __init__(self, partition: tuple[int, ...], start_pos: int, gap: int,
                 schema: pa.Schema) -> None:
        # The input has the placeholder columns window_start (the row's time), window_end and
        # window_time at start_pos, start_pos + 1, start_pos + 2.
        self.partition = partition
        self.start_pos = start_pos
        self.gap = gap
        self.schema = schema
        self.rows: list[pa.RecordBatch] = []
        self.watermark = np.iinfo(np.int64).min
        self.late_dropped = 0

    def _key_time(self, rows: pa.RecordBatch | pa.Table) -> pa.Table:
        cols = [rows.column(i) for i in (*self.partition, self.start_pos)]
        names = [*(f"k{j}" for j in range(len(self.partition))), "t"]
        return pa.Table.from_arrays(cols, names=names)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        buffered = [self._key_time(b) for b in self.rows]
        keep = late_rows_kept(buffered, self._key_time(data),
                              [f"k{j}" for j in range(len(self.partition))], "t", self.gap,
                              row_watermarks(batch))
        if keep is not None:
            self.late_dropped += int((~keep).sum())
            data = data.filter(pa.array(keep))
        if data.num_rows:
            self.rows.append(data)
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        self.watermark = max(self.watermark, wm.timestamp)
        return self._emit(self.watermark)

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        return self._emit(_END)

    def _emit(self, watermark: int) -> list[pa.RecordBatch]:
        if not self.rows:
            return []
        table = pa.Table.from_batches(self.rows).combine_chunks()
        ts = millis(table.column(self.start_pos)).astype(np.int64)
        keys = dense_ids([table.column(i).combine_chunks() for i in self.partition],
                         table.num_rows)
        order = np.lexsort((ts, keys))
        change = np.zeros(len(order), dtype=bool)
        change[1:] = keys[order][1:] != keys[order][:-1]
        sid, starts, ends = sessions(change, ts[order], self.gap)
        closed = (ends - 1 <= watermark)[sid] if watermark != _END else \
            np.ones(len(order), dtype=bool)
        if not closed.any():
            return []
        ordered = table.take(pa.array(order))
        self.rows = ordered.filter(pa.array(~closed)).to_batches()
        out = ordered.filter(pa.array(closed))
        done = sid[closed]
        cols = list(out.columns)
        cols[self.start_pos] = pa.array(starts[done], _TS)
        cols[self.start_pos + 1] = pa.array(ends[done], _TS)
        cols[self.start_pos + 2] = pa.array(ends[done] - 1, _TS)
        result = pa.Table.from_arrays(cols, names=self.schema.names)
        stamp = watermark if watermark != _END else self.watermark
        return [with_meta(b, np.full(b.num_rows, stamp, dtype=np.int64))
                for b in result.to_batches() if b.num_rows]

    def snapshot_state(self) -> Mapping[str, object]:
        return {"waiting_rows": sum(b.num_rows for b in self.rows),
                "late_records_dropped": self.late_dropped}
