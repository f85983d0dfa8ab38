"""[NOT] LIKE and [NOT] ILIKE give DuckDB's answers (x NOT LIKE p was once evaluated as LIKE)."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

ROWS = ["abc", "bcd", "ABx", "a", "", "xa%", None]
PREDICATES = [
    "x LIKE 'a%'", "x NOT LIKE 'a%'", "NOT (x LIKE 'a%')", "NOT x NOT LIKE 'a%'",
    "x NOT LIKE '%c%'", "x NOT LIKE '_'", "x ILIKE 'A%'", "x NOT ILIKE 'A%'",
    "x NOT ILIKE '%X'",
]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("predicate", PREDICATES)
def test_like_predicates_match_duckdb(mode: str, predicate: str) -> None:
    table = pa.table({"i": list(range(len(ROWS))), "x": pa.array(ROWS, pa.string())})
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", table)
    sql = f"SELECT i, {predicate} AS p FROM t"
    ours = s.sql(sql).collect().sort_by("i").to_pydict()
    con = duckdb.connect()
    con.register("t", table)
    theirs = con.sql(sql + " ORDER BY i").fetchall()
    assert ours["p"] == [p for _, p in theirs]
    where = s.sql(f"SELECT i FROM t WHERE {predicate}").collect()
    expected = [i for i, p in theirs if p]
    assert sorted(where.column("i").to_pylist()) == expected
