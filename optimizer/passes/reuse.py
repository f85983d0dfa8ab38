"""Branch tracking: what several consumers read is computed once (a DAG, not a tree)."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import FORWARD, PhysicalNode, transform_up, walk
from sqlengine.optimizer.specs import ProjectSpec, TableScanSpec, TableSinkSpec
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef, substitute

SOURCE_SWITCH = "table.optimizer.reuse-source-enabled"


def _source_key(op: TableScanSpec) -> object | None:
    """Sources that may share one reader: one table, one schema, the same pushed filters."""
    key = (op.source, op.table_schema, op.filters)
    try:
        hash(key)
    except TypeError:
        return None
    return key


class ReuseSources(PhysicalPass):
    """Source reuse across projections (Flink's ScanReuser): sources of one table with the
    same pushed-down filters but different columns become one source reading the union of
    their columns; each reader keeps its own columns by a projection above it (merged into
    the reader's own projection, if it has one)."""

    name = "reuse_sources"
    switch = SOURCE_SWITCH

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        columns: dict[object, set[int]] = {}
        projections: dict[object, set[tuple[int, ...]]] = {}
        for node in walk(root):
            if not isinstance(node.op, TableScanSpec) or (key := _source_key(node.op)) is None:
                continue
            proj = node.op.projection
            if proj is None:
                proj = tuple(range(len(node.op.table_schema)))
            projections.setdefault(key, set()).add(proj)
            columns.setdefault(key, set()).update(proj)
        merged = {k: tuple(sorted(columns[k])) for k, ps in projections.items() if len(ps) > 1}
        if not merged:
            return root
        shared: dict[object, PhysicalNode] = {}
        selections: set[int] = set()  # the column selections made here

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            op = node.op
            if isinstance(op, ProjectSpec) and id(node.inputs[0][0]) in selections:
                # A projection over a selection made here reads the shared source directly.
                (selection, _), = node.inputs
                assert isinstance(selection.op, ProjectSpec)
                picked = selection.op.exprs
                exprs = tuple(substitute(e, picked) for e in op.exprs)
                return replace(node, op=replace(op, exprs=exprs), inputs=selection.inputs)
            if not isinstance(op, TableScanSpec) or (key := _source_key(op)) not in merged:
                return node
            cols = merged[key]
            table_schema = op.table_schema
            if key not in shared:
                schema = N.Schema(tuple(table_schema.fields[i] for i in cols))
                scan_op = replace(op, schema=schema, updating=False, projection=cols)
                scan = N.Scan(op.source, table_schema, cols, op.filters)
                shared[key] = PhysicalNode(scan_op, (), ctx.estimator.estimate(scan))
                ctx.note(self.name, f"{node.op.label()}: one source reads columns "
                                    f"{', '.join(table_schema.fields[i].name for i in cols)} "
                                    "for all its readers")
            source = shared[key]
            proj = op.projection
            wanted = proj if proj is not None else tuple(range(len(table_schema)))
            if wanted == cols:
                return source
            exprs = tuple(ColumnRef(cols.index(i), table_schema.fields[i].name,
                                    table_schema.fields[i].type)
                          for i in wanted)
            selection = PhysicalNode(ProjectSpec(schema=op.schema, exprs=exprs),
                                     ((source, FORWARD),), node.estimate)
            selections.add(id(selection))
            return selection

        return transform_up(root, rewrite)


class ReuseSubPlans(PhysicalPass):
    """Sub-plan reuse (Flink's SubplanReuser): equal sub-plans, e.g. one aggregate read by two
    branches of a query, become one node, so the DAG computes them once and EXPLAIN shows them
    once. Equal sources are one source unless 'table.optimizer.reuse-source-enabled' is off.
    Switch: 'table.optimizer.reuse-sub-plan-enabled'."""

    name = "reuse_sub_plans"
    switch = "table.optimizer.reuse-sub-plan-enabled"

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        sources = ctx.flag(SOURCE_SWITCH)
        seen: dict[object, PhysicalNode] = {}

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            if isinstance(node.op, TableSinkSpec) or \
                    (isinstance(node.op, TableScanSpec) and not sources):
                return node
            # (inputs are already the one node of their kind: compare them by identity)
            key = (node.op, tuple((id(child), ex) for child, ex in node.inputs))
            try:
                hash(key)
            except TypeError:  # (an operator holding something unhashable is not reused)
                return node
            if key in seen:
                if seen[key] is not node:
                    ctx.note(self.name, f"{node.op.label()} is read once more: the same node "
                                        "serves both")
                return seen[key]
            seen[key] = node
            return node

        return transform_up(root, rewrite)
