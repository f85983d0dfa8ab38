"""The jdbc sink's buffering and retries against the real PostgreSQL 15: rows held until
'sink.buffer-flush.max-rows' rows or 'sink.buffer-flush.interval' (a background flush), and at
a checkpoint barrier; a write whose connection the server terminated is tried again on a new
connection ('sink.max-retries'), then the job fails naming the server and the table; a
failure that retrying cannot mend (a missing table) fails at once."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import ConnectorError, SqlEngineError
from tests.connectors.test_jdbc_postgres import URL, _sql, pg  # noqa: F401  (the fixture)

SCHEMA = pa.schema([("id", pa.int32()), ("name", pa.string())])


@pytest.fixture
def target(pg: Any) -> Any:  # noqa: F811
    names = {"log": f"log_{uuid.uuid4().hex[:8]}", "kv": f"kv_{uuid.uuid4().hex[:8]}"}
    _sql(pg, f"CREATE TABLE {names['log']} (id INT, name TEXT)",
         f"CREATE TABLE {names['kv']} (id INT PRIMARY KEY, name TEXT)")
    yield names
    _sql(pg, *(f"DROP TABLE IF EXISTS {n}" for n in names.values()))


def _writer(table: str, key: bool = False, **options: str) -> Any:
    from sqlengine.connectors.jdbc_sink import JdbcWriter

    opts = {"url": URL, "table-name": table, "username": "root", **options}
    if key:
        opts["$primary-key"] = '["id"]'
    return JdbcWriter("out", opts, SCHEMA)


def _batch(ids: range) -> pa.RecordBatch:
    return pa.record_batch([pa.array(list(ids), pa.int32()),
                            pa.array([f"n'{i}" for i in ids])], schema=SCHEMA)


def _count(pg: Any, table: str) -> int:  # noqa: F811
    return int(_sql(pg, f"SELECT COUNT(*) FROM {table}")[0][0])


def test_buffered_rows_are_written_by_count_time_and_checkpoint(pg: Any, target: Any  # noqa: F811
                                                                ) -> None:
    log = target["log"]
    w = _writer(log, **{"sink.buffer-flush.max-rows": "10", "sink.buffer-flush.interval": "0"})
    try:
        w.write(_batch(range(0, 4)))
        w.write(_batch(range(4, 8)))
        assert _count(pg, log) == 0  # (8 rows held)
        w.write(_batch(range(8, 12)))
        assert _count(pg, log) == 12  # (12 >= 10: written together)
        w.write(_batch(range(12, 14)))
        w.prepare_commit(1)  # (a checkpoint barrier: what it covers is in the table)
        assert _count(pg, log) == 14
        w.write(_batch(range(14, 15)))
    finally:
        w.close()  # (the end: written)
    assert _count(pg, log) == 15 and w.attempts == 3

    # By time: a background flush, with no write after the rows.
    w = _writer(log, **{"sink.buffer-flush.max-rows": "0",
                        "sink.buffer-flush.interval": "200 ms"})
    try:
        w.write(_batch(range(100, 103)))
        assert _count(pg, log) == 15
        deadline = time.monotonic() + 30
        while _count(pg, log) != 18:
            assert time.monotonic() < deadline, "no background flush in 30 s"
            time.sleep(0.05)
        assert w.attempts == 1
    finally:
        w.close()


def test_upserts_of_a_flush_keep_the_last_change(pg: Any, target: Any) -> None:  # noqa: F811
    kv = target["kv"]
    w = _writer(kv, key=True, **{"sink.buffer-flush.max-rows": "100"})
    try:
        w.write(_batch(range(0, 5)), pa.array(["+I"] * 5))
        w.write(pa.record_batch([pa.array([1, 1, 2, 3], pa.int32()),
                                 pa.array(["n'1", "one", None, "n'3"])], schema=SCHEMA),
                pa.array(["-U", "+U", "-D", "-D"]))
        w.end_input()
    finally:
        w.close()
    assert sorted(_sql(pg, f"SELECT id, name FROM {kv}")) == [(0, "n'0"), (1, "one"),
                                                              (4, "n'4")]


def _terminate(pg: Any, writer: Any) -> None:  # noqa: F811
    """The server ends the writer's connection (as a restart or a failover would)."""
    with writer.con.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        pid = cur.fetchone()[0]
    writer.con.commit()
    assert _sql(pg, f"SELECT pg_terminate_backend({pid})") == [(True,)]


