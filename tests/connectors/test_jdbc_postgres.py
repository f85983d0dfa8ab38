"""The jdbc connector against the real PostgreSQL 15 (127.0.0.1:5432, trust auth, database
test): a scan with projection, types both ways, an append sink, an upsert sink kept equal to
an updating GROUP BY's result in streaming and batch mode, and what is refused."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import time
import uuid
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

URL = "jdbc:postgresql://127.0.0.1:5432/test"


def _ready() -> bool:
    done = subprocess.run(["pg_isready", "-h", "127.0.0.1", "-p", "5432"],
                          capture_output=True, timeout=30)
    return done.returncode == 0


@pytest.fixture(scope="module")
def pg():  # type: ignore[no-untyped-def]
    """A connection to the local PostgreSQL, started if it has stopped."""
    pytest.importorskip("adbc_driver_postgresql")
    if shutil.which("pg_isready") is None:
        pytest.fail("PostgreSQL's client tools are missing on this machine")
    if not _ready():
        versions = [p.name for p in Path("/etc/postgresql").iterdir()]
        subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", versions[0], "main",
                        "start"], capture_output=True, timeout=120)
        for _ in range(60):
            if _ready():
                break
            time.sleep(1)
    import adbc_driver_postgresql.dbapi as dbapi

    con = dbapi.connect("postgresql://root@127.0.0.1:5432/test")
    yield con
    con.close()


def _sql(con, *statements: str) -> list:  # type: ignore[no-untyped-def]
    rows: list = []
    with con.cursor() as cur:
        for stmt in statements:
            cur.execute(stmt)
            rows = cur.fetchall() if cur.description else []
    con.commit()
    return rows


@pytest.fixture
def names(pg):  # type: ignore[no-untyped-def]
    tag = uuid.uuid4().hex[:8]
    made = {"items": f"items_{tag}", "agg": f"agg_{tag}", "log": f"log_{tag}"}
    _sql(pg, f"CREATE TABLE {made['items']} (id INT PRIMARY KEY, name TEXT, "
             "price NUMERIC(10, 2), ts TIMESTAMP)",
         f"INSERT INTO {made['items']} VALUES (1, 'a', 1.50, '2020-01-01 00:00:00'), "
         "(2, 'b', 2.25, '2020-01-02 12:30:00'), (3, 'a', NULL, NULL), "
         "(4, 'c', 10.00, '2021-06-01 00:00:00')",
         f"CREATE TABLE {made['agg']} (name TEXT PRIMARY KEY, n BIGINT, total NUMERIC(38, 2))",
         f"CREATE TABLE {made['log']} (id INT, name TEXT)")
    yield made
    _sql(pg, *(f"DROP TABLE IF EXISTS {t}" for t in made.values()))


def _session(mode: str, names: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE items (id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), "
              f"PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
              f"'table-name' = '{names['items']}', 'username' = 'root')")
    s.execute(f"CREATE TABLE agg (name STRING, n BIGINT, total DECIMAL(38, 2), PRIMARY KEY "
              f"(name) NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
              f"'table-name' = '{names['agg']}')")
    s.execute(f"CREATE TABLE log (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = "
              f"'{URL}', 'table-name' = '{names['log']}', 'username' = 'root')")
    return s


def test_scan_with_types_and_projection(names: dict[str, str]) -> None:
    s = _session("batch", names)
    got = s.sql("SELECT id, name, price, ts FROM items").collect().to_pylist()
    assert sorted(got, key=lambda r: r["id"]) == [
        {"id": 1, "name": "a", "price": Decimal("1.50"), "ts": dt.datetime(2020, 1, 1)},
        {"id": 2, "name": "b", "price": Decimal("2.25"), "ts": dt.datetime(2020, 1, 2, 12, 30)},
        {"id": 3, "name": "a", "price": None, "ts": None},
        {"id": 4, "name": "c", "price": Decimal("10.00"), "ts": dt.datetime(2021, 6, 1)}]
    assert s.sql("SELECT COUNT(*) AS n FROM items WHERE price > 2").collect().to_pylist() == [
        {"n": 2}]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_upsert_keeps_the_table_equal_to_the_result(pg, names: dict[str, str],  # type: ignore[no-untyped-def]
                                                    mode: str) -> None:
    s = _session(mode, names)
    _sql(pg, f"INSERT INTO {names['agg']} VALUES ('stale', 1, 1)")  # (a key the query keeps)
    s.execute("INSERT INTO agg SELECT name, COUNT(*), SUM(price) FROM items GROUP BY name")
    rows = _sql(pg, f"SELECT name, n, total FROM {names['agg']} ORDER BY name")
    # (ADBC hands NUMERIC over as text)
    assert [(r[0], r[1], Decimal(r[2])) for r in rows] == [
        ("a", 2, Decimal("1.50")), ("b", 1, Decimal("2.25")), ("c", 1, Decimal("10.00")),
        ("stale", 1, Decimal("1"))]
    # Again: an upsert is idempotent.
    s.execute("INSERT INTO agg SELECT name, COUNT(*), SUM(price) FROM items GROUP BY name")
    assert _sql(pg, f"SELECT COUNT(*) FROM {names['agg']}") == [(4,)]


def test_append_sink_and_refusals(pg, names: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    s = _session("streaming", names)
    s.execute("INSERT INTO log SELECT id, name FROM items WHERE id < 3")
    assert sorted(_sql(pg, f"SELECT id, name FROM {names['log']}")) == [(1, "a"), (2, "b")]
    with pytest.raises(SqlEngineError, match="does not support consuming update changes"):
        s.execute("INSERT INTO log SELECT MAX(id), name FROM items GROUP BY name")
    for option, message in [("'scan.partition.column' = 'id'", "partitioned scans"),
                             ("'lookup.cache.ttl' = '10 s'", "expire-after-write"),
                             ("'scan.auto-commit' = 'false'", "'scan.auto-commit' is not "
                                                              "implemented yet")]:
        with pytest.raises(SqlEngineError, match=message):
            s.execute(f"CREATE TABLE x (a INT) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
                      f"'table-name' = 't', {option})")
    with pytest.raises(SqlEngineError, match="jdbc:postgresql://host:port/database"):
        s.execute("CREATE TABLE y (a INT) WITH ('connector' = 'jdbc', 'url' = "
                  "'jdbc:mysql://h/db', 'table-name' = 't')")
    s.execute(f"CREATE TABLE missing (a INT) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
              "'table-name' = 'no_such_table_here')")
    with pytest.raises(SqlEngineError, match="no_such_table_here"):
        s.sql("SELECT * FROM missing").collect()
    s.execute("CREATE TABLE nohost (a INT) WITH ('connector' = 'jdbc', 'url' = "
              "'jdbc:postgresql://127.0.0.1:1/test', 'table-name' = 't')")
    with pytest.raises(SqlEngineError, match="cannot connect"):
        s.sql("SELECT * FROM nohost").collect()


def test_a_value_the_declared_type_cannot_hold_is_refused(pg) -> None:  # type: ignore[no-untyped-def]
    """PostgreSQL's BIGINT 3000000000 read as an INT was -1294967296, an INTEGER 70000 as a
    SMALLINT 4464, a DOUBLE 1e40 as a FLOAT infinity, without a word; each is an error naming
    the table, the column and the value now (as parquet's and csv's values are), and values
    that fit are read."""
    name = f"narrow_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {name} (id INT, v BIGINT, w INT, x DOUBLE PRECISION)",
         f"INSERT INTO {name} VALUES (1, 5, 7, 1.5), (2, 3000000000, 70000, 1e40)")
    try:
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        for col, declared in (("v", "INT"), ("w", "SMALLINT"), ("x", "FLOAT")):
            s.execute(f"CREATE TABLE t_{col} (id INT, {col} {declared}) WITH ('connector' = "
                      f"'jdbc', 'url' = '{URL}', 'table-name' = '{name}', 'username' = 'root')")
            assert s.sql(f"SELECT {col} FROM t_{col} WHERE id = 1").collect().to_pylist() == [
                {col: {"v": 5, "w": 7, "x": 1.5}[col]}]
            with pytest.raises(SqlEngineError) as info:
                s.sql(f"SELECT {col} FROM t_{col}").collect()
            message = str(info.value)
            assert f"table 't_{col}'" in message and f"column {col!r}" in message
            assert {"v": "3000000000", "w": "70000", "x": "1e+40"}[col] in message
            assert f"does not fit the table's {declared}" in message
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {name}")


def test_a_string_column_reads_the_servers_text(pg) -> None:  # type: ignore[no-untyped-def]
    """A uuid, inet, interval or array column declared STRING reads PostgreSQL's text of the
    value, as JDBC's getString does. A uuid failed with "Invalid UTF8 payload", naming no
    column; an inet came as its binary form ('\\x02 \\x00\\x04\\n...'), an interval as '+0-00'
    and an array as '[1, 2]', without a word. Also in a lookup join."""
    name = f"texts_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {name} (id INT, u UUID, ip INET, iv INTERVAL, arr INT[], j JSONB)",
         f"INSERT INTO {name} VALUES (1, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '10.0.0.1', "
         "'1 day 02:00:00', '{1,2}', '{\"a\": 1}'), (2, NULL, NULL, NULL, NULL, NULL)")
    want = {"id": 1, "u": "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "ip": "10.0.0.1/32",
            "iv": "1 day 02:00:00", "arr": "{1,2}", "j": '{"a": 1}'}
    try:
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.execute(f"CREATE TABLE t (id INT, u STRING, ip STRING, iv STRING, arr STRING, "
                  f"j STRING) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
                  f"'table-name' = '{name}', 'username' = 'root')")
        assert s.sql("SELECT * FROM t ORDER BY id").collect().to_pylist() == [
            want, {"id": 2, **{k: None for k in want if k != "id"}}]
        s.execute("CREATE TABLE k (id INT, p AS PROCTIME()) WITH ('connector' = 'datagen', "
                  "'number-of-rows' = '1', 'fields.id.min' = '1', 'fields.id.max' = '1')")
        s.execute("SET 'execution.runtime-mode' = 'streaming'")
        got = s.sql("SELECT t.u, t.iv FROM k JOIN t FOR SYSTEM_TIME AS OF k.p ON k.id = t.id"
                    ).collect().to_pylist()
        assert got == [{"u": want["u"], "iv": want["iv"]}]
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {name}")


def test_money_oid_and_unbounded_times(pg) -> None:  # type: ignore[no-untyped-def]
    """money came as its cents (12.34 as 1234.00) and an oid past INT as a negative number;
    'infinity' dates and timestamps and a time of 24:00 came as garbage (a date 5.8 million
    years BC, midnight): now money and oid read as PostgreSQL shows them, and the unbounded
    values fail the read naming the value and the column."""
    name = f"odd_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {name} (id INT, m MONEY, o OID, d DATE, ts TIMESTAMP, "
             "tz TIMESTAMPTZ, t TIME)",
         f"INSERT INTO {name} VALUES (1, 12.34, 4000000000, '2020-01-01', "
         "'2020-01-01 10:00:00', '2020-01-01 10:00:00+00', '23:59:59.999999'), "
         "(2, -0.5, 7, 'infinity', '-infinity', 'infinity', '24:00:00'), "
         "(3, NULL, NULL, NULL, NULL, NULL, NULL)")
    try:
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.execute(f"CREATE TABLE t (id INT, m DECIMAL(10, 2), o BIGINT, d DATE, "
                  f"ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6), t TIME(6)) WITH ('connector' = "
                  f"'jdbc', 'url' = '{URL}', 'table-name' = '{name}', 'username' = 'root')")
        assert s.sql("SELECT id, m, o FROM t ORDER BY id").collect().to_pylist() == [
            {"id": 1, "m": Decimal("12.34"), "o": 4000000000},
            {"id": 2, "m": Decimal("-0.50"), "o": 7}, {"id": 3, "m": None, "o": None}]
        got = s.sql("SELECT d, ts, t FROM t WHERE id <> 2 ORDER BY id").collect().to_pylist()
        assert got == [{"d": dt.date(2020, 1, 1), "ts": dt.datetime(2020, 1, 1, 10),
                        "t": dt.time(23, 59, 59, 999999)}, {"d": None, "ts": None, "t": None}]
        for column, value in [("d", "infinity"), ("ts", "-infinity"), ("tz", "infinity"),
                              ("t", "24:00:00")]:
            with pytest.raises(SqlEngineError) as info:
                s.sql(f"SELECT {column} FROM t").collect()
            assert f'"{value} in column {column}:' in str(info.value), column
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {name}")
