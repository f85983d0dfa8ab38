"""QUALIFY (Flink's and Snowflake's filter on window functions), checked against DuckDB's on
the same rows; in streaming mode a QUALIFY ROW_NUMBER() = 1 is the Top-N operator."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

duckdb = pytest.importorskip("duckdb")

_rng = random.Random(7)
ROWS = pa.table({
    "g": [_rng.randint(1, 6) for _ in range(300)],
    "s": [_rng.choice(["a", "b", "c", None]) for _ in range(300)],
    "x": [_rng.choice([None, *range(40)]) for _ in range(300)],
    "id": list(range(300)),
})


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    session = sqlengine.connect({"execution.runtime-mode": "batch"})
    session.register("t", ROWS)
    return session


def rows(table: pa.Table) -> list[tuple[object, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


@pytest.mark.parametrize("sql", [
    "SELECT g, s, x, id FROM t "
    "QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY x DESC NULLS LAST, id) = 1",
    "SELECT * FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY g, s ORDER BY id) <= 2",
    "SELECT g, id, ROW_NUMBER() OVER (PARTITION BY g ORDER BY id) AS rn FROM t QUALIFY rn <= 3",
    "SELECT g, id FROM t "
    "QUALIFY RANK() OVER (PARTITION BY g ORDER BY x NULLS FIRST) = 1 AND s = 'a'",
    "SELECT g, id FROM t WHERE x > 10 QUALIFY COUNT(*) OVER (PARTITION BY g) > 8",
    "SELECT g, SUM(x) AS sx FROM t GROUP BY g QUALIFY RANK() OVER (ORDER BY SUM(x) DESC) <= 2",
    "SELECT g, COUNT(*) AS n FROM t GROUP BY g HAVING COUNT(*) > 30 "
    "QUALIFY DENSE_RANK() OVER (ORDER BY COUNT(*)) > 1",
    "SELECT DISTINCT g FROM t QUALIFY SUM(x) OVER (PARTITION BY g) > 700",
    "SELECT g, id FROM t QUALIFY LAG(x) OVER (PARTITION BY g ORDER BY id) < x "
    "ORDER BY g, id LIMIT 7",
    "SELECT t.g AS grp, id FROM t QUALIFY t.x = MAX(t.x) OVER (PARTITION BY t.g)",
])
def test_qualify_against_duckdb(s: sqlengine.Session, sql: str) -> None:
    con = duckdb.connect()
    con.register("t", ROWS)
    theirs = con.sql(sql).arrow()
    theirs = theirs.read_all() if hasattr(theirs, "read_all") else theirs
    ours = s.sql(sql).collect()
    assert ours.column_names == theirs.column_names
    if "LIMIT" in sql:
        assert [tuple(r.values()) for r in ours.to_pylist()] == \
            [tuple(r.values()) for r in theirs.to_pylist()]
    else:
        assert rows(ours) == rows(theirs)


def test_qualify_is_the_top_n_in_streaming() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", ROWS)
    q = s.sql("SELECT g, x, id FROM t "
              "QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY x DESC, id) = 1")
    assert "Rank:" in q.explain() and "limit=1" in q.explain()
    con = duckdb.connect()
    con.register("t", ROWS)
    want = con.sql("SELECT g, x, id FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY g ORDER BY "
                   "x DESC NULLS LAST, id) = 1").fetchall()
    assert rows(q.collect()) == sorted(want, key=repr)


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT g FROM t QUALIFY SUM(x) > 1", "filter on an aggregate with HAVING"),
    ("SELECT g FROM t QUALIFY x", "QUALIFY condition must be BOOLEAN"),
    ("SELECT g FROM t QUALIFY nope = 1", "nope"),
])
def test_qualify_refusals(s: sqlengine.Session, sql: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        s.sql(sql).collect()
