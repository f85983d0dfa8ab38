"""The same SQL on the Spark runtime and the native one gives the same rows (batch mode)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import NotSupportedError
from tests.nexmark import (
    REFERENCES,
    queries,
    query,
    reference_db,
    result_rows,
    rows,
    session,
)
from tests.querygen import make_tables, pairs
from tests.scenarios import scenario_results

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]
SPARK = {"execution.target": "spark", "execution.runtime-mode": "batch",
         "spark.master": "local[2]"}
NATIVE = {"execution.runtime-mode": "batch"}

# Gaps, each with its reason (the query fails at plan time on Spark with this error).
NOTIMPL: dict[str, str] = {}



SCENARIOS = sorted((ROOT / "queries").glob("*.sql"))


# Scenarios Spark cannot run yet (refused before a Spark job starts): declared gaps.
SCENARIO_SPARK_NOTIMPL = {
    "flink_features": "ARRAY / ROW values, UNNEST and changelog sources",
}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
@pytest.mark.usefixtures("repo_cwd")
def test_scenario_same_rows(path: Path) -> None:
    if path.stem in SCENARIO_SPARK_NOTIMPL:
        assert scenario_results(path, SPARK)[0] == ("error", "NotSupportedError")
        return
    assert scenario_results(path, SPARK) == scenario_results(path, NATIVE)


PAIRS = pairs(140)[::4]


@pytest.mark.parametrize("pair", PAIRS, ids=[f"g{i:03d}" for i in range(len(PAIRS))])
def test_generated_query_same_rows(pair) -> None:  # type: ignore[no-untyped-def]
    got = {}
    for name, options in (("spark", SPARK), ("native", NATIVE)):
        s = sqlengine.connect(options)
        for t, data in make_tables().items():
            s.register(t, data)
        result = [tuple(r.values()) for r in s.sql(pair.flink).collect().to_pylist()]
        got[name] = rows(result) if not pair.ordered else result
    assert got["spark"] == got["native"], pair.flink


@pytest.fixture(scope="module")
def duck():  # type: ignore[no-untyped-def]
    pytest.importorskip("duckdb")
    return reference_db(20_000)


@pytest.mark.parametrize("name", list(queries()))
@pytest.mark.usefixtures("repo_cwd")
def test_nexmark_on_spark(name: str, duck) -> None:  # type: ignore[no-untyped-def]
    s = session(20_000, SPARK)
    if name in NOTIMPL:
        with pytest.raises(NotSupportedError):
            query(s, queries()[name]).collect()
        return
    got = result_rows(name, query(s, queries()[name]).collect())
    assert got == rows(duck.sql(REFERENCES[name]).fetchall())


def test_unsupported_streaming_operator_is_refused_at_plan_time() -> None:
    s = sqlengine.connect(STREAMING)
    s.register("t", __import__("pyarrow").table({"k": ["a", "b"], "v": [1, 2],
                                                 "ts": [dt.datetime(2024, 1, 1),
                                                        dt.datetime(2024, 1, 1, 0, 0, 1)]}),
               rowtime="ts")
    with pytest.raises(NotSupportedError, match="deduplication keeps, of rows with equal"):
        s.sql("SELECT * FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) "
              "AS rn FROM t) WHERE rn = 1").collect()
    with pytest.raises(NotSupportedError, match="directly over a window TVF"):
        s.sql("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, "
              "window_end ORDER BY v) AS rn FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
              "INTERVAL '1' SECOND))) WHERE rn = 1").collect()


def test_explain_shows_the_spark_plan() -> None:
    s = sqlengine.connect(SPARK)
    s.register("t", __import__("pyarrow").table({"k": ["a", "b", "a"], "v": [1, 2, 3]}))
    text = s.sql("SELECT k, SUM(v) AS s FROM t GROUP BY k").explain()
    assert "== Spark Plan ==" in text and "HashAggregate" in text


def test_explain_on_structured_streaming_shows_the_plan_spark_runs() -> None:
    """Built under the query's own settings: its WHERE stays above the watermark (the plan
    without them pushed it below, which is not what runs)."""
    s = sqlengine.connect({"execution.target": "spark", "spark.master": "local[2]"})
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i) for i in range(6)]
    s.register("e", __import__("pyarrow").table({"a": list(range(6)), "ts": ts}), rowtime="ts")
    text = s.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), "
                 "INTERVAL '2' SECOND)) WHERE a > 3 GROUP BY window_start, window_end").explain()
    nodes = [line.split(")", 1)[1].split()[0] for line in text.splitlines()
             if line.startswith("(") and ")" in line]  # (the formatted plan's nodes, leaves first)
    assert "EventTimeWatermark" in nodes and "Filter" in nodes
    assert nodes.index("Filter") > nodes.index("EventTimeWatermark")


STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}
# Streaming mode on Structured Streaming: what is not translated yet, with the reason.
STREAMING_NOTIMPL: dict[str, str] = {}


@pytest.mark.parametrize("name", list(queries()))
@pytest.mark.usefixtures("repo_cwd")
def test_nexmark_on_structured_streaming(name: str, duck) -> None:  # type: ignore[no-untyped-def]
    s = session(20_000, STREAMING)
    if name in STREAMING_NOTIMPL:
        with pytest.raises(NotSupportedError):
            query(s, queries()[name]).collect()
        return
    # (q12: processing-time windows, compared as bids per bidder)
    got = result_rows(name, query(s, queries()[name]).collect())
    assert got == rows(duck.sql(REFERENCES[name]).fetchall())


@pytest.mark.parametrize("window", [
    "TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)",
    "HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
    "SESSION(TABLE bid PARTITION BY auction, DESCRIPTOR(dateTime), INTERVAL '2' SECOND)",
    "CUMULATE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
], ids=["tumble", "hop", "session", "cumulate"])
def test_window_aggregates_flush_every_window(window: str) -> None:
    sql = (f"SELECT auction, window_start, window_end, COUNT(*) AS n, MAX(price) AS top FROM "
           f"TABLE({window}) GROUP BY auction, window_start, window_end")
    native = rows([tuple(r.values()) for r in session(20_000).sql(sql).collect().to_pylist()])
    spark = rows([tuple(r.values()) for r in
                  session(20_000, STREAMING).sql(sql).collect().to_pylist()])
    assert spark == native and len(native) > 100


@pytest.mark.parametrize("tvf", [
    "TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)",
    "HOP(DATA => TABLE bid, TIMECOL => DESCRIPTOR(dateTime), SLIDE => INTERVAL '5' SECOND, "
    "SIZE => INTERVAL '10' SECOND)",
], ids=["tumble", "hop-named"])
def test_a_window_tvf_on_its_own_on_structured_streaming(tvf: str) -> None:
    # (on main: an Arrow cast error, the window struct Spark's aggregation needs leaking out)
    sql = f"SELECT auction, price, window_start, window_end, window_time FROM {tvf}"
    native = rows([tuple(r.values()) for r in session(5_000).sql(sql).collect().to_pylist()])
    spark = rows([tuple(r.values()) for r in
                  session(5_000, STREAMING).sql(sql).collect().to_pylist()])
    assert spark == native and len(native) > 1000


def test_window_top_n_over_a_window_aggregate_on_structured_streaming() -> None:
    sql = ("SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
           "ORDER BY n DESC, auction) AS rn FROM (SELECT auction, window_start, window_end, "
           "COUNT(*) AS n FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '250' "
           "MILLISECOND, INTERVAL '1' SECOND)) GROUP BY auction, window_start, window_end)) "
           "WHERE rn <= 3")
    native = rows([tuple(r.values()) for r in session(20_000).sql(sql).collect().to_pylist()])
    spark = rows([tuple(r.values()) for r in
                  session(20_000, STREAMING).sql(sql).collect().to_pylist()])
    assert spark == native and len(native) > 20


def _slow_nexmark(events: int, options: dict[str, str] | None = None,
                  disorder_ms: int = 0) -> sqlengine.Session:
    """Nexmark at 200 events/s: 20,000 events span 100 s, so 10 s windows are many."""
    s = session(events, options)
    for t in ("person", "auction", "bid"):
        s.execute(f"ALTER TABLE {t} SET ('nexmark.events-per-second' = '200', "
                  f"'nexmark.out-of-orderness' = '{disorder_ms}')")
    return s


@pytest.mark.parametrize(("name", "disorder_ms"), [
    ("q5", 0), ("q7", 0), ("q8", 0),
    # (disorder within the sources' 4 s watermark bound: no row is late on either runtime)
    ("q5", 3000), ("q8", 3000),
], ids=["q5", "q7", "q8", "q5-disorder", "q8-disorder"])
@pytest.mark.usefixtures("repo_cwd")
def test_window_joins_and_joins_over_window_aggregates_on_structured_streaming(
        name: str, disorder_ms: int) -> None:
    """A window join of two window aggregates (q8), of a window aggregate and a window
    aggregate over it (q5), and a regular join of a window aggregate with a stream (q7): one
    Structured Streaming query in append mode (Spark's chained stateful operators), each
    window aggregate's window_end its event time, so the join evicts, and drops late, a window
    once the watermark passes its end."""
    native = rows([tuple(r.values()) for r in query(
        _slow_nexmark(20_000, None, disorder_ms), queries()[name]).collect().to_pylist()])
    spark = rows([tuple(r.values()) for r in query(
        _slow_nexmark(20_000, STREAMING, disorder_ms), queries()[name]).collect().to_pylist()])
    assert spark == native and len(native) >= 10


def test_a_window_over_a_regular_join_is_refused_on_both_runtimes() -> None:
    """A regular join's time columns are no time attributes in streaming mode (as in Flink:
    its rows come whenever their match does), so a window over them is refused, on Spark as
    natively (it ran on both, its rows dropped as late or not by timing)."""
    from sqlengine.errors import SqlEngineError

    for options in (STREAMING, None):
        s = _slow_nexmark(20_000, options)
        s.execute("CREATE TEMPORARY VIEW j AS SELECT B.auction, B.price, B.dateTime, "
                  "A.category FROM bid AS B JOIN auction AS A ON B.auction = A.id")
        with pytest.raises(SqlEngineError, match="is not a time attribute: it comes out of a "
                                                 "regular join"):
            s.sql("SELECT category, window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE("
                  "TABLE j, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) GROUP BY category, "
                  "window_start, window_end").collect()


JOIN_SHAPES = {
    # a window join of two window TVFs (no aggregation)
    "tvf-window-join": (
        "",
        "SELECT L.auction, L.price, R.seller, L.window_start FROM (SELECT * FROM TABLE(TUMBLE("
        "TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) AS L JOIN (SELECT * FROM "
        "TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))) AS R "
        "ON L.auction = R.id AND L.window_start = R.window_start "
        "AND L.window_end = R.window_end"),
}


@pytest.mark.parametrize("shape", list(JOIN_SHAPES))
def test_other_joins_with_windows_on_structured_streaming(shape: str) -> None:
    setup, sql = JOIN_SHAPES[shape]
    got = {}
    for name, options in (("spark", STREAMING), ("native", None)):
        s = _slow_nexmark(20_000, options)
        if setup:
            s.execute(setup)
        got[name] = rows([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()])
    assert got["spark"] == got["native"] and len(got["native"]) >= 40


def test_updating_group_by_and_top_n_on_structured_streaming() -> None:
    """A GROUP BY of a join (COUNT, SUM, AVG, MIN, MAX, with FILTER and NULLs) and a Top-N
    with its row number and NULLs in the ORDER BY, as our stateful operators
    (applyInPandasWithState) keep them: their changes, applied, are native's final rows."""
    import random

    import pyarrow as pa

    rng = random.Random(11)
    n = 2000
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=i * 10) for i in range(n)]
    facts = pa.table({"k": [rng.randint(0, 40) for _ in ts],
                      "x": [rng.choice([None, *range(-50, 50)]) for _ in ts],
                      "d": [rng.choice([None, 0.5, 1.25, -2.0]) for _ in ts],
                      "ts": pa.array(ts, pa.timestamp("ms"))})
    dim = pa.table({"id": list(range(40)), "g": [f"g{i % 6}" for i in range(40)]})
    sqls = [
        "SELECT g, COUNT(*) AS n, COUNT(x) AS cx, SUM(x) AS sx, AVG(x) AS ax, MIN(x) AS mn, "
        "MAX(d) AS md, SUM(d) FILTER (WHERE x > 0) AS sd FROM f JOIN dim ON f.k = dim.id "
        "GROUP BY g",
        "SELECT * FROM (SELECT k, x, d, ts, ROW_NUMBER() OVER (PARTITION BY k ORDER BY x DESC "
        "NULLS FIRST, d ASC) AS rn FROM f) WHERE rn <= 3",
        # (a GROUP BY of a GROUP BY's changes: one stateful operator; MIN / MAX retract)
        "SELECT g, COUNT(*) AS n, MIN(sx) AS mn, MAX(sx) AS mx, AVG(sx) AS a FROM (SELECT "
        "dim.g, f.k, SUM(f.x) AS sx FROM f JOIN dim ON f.k = dim.id GROUP BY dim.g, f.k) "
        "WHERE sx > -200 GROUP BY g",
    ]
    got = {}
    for name, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("f", facts, rowtime="ts")
        s.register("dim", dim)
        got[name] = [rows([tuple(r.values()) for r in s.sql(q).collect().to_pylist()])
                     for q in sqls]
    assert got["spark"] == got["native"]
    assert len(got["native"][0]) == 6 and len(got["native"][1]) > 100
    assert len(got["native"][2]) >= 5


