"""Catalog statements as PyFlink 2.3 runs them (each difference was found by running the same
statements on both; on main):

- a computed column went to the end of the table's columns: SELECT *, DESCRIBE and SHOW
  CREATE TABLE of (id INT, c AS id + 100, name STRING) gave id, name, c;
- DROP TEMPORARY TABLE / VIEW dropped a permanent table or view of that name (Flink: "does not
  exist"; with IF EXISTS it leaves it);
- a created in-memory catalog's database was 'default_database' (Flink: 'default').
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _session(tmp_path: Path) -> sqlengine.Session:
    (tmp_path / "src.csv").write_text("1,alice,10.5\n2,bob,3.0\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE src (id INT, c AS id + 100, name STRING, amt DOUBLE, "
              f"PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'src.csv'}', 'format' = 'csv')")
    return s


def test_computed_columns_keep_their_declared_place(tmp_path: Path) -> None:
    s = _session(tmp_path)
    assert s.sql("SELECT * FROM src").collect().to_pylist()[0] == {
        "id": 1, "c": 101, "name": "alice", "amt": 10.5}
    described = s.execute("DESCRIBE src")[0].table.to_pylist()
    assert [(r["name"], r["null"]) for r in described] == [  # (a key column is NOT NULL)
        ("id", False), ("c", True), ("name", True), ("amt", True)]
    text = s.execute("SHOW CREATE TABLE src")[0].table.column(0)[0].as_py()
    assert text.index("`id` INT") < text.index("`c` AS") < text.index("`name` STRING")
    s.execute("CREATE TABLE copy WITH ('connector' = 'blackhole') AS SELECT * FROM src")
    assert [r["name"] for r in s.execute("DESCRIBE copy")[0].table.to_pylist()] == [
        "id", "c", "name", "amt"]
    s.execute("ALTER TABLE src ADD d AS id * 2 FIRST")
    s.execute("ALTER TABLE src ADD e AS id * 3 AFTER name")
    assert s.sql("SELECT * FROM src").collect().to_pylist()[0] == {
        "d": 2, "id": 1, "c": 101, "name": "alice", "e": 3, "amt": 10.5}


def test_drop_temporary_drops_only_temporary_objects(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute("CREATE VIEW v AS SELECT id FROM src")
    for stmt in ("DROP TEMPORARY TABLE src", "DROP TEMPORARY VIEW v"):
        with pytest.raises(SqlEngineError, match=r"temporary (table|view) '(src|v)' does not "
                           "exist"):
            s.execute(stmt)
    s.execute("DROP TEMPORARY TABLE IF EXISTS src")
    s.execute("DROP TEMPORARY VIEW IF EXISTS v")
    assert sorted(r["table name"] for r in s.execute("SHOW TABLES")[0].table.to_pylist()) == [
        "src", "v"]
    s.execute("CREATE TEMPORARY VIEW tv AS SELECT 1 AS x")
    s.execute("ALTER TABLE src SET ('csv.ignore-parse-errors' = 'true')")
    s.execute("DROP TEMPORARY VIEW tv")
    s.execute("DROP VIEW v")
    s.execute("DROP TABLE src")
    assert s.execute("SHOW TABLES")[0].table.num_rows == 0


def test_a_created_catalog_holds_the_database_default(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute("CREATE CATALOG c2 WITH ('type' = 'generic_in_memory')")
    s.execute("CREATE CATALOG c3 WITH ('type' = 'generic_in_memory', "
              "'default-database' = 'mine')")
    s.execute("CREATE TABLE c2.`default`.t (id INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '3')")
    assert s.sql("SELECT COUNT(*) AS n FROM c2.`default`.t").collect().to_pylist() == [
        {"n": 3}]
    s.execute("USE CATALOG c3")
    assert s.execute("SHOW CURRENT DATABASE")[0].table.column(0).to_pylist() == ["mine"]


def test_a_table_with_computed_columns_takes_its_physical_ones(tmp_path: Path) -> None:
    """As PyFlink 2.3 (main refused the INSERT: "it has computed columns")."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (id INT, c AS id + 100, name STRING) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path / 't'}', 'format' = 'csv')")
    s.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    s.execute("INSERT INTO t (name, id) VALUES ('z', 9)")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM t").collect().to_pylist()) \
        == [(1, 101, "a"), (2, 102, "b"), (9, 109, "z")]
    with pytest.raises(SqlEngineError, match="column 'c' of 't' is a computed column"):
        s.execute("INSERT INTO t (id, c) VALUES (1, 2)")
    with pytest.raises(SqlEngineError, match="lists 2 columns but the query returns 3"):
        s.execute("INSERT INTO t VALUES (1, 2, 'x')")


