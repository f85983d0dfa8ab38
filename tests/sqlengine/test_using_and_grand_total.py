"""JOIN ... USING's merged columns and GROUP BY (), against DuckDB.

On main a FULL JOIN's USING column was the left side's copy (a row only the right side had
read NULL, and was lost to WHERE k > ..., grouped with the NULLs), a RIGHT JOIN's came after
the left side's columns, and GROUP BY () failed ("ROW_VALUE takes 1 to any arguments"); a
global aggregate whose aggregates nothing reads (SELECT 1 ... GROUP BY GROUPING SETS (()))
lost its one row. ROLLUP / CUBE inside GROUPING SETS and IN (VALUES ...) were refused as
unsupported expressions."""

from __future__ import annotations

import duckdb
import pytest

import sqlengine

A = "(VALUES (1, 'x'), (5, 'q'), (NULL, 'n')) AS a(k, s)"
B = "(VALUES (1, 'y'), (2, 'z'), (NULL, 'm')) AS b(k, t)"
QUERIES = [
    f"SELECT k FROM {A} FULL JOIN {B} USING (k)",
    f"SELECT * FROM {A} FULL JOIN {B} USING (k)",
    f"SELECT * FROM {A} RIGHT JOIN {B} USING (k)",
    f"SELECT * FROM {A} LEFT JOIN {B} USING (k)",
    f"SELECT * FROM {A} JOIN {B} USING (k)",
    f"SELECT a.k AS ak, b.k AS bk, k FROM {A} FULL JOIN {B} USING (k)",
    f"SELECT k, COUNT(*) AS c FROM {A} FULL JOIN {B} USING (k) GROUP BY k",
    f"SELECT k, s, t FROM {A} FULL JOIN {B} USING (k) WHERE k > 1",
    f"SELECT a.*, b.* FROM {A} JOIN {B} USING (k)",
    "SELECT * FROM (VALUES (1, 2, 'x')) AS a(k, j, s) FULL JOIN "
    "(VALUES (1, 2, 'y'), (2, 2, 'z')) AS b(j, k, t) USING (k, j)",
    f"SELECT * FROM {A} FULL JOIN {B} USING (k) FULL JOIN (VALUES (2, 9), (7, 8)) AS c(k, u) "
    "USING (k)",
    "SELECT COUNT(*) AS c FROM (VALUES (1), (2)) AS t(x) GROUP BY ()",
    "SELECT COUNT(*) AS c FROM (VALUES (1), (2)) AS t(x) WHERE x > 5 GROUP BY ()",
    "SELECT 1 AS one FROM (VALUES (1), (2)) AS t(x) GROUP BY ()",
    "SELECT 1 AS one FROM (VALUES (1), (2)) AS t(x) WHERE x > 5 GROUP BY GROUPING SETS (())",
    "SELECT x, COUNT(*) AS c FROM (VALUES (1), (2), (2)) AS t(x) GROUP BY x, ()",
    "SELECT COUNT(*) AS c FROM (VALUES (1), (2)) AS t(x) GROUP BY GROUPING SETS ((), ())",
    *(f"SELECT a, b, SUM(c) AS s, GROUPING(a, b) AS g FROM (VALUES (1, 10, 5), (1, 20, 6), "
      f"(2, 10, 7)) AS t(a, b, c) GROUP BY {g}" for g in (
          "GROUPING SETS (ROLLUP(a, b))", "GROUPING SETS (CUBE(a, b), ())",
          "a, GROUPING SETS (ROLLUP(b), CUBE(b))",
          "GROUPING SETS (GROUPING SETS ((a), (b)), ())")),
    *(f"SELECT a FROM (VALUES (1, 10), (2, 20), (3, NULL)) AS t(a, b) WHERE {w}" for w in (
        "a IN (VALUES (1), (3))", "a NOT IN (VALUES (1), (3))",
        "a NOT IN (VALUES (1), (NULL))", "(a, b) IN (VALUES (1, 10), (2, 30))")),
]


@pytest.mark.parametrize("query", QUERIES)
def test_as_duckdb(query: str) -> None:
    got = sqlengine.connect({"execution.runtime-mode": "batch"}).sql(query).collect()
    want = duckdb.sql(query)
    assert len(got.column_names) == len(want.columns)
    if len(set(want.columns)) == len(want.columns):  # (ours names a repeated name k1, k2)
        assert got.column_names == want.columns
    assert sorted(map(tuple, (r.values() for r in got.to_pylist())), key=repr) == \
        sorted(want.fetchall(), key=repr)