@pytest.mark.parametrize("group", [
    "GROUP BY k",
    "GROUP BY k, window_start, window_end",
], ids=["group-by", "tumble"])
def test_distinct_aggregates_on_structured_streaming(group: str) -> None:
    """COUNT / SUM / AVG / MIN (DISTINCT x), with FILTER, NULLs among the values and groups
    with no value: Spark's streaming aggregations have no DISTINCT aggregates; they run as
    aggregates of collect_set(x)."""
    import random

    import pyarrow as pa

    rng = random.Random(7)
    n = 3000
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=i * 20) for i in range(n)]
    data = pa.table({
        # (a NULL key only without a window: the native window aggregate counts no
        # DISTINCT value in a NULL key's group, a bug of its own, reported)
        "k": [rng.choice(["a", "b", "c", None if "window" not in group else "d"])
              for _ in ts],
        "x": [rng.choice([None, *range(40)]) for _ in ts],
        "d": [rng.choice([None, 0.5, 1.25, 2.0]) for _ in ts],
        "ts": pa.array(ts, pa.timestamp("ms"))})
    source = ("TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
              if "window" in group else "t")
    sql = (f"SELECT k, COUNT(DISTINCT x) AS cx, COUNT(DISTINCT x) FILTER (WHERE x > 30) AS cf, "
           f"SUM(DISTINCT x) AS sx, SUM(DISTINCT x) FILTER (WHERE x > 100) AS snone, "
           f"AVG(DISTINCT x) AS ax, SUM(DISTINCT d) AS sd, AVG(DISTINCT d) AS ad, "
           f"MIN(DISTINCT x) AS mx, COUNT(*) AS n FROM {source} {group}")
    got = {}
    for name, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("t", data, rowtime="ts")
        got[name] = rows([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()])
    assert got["spark"] == got["native"] and len(got["native"]) >= 4


