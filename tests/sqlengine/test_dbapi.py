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


def test_insert_with_parameters_as_duckdb(tmp_path: object) -> None:
    """INSERT takes parameters as a query does (it was 'parameters apply to queries only'):
    execute and executemany, ? and :name, into a table read back as DuckDB holds it."""
    duckdb = pytest.importorskip("duckdb")
    ours = sqlengine.connect({"execution.runtime-mode": "batch"})
    cur = ours.cursor()
    cur.execute(f"CREATE TABLE t (id INT, name STRING, d DATE, p DECIMAL(10, 2)) WITH "
                f"('connector' = 'filesystem', 'path' = '{tmp_path}/t', 'format' = 'json')")
    theirs = duckdb.connect()
    theirs.execute("CREATE TABLE t (id INT, name VARCHAR, d DATE, p DECIMAL(10, 2))")
    steps: list[tuple[str, object, bool]] = [
        ("INSERT INTO t VALUES (?, ?, ?, ?)",
         (1, "it's", dt.date(2020, 1, 2), Decimal("1.50")), False),
        ("INSERT INTO t VALUES (:id, :n, NULL, NULL)", [{"id": 2, "n": "b"},
                                                       {"id": 3, "n": None}], True),
        ("INSERT INTO t SELECT id + ?, name, d, p FROM t WHERE id = ?", [10, 1], False),
    ]
    for sql, params, many in steps:
        (cur.executemany if many else cur.execute)(sql, params)  # type: ignore[operator]
        dsql = sql.replace(":id", "$id").replace(":n", "$n")
        (theirs.executemany if many else theirs.execute)(dsql, params)
    assert cur.rowcount == 1  # (the rows the last INSERT wrote)
    cur.execute("SELECT * FROM t ORDER BY id")
    assert cur.fetchall() == theirs.execute("SELECT * FROM t ORDER BY id").fetchall()


@pytest.mark.parametrize(("sql", "params", "error", "match"), [
    ("SELECT ? AS x", 5, sqlengine.InterfaceError, "a sequence .* or a mapping .*, got int"),
    ("SELECT ? AS x", "ab", sqlengine.InterfaceError, "got str"),
    ("SELECT ? AS x", {1}, sqlengine.InterfaceError, "got set"),
    ("CREATE VIEW v AS SELECT 1 AS x", [1], sqlengine.NotSupportedError,
     "parameters apply to queries and INSERT statements only"),
])
def test_parameters_of_another_kind_are_refused(sql: str, params: object,
                                                error: type[Exception], match: str) -> None:
    # (an int failed with a raw TypeError, a string bound its characters, a set its
    # members in any order)
    cur = sqlengine.connect({"execution.runtime-mode": "batch"}).cursor()
    with pytest.raises(error, match=match):
        cur.execute(sql, params)


@pytest.mark.parametrize(("sql", "params"), [
    ("SELECT id + ? AS x FROM t WHERE id = ?", [100, 7]),
    ("SELECT ? AS tag, id FROM t WHERE id < ? ORDER BY id LIMIT ?", ["s", 20, 3]),
    ("SELECT name, COUNT(*) + ? AS c FROM t GROUP BY name HAVING COUNT(*) > ? ORDER BY name",
     [1000, 28]),
    ("WITH w AS (SELECT id FROM t WHERE id < ?) SELECT id * ? AS y FROM w "
     "WHERE id IN (SELECT id FROM t WHERE id > ?) ORDER BY y", [10, 3, 6]),
    ("SELECT CASE WHEN id > ? THEN ? ELSE ? END AS c, id FROM t WHERE id BETWEEN ? AND ? "
     "ORDER BY id", [3, "big", "small", 2, 5]),
])
def test_positional_parameters_in_the_order_of_the_text(sql: str, params: list) -> None:
    """Each ? takes the parameter of its place in the text (they were taken in the binder's
    order, the WHERE's before the select list's: SELECT id + ? ... WHERE id = ? with
    [100, 7] read id = 100 and gave no row, without a word), as DuckDB's DB-API."""
    ours, theirs = _engines()
    cur = ours.cursor()
    cur.execute(sql, params)
    expected = theirs.execute(sql, params).fetchall()
    assert expected and cur.fetchall() == expected


def test_a_limit_over_an_unbounded_source() -> None:
    """A LIMIT ends a query over an unbounded source: the cursor fetches its rows, as
    collect() returns them (it was refused; found by a probe); without a LIMIT it is
    refused."""
    con = sqlengine.connect({"execution.runtime-mode": "streaming"})
    con.execute("CREATE TABLE g (a INT) WITH ('connector' = 'datagen')")  # (unbounded)
    cur = con.cursor()
    cur.execute("SELECT a FROM g LIMIT 3")
    assert len(cur.fetchall()) == 3
    with pytest.raises(sqlengine.NotSupportedError, match="unbounded"):
        cur.execute("SELECT a FROM g")


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize("expr", ["1 / x", "MOD(1, x)", "CAST(CAST(x AS STRING) || 'a' AS INT)"])
def test_a_value_without_a_result_is_a_data_error(parallelism: str, expr: str) -> None:
    """Division by zero and a CAST of a value its type cannot hold are PEP 249's DataError
    (they were OperationalError; found by a probe), naming the expression."""
    import pyarrow as pa

    con = sqlengine.connect({"parallelism.default": parallelism})
    con.register("t", pa.table({"k": [i % 7 for i in range(2000)], "x": [0] * 2000}))
    with pytest.raises(sqlengine.DataError) as e:
        con.cursor().execute(f"SELECT k, SUM({expr}) FROM t GROUP BY k")
    assert isinstance(e.value, sqlengine.SqlEngineError) and " in " in e.value.message
