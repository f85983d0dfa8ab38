"""Python aggregate functions in two phases: a class UDAF with merge() is pre-aggregated
before the shuffle (LocalAggregate: a fresh accumulator per group and batch, pickled) and
merged after it (GlobalAggregate: the function's merge()), in batch and streaming mode, at
parallelism 2 and 3, with threads and with worker processes. Each two-phase result is
checked against the same query in one phase and against the built-in aggregates over the
same rows (an independent answer); EXPLAIN shows the split, or says which function keeps a
GROUP BY in one phase and why."""

from __future__ import annotations

import pickle
import threading
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
from sqlengine import functions_python
from sqlengine.errors import SqlEngineError
from sqlengine.plan.expressions import AggCall, ColumnRef
from sqlengine.plan.partials import ACCUMULATOR, partial_fields, python_blocker
from sqlengine.runtime.elements import ROWKIND, UPDATE_AFTER
from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
from sqlengine.runtime.operators.base import OperatorContext
from sqlengine.runtime.operators.two_phase import LocalAggregateOperator


@sqlengine.udaf(result_type="BIGINT")
class PySum:
    """SUM (NULLs skipped; NULL for a group without values); merge() changes ``acc``."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return [0, 0]

    def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
        if v is not None:
            acc[0] += v
            acc[1] += 1

    def merge(self, acc, others):  # type: ignore[no-untyped-def]
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0] if acc[1] else None


class Spread:
    """A user class as the accumulator (pickled by reference across processes)."""

    def __init__(self) -> None:
        self.lo: int | None = None
        self.hi: int | None = None

    def add(self, v: int) -> None:
        self.lo = v if self.lo is None else min(self.lo, v)
        self.hi = v if self.hi is None else max(self.hi, v)


@sqlengine.udaf(result_type="BIGINT")
class PySpread:
    """MAX(v) - MIN(v); merge() returns a new accumulator instead of changing ``acc``."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return Spread()

    def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
        if v is not None:
            acc.add(v)

    def merge(self, acc, others):  # type: ignore[no-untyped-def]
        out = Spread()
        for a in (acc, *others):
            for v in (a.lo, a.hi):
                if v is not None:
                    out.add(v)
        return out

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return None if acc.lo is None else acc.hi - acc.lo


