"""A GROUP BY over another GROUP BY's changes on Structured Streaming (Spark's own
aggregations cannot feed one another: its global-watermark check fails the query at run
time): the chain runs as our stateful operator (runtime/spark/stateful.py), each GROUP BY over
the changes of the one before, retractions included, and gives the native runtime's final rows
with the source read in several micro-batches. Its neighbours: HAVING on either level, three
levels, DISTINCT aggregates, a join below the chain; a join of two updating aggregates is
refused by name before Spark runs anything, and a window over an aggregate's rows is refused
as natively."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from tests.nexmark import rows, session

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}


def _events() -> pa.Table:
    rng = random.Random(3)
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=i * 10) for i in range(300)]
    return pa.table({"a": [rng.randint(0, 9) for _ in ts],
                     "b": [rng.choice([None, *range(50)]) for _ in ts],
                     "ts": pa.array(ts, pa.timestamp("ms"))})


CHAINS = {
    "min-then-count": "SELECT COUNT(*) AS n, SUM(h) AS s FROM (SELECT a, b % 7 AS k, "
                      "MIN(b) AS h FROM e GROUP BY a, b % 7)",
    "having-below": "SELECT COUNT(*) AS n, SUM(h) AS s FROM (SELECT a, MIN(b) AS h FROM e "
                    "GROUP BY a HAVING COUNT(*) > 28)",
    # (k NULL for a NULL b: a NULL key of the first GROUP BY)
    "having-above": "SELECT k, COUNT(*) AS n, SUM(h) AS s FROM (SELECT a, b % 7 AS k, "
                    "MIN(b) AS h FROM e GROUP BY a, b % 7) GROUP BY k HAVING SUM(h) > 20",
    "three-levels": "SELECT COUNT(*) AS n, SUM(c) AS s FROM (SELECT n, COUNT(*) AS c FROM "
                    "(SELECT a, COUNT(*) AS n FROM e GROUP BY a) GROUP BY n)",
    "distinct": "SELECT COUNT(DISTINCT h) AS d, SUM(DISTINCT h) AS sd, AVG(DISTINCT h) AS ad, "
                "MAX(n) AS mx FROM (SELECT a, MAX(b) AS h, COUNT(DISTINCT b) AS n FROM e "
                "GROUP BY a)",
    "max-as-key": "SELECT h, COUNT(*) AS n, AVG(s) AS av, MIN(s) AS mn FROM (SELECT a, "
                  "MAX(b) AS h, SUM(b) AS s FROM e WHERE b IS NOT NULL GROUP BY a) GROUP BY h",
}


@pytest.mark.parametrize("name", list(CHAINS))
def test_a_group_by_of_a_group_by_gives_natives_rows(name: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlengine.runtime.spark import streaming

    # (the source in three micro-batches: the first GROUP BY's results change between them,
    # so the second takes their retractions)
    monkeypatch.setattr(streaming, "_MICRO_BATCHES", 3)
    events = _events()
    got = {}
    for engine, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("e", events, rowtime="ts")
        got[engine] = rows([tuple(r.values()) for r in
                            s.sql(CHAINS[name]).collect().to_pylist()])
    assert got["spark"] == got["native"] and got["native"]


def test_a_micro_batch_retracts_what_the_one_before_emitted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain's own changes across micro-batches: the first GROUP BY's MIN for a key goes
    down in a later micro-batch, and the second GROUP BY's count for the old value goes back
    (a -U / +U pair the driver applies), as on the native runtime."""
    from sqlengine.runtime.spark import streaming

    monkeypatch.setattr(streaming, "_MICRO_BATCHES", 2)
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i) for i in range(4)]
    events = pa.table({"a": [1, 2, 1, 2], "b": [5, 5, 3, 7],
                       "ts": pa.array(ts, pa.timestamp("ms"))})
    sql = "SELECT h, COUNT(*) AS n FROM (SELECT a, MIN(b) AS h FROM e GROUP BY a) GROUP BY h"
    got = {}
    for engine, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("e", events, rowtime="ts")
        got[engine] = rows([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()])
    # (after the first micro-batch: h=5 for both keys; after the second, a's MIN is 3)
    assert got["spark"] == got["native"] == [(3, 1), (5, 1)]