_BOTH_TIMES = (
    "CREATE TEMPORARY VIEW bid_p AS SELECT *, PROCTIME() AS p_time FROM bid;\n"
    "SELECT bidder, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bid_p, DESCRIPTOR(p_time), "
    "INTERVAL '10' SECOND)) GROUP BY bidder, window_start, window_end UNION ALL "
    "SELECT bidder, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), "
    "INTERVAL '10' SECOND)) GROUP BY bidder, window_start, window_end")


@pytest.mark.parametrize(("script", "reason"), [
    (_BOTH_TIMES, "processing-time windows together with event-time windows"),
], ids=["proctime-and-event-time-windows"])
@pytest.mark.usefixtures("repo_cwd")
def test_what_structured_streaming_cannot_run_is_refused_with_the_reason(
        script: str, reason: str) -> None:
    with pytest.raises(NotSupportedError, match=reason):
        query(session(100, STREAMING), script).collect()


def test_order_by_limit_over_an_append_stream() -> None:
    sql = ("SELECT auction, price FROM bid WHERE price > 1000 ORDER BY price DESC, auction "
           "LIMIT 7")
    native = session(20_000).sql(sql).collect().to_pylist()
    assert session(20_000, STREAMING).sql(sql).collect().to_pylist() == native
    assert len(native) == 7


