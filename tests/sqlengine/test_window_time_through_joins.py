"""Streaming mode: a window TVF over a time column that comes out of a regular join is
refused, as Flink refuses it (a regular join's time columns are plain TIMESTAMPs there): the
join emits a row whenever its match comes, so the window dropped rows as late depending on
how the inputs interleaved (no rows at parallelism 1, the row at 2, found by a
self-consistency probe). Batch mode windows it (no row is late there), and an interval
join keeps its inputs' time attributes, as in Flink."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

T = dt.datetime(2024, 1, 1, 10)
ORDERS = pa.table({"id": pa.array([1, 2], pa.int32()),
                   "ts": pa.array([T, T + dt.timedelta(minutes=2)], pa.timestamp("ms"))})
PAY = pa.table({"oid": pa.array([99, 1], pa.int32()),
                "ts": pa.array([T + dt.timedelta(seconds=130), T + dt.timedelta(seconds=150)],
                               pa.timestamp("ms"))})
WINDOW = ("SELECT window_start, COUNT(*) AS c FROM TABLE(TUMBLE(({join}), DESCRIPTOR(ts), "
          "INTERVAL '1' MINUTE)) GROUP BY window_start, window_end")
REGULAR = "SELECT o.ts FROM orders o JOIN pay p ON o.id = p.oid"
INTERVAL = ("SELECT o.ts FROM orders o JOIN pay p ON o.id = p.oid AND p.ts BETWEEN o.ts AND "
            "o.ts + INTERVAL '3' MINUTE")


def session(mode: str, parallelism: int = 1) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    for name, table in (("orders", ORDERS), ("pay", PAY)):
        s.register(name, pa.Table.from_batches(table.to_batches(max_chunksize=1)),
                   rowtime="ts", watermark="ts - INTERVAL '1' SECOND")
    return s


@pytest.mark.parametrize("parallelism", [1, 2])
def test_streaming_refuses_a_window_over_a_regular_join(parallelism: int) -> None:
    with pytest.raises(SqlEngineError, match="column 'ts' is not a time attribute: it comes "
                                             "out of a regular join"):
        session("streaming", parallelism).sql(WINDOW.format(join=REGULAR)).collect()


@pytest.mark.parametrize(("mode", "join"), [("batch", REGULAR), ("batch", INTERVAL),
                                            ("streaming", INTERVAL)])
def test_other_windows_over_joins_run(mode: str, join: str) -> None:
    got = session(mode).sql(WINDOW.format(join=join)).collect().to_pylist()
    assert got == [{"window_start": T, "c": 1}]
