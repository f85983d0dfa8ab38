"""A correlated equality repeated in every branch of an OR is taken out of it (Calcite's
RexUtil.pullFactors: ``(A AND B) OR (A AND C)`` is ``A AND (B OR C)``), so that below an
aggregate it becomes a grouping key: ``(t.k = t1.k AND t.x = 1) OR (t.k = t1.k AND t.x = 2)``
was refused ("a correlated condition below an aggregate must be an equality ..."). The
equality's sides may be written in either order. Checked against DuckDB."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

T = pa.table({"k": pa.array([1, 2, 2, 3], pa.int64()), "x": pa.array([1, 3, 2, 5], pa.int64())})


@pytest.mark.parametrize("query", [
    "SELECT k FROM t t1 WHERE (SELECT COUNT(*) FROM t WHERE (t.k = t1.k AND t.x = 1) "
    "OR (t.k = t1.k AND t.x = 2)) > 0",
    "SELECT k, x, (SELECT SUM(x) FROM t WHERE (t.k = t1.k AND t.x = 1) "
    "OR (t1.k = t.k AND t.x >= 3)) AS s FROM t t1",
    "SELECT k, x, (SELECT COUNT(*) FROM t WHERE (t.k = t1.k AND t.x < 3 AND t.x > 0) "
    "OR (t.x > 0 AND t.k = t1.k AND t.x = 5) OR (t1.k = t.k AND t.x > 0)) AS n FROM t t1",
    "SELECT k FROM t t1 WHERE EXISTS (SELECT 1 FROM t WHERE (t.k = t1.k AND t.x = 1) "
    "OR (t.k = t1.k AND t.x = 2))",
])
@pytest.mark.parametrize(("mode", "parallelism"), [("batch", 1), ("batch", 2),
                                                   ("streaming", 1), ("streaming", 2)])
def test_correlated_equality_in_every_branch(query: str, mode: str, parallelism: int) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    s.register("t", T)
    got = sorted(tuple(r.values()) for r in s.sql(query).collect().to_pylist())
    con = duckdb.connect()
    con.register("t", T)
    assert got == sorted(con.execute(query).fetchall())
