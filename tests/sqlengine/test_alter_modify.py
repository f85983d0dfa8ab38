"""ALTER TABLE ... MODIFY / DROP PRIMARY KEY / DROP CONSTRAINT / DROP WATERMARK, ALTER VIEW,
DESCRIBE EXTENDED and EXPLAIN STATEMENT SET, step by step as PyFlink 2.3 took the same
statements (its SHOW CREATE TABLE after each step, hand-copied below), and computed columns
whose expressions hold the statements' own words (CAST(a AS INT), IS NOT NULL, a = 1)."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _create(s: sqlengine.Session, name: str) -> list[str]:
    """The column, watermark and key lines of SHOW CREATE TABLE."""
    text = s.execute(f"SHOW CREATE TABLE {name}")[0].table.column(0)[0].as_py()
    body = text[text.index("(\n") + 2:text.index("\n)")]
    return [line.strip().rstrip(",") for line in body.splitlines()]


def test_modify_steps_as_flink() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE s (id INT COMMENT 'ident', name STRING, ts TIMESTAMP(3), "
              "c AS id * 2, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '3')")
    # A new type; the comment stays when MODIFY gives none.
    s.execute("ALTER TABLE s MODIFY id BIGINT")
    assert _create(s, "s")[0] == "`id` BIGINT COMMENT 'ident'"
    # A type the computed column cannot take is refused; the table stays.
    with pytest.raises(SqlEngineError, match="MULTIPLY expects numeric arguments"):
        s.execute("ALTER TABLE s MODIFY id STRING")
    assert _create(s, "s")[0] == "`id` BIGINT COMMENT 'ident'"
    # A computed column made physical; a column moved FIRST with a new comment.
    s.execute("ALTER TABLE s MODIFY c INT")
    s.execute("ALTER TABLE s MODIFY ts TIMESTAMP(3) NOT NULL COMMENT 'time' FIRST")
    s.execute("ALTER TABLE s MODIFY WATERMARK FOR ts AS ts - INTERVAL '5' SECOND")
    s.execute("ALTER TABLE s ADD CONSTRAINT pk1 PRIMARY KEY (ts) NOT ENFORCED")
    assert _create(s, "s") == [
        "`ts` TIMESTAMP(3) NOT NULL COMMENT 'time'", "`id` BIGINT COMMENT 'ident'",
        "`name` STRING", "`c` INT", "WATERMARK FOR `ts` AS ts - INTERVAL '5' SECOND",
        "CONSTRAINT `pk1` PRIMARY KEY (`ts`) NOT ENFORCED"]
    with pytest.raises(SqlEngineError, match="DROP CONSTRAINT 'x': the table's constraint is "
                                             "'pk1'"):
        s.execute("ALTER TABLE s DROP CONSTRAINT x")
    s.execute("ALTER TABLE s DROP CONSTRAINT pk1")
    s.execute("ALTER TABLE s DROP WATERMARK")
    with pytest.raises(SqlEngineError, match="DROP WATERMARK: the table has no watermark"):
        s.execute("ALTER TABLE s DROP WATERMARK")
    assert _create(s, "s") == ["`ts` TIMESTAMP(3) NOT NULL COMMENT 'time'",
                               "`id` BIGINT COMMENT 'ident'", "`name` STRING", "`c` INT"]
    # MODIFY's type takes the nullability it gives (NOT NULL goes), the comment stays.
    s.execute("ALTER TABLE s MODIFY ts INT")
    assert _create(s, "s")[0] == "`ts` INT COMMENT 'time'"
    # A physical column made computed, moved after another in a list.
    s.execute("ALTER TABLE s MODIFY (name AS CAST(id AS STRING) AFTER c, id INT FIRST)")
    assert _create(s, "s") == ["`id` INT COMMENT 'ident'", "`ts` INT COMMENT 'time'", "`c` INT",
                               "`name` AS CAST(id AS STRING)"]
    assert s.sql("SELECT name = CAST(id AS STRING) AS same FROM s").collect().column(
        "same").to_pylist() == [True] * 3


def test_primary_key_steps_as_flink() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE s (a INT, b STRING, PRIMARY KEY (a, b) NOT ENFORCED) "
              "WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    # Flink names an unnamed key PK_<columns> and prints its columns NOT NULL.
    assert _create(s, "s") == ["`a` INT NOT NULL", "`b` STRING NOT NULL",
                               "CONSTRAINT `PK_a_b` PRIMARY KEY (`a`, `b`) NOT ENFORCED"]
    s.execute("ALTER TABLE s DROP CONSTRAINT PK_a_b")
    # (the columns stay NOT NULL once the key goes, as in Flink)
    assert _create(s, "s") == ["`a` INT NOT NULL", "`b` STRING NOT NULL"]
    s.execute("ALTER TABLE s ADD PRIMARY KEY (a) NOT ENFORCED")
    s.execute("ALTER TABLE s MODIFY CONSTRAINT kk PRIMARY KEY (b) NOT ENFORCED")
    assert _create(s, "s")[-1] == "CONSTRAINT `kk` PRIMARY KEY (`b`) NOT ENFORCED"
    s.execute("ALTER TABLE s MODIFY a BIGINT PRIMARY KEY NOT ENFORCED")
    assert _create(s, "s") == ["`a` BIGINT NOT NULL", "`b` STRING NOT NULL",
                               "CONSTRAINT `PK_a` PRIMARY KEY (`a`) NOT ENFORCED"]
    s.execute("ALTER TABLE s MODIFY (a INT FIRST, b STRING FIRST)")
    assert _create(s, "s") == ["`b` STRING", "`a` INT NOT NULL",
                               "CONSTRAINT `PK_a` PRIMARY KEY (`a`) NOT ENFORCED"]
    assert s.execute("DESCRIBE s")[0].table.column("key").to_pylist() == [None, "PRI(a)"]
    s.execute("ALTER TABLE s MODIFY PRIMARY KEY (b, a) NOT ENFORCED")
    assert s.execute("DESCRIBE s")[0].table.column("key").to_pylist() == ["PRI(b, a)"] * 2
    s.execute("ALTER TABLE s DROP PRIMARY KEY")
    with pytest.raises(SqlEngineError, match="DROP PRIMARY KEY: the table has no primary key"):
        s.execute("ALTER TABLE s DROP PRIMARY KEY")
    describe = s.execute("DESCRIBE EXTENDED s")[0].table
    assert describe.equals(s.execute("DESCRIBE s")[0].table)
    assert describe.column("key").to_pylist() == [None, None]


def test_alter_view_as_flink() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '1')")
    s.execute("CREATE VIEW v COMMENT 'a view' AS SELECT 1 AS a")
    s.execute("ALTER VIEW v RENAME TO v2")
    assert s.execute("SHOW VIEWS")[0].table.column(0).to_pylist() == ["v2"]
    s.execute("ALTER VIEW v2 AS SELECT 2 AS b, 3 AS c")
    assert s.sql("SELECT * FROM v2").collect().to_pylist() == [{"b": 2, "c": 3}]
    assert "COMMENT 'a view'" in s.execute("SHOW CREATE VIEW v2")[0].table.column(0)[0].as_py()
    for stmt, message in [
            ("ALTER VIEW nope AS SELECT 1", "no such view"),
            ("ALTER VIEW v2 RENAME TO v2", "a table or view of that name exists"),
            ("ALTER VIEW v2 RENAME TO t", "a table or view of that name exists"),
            ("ALTER VIEW t RENAME TO zz", "a table"),
            ("ALTER VIEW v2 AS SELECT nope FROM t", "nope"),
            ("ALTER TABLE v2 ADD x INT", "a view")]:
        with pytest.raises(SqlEngineError, match=message):
            s.execute(stmt)
    s.execute("CREATE TEMPORARY VIEW tv AS SELECT 5 AS z")
    with pytest.raises(SqlEngineError, match="temporary views are not altered"):
        s.execute("ALTER VIEW tv RENAME TO tv2")
    assert s.sql("SELECT * FROM v2").collect().to_pylist() == [{"b": 2, "c": 3}]


def test_explain_statement_set() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    s.execute("CREATE TABLE k1 (a INT) WITH ('connector' = 'blackhole')")
    s.execute("CREATE TABLE k2 (n BIGINT) WITH ('connector' = 'blackhole')")
    results = s.execute("EXPLAIN CHANGELOG_MODE STATEMENT SET BEGIN\n"
                        "INSERT INTO k1 SELECT a FROM t WHERE a > 0;\n"
                        "INSERT INTO k2 SELECT COUNT(*) FROM t;\nEND;\nSELECT 1 AS one")
    assert [r.kind for r in results] == ["explain", "rows"]
    text = results[0].message
    assert "Sink(k1), changelogMode=[I]" in text
    assert "Sink(k2), changelogMode=[I,UB,UA,D]" in text
    assert results[1].table.to_pylist() == [{"one": 1}]
    # (the plan only: nothing ran)
    assert "Inserted" not in text
    with pytest.raises(SqlEngineError, match="statement set holds INSERT statements only"):
        s.execute("EXPLAIN STATEMENT SET BEGIN SELECT 1; END")


@pytest.mark.parametrize("expr", [
    "CAST(CAST(a AS STRING) AS INT)", "CASE WHEN a IS NOT NULL THEN 1 ELSE 0 END", "a IS NOT NULL",
    "a = 1 OR a = 2", "a NOT IN (1, 2)", "s NOT LIKE 'x%'", "s LIKE 'x%'", "ARRAY[a, 1]",
    "MAP['k', a]", "ts - INTERVAL '1:00:00' HOUR TO SECOND", "CEIL(ts TO HOUR)",
    "SUBSTRING(s FROM 1 FOR 2)", "a IS DISTINCT FROM 1", "CAST(a AS STRING) || 'first'",
    "(first + after) * 2", "CAST(ts AS TIMESTAMP_LTZ(3))",
    "CAST(ROW(a, s) AS ROW<x INT, y STRING>)",
])
def test_computed_column_expressions(expr: str) -> None:
    """Each expression declares a computed column, is added and modified by ALTER TABLE
    (which re-reads SHOW CREATE TABLE's text), and reads as the same expression in SELECT."""
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t (a INT, s STRING, ts TIMESTAMP(3), first INT, after INT, "
              f"c AS {expr}) WITH ('connector' = 'datagen', 'number-of-rows' = '4', "
              "'fields.a.min' = '0', 'fields.a.max' = '3', 'fields.s.length' = '2')")
    s.execute(f"ALTER TABLE t ADD c2 AS {expr} FIRST")
    s.execute(f"ALTER TABLE t MODIFY c2 AS {expr} AFTER a")
    rows = s.sql(f"SELECT c, c2, {expr} AS e FROM t").collect().to_pylist()
    assert len(rows) == 4 and all(r["c"] == r["c2"] == r["e"] for r in rows)
