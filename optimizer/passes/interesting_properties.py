"""Interesting properties: what a consumer requests (a partitioning, an order) is checked
against what its input already has; a request already met costs nothing."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import (
    FORWARD,
    Partitioning,
    PhysicalNode,
    transform_up,
)
from sqlengine.optimizer.properties import (
    already_partitioned,
    co_partitioned,
    keys_text,
    ordered_on,
    satisfies_order,
)
from sqlengine.optimizer.specs import GroupAggregateSpec, JoinSpec, LimitSpec, SortSpec
from sqlengine.optimizer.specs_windows import OverAggregateSpec, TopNSpec, WindowTopNSpec

# Operators that request HASH(keys) of their one input only so that equal keys meet.
_KEYED = (GroupAggregateSpec, TopNSpec, WindowTopNSpec, OverAggregateSpec)


class InterestingProperties(PhysicalPass):
    """Requested partitioning: a HASH exchange on keys whose input is already
    hash-partitioned on a subset of them (by a join or aggregate below, carried through
    filters and projections) becomes FORWARD: no second shuffle; so do a join's two HASH
    exchanges when both sides are already partitioned on the same key. Requested ordering: a
    global sort whose input already comes ordered by its keys (a prefix of the input's order)
    is dropped, or becomes a plain LIMIT when it has a fetch or offset."""

    name = "interesting_properties"

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        def rewrite(node: PhysicalNode) -> PhysicalNode:
            op = node.op
            if isinstance(op, _KEYED) and len(node.inputs) == 1:
                (child, ex), = node.inputs
                if ex.partitioning is Partitioning.HASH and ex.keys and \
                        already_partitioned(child, ex.keys):
                    ctx.note(self.name, f"{node.op.label()}: the input is already partitioned "
                                        f"on {keys_text(ex.keys)}, no shuffle")
                    return replace(node, inputs=((child, FORWARD),))
            if isinstance(op, JoinSpec) and all(ex.partitioning is Partitioning.HASH
                                      for _, ex in node.inputs) and co_partitioned(node):
                ctx.note(self.name, f"{node.op.label()}: both inputs are already partitioned "
                                    "on the join key, no shuffle")
                return replace(node, inputs=tuple((c, FORWARD) for c, _ in node.inputs))
            if isinstance(op, SortSpec) and not op.input_updating:
                (child, ex), = node.inputs
                if ex.partitioning is Partitioning.SINGLE and \
                        satisfies_order(ordered_on(child), op.keys):
                    return self._drop_sort(node, op, child, ctx)
            return node

        return transform_up(root, rewrite)

    def _drop_sort(self, node: PhysicalNode, sort: SortSpec, child: PhysicalNode,
                   ctx: PassContext) -> PhysicalNode:
        fetch, offset = sort.fetch, sort.offset
        what = f"{sort.label()}: the input already comes in this order: "
        if fetch is None and not offset:
            ctx.note(self.name, what + "no sort")
            return child
        ctx.note(self.name, what + "a limit instead")
        op = LimitSpec(schema=sort.schema, fetch=fetch, offset=offset, input_updating=False)
        return replace(node, op=op)