# Scenarios in streaming mode (the files' own default) on Structured Streaming: declared gaps.
SCENARIO_STREAMING_NOTIMPL: dict[str, str] = {}  # ("orders", a LEFT JOIN, runs since the
# native join runs in our stateful operator: runtime/spark/stateful_join.py)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
@pytest.mark.usefixtures("repo_cwd")
def test_scenario_on_structured_streaming(path: Path) -> None:
    streaming = {k: v for k, v in SPARK.items() if k != "execution.runtime-mode"}
    got = scenario_results(path, streaming)
    if path.stem in SCENARIO_SPARK_NOTIMPL:
        assert got[0] == ("error", "NotSupportedError")
        return
    if path.stem in SCENARIO_STREAMING_NOTIMPL:
        assert got[-1] == ("error", "NotSupportedError")
        return
    assert got == scenario_results(path, {})


def test_the_optimizers_broadcast_join_becomes_a_spark_broadcast() -> None:
    import numpy as np
    import pyarrow as pa

    opts = {**SPARK, "parallelism.default": "2", "spark.sql.autoBroadcastJoinThreshold": "-1"}
    s = sqlengine.connect(opts)
    s.register("facts", pa.table({"k": np.arange(5000) % 50, "v": np.arange(5000)}))
    s.register("dim", pa.table({"k": np.arange(50), "name": [f"n{i}" for i in range(50)]}))
    q = s.sql("SELECT f.k, d.name, f.v FROM facts AS f JOIN dim AS d ON f.k = d.k")
    text = q.explain()
    assert "--BROADCAST" in text and "BroadcastHashJoin" in text
    assert q.collect().num_rows == 5000


