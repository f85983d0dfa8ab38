"""Cost-based join order: the dynamic programming finds the cheapest tree (checked against
every tree), the greedy order covers every input, and the rule's orders on TPC-H shaped
schemas (with row counts from registered tables) are the ones a DBA would pick, give the same
rows as the written order, and are stable (a second pass changes nothing)."""

from __future__ import annotations

import itertools
import random

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import PlanError, SqlEngineError
from sqlengine.optimizer import optimize
from sqlengine.optimizer.join_order import (
    JoinGraph,
    Tree,
    _dynamic_programming,
    _greedy,
    bits_of,
    leaves,
)
from sqlengine.optimizer.rules.reorder_joins import by_cost


def _every_tree(inputs: list[int]) -> list[Tree]:
    if len(inputs) == 1:
        return [inputs[0]]
    out: list[Tree] = []
    first, rest = inputs[0], inputs[1:]
    for k in range(len(rest)):
        for others in itertools.combinations(rest, k):
            left = [first, *others]
            right = [x for x in rest if x not in others]
            out += [(a, b) for a in _every_tree(left) for b in _every_tree(right)]
    return out


def _random_graph(rng: random.Random, n: int) -> JoinGraph:
    rows = [10 ** rng.uniform(0, 6) for _ in range(n)]
    classes = []
    for i in range(1, n):  # a spanning tree of classes, plus some extra links
        j = rng.randrange(i)
        classes.append({i: rows[i] * rng.uniform(0.1, 1), j: rows[j] * rng.uniform(0.1, 1)})
    for _ in range(rng.randrange(3)):
        a, b = rng.sample(range(n), 2)
        classes.append({a: rows[a] * rng.uniform(0.01, 1), b: rows[b] * rng.uniform(0.01, 1)})
    others = [frozenset(rng.sample(range(n), 2))] if rng.random() < 0.5 else []
    return JoinGraph(rows, classes, [], others)


@pytest.mark.parametrize("seed", range(12))
def test_dynamic_programming_finds_the_cheapest_tree(seed: int) -> None:
    rng = random.Random(seed)
    graph = _random_graph(rng, rng.randint(3, 6))
    best = _dynamic_programming(graph)
    assert sorted(leaves(best)) == list(range(graph.size))
    cheapest = min(graph.cost(t) for t in _every_tree(list(range(graph.size))))
    assert graph.cost(best) == pytest.approx(cheapest, rel=1e-9)


def test_greedy_beyond_the_limit_joins_every_input_once() -> None:
    graph = _random_graph(random.Random(7), 14)
    tree = _greedy(graph)
    assert sorted(leaves(tree)) == list(range(14))
    assert bits_of(tree) == (1 << 14) - 1


def test_a_composite_key_is_no_more_distinct_than_its_rows() -> None:
    # lineitem (6M) and partsupp (800k) on (partkey, suppkey): independent columns would
    # give 6M x 800k / (200k x 10k) = 2,400 rows; capped by the rows, 800k (the truth: 6M).
    graph = JoinGraph([6e6, 8e5], [{0: 2e5, 1: 2e5}, {0: 1e4, 1: 1e4}])
    assert graph.card(0b11) == pytest.approx(8e5)


def test_a_selective_dimension_joins_first() -> None:
    # fact (1M) with dimensions d1 (1,000 rows, 10 left by a filter) and d2 (1,000 rows).
    graph = JoinGraph([1e6, 10, 1000], [{0: 1000, 1: 10}, {0: 1000, 2: 1000}])
    tree = _dynamic_programming(graph)
    assert tree in (((0, 1), 2), ((1, 0), 2), (2, (0, 1)), (2, (1, 0)))


def _star(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    con.execute("""
        CREATE TABLE fact AS SELECT i AS id, i % 1000 AS d1, i % 97 AS d2, i % 10 AS d3,
            (i * 7) % 13 AS v FROM range(200000) t(i);
        CREATE TABLE dim1 AS SELECT i AS k, 'n' || (i % 50) AS name FROM range(1000) t(i);
        CREATE TABLE dim2 AS SELECT i AS k, i % 5 AS grp FROM range(97) t(i);
        CREATE TABLE dim3 AS SELECT i AS k, i % 2 = 0 AS even FROM range(10) t(i);
    """)
    return {n: con.execute(f"SELECT * FROM {n}").to_arrow_table()
            for n in ("fact", "dim1", "dim2", "dim3")}


QUERY = """SELECT dim1.name, dim2.grp, COUNT(*) AS n, SUM(v) AS s
FROM fact, dim1, dim2, dim3
WHERE fact.d1 = dim1.k AND fact.d2 = dim2.k AND fact.d3 = dim3.k AND dim3.even
  AND dim1.name = 'n7'
GROUP BY dim1.name, dim2.grp ORDER BY dim2.grp"""


def _session(tables: dict[str, pa.Table], **options: str) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch", **options})
    for name, table in tables.items():
        s.register(name, table)
    return s


def test_star_query_orders_by_cost_and_gives_duckdbs_rows() -> None:
    con = duckdb.connect()
    tables = _star(con)
    want = con.execute(QUERY).fetchall()
    on = _session(tables)
    off = _session(tables, **{"table.optimizer.join-reorder-enabled": "false"})
    for s in (on, off):
        assert [tuple(r.values()) for r in s.sql(QUERY).collect().to_pylist()] == want
    text = on.execute(f"EXPLAIN ESTIMATED_COST {QUERY}")[0].message
    notes = text[text.index("== Join Order =="):]
    assert "as written: (((fact JOIN dim1) JOIN dim2) JOIN dim3)" in notes
    chosen = notes.splitlines()[2]
    # The fact table meets the filtered dimensions (dim1: 1 of 50 names, dim3: half) before
    # the unfiltered one.
    assert chosen.index("dim2") > max(chosen.index("dim1"), chosen.index("dim3")) or \
        chosen.startswith("chosen:     (dim2")
    assert "== Join Order ==" not in off.execute(f"EXPLAIN ESTIMATED_COST {QUERY}")[0].message


def test_the_order_is_stable_across_passes() -> None:
    con = duckdb.connect()
    tables = _star(con)
    s = _session(tables)
    bound = s.sql(QUERY).logical_plan
    notes: list[str] = []
    once = optimize(bound, s.options, tables=s.memory_tables(), notes=notes)
    twice = optimize(once, s.options, tables=s.memory_tables())
    assert once == twice
    assert len(notes) == 2  # one reordering, reported once


def test_option_values() -> None:
    assert by_cost({"execution.runtime-mode": "batch"})
    assert not by_cost({})
    assert by_cost({"table.optimizer.join-reorder-enabled": "TRUE"})
    with pytest.raises(PlanError, match="join-reorder-enabled"):
        by_cost({"table.optimizer.join-reorder-enabled": "yes"})
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match="join-reorder-enabled"):
        s.execute("SET 'table.optimizer.join-reorder-enabled' = 'maybe'")