@sqlengine.udaf(result_type="DOUBLE")
class WeightedAvg:
    """SUM(v * w) / SUM(w) over an immutable accumulator (accumulate returns a new tuple)."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return (0.0, 0.0)

    def accumulate(self, acc, v, w):  # type: ignore[no-untyped-def]
        if v is None or w is None:
            return acc
        return (acc[0] + v * w, acc[1] + w)

    def merge(self, acc, others):  # type: ignore[no-untyped-def]
        return (acc[0] + sum(o[0] for o in others), acc[1] + sum(o[1] for o in others))

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0] / acc[1] if acc[1] else None


@sqlengine.udaf(result_type="BIGINT")
class CountNoMerge:
    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return [0]

    def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
        acc[0] += 1

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0]


@sqlengine.udaf(result_type="BIGINT")
class Locked:
    """Mergeable, but its accumulator holds a lock: it cannot be pickled."""

    def create_accumulator(self):  # type: ignore[no-untyped-def]
        return [0, threading.Lock()]

    def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
        acc[0] += 1

    def merge(self, acc, others):  # type: ignore[no-untyped-def]
        acc[0] += sum(o[0] for o in others)

    def get_value(self, acc):  # type: ignore[no-untyped-def]
        return acc[0]


@sqlengine.udaf(result_type="DOUBLE", kind="pandas")
def pandas_mean(v):  # type: ignore[no-untyped-def]
    return float(v.mean())


FUNCTIONS = {"py_sum": PySum, "spread": PySpread, "wavg": WeightedAvg,
             "count_no_merge": CountNoMerge, "locked": Locked, "pmean": pandas_mean}


def _data(n: int = 3000) -> pa.Table:
    rng = np.random.default_rng(20)
    k = rng.integers(0, 23, n)
    return pa.table({
        "k": pa.array([None if i % 29 == 0 else int(x) for i, x in enumerate(k)], pa.int32()),
        "name": pa.array([f"n{x % 3}" for x in rng.integers(0, 9, n)]),
        "v": pa.array([None if i % 13 == 0 else int(x) for i, x in
                       enumerate(rng.integers(-500, 500, n))], pa.int64()),
        "w": pa.array(rng.integers(1, 5, n), pa.int64())})


DATA = _data()


def _session(opts: dict[str, str]) -> sqlengine.Session:
    s = sqlengine.connect(opts)
    for name, f in FUNCTIONS.items():
        s.create_function(name, f)
    # (in batches of 97 rows: many partial rows per group, and many updates in streaming)
    s.register("t", pa.Table.from_batches(DATA.to_batches(max_chunksize=97)))
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)


def _job(s: sqlengine.Session, sql: str) -> str:
    return s.sql(sql).explain().split("== Job Graph ==")[1]


# UDAFs mixed with built-in aggregates (and a FILTER) in one GROUP BY of two keys (a NULL key
# among them), and the same with built-in aggregates only.
PY = ("SELECT k, name, py_sum(v) AS s, spread(v) AS sp, wavg(v, w) AS wa, COUNT(*) AS c, "
      "SUM(w) AS sw, MIN(v) AS lo, py_sum(v) FILTER (WHERE w > 3) AS f FROM t GROUP BY k, name")
SQL = ("SELECT k, name, SUM(v) AS s, MAX(v) - MIN(v) AS sp, CAST(SUM(v * w) AS DOUBLE) / "
       "SUM(CASE WHEN v IS NULL THEN NULL ELSE w END) AS wa, COUNT(*) AS c, SUM(w) AS sw, "
       "MIN(v) AS lo, SUM(v) FILTER (WHERE w > 3) AS f FROM t GROUP BY k, name")


def _same(got: list[tuple], want: list[tuple]) -> None:
    """Row for row equal, floats to 1e-9 (sums added in other orders)."""
    assert len(got) == len(want) and want
    for g, w in zip(got, want):
        assert g[:4] == w[:4] and g[5:] == w[5:], (g, w)
        assert (g[4] is None) == (w[4] is None), (g, w)
        assert g[4] is None or abs(g[4] - w[4]) <= 1e-9 * max(1.0, abs(w[4])), (g, w)


BUILT_IN = _rows(_session({"execution.runtime-mode": "batch"}), SQL)


@pytest.mark.parametrize("task_mode", ["thread", "process"])
@pytest.mark.parametrize("p", ["2", "3"])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_two_phases_give_the_one_phase_and_the_built_in_rows(mode: str, p: str,
                                                             task_mode: str) -> None:
    got = {}
    for phases in ("TWO_PHASE", "ONE_PHASE"):
        s = _session({"execution.runtime-mode": mode, "parallelism.default": p,
                      "execution.native.task-mode": task_mode,
                      "table.optimizer.agg-phase-strategy": phases})
        job = _job(s, PY)
        assert ("LocalAggregate" in job) == (phases == "TWO_PHASE"), job
        got[phases] = _rows(s, PY)
    assert got["TWO_PHASE"] == got["ONE_PHASE"]
    _same(got["TWO_PHASE"], BUILT_IN)


def test_auto_splits_a_mergeable_udaf_over_few_groups() -> None:
    s = _session({"execution.runtime-mode": "batch", "parallelism.default": "2"})
    sql = "SELECT k, py_sum(v) AS s, SUM(v) AS b FROM t GROUP BY k"
    job = _job(s, sql)
    assert "Source(t) -> LocalAggregate(keys=[k], aggs=[PY_SUM(v), sum(v)])" in job, job
    assert "GlobalAggregate(keys=[k], aggs=[PY_SUM(v), sum(v)])" in job
    rows = _rows(s, sql)
    assert len(rows) == 24 and all(r[1] == r[2] for r in rows)


@pytest.mark.parametrize("task_mode", ["thread", "process"])
def test_streaming_changelog_of_the_global_phase(task_mode: str) -> None:
    """The global phase emits the groups' changes as it merges partials: each change of the
    Python sum is the built-in SUM's in the same row, and the changes end in the result."""
    s = _session({"parallelism.default": "2", "execution.native.task-mode": task_mode,
                  "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    sql = "SELECT k, py_sum(v) AS s, SUM(v) AS b, COUNT(*) AS c FROM t GROUP BY k"
    assert "LocalAggregate" in _job(s, sql)
    changes = [r for b in s.sql(sql).stream() for r in b.to_pylist()]
    assert {r["op"] for r in changes} == {"+I", "-U", "+U"}
    assert all(r["s"] == r["b"] for r in changes)
    final: dict[object, tuple] = {}
    for r in changes:
        if r["op"] in ("+I", "+U"):
            final[r["k"]] = (r["s"], r["c"])
    want = _rows(_session({"execution.runtime-mode": "batch"}),
                 "SELECT k, SUM(v), COUNT(*) FROM t GROUP BY k")
    assert sorted(((k, *v) for k, v in final.items()), key=repr) == want


ONE_PHASE_CASES = {
    "count_no_merge(v)": "the Python aggregate function COUNT_NO_MERGE has no merge() method",
    "pmean(v)": "the Python aggregate function PMEAN is a vectorised (pandas) aggregate",
    "py_sum(DISTINCT v)": "the Python aggregate function PY_SUM is called with DISTINCT",
    "locked(v)": "the Python aggregate function LOCKED's accumulator cannot be pickled to "
                 "cross the exchange: TypeError: cannot pickle '_thread.lock' object",
}


@pytest.mark.parametrize("call", list(ONE_PHASE_CASES))
@pytest.mark.parametrize("strategy", ["AUTO", "TWO_PHASE"])
def test_a_udaf_that_cannot_merge_keeps_one_phase_and_explain_says_why(
        call: str, strategy: str) -> None:
    """As Flink ('TWO_PHASE': an aggregate that cannot be split stays in one phase), with
    the reason in EXPLAIN VERBOSE's note of the aggregate_phases pass."""
    s = _session({"execution.runtime-mode": "batch", "parallelism.default": "2",
                  "table.optimizer.agg-phase-strategy": strategy})
    sql = f"SELECT k, {call} AS x, py_sum(v) AS s, COUNT(*) AS c FROM t GROUP BY k"
    text = s.execute(f"EXPLAIN VERBOSE {sql}")[-1].message
    job = text.split("== Job Graph ==")[1]
    assert "LocalAggregate" not in job and "GroupAggregate(keys=[k]" in job, job
    step = text.split("-- after aggregate_phases")[1].split("-- after ")[0]
    forced = " although 'table.optimizer.agg-phase-strategy' is 'TWO_PHASE'" \
        if strategy == "TWO_PHASE" else ""
    assert step.startswith(": unchanged\n   chose: GroupAggregate(keys=[k], aggs=[")
    assert f"]): ONE_PHASE{forced} ({ONE_PHASE_CASES[call]}" in step, step
    rows = _rows(s, sql)  # (one phase's rows)
    assert len(rows) == 24 and sum(r[3] for r in rows) == 3000


def test_an_updating_input_stays_one_phase() -> None:
    s = _session({"parallelism.default": "2",
                  "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    sql = ("SELECT c, py_sum(s) AS ps, SUM(s) AS b FROM (SELECT k, COUNT(*) AS c, SUM(v) AS s "
           "FROM t GROUP BY k) GROUP BY c")
    job = _job(s, sql)
    assert job.count("LocalAggregate") == 1  # (the inner GROUP BY's only)
    with pytest.raises(SqlEngineError, match="PY_SUM has no retract"):
        s.sql(sql).collect()


def test_partial_layout_of_a_python_aggregate() -> None:
    k = ColumnRef(0, "k", pa.int32())
    v = ColumnRef(1, "v", pa.int64())
    count = AggCall("count_star", (), pa.int64())
    call = AggCall(functions_python.register("py_sum", PySum), (v,), pa.int64())
    fields = partial_fields((k,), (count, call, AggCall("max", (v,), pa.int64())))
    assert fields is not None
    assert [(f.name, f.type) for f in fields] == [
        ("k0", pa.int32()), ("c0", pa.int64()), ("p1", ACCUMULATOR), ("m2", pa.int64())]
    assert python_blocker(call) is None and python_blocker(count) is None
    assert partial_fields((k,), (replace(call, distinct=True),)) is None
    no_merge = AggCall(functions_python.register("n", CountNoMerge), (v,), pa.int64())
    assert partial_fields((k,), (count, no_merge)) is None
    assert python_blocker(no_merge) == "the Python aggregate function N has no merge() method"


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_an_error_in_merge_names_the_function_and_its_place(mode: str) -> None:
    class BadMerge:
        def create_accumulator(self):  # type: ignore[no-untyped-def]
            return [0]

        def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
            acc[0] += 1

        def merge(self, acc, others):  # type: ignore[no-untyped-def]
            raise ValueError(f"cannot merge {len(others)}")

        def get_value(self, acc):  # type: ignore[no-untyped-def]
            return acc[0]

    s = _session({"execution.runtime-mode": mode, "parallelism.default": "2",
                  "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    s.create_function("bad_merge", BadMerge, "BIGINT")
    sql = "SELECT k,\n  bad_merge(v) AS n FROM t GROUP BY k"
    assert "LocalAggregate" in _job(s, sql)
    with pytest.raises(SqlEngineError) as e:
        s.sql(sql).collect()
    text = str(e.value)
    assert "the Python aggregate function BAD_MERGE (SQL 2:3) failed in merge(): " \
           "ValueError: cannot merge" in text, text
    assert "in merge" in text and "raise ValueError" in text  # (the user's frame)


def test_an_accumulator_that_stops_pickling_is_an_error_naming_the_function() -> None:
    class Grows:
        """Picklable when created, not once it holds a value (a lambda)."""

        def create_accumulator(self):  # type: ignore[no-untyped-def]
            return []

        def accumulate(self, acc, v):  # type: ignore[no-untyped-def]
            acc.append(lambda: v)

        def merge(self, acc, others):  # type: ignore[no-untyped-def]
            for o in others:
                acc += o

        def get_value(self, acc):  # type: ignore[no-untyped-def]
            return len(acc)

    s = _session({"execution.runtime-mode": "batch", "parallelism.default": "2",
                  "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    s.create_function("grows", Grows, "BIGINT")
    with pytest.raises(SqlEngineError, match=r"GROWS \(SQL 1:11\): its accumulator cannot be "
                                             r"pickled .*'ONE_PHASE'"):
        s.sql("SELECT k, grows(v) FROM t GROUP BY k").collect()
    s.execute("SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE'")
    assert sum(r[1] for r in _rows(s, "SELECT k, grows(v) FROM t GROUP BY k")) == 3000


def test_the_batch_global_phase_spills_past_the_memory_budget(tmp_path) -> None:  # type: ignore[no-untyped-def]
    n = 60_000
    rng = np.random.default_rng(3)
    table = pa.table({"k": rng.integers(0, 20_000, n), "v": rng.integers(-9, 100, n)})
    s = sqlengine.connect({"execution.runtime-mode": "batch", "parallelism.default": "2",
                           "table.optimizer.agg-phase-strategy": "TWO_PHASE",
                           "taskmanager.memory.managed.size": "256 kb",
                           "io.tmp.dirs": str(tmp_path)})
    s.create_function("py_sum", PySum)
    s.register("t", pa.Table.from_batches(table.to_batches(max_chunksize=2048)))
    q = s.sql("SELECT k, py_sum(v) AS s, SUM(v) AS b, COUNT(*) AS c FROM t GROUP BY k")
    got = q.collect()
    spilled = {k: m["spilled_bytes"] for k, m in q.metrics().items()
               if m.get("spilled_bytes")}
    assert any("GlobalAggregate" in k for k in spilled), spilled
    assert got.column("s") == got.column("b")
    want = table.group_by("k").aggregate([("v", "sum"), ("v", "count")])
    assert sorted(zip(*got.select(["k", "b", "c"]).to_pydict().values())) == \
        sorted(zip(*want.select(["k", "v_sum", "v_count"]).to_pydict().values()))
    assert list(tmp_path.iterdir()) == []


def test_the_streaming_global_phase_restores_from_a_checkpoint() -> None:
    """The local phase's partial batches fed to the streaming global phase; its state
    pickled halfway (as a checkpoint stores it) and restored into a fresh operator, which
    gives the rest of the uninterrupted operator's changelog."""
    key = functions_python.register("py_sum", PySum)
    k, v = ColumnRef(0, "k", pa.int32()), ColumnRef(2, "v", pa.int64())
    aggs = (AggCall(key, (v,), pa.int64()), AggCall("sum", (v,), pa.int64()))
    local = LocalAggregateOperator((k,), aggs)
    partials = [b for batch in DATA.to_batches(max_chunksize=97)
                for b in local.process_batch(batch)]
    assert len(partials) == 31 and partials[0].schema.names == ["k0", "p0", "s1", "n1"]
    schema = pa.schema([("k", pa.int32()), ("s", pa.int64()), ("b", pa.int64())])

    def fresh() -> GroupAggregateOperator:
        op = GroupAggregateOperator((k,), aggs, schema, "changelog", merge=True)
        op.open(OperatorContext())
        return op

    def changes(op: GroupAggregateOperator, batches: list[pa.RecordBatch]) -> list[dict]:
        return [r for b in batches for out in op.process_batch(b) for r in out.to_pylist()]

    whole = fresh()
    before, after = changes(whole, partials[:15]), changes(whole, partials[15:])
    half = fresh()
    assert changes(half, partials[:15]) == before
    again = fresh()
    again.restore_state(pickle.loads(pickle.dumps(half.snapshot_state(), protocol=5)))
    rest = changes(again, partials[15:])
    assert rest == after and any(r[ROWKIND] == UPDATE_AFTER for r in rest)
    assert all(r["s"] == r["b"] for r in before + rest)
