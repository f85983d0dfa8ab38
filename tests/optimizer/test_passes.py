"""Physical passes, each on fixture cases (tests/fixtures/passes/<pass>.slt: SET statements
and a query in; the physical plan before and after the pass out; --update-golden rewrites
them), and each one's switch and effect on the rows."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.optimizer import PHYSICAL_PASSES, optimize, plan_job
from sqlengine.optimizer.passes import PassContext
from sqlengine.optimizer.physical import PhysicalNode
from tests.plans import plan_of
from tests.slt import Case, read_cases, update_case

FIXTURES = Path(__file__).parent.parent / "fixtures" / "passes"
CASES = [(path.stem, case) for path in sorted(FIXTURES.glob("*.slt"))
         for case in read_cases(path)]


def job_graph(sql: str, options: dict[str, str] | None = None) -> str:
    return plan_job(optimize(plan_of(sql), options), options).explain()


def before_and_after(pass_name: str, script: str) -> str:
    """A fixture case: the preamble's tables (tables.sql), the case's SET statements, then
    its query; the physical plan before and after the pass, and what the pass chose."""
    from sqlengine.optimizer import plan_physical
    from sqlengine.optimizer.explain import physical_plan_text
    from sqlengine.plan.display import display_indent

    s = sqlengine.connect()
    s.execute((FIXTURES / "tables.sql").read_text())
    *settings, query = [q for q in script.split(";") if q.strip()]
    for stmt in settings:
        s.execute(stmt)
    steps: dict[str, PhysicalNode] = {}
    notes: list[tuple[str, str]] = []

    def observe(name: str, root: PhysicalNode, ctx: PassContext) -> None:
        steps[name] = root
        notes[:] = ctx.notes

    logical = optimize(s.sql(query).logical_plan, s.options)
    plan_physical(logical, s.options, s.memory_tables(), observe)
    names = list(steps)
    assert pass_name in names, f"{pass_name} did not run (on: {names})"
    after = steps[pass_name]
    if pass_name == "create_graph":
        before = None
        text = ["-- before", display_indent(logical), "-- after"]
    else:
        before = steps[names[names.index(pass_name) - 1]]
        text = ["-- before", physical_plan_text(before, s.options, costs=False), "-- after"]
    text.append("(unchanged)" if after is before else
                physical_plan_text(after, s.options, costs=False))
    text += [f"-- chose: {what}" for name, what in notes if name == pass_name]
    return "\n".join(text)


@pytest.mark.parametrize(("name", "case"), CASES, ids=[f"{n}:{c.name}" for n, c in CASES])
def test_pass(name: str, case: Case, update_golden: bool) -> None:
    text = before_and_after(name, case.input)
    if update_golden:
        update_case(FIXTURES / f"{name}.slt", case.name, text)
        return
    assert text == case.expected


def test_every_pass_has_fixtures() -> None:
    assert {p.name for p in PHYSICAL_PASSES} <= {name for name, _ in CASES}


def test_reuse_can_be_switched_off() -> None:
    sql = "SELECT x.a, y.e FROM u AS x JOIN u AS y ON x.a = y.a"
    assert job_graph(sql).count("Source(u)") == 1
    for key in ("table.optimizer.reuse-source-enabled", "table.optimizer.enabled"):
        assert job_graph(sql, {key: "false"}).count("Source(u)") == 2


def test_a_one_shot_stream_read_by_two_branches_is_read_once() -> None:
    def batches():
        yield pa.record_batch({"k": [1, 2, 2], "v": [10, 20, 30]})

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", batches())
    got = s.sql("SELECT x.k, x.v, y.v AS w FROM t AS x JOIN t AS y ON x.k = y.k").collect()
    assert sorted(tuple(r.values()) for r in got.to_pylist()) == [
        (1, 10, 10), (2, 20, 20), (2, 20, 30), (2, 30, 20), (2, 30, 30)]


# -- join strategy by estimates ----------------------------------------------------------
def _star(options: dict[str, str]) -> sqlengine.Session:
    import numpy as np

    s = sqlengine.connect({"parallelism.default": "2", **options})
    s.register("facts", pa.table({"k": np.arange(200_000) % 500, "v": np.arange(200_000)}))
    s.register("dim", pa.table({"k": np.arange(0, 1000, 2), "name": [f"n{i}" for i in
                                                                     range(0, 1000, 2)]}))
    return s


JOINS = {
    "inner": "SELECT f.k, d.name, f.v FROM facts AS f JOIN dim AS d ON f.k = d.k",
    "left": "SELECT f.k, d.name, f.v FROM facts AS f LEFT JOIN dim AS d ON f.k = d.k",
    "small left side": "SELECT f.k, d.name, f.v FROM dim AS d JOIN facts AS f ON f.k = d.k",
    "small side preserved": "SELECT d.k, f.v FROM dim AS d LEFT JOIN facts AS f "
                            "ON f.k = d.k AND f.v < 1000",
}


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("name", list(JOINS))
def test_the_small_side_is_broadcast_when_it_is_cheaper(name: str, mode: str) -> None:
    sql = JOINS[name]
    chosen = _star({"execution.runtime-mode": mode}).sql(sql)
    forced = _star({"execution.runtime-mode": mode,
                    "table.optimizer.join.broadcast-threshold": "-1"}).sql(sql)
    text = chosen.explain()
    # Batch mode only; a LEFT join may broadcast its right side only: its left rows must
    # each meet every right row in one subtask.
    expected = mode == "batch" and name != "small side preserved"
    assert ("--BROADCAST" in text) == expected, text
    assert "--BROADCAST" not in forced.explain()
    one = sqlengine.connect({"execution.runtime-mode": mode})
    for t in ("facts", "dim"):
        one.register(t, _star({}).catalog.table(t).data.table)  # type: ignore[union-attr]
    want = sorted(tuple(r.values()) for r in one.sql(sql).collect().to_pylist())
    assert sorted(tuple(r.values()) for r in chosen.collect().to_pylist()) == want
    assert sorted(tuple(r.values()) for r in forced.collect().to_pylist()) == want


def _section(explain: str, title: str, until: str) -> str:
    """One section of an EXPLAIN batch-mode star join's output."""
    s = _star({"execution.runtime-mode": "batch"})
    text = s.execute(explain)[-1].message
    return text.split(f"== {title} ==")[1].split(f"== {until} ==")[0]


