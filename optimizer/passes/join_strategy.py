"""Join strategy: hash-repartition both sides, or broadcast the small one; and which side a
batch join builds its hash table on."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import (
    FORWARD,
    Exchange,
    Partitioning,
    PhysicalNode,
    transform_up,
)
from sqlengine.optimizer.properties import co_partitioned
from sqlengine.optimizer.specs import JoinSpec
from sqlengine.options import parse_size

Inputs = tuple[tuple[PhysicalNode, Exchange], ...]


class JoinStrategy(PhysicalPass):
    """For each regular join: the alternatives (both sides HASH on the keys; the small side
    BROADCAST within 'table.optimizer.join.broadcast-threshold' and the other side left where
    it is) are costed and the cheaper wins. Broadcasting is for batch mode (as Flink's: a
    streaming join keeps both sides as state whatever their sizes) at parallelism > 1 (one
    subtask needs no exchange at all); a LEFT join broadcasts its right side only (each left
    row must meet every right row in one subtask to know it is unmatched). A batch join then
    builds on the broadcast side, else on the smaller side by the estimates."""

    name = "join_strategy"

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        key = "table.optimizer.join.broadcast-threshold"
        threshold = parse_size(ctx.options.get(key, "10 mb"), key)

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            op = node.op
            if not isinstance(op, JoinSpec) or any(ex.partitioning is not Partitioning.HASH
                                                   for _, ex in node.inputs):
                return node
            inputs = node.inputs
            hinted = op.hint is not None and not ctx.streaming
            # (inputs already partitioned on the key need no exchange at all: see
            # interesting_properties)
            if hinted and op.hint is not None:  # (a BROADCAST / SHUFFLE_HASH hint's side)
                strategy, side = op.hint
                if strategy == "BROADCAST" and ctx.parallelism > 1 and \
                        not co_partitioned(node):
                    pair = [(inputs[1 - side][0], FORWARD),
                            (inputs[side][0], Exchange(Partitioning.BROADCAST))]
                    inputs = tuple(pair) if side == 1 else tuple(reversed(pair))
                    ctx.note(self.name, f"{op.label()}: {_shape(inputs)} (the BROADCAST hint)")
            elif not ctx.streaming and ctx.parallelism > 1 and threshold >= 0 and \
                    not co_partitioned(node):
                inputs = self._cheapest(node, op, threshold, ctx)
            if ctx.streaming:
                return node if inputs is node.inputs else replace(node, inputs=inputs)
            build = op.hint[1] if hinted and op.hint is not None else _build_side(inputs)
            if build == op.build_side and inputs is node.inputs:
                return node
            new_op = op if build == op.build_side else replace(op, build_side=build)
            return replace(node, op=new_op, inputs=inputs)

        return transform_up(root, rewrite)

    def _cheapest(self, node: PhysicalNode, op: JoinSpec, threshold: int, ctx: PassContext
                  ) -> Inputs:
        (left, _), (right, _) = node.inputs
        options: list[Inputs] = [node.inputs]
        # Broadcasting a side that must be matched or padded once would repeat its rows.
        sides = {"inner": [(right, 1), (left, 0)], "full": []}.get(op.join_kind, [(right, 1)])
        for small, i in sides:
            est = small.estimate
            if est is not None and est.bytes <= threshold:
                other = left if i == 1 else right
                pair = [(other, FORWARD), (small, Exchange(Partitioning.BROADCAST))]
                options.append(tuple(pair) if i == 1 else tuple(reversed(pair)))
        costs = ctx.costs
        best = min(options, key=lambda ins: costs.exchanges(ins).total)
        if len(options) > 1:
            costed = ", ".join(f"{_shape(ins)} {costs.exchanges(ins).total:,.0f}"
                               for ins in options)
            ctx.note(self.name, f"{node.op.label()}: {_shape(best)} (costs: {costed})")
        return best


def _shape(inputs: Inputs) -> str:
    return "+".join(ex.partitioning.value for _, ex in inputs)


def _build_side(inputs: Inputs) -> int | None:
    """The broadcast side, else the smaller side by the estimates (None: not known)."""
    for i, (_, ex) in enumerate(inputs):
        if ex.partitioning is Partitioning.BROADCAST:
            return i
    (left, _), (right, _) = inputs
    if left.estimate is None or right.estimate is None:
        return None
    return 0 if left.estimate.bytes < right.estimate.bytes else 1