@pytest.mark.parametrize("spark", [SPARK, STREAMING], ids=["batch", "streaming"])
def test_two_phase_aggregation_runs_on_spark_as_one_aggregation(spark: dict[str, str]
                                                                ) -> None:
    import numpy as np
    import pyarrow as pa

    data = pa.table({"k": np.arange(5000) % 7, "v": np.arange(5000) * 1.5})
    sql = "SELECT k, COUNT(*) AS n, AVG(v) AS a, MAX(v) AS m FROM t GROUP BY k"
    got = {}
    for name, opts in (("spark", {**spark, "parallelism.default": "2",
                                  "table.optimizer.agg-phase-strategy": "TWO_PHASE"}),
                       ("native", NATIVE)):
        s = sqlengine.connect(opts)
        s.register("t", data)
        q = s.sql(sql)
        if name == "spark":
            assert "LocalAggregate" in q.explain()
        got[name] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
    assert got["spark"] == got["native"]


ORDERED = {
    # a range-partitioned sort is one orderBy
    "SELECT k, v FROM t ORDER BY k DESC, v": "RangeSample",
    # a sort dropped for an order already there keeps it
    "SELECT k, v FROM (SELECT k, v FROM t ORDER BY k DESC, v LIMIT 50) ORDER BY k DESC":
        "one Sort",
    "SELECT v, k FROM (SELECT k, v FROM t ORDER BY k, v LIMIT 40) ORDER BY k LIMIT 7":
        "one Sort",
}


@pytest.mark.parametrize("spark", [SPARK, STREAMING], ids=["batch", "streaming"])
@pytest.mark.parametrize("sql", list(ORDERED))
def test_orders_the_optimizer_rewrote_hold_on_spark(sql: str, spark: dict[str, str]) -> None:
    import numpy as np
    import pyarrow as pa

    data = pa.table({"k": (np.arange(3000) * 7919) % 1000, "v": np.arange(3000)})
    got = {}
    for name, opts in (("spark", {**spark, "parallelism.default": "2"}), ("native", NATIVE)):
        s = sqlengine.connect(opts)
        s.register("t", data)
        q = s.sql(sql)
        if name == "spark":
            job = q.explain().split("== Job Graph ==")[1]
            assert job.count("Sort(") == 1 if ORDERED[sql] == "one Sort" \
                else ORDERED[sql] in job
        got[name] = [tuple(r.values()) for r in q.collect().to_pylist()]
    assert got["spark"] == got["native"]


def test_on_event_watermarks_are_refused_on_structured_streaming(tmp_path: Path) -> None:
    (tmp_path / "t.csv").write_text("1,2024-01-01 00:00:01\n")
    s = sqlengine.connect(STREAMING)
    s.execute(f"CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path}/t.csv', 'format' = 'csv', "
              "'scan.watermark.emit.strategy' = 'on-event')")
    with pytest.raises(NotSupportedError, match="once per micro-batch"):
        s.sql("SELECT a FROM t").collect()


