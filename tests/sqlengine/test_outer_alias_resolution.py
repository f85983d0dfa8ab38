"""``d.k`` inside a subquery whose own table has a column named d: the enclosing query's
table d, column k (as Flink (Calcite) and DuckDB resolve it); it was read as field k of the
subquery's column d ("DOUBLE has no field 'k'", found by a self-consistency probe). Expected
rows: DuckDB's."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

ORDERS = pa.table({"id": [1, 2, 3, 4], "k": ["a", "a", "b", None], "d": [1.5, 2.5, 0.5, 9.0]})
DIM = pa.table({"k": ["a", "b", "c"], "name": ["A", "B", "C"]})


@pytest.mark.parametrize("sql", [
    "SELECT name FROM dim d WHERE (SELECT COUNT(*) FROM orders o WHERE o.k = d.k) > 1",
    "SELECT name, (SELECT MAX(d) FROM orders o WHERE o.k = d.k) AS m FROM dim d",
    "SELECT name FROM dim d WHERE EXISTS (SELECT 1 FROM orders WHERE orders.k = d.k AND d > 1)",
])
def test_as_duckdb(sql: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("orders", ORDERS)
    s.register("dim", DIM)
    got = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)
    con = duckdb.connect()
    con.register("orders", ORDERS)
    con.register("dim", DIM)
    assert got == sorted(con.sql(sql).fetchall(), key=repr)