def test_explain_estimated_cost_shows_estimates_and_costs() -> None:
    physical = _section("EXPLAIN ESTIMATED_COST, CHANGELOG_MODE SELECT f.k, d.name FROM facts "
                        "AS f JOIN dim AS d ON f.k = d.k", "Optimized Physical Plan", "Job Graph")
    assert "Source(facts, fields=[k]), changelogMode=[I] [rows=200,000, width=8 B" in physical
    assert "Source(dim), changelogMode=[I] [rows=500," in physical
    assert "Exchange(BROADCAST, BLOCKING) [network=15.5 KB, disk=15.5 KB" in physical
    assert "cumulative network=" in physical


def test_explain_json_execution_plan_is_json() -> None:
    import json

    s = _star({"execution.runtime-mode": "batch"})
    text = s.execute("EXPLAIN JSON_EXECUTION_PLAN SELECT f.k, d.name FROM facts AS f "
                     "JOIN dim AS d ON f.k = d.k")[-1].message
    plan = json.loads(text.split("== Physical Execution Plan ==")[1])
    join = next(n for n in plan["nodes"] if n["type"] == "join")
    assert join["parallelism"] == 2
    assert sorted(p["ship_strategy"] for p in join["predecessors"]) == ["BROADCAST", "FORWARD"]


def test_aggregation_in_two_phases_in_batch_mode_at_parallelism_above_one() -> None:
    sql = "SELECT k, COUNT(*) AS n, AVG(v) AS a FROM facts GROUP BY k"
    text = _star({"execution.runtime-mode": "batch"}).sql(sql).explain()
    graph = text.split("== Job Graph ==")[1]
    # The pre-aggregation is chained to the source, the shuffle carries partials.
    assert "Source(facts) -> LocalAggregate(keys=[k]" in graph
    assert "--HASH(k0) [BLOCKING]--> v2" in graph and "GlobalAggregate(keys=[k]" in graph
    forced = _star({"execution.runtime-mode": "batch",
                    "table.optimizer.agg-phase-strategy": "ONE_PHASE"}).sql(sql).explain()
    assert "LocalAggregate" not in forced
    # In streaming mode too (the global phase emits the changelog); DISTINCT does not merge.
    streaming = _star({}).sql(sql).explain().split("== Job Graph ==")[1]
    assert "Source(facts) -> LocalAggregate(keys=[k]" in streaming
    assert "--HASH(k0)--> v2" in streaming
    distinct = "SELECT k, COUNT(DISTINCT v) AS n FROM facts GROUP BY k"
    assert "LocalAggregate" not in _star({"execution.runtime-mode": "batch"}).sql(
        distinct).explain()
    with pytest.raises(sqlengine.errors.PlanError, match="agg-phase-strategy"):
        _star({"execution.runtime-mode": "batch",
               "table.optimizer.agg-phase-strategy": "THREE"}).sql(sql).explain()


