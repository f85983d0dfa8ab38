"""DESCRIBE gives computed columns their real types (the types a query reading them gets)."""

from __future__ import annotations

import sqlengine
from sqlengine import types as T


def test_describe_types_computed_columns_as_queries_see_them() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE t (a INT, b AS a * 2.5, c AS UPPER('x'), d AS a > 1, "
              "ts TIMESTAMP(3), e AS ts + INTERVAL '1' DAY) WITH ('connector' = 'datagen')")
    rows = {r["name"]: r["type"] for r in s.execute("DESCRIBE t")[0].table.to_pylist()}
    schema = s.sql("SELECT * FROM t").schema
    assert rows == {f.name: T.type_name(f.type) for f in schema}
    assert rows["b"] == "DECIMAL(13, 1)" and rows["c"] == "STRING" and rows["d"] == "BOOLEAN"
    assert "(computed)" not in rows.values()
