"""Flink SQL statements sqlengine does not run are refused naming what they are, with the
statement's first words underlined; they were parse errors at their first word ("unexpected
'LOAD'"). Only text that fails to parse is checked, so no supported form changes; a parse
error names the grammar's choices in words (it showed SHOW_WHAT and SHOW_CREATE_KIND)."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import NotSupportedError, ParseError


@pytest.mark.parametrize(("sql", "reason", "caret"), [
    ("LOAD MODULE hive", "LOAD / UNLOAD MODULE", "LOAD MODULE"),
    ("UNLOAD MODULE core", "LOAD / UNLOAD MODULE", "UNLOAD MODULE"),
    ("ADD JAR '/tmp/x.jar'", "JARs", "ADD JAR"),
    ("SHOW JARS", "JARs", "SHOW JARS"),
    ("DESCRIBE DATABASE default_database", "describing catalogs", "DESCRIBE DATABASE"),
    ("SHOW CREATE CATALOG default_catalog", "describing catalogs", "SHOW CREATE CATALOG"),
    ("ALTER DATABASE d SET ('k' = 'v')", "ALTER is supported for tables and views only",
     "ALTER DATABASE"),
    ("CREATE MATERIALIZED TABLE m AS SELECT 1", "materialized tables",
     "CREATE MATERIALIZED TABLE"),
    ("SHOW PARTITIONS t", "partition", "SHOW PARTITIONS"),
    ("CALL sys.compact('t')", "procedures", "CALL"),
    ("ANALYZE TABLE t COMPUTE STATISTICS", "ANALYZE TABLE", "ANALYZE TABLE"),
    ("TRUNCATE TABLE t", "row-level changes", "TRUNCATE TABLE"),
    ("DELETE FROM t WHERE a = 1", "row-level changes", "DELETE FROM"),
    ("  UPDATE t SET a = 1", "row-level changes", "UPDATE"),
    # (CREATE OR REPLACE TABLE ... AS runs since 37352c5; these forms Flink refuses too)
    ("CREATE OR REPLACE TEMPORARY TABLE t2 WITH ('connector' = 'blackhole') AS SELECT 1 AS a",
     "does not replace a temporary table", "CREATE OR REPLACE TEMPORARY TABLE"),
    ("REPLACE TABLE IF NOT EXISTS t2 WITH ('connector' = 'blackhole') AS SELECT 1 AS a",
     "takes no IF NOT EXISTS", "REPLACE TABLE IF NOT EXISTS"),
])
def test_refused_by_name(sql: str, reason: str, caret: str) -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE t (a INT) WITH ('connector' = 'datagen')")
    with pytest.raises(NotSupportedError, match=reason) as info:
        s.execute(sql)
    text = str(info.value)
    start = sql.index(caret)
    assert f"1:{start + 1}:" in text and " " * (start + 2) + "^" * len(caret) in text


@pytest.mark.parametrize(("sql", "words"), [
    ("SHOW FOO", "expected COLUMNS, CREATE, TABLES, VIEWS"),
    ("SHOW CREATE FOO x", "expected TABLE or VIEW"),
    ("UPDATES", "unexpected 'UPDATES'"),  # (a word only starting like UPDATE)
])
def test_other_text_stays_a_parse_error(sql: str, words: str) -> None:
    with pytest.raises(ParseError, match=words):
        sqlengine.connect().execute(sql)


def test_the_one_module_is_core() -> None:
    """SHOW [FULL] MODULES and USE MODULES core as Flink answers them (PyFlink 2.3: ('core',)
    and ('core', True)); another module is not loaded."""
    s = sqlengine.connect()
    assert s.execute("SHOW MODULES")[-1].table.to_pylist() == [{"module name": "core"}]
    assert s.execute("SHOW FULL MODULES")[-1].table.to_pylist() == [
        {"module name": "core", "used": True}]
    assert s.execute("USE MODULES core")[-1].kind == "ok"
    with pytest.raises(NotSupportedError, match="module 'hive' is not loaded"):
        s.execute("USE MODULES core, hive")
