"""[CREATE OR] REPLACE TABLE ... WITH (...) AS query, Flink's RTAS (it was refused). The
expected rows and messages were read off PyFlink 2.3 running the same statements (batch
mode, filesystem csv tables):

- REPLACE TABLE drops the table and creates it as CREATE TABLE ... AS would, then fills it.
  Flink's DROP TABLE leaves a filesystem table's files, so at the same path the old rows
  are still there next to the new ones ((3, 'c'), (1, 'a'), (2, 'b') in Flink).
- REPLACE TABLE of a table that does not exist fails ("The table ... to be replaced doesn't
  exist"); CREATE OR REPLACE creates it.
- The query reads the tables as they were: it may read the table it replaces.
- A statement that fails (an unknown column) leaves the old table as it was.
- A temporary table, a view, TEMPORARY and IF NOT EXISTS are refused, as in Flink.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def fs(path: Path) -> str:
    return f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"


def rows(s: sqlengine.Session, table: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in s.sql(f"SELECT * FROM {table}").collect()
                  .to_pylist())


@pytest.fixture(params=["batch", "streaming"])
def s(request: pytest.FixtureRequest) -> sqlengine.Session:
    return sqlengine.connect({"execution.runtime-mode": request.param})


def test_replace_keeps_the_old_files_at_the_same_path_as_flink(s: sqlengine.Session,
                                                               tmp_path: Path) -> None:
    s.execute(f"CREATE TABLE t {fs(tmp_path / 't')} AS SELECT * FROM (VALUES (1, 'a'), "
              "(2, 'b')) AS v(x, y)")
    out = s.execute(f"REPLACE TABLE t {fs(tmp_path / 't')} AS SELECT * FROM (VALUES "
                    "(3, 'c')) AS v(x, y)")
    assert out[-1].message.endswith("Inserted 1 rows into t")
    assert rows(s, "t") == [(1, "a"), (2, "b"), (3, "c")]


def test_replace_makes_a_new_table_of_the_query(s: sqlengine.Session, tmp_path: Path) -> None:
    with pytest.raises(SqlEngineError, match="the table 'r' to be replaced does not exist") \
            as e:
        s.execute(f"REPLACE TABLE r {fs(tmp_path / 'r0')} AS SELECT 1 AS a")
    assert "1:15" in str(e.value)
    s.execute(f"CREATE OR REPLACE TABLE r {fs(tmp_path / 'r1')} AS SELECT 1 AS a")
    assert rows(s, "r") == [(1,)]
    # (the query reads the table it replaces, as it was)
    s.execute(f"CREATE OR REPLACE TABLE r {fs(tmp_path / 'r2')} AS SELECT 'z' AS b, a + 1 AS c "
              "FROM r")
    assert rows(s, "r") == [("z", 2)]
    described = [(r["name"], r["type"]) for r in s.execute("DESCRIBE r")[0].table.to_pylist()]
    assert described == [("b", "STRING"), ("c", "INT")]
    # (a schema, a comment and partitions, as CREATE TABLE ... AS takes them)
    s.execute(f"REPLACE TABLE r (x INT, b STRING) COMMENT 'hi' PARTITIONED BY (b) "
              f"{fs(tmp_path / 'r3')} AS SELECT 'q' AS b")
    assert rows(s, "r") == [(None, "q")]
    text = s.execute("SHOW CREATE TABLE r")[0].table.column(0)[0].as_py()
    assert "COMMENT 'hi'" in text and "PARTITIONED BY (`b`)" in text


def test_a_failed_replace_leaves_the_old_table(s: sqlengine.Session, tmp_path: Path) -> None:
    s.execute(f"CREATE TABLE t {fs(tmp_path / 't')} AS SELECT 1 AS a")
    with pytest.raises(SqlEngineError, match="unknown column 'nosuch'"):
        s.execute(f"REPLACE TABLE t {fs(tmp_path / 'u')} AS SELECT nosuch FROM t")
    with pytest.raises(SqlEngineError, match="connector 'datagen' is not a sink") as e:
        s.execute("REPLACE TABLE t WITH ('connector' = 'datagen') AS SELECT 2 AS a")
    assert "1:15" in str(e.value)
    assert rows(s, "t") == [(1,)]
    assert f"'path' = '{tmp_path / 't'}'" in \
        s.execute("SHOW CREATE TABLE t")[0].table.column(0)[0].as_py()


@pytest.mark.parametrize(("setup", "sql", "message"), [
    ("CREATE TEMPORARY TABLE t (a INT) WITH ('connector' = 'datagen')",
     "REPLACE TABLE t {fs} AS SELECT 1 AS a", "'t' is a temporary table or view"),
    ("CREATE VIEW t AS SELECT 1 AS a", "REPLACE TABLE t {fs} AS SELECT 1 AS a",
     "'t' is a view"),
    ("", "CREATE OR REPLACE TEMPORARY TABLE t {fs} AS SELECT 1 AS a",
     "does not replace a temporary table"),
    ("", "CREATE OR REPLACE TABLE IF NOT EXISTS t {fs} AS SELECT 1 AS a",
     "takes no IF NOT EXISTS"),
])
def test_refused_as_in_flink(s: sqlengine.Session, tmp_path: Path, setup: str, sql: str,
                             message: str) -> None:
    if setup:
        s.execute(setup)
    with pytest.raises(SqlEngineError, match=message):
        s.execute(sql.format(fs=fs(tmp_path / "t")))
    assert not (tmp_path / "t").exists()