def test_plan_advice_warns_about_state_that_only_grows() -> None:
    s = sqlengine.connect({"parallelism.default": "2"})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen')")
    s.execute("CREATE TABLE h (k INT, w BIGINT) WITH ('connector' = 'datagen')")
    join = "EXPLAIN PLAN_ADVICE SELECT g.v, h.w FROM g JOIN h ON g.k = h.k"
    text = s.execute(join)[-1].message.split("== Plan Advice ==")[1]
    assert "advice[1]: [WARNING] Join(inner): a regular join over an unbounded input" in text
    group_by = "EXPLAIN PLAN_ADVICE SELECT k, COUNT(*) FROM g GROUP BY k"
    text = s.execute(group_by)[-1].message
    assert "a GROUP BY over an unbounded input keeps state" in text
    # (in two phases too: the global phase keeps the state)
    s.execute("SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE'")
    text = s.execute(group_by)[-1].message
    assert "GlobalAggregate(keys=[k], aggs=[count(*)]): a GROUP BY over an unbounded" in text
    # (a state TTL forgets idle rows and groups: no warning)
    s.execute("SET 'table.exec.state.ttl' = '1 h'")
    assert "No available advice." in s.execute(join)[-1].message
    assert "No available advice." in s.execute(group_by)[-1].message


@pytest.mark.parametrize("phases", ["ONE_PHASE", "TWO_PHASE"])
def test_the_state_ttl_reaches_the_group_by_that_keeps_state(phases: str) -> None:
    from sqlengine.optimizer.specs import GlobalAggregateSpec, GroupAggregateSpec
    from sqlengine.query import collect_sink

    s = sqlengine.connect({"parallelism.default": "2", "table.exec.state.ttl": "90 s",
                           "table.optimizer.agg-phase-strategy": phases})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen')")
    plan = collect_sink(s.sql("SELECT k, COUNT(*) AS n, MAX(v) AS m FROM g GROUP BY k")
                        .logical_plan)
    ops = [op for v in s.job_graph(plan).vertices for op in v.chain
           if isinstance(op, GroupAggregateSpec | GlobalAggregateSpec)]
    assert [op.ttl for op in ops] == [90_000]
    # (DISTINCT aggregates too: their distinct values expire with their group)
    plan = collect_sink(s.sql("SELECT k, COUNT(DISTINCT v) AS n FROM g GROUP BY k")
                        .logical_plan)
    ops = [op for v in s.job_graph(plan).vertices for op in v.chain
           if isinstance(op, GroupAggregateSpec | GlobalAggregateSpec)]
    assert [op.ttl for op in ops] == [90_000]


def test_the_state_ttl_reaches_top_n_and_deduplications() -> None:
    from sqlengine.optimizer.specs_windows import TopNSpec
    from sqlengine.query import collect_sink

    s = sqlengine.connect({"table.exec.state.ttl": "90 s"})
    s.execute("CREATE TABLE g (k INT, v BIGINT, p AS PROCTIME()) WITH ('connector' = "
              "'datagen')")
    for order, limit in (("v DESC", 3), ("p ASC", 1), ("p DESC", 1)):
        sql = (f"SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY "
               f"{order}) AS rn FROM g) WHERE rn <= {limit}")
        plan = collect_sink(s.sql(sql).logical_plan)
        ops = [op for v in s.job_graph(plan).vertices for op in v.chain
               if isinstance(op, TopNSpec)]
        assert [op.ttl for op in ops] == [90_000], order


