"""Streaming mode: a window TVF over a time column that comes out of a regular join is
refused, as Flink refuses it (a regular join's time columns are plain TIMESTAMPs there): the
join emits a row whenever its match comes, so the window dropped rows as late depending on
how the inputs interleaved (no rows at parallelism 1, the row at 2, found by a
self-consistency probe). Batch mode windows it (no row is late there), and an interval
join keeps its inputs' time attributes, as in Flink.

The other event-time operators over such a column, as Flink plans them: OVER aggregates,
MATCH_RECOGNIZE, legacy group windows and event-time temporal joins are refused; ROW_NUMBER
= 1 ordered by it is a Top-N (not a deduplication on event time) and a time-bounded join
condition on it a regular join's condition (not an interval join)."""

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


JOINED = "SELECT o.id, o.ts FROM orders o JOIN pay p ON o.id = p.oid"
REFUSED = {
    "an OVER aggregate": f"SELECT id, COUNT(*) OVER (PARTITION BY id ORDER BY ts) FROM ({JOINED})",
    "MATCH_RECOGNIZE": f"SELECT * FROM ({JOINED}) MATCH_RECOGNIZE (PARTITION BY id ORDER BY ts "
                       "MEASURES A.id AS a ONE ROW PER MATCH PATTERN (A) DEFINE A AS A.id > 0)",
    "windows": f"SELECT TUMBLE_START(ts, INTERVAL '1' MINUTE), COUNT(*) FROM ({JOINED}) "
               "GROUP BY TUMBLE(ts, INTERVAL '1' MINUTE)",
}


@pytest.mark.parametrize("what", sorted(REFUSED))
def test_streaming_refuses_event_time_operators_over_a_regular_join(what: str) -> None:
    with pytest.raises(SqlEngineError, match=f"column 'ts' is not a time attribute: it comes "
                                             f"out of a regular join.*so {what} cannot run"):
        session("streaming").sql(REFUSED[what]).collect()


def test_streaming_refuses_an_event_time_temporal_join_over_a_regular_join() -> None:
    s = session("streaming")
    s.execute("CREATE TEMPORARY VIEW rates AS SELECT oid, ts FROM (SELECT *, ROW_NUMBER() "
              "OVER (PARTITION BY oid ORDER BY ts DESC) AS rn FROM pay) WHERE rn = 1")
    with pytest.raises(SqlEngineError, match="so an event-time temporal join cannot run"):
        s.sql(f"SELECT * FROM ({JOINED}) x JOIN rates FOR SYSTEM_TIME AS OF x.ts AS r "
              "ON x.id = r.oid").collect()


def test_over_aggregate_over_a_regular_join_runs_in_batch_mode() -> None:
    got = session("batch").sql(REFUSED["an OVER aggregate"]).collect()
    assert got.to_pylist() == [{"id": 1, "EXPR$1": 1}]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_first_row_over_a_regular_join_is_a_top_n(parallelism: int) -> None:
    q = (f"SELECT id FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) AS rn "
         f"FROM ({JOINED})) WHERE rn = 1")
    s = session("streaming", parallelism)
    assert "Deduplicate" not in s.sql(q).explain()
    assert s.sql(q).collect().to_pylist() == [{"id": 1}]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_time_bounds_over_a_regular_join_are_a_regular_join_condition(parallelism: int) -> None:
    q = (f"SELECT x.id, p.oid FROM ({JOINED}) x JOIN pay p ON x.id = p.oid "
         "AND p.ts BETWEEN x.ts AND x.ts + INTERVAL '3' MINUTE")
    s = session("streaming", parallelism)
    assert "IntervalJoin" not in s.sql(q).explain()
    assert s.sql(q).collect().to_pylist() == [{"id": 1, "oid": 1}]
