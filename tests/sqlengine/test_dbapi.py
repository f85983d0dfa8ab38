"""PEP 249: a script using sqlengine only as a DB-API connection (cursor, parameters,
description, fetchmany, pandas.read_sql) gets the rows DuckDB's DB-API gives for the same
SQL; the module globals, type objects, errors and closed objects behave as PEP 249 says."""

from __future__ import annotations

import datetime as dt
import warnings
from decimal import Decimal

import pytest

import sqlengine

ROWS = [(i, f"n{i % 7}", Decimal(i * 37 % 1000) / 100) for i in range(1, 201)]
VALUES = ", ".join(f"({i}, '{n}', CAST({p} AS DECIMAL(10, 2)))" for i, n, p in ROWS)
QUERIES = [
    ("SELECT id, name, price FROM t WHERE id > :lo AND name <> :skip ORDER BY id",
     {"lo": 150, "skip": "n3"}),
    ("SELECT name, COUNT(*) AS n, SUM(price) AS total, MAX(id) AS top FROM t GROUP BY name "
     "ORDER BY name", None),
    ("SELECT id FROM t WHERE price BETWEEN ? AND ? ORDER BY id", [Decimal("1.00"),
                                                               Decimal("2.00")]),
]


def _engines():  # type: ignore[no-untyped-def]
    duckdb = pytest.importorskip("duckdb")
    ours = sqlengine.connect({"execution.runtime-mode": "batch"})
    ours.cursor().execute(f"CREATE VIEW t (id, name, price) AS VALUES {VALUES}")
    theirs = duckdb.connect()
    theirs.execute(f"CREATE VIEW t (id, name, price) AS VALUES {VALUES}")
    return ours, theirs


@pytest.mark.parametrize(("sql", "params"), QUERIES, ids=["named", "grouped", "qmark"])
def test_rows_as_duckdb(sql: str, params: object) -> None:
    ours, theirs = _engines()
    cur = ours.cursor()
    cur.execute(sql, params)
    dsql = sql.replace(":lo", "$lo").replace(":skip", "$skip")
    expected = theirs.execute(dsql, params).fetchall()
    assert [d[0] for d in cur.description] == [d[0] for d in theirs.description]
    first = cur.fetchmany(3)
    rest = cur.fetchall()
    got = first + rest
    assert [tuple(float(v) if isinstance(v, Decimal) else v for v in r) for r in got] == \
        [tuple(float(v) if isinstance(v, Decimal) else v for v in r) for r in expected]
    assert cur.rowcount == len(expected) and cur.fetchone() is None


def test_pandas_read_sql() -> None:
    pd = pytest.importorskip("pandas")
    ours, theirs = _engines()
    sql = "SELECT name, COUNT(*) AS n FROM t GROUP BY name ORDER BY name"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (pandas prefers SQLAlchemy for non-sqlite3)
        got = pd.read_sql(sql, ours)
    want = theirs.execute(sql).df()
    assert got.to_dict("records") == want.to_dict("records")


def test_pep_249_surface() -> None:
    assert (sqlengine.apilevel, sqlengine.threadsafety, sqlengine.paramstyle) == (
        "2.0", 1, "named")
    for name in ("Error", "DatabaseError", "ProgrammingError", "OperationalError",
                 "InterfaceError", "DataError", "IntegrityError", "NotSupportedError",
                 "InternalError", "Warning"):
        assert issubclass(getattr(sqlengine, name), Exception)
    assert issubclass(sqlengine.BindError, sqlengine.ProgrammingError)
    assert issubclass(sqlengine.ExecutionError, sqlengine.OperationalError)
    with sqlengine.connect() as con:
        cur = con.cursor()
        cur.execute("SELECT 1 AS a, 'x' AS b, DATE '2020-01-01' AS c")
        types = [d[1] for d in cur.description]
        assert types[0] == sqlengine.NUMBER and types[1] == sqlengine.STRING
        assert types[2] == sqlengine.DATETIME and types[0] != sqlengine.STRING
        assert list(cur) == [(1, "x", sqlengine.Date(2020, 1, 1))]
        cur.execute("CREATE TABLE x (a INT) WITH ('connector' = 'blackhole')")
        assert cur.description is None
        with pytest.raises(sqlengine.InterfaceError):
            cur.fetchall()
        with pytest.raises(sqlengine.ProgrammingError):
            cur.execute("SELECT nope")
        con.commit()
        with pytest.raises(sqlengine.NotSupportedError):
            con.rollback()
    with pytest.raises(sqlengine.InterfaceError):
        con.cursor()


@pytest.mark.parametrize("value", [
    b"\x00\x01\xff", bytearray(b"ab"), memoryview(b"xyz"),
    dt.time(1, 2, 3), dt.time(23, 59, 59, 500000),
    dt.time(0, 0, 0, 123456),
], ids=["bytes", "bytearray", "memoryview", "time", "time_ms", "time_us"])
def test_bytes_and_time_parameters_as_duckdb(value: object) -> None:
    """A BYTES or TIME parameter binds (they were 'cannot bind a parameter of type bytes'),
    as DuckDB's DB-API binds them: the same value back, and the same comparisons."""
    ours, theirs = _engines()
    cur = ours.cursor()
    cur.execute("SELECT ? AS v, ? = ? AS same", [value, value, value])
    expected = theirs.execute("SELECT ? AS v, ? = ? AS same", [value, value, value]).fetchall()
    assert cur.fetchall() == expected


def test_a_time_parameter_with_a_zone_is_refused() -> None:
    cur = sqlengine.connect({"execution.runtime-mode": "batch"}).cursor()
    with pytest.raises(sqlengine.Error, match="time 01:02:00\\+00:00 with a time zone"):
        cur.execute("SELECT ? AS x", [dt.time(1, 2, tzinfo=dt.UTC)])