@pytest.mark.parametrize(("p", "mode"), [(2, "batch"), (4, "batch"), (2, "streaming")])
def test_order_by_is_range_partitioned_and_balanced_on_a_skewed_key(p: int, mode: str) -> None:
    import numpy as np

    rng = np.random.default_rng(3)
    n = 400_000
    data = pa.table({"k": rng.zipf(1.1, n) % 1_000_000, "v": np.arange(n)})
    sql = "SELECT k, v FROM t ORDER BY k DESC NULLS LAST, v"
    one = sqlengine.connect({"execution.runtime-mode": mode})
    one.register("t", data)
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": str(p)})
    s.register("t", data)
    q = s.sql(sql)
    graph = q.explain().split("== Job Graph ==")[1]
    assert "RangeSample" in graph and "--RANGE($part)" in graph and "OrderedConcat" in graph
    assert q.collect().equals(one.sql(sql).collect())
    metrics = q.metrics()
    sort_vertex = next(k.split(".")[0] for k in metrics if k.endswith(".Sort"))
    sizes = [metrics[f"{sort_vertex}[{i}/{p}]"]["records_in"] for i in range(1, p + 1)]
    assert sum(sizes) == n and max(sizes) <= 1.25 * min(sizes), sizes
    off = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": str(p),
                             "table.exec.range-sort.enabled": "false"})
    off.register("t", data)
    assert "RangeSample" not in off.sql(sql).explain()


def test_explain_verbose_shows_what_each_physical_pass_chose() -> None:
    passes = _section("EXPLAIN VERBOSE SELECT d.name, COUNT(*) AS n FROM facts AS f JOIN dim "
                      "AS d ON f.k = d.k GROUP BY d.name ORDER BY n", "Physical Passes",
                      "Optimized Logical Plan")
    steps = {s.split("\n", 1)[0].split(":")[0]: s for s in passes.split("-- after ")[1:]}
    assert list(steps) == ["create_graph", "shuffle_before_windowing", "join_strategy",
                           "interesting_properties", "aggregate_phases", "range_sort",
                           "reuse_sources", "reuse_sub_plans"]
    assert "Exchange(HASH(k))\n                  +- Source(dim)" in steps["create_graph"]
    assert "chose: Join(inner): FORWARD+BROADCAST (costs: HASH+HASH" in steps["join_strategy"]
    assert "Exchange(BROADCAST)\n                  +- Source(dim)" in steps["join_strategy"]
    assert "chose: GroupAggregate(keys=[name]" in steps["aggregate_phases"]
    assert "LocalAggregate" not in steps["join_strategy"]
    assert "LocalAggregate" in steps["aggregate_phases"]
    assert "chose: ORDER BY n ASC NULLS FIRST" in steps["range_sort"]
    assert steps["reuse_sub_plans"].startswith("reuse_sub_plans: unchanged")
    reuse = sqlengine.connect()
    reuse.register("t", pa.table({"k": [1, 2]}))
    text = reuse.execute("EXPLAIN VERBOSE SELECT x.k FROM t AS x JOIN t AS y ON x.k = y.k"
                         )[-1].message
    assert "-- after reuse_sub_plans\n   chose: Source(t) is read once more" in text


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize("sql", [
    "SELECT k, v FROM (SELECT k, v FROM t ORDER BY k DESC, v LIMIT 50) ORDER BY k DESC",
    "SELECT v, k FROM (SELECT k, v FROM t ORDER BY k, v LIMIT 40) ORDER BY k LIMIT 7",
    "SELECT v * 2 AS w, k FROM (SELECT k, v FROM t WHERE v % 3 = 0 ORDER BY k) ORDER BY k",
])
def test_an_order_already_there_is_kept_without_a_second_sort(sql: str, parallelism: str
                                                              ) -> None:
    import numpy as np

    data = pa.table({"k": (np.arange(3000) * 7919) % 1000, "v": np.arange(3000)})
    got = {}
    for name, extra in (("on", {}), ("off", {"table.optimizer.enabled": "false"})):
        s = sqlengine.connect({"execution.runtime-mode": "batch",
                               "parallelism.default": parallelism, **extra})
        s.register("t", data)
        q = s.sql(sql)
        got[name] = [tuple(r.values()) for r in q.collect().to_pylist()]
        sorts = q.explain().split("== Job Graph ==")[1].count("Sort(")
        assert sorts == (1 if name == "on" else 2), q.explain()
    assert got["on"] == got["off"]


