"""A correlated reference two query levels out, through an equality of the query between
(sqlengine/bind_correlation.py), against DuckDB on data with NULLs and duplicates, in batch
and streaming mode; the references no equality carries stay refused by name (all of these
were refused: "belongs to a query more than one level out")."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

duckdb = pytest.importorskip("duckdb")

rng = random.Random(11)


def _col(n: int, top: int) -> pa.Array:
    return pa.array([None if rng.random() < 0.1 else rng.randrange(top) for _ in range(n)],
                    pa.int64())


A = pa.table({"k": _col(40, 12), "v": _col(40, 50)})
B = pa.table({"k": _col(60, 12), "j": _col(60, 8)})
C = pa.table({"j": _col(50, 8), "k": _col(50, 12), "w": _col(50, 30)})

QUERIES = [
    # EXISTS in EXISTS, the innermost reading a.k through b.k = a.k
    "SELECT a.k, a.v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND EXISTS "
    "(SELECT 1 FROM c WHERE c.j = b.j AND c.k = a.k))",
    # NOT EXISTS inside, the equality written the other way round
    "SELECT a.k, a.v FROM a WHERE EXISTS (SELECT 1 FROM b WHERE a.k = b.k AND NOT EXISTS "
    "(SELECT 1 FROM c WHERE c.j = b.j AND c.k = a.k))",
    # a scalar subquery in a comparison, under a scalar subquery in the SELECT list
    "SELECT a.k, (SELECT SUM(b.j) FROM b WHERE b.k = a.k AND b.j > (SELECT MIN(c.j) FROM c "
    "WHERE c.k = a.k)) AS s FROM a",
    # IN inside a scalar COUNT
    "SELECT a.k, a.v FROM a WHERE a.v > (SELECT COUNT(*) FROM b WHERE b.k = a.k AND b.j IN "
    "(SELECT c.j FROM c WHERE c.k = a.k))",
    # the outer column used in the innermost's SELECT list and beside its own correlation
    "SELECT a.k, a.v FROM a WHERE a.v IN (SELECT b.j * 5 FROM b WHERE b.k = a.k AND b.j < "
    "(SELECT MAX(c.w) - a.k FROM c WHERE c.j = b.j))",
]


def _rows(mode: str, sql: str) -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    for name, t in (("a", A), ("b", B), ("c", C)):
        s.register(name, t)
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)


def _duck(sql: str) -> list[tuple]:
    con = duckdb.connect()
    for name, t in (("a", A), ("b", B), ("c", C)):
        con.register(name, t)
    return sorted(con.sql(sql).fetchall(), key=repr)


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("sql", QUERIES)
def test_two_levels_out_through_an_equality_matches_duckdb(sql: str, mode: str) -> None:
    want = _duck(sql)
    assert _rows(mode, sql) == want
    assert want  # (the data reaches the subqueries)


@pytest.mark.parametrize("sql", [
    # the equality under OR: the WHERE may hold where b.k <> a.k
    "SELECT a.k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE (b.k = a.k OR b.j = 1) AND EXISTS "
    "(SELECT 1 FROM c WHERE c.k = a.k))",
    # the subquery in the conjunct that is the equality's own
    "SELECT a.k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k + (SELECT MIN(c.k) FROM c "
    "WHERE c.k = a.k))",
    # no equality with a.k in the query between
    "SELECT a.k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.j = a.v AND EXISTS "
    "(SELECT 1 FROM c WHERE c.k = a.k))",
    # the innermost in the middle query's SELECT list
    "SELECT a.k, (SELECT MAX((SELECT MIN(c.w) FROM c WHERE c.k = a.k)) FROM b WHERE b.k = a.k) "
    "FROM a",
])
def test_other_references_two_levels_out_stay_refused(sql: str) -> None:
    with pytest.raises(SqlEngineError, match="belongs to a query more than one level out"):
        _rows("batch", sql)


def test_a_column_of_another_type_is_not_taken_for_it() -> None:
    """(b.k INT = a.k BIGINT: a.k's value, not b.k's type, is the innermost query's)"""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("a", A)
    s.register("b", B.set_column(0, "k", B.column("k").cast(pa.int32())))
    s.register("c", C)
    with pytest.raises(SqlEngineError, match="more than one level out"):
        s.sql(QUERIES[0])
