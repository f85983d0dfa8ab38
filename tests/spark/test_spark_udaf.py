"""Python aggregate functions (@sqlengine.udaf) on the Spark runtime: each call is a
grouped-aggregate pandas UDF running our accumulator code in Spark's Python workers (the
function shipped pickled with the plan), in GROUP BY, window TVF aggregations, SESSION windows
and OVER frames, beside built-in aggregates. Spark batch gives the native runtime's rows and
the built-in aggregates' answers; Structured Streaming refuses them by name."""

from __future__ import annotations

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


def test_structured_streaming_refuses_them_by_name() -> None:
    s = _session(STREAMING)
    with pytest.raises(NotSupportedError, match="Python aggregate function PY_SUM"):
        s.sql("SELECT k, py_sum(v) AS s FROM e GROUP BY k").collect()


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
