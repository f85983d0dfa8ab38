"""SHOW CREATE TABLE / VIEW: the statement printed, run in a new session, creates the same
table (the same catalog entry) or view."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

TABLES = [
    "CREATE TABLE t (a INT NOT NULL, `b c` STRING, d AS a * 2, ts TIMESTAMP(3), "
    "tags ARRAY<STRING>, r ROW<x INT, `y z` DOUBLE>, m MAP<STRING, BIGINT>, "
    "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (a) NOT ENFORCED) "
    "PARTITIONED BY (`b c`) WITH ('connector' = 'filesystem', 'path' = '/tmp/show-create', "
    "'format' = 'parquet')",
    "CREATE TABLE g (id BIGINT, price DECIMAL(10, 2), name VARCHAR, day DATE, "
    "u AS UPPER(name)) WITH ('connector' = 'datagen', 'number-of-rows' = '10', "
    "'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '10')",
    "CREATE TABLE `it's` (x DOUBLE) WITH ('connector' = 'filesystem', "
    "'path' = '/tmp/it''s', 'format' = 'csv', 'csv.field-delimiter' = ';')",
]


@pytest.mark.parametrize("ddl", TABLES)
def test_show_create_table_round_trips(ddl: str) -> None:
    first = sqlengine.connect()
    first.execute(ddl)
    name = next(iter(first.catalog.table_names()))
    text = first.execute(f"SHOW CREATE TABLE `{name}`")[0].table.column(0)[0].as_py()
    second = sqlengine.connect()
    second.execute(text)
    assert second.catalog.table(name) == first.catalog.table(name)
    again = second.execute(f"SHOW CREATE TABLE `{name}`")[0].table.column(0)[0].as_py()
    assert again == text


def test_show_create_view_round_trips() -> None:
    s = sqlengine.connect()
    s.execute(TABLES[1])
    s.execute("CREATE VIEW v (k, n) COMMENT 'per parity, it''s counted' AS "
              "SELECT id % 2, COUNT(*) FROM g GROUP BY id % 2")
    text = s.execute("SHOW CREATE VIEW v")[0].table.column(0)[0].as_py()
    assert "COMMENT 'per parity, it''s counted' AS" in text
    other = sqlengine.connect()
    other.execute(TABLES[1])
    other.execute(text)
    assert sorted(other.sql("SELECT * FROM v").collect().to_pylist(), key=repr) == \
        sorted(s.sql("SELECT * FROM v").collect().to_pylist(), key=repr)


@pytest.mark.parametrize("sql", ["SHOW CREATE TABLE nope", "SHOW CREATE VIEW g",
                                 "SHOW CREATE TABLE v"])
def test_show_create_errors(sql: str) -> None:
    s = sqlengine.connect()
    s.execute(TABLES[1])
    s.execute("CREATE VIEW v AS SELECT id FROM g")
    with pytest.raises(SqlEngineError):
        s.execute(sql)


def test_show_columns_filters_describe() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE t (amount INT, account STRING, ts TIMESTAMP(3)) "
              "WITH ('connector' = 'datagen')")

    def names(sql: str) -> list[str]:
        return s.execute(sql)[0].table.column(0).to_pylist()

    assert names("SHOW COLUMNS FROM t") == ["amount", "account", "ts"]
    assert names("SHOW COLUMNS IN t LIKE 'a%'") == ["amount", "account"]
    assert names("SHOW COLUMNS FROM t NOT LIKE '%t'") == ["ts"]
    assert names("SHOW COLUMNS FROM t LIKE 'a_count'") == ["account"]
    assert names("SHOW COLUMNS FROM t LIKE 'TS'") == []
    assert names("SHOW COLUMNS FROM t ILIKE 'TS'") == ["ts"]
    assert names("SHOW COLUMNS FROM t NOT ILIKE 'A%'") == ["ts"]
    assert s.execute("SHOW COLUMNS FROM t")[0].table.equals(s.execute("DESCRIBE t")[0].table)
    with pytest.raises(SqlEngineError, match="unknown table or view"):
        s.execute("SHOW COLUMNS FROM nope")


def test_comments_are_kept_and_shown_as_flink_shows_them() -> None:
    """Column and table COMMENTs (they were dropped): SHOW CREATE TABLE prints them as
    PyFlink 2.3 does, DESCRIBE gains a comment column when a column has one."""
    s = sqlengine.connect()
    s.execute("CREATE TABLE c (a INT COMMENT 'the a', b AS a + 1 COMMENT 'b''s', c STRING) "
              "COMMENT 'a table' WITH ('connector' = 'datagen')")
    text = s.execute("SHOW CREATE TABLE c")[0].table.column(0)[0].as_py()
    assert "`a` INT COMMENT 'the a'," in text
    assert "`b` AS a + 1 COMMENT 'b''s'" in text
    assert "\nCOMMENT 'a table'\nWITH (" in text
    described = s.execute("DESCRIBE c")[0].table.to_pylist()
    assert [(r["name"], r["comment"]) for r in described] == [  # (in the declared order)
        ("a", "the a"), ("b", "b's"), ("c", None)]
    s.execute("DROP TABLE c")
    s.execute(text)
    assert s.execute("SHOW CREATE TABLE c")[0].table.column(0)[0].as_py() == text
    s.execute("CREATE TABLE plain (a INT) WITH ('connector' = 'datagen')")
    assert "comment" not in s.execute("DESCRIBE plain")[0].table.column_names
