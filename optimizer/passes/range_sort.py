"""Range-partition rewriting (Flink's RangePartitionRewriter): a global sort at parallelism
> 1 becomes sample -> boundaries -> RANGE partition -> local sorts -> ordered concatenation."""

from __future__ import annotations

import pyarrow as pa

from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import (
    FORWARD,
    Exchange,
    Partitioning,
    PhysicalNode,
    transform_up,
)
from sqlengine.optimizer.properties import runs_in_one_subtask
from sqlengine.optimizer.specs import (
    OrderedConcatSpec,
    RangeAssignSpec,
    RangeBoundariesSpec,
    RangeSampleSpec,
    SortSpec,
    sort_keys_text,
)
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
            if not isinstance(op, SortSpec) or op.fetch is not None or op.offset or \
                    op.input_updating:
                return node
            (child, ex), = node.inputs
            if ex.partitioning is not Partitioning.SINGLE or runs_in_one_subtask(child):
                return node
            ctx.note(self.name, f"ORDER BY {sort_keys_text(op.keys)}: sample -> boundaries "
                                f"-> RANGE -> {p} local sorts -> ordered concatenation")
            return _range_sorted(node, op, child, p)

        return transform_up(root, rewrite)


def _range_sorted(node: PhysicalNode, op: SortSpec, child: PhysicalNode, parallelism: int
                  ) -> PhysicalNode:
    schema = op.schema
    keys = op.keys
    width = len(schema)
    sample_fields = []
    for i, k in enumerate(keys):
        sample_fields += [N.Field(f"n{i}", pa.bool_()), N.Field(f"v{i}", k.expr.dtype)]
    sample_schema = N.Schema(tuple(sample_fields))
    sample = PhysicalNode(RangeSampleSpec(schema=sample_schema, keys=keys, size=SAMPLE_SIZE),
                          ((child, FORWARD),))
    bounds = PhysicalNode(
        RangeBoundariesSpec(schema=sample_schema, keys=keys, parallelism=parallelism),
        ((sample, Exchange(Partitioning.SINGLE)),))
    ranged = N.Schema((*schema.fields, N.Field("$part", pa.int32())))
    assign = PhysicalNode(RangeAssignSpec(schema=ranged, keys=keys),
                          ((child, FORWARD), (bounds, Exchange(Partitioning.BROADCAST))),
                          child.estimate)
    local = PhysicalNode(
        SortSpec(schema=ranged, keys=keys, fetch=None, offset=0, input_updating=False),
        ((assign, Exchange(Partitioning.RANGE, (ColumnRef(width, "$part", pa.int32()),))),),
        child.estimate)
    return PhysicalNode(
        OrderedConcatSpec(schema=schema, width=width, per_channel=True),
        ((local, Exchange(Partitioning.SINGLE)),), node.estimate)
