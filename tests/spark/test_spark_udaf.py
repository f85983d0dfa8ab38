"""Python aggregate functions (@sqlengine.udaf) on the Spark runtime: each call is a
grouped-aggregate pandas UDF running our accumulator code in Spark's Python workers (the
function shipped pickled with the plan), in GROUP BY, window TVF aggregations, SESSION windows
and OVER frames, beside built-in aggregates. Spark batch gives the native runtime's rows and
the built-in aggregates' answers. On Structured Streaming (window aggregations: each window's
rows collected, the function run as it is emitted; GROUP BY: our stateful operator keeping each
key's accumulator) the final rows are native streaming's; OVER, and a function without
retract() over an updating input, are refused by name."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import NotSupportedError, SqlEngineError
from tests.sqlengine.test_udaf import FUNCTIONS, SHAPES, _data, _same

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

NATIVE = {"execution.runtime-mode": "batch"}
SPARK = {"execution.target": "spark", "execution.runtime-mode": "batch",
         "spark.master": "local[2]"}
STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}


def _session(options: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(options)
    for name, f in FUNCTIONS.items():
        s.create_function(name, f)
    s.register("e", _data(), rowtime="ts")
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)


def _unwindowed(sql: str) -> str:
    """An OVER shape's query with its WINDOW clause written into each OVER."""
    if " WINDOW w AS " not in sql:
        return sql
    head, spec = sql.split(" WINDOW w AS ")
    return head.replace("OVER w", f"OVER {spec}")


# (CUMULATE and HOP as TUMBLE: the same translation of the aggregation; one OVER frame of each
# kind)
CASES = ["group-by", "global", "tumble", "session", "over-rows", "over-range"]


@pytest.mark.parametrize("shape", CASES)
def test_spark_batch_matches_native_and_the_built_ins(shape: str) -> None:
    py, sql = (_unwindowed(q) for q in SHAPES[shape])
    spark, native = _session(SPARK), _session(NATIVE)
    got = _rows(spark, py)
    _same(got, _rows(native, py))
    _same(got, _rows(spark, sql))


def test_distinct_filter_and_a_retracting_shape_on_spark() -> None:
    spark, native = _session(SPARK), _session(NATIVE)
    q = ("SELECT k, py_sum(DISTINCT w) AS a, py_sum(v) FILTER (WHERE v > 10) AS b, "
         "pavg(DISTINCT v) AS c FROM e GROUP BY k")
    _same(_rows(spark, q), _rows(spark, "SELECT k, SUM(DISTINCT w) AS a, SUM(v) FILTER (WHERE "
                                        "v > 10) AS b, AVG(DISTINCT CAST(v AS DOUBLE)) AS c "
                                        "FROM e GROUP BY k"))
    nested = ("SELECT k % 2 AS g, py_sum(v) AS s, wavg(v, w) AS wa FROM (SELECT k, SUM(v) AS v, "
              "MAX(w) AS w FROM e GROUP BY k) GROUP BY k % 2")
    _same(_rows(spark, nested), _rows(native, nested))


NATIVE_STREAMING = {"execution.runtime-mode": "streaming"}
MIXED = {
    # (DISTINCT, FILTER and built-in aggregates beside them, in one aggregation)
    "group-by": "SELECT k, py_sum(DISTINCT w) AS a, py_sum(v) FILTER (WHERE v > 10) AS b, "
                "pavg(DISTINCT v) AS c, COUNT(*) AS n, MAX(v) AS m FROM e GROUP BY k",
    "tumble": "SELECT k, window_start, window_end, py_sum(DISTINCT w) AS a, py_sum(v) FILTER "
              "(WHERE v > 10) AS b, SUM(v) AS s, pavg(v) AS p FROM TABLE(TUMBLE(TABLE e, "
              "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end",
    # (a GROUP BY of a GROUP BY's changes: one stateful operator for both)
    "nested": "SELECT k % 2 AS g, py_sum(v) AS s, wavg(v, w) AS wa, pavg(v) AS p FROM (SELECT "
              "k, SUM(v) AS v, MAX(w) AS w FROM e GROUP BY k) GROUP BY k % 2",
}


@pytest.mark.parametrize("shape", ["tumble", "group-by"])
def test_structured_streaming_matches_native_streaming(shape: str) -> None:
    """Class aggregates (PY_SUM, WAVG) and vectorised ones (pandas PAVG, arrow AWAVG), and
    the same with DISTINCT, FILTER and built-in aggregates beside them: Spark Structured
    Streaming's final rows are native streaming's (and the built-in aggregates')."""
    spark, native = _session(STREAMING), _session(NATIVE_STREAMING)
    py, sql = SHAPES[shape]
    got = _rows(spark, py)
    _same(got, _rows(native, py))
    _same(got, _rows(native, sql))
    _same(_rows(spark, MIXED[shape]), _rows(native, MIXED[shape]))
    if shape == "group-by":
        _same(_rows(spark, MIXED["nested"]), _rows(native, MIXED["nested"]))


