"""Subqueries and every join form on Spark (batch mode), against DuckDB's answers.

Decorrelation happens before the runtime is chosen: Spark gets semi, anti, left and full
joins, with or without keys, with residual conditions. The cases are tests/sqlengine/
test_subqueries.py's, plus joins whose keys or conditions Spark would evaluate differently
(a BOOLEAN cast to STRING: Flink's TRUE, Spark's true), which run through our own kernels.
In streaming mode, semi, anti and outer equi-joins run as the native join in our stateful
operator; a join without an equality key is refused, naming the join kind.
"""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import NotSupportedError, SqlEngineError
from tests.sqlengine.test_subqueries import CASES, EMPTY, T, U, _duck

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

SPARK = {"execution.target": "spark", "execution.runtime-mode": "batch",
         "spark.master": "local[2]"}
STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}

# UPPER(CAST(b AS STRING)) is 'TRUE' / 'FALSE' in Flink and DuckDB alike; Spark's cast would
# say 'true', so these keys and conditions are evaluated by our kernels (mapInArrow).
_TRUE = "UPPER(CAST(u.v > t.x * 10 AS STRING)) = 'TRUE'"
KERNEL_CASES = {
    "keys by kernels": "SELECT t.k, u.v FROM t JOIN u ON UPPER(CAST(t.x > 15 AS STRING)) = "
                       "UPPER(CAST(u.v > 150 AS STRING))",
    "inner condition by kernels": f"SELECT t.k, u.v FROM t JOIN u ON t.k = u.k AND {_TRUE}",
    "left condition by kernels": f"SELECT t.k, u.v FROM t LEFT JOIN u ON t.k = u.k AND {_TRUE}",
    "full condition by kernels": f"SELECT t.k, u.v FROM t FULL JOIN u ON t.k = u.k AND {_TRUE}",
    "full keyless condition by kernels": f"SELECT t.k, u.v FROM t FULL JOIN u ON {_TRUE}",
    "semi condition by kernels": "SELECT k FROM t WHERE EXISTS (SELECT * FROM u WHERE "
                                 f"u.k = t.k AND {_TRUE})",
    "anti condition by kernels": "SELECT k FROM t WHERE NOT EXISTS (SELECT * FROM u WHERE "
                                 f"u.k = t.k AND {_TRUE})",
    # Equal rows on the preserved side share their answer (matched rows are found by value).
    "left join of duplicate rows by kernels":
        "SELECT u.k, u.v, t.x FROM (SELECT * FROM u UNION ALL SELECT * FROM u) AS u "
        f"LEFT JOIN t ON u.k = t.k AND {_TRUE}",
}
MORE_CASES = {
    "uncorrelated exists": "SELECT k FROM t WHERE EXISTS (SELECT * FROM u WHERE v > 150)",
    "uncorrelated not exists over no rows": "SELECT k FROM t WHERE NOT EXISTS "
                                            "(SELECT * FROM e)",
    "not exists with a non-equi correlation": "SELECT k FROM t WHERE NOT EXISTS (SELECT * "
                                              "FROM u WHERE u.k = t.k AND u.v > t.x * 6)",
    "semi self join": "SELECT a.k, a.v FROM u AS a WHERE EXISTS (SELECT * FROM u AS b "
                      "WHERE b.k = a.k AND b.v > a.v)",
    "in with a null key": "SELECT k, x FROM t WHERE k IN (SELECT k FROM u)",
    "not in via a left join of counts": "SELECT x FROM t WHERE x NOT IN (SELECT v / 10 "
                                        "FROM u WHERE v IS NOT NULL)",
}
ALL = {**CASES, **KERNEL_CASES, **MORE_CASES}


def _session(options: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(options)
    s.register("t", T)
    s.register("u", U)
    s.register("e", EMPTY)
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()], key=repr)


@pytest.mark.parametrize("name", sorted(ALL))
def test_matches_duckdb_on_spark(name: str) -> None:
    sql = ALL[name]
    theirs = _duck(sql)
    assert _rows(_session(SPARK), sql) == theirs
    if name in KERNEL_CASES:  # the path under test: our kernels inside Spark's plan
        assert "MapInArrow" in _session(SPARK).sql(sql).explain()


def test_hand_checked_on_spark() -> None:
    s = _session(SPARK)
    assert _rows(s, CASES["not exists"]) == [(3,), (5,), (None,)]
    assert _rows(s, KERNEL_CASES["anti condition by kernels"]) == [(2,), (3,), (5,), (None,)]
    assert _rows(s, KERNEL_CASES["left join of duplicate rows by kernels"]) == [
        (1, 100, None), (1, 100, None), (1, 101, 10), (1, 101, 10), (2, 200, None),
        (2, 200, None), (7, None, None), (7, None, None), (None, 300, None),
        (None, 300, None)]


def test_scalar_subquery_with_several_rows_fails_on_spark() -> None:
    with pytest.raises(SqlEngineError, match="more than one row"):
        _session(SPARK).sql("SELECT k, (SELECT v FROM u WHERE u.k = t.k) AS v FROM t").collect()


@pytest.mark.parametrize("name", ["exists", "not exists", "correlated count", "full join"])
def test_structured_streaming_runs_semi_anti_and_outer_equi_joins(name: str) -> None:
    """Spark joins streams inner only (outer ones with watermarks and a time range): these
    run as the native join in our stateful operator (runtime/spark/stateful_join.py), its
    changes applied by the driver."""
    sql = CASES[name]
    assert _rows(_session(STREAMING), sql) == _duck(sql)


@pytest.mark.parametrize(("sql", "kind"), [
    (CASES["cross join"], r"INNER join without an equality key \(a cross join\)"),
    (CASES["non-equi join"], r"INNER join without an equality key \(a non-equi join\)"),
    # (NOT IN: a LEFT join with the subquery's counts, on no key)
    (CASES["not in with a null"], r"LEFT join .*without an equality key \(a cross join\)"),
], ids=["cross", "non-equi", "not-in"])
def test_structured_streaming_refuses_what_it_cannot_join(sql: str, kind: str) -> None:
    with pytest.raises(NotSupportedError, match=kind):
        _session(STREAMING).sql(sql).collect()


def test_structured_streaming_still_runs_an_inner_equi_join() -> None:
    sql = CASES["comma join"]
    assert _rows(_session(STREAMING), sql) == _duck(sql)
