"""A CASE branch, IF's branches, COALESCE's later arguments and the right side of AND / OR are
only evaluated (so only fail) for the rows that reach them, as Flink's generated code does
(and either side of AND / OR first when the other fails, as DuckDB orders a filter's parts):
``CASE WHEN b > 0 THEN a / b END`` failed with "division by zero" on the rows where b = 0.
The same for a filter's conjuncts, pushed into the source one by one (``WHERE b > 0 AND
a / b >= 1``). Checked against DuckDB (values: integer division keeps Flink's type)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

T = pa.table({"a": pa.array([1, 2], pa.int64()), "b": pa.array([0, 1], pa.int64())})

QUERIES = [
    "SELECT a, CASE WHEN b > 0 THEN a / b ELSE NULL END AS r FROM t",
    "SELECT a, CASE WHEN b > 0 THEN (a * 1.000) / b ELSE NULL END AS r FROM t",
    "SELECT a, CASE WHEN b = 0 THEN NULL ELSE a / b END AS r FROM t",
    "SELECT a, CASE WHEN b = 0 THEN -1 WHEN a / b > 1 THEN 1 ELSE 0 END AS r FROM t",
    "SELECT a, IF(b > 0, a / b, NULL) AS r FROM t",
    "SELECT a, COALESCE(CASE WHEN b <> 0 THEN a % b END, -1) AS r FROM t",
    "SELECT a, COALESCE(CASE WHEN b = 0 THEN a END, a / b) AS r FROM t",
    "SELECT a FROM t WHERE CASE WHEN b > 0 THEN a / b ELSE 0 END >= 1",
    "SELECT a, CASE WHEN SUM(b) > 0 THEN SUM(a) / SUM(b) END AS r FROM t GROUP BY a",
    "SELECT a FROM t WHERE b > 0 AND a / b >= 1",
    "SELECT a FROM t WHERE b = 0 OR a / b >= 1",
    "SELECT a, b > 0 AND a / b >= 1 AS r FROM t",
    "SELECT a FROM (SELECT * FROM t WHERE b > 0) AS s WHERE a / b >= 1",
    # (either side of AND / OR first, as the conjuncts of a filter)
    "SELECT a FROM t WHERE a / b >= 1 AND b > 0",
    "SELECT a FROM (SELECT * FROM t WHERE a / b >= 1) AS s WHERE b > 0",
    "SELECT a, (a / b >= 1 AND b > 0) AS x, (a / b >= 1 OR b = 0) AS y FROM t",
    "SELECT a, CASE WHEN b > 5 THEN CAST(CAST(a AS VARCHAR) || 'x' AS INT) ELSE 0 END AS r "
    "FROM t",
]


def _session(mode: str, parallelism: int, source: str, tmp_path: Path) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    if source == "parquet":
        path = tmp_path / "t.parquet"
        pq.write_table(T, path)
        s.execute("CREATE TABLE t (a BIGINT, b BIGINT) WITH ('connector' = 'filesystem', "
                  f"'path' = '{path}', 'format' = 'parquet')")
    else:
        s.register("t", T)
    return s


def _rows(rows: list[tuple]) -> list[tuple]:
    return sorted((tuple(None if v is None else float(v) for v in r) for r in rows),
                  key=repr)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(("mode", "parallelism", "source"),
                         [("batch", 1, "parquet"), ("batch", 2, "memory"),
                          ("streaming", 1, "memory"), ("streaming", 2, "parquet")])
def test_branches_not_taken_do_not_fail(query: str, mode: str, parallelism: int, source: str,
                                        tmp_path: Path) -> None:
    s = _session(mode, parallelism, source, tmp_path)
    got = s.sql(query).collect()
    con = duckdb.connect()
    con.register("t", T)
    want = con.execute(query.replace(" / ", " // ")).fetchall()
    rows = [tuple(r.values()) for r in got.to_pylist()]
    assert _rows(rows) == _rows(want)


@pytest.mark.parametrize("query", [
    "SELECT CASE WHEN b >= 0 THEN a / b END FROM t",
    "SELECT a FROM t WHERE b >= 0 AND a / b >= 1",
    "SELECT a FROM t WHERE a / b >= 1 AND b >= 0",
    "SELECT a, a / b >= 1 AND a / (b - 1) > 0 FROM t",
    "SELECT COALESCE(CASE WHEN b > 0 THEN a END, a / b) FROM t",
    "SELECT IF(b > 0, a, a / b) FROM t",
])
def test_a_branch_taken_still_fails(query: str, tmp_path: Path) -> None:
    s = _session("batch", 1, "memory", tmp_path)
    with pytest.raises(SqlEngineError, match="division by zero"):
        s.sql(query).collect()


def test_skipped_rows_of_a_branch_are_the_rows_that_reach_it() -> None:
    """'python.udf.on-error' = 'skip': a Python function failing in a CASE branch drops the rows
    that reach it and fail (their positions in the whole batch, not among those rows)."""
    from tests.sqlengine.test_python_udf import _fragile_session

    s = _fragile_session({"execution.runtime-mode": "batch", "python.udf.on-error": "skip"})
    q = s.sql("SELECT id, CASE WHEN id > 20 THEN every_fourth(id) ELSE 0 END AS a FROM g")
    got = sorted(tuple(r.values()) for r in q.collect().to_pylist())
    assert got == [(i, 100 // (i % 4) if i > 20 else 0) for i in range(1, 41)
                   if i <= 20 or i % 4]
    assert q.udf_rows_skipped == 5  # (24, 28, 32, 36, 40)


def test_nested_values_of_a_branch(tmp_path: Path) -> None:
    """A branch of a nested type (put back in place by its positions, not by a mask)."""
    s = _session("batch", 1, "memory", tmp_path)
    got = s.sql("SELECT a, CASE WHEN b > 0 THEN ARRAY[a / b] END AS r, "
                "IF(b = 0, NULL, ROW(a / b)) AS w FROM t").collect().to_pylist()
    assert sorted((r["a"], r["r"], r["w"] and tuple(r["w"].values())) for r in got) == \
        [(1, None, None), (2, [2], (2,))]