@pytest.mark.parametrize("tvf", [
    "CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '10' SECOND)",
    "CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '3' SECOND, INTERVAL '9' SECOND, "
    "INTERVAL '1' SECOND)",
])
def test_cumulate_windows_on_spark_batch(tvf: str) -> None:
    """Spark has no CUMULATE window: each row is exploded into the windows of its bucket that
    end after it, as the native assigner (Flink's) puts it."""
    import random

    import pyarrow as pa

    rng = random.Random(3)
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=rng.randint(0, 60_000))
          for _ in range(2000)]
    data = pa.table({"k": [rng.randint(1, 5) for _ in ts], "ts": pa.array(ts, pa.timestamp("ms")),
                     "x": [rng.randint(1, 100) for _ in ts]})
    got = {}
    for name, options in (("spark", SPARK), ("native", NATIVE)):
        s = sqlengine.connect(options)
        s.register("t", data, rowtime="ts")
        got[name] = {
            "agg": rows([tuple(r.values()) for r in s.sql(
                f"SELECT k, window_start, window_end, COUNT(*) AS n, SUM(x) AS s FROM TABLE({tvf}) "
                "GROUP BY k, window_start, window_end").collect().to_pylist()]),
            "tvf": rows([tuple(r.values()) for r in s.sql(
                f"SELECT window_start, window_end, window_time, x FROM TABLE({tvf})"
            ).collect().to_pylist()])}
    assert len(got["native"]["tvf"]) > len(ts)  # (rows land in several windows)
    assert got["spark"] == got["native"]


@pytest.mark.parametrize(("setup", "sql", "message"), [
    ("", "SELECT FIRST_VALUE(x) FROM (VALUES (1), (2)) AS t(x)", "FIRST_VALUE"),
    ("", "SELECT LISTAGG(s) FROM (VALUES ('a')) AS t(s)", "LISTAGG"),
    ("", "SELECT ARRAY_AGG(x) FROM (VALUES (1), (2)) AS t(x)", "ARRAY<INT>"),
    ("", "SELECT PERCENTILE(x, 0.5) FROM (VALUES (1), (2)) AS t(x)", "PERCENTILE"),
    ("", "SELECT ARRAY[x, 2] AS a FROM (VALUES (1)) AS t(x)", "ARRAY<INT>"),
    # (Python functions run on Spark, shipped pickled to its workers: one that does not
    # pickle, holding a lock here, is refused by name)
    ("udf", "SELECT plus_one(x) FROM (VALUES (1)) AS t(x)", "PLUS_ONE cannot run on Spark"),
])
def test_new_features_are_refused_on_spark(setup: str, sql: str, message: str) -> None:
    """What has no Spark translation yet is refused by name, never run with other semantics
    (an unknown aggregate used to fall through to AVG)."""
    s = sqlengine.connect(SPARK)
    if setup == "udf":
        lock = __import__("threading").Lock()
        s.create_function("plus_one", lambda x: lock.locked() + x + 1, "INT")
    with pytest.raises(NotSupportedError, match=message):
        s.sql(sql).collect()


STRINGS = ("(VALUES (1, 'foothebar', 'a%c'), (2, 'abc', 'a_c'), (3, '', CAST(NULL AS STRING)), "
           "(4, CAST(NULL AS STRING), 'x'), (5, 'a\\b', 'a\\%')) AS t(i, s, p)")


def test_string_predicates_and_regexps_on_spark() -> None:
    """REGEXP_EXTRACT's default group (the whole match), REGEXP with an empty pattern, LIKE
    with ESCAPE, LIKE without ESCAPE taking a backslash literally (Spark's own LIKE escapes with
    it), SIMILAR TO (through the native kernel) and IS [NOT] DISTINCT FROM give native's
    rows."""
    sql = (f"SELECT i, REGEXP_EXTRACT(s, 'o+') AS e0, REGEXP_EXTRACT(s, 'f(o+)', 1) AS e1, "
           f"REGEXP(s, '') AS r0, REGEXP(s, 'b.') AS r1, p LIKE 'a!%c' ESCAPE '!' AS l, "
           f"s LIKE 'a\\%' AS b0, s LIKE '%\\b' AS b1, p LIKE 'a\\!%' ESCAPE '!' AS b2, "
           f"s SIMILAR TO '%(b|o)a?r' AS st, "
           f"s IS DISTINCT FROM p AS d, s IS NOT DISTINCT FROM 'abc' AS nd FROM {STRINGS}")
    got = {name: sorted(tuple(r.values()) for r in sqlengine.connect(conf).sql(sql).collect()
                        .to_pylist()) for name, conf in (("native", NATIVE), ("spark", SPARK))}
    assert got["spark"] == got["native"]
    assert got["native"][0][1:3] == ("oo", "oo")
    assert got["native"][4][6:9] == (True, True, True)


