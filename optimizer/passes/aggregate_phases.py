"""Aggregation in two phases: a local pre-aggregation chained before the shuffle, the global
merge of the partial results after it (Flink's local-global aggregation)."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.errors import PlanError
from sqlengine.functions_python import is_python
from sqlengine.optimizer.estimates import Estimate, type_width
from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import (
    FORWARD,
    Exchange,
    Partitioning,
    PhysicalNode,
    transform_up,
)
from sqlengine.optimizer.specs import (
    FilterSpec,
    GlobalAggregateSpec,
    GroupAggregateSpec,
    LocalAggregateSpec,
    ProjectSpec,
)
from sqlengine.optimizer.specs_windows import (
    LocalWindowAggregateSpec,
    WindowAggregateSpec,
    WindowAssignSpec,
)
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef
from sqlengine.plan.partials import partial_fields, python_blocker, with_row_count

STRATEGY = "table.optimizer.agg-phase-strategy"
BATCH_ROWS = 65536  # rows per batch a source reads (memory and file sources)


class AggregatePhases(PhysicalPass):
    """A GROUP BY whose input is shuffled on its keys at parallelism > 1, with aggregates
    whose partial results merge (COUNT, SUM, AVG, MIN, MAX; no DISTINCT; Python aggregate
    functions of the class kind with a merge() method), over an insert-only input: one phase
    or two, by cost ('table.optimizer.agg-phase-strategy' = 'AUTO'), or as the option forces
    ('ONE_PHASE' | 'TWO_PHASE'; as Flink, 'TWO_PHASE' leaves a GROUP BY whose aggregates do
    not merge in one phase, with a note naming the Python function that keeps it there). A
    TUMBLE / HOP / CUMULATE window aggregate splits unless the option says 'ONE_PHASE',
    without a cost comparison, as Flink's TwoStageOptimizedWindowAggregateRule: each batch's
    rows become one partial row per key and window (slice) before the shuffle (see
    _two_phase_window). In
    batch mode the global phase merges the partials and emits at the end; in streaming mode
    it merges each batch of partials into its state and emits the changes (Flink's
    local-global aggregation, whose mini-batches are our record batches: each batch a source
    reads is pre-aggregated as one)."""

    name = "aggregate_phases"

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        strategy = ctx.options.get(STRATEGY, "AUTO").upper()
        if strategy not in ("AUTO", "ONE_PHASE", "TWO_PHASE"):
            msg = (f"option {STRATEGY!r} must be 'AUTO', 'ONE_PHASE' or 'TWO_PHASE', got "
                   f"{ctx.options[STRATEGY]!r}")
            raise PlanError(msg)
        # (at parallelism 1 only when forced: a job restored from a checkpoint taken at
        # another parallelism is planned as that job was, see Session.job_graph)
        if strategy == "ONE_PHASE" or (ctx.parallelism <= 1 and strategy != "TWO_PHASE"):
            return root

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            if isinstance(node.op, WindowAggregateSpec):
                # (Spark aggregates its windows in phases of its own)
                spark = ctx.options.get("execution.target") == "spark"
                two = None if spark else _two_phase_window(node, node.op, ctx.parallelism)
                if two is None:
                    return node
                ctx.note(self.name, f"{node.op.label()}: TWO_PHASE (windows pre-aggregated "
                                    "before the shuffle)")
                return two
            if not isinstance(node.op, GroupAggregateSpec) or not _splittable(node, node.op):
                return node
            blocked = next(filter(None, map(python_blocker, node.op.aggs)), None)
            if blocked is not None:
                forced = f" although {STRATEGY!r} is 'TWO_PHASE'" \
                    if strategy == "TWO_PHASE" else ""
                ctx.note(self.name, f"{node.op.label()}: ONE_PHASE{forced} ({blocked})")
                return node
            two = _two_phase(node, node.op, ctx.parallelism, ctx.streaming)
            if two is None:
                return node
            if strategy == "TWO_PHASE":
                ctx.note(self.name, f"{node.op.label()}: TWO_PHASE (forced by {STRATEGY!r})")
                return two
            costs = [ctx.costs.total(n)[id(n)].total for n in (node, two)]
            chosen = "TWO_PHASE" if costs[1] < costs[0] else "ONE_PHASE"
            ctx.note(self.name, f"{node.op.label()}: {chosen} (cost {costs[1]:,.0f} in two "
                                f"phases, {costs[0]:,.0f} in one)")
            return two if chosen == "TWO_PHASE" else node

        return transform_up(root, rewrite)


def _splittable(node: PhysicalNode, op: GroupAggregateSpec) -> bool:
    """A GROUP BY with keys whose insert-only input is shuffled on them."""
    (child, ex), = node.inputs
    return ex.partitioning is Partitioning.HASH and bool(op.keys) and not child.op.updating


def _two_phase(node: PhysicalNode, op: GroupAggregateSpec, parallelism: int,
               streaming: bool) -> PhysicalNode | None:
    (child, _), = node.inputs
    keys, aggs = op.keys, op.aggs
    fields = partial_fields(keys, aggs)
    if fields is None:
        return None
    partial = N.Schema(tuple(fields))
    local = PhysicalNode(LocalAggregateSpec(schema=partial, keys=keys, aggs=aggs),
                         ((child, FORWARD),))
    inner, groups = child.estimate, node.estimate
    if inner is not None and groups is not None:
        # (about one partial row per group per batch of the input, per subtask)
        batches = max(inner.rows / BATCH_ROWS, 1.0)
        rows = min(inner.rows, groups.rows * batches * min(parallelism, batches))
        local = replace(local, estimate=Estimate(rows, sum(type_width(f.type) for f in fields),
                                                 ()))
    refs = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields[:len(keys)]))
    glob = GlobalAggregateSpec(
        schema=op.schema, updating=streaming, keys=keys, aggs=aggs, key_names=op.key_names,
        agg_names=op.agg_names, partial_schema=partial,
        emit="changelog" if streaming else "final", ttl=op.ttl)
    return PhysicalNode(glob, ((local, Exchange(Partitioning.HASH, refs)),), node.estimate)


def _two_phase_window(node: PhysicalNode, op: WindowAggregateSpec, parallelism: int
                      ) -> PhysicalNode | None:
    """A TUMBLE / HOP / CUMULATE window aggregate in two phases: LocalWindowAggregate
    chained after the window assignment (which gives each row its window, or its slice for a
    slicing HOP, judging lateness by the row's own watermark: the same before the shuffle as
    after it), the shuffle on the keys but the window's bounds, then the aggregate merging
    partial rows instead of rows. The shuffle is found where the plan has it: right under
    the aggregate (HASH or SINGLE), or moved below the window assignment by
    shuffle_before_windowing (it then goes: the assignment reads its input as it comes).
    None without a shuffle (nothing to pre-aggregate before), for aggregates whose partials
    do not merge (DISTINCT, order-sensitive, Python), with allowed lateness (a late row
    updates a fired window row by row) and for processing-time windows."""
    if op.merges_partials or op.lateness or op.proctime or \
            any(is_python(a.func) for a in op.aggs):
        return None
    if op.input_updating and any(a.func in ("min", "max") for a in op.aggs):
        return None  # (over an updating input they keep their values with counts)
    (child, ex), = node.inputs
    if ex.partitioning is Partitioning.FORWARD:
        child = _without_shuffle_below(child)
        if child is None:
            return None
    elif ex.partitioning not in (Partitioning.HASH, Partitioning.SINGLE):
        return None
    aggs = with_row_count(op.aggs)
    fields = partial_fields(op.keys, aggs)
    if fields is None:
        return None
    partial = N.Schema(tuple(fields))
    local = PhysicalNode(LocalWindowAggregateSpec(schema=partial, keys=op.keys, aggs=op.aggs,
                                                  slice_step=op.slice_step,
                                                  input_updating=op.input_updating),
                         ((child, FORWARD),))
    inner, groups = child.estimate, node.estimate
    if inner is not None and groups is not None:
        # (a key's slice is split between batches and subtasks at most a few times)
        rows = min(inner.rows, groups.rows * 2 * parallelism)
        local = replace(local, estimate=Estimate(rows, sum(type_width(f.type) for f in fields),
                                                 ()))
    window = {op.start_pos, op.end_pos}
    refs = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields[:len(op.keys)])
                 if i not in window)
    exchange = Exchange(Partitioning.HASH, refs) if refs else Exchange(Partitioning.SINGLE)
    return PhysicalNode(replace(op, merges_partials=True), ((local, exchange),),
                        node.estimate)


def _without_shuffle_below(node: PhysicalNode) -> PhysicalNode | None:
    """``node`` (projections and filters over a window assignment) with the HASH
    exchange under the assignment made FORWARD; None when the path holds anything else."""
    if isinstance(node.op, ProjectSpec | FilterSpec):
        (inner, ex), = node.inputs
        if ex.partitioning is not Partitioning.FORWARD:
            return None
        rebuilt = _without_shuffle_below(inner)
        return None if rebuilt is None else replace(node, inputs=((rebuilt, FORWARD),))
    if not isinstance(node.op, WindowAssignSpec) or \
            node.op.window_kind not in ("tumble", "hop", "cumulate"):
        return None
    (source, ex), = node.inputs
    if ex.partitioning is not Partitioning.HASH:
        return None
    return replace(node, inputs=((source, FORWARD),))
