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


def _ctas(s: sqlengine.Session, path: Path, schema: str, query: str) -> list[tuple]:
    s.execute(f"CREATE TABLE t {schema} WITH ('connector' = 'filesystem', 'path' = '{path}', "
              f"'format' = 'csv') AS {query}")
    return [(r["name"], r["type"]) for r in s.execute("DESCRIBE t")[0].table.to_pylist()]


def test_ctas_with_a_schema_as_flink(tmp_path: Path) -> None:
    """Flink 2.0's CTAS schema (FLIP-463), each table's DESCRIBE as PyFlink 2.3 gave it:
    the columns only the list declares first (NULL), then the query's with the declared
    types (a cast on insert), computed columns and a watermark among the new ones."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(SOURCE)
    assert _ctas(s, tmp_path / "a", "(x INT, id BIGINT, name STRING COMMENT 'the name')",
                 "SELECT CAST(id AS INT) AS id, name, id > 10 AS big FROM g") == [
        ("x", "INT"), ("id", "BIGINT"), ("name", "STRING"), ("big", "BOOLEAN")]
    rows = s.sql("SELECT x, id, big FROM t").collect().to_pylist()
    assert sorted(r["id"] for r in rows) == list(range(1, 21))
    assert all(r["x"] is None and r["big"] == (r["id"] > 10) for r in rows)
    s.execute("DROP TABLE t")
    assert _ctas(s, tmp_path / "b", "(d AS id * 2, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)",
                 "SELECT id, name FROM g") == [
        ("d", "BIGINT"), ("ts", "TIMESTAMP(3) *ROWTIME*"), ("id", "BIGINT"),
        ("name", "STRING")]
    assert s.sql("SELECT COUNT(*) AS n, SUM(d) AS d FROM t").collect().to_pylist() == [
        {"n": 20, "d": 420}]
    s.execute("DROP TABLE t")
    # Names only: the query's columns in that order.
    assert _ctas(s, tmp_path / "c", "(name, id)", "SELECT id, name FROM g") == [
        ("name", "STRING"), ("id", "BIGINT")]
    assert s.sql("SELECT SUM(id) AS s FROM t").collect().to_pylist() == [{"s": 210}]
    s.execute("DROP TABLE t")
    # A primary key over the query's columns.
    s.execute(f"CREATE TABLE k (PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'k'}', 'format' = 'csv') AS "
              "SELECT id, name FROM g")
    assert s.execute("DESCRIBE k")[0].table.column("key").to_pylist() == ["PRI(id)", None]


@pytest.mark.parametrize(("schema", "message"), [
    ("(id, name, id)", "column 'id' is named twice"),
    ("(id)", "it leaves out name"),
    ("(id, zz)", "the query has no column 'zz'"),
    ("(id AS 1)", "column 'id' comes from the query; it cannot be computed"),
    ("(name INT)", "column 'name' of 't' is INT, but the query gives STRING"),
    ("(y INT NOT NULL)", "column 'y' is not in the column list; it has no default value"),
])
def test_ctas_schema_refused_as_flink(tmp_path: Path, schema: str, message: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(SOURCE)
    with pytest.raises(SqlEngineError, match=message):
        _ctas(s, tmp_path / "r", schema, "SELECT id, name FROM g")
    assert s.catalog.table("t") is None


def test_ctas_if_not_exists_fills_the_table_there(tmp_path: Path) -> None:
    """CREATE TABLE IF NOT EXISTS t ... AS query with t there already: the query's rows go
    into t, column by column, and t keeps its own options (PyFlink 2.3: a table holding 9
    held 9 and 10 after CREATE TABLE IF NOT EXISTS ... AS SELECT 10 AS z)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE c (a INT, b STRING) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 'c'}', 'format' = 'csv')")
    s.execute("INSERT INTO c VALUES (1, 'x')")
    ctas = (f"CREATE TABLE IF NOT EXISTS c WITH ('connector' = 'filesystem', 'path' = "
            f"'{tmp_path / 'other'}', 'format' = 'json') AS ")
    out = s.execute(ctas + "SELECT 10 AS z, 'y' AS w")
    assert out[-1].message.endswith("Inserted 1 rows into c")
    rows = s.sql("SELECT a, b FROM c").collect().to_pylist()
    assert sorted(rows, key=lambda r: r["a"]) == [{"a": 1, "b": "x"}, {"a": 10, "b": "y"}]
    assert not (tmp_path / "other").exists()
    with pytest.raises(SqlEngineError, match=r"(?s)1:28: INSERT INTO 'c' lists 2 columns but "
                                             r"the query returns 1.*\n {29}\^"):
        s.execute(ctas + "SELECT 'q' AS a")