def _disordered(events: int, options: dict[str, str] | None = None) -> sqlengine.Session:
    """Nexmark at 200 events/s with 3 s disorder and a 1 s WATERMARK bound: rows arrive
    behind the watermark, and the window operators find some of them late."""
    from tests.nexmark import SUITE

    s = sqlengine.connect(options)
    s.execute((SUITE / "ddl.sql").read_text().replace("NEXMARK_EVENTS", str(events))
              .replace("INTERVAL '4' SECOND", "INTERVAL '1' SECOND"))
    for t in ("person", "auction", "bid"):
        s.execute(f"ALTER TABLE {t} SET ('nexmark.events-per-second' = '200', "
                  "'nexmark.out-of-orderness' = '3000')")
    return s


@pytest.mark.parametrize("window", [
    "TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND)",
    "HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND, INTERVAL '2' SECOND)",
    "CUMULATE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND, INTERVAL '4' SECOND)",
], ids=["tumble", "hop", "cumulate"])
def test_late_rows_are_dropped_and_counted_per_row_on_structured_streaming(window: str
                                                                           ) -> None:
    """Spark's watermark moves once per micro-batch (all these rows are one), so it drops no
    row; the native runtime judges every row against the watermark before it. The rows'
    watermarks, computed as the native source computes them, travel with them to the window
    TVF, which drops (row, window) pairs whose window has fired and counts rows left with
    none: the same rows and the same count on both."""
    sql = (f"SELECT auction % 7 AS a, window_start, window_end, COUNT(*) AS n, "
           f"SUM(price) AS s FROM TABLE({window}) WHERE bidder % 5 <> 0 "
           "GROUP BY auction % 7, window_start, window_end")
    got, late = {}, {}
    for name, options in (("native", None), ("spark", STREAMING)):
        q = _disordered(5_000, options).sql(sql)
        got[name] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
        late[name] = q.late_records_dropped
    assert late["spark"] == late["native"] > 20
    assert got["spark"] == got["native"] and len(got["native"]) > 50


@pytest.mark.usefixtures("repo_cwd")
def test_late_rows_in_a_window_join_on_structured_streaming() -> None:
    """q8 (a window join of two tumbling-window aggregates) on disordered input."""
    got, late = {}, {}
    for name, options in (("native", None), ("spark", STREAMING)):
        q = query(_disordered(20_000, options), queries()["q8"])
        got[name] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
        late[name] = q.late_records_dropped
    assert late["spark"] == late["native"] > 0
    assert got["spark"] == got["native"] and len(got["native"]) >= 10


@pytest.mark.parametrize("gap", ["10", "1"], ids=["q11", "gap-1s"])
def test_late_rows_in_session_windows_on_structured_streaming(gap: str) -> None:
    """SESSION windows over disordered input (q11; and a 1 s gap, where rows 3 s out of
    order are late): the native runtime fires a key's session when the watermark passes its
    end, and a row behind the watermark then starts a session of its own, or is dropped and
    counted; Spark's session_window would merge it. On Spark they run through the native
    session operator (applyInPandasWithState), rows in source order, each judged against the
    watermark before it: the same sessions and the same late count."""
    sql = ("SELECT bidder, COUNT(*) AS n, SUM(price) AS s, window_start, window_end FROM "
           "TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), "
           f"INTERVAL '{gap}' SECOND)) GROUP BY bidder, window_start, window_end")
    got, late = {}, {}
    for name, options in (("native", None), ("spark", STREAMING)):
        q = _disordered(4_000, options).sql(sql)
        got[name] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
        late[name] = q.late_records_dropped
    assert late["spark"] == late["native"]
    assert late["native"] > 20 if gap == "1" else late["native"] == 0
    assert got["spark"] == got["native"] and len(got["native"]) > 50


