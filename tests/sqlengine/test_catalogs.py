"""In-memory catalogs and databases: CREATE / DROP CATALOG and DATABASE, USE [CATALOG],
qualified names (db.t, catalog.db.t), SHOW CATALOGS / DATABASES / CURRENT ...; an unknown
catalog or database in a name is an error naming it (no longer silently the default)."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

TABLE = "(id INT) WITH ('connector' = 'datagen', 'number-of-rows' = '{n}')"


def _rows(s: sqlengine.Session, sql: str) -> list:
    return [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]


def _shown(s: sqlengine.Session, sql: str) -> list:
    return s.execute(sql)[0].table.column(0).to_pylist()


def test_catalogs_databases_and_qualified_names() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE CATALOG c1 WITH ('type' = 'generic_in_memory')")
    s.execute("CREATE DATABASE c1.sales")
    s.execute("CREATE DATABASE IF NOT EXISTS c1.sales")
    s.execute("CREATE TABLE orders " + TABLE.format(n=2))
    s.execute("CREATE TABLE c1.sales.orders " + TABLE.format(n=3))
    assert _rows(s, "SELECT COUNT(*) FROM orders") == [(2,)]
    assert _rows(s, "SELECT COUNT(*) FROM default_catalog.default_database.orders") == [(2,)]
    assert _rows(s, "SELECT COUNT(*) FROM c1.sales.orders") == [(3,)]
    assert _shown(s, "SHOW CATALOGS") == ["c1", "default_catalog"]
    s.execute("USE CATALOG c1")
    assert _shown(s, "SHOW CURRENT CATALOG") == ["c1"]
    assert _shown(s, "SHOW DATABASES") == ["default_database", "sales"]
    s.execute("USE sales")
    assert _shown(s, "SHOW CURRENT DATABASE") == ["sales"]
    assert _shown(s, "SHOW TABLES") == ["orders"]
    assert _rows(s, "SELECT COUNT(*) FROM orders") == [(3,)]
    assert _rows(s, "SELECT COUNT(*) FROM default_catalog.default_database.orders") == [(2,)]
    s.execute("USE CATALOG default_catalog")
    with pytest.raises(SqlEngineError, match="not empty"):
        s.execute("DROP DATABASE c1.sales")
    s.execute("DROP DATABASE c1.sales CASCADE")
    with pytest.raises(SqlEngineError, match="unknown database 'sales'"):
        s.sql("SELECT * FROM c1.sales.orders").collect()
    s.execute("DROP CATALOG c1")
    assert _shown(s, "SHOW CATALOGS") == ["default_catalog"]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT * FROM nope.orders", "unknown database 'nope'"),
    ("SELECT * FROM c9.x.orders", "unknown catalog 'c9'"),
    ("CREATE TABLE nope.t " + TABLE.format(n=1), "unknown database 'nope'"),
    ("CREATE CATALOG c2", "generic_in_memory"),
    ("CREATE CATALOG c2 WITH ('type' = 'hive')", "generic_in_memory"),
    ("CREATE DATABASE d WITH ('k' = 'v')", "properties"),
    ("USE nope", "unknown database 'nope'"),
    ("USE CATALOG nope", "unknown catalog 'nope'"),
    ("DROP DATABASE default_database", "current database"),
    ("DROP CATALOG default_catalog", "current catalog"),
    ("SELECT * FROM a.b.c.d", "at most three parts"),
])
def test_refused(sql: str, message: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=message):
        s.execute(sql) if not sql.startswith("SELECT") else s.sql(sql).collect()