def test_positions_inside_an_add_list_as_flink(tmp_path: Path) -> None:
    """ADD (c FIRST, c AFTER x, ...): each column placed in turn (main: a parse error at
    'FIRST'); the order is PyFlink 2.3's."""
    s = _session(tmp_path)
    s.execute("ALTER TABLE src ADD (c1 AS id + 1 FIRST, c2 AS id + 2 AFTER name, c3 AS id + 3, "
              "c4 AS id + 4 AFTER c1)")
    assert s.sql("SELECT * FROM src").collect().column_names == [
        "c1", "c4", "id", "c", "name", "c2", "amt", "c3"]
    with pytest.raises(SqlEngineError, match="no column 'nope'"):
        s.execute("ALTER TABLE src ADD (y AS id FIRST, z AS id AFTER nope)")


def test_insert_with_static_partition_values(tmp_path: Path) -> None:
    """INSERT INTO | OVERWRITE t PARTITION (k = 'v', ...) [(cols)] query: the query gives the
    other columns (main: a parse error at 'PARTITION'). Rows and directories are PyFlink
    2.3's for the same statements."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (a INT, b STRING, dt STRING, hr INT) PARTITIONED BY (dt, hr) "
              f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't'}', "
              "'format' = 'csv')")
    s.execute("INSERT INTO t PARTITION (dt = '2024-01-01', hr = 10) SELECT 1, 'x'")
    s.execute("INSERT INTO t PARTITION (dt = '2024-01-02') SELECT 2, 'y', 7")
    s.execute("INSERT INTO t PARTITION (dt = '2024-01-03') (b, a, hr) VALUES ('z', 3, 8)")
    s.execute("INSERT OVERWRITE t PARTITION (dt = '2024-01-01', hr = 10) SELECT 4, 'w'")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM t").collect().to_pylist()) \
        == [(2, "y", "2024-01-02", 7), (3, "z", "2024-01-03", 8), (4, "w", "2024-01-01", 10)]
    assert sorted(str(p.parent.relative_to(tmp_path / "t")) for p in (tmp_path / "t").rglob("*")
                  if p.is_file() and not p.name.startswith(".")) == [
        "dt=2024-01-01/hr=10", "dt=2024-01-02/hr=7", "dt=2024-01-03/hr=8"]
    with pytest.raises(SqlEngineError, match="'a' is not a partition column"):
        s.execute("INSERT INTO t PARTITION (a = 1) SELECT 'x', 'd', 1")
    with pytest.raises(SqlEngineError, match="column 'dt' has a static value"):
        s.execute("INSERT INTO t PARTITION (dt = 'x') (dt, a) VALUES ('x', 1)")


def test_a_temporary_object_shadows_a_permanent_one() -> None:
    """Temporary tables and views are a layer over the permanent ones (main refused the
    temporary view: "already exists"); each step's outcome is PyFlink 2.3's."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TEMPORARY TABLE tt (id INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '2')")
    with pytest.raises(SqlEngineError, match="a temporary table 'tt' exists: drop it first"):
        s.execute("DROP TABLE tt")
    s.execute("CREATE TABLE src (id INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '3')")
    s.execute("CREATE TEMPORARY VIEW src AS SELECT 42 AS id")
    assert s.sql("SELECT * FROM src").collect().to_pylist() == [{"id": 42}]
    assert s.execute("SHOW TABLES")[0].table.column(0).to_pylist() == ["src", "tt"]
    assert s.execute("SHOW VIEWS")[0].table.column(0).to_pylist() == ["src"]
    s.execute("DROP TABLE src")  # (the permanent table: Flink drops it under the view too)
    s.execute("DROP TEMPORARY VIEW src")
    with pytest.raises(SqlEngineError, match="unknown table 'src'"):
        s.sql("SELECT COUNT(*) FROM src").collect()