TWO_PHASE_SQL = [
    "SELECT k, COUNT(*) AS n, SUM(v) AS s, AVG(d) AS a, MIN(name) AS lo, MAX(v) AS hi, "
    "COUNT(name) AS c FROM t GROUP BY k",
    "SELECT k, name, COUNT(*) FILTER (WHERE v > 100) AS big, SUM(d) AS total FROM t "
    "GROUP BY k, name",
    # over an aggregate's updating result: stays one phase (partials need insert-only input)
    "SELECT n, COUNT(*) AS keys FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) GROUP BY n",
]


@pytest.mark.parametrize("sql", TWO_PHASE_SQL)
def test_streaming_two_phase_aggregation_gives_the_one_phase_changelogs_end(sql: str) -> None:
    import decimal

    import numpy as np

    n = 30_000
    rng = np.random.default_rng(7)
    data = pa.table({
        "k": pa.array([None if i % 41 == 0 else int(x) for i, x in
                       enumerate(rng.integers(0, 60, n))], pa.int32()),
        "name": [None if i % 9 == 0 else f"n{i % 5}" for i in range(n)],
        "v": rng.integers(-50, 500, n),
        "d": pa.array([decimal.Decimal(int(x)) / 100 for x in rng.integers(0, 10_000, n)],
                      pa.decimal128(10, 2)),
    })
    got = {}
    for name, strategy in (("two", "TWO_PHASE"), ("one", "ONE_PHASE")):
        s = sqlengine.connect({"parallelism.default": "2",
                               "table.optimizer.agg-phase-strategy": strategy})
        # (small batches: many partial rows per group, many updates)
        s.register("t", data.to_batches(max_chunksize=997))
        q = s.sql(sql)
        # (the outer GROUP BY of the last query reads updates: one phase in any case)
        job = q.explain().split("== Job Graph ==")[1]
        assert job.count("LocalAggregate") == (name == "two"), job
        got[name] = sorted(map(repr, (tuple(r.values()) for r in q.collect().to_pylist())))
    assert got["two"] == got["one"]
    b = sqlengine.connect({"execution.runtime-mode": "batch"})
    b.register("t", data)
    assert got["two"] == sorted(map(repr, (tuple(r.values())
                                           for r in b.sql(sql).collect().to_pylist())))


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("sql", [
    "SELECT x.k, x.n, y.s FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) AS x "
    "JOIN (SELECT k, SUM(v) AS s FROM t WHERE v % 2 = 0 GROUP BY k) AS y ON x.k = y.k",
    "SELECT x.k, x.n, y.s FROM (SELECT k, COUNT(*) AS n FROM t GROUP BY k) AS x "
    "LEFT JOIN (SELECT CAST(k AS BIGINT) AS k, SUM(v) AS s FROM t WHERE v > 500 GROUP BY k) "
    "AS y ON x.k = y.k",
])
def test_co_partitioned_join_inputs_are_not_shuffled_and_give_the_same_rows(
        sql: str, mode: str) -> None:
    import numpy as np

    data = pa.table({"k": pa.array(np.arange(3000) % 37, pa.int32()),
                     "v": np.arange(3000)})
    got = {}
    for name, extra in (("on", {}), ("off", {"table.optimizer.enabled": "false"})):
        s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": "2",
                               **extra})
        s.register("t", data)
        q = s.sql(sql)
        job = q.explain().split("== Job Graph ==")[1]
        # on: the two aggregates' vertices feed the join FORWARD (no third shuffle)
        assert (job.count("--HASH(") == 2) == (name == "on"), job
        got[name] = sorted(map(repr, (tuple(r.values()) for r in q.collect().to_pylist())))
    assert got["on"] == got["off"]
    assert len(got["on"]) == 37


def test_a_state_ttl_reaches_a_top_n_of_an_updating_input() -> None:
    """Its live rows expire with their partition, as a Top-N of an insert-only input's."""
    from sqlengine.optimizer.specs_windows import TopNSpec
    from sqlengine.query import collect_sink

    s = sqlengine.connect({"table.exec.state.ttl": "1 h"})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen')")
    plan = collect_sink(s.sql(
        "SELECT k, c FROM (SELECT k, c, ROW_NUMBER() OVER (ORDER BY c DESC) AS rn "
        "FROM (SELECT k, COUNT(*) AS c FROM g GROUP BY k)) WHERE rn <= 2").logical_plan)
    ops = [op for v in s.job_graph(plan).vertices for op in v.chain if isinstance(op, TopNSpec)]
    assert [(op.retract, op.ttl) for op in ops] == [(True, 3_600_000)]
