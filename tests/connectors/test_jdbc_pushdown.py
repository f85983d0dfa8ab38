"""The jdbc connector's filter pushdown and 'scan.fetch-size' against the real PostgreSQL 15:
random filters (comparisons, IN / NOT IN with NULLs, IS [NOT] NULL, AND / OR / NOT, strings
with quotes, backslashes, trailing blanks and non-ASCII) give the rows DuckDB selects from the
same rows; what is pushed reaches the server as parameters (an injection attempt is a value),
the server sends only the matching rows, EXPLAIN names the pushed filters, and columns the
server holds in a type that compares otherwise (CHAR(n), NUMERIC without a scale) are filtered
by the engine only."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from tests.connectors.test_jdbc_postgres import URL, _sql, pg  # noqa: F401  (the fixture)

duckdb = pytest.importorskip("duckdb")

ROWS = 3000
STRINGS = ["a", "b", "it's", "O''Brien", "back\\slash", "a b", "", "Zed", "ä", "日本", "a  ",
           "%_", "'); DROP TABLE pushdown_victim; --", "B", None]
COLUMNS = ("i INT, b BIGINT, d DECIMAL(10, 2), s STRING, c STRING, f BOOLEAN, dt DATE, "
           "ts TIMESTAMP(3), x DOUBLE, u DECIMAL(12, 2)")


@pytest.fixture(scope="module")
def table(pg: Any) -> Any:  # noqa: F811
    name = f"push_{uuid.uuid4().hex[:8]}"
    rng = random.Random(11)

    def maybe(v: Any) -> Any:
        return None if rng.random() < 0.1 else v

    t0 = dt.datetime(2020, 1, 1)
    data = {
        "i": [maybe(rng.randint(-5, 20)) for _ in range(ROWS)],
        "b": [maybe(rng.randint(-(2**40), 2**40)) for _ in range(ROWS)],
        "d": [maybe(Decimal(rng.randint(-500, 500)) / 100) for _ in range(ROWS)],
        "s": [rng.choice(STRINGS) for _ in range(ROWS)],
        "c": [maybe(rng.choice(["a", "ab", "b", "a b"])) for _ in range(ROWS)],
        "f": [maybe(rng.random() < 0.5) for _ in range(ROWS)],
        "dt": [maybe(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 60)))
               for _ in range(ROWS)],
        "ts": [maybe(t0 + dt.timedelta(milliseconds=rng.randint(0, 60 * 86_400_000)))
               for _ in range(ROWS)],
        "x": [maybe(rng.uniform(-2, 2)) for _ in range(ROWS)],
        "u": [maybe(Decimal(rng.randint(-500, 500)) / 100) for _ in range(ROWS)],
    }
    _sql(pg, f"CREATE TABLE {name} (i INT, b BIGINT, d NUMERIC(10, 2), s TEXT, c CHAR(4), "
             "f BOOLEAN, dt DATE, ts TIMESTAMP(3), x DOUBLE PRECISION, u NUMERIC)",
         "CREATE TABLE IF NOT EXISTS pushdown_victim (a INT)")
    arrow = pa.table({k: pa.array(v, t) for (k, v), t in zip(data.items(), (
        pa.int32(), pa.int64(), pa.decimal128(10, 2), pa.string(), pa.string(), pa.bool_(),
        pa.date32(), pa.timestamp("ms"), pa.float64(), pa.decimal128(12, 2)))})
    with pg.cursor() as cur:
        cur.adbc_ingest(name, arrow, mode="append")
    pg.commit()
    yield name
    _sql(pg, f"DROP TABLE IF EXISTS {name}")


def _session(name: str, extra: str = "") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t ({COLUMNS}) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
              f"'table-name' = '{name}', 'username' = 'root'{extra})")
    return s


def _lit(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ', timespec='milliseconds')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    return str(value)


def _atom(rng: random.Random) -> str:
    op = rng.choice(["=", "<>", "<", "<=", ">", ">="])
    kind = rng.randrange(16)
    if kind == 0:
        return f"i {op} {rng.randint(-6, 21)}"
    if kind == 1:
        return f"b {op} {rng.randint(-(2**40), 2**40)}"
    if kind == 2:
        return f"d {op} {Decimal(rng.randint(-500, 500)) / 100}"
    if kind == 3:
        return f"s {op} {_lit(rng.choice(STRINGS[:-1]))}"
    if kind == 4:
        return f"c {op} {_lit(rng.choice(['a', 'a ', 'ab', 'b']))}"
    if kind == 5:
        return rng.choice(["f", "NOT f", "f IS TRUE", "f IS NOT FALSE", "f = FALSE"])
    if kind == 6:
        return f"dt {op} {_lit(dt.date(2020, 1, 1) + dt.timedelta(days=rng.randint(0, 60)))}"
    if kind == 7:
        when = dt.datetime(2020, 1, 1) + dt.timedelta(milliseconds=rng.randint(0, 5_000_000_000))
        return f"ts {op} {_lit(when)}"
    if kind == 8:
        return f"{rng.choice('ibdscfdxu')} IS {rng.choice(['', 'NOT '])}NULL".replace(
            "d IS", rng.choice(["d IS", "dt IS", "ts IS"]))
    if kind == 9:
        values = rng.sample(STRINGS, 3)
        return f"s {rng.choice(['IN', 'NOT IN'])} ({', '.join(_lit(v) for v in values)})"
    if kind == 10:
        values = [rng.choice([None, *range(-5, 21)]) for _ in range(3)]
        return f"i {rng.choice(['IN', 'NOT IN'])} ({', '.join(_lit(v) for v in values)})"
    if kind == 11:
        return rng.choice(["ts > dt", "i < b", "d >= i", "dt <= ts"])
    if kind == 12:
        return f"u {op} {Decimal(rng.randint(-500, 500)) / 100}"
    if kind == 13:
        return f"x {op} {rng.uniform(-2, 2):.3f}"
    if kind == 14:
        return rng.choice(["i + 1 > 3", "s LIKE 'a%'", "CHAR_LENGTH(s) > 1"])
    return f"dt {op} {_lit(dt.datetime(2020, 1, 1, 12) + dt.timedelta(days=rng.randint(0, 60)))}"


def _predicate(rng: random.Random, depth: int = 0) -> str:
    if depth >= 2 or rng.random() < 0.4:
        return _atom(rng)
    form = rng.randrange(3)
    if form == 0:
        return f"({_predicate(rng, depth + 1)} AND {_predicate(rng, depth + 1)})"
    if form == 1:
        return f"({_predicate(rng, depth + 1)} OR {_predicate(rng, depth + 1)})"
    return f"NOT ({_predicate(rng, depth + 1)})"


def _rows(result: Any) -> list[tuple]:
    return sorted((tuple(r.values()) for r in result), key=repr)


def test_pushed_filters_select_what_duckdb_selects(table: str) -> None:
    s = _session(table)
    everything = s.sql("SELECT * FROM t").collect()  # (no filter: nothing pushed)
    assert everything.num_rows == ROWS
    con = duckdb.connect()
    con.register("t", everything)
    rng = random.Random(5)
    checked = 0
    for _ in range(70):
        where = " AND ".join(_predicate(rng) for _ in range(rng.randint(1, 3)))
        got = s.sql(f"SELECT * FROM t WHERE {where}").collect().to_pylist()
        want = con.execute(f"SELECT * FROM t WHERE {where}").to_arrow_table().to_pylist()
        assert _rows(got) == _rows(want), where
        checked += bool(want)
    assert checked > 20  # (most filters select some rows)
    con.close()


def test_what_reaches_the_server(table: str, pg: Any, monkeypatch: pytest.MonkeyPatch  # noqa: F811
                                 ) -> None:
    import sqlengine.connectors.jdbc as jdbc

    sent: list[tuple[str, tuple[str, ...], int]] = []
    real = jdbc._read

    def spy(read: Any, con: Any, sql: str, params: tuple[str, ...], wanted: list[int],
            fetch: int) -> Any:
        n = 0
        for b in real(read, con, sql, params, wanted, fetch):
            n += b.num_rows
            yield b
        sent.append((sql, params, n))

    monkeypatch.setattr(jdbc, "_read", spy)
    s = _session(table)
    evil = "'); DROP TABLE pushdown_victim; --"
    got = s.sql(f"SELECT s, i FROM t WHERE s = {_lit(evil)} AND i >= 3 AND i + 1 > 0"
                ).collect().to_pylist()
    sql, params, n = sent[-1]
    assert "DROP" not in sql and evil in params
    assert '"s" = $1::text' in sql and '"i" >= $2::int8' in sql and "+" not in sql
    assert n == len(got) > 0 and all(r["s"] == evil and r["i"] >= 3 for r in got)
    assert _sql(pg, "SELECT COUNT(*) FROM pushdown_victim") == [(0,)]  # (still there)

    # Strings compare in code point order, as the engine compares them.
    got = s.sql("SELECT s FROM t WHERE s > 'Z' AND s < 'b'").collect().column(0).to_pylist()
    assert sorted(set(got)) == sorted({v for v in STRINGS if v is not None and "Z" < v < "b"})
    assert 'COLLATE "C"' in sent[-1][0]

    # CHAR(4) (blank-padded, compared without its blanks) and NUMERIC without a scale (values
    # the declared DECIMAL(12, 2) rounds) are filtered by the engine only.
    got = s.sql("SELECT c FROM t WHERE c > 'a' AND u > 0 AND i = 4").collect()
    sql, params, n = sent[-1]
    assert '"c"' not in sql.split("WHERE", 1)[1] and '"u"' not in sql.split("WHERE", 1)[1]
    assert params == ("4",) and n >= got.num_rows
    assert "a   " in got.column(0).to_pylist()  # ('a' padded: greater than 'a' here)

    # EXPLAIN names what is pushed (given the declared types).
    plan = s.sql("SELECT i FROM t WHERE i > 2 AND (s IS NULL OR s IN ('x', 'y')) "
                 "AND x > 0.5").explain()
    assert "jdbc-pushed=[(i > 2), (s IS NULL OR s IN ('x', 'y'))]" in plan


def test_fetch_size_reads_through_a_cursor(table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlengine.connectors.jdbc as jdbc

    sizes: list[int] = []
    real = jdbc._fetched

    def spy(cur: Any, fetch: int) -> Any:
        for b in real(cur, fetch):
            sizes.append(b.num_rows)
            yield b

    monkeypatch.setattr(jdbc, "_fetched", spy)
    plain = _session(table).sql("SELECT i, s, ts FROM t WHERE i > 3").collect()
    assert sizes == []
    fetched = _session(table, ", 'scan.fetch-size' = '97'").sql(
        "SELECT i, s, ts FROM t WHERE i > 3").collect()
    assert _rows(fetched.to_pylist()) == _rows(plain.to_pylist())
    assert max(sizes) == 97 and sum(sizes) == plain.num_rows and len(sizes) > 5
    with pytest.raises(SqlEngineError, match=r"'scan\.fetch-size' must be a non-negative"):
        _session(table, ", 'scan.fetch-size' = '-1'")


def test_a_literal_finer_than_a_microsecond_is_not_pushed(table: str) -> None:
    """PostgreSQL keeps microseconds: a TIMESTAMP(9) literal was sent rounded, so
    ``ts < TIMESTAMP '... 00:00:00.0000001'`` lost the row at 00:00:00 (the same rows held in
    memory, unpushed, are the reference)."""
    s = _session(table)
    s.register("m", s.sql("SELECT * FROM t").collect())
    at = s.sql("SELECT ts FROM t WHERE ts IS NOT NULL ORDER BY ts LIMIT 1").collect()
    first = at.column("ts")[0].as_py().isoformat(sep=" ", timespec="microseconds")
    for where in [f"ts < TIMESTAMP '{first}001'", f"ts <> TIMESTAMP '{first}001'",
                  f"ts NOT IN (TIMESTAMP '{first}999')", f"ts <= TIMESTAMP '{first}999'",
                  "dt < TIMESTAMP '2020-01-01 00:00:00.000000001'"]:
        got = s.sql(f"SELECT i, ts FROM t WHERE {where}").collect().to_pylist()
        want = s.sql(f"SELECT i, ts FROM m WHERE {where}").collect().to_pylist()
        assert _rows(got) == _rows(want) and want, where


def test_a_nondeterministic_collation_is_filtered_by_the_engine(pg: Any) -> None:  # noqa: F811
    """Under a case-insensitive ICU collation PostgreSQL has 'abc' = 'ABC': a pushed <> or
    NOT IN dropped the rows the engine keeps (the same rows in memory are the reference)."""
    name, collation = f"coll_{uuid.uuid4().hex[:8]}", f"ci_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE COLLATION {collation} (provider = icu, locale = 'und-u-ks-level2', "
             "deterministic = false)",
         f"CREATE TABLE {name} (id INT, s TEXT COLLATE {collation})",
         f"INSERT INTO {name} VALUES (1, 'abc'), (2, 'ABC'), (3, 'x'), (4, NULL)")
    try:
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.execute(f"CREATE TABLE t (id INT, s STRING) WITH ('connector' = 'jdbc', 'url' = "
                  f"'{URL}', 'table-name' = '{name}', 'username' = 'root')")
        s.register("m", s.sql("SELECT * FROM t").collect())
        for where in ["s <> 'abc'", "s NOT IN ('abc', 'x')", "s = 'ABC'", "s IN ('abc')",
                      "s < 'b'"]:
            got = s.sql(f"SELECT id FROM t WHERE {where}").collect().to_pylist()
            want = s.sql(f"SELECT id FROM m WHERE {where}").collect().to_pylist()
            assert _rows(got) == _rows(want) and want, where
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {name}", f"DROP COLLATION IF EXISTS {collation}")
