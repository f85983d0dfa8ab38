"""Flink's plan shape for a window aggregation: Exchange(HASH keys) -> window assignment ->
aggregation, so a HOP window's copies of each row are made after the shuffle, not shipped."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import FORWARD, Exchange, Partitioning, PhysicalNode, transform_up
from sqlengine.optimizer.specs import FilterSpec, ProjectSpec
from sqlengine.optimizer.specs_windows import WindowAggregateSpec, WindowAssignSpec
from sqlengine.plan.expressions import ColumnRef, Expr


class ShuffleBeforeWindowing(PhysicalPass):
    """A window aggregate's HASH exchange moves from above its window assignment (and the
    projections and filters between them) to below it, when every key is a plain column of
    the assignment's input."""

    name = "shuffle_before_windowing"

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        def rewrite(node: PhysicalNode) -> PhysicalNode:
            if not isinstance(node.op, WindowAggregateSpec):
                return node
            (child, ex), = node.inputs
            if ex.partitioning is not Partitioning.HASH:
                return node
            moved = _move_below_windowing(child, ex.keys)
            if moved is None:
                return node
            ctx.note(self.name, f"{node.op.label()}: HASH exchange moved below the window "
                                "assignment")
            return replace(node, inputs=((moved, FORWARD),))

        return transform_up(root, rewrite)


def _move_below_windowing(child: PhysicalNode, keys: tuple[Expr, ...]) -> PhysicalNode | None:
    """``child`` is the aggregate's input (window assignment, perhaps under projections and
    filters); returns it rebuilt with the exchange below the window assignment, or None when
    a key is not a plain column of the assignment's input."""
    path: list[PhysicalNode] = []
    node = child
    mapped = list(keys)
    while isinstance(node.op, ProjectSpec | FilterSpec):
        ((inner, ex),) = node.inputs
        if ex.partitioning is not Partitioning.FORWARD:
            return None
        if isinstance(node.op, ProjectSpec):
            exprs = node.op.exprs
            columns = [k for k in mapped if isinstance(k, ColumnRef)]
            if len(columns) < len(mapped) or not all(isinstance(exprs[k.index], ColumnRef)
                                                     for k in columns):
                return None
            mapped = [exprs[k.index] for k in columns]
        path.append(node)
        node = inner
    if not isinstance(node.op, WindowAssignSpec):
        return None
    ((source, ex),) = node.inputs
    if ex.partitioning is not Partitioning.FORWARD or not all(
            isinstance(k, ColumnRef) and k.index < len(source.op.schema) for k in mapped):
        return None
    rebuilt = replace(node, inputs=((source, Exchange(Partitioning.HASH, tuple(mapped))),))
    for above in reversed(path):
        rebuilt = replace(above, inputs=((rebuilt, FORWARD),))
    return rebuilt
