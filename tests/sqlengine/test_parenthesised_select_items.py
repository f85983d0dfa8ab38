"""A parenthesised select item is the expression inside: ``SELECT (a) FROM t`` names its column
``a`` (Calcite drops the parentheses, so Flink does), and ``SELECT DISTINCT(a) ... ORDER BY a``
orders by it (refused: "ORDER BY expressions must appear in the SELECT DISTINCT list").
Checked against DuckDB."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

T = pa.table({"a": pa.array([2, 1, 2], pa.int64()), "b": pa.array([0, 1, 1], pa.int64())})


@pytest.mark.parametrize("query", [
    "SELECT DISTINCT(a) FROM t ORDER BY a",
    "SELECT DISTINCT (a), b FROM t ORDER BY b, a",
    "SELECT DISTINCT ((t.a)) FROM t ORDER BY a DESC",
    "SELECT (a), COUNT(*) AS n FROM t GROUP BY a ORDER BY a",
])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_parenthesised_items_order_as_duckdb(query: str, mode: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", T)
    got = s.sql(query).collect()
    con = duckdb.connect()
    con.register("t", T)
    want = con.execute(query)
    assert got.column_names == [d[0] for d in want.description]
    rows = [tuple(r.values()) for r in got.to_pylist()]
    assert rows == want.fetchall()


def test_parenthesised_column_keeps_its_name() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", T)
    got = s.sql("SELECT (a), ((t.b)), (a) AS x, (a + 1) FROM t").collect()
    assert got.column_names == ["a", "b", "x", "EXPR$3"]
