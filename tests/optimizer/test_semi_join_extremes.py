"""EXISTS / NOT EXISTS with keys and one comparison meets each key's MIN or MAX
(optimizer/rules/semi_join_extremes.py): random data with NULLs, every comparison, both
orientations, one or two keys, integers, strings, dates and decimals give DuckDB's rows, and
the plan shows the aggregate. Before, the join compared every pair of a key's rows: 10 keys
over 40,000 rows a side took 40 s and 14 GB (bench figures in the rule's note)."""

from __future__ import annotations

import datetime as dt
import random

import duckdb
import pyarrow as pa
import pytest

import sqlengine

VALUES = {
    "int": ([None, 1, 2, 3, 5, 8], pa.int64()),
    "str": ([None, "a", "b", "bb", "c"], pa.string()),
    "date": ([None, dt.date(2020, 1, 1), dt.date(2020, 1, 2), dt.date(2020, 1, 3)],
             pa.date32()),
    "dec": ([None, 1, 2, 3], pa.decimal128(12, 1)),
}


def _tables(rng: random.Random, kind: str) -> tuple[pa.Table, pa.Table]:
    choices, t = VALUES[kind]
    n, m = rng.randint(0, 30), rng.randint(0, 30)
    a = pa.table({"id": pa.array(range(n), pa.int64()),
                  "k": pa.array([rng.choice([None, 1, 2, 3]) for _ in range(n)], pa.int32()),
                  "k2": pa.array([rng.choice([1, 2]) for _ in range(n)], pa.int64()),
                  "v": pa.array([rng.choice(choices) for _ in range(n)], t)})
    b = pa.table({"k": pa.array([rng.choice([None, 1, 2, 3, 4]) for _ in range(m)], pa.int64()),
                  "k2": pa.array([rng.choice([1, 2]) for _ in range(m)], pa.int64()),
                  "v": pa.array([rng.choice(choices) for _ in range(m)], t),
                  "w": pa.array([rng.randint(0, 3) for _ in range(m)], pa.int64())})
    return a, b


@pytest.mark.parametrize("seed", range(4))
def test_exists_with_a_comparison_matches_duckdb(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        a, b = _tables(rng, rng.choice(list(VALUES)))
        op = rng.choice(["<", "<=", ">", ">="])
        keys = rng.choice(["b.k = a.k", "b.k = a.k AND b.k2 = a.k2", "a.k = b.k"])
        cmp = rng.choice([f"b.v {op} a.v", f"a.v {op} b.v"])
        extra = rng.choice(["", " AND b.w > 0"])
        neg = rng.choice(["", "NOT "])
        sql = f"SELECT id FROM a WHERE {neg}EXISTS (SELECT 1 FROM b WHERE {keys} AND {cmp}{extra})"
        con = duckdb.connect()
        con.register("a", a)
        con.register("b", b)
        expected = sorted(r[0] for r in con.sql(sql).fetchall())
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.register("a", a)
        s.register("b", b)
        assert "$extreme" in s.execute("EXPLAIN " + sql)[0].message, sql
        assert sorted(s.sql(sql).collect().column("id").to_pylist()) == expected, sql


@pytest.mark.parametrize(("sql", "mode"), [
    # (streaming: the aggregate's updates would retract the join's output)
    ("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v > a.v)",
     "streaming"),
    # (two comparisons: no one extreme answers both)
    ("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v > a.v AND "
     "b.w < a.v)", "batch"),
    ("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND b.v <> a.v)",
     "batch"),
    # (DOUBLE: NaN is no extreme)
    ("SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND "
     "CAST(b.v AS DOUBLE) > a.v)", "batch"),
])
def test_left_as_it_is(sql: str, mode: str) -> None:
    a, b = _tables(random.Random(9), "int")
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("a", a)
    s.register("b", b)
    assert "$extreme" not in s.execute("EXPLAIN " + sql)[0].message
    con = duckdb.connect()
    con.register("a", a)
    con.register("b", b)
    assert sorted(s.sql(sql).collect().column("id").to_pylist()) == \
        sorted(r[0] for r in con.sql(sql).fetchall())
