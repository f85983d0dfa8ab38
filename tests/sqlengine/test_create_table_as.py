"""CREATE TABLE ... WITH (...) AS query: a table of the query's columns, filled by it; a
table the INSERT cannot fill is not left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

SOURCE = ("CREATE TABLE g (id BIGINT, name STRING) WITH ('connector' = 'datagen', "
          "'number-of-rows' = '20', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
          "'fields.id.end' = '20', 'fields.name.length' = '3')")


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_ctas_creates_and_fills(tmp_path: Path, fmt: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(SOURCE)
    out = s.execute(f"CREATE TABLE c WITH ('connector' = 'filesystem', 'path' = "
                    f"'{tmp_path / 'c'}', 'format' = '{fmt}') AS SELECT id, id * 2 AS twice, "
                    "CHAR_LENGTH(name) AS n FROM g WHERE id > 5")
    assert out[-1].message.endswith("Inserted 15 rows into c")
    types = {r["name"]: r["type"] for r in s.execute("DESCRIBE c")[0].table.to_pylist()}
    assert types == {"id": "BIGINT", "twice": "BIGINT", "n": "INT"}
    rows = s.sql("SELECT id, twice, n FROM c").collect().to_pylist()
    assert sorted(r["id"] for r in rows) == list(range(6, 21))
    assert all(r["twice"] == 2 * r["id"] and r["n"] == 3 for r in rows)


def test_ctas_that_cannot_insert_leaves_no_table(tmp_path: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(SOURCE)
    with pytest.raises(SqlEngineError, match="csv format cannot hold"):
        s.execute(f"CREATE TABLE d WITH ('connector' = 'filesystem', 'path' = "
                  f"'{tmp_path / 'd'}', 'format' = 'csv') AS SELECT ARRAY[id] AS a FROM g")
    assert s.catalog.table("d") is None
    with pytest.raises(SqlEngineError):
        s.execute("CREATE TABLE e WITH ('connector' = 'datagen') AS SELECT id FROM g")
    assert s.catalog.table("e") is None
    with pytest.raises(SqlEngineError):
        s.execute("CREATE TABLE f WITH ('connector' = 'blackhole') AS SELECT nope FROM g")
    assert s.catalog.table("f") is None
