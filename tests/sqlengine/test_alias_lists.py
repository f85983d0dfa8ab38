"""A FROM item's column alias list, ``t AS x (c1, c2, ...)``, renames the columns by position
(it was ignored on a table, a view or a WITH query: ``SELECT b FROM t AS x (a, c, b)`` read
the old column b, without a word); the list takes names only (``t SAMPLE (2)`` was table t
named SAMPLE with a column named 2, all its rows kept); VALUES keeps its ORDER BY / LIMIT /
OFFSET (they were dropped). Against DuckDB, which reads these the same way."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import ParseError

T = pa.table({"a": pa.array([3, 1, 2, 2, None], pa.int32()),
              "b": ["x", "y", None, "w", "v"],
              "c": pa.array([1.5, None, 2.5, 0.5, 4.0])})
U = pa.table({"k": pa.array([1, 2, 5], pa.int32()), "e": ["one", "two", "five"]})

QUERIES = [
    "SELECT b FROM t AS y (x, c, b)",
    "SELECT y.b, y.x FROM t y (x, c, b) WHERE x > 1",
    "SELECT x, COUNT(*) AS n FROM t AS y (x, b, c) GROUP BY x",
    "SELECT l.v1, r.v2 FROM t AS l (k1, v1, w1) JOIN u AS r (k2, v2) ON l.k1 = r.k2",
    "WITH q AS (SELECT a, b FROM t) SELECT p, r FROM q AS z (p, r) WHERE r <> 'x'",
    "SELECT m, n FROM vw AS v2 (m, n) WHERE m < 3",
    "SELECT * FROM (SELECT a, c FROM t) AS s (c, a) WHERE a > 1",
]

VALUES_QUERIES = [
    "VALUES (1), (2), (3) ORDER BY 1 DESC",
    "VALUES (1, 'a'), (3, 'c'), (2, 'b') ORDER BY 1 DESC LIMIT 2",
    "VALUES (1), (2), (3) LIMIT 1 OFFSET 1",
    "VALUES (5), (4), (6) ORDER BY 1 OFFSET 1",
]


def _session(mode: str) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", T)
    s.register("u", U)
    s.execute("CREATE VIEW vw AS SELECT a, b FROM t")
    return s


def _duck() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.register("t", T)
    con.register("u", U)
    con.execute("CREATE VIEW vw AS SELECT a, b FROM t")
    return con


def _sorted(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=lambda r: tuple((v is None, str(v)) for v in r))


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("sql", QUERIES)
def test_an_alias_list_renames_the_columns_as_duckdb(sql: str, mode: str) -> None:
    got = _session(mode).sql(sql).collect()
    want = _duck().sql(sql)
    assert got.column_names == want.columns
    assert _sorted([tuple(r.values()) for r in got.to_pylist()]) == _sorted(want.fetchall())


@pytest.mark.parametrize("sql", VALUES_QUERIES)
def test_values_keeps_its_order_by_and_limit_as_duckdb(sql: str) -> None:
    got = _session("batch").sql(sql).collect()
    assert [tuple(r.values()) for r in got.to_pylist()] == _duck().sql(sql).fetchall()


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT a FROM t SAMPLE (2)", "1:25: a column alias must be a name, not '2'"),
    ("SELECT a FROM t x ('a')", "1:20: a column alias must be a name, not 'a'"),
    ("WITH c (3) AS (SELECT 1) SELECT * FROM c", "1:9: a column alias must be a name"),
    ("SELECT * FROM (SELECT 1) x (2.5)", "a column alias must be a name, not '2.5'"),
    ("SELECT * FROM t AS y (x INT, b, c)", "a column alias is a name only, not 'x INT'"),
])
def test_an_alias_list_takes_names_only(sql: str, message: str) -> None:
    with pytest.raises(ParseError) as e:
        _session("batch").sql(sql).collect()
    assert message in str(e.value)


def test_an_alias_list_names_every_column() -> None:
    with pytest.raises(sqlengine.SqlEngineError, match="2 column names given for 3 columns"):
        _session("batch").sql("SELECT * FROM t AS y (x, b)").collect()