@pytest.mark.usefixtures("repo_cwd")
def test_late_rows_spark_cannot_judge_as_native_are_refused() -> None:
    # (our own session operator's rows carry no event time for Spark: no window after it)
    s = _disordered(2_000, STREAMING)
    with pytest.raises(NotSupportedError, match="after a SESSION window aggregation over "
                                                "rows behind the watermark"):
        s.execute("CREATE TEMPORARY VIEW sess AS SELECT bidder, window_time AS wt FROM "
                  "TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), "
                  "INTERVAL '1' SECOND)) GROUP BY bidder, window_start, window_end, "
                  "window_time")
        s.sql("SELECT COUNT(*) AS n, window_start FROM TABLE(TUMBLE(TABLE sess, "
              "DESCRIPTOR(wt), INTERVAL '10' SECOND)) GROUP BY window_start, "
              "window_end").collect()
    s = _disordered(2_000, {**STREAMING, "parallelism.default": "2"})
    with pytest.raises(NotSupportedError, match="subtasks interleave"):
        query(s, queries()["q7"]).collect()
    # (in order for the bound: nothing is judged, nothing refused)
    q = query(session(2_000, STREAMING), queries()["q11"])
    assert q.collect().num_rows > 0 and q.late_records_dropped == 0


@pytest.mark.parametrize("source", ["bid", "joined"])
def test_processing_time_windows_on_structured_streaming(source: str) -> None:
    """q12's processing-time windows: PROCTIME() Spark's processing time (the micro-batch's
    current_timestamp()), the windows a GROUP BY of the keys and the window (Spark's own in
    complete mode; over a join, one of our stateful operators). A window one day long holds
    every row of a run that does not cross midnight (UTC): then the rows are native's exactly;
    the bids per bidder always are. Over disordered input nothing is late (processing time
    never is)."""
    view = ("CREATE TEMPORARY VIEW bid_p AS SELECT *, PROCTIME() AS pt FROM bid"
            if source == "bid" else
            "CREATE TEMPORARY VIEW bid_p AS SELECT B.bidder, B.price, PROCTIME() AS pt "
            "FROM bid B JOIN auction A ON B.auction = A.id")
    sql = ("SELECT bidder, COUNT(*) AS n, SUM(price) AS s, window_start, window_end FROM "
           "TABLE(TUMBLE(TABLE bid_p, DESCRIPTOR(pt), INTERVAL '1' DAY)) "
           "GROUP BY bidder, window_start, window_end")
    got, late, days = {}, {}, set()
    for name, options in (("native", None), ("spark", STREAMING)):
        days.add(dt.datetime.now(dt.UTC).date())
        s = _disordered(2_000, options)
        s.execute(view)
        q = s.sql(sql)
        got[name] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
        late[name] = q.late_records_dropped
        days.add(dt.datetime.now(dt.UTC).date())
    assert late == {"native": 0, "spark": 0}
    if len(days) == 1:
        assert got["spark"] == got["native"] and len(got["native"]) > 30
    assert all(r[4] - r[3] == 86_400_000 for r in got["spark"])
    per_bidder = {n: sorted(_sums(g).items(), key=str) for n, g in got.items()}
    assert per_bidder["spark"] == per_bidder["native"]


def _sums(result: list[tuple]) -> dict[object, tuple[int, int]]:
    """(bids, total price) per bidder, over all of its windows."""
    out: dict[object, tuple[int, int]] = {}
    for bidder, n, total, *_ in result:
        a, b = out.get(bidder, (0, 0))
        out[bidder] = (a + n, b + total)
    return out


def test_floating_join_keys_on_spark() -> None:
    """-0.0 meets 0.0 and NaN meets nothing on Spark as in native joins (Spark's own = joins
    NaN to NaN)."""
    a = ("(VALUES (1, CAST('0.0' AS DOUBLE)), (2, CAST('-0.0' AS DOUBLE)), "
         "(3, CAST('NaN' AS DOUBLE)), (4, CAST(1.5 AS DOUBLE))) AS a(id, d)")
    b = ("(VALUES (10, CAST('-0.0' AS DOUBLE)), (20, CAST('NaN' AS DOUBLE)), "
         "(30, CAST(1.5 AS DOUBLE))) AS b(k, d)")
    for sql in (f"SELECT a.id, b.k FROM {a} JOIN {b} ON a.d = b.d",
                f"SELECT a.id, b.k FROM {a} LEFT JOIN {b} ON a.d = b.d"):
        got = {name: sorted(tuple(r.values()) for r in sqlengine.connect(conf).sql(sql)
                            .collect().to_pylist()) for name, conf in (("native", NATIVE),
                                                                        ("spark", SPARK))}
        assert got["spark"] == got["native"], sql
        assert (3, 20) not in got["native"] and (2, 10) in got["native"]
