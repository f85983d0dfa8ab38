"""A window join drops a row whose window has fired by the watermark before that row (the
per-row watermark its input carries, bounded by the other input's), as Flink's
WindowJoinOperator judges each record by the watermark current when it arrives: rows of one
batch no longer wait for the watermark sent after the batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from sqlengine.plan.expressions import ColumnRef
from sqlengine.runtime.elements import Watermark, with_meta
from sqlengine.runtime.operators.window_join import WindowJoinOperator

_TS = pa.timestamp("ms")
SIDE = pa.schema([("k", pa.int64()), ("window_end", _TS)])
OUT = pa.schema([("k", pa.int64()), ("window_end", _TS), ("k2", pa.int64()),
                 ("window_end2", _TS)])


def _join() -> WindowJoinOperator:
    key = (ColumnRef(0, "k", pa.int64()),)
    return WindowJoinOperator("inner", key, key, None, SIDE, SIDE, OUT, (1, 1))


def _side(keys: list[int], ends: list[int], marks: list[int] | None) -> pa.RecordBatch:
    data = pa.RecordBatch.from_arrays([pa.array(keys, pa.int64()), pa.array(ends, _TS)],
                                      schema=SIDE)
    return with_meta(data, np.array(marks, dtype=np.int64)) if marks is not None else data


def test_a_row_behind_its_own_watermark_is_dropped() -> None:
    op = _join()
    # window [0, 10) ends at 10 and fires at watermark 9: the second row arrives after the
    # watermark 12, the third at watermark 9 (late), the first on time
    list(op.process_batch(_side([1, 2, 3], [10, 10, 10], [5, 12, 9]), 0))
    list(op.process_batch(_side([1, 2, 3], [10, 10, 10], [5, 5, 5]), 1))
    out = [b for b in op.process_watermark(Watermark(100))]
    keys = sorted(pa.Table.from_batches(out).column("k").to_pylist())
    assert keys == [1]
    assert op.late_dropped == 2


def test_without_row_watermarks_the_operators_own_watermark_judges() -> None:
    op = _join()
    list(op.process_watermark(Watermark(20)))
    list(op.process_batch(_side([1], [10], None), 0))
    assert op.late_dropped == 1
    list(op.process_batch(_side([1], [30], None), 0))
    list(op.process_batch(_side([1], [30], None), 1))
    out = list(op.process_watermark(Watermark(100)))
    assert pa.Table.from_batches(out).num_rows == 1