def test_a_lost_connection_is_retried_then_named(pg: Any, target: Any,  # noqa: F811
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlengine.connectors.jdbc_sink as sink

    monkeypatch.setattr(sink, "BACKOFF", 0.01)
    log = target["log"]
    w = _writer(log)
    try:
        w.write(_batch(range(0, 3)))
        _terminate(pg, w)
        w.write(_batch(range(3, 6)))  # (fails, reconnects, succeeds)
        assert w.attempts == 3 and _count(pg, log) == 6
    finally:
        w.close()

    # The server stays away: the retries run out, and the error names server and table.
    w = _writer(log, **{"sink.max-retries": "2"})
    try:
        _terminate(pg, w)
        w._connect = lambda: (_ for _ in ()).throw(ConnectorError(
            "table 'out': cannot connect to 'jdbc:postgresql://127.0.0.1:5432/test': "
            "Connection refused"))
        with pytest.raises(ConnectorError) as info:
            w.write(_batch(range(6, 9)))
        assert info.value.message.startswith(
            f"table 'out': writing to '{log}' at 127.0.0.1:5432/test failed after 3 attempts: ")
        assert "Connection refused" in info.value.message and w.attempts == 3
    finally:
        w.close()

    # A missing table is not retried.
    w = _writer(f"no_such_{uuid.uuid4().hex[:6]}", **{"sink.max-retries": "5"})
    try:
        with pytest.raises(ConnectorError, match=r"writing to 'no_such_\w+' at "
                                                 r"127\.0\.0\.1:5432/test failed: "):
            w.write(_batch(range(3)))
        assert w.attempts == 1
    finally:
        w.close()


def test_sql_options(pg: Any, target: Any) -> None:  # noqa: F811
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE out (id INT, name STRING) WITH ('connector' = 'jdbc', 'url' = "
              f"'{URL}', 'table-name' = '{target['log']}', 'username' = 'root', "
              "'sink.buffer-flush.max-rows' = '1000', 'sink.buffer-flush.interval' = '1 s', "
              "'sink.max-retries' = '1')")
    s.execute("INSERT INTO out VALUES (1, 'a'), (2, 'b')")
    assert sorted(_sql(pg, f"SELECT id, name FROM {target['log']}")) == [(1, "a"), (2, "b")]
    for option, message in [("'sink.buffer-flush.interval' = 'soon'",
                             "sink.buffer-flush.interval"),
                            ("'sink.max-retries' = '-1'", "must be a non-negative integer"),
                            ("'connection.max-retry-timeout' = '1 s'", "not implemented yet")]:
        with pytest.raises(SqlEngineError, match=message):
            s.execute(f"CREATE TABLE x (a INT) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
                      f"'table-name' = 't', {option})")


@pytest.mark.parametrize(("sql", "key", "want"), [
    # HAVING drops the +U of 'a' (MAX 20) but not its -U: the row must go.
    ("SELECT k, MAX(v) FROM src GROUP BY k HAVING MAX(v) < 10", "k", [("b", 5)]),
    # WHERE after the GROUP BY, the same.
    ("SELECT k, m FROM (SELECT k, MAX(v) AS m FROM src GROUP BY k) WHERE m < 10", "k",
     [("b", 5)]),
    # The sink's key (k, m) is not the query's unique key (k): each -U deletes its old row.
    ("SELECT k, SUM(v) FROM src GROUP BY k", "k, m", [("a", 21), ("b", 5)]),
])
def test_a_minus_u_deletes_its_row_as_flinks_sink(pg: Any, target: Any, sql: str,  # noqa: F811
                                                  key: str, want: list) -> None:
    """A -U is a delete to the upsert sink, as in Flink's (JdbcOutputFormat's reduced
    buffer); it was dropped as always followed by its +U, so the rows above stayed stale."""
    table = target["kv"]
    _sql(pg, f"DROP TABLE {table}", f"CREATE TABLE {table} (k TEXT, m INT, PRIMARY KEY ({key}))")

    def batches():  # type: ignore[no-untyped-def]  # (one batch each: a -U, then its +U)
        for k, v in [("a", 1), ("b", 5), ("a", 20)]:
            yield pa.record_batch({"k": pa.array([k]), "v": pa.array([v], pa.int32())})

    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("src", batches())
    s.execute(f"CREATE TABLE out (k STRING, m INT, PRIMARY KEY ({key}) NOT ENFORCED) WITH "
              f"('connector' = 'jdbc', 'url' = '{URL}', 'table-name' = '{table}', "
              "'username' = 'root')")
    s.execute(f"INSERT INTO out {sql}")
    assert sorted(_sql(pg, f"SELECT k, m FROM {table}")) == want


@pytest.mark.parametrize(("server", "declared", "value", "want"), [
    ("bigint", "INT", "42", "42"),
    ("int", "BIGINT", "42", "42"),
    ("double precision", "FLOAT", "CAST(0.5 AS FLOAT)", "0.5"),
    ("date", "TIMESTAMP(3)", "TIMESTAMP '2020-01-01 10:00:00'", "2020-01-01"),
    ("timestamp", "DATE", "DATE '2020-01-01'", "2020-01-01 00:00:00"),
    ("text", "INT", "42", "42"),
    ("int", "DATE", "DATE '1970-01-11'", "is of type integer but expression is of type date"),
    ("date", "INT", "10", "is of type date but expression is of type integer"),
    ("bigint", "TIMESTAMP(6)", "TIMESTAMP '1970-01-01 00:00:01'",
     "is of type bigint but expression is of type timestamp"),
])
def test_an_append_casts_as_an_insert_does(pg: Any, target: Any, server: str,  # noqa: F811
                                           declared: str, value: str, want: str) -> None:
    """A column declared another type than the server's goes through INSERT ... SELECT (the
    server's assignment casts, or its error naming both types): binary COPY sent the Arrow
    form as it was, so a DATE into an int column wrote -10947, an INT into a date 2000-01-11,
    and an INT into a bigint failed ('insufficient data left in message')."""
    table = target["log"]
    _sql(pg, f"DROP TABLE {table}", f"CREATE TABLE {table} (id INT, x {server})")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE out (id INT, x {declared}) WITH ('connector' = 'jdbc', "
              f"'url' = '{URL}', 'table-name' = '{table}', 'username' = 'root')")
    if want[0].isdigit():
        s.execute(f"INSERT INTO out SELECT 1, {value}")
        assert _sql(pg, f"SELECT id, x::text FROM {table}") == [(1, want)]
    else:
        with pytest.raises(ConnectorError, match=want):
            s.execute(f"INSERT INTO out SELECT 1, {value}")
        assert _count(pg, table) == 0


def test_an_append_into_a_schema_qualified_table(pg: Any, target: Any) -> None:  # noqa: F811
    _sql(pg, "CREATE SCHEMA IF NOT EXISTS sink_schema",
         f"CREATE TABLE sink_schema.{target['log']} (id INT, name TEXT)")
    try:
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.execute(f"CREATE TABLE out (id INT, name STRING) WITH ('connector' = 'jdbc', "
                  f"'url' = '{URL}', 'table-name' = 'sink_schema.{target['log']}', "
                  "'username' = 'root')")
        s.execute("INSERT INTO out VALUES (1, 'a'), (2, 'b')")
        assert sorted(_sql(pg, f"SELECT * FROM sink_schema.{target['log']}")) == [
            (1, "a"), (2, "b")]
    finally:
        _sql(pg, f"DROP TABLE sink_schema.{target['log']}")
