"""Range-partition rewriting (Flink's RangePartitionRewriter): a global sort at parallelism
> 1 becomes sample -> boundaries -> RANGE partition -> local sorts -> ordered concatenation."""

from __future__ import annotations

import pyarrow as pa
from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import (
    FORWARD,
    Exchange,
    OperatorSpec,
    Partitioning,
    PhysicalNode,
    transform_up,
)
from sqlengine.optimizer.properties import runs_in_one_subtask

from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef

SAMPLE_SIZE = 5000  # rows per subtask's reservoir


class RangeSort(PhysicalPass):
    """An ORDER BY without fetch or offset over an insert-only input that runs in several
    subtasks (a bounded input, in batch or streaming mode): every subtask samples its rows
    (reservoir sampling), one task turns the samples into parallelism - 1 boundaries, every
    row is sent to the subtask of its range, sorted there, and the sorted ranges are
    concatenated in range order. Switch: 'table.exec.range-sort.enabled'."""

    name = "range_sort"
    switch = "table.exec.range-sort.enabled"

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        if ctx.parallelism <= 1:
            return root
        p = ctx.parallelism

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            op = node.op
            if op.kind != "sort" or op.param("fetch") is not None or op.param("offset") or \
                    op.param("input_updating"):
                return node
            (child, ex), = node.inputs
            if ex.partitioning is not Partitioning.SINGLE or runs_in_one_subtask(child):
                return node
            keys = ", ".join(k.sql() for k in op.param("keys"))  # type: ignore[attr-defined]
            ctx.note(self.name, f"ORDER BY {keys}: sample -> boundaries -> RANGE -> {p} local "
                                "sorts -> ordered concatenation")
            return _range_sorted(node, child, p)

        return transform_up(root, rewrite)


def _range_sorted(node: PhysicalNode, child: PhysicalNode, parallelism: int) -> PhysicalNode:
    schema = node.op.schema
    sort_keys = node.op.param("keys")
    width = len(schema)
    sample_fields = []
    for i, k in enumerate(sort_keys):  # type: ignore[arg-type]
        sample_fields += [N.Field(f"n{i}", pa.bool_()), N.Field(f"v{i}", k.expr.dtype)]
    sample_schema = N.Schema(tuple(sample_fields))
    keys = (("keys", sort_keys),)
    sample = PhysicalNode(OperatorSpec("range_sample", sample_schema, False,
                                       (*keys, ("size", SAMPLE_SIZE))), ((child, FORWARD),))
    bounds = PhysicalNode(
        OperatorSpec("range_boundaries", sample_schema, False,
                     (*keys, ("parallelism", parallelism))),
        ((sample, Exchange(Partitioning.SINGLE)),))
    ranged = N.Schema((*schema.fields, N.Field("$part", pa.int32())))
    assign = PhysicalNode(OperatorSpec("range_assign", ranged, False, keys),
                          ((child, FORWARD), (bounds, Exchange(Partitioning.BROADCAST))),
                          child.estimate)
    local = PhysicalNode(
        OperatorSpec("sort", ranged, False, (*keys, ("fetch", None), ("offset", 0),
                                             ("input_updating", False))),
        ((assign, Exchange(Partitioning.RANGE, (ColumnRef(width, "$part", pa.int32()),))),),
        child.estimate)
    return PhysicalNode(
        OperatorSpec("ordered_concat", schema, False, (("width", width), ("per_channel", True))),
        ((local, Exchange(Partitioning.SINGLE)),), node.estimate)
