"""prune_projections through an UNNEST: the columns nobody above reads are not carried to it
(they were, the array itself when selected from the table, copied once per element: 10,000
elements in one row took 1.3 GB, 100,000 were killed for memory). Rows against DuckDB."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

T = pa.table({"id": pa.array([1, 2, 3], pa.int32()), "tag": ["x", None, "z"],
              "arr": pa.array([[3, 1, 2], [], None], pa.list_(pa.int64())),
              "pad": ["p" * 50] * 3})

QUERIES = [
    "SELECT COUNT(*) AS n, SUM(x) AS s FROM t CROSS JOIN UNNEST(arr) AS u(x)",
    "SELECT tag, x FROM t CROSS JOIN UNNEST(arr) AS u(x) WHERE x > 1",
    "SELECT id, x, arr FROM t CROSS JOIN UNNEST(arr) AS u(x)",
    "SELECT id, x FROM t LEFT JOIN UNNEST(arr) AS u(x) ON TRUE",
    "SELECT id, SUM(x) AS s FROM t CROSS JOIN UNNEST(arr) AS u(x) GROUP BY id",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_rows_as_duckdb(sql: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", T)
    got = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)
    con = duckdb.connect()
    con.register("t", T)
    want = sorted(con.sql(sql.replace("CROSS JOIN UNNEST(arr) AS u(x)",
                                      ", UNNEST(arr) AS u(x)")).fetchall(), key=repr)
    assert got == want


def test_only_the_array_reaches_the_unnest() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", T)
    plan = s.sql(QUERIES[0]).explain()
    optimized = plan.split("== Optimized Logical Plan ==")[1].split("== Job Graph ==")[0]
    assert "Scan: t, projection=[arr]" in optimized
    assert "Project: arr AS $unnest" in optimized
