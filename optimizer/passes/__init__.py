"""The physical passes (Flink's batch optimizer: one visitor per concern over the plan DAG),
in the order they run. Each is a named rewrite of the physical DAG that the ones before it
left; EXPLAIN VERBOSE shows the plan after each."""

from __future__ import annotations

from collections.abc import Callable

from sqlengine.optimizer.estimates import Estimator
from sqlengine.optimizer.passes.aggregate_phases import AggregatePhases
from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.passes.create_graph import CreateGraph
from sqlengine.optimizer.passes.interesting_properties import InterestingProperties
from sqlengine.optimizer.passes.join_strategy import JoinStrategy
from sqlengine.optimizer.passes.range_sort import RangeSort
from sqlengine.optimizer.passes.reuse import ReuseSources, ReuseSubPlans
from sqlengine.optimizer.passes.shuffle_before_windowing import ShuffleBeforeWindowing
from sqlengine.optimizer.physical import PhysicalNode
from sqlengine.plan.nodes import LogicalPlan

PHYSICAL_PASSES: tuple[PhysicalPass, ...] = (
    # A window aggregate's shuffle goes below its window assignment first, so that the
    # passes after it see where the exchange really is.
    ShuffleBeforeWindowing(),
    # Join strategies before interesting properties: a broadcast join keeps no partitioning.
    JoinStrategy(),
    # A shuffle already met is dropped before aggregation phases are costed (a FORWARD input
    # needs no pre-aggregation), and an order already met before sorts are range-partitioned.
    InterestingProperties(),
    AggregatePhases(),
    RangeSort(),
    # Reuse last, over the final operators: equal sub-plans are equal after every choice.
    ReuseSources(),
    ReuseSubPlans(),
)

# (the step's name, the plan after it, the context with the notes so far)
Observer = Callable[[str, PhysicalNode, PassContext], None]


def to_physical(plan: LogicalPlan, options: dict[str, str] | None = None,
                tables: dict[str, object] | None = None,
                observer: Observer | None = None) -> PhysicalNode:
    """Graph creation, then PHYSICAL_PASSES (those that are on); ``observer`` sees the plan
    after each (and the context, with the notes the passes left).

    Raises:
        PlanError: the plan cannot run in this mode (unbounded input in batch mode, ORDER BY
            on an unbounded stream, an updating result into an append-only sink), or an
            option is malformed.
    """
    ctx = PassContext(dict(options or {}), Estimator(tables))
    create = CreateGraph()
    root = create.translate(plan, ctx)
    if observer is not None:
        observer(create.name, root, ctx)
    for p in PHYSICAL_PASSES:
        if p.enabled(ctx):
            root = p.apply(root, ctx)
            if observer is not None:
                observer(p.name, root, ctx)
    return root


__all__ = ["PHYSICAL_PASSES", "Observer", "PassContext", "PhysicalPass", "to_physical"]
