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
    assert _shown(s, "SHOW DATABASES") == ["default", "sales"]
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


def test_show_from_a_database_and_like() -> None:
    # Flink's SHOW ... [FROM | IN ...] [[NOT] LIKE | ILIKE 'pattern'] (FLIP-297)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE CATALOG c1 WITH ('type' = 'generic_in_memory')")
    s.execute("CREATE DATABASE c1.sales")
    for name in ("orders", "order_lines", "Customers"):
        s.execute(f"CREATE TABLE {name} " + TABLE.format(n=1))
    s.execute("CREATE TABLE c1.sales.refunds " + TABLE.format(n=1))
    s.execute("CREATE VIEW big_orders AS SELECT * FROM orders WHERE id > 0")
    s.execute("CREATE VIEW c1.sales.v AS SELECT * FROM c1.sales.refunds")
    assert _shown(s, "SHOW TABLES") == ["Customers", "big_orders", "order_lines", "orders"]
    assert _shown(s, "SHOW TABLES LIKE 'order%'") == ["order_lines", "orders"]
    assert _shown(s, "SHOW TABLES LIKE 'order_'") == ["orders"]
    assert _shown(s, "SHOW TABLES LIKE 'o_ders'") == ["orders"]
    assert _shown(s, "SHOW TABLES NOT LIKE '%order%'") == ["Customers"]
    assert _shown(s, "SHOW TABLES LIKE 'customers'") == []  # (LIKE tells case apart)
    assert _shown(s, "SHOW TABLES ILIKE 'customers'") == ["Customers"]
    assert _shown(s, "SHOW TABLES FROM c1.sales") == ["refunds", "v"]
    assert _shown(s, "SHOW TABLES IN c1.sales NOT LIKE 'v'") == ["refunds"]
    assert _shown(s, "SHOW VIEWS FROM c1.sales") == ["v"]
    assert _shown(s, "SHOW VIEWS LIKE 'big%'") == ["big_orders"]
    # (a created catalog's database is 'default', as Flink's GenericInMemoryCatalog's)
    assert _shown(s, "SHOW DATABASES FROM c1") == ["default", "sales"]
    assert _shown(s, "SHOW DATABASES IN c1 LIKE 's%'") == ["sales"]
    assert _shown(s, "SHOW CATALOGS NOT LIKE 'c_'") == ["default_catalog"]
    assert _shown(s, "SHOW FUNCTIONS LIKE 'UPPE_'") == ["UPPER"]
    assert _shown(s, "SHOW FUNCTIONS ILIKE 'upper'") == ["UPPER"]
    assert _shown(s, "SHOW USER FUNCTIONS") == []
    s.create_function("twice", lambda x: x * 2, "INT")
    assert _shown(s, "SHOW USER FUNCTIONS") == ["TWICE"]
    assert s.execute("SHOW DATABASES")[0].table.column_names == ["database name"]


@pytest.mark.parametrize(("sql", "message"), [
    ("SHOW TABLES FROM nope", "unknown database 'nope'"),
    ("SHOW TABLES FROM c9.x", "unknown catalog 'c9'"),
    ("SHOW DATABASES FROM c9", "unknown catalog 'c9'"),
    ("SHOW CATALOGS FROM x", "SHOW CATALOGS takes no FROM"),
    ("SHOW CURRENT DATABASE LIKE 'x'", "SHOW CURRENT DATABASE takes no LIKE"),
    ("SHOW JOBS LIKE 'x'", "SHOW JOBS takes no LIKE"),
    ("SHOW TABLES NOT", "expected ILIKE, LIKE"),
    ("CREATE TABLE t2 ILIKE t", "unexpected 'ILIKE'"),
    ("SHOW TABLES LIKE x", "expected a string"),
])
def test_show_refuses(sql: str, message: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=message):
        s.execute(sql)
