"""``(a, b, ...) [NOT] IN (subquery)`` as a WHERE condition: a semi join on every field, NOT IN
an anti join that treats a NULL field as possibly equal (so a row is kept only when no row of
the subquery might match). Checked against DuckDB on rows with NULLs, and against the rows
Flink 2.3 returns for the same query."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

duckdb = pytest.importorskip("duckdb")

_rng = random.Random(11)
A = pa.table({"k": [_rng.choice([None, 1, 2, 3, 4]) for _ in range(150)],
              "v": [_rng.choice([None, *range(6)]) for _ in range(150)],
              "g": [_rng.randint(1, 3) for _ in range(150)]})
B = pa.table({"k": [_rng.choice([None, 2, 3, 5]) for _ in range(25)],
              "w": [_rng.choice([None, *range(6)]) for _ in range(25)],
              "g": [_rng.randint(1, 3) for _ in range(25)]})


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    session = sqlengine.connect({"execution.runtime-mode": "batch"})
    session.register("a", A)
    session.register("b", B)
    return session


def _eq(x: object, y: object) -> bool | None:
    return None if x is None or y is None else x == y


def _row_in(row: tuple[object, ...], rows: list[tuple[object, ...]]) -> bool | None:
    """The standard's (PostgreSQL's) three-valued ``row IN (rows)``: TRUE if some row has
    every field equal, else NULL if some row has no field that differs, else FALSE."""
    unknown = False
    for other in rows:
        cmp = [_eq(x, y) for x, y in zip(row, other)]
        if all(c is True for c in cmp):
            return True
        if not any(c is False for c in cmp):
            unknown = True
    return None if unknown else False


def _expected(negated: bool, inner: object, correlated: bool) -> list[tuple[object, ...]]:
    out = []
    for r in A.to_pylist():
        rows = [(b["k"], b["w"]) for b in B.to_pylist() if inner(b) and
                (not correlated or b["g"] == r["g"])]
        got = _row_in((r["k"], r["v"]), rows)
        if (got is False) if negated else (got is True):
            out.append((r["k"], r["v"]))
    return sorted(out, key=repr)


@pytest.mark.parametrize(("where", "negated", "inner", "correlated"), [
    ("", False, lambda b: True, False),
    ("WHERE w IS NOT NULL AND k > 2", False,
     lambda b: b["w"] is not None and b["k"] is not None and b["k"] > 2, False),
    ("", True, lambda b: True, False),
    ("WHERE k IS NOT NULL AND w IS NOT NULL", True,
     lambda b: b["k"] is not None and b["w"] is not None, False),
    ("WHERE w > 2", True, lambda b: b["w"] is not None and b["w"] > 2, False),
    ("WHERE b.g = a.g", False, lambda b: True, True),
    ("WHERE b.g = a.g AND k IS NOT NULL", True, lambda b: b["k"] is not None, True),
    ("WHERE b.g = a.g", True, lambda b: True, True),
])
def test_row_in_as_the_standard(s: sqlengine.Session, where: str, negated: bool,
                                inner: object, correlated: bool) -> None:
    sql = (f"SELECT k, v FROM a WHERE (k, v) {'NOT IN' if negated else 'IN'} "
           f"(SELECT k, w FROM b {where})")
    ours = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)
    assert ours == _expected(negated, inner, correlated)
    if not negated and not correlated:  # (DuckDB agrees on IN; its NOT IN is not the
        con = duckdb.connect()           # standard's when a field is NULL)
        con.register("a", A)
        con.register("b", B)
        assert ours == sorted(con.sql(sql).fetchall(), key=repr)


def test_row_in_coerces_each_field(s: sqlengine.Session) -> None:
    sql = ("SELECT k, v FROM a WHERE (v, k) IN (SELECT w, CAST(k AS BIGINT) FROM b) "
           "AND v > 1")
    want = sorted({(r["k"], r["v"]) for r in A.to_pylist()
                   if r["v"] is not None and r["v"] > 1 and
                   _row_in((r["v"], r["k"]), [(b["w"], b["k"]) for b in B.to_pylist()])},
                  key=repr)
    got = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
    assert sorted(set(got), key=repr) == want


def test_row_in_with_nulls_as_flink(s: sqlengine.Session) -> None:
    s.execute("CREATE TEMPORARY VIEW x AS SELECT * FROM (VALUES (1, 1), (2, 2), "
              "(CAST(NULL AS INT), 3), (3, 4), (2, CAST(NULL AS INT))) AS t(k, v)")
    s.execute("CREATE TEMPORARY VIEW y AS SELECT * FROM (VALUES (1, 1), (2, 5), "
              "(3, CAST(NULL AS INT))) AS t(k, w)")
    q = "SELECT k, v FROM x WHERE (k, v) {} (SELECT k, w FROM y)"
    assert s.sql(q.format("IN")).collect().to_pylist() == [{"k": 1, "v": 1}]
    # (NULL, 3), (3, 4) and (2, NULL) might equal (3, NULL) or (2, 5): not kept
    assert s.sql(q.format("NOT IN")).collect().to_pylist() == [{"k": 2, "v": 2}]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT k FROM a WHERE (k, v) IN (SELECT k FROM b)", "rows of 2 values"),
    ("SELECT k FROM a WHERE (k, v) > ANY (SELECT k, w FROM b)", "only by IN"),
    ("SELECT k FROM a WHERE (k, v) IN (SELECT k, w FROM b) OR v = 1", "whole WHERE"),
    ("SELECT (k, v) IN (SELECT k, w FROM b) FROM a", "whole WHERE"),
])
def test_row_in_refusals(s: sqlengine.Session, sql: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        s.sql(sql).collect()
