"""A processing-time window's row that crosses a shuffle after its window fired (the window was
assigned by the clock of the process before the shuffle) goes to the window of the aggregating
operator's clock, as Flink's window operator assigns processing time; it was dropped as late,
and Nexmark q12 at parallelism 2 lost bids on a busy machine (CI)."""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa

from sqlengine import types as T
from sqlengine.plan.expressions import AggCall, ColumnRef
from sqlengine.runtime.elements import MAX_WATERMARK
from sqlengine.runtime.operators.window import WindowAggregateOperator

TS = pa.timestamp("ms")
SCHEMA = pa.schema([("k", pa.int64()), ("window_start", TS), ("window_end", TS),
                    ("n", pa.int64())])


def _batch(start_ms: int, keys: list[int]) -> pa.RecordBatch:
    n = len(keys)
    return pa.record_batch([pa.array(keys, pa.int64()),
                            pa.array([start_ms] * n, pa.int64()).cast(TS),
                            pa.array([start_ms + 10_000] * n, pa.int64()).cast(TS)],
                           names=["k", "window_start", "window_end"])


def _rows(out: list[pa.RecordBatch]) -> list[dict[str, object]]:
    return [r for b in out for r in b.to_pylist()]


def _ms(t: dt.datetime) -> int:
    return int((t - dt.datetime(1970, 1, 1)).total_seconds() * 1000)


def test_a_row_after_its_window_fired_goes_to_the_current_window() -> None:
    keys = (ColumnRef(0, "k", T.BIGINT), ColumnRef(1, "window_start", TS),
            ColumnRef(2, "window_end", TS))
    op = WindowAggregateOperator(keys, (AggCall("count_star", (), T.BIGINT),), SCHEMA,
                                 end_pos=2, lateness=0, proctime=True, start_pos=1)
    now = int(time.time() * 1000)
    old = now - now % 10_000 - 20_000  # (a window that ended 10 s ago or more)
    out = list(op.process_batch(_batch(old, [1, 1, 2])))  # (fires at once: its end passed)
    out += list(op.process_batch(_batch(old, [1, 2, 2])))  # (after the window fired)
    out += list(op.process_watermark(MAX_WATERMARK))
    rows = _rows(out)
    assert sum(r["n"] for r in rows) == 6 and op.late_dropped == 0
    first = [r for r in rows if _ms(r["window_start"]) == old]
    assert sorted((r["k"], r["n"]) for r in first) == [(1, 2), (2, 1)]
    later = [r for r in rows if _ms(r["window_start"]) > old]
    assert sorted((r["k"], r["n"]) for r in later) == [(1, 1), (2, 2)]
    for r in later:  # (the window of the clock: same size and alignment, now inside it)
        start = _ms(r["window_start"])
        assert start % 10_000 == 0 and start + 10_000 > now
        assert _ms(r["window_end"]) - start == 10_000