def test_structured_streaming_refuses_what_it_cannot_run_by_name() -> None:
    """OVER has no Structured Streaming translation; a function without retract() over an
    updating input is refused as the native runtime refuses it (before any row runs)."""
    from tests.sqlengine.test_udaf import CountOnly

    s = _session(STREAMING)
    s.create_function("cnt", CountOnly, "BIGINT")
    with pytest.raises(NotSupportedError, match=r"OverAggregate\(.*PY_SUM\(v\).*Structured "
                                                r"Streaming"):
        s.sql("SELECT k, py_sum(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING "
              "AND CURRENT ROW) AS s FROM e").collect()
    with pytest.raises(NotSupportedError, match=r"CNT has no retract\(\) method, which an "
                                                "updating input"):
        s.sql("SELECT k % 2 AS g, cnt(v) AS c FROM (SELECT k, SUM(v) AS v FROM e GROUP BY k) "
              "GROUP BY k % 2").collect()


def test_the_stateful_group_by_retracts_python_accumulators() -> None:
    """The GROUP BY step our stateful operator runs in Spark's workers (stateful._changes),
    fed a changelog directly (a test's stream reaches it in one micro-batch, without
    retractions): Python accumulators retract, DISTINCT counts copies, a key whose rows are
    all retracted is deleted; the final rows are the built-in SUM's and the rows' own
    sums and averages."""
    from sqlengine import functions_python
    from sqlengine.plan.expressions import AggCall, ColumnRef
    from sqlengine.runtime.elements import DELETE, INSERT, UPDATE_BEFORE
    from sqlengine.runtime.spark.stateful import _changes
    from tests.sqlengine.test_udaf import PySum, pandas_avg

    i64, f64 = pa.int64(), pa.float64()
    v = ColumnRef(1, "v", i64)
    py_sum = AggCall(functions_python.register("py_sum", PySum), (v,), i64)
    aggs = [("sum", 1, None, i64, i64, None),
            ("py:", 1, None, None, i64, py_sum),
            ("py:", 1, None, None, i64, AggCall(py_sum.func, (v,), i64, distinct=True)),
            ("py:", 1, None, None, f64, AggCall(functions_python.register(
                "pavg", pandas_avg), (v,), f64))]
    groups: dict = {}
    final: dict = {}
    batches = [[(1, 5, INSERT), (1, 5, INSERT), (1, 7, INSERT), (2, 3, INSERT),
                (1, None, INSERT)],
               [(1, 5, UPDATE_BEFORE), (2, 3, DELETE), (1, 9, INSERT), (3, 4, INSERT)],
               [(1, 5, UPDATE_BEFORE)]]
    net: dict = {}
    for rows in batches:
        keys = [(k,) for k, _, _ in rows]
        values = [x for _, x, _ in rows]
        kinds = [kind for _, _, kind in rows]
        for key, kind, x in zip(keys, kinds, values):
            if kind == INSERT:
                net.setdefault(key, []).append(x)
            else:
                net[key].remove(x)
        for shown, measures, kind in _changes(groups, aggs, keys, keys, {1: values}, {},
                                              kinds, {1: pa.array(values, i64)}):
            if kind in (UPDATE_BEFORE, DELETE):  # (takes back the row shown before)
                assert final.pop(shown) == measures
            else:
                final[shown] = measures
    assert (2,) not in final
    for key, xs in net.items():
        if not xs:
            continue
        present = [x for x in xs if x is not None]
        want = (sum(present), sum(present), sum(set(present)), sum(present) / len(present))
        assert final[key] == pytest.approx(want), key
    assert final[(1,)] == (16, 16, 16, 8.0)


def test_a_failing_aggregate_is_named_on_spark() -> None:
    class Boom:
        def create_accumulator(self):  # type: ignore[no-untyped-def]
            return [0]

        def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
            acc[0] += 100 // (v - 3)

        def get_value(self, acc):  # type: ignore[no-untyped-def]
            return acc[0]

    s = sqlengine.connect(SPARK)
    s.create_function("boom", Boom, "BIGINT")
    with pytest.raises(SqlEngineError) as e:
        s.sql("SELECT k, boom(x) AS b FROM (VALUES (1, 1), (1, 3)) AS t(k, x) GROUP BY k"
              ).collect()
    assert "BOOM (SQL 1:11) failed in accumulate() on the row (3)" in str(e.value)
