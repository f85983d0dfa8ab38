"""Flink's STATE_TTL hint (bind_state_ttl.py): which joins and GROUP BYs take which TTL, as
PyFlink 2.3's EXPLAIN shows them (its stateTtlHints, quoted per case), over the option's
('table.exec.state.ttl' = '1 h' here)."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.optimizer.specs import GroupAggregateSpec, JoinSpec
from sqlengine.query import collect_sink

H, D = 3_600_000, 86_400_000


@pytest.fixture(scope="module")
def session() -> sqlengine.Session:
    s = sqlengine.connect({"table.exec.state.ttl": "1 h"})
    for ddl in ("orders (o_orderkey INT, o_custkey INT, o_totalprice DOUBLE)",
                "lineitem (l_orderkey INT, l_price DOUBLE)",
                "customers (c_custkey INT, c_name STRING)"):
        s.execute(f"CREATE TABLE {ddl} WITH ('connector' = 'datagen')")
    s.execute("CREATE TEMPORARY VIEW big AS SELECT * FROM orders WHERE o_totalprice > 10")
    return s


def ttls(s: sqlengine.Session, sql: str) -> list[tuple]:
    """The stateful operators' TTLs, from the source up: ('join', left, right) or ('agg',
    ttl)."""
    plan = collect_sink(s.sql(sql).logical_plan)
    out = []
    for v in s.job_graph(plan).vertices:
        for op in v.chain:
            if isinstance(op, JoinSpec):
                out.append(("join", op.ttl, op.ttl if op.right_ttl is None else op.right_ttl))
            elif isinstance(op, GroupAggregateSpec):
                out.append(("agg", op.ttl))
    return out


J = "orders o JOIN lineitem l ON o.o_orderkey = l.l_orderkey"


@pytest.mark.parametrize(("sql", "expected"), [
    # {LEFT=3d, RIGHT=1d}
    ("SELECT /*+ STATE_TTL('o'='3d', 'l'='1d') */ * FROM orders o LEFT JOIN lineitem l "
     "ON o.o_orderkey = l.l_orderkey", [("join", 3 * D, D)]),
    # {LEFT=3d}: a table without an alias by its name
    ("SELECT /*+ STATE_TTL('orders'='3d') */ * FROM orders JOIN lineitem ON o_orderkey = "
     "l_orderkey", [("join", 3 * D, H)]),
    # cascade: {LEFT=3d, RIGHT=1d} below, {RIGHT=10d} above (its left input is a join)
    (f"SELECT /*+ STATE_TTL('o'='3d', 'l'='1d', 'c'='10d') */ * FROM {J} JOIN customers c "
     "ON o.o_custkey = c.c_custkey", [("join", 3 * D, D), ("join", H, 10 * D)]),
    # GroupAggregate [1d]
    ("SELECT /*+ STATE_TTL('o'='1d') */ o_orderkey, SUM(o_totalprice) FROM orders o "
     "GROUP BY o_orderkey", [("agg", D)]),
    # over a join the GROUP BY takes none, the join both
    (f"SELECT /*+ STATE_TTL('o'='1d', 'l'='2d') */ o_orderkey, SUM(l_price) FROM {J} "
     "GROUP BY o_orderkey", [("join", D, 2 * D), ("agg", H)]),
    # '0s': kept for ever
    (f"SELECT /*+ STATE_TTL('o'='0s') */ * FROM {J}", [("join", 0, H)]),
    # a subquery by its alias; the GROUP BY inside takes the option's
    ("SELECT /*+ STATE_TTL('o'='1d') */ * FROM (SELECT o_orderkey, COUNT(*) AS n FROM orders "
     "GROUP BY o_orderkey) o JOIN lineitem l ON o.o_orderkey = l.l_orderkey",
     [("agg", H), ("join", D, H)]),
    # the inner block's hint for its GROUP BY only
    ("SELECT * FROM (SELECT /*+ STATE_TTL('orders'='5h') */ o_orderkey, COUNT(*) AS n FROM "
     "orders GROUP BY o_orderkey) o JOIN lineitem l ON o.o_orderkey = l.l_orderkey",
     [("agg", 5 * H), ("join", H, H)]),
    # a comma join with its condition in WHERE
    ("SELECT /*+ STATE_TTL('o'='1d') */ * FROM orders o, lineitem l WHERE o.o_orderkey = "
     "l.l_orderkey", [("join", D, H)]),
    # a GROUP BY with a DISTINCT aggregate (its distinct values expire with the group)
    ("SELECT /*+ STATE_TTL('o'='1d') */ o_orderkey, COUNT(DISTINCT o_custkey) FROM orders o "
     "GROUP BY o_orderkey", [("agg", D)]),
    # a view by its name
    ("SELECT /*+ STATE_TTL('big'='2h') */ * FROM big JOIN lineitem l ON big.o_orderkey = "
     "l.l_orderkey", [("join", 2 * H, H)]),
])
def test_each_input_named_takes_its_ttl_as_flinks(session: sqlengine.Session, sql: str,
                                                  expected: list[tuple]) -> None:
    assert ttls(session, sql) == expected


@pytest.mark.parametrize(("sql", "message"), [
    (f"SELECT /*+ STATE_TTL('x'='1d') */ * FROM {J}",
     "The options of following hints cannot match the name of input tables or views: `x` in "
     "`STATE_TTL`"),
    (f"SELECT /*+ STATE_TTL('O'='1d') */ * FROM {J}", "`O` in `STATE_TTL`"),  # (case)
    (f"SELECT /*+ STATE_TTL('o'='abc') */ * FROM {J}", "Invalid STATE_TTL hint value 'abc'"),
    (f"SELECT /*+ STATE_TTL() */ * FROM {J}", "STATE_TTL hint: expected 'key' = 'value'"),
    # (Flink accepts it and does nothing: no join or GROUP BY takes it)
    ("SELECT /*+ STATE_TTL('o'='1d') */ * FROM orders o", "`o` in `STATE_TTL`"),
    (f"SELECT /*+ MERGE_JOIN(o) */ * FROM {J}", "hint MERGE_JOIN is not supported"),
    ("SELECT * FROM orders o /*+ STATE_TTL('o'='1d') */", "a STATE_TTL hint goes right after "
     "SELECT"),
])
def test_hints_that_cannot_act_are_refused(session: sqlengine.Session, sql: str,
                                           message: str) -> None:
    with pytest.raises(sqlengine.SqlEngineError) as e:
        ttls(session, sql)
    assert message in str(e.value)


def test_a_join_that_keeps_rows_by_time_refuses_the_hint() -> None:
    s = sqlengine.connect()
    for t in ("a", "b"):
        s.execute(f"CREATE TABLE {t} (k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH "
                  "('connector' = 'datagen')")
    with pytest.raises(sqlengine.SqlEngineError, match="applies to regular joins and GROUP "
                       "BYs; this one runs as IntervalJoin"):
        s.sql("SELECT /*+ STATE_TTL('a'='1h') */ * FROM a JOIN b ON a.k = b.k AND a.ts "
              "BETWEEN b.ts - INTERVAL '1' MINUTE AND b.ts").collect()


def test_batch_mode_takes_the_hint_and_keeps_no_state() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TEMPORARY VIEW o AS SELECT * FROM (VALUES (1, 10), (2, 20)) AS t(k, v)")
    s.execute("CREATE TEMPORARY VIEW l AS SELECT * FROM (VALUES (1, 'x')) AS t(k, w)")
    got = s.sql("SELECT /*+ STATE_TTL('o'='1h', 'l'='2h') */ o.k, v, w FROM o JOIN l ON "
                "o.k = l.k").collect().to_pylist()
    assert got == [{"k": 1, "v": 10, "w": "x"}]


def test_plan_advice_knows_a_hinted_join_forgets_its_rows() -> None:
    s = sqlengine.connect()
    for t in ("a", "b"):
        s.execute(f"CREATE TABLE {t} (k INT, v INT) WITH ('connector' = 'datagen')")
    plain = s.execute("EXPLAIN PLAN_ADVICE SELECT * FROM a JOIN b ON a.k = b.k")[-1].message
    assert "keeps every row of both sides for ever" in plain
    one = s.execute("EXPLAIN PLAN_ADVICE SELECT /*+ STATE_TTL('a' = '1 h') */ * FROM a "
                    "JOIN b ON a.k = b.k")[-1].message
    assert "keeps every row of both sides for ever" in one  # (b's rows are kept for ever)
    both = s.execute("EXPLAIN PLAN_ADVICE SELECT /*+ STATE_TTL('a' = '1 h', 'b' = '2 h') */ * "
                     "FROM a JOIN b ON a.k = b.k")[-1].message
    assert "No available advice." in both
