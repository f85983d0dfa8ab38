"""Lookup joins (``JOIN dim FOR SYSTEM_TIME AS OF o.proc_time``) against a real PostgreSQL
dimension table through the jdbc connector, with and without Flink's partial cache: the same
rows as the join DuckDB computes over the same data; a changed dimension row is seen by rows
processed later unless the cache still holds the key; and what is refused."""

from __future__ import annotations

import uuid

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from tests.connectors.test_jdbc_postgres import URL, _sql, pg  # noqa: F401  (the fixture)

ORDERS = pa.table({"id": pa.array(range(1, 2001), pa.int64()),
                   "customer": pa.array([i % 37 if i % 11 else None for i in range(1, 2001)],
                                        pa.int32()),
                   "amount": pa.array([float(i % 100) for i in range(1, 2001)])})


@pytest.fixture
def dim(pg):  # type: ignore[no-untyped-def]  # noqa: F811
    name = f"customers_{uuid.uuid4().hex[:8]}"
    rows = ", ".join(f"({c}, 'name{c}', {'NULL' if c % 7 == 0 else c * 10})"
                     for c in range(30))  # (customers 30..36 are missing)
    _sql(pg, f"CREATE TABLE {name} (cid INT PRIMARY KEY, cname TEXT, credit INT)",
         f"INSERT INTO {name} VALUES {rows}")
    yield name
    _sql(pg, f"DROP TABLE IF EXISTS {name}")


def _session(dim: str, cache: str = "", parallelism: int = 1,
             batches: bool = False) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    s.register("orders_data", iter(ORDERS.to_batches(max_chunksize=200)) if batches
               else ORDERS)
    s.execute("CREATE VIEW orders AS SELECT id, customer, amount, PROCTIME() AS proc_time "
              "FROM orders_data")
    s.execute(f"CREATE TABLE customers (cid INT, cname STRING, credit INT) WITH ("
              f"'connector' = 'jdbc', 'url' = '{URL}', 'table-name' = '{dim}', "
              f"'username' = 'root'{cache})")
    return s


def _duck(pg, dim: str, sql: str) -> list[tuple]:  # type: ignore[no-untyped-def]  # noqa: F811
    customers = _sql(pg, f"SELECT cid, cname, credit FROM {dim}")
    con = duckdb.connect()
    con.register("orders", ORDERS)
    con.register("customers", pa.table({
        "cid": pa.array([r[0] for r in customers], pa.int32()),
        "cname": [r[1] for r in customers], "credit": pa.array([r[2] for r in customers],
                                                                pa.int32())}))
    return sorted(con.sql(sql).fetchall(), key=repr)


CACHES = {"none": "", "partial": ", 'lookup.cache' = 'PARTIAL', "
                                 "'lookup.partial-cache.max-rows' = '10'"}


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("cache", sorted(CACHES))
@pytest.mark.parametrize("kind", ["JOIN", "LEFT JOIN"])
def test_matches_a_join_over_the_same_rows(pg, dim, kind: str, cache: str,  # noqa: F811
                                           parallelism: int) -> None:
    ours = ("SELECT o.id, o.amount, c.cname, c.credit FROM orders AS o "
            f"{kind} customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.cid "
            "AND c.credit > 50")
    theirs = ("SELECT o.id, o.amount, c.cname, c.credit FROM orders AS o "
              f"{kind} customers AS c ON o.customer = c.cid AND c.credit > 50")
    q = _session(dim, CACHES[cache], parallelism).sql(ours)
    got = sorted((tuple(r.values()) for r in q.collect().to_pylist()), key=repr)
    assert got == _duck(pg, dim, theirs)
    assert len(got) > 100


def test_the_cache_answers_repeated_keys(pg, dim) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    s = _session(dim, ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100'",
                 batches=True)
    q = s.sql("SELECT o.id, c.cname FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF "
              "o.proc_time AS c ON o.customer = c.cid")
    q.collect()
    m = next(v for k, v in q.metrics().items() if k.endswith("LookupJoin"))
    assert m["lookups"] == 37  # each customer key asked once (missing keys cached too)
    assert m["cache_hits"] == 10 * 37 - 37  # (10 batches of 200 orders, every key in each)


def test_without_a_cache_a_changed_row_is_seen(pg, dim) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    s = _session(dim)
    sql = ("SELECT c.cname FROM (SELECT 3 AS customer, PROCTIME() AS t) AS o JOIN customers "
           "FOR SYSTEM_TIME AS OF o.t AS c ON o.customer = c.cid")
    assert s.sql(sql).collect().to_pylist() == [{"cname": "name3"}]
    _sql(pg, f"UPDATE {dim} SET cname = 'renamed' WHERE cid = 3")
    assert s.sql(sql).collect().to_pylist() == [{"cname": "renamed"}]


@pytest.mark.parametrize(("option", "message"), [
    (", 'lookup.cache' = 'FULL'", "lookup.cache"),
    (", 'lookup.cache.ttl' = '10 s'", "lookup.partial-cache.expire-after-write"),
    (", 'lookup.partial-cache.expire-after-write' = 'soon'", "expire-after-write"),
])
def test_bad_lookup_options_are_refused_by_name(pg, dim, option: str,  # noqa: F811
                                                message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        _session(dim, option)


def test_a_table_without_lookups_is_refused() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("orders_data", ORDERS)
    s.execute("CREATE VIEW orders AS SELECT id, customer, PROCTIME() AS proc_time "
              "FROM orders_data")
    s.execute("CREATE TABLE d (cid INT, x INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '5')")
    with pytest.raises(SqlEngineError, match="offers no lookups"):
        s.sql("SELECT * FROM orders AS o JOIN d FOR SYSTEM_TIME AS OF o.proc_time AS c "
              "ON o.customer = c.cid").collect()
