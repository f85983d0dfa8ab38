"""The semi-join reduction of aggregates gives the rows it gave without it (and DuckDB's):
correlated scalar subqueries and joins with grouped subqueries, with NULL keys, keys the
outer side lacks and outer keys without a group."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

QUERIES = [
    "SELECT id, v FROM outer_t WHERE v > (SELECT AVG(w) FROM big WHERE big.k = outer_t.k) "
    "ORDER BY id",
    "SELECT o.id, g.n, g.s FROM outer_t AS o JOIN (SELECT k, COUNT(*) AS n, SUM(w) AS s "
    "FROM big GROUP BY k) AS g ON o.k = g.k ORDER BY o.id",
    "SELECT o.id, g.n FROM outer_t AS o LEFT JOIN (SELECT k, j, COUNT(*) AS n FROM big "
    "GROUP BY k, j) AS g ON o.k = g.k AND o.j = g.j ORDER BY o.id, g.n",
    "SELECT id FROM outer_t WHERE v < (SELECT 0.5 * SUM(w) FROM big WHERE big.k = outer_t.k "
    "AND big.j = outer_t.j) ORDER BY id",
]


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    con = duckdb.connect()
    big = con.execute(
        "SELECT CASE WHEN i % 97 = 0 THEN NULL ELSE i % 5000 END AS k, i % 3 AS j, "
        "(i * 37) % 101 AS w FROM range(60000) t(i)").to_arrow_table()
    outer = con.execute(
        "SELECT i AS id, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 13) % 6000 END AS k, "
        "i % 3 AS j, (i * 7) % 50 AS v FROM range(300) t(i)").to_arrow_table()
    return {"big": big, "outer_t": outer}


@pytest.mark.parametrize("sql", QUERIES)
def test_same_rows_with_and_without_the_reduction(tables: dict[str, pa.Table],
                                                  sql: str) -> None:
    con = duckdb.connect()
    for name, t in tables.items():
        con.register(name, t)
    want = con.execute(sql).fetchall()
    plans = []
    for disabled in ("", "reduce_aggregate_inputs"):
        s = sqlengine.connect({"execution.runtime-mode": "batch",
                               "table.optimizer.disabled-rules": disabled})
        for name, t in tables.items():
            s.register(name, t)
        got = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
        assert [tuple(float(x) if isinstance(x, float) else x for x in r) for r in got] == \
            [tuple(float(x) if isinstance(x, float) else x for x in r) for r in want]
        plans.append(s.execute(f"EXPLAIN {sql}")[0].message)
    assert "$k0" in plans[0] and "$k0" not in plans[1]
