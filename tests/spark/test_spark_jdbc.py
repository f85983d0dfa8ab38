"""The jdbc connector's parts of a SQL file on Spark, against the real PostgreSQL: a scan read
through our connector, an aggregate written back into a jdbc table (batch and Structured
Streaming: upserted on its primary key), and a lookup join refused with the reason."""

from __future__ import annotations

import uuid
from decimal import Decimal

import pytest

import sqlengine
from sqlengine.errors import NotSupportedError
from tests.connectors.test_jdbc_postgres import URL, _sql, pg  # noqa: F401  (the fixture)

pytest.importorskip("pyspark")


@pytest.fixture
def tables(pg):  # type: ignore[no-untyped-def]  # noqa: F811
    tag = uuid.uuid4().hex[:8]
    made = {"items": f"items_{tag}", "totals": f"totals_{tag}"}
    _sql(pg, f"CREATE TABLE {made['items']} (id INT PRIMARY KEY, name TEXT, "
             "price NUMERIC(10, 2))",
         f"INSERT INTO {made['items']} VALUES (1, 'a', 1.50), (2, 'b', 2.25), (3, 'a', NULL), "
         "(4, 'c', 10.00), (5, 'a', 0.25)",
         f"CREATE TABLE {made['totals']} (name TEXT PRIMARY KEY, n BIGINT, "
         "total NUMERIC(38, 2))")
    yield made
    _sql(pg, *(f"DROP TABLE IF EXISTS {t}" for t in made.values()))


def _session(mode: str, tables: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect({"execution.target": "spark", "execution.runtime-mode": mode,
                           "spark.master": "local[2]"})
    s.execute(f"CREATE TABLE items (id INT, name STRING, price DECIMAL(10, 2), PRIMARY KEY "
              f"(id) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{URL}', 'table-name' "
              f"= '{tables['items']}', 'username' = 'root')")
    s.execute(f"CREATE TABLE totals (name STRING, n BIGINT, total DECIMAL(38, 2), PRIMARY KEY "
              f"(name) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
              f"'table-name' = '{tables['totals']}', 'username' = 'root')")
    return s


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_a_jdbc_table_read_and_written_on_spark(pg, tables: dict[str, str],  # noqa: F811
                                                mode: str) -> None:
    s = _session(mode, tables)
    read = sorted(tuple(r.values()) for r in s.sql(
        "SELECT name, COUNT(*) AS n, SUM(price) AS total FROM items GROUP BY name"
    ).collect().to_pylist())
    want = [("a", 3, Decimal("1.75")), ("b", 1, Decimal("2.25")), ("c", 1, Decimal("10.00"))]
    assert read == want
    s.execute("INSERT INTO totals SELECT name, COUNT(*), SUM(price) FROM items GROUP BY name")
    written = _sql(pg, f"SELECT name, n, total FROM {tables['totals']}")
    assert sorted((a, n, Decimal(t)) for a, n, t in written) == want  # (NUMERIC as text)


def test_a_lookup_join_is_refused_on_spark_naming_it(tables: dict[str, str]) -> None:
    s = _session("streaming", tables)
    s.register("orders_data", __import__("pyarrow").table({"item": [1, 2, 9]}))
    s.execute("CREATE VIEW orders AS SELECT item, PROCTIME() AS pt FROM orders_data")
    with pytest.raises(NotSupportedError, match="LookupJoin"):
        s.sql("SELECT o.item, i.name FROM orders AS o JOIN items FOR SYSTEM_TIME AS OF o.pt "
              "AS i ON o.item = i.id").collect()
