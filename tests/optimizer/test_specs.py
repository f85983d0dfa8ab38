"""Operator specs (optimizer/specs.py, specs_windows.py): one frozen, slotted dataclass per
operator, each with its EXPLAIN label and JSON type name; the native factory builds the
operator of each spec by its type; the partial layout of two-phase aggregates."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest

from sqlengine.optimizer import optimize, plan_job
from sqlengine.optimizer.physical import FORWARD, PhysicalNode, walk
from sqlengine.optimizer.specs import (
    ChainStrategy,
    FilterSpec,
    GlobalAggregateSpec,
    GroupAggregateSpec,
    JoinSpec,
    LimitSpec,
    LocalAggregateSpec,
    OperatorSpec,
    OrderedConcatSpec,
    ProjectSpec,
    RangeAssignSpec,
    RangeBoundariesSpec,
    RangeSampleSpec,
    SortSpec,
    TableScanSpec,
    TableSinkSpec,
    UnionSpec,
    ValuesSpec,
)
from sqlengine.optimizer.specs_windows import (
    IntervalJoinSpec,
    OverAggregateSpec,
    SessionAggregateSpec,
    TopNSpec,
    WindowAggregateSpec,
    WindowAssignSpec,
    WindowJoinSpec,
    WindowTopNSpec,
)
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import AggCall, Call, ColumnRef, Literal
from sqlengine.plan.partials import MERGEABLE, partial_columns, partial_fields, sum_type
from sqlengine.runtime.native.factory import build_operator
from tests.plans import plan_of

A = ColumnRef(0, "a", pa.int32())
B = ColumnRef(1, "b", pa.float64())
S = N.Schema((N.Field("a", pa.int32()), N.Field("b", pa.float64())))
KEY = N.SortKey(A, ascending=False)
SUM_B = AggCall("sum", (B,), pa.float64())
COUNT = AggCall("count_star", (), pa.int64())
SOURCE = N.SourceSpec("t", "datagen", (("number-of-rows", "3"),), True)
TARGET = N.SinkSpec("out", "blackhole", (), S)


def every_spec() -> list[tuple[OperatorSpec, str]]:
    """One spec of each class with its expected label."""
    join = dict(join_kind="inner", left_keys=(A,), right_keys=(A,), condition=None,
                left_width=1)
    aggs = dict(keys=(A,), aggs=(SUM_B,))
    return [
        (TableScanSpec(schema=S, table="t", source=SOURCE, table_schema=S), "Source(t)"),
        (ValuesSpec(schema=S, rows=((Literal(1, pa.int32()), Literal(2.0, pa.float64())),)),
         "Values(rows=1)"),
        (TableSinkSpec(schema=S, table="out", target=TARGET), "Sink(out)"),
        (FilterSpec(schema=S, predicate=Call("gt", (A, Literal(1, pa.int32())), pa.bool_())),
         "Filter((a > 1))"),
        (ProjectSpec(schema=S, exprs=(A, B)), "Project(a, b)"),
        (UnionSpec(schema=S, inputs=2), "Union"),
        (GroupAggregateSpec(schema=S, key_names=("a",), agg_names=("s",), **aggs),
         "GroupAggregate(keys=[a], aggs=[sum(b)])"),
        (LocalAggregateSpec(schema=S, **aggs), "LocalAggregate(keys=[a], aggs=[sum(b)])"),
        (GlobalAggregateSpec(schema=S, key_names=("a",), agg_names=("s",), partial_schema=S,
                             **aggs), "GlobalAggregate(keys=[a], aggs=[sum(b)])"),
        (JoinSpec(schema=S, **join), "Join(inner)"),
        (JoinSpec(schema=S, build_side=1, **join), "Join(inner, build=right)"),
        (SortSpec(schema=S, keys=(KEY,)), "Sort(a DESC NULLS FIRST)"),
        (SortSpec(schema=S, keys=(KEY,), fetch=3), "Sort(a DESC NULLS FIRST, fetch=3)"),
        (LimitSpec(schema=S, fetch=5, offset=2), "Limit(fetch=5, offset=2)"),
        (RangeSampleSpec(schema=S, keys=(KEY,), size=10), "RangeSample(a DESC NULLS FIRST)"),
        (RangeBoundariesSpec(schema=S, keys=(KEY,), parallelism=2),
         "RangeBoundaries(a DESC NULLS FIRST)"),
        (RangeAssignSpec(schema=S, keys=(KEY,)), "RangeAssign(a DESC NULLS FIRST)"),
        (OrderedConcatSpec(schema=S, width=2), "OrderedConcat"),
        (WindowAssignSpec(schema=S, window_kind="tumble", time_index=0, size=1000,
                          text="TUMBLE(ts, 1 s)"), "WindowTableFunction(TUMBLE(ts, 1 s))"),
        (WindowAggregateSpec(schema=S, key_names=("a",), start_pos=0, end_pos=0, **aggs),
         "WindowAggregate(keys=[a], aggs=[sum(b)])"),
        (SessionAggregateSpec(schema=S, key_names=("a",), start_pos=0, end_pos=0, gap=5,
                              **aggs), "SessionWindowAggregate(keys=[a], aggs=[sum(b)])"),
        (TopNSpec(schema=S, partition=(A,), order=(KEY,), limit=3, text="rn <= 3"),
         "Rank(rn <= 3)"),
        (WindowTopNSpec(schema=S, partition=(A,), order=(KEY,), limit=3, text="rn <= 3",
                        end_index=1), "WindowRank(rn <= 3)"),
        (OverAggregateSpec(schema=S, partition=(A,), time_index=0, frame="rows",
                           preceding=None, aggs=(SUM_B,), text="ROWS UNBOUNDED"),
         "OverAggregate(ROWS UNBOUNDED)"),
        (WindowJoinSpec(schema=S, end_indexes=(0, 0), **join), "WindowJoin(inner)"),
        (IntervalJoinSpec(schema=S, left_time=0, right_time=0, lower=-5, upper=10, **join),
         "IntervalJoin(inner, -5 ms <= left time - right time <= 10 ms)"),
    ]


@pytest.mark.parametrize(("spec", "label"), every_spec(),
                         ids=[f"{type(s).__name__}-{i}" for i, (s, _) in
                              enumerate(every_spec())])
def test_each_spec_has_its_label(spec: OperatorSpec, label: str) -> None:
    assert spec.label() == label


def test_specs_are_frozen_slotted_and_compare_by_value() -> None:
    for spec, _ in every_spec():
        assert not hasattr(spec, "__dict__"), type(spec).__name__
        field = "schema"
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(spec, field, S)
    a = ProjectSpec(schema=S, exprs=(A, B))
    assert a == ProjectSpec(schema=S, exprs=(A, B))
    assert hash(a) == hash(ProjectSpec(schema=S, exprs=(A, B)))
    assert a != FilterSpec(schema=S, predicate=A)  # another class is another operator
    assert dataclasses.replace(a, exprs=(B,)).exprs == (B,)


def test_type_names_are_unique_and_defaults_are_the_common_ones() -> None:
    names = [type(s).type_name for s, _ in every_spec()]
    assert len(set(names)) == len({type(s) for s, _ in every_spec()})
    spec = UnionSpec(schema=S, inputs=2)
    assert (spec.updating, spec.chain_strategy) == (False, ChainStrategy.ALWAYS)


def test_source_read_detail() -> None:
    spec = TableScanSpec(schema=S, table="t", source=SOURCE, table_schema=S, projection=(1,),
                         filters=(Call("gt", (A, Literal(1, pa.int32())), pa.bool_()),))
    assert spec.read_detail() == ", fields=[b], filters=[(a > 1)])"


def test_the_factory_builds_an_operator_for_each_spec_type() -> None:
    built = {type(s).__name__: type(build_operator(s, {})).__name__
             for s, _ in every_spec() if not isinstance(s, TableScanSpec)}
    assert built["FilterSpec"] == "FilterOperator"
    assert built["GlobalAggregateSpec"] == "GlobalAggregateOperator"
    assert built["TableSinkSpec"] == "SinkOperator"
    assert built["IntervalJoinSpec"] == "IntervalJoinOperator"
    changelog = GlobalAggregateSpec(schema=S, keys=(A,), aggs=(SUM_B,), key_names=("a",),
                                    agg_names=("s",), partial_schema=S, emit="changelog")
    assert type(build_operator(changelog, {})).__name__ == "GroupAggregateOperator"


def test_planned_jobs_hold_specs_only() -> None:
    plan = optimize(plan_of("SELECT a, COUNT(*) FROM t WHERE a > 1 GROUP BY a ORDER BY a"))
    job = plan_job(plan, {"execution.runtime-mode": "batch"})
    ops = [op for v in job.vertices for op in v.chain]
    assert all(isinstance(op, OperatorSpec) for op in ops)
    assert any(isinstance(op, GroupAggregateSpec) for op in ops)


def test_walk_visits_spec_nodes() -> None:
    leaf = PhysicalNode(ValuesSpec(schema=S, rows=()))
    top = PhysicalNode(ProjectSpec(schema=S, exprs=(A,)), ((leaf, FORWARD),))
    assert [type(n.op) for n in walk(top)] == [ValuesSpec, ProjectSpec]


# -- partial layout (sqlengine/plan/partials.py) ------------------------------------------
def test_partial_columns_per_aggregate() -> None:
    aggs = (COUNT, AggCall("count", (A,), pa.int64()), SUM_B,
            AggCall("avg", (A,), pa.int32()), AggCall("max", (B,), pa.float64()),
            AggCall("count", (A,), pa.int64(), distinct=True))
    assert partial_columns(aggs) == [("c0", "sum"), ("n1", "sum"), ("s2", "sum"),
                                     ("n2", "sum"), ("s3", "sum"), ("n3", "sum"),
                                     ("m4", "max")]


def test_partial_fields_and_types() -> None:
    aggs = (COUNT, AggCall("avg", (A,), pa.int32()), AggCall("min", (B,), pa.float64()))
    fields = partial_fields((A,), aggs)
    assert fields is not None
    assert [(f.name, f.type) for f in fields] == [
        ("k0", pa.int32()), ("c0", pa.int64()), ("s1", pa.int64()), ("n1", pa.int64()),
        ("m2", pa.float64())]
    assert partial_fields((A,), (AggCall("sum", (A,), pa.int64(), distinct=True),)) is None
    assert "min" in MERGEABLE
    assert sum_type(pa.decimal128(10, 2)) == pa.decimal128(38, 2)
    assert sum_type(pa.float32()) == pa.float64()
    assert sum_type(pa.int8()) == pa.int64()