def test_a_chain_over_a_join_gives_natives_rows() -> None:
    """Three GROUP BYs over a join (was refused as two stateful operators)."""
    sql = ("SELECT COUNT(*) AS n, SUM(a) AS s FROM (SELECT Q.category, AVG(Q.final) AS a FROM "
           "(SELECT MAX(B.price) AS final, A.category FROM auction AS A JOIN bid AS B ON "
           "A.id = B.auction GROUP BY A.id, A.category) AS Q GROUP BY Q.category)")
    got = {engine: rows([tuple(r.values()) for r in
                         session(2000, options).sql(sql).collect().to_pylist()])
           for engine, options in (("spark", STREAMING), ("native", None))}
    assert got["spark"] == got["native"] and got["native"][0][0] > 1


def test_a_window_over_an_aggregates_rows_is_refused_as_natively() -> None:
    """An aggregate's MAX(ts) is no time attribute: the window TVF is refused in streaming
    mode on both runtimes, with the same message."""
    messages = []
    for options in (STREAMING, {}):
        s = sqlengine.connect(options)
        s.register("e", _events(), rowtime="ts")
        s.execute("CREATE TEMPORARY VIEW v AS SELECT a, MAX(ts) AS t FROM e GROUP BY a")
        with pytest.raises(SqlEngineError, match="'t' is not a time attribute") as info:
            s.sql("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE v, DESCRIPTOR(t), "
                  "INTERVAL '1' SECOND)) GROUP BY window_start, window_end").collect()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_a_self_join_of_a_group_by_gives_natives_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both sides of the join read one GROUP BY (the same vertex), which is in Spark's plan
    twice: it failed with Spark's "Multiple applyInPandasWithStates are not supported"; it
    runs as a transformWithStateInPandas now."""
    from sqlengine.runtime.spark import streaming

    monkeypatch.setattr(streaming, "_MICRO_BATCHES", 2)
    events = _events().slice(0, 60)
    sql = ("SELECT x.a, x.n, y.n FROM (SELECT a, COUNT(*) AS n FROM e GROUP BY a) x "
           "JOIN (SELECT a, COUNT(*) AS n FROM e GROUP BY a) y ON x.a = y.a")
    got = {}
    for engine, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("e", events, rowtime="ts")
        got[engine] = rows([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()])
    assert got["spark"] == got["native"] and len(got["native"]) == 10


def test_a_cascading_window_aggregation_gives_natives_rows() -> None:
    """A window aggregation over another's window_time (Flink's cascading window
    aggregation): Spark refused it ("append ... not supported for streaming aggregations
    without watermark"): the first aggregation's window_time key now carries the event-time
    metadata its window_end has."""
    sql = ("SELECT window_start, window_end, SUM(n) AS n, COUNT(*) AS c, MAX(s1) AS last "
           "FROM TABLE(TUMBLE(TABLE w1, DESCRIPTOR(rt), INTERVAL '1' SECOND)) "
           "GROUP BY window_start, window_end")
    got = {}
    for engine, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("e", _events(), rowtime="ts")
        s.execute("CREATE TEMPORARY VIEW w1 AS SELECT window_start AS s1, window_time AS rt, "
                  "a, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL "
                  "'200' MILLISECOND)) GROUP BY a, window_start, window_end, window_time")
        got[engine] = rows([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()])
    assert got["spark"] == got["native"] and sum(r[2] for r in got["native"]) == 300


def test_refusals_name_the_window_join_and_the_window_functions() -> None:
    """A LEFT window join was refused with the regular join's reason ('a regular join keeps
    its state for ever'), a ROW_NUMBER over a GROUP BY's changes as 'WindowFunctions(...)';
    both name what the query wrote now, before Spark runs anything."""
    s = sqlengine.connect(STREAMING)
    s.register("e", _events(), rowtime="ts")
    window = ("(SELECT window_start, window_end, a, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, "
              "DESCRIPTOR(ts), INTERVAL '1' SECOND)) GROUP BY window_start, window_end, a) "
              "{side}")
    sql = (f"SELECT l.a, r.n FROM {window.format(side='l')} LEFT JOIN "
           f"{window.format(side='r')} ON l.window_start = r.window_start AND "
           "l.window_end = r.window_end AND l.a = r.a")
    with pytest.raises(SqlEngineError, match="a LEFT window join has no Spark Structured "
                                             "Streaming translation yet"):
        s.sql(sql).explain()
    ranked = ("SELECT * FROM (SELECT a, n, ROW_NUMBER() OVER (ORDER BY n DESC) AS r FROM "
              "(SELECT a, COUNT(*) AS n FROM e GROUP BY a)) WHERE r <= 3 AND a > 0")
    with pytest.raises(SqlEngineError, match=r"the window functions ROW_NUMBER\(\) "
                                             "over a stream .* has no Spark Structured "
                                             "Streaming translation yet"):
        s.sql(ranked).collect()
