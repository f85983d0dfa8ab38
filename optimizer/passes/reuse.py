"""Branch tracking: what several consumers read is computed once (a DAG, not a tree)."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import FORWARD, OperatorSpec, PhysicalNode, transform_up, walk

from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef, substitute

SOURCE_SWITCH = "table.optimizer.reuse-source-enabled"


def _source_key(op: OperatorSpec) -> object | None:
    """Sources that may share one reader: one table, one schema, the same pushed filters."""
    key = (op.param("source"), op.param("table_schema"), op.param("filters"))
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
            if node.op.kind != "source" or (key := _source_key(node.op)) is None:
                continue
            proj = node.op.param("projection")
            if proj is None:
                proj = tuple(range(len(node.op.param("table_schema"))))  # type: ignore[arg-type]
            projections.setdefault(key, set()).add(proj)  # type: ignore[arg-type]
            columns.setdefault(key, set()).update(proj)  # type: ignore[arg-type]
        merged = {k: tuple(sorted(columns[k])) for k, ps in projections.items() if len(ps) > 1}
        if not merged:
            return root
        shared: dict[object, PhysicalNode] = {}
        selections: set[int] = set()  # the column selections made here

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            if node.op.kind == "project" and id(node.inputs[0][0]) in selections:
                # A projection over a selection made here reads the shared source directly.
                (selection, _), = node.inputs
                picked = selection.op.param("exprs")
                exprs = tuple(substitute(e, picked)  # type: ignore[arg-type]
                              for e in node.op.param("exprs"))  # type: ignore[attr-defined]
                op = replace(node.op, params=(("exprs", exprs),))
                return replace(node, op=op, inputs=selection.inputs)
            if node.op.kind != "source" or (key := _source_key(node.op)) not in merged:
                return node
            cols = merged[key]
            table_schema: N.Schema = node.op.param("table_schema")  # type: ignore[assignment]
            if key not in shared:
                params = tuple((k, cols if k == "projection" else v) for k, v in node.op.params)
                schema = N.Schema(tuple(table_schema.fields[i] for i in cols))
                op = OperatorSpec("source", schema, False, params, node.op.chain_strategy)
                scan = N.Scan(node.op.param("source"), table_schema, cols,  # type: ignore[arg-type]
                              node.op.param("filters"))  # type: ignore[arg-type]
                shared[key] = PhysicalNode(op, (), ctx.estimator.estimate(scan))
                ctx.note(self.name, f"{node.op.label()}: one source reads columns "
                                    f"{', '.join(table_schema.fields[i].name for i in cols)} "
                                    "for all its readers")
            source = shared[key]
            proj = node.op.param("projection")
            wanted = proj if proj is not None else tuple(range(len(table_schema)))
            if wanted == cols:
                return source
            exprs = tuple(ColumnRef(cols.index(i), table_schema.fields[i].name,
                                    table_schema.fields[i].type)
                          for i in wanted)  # type: ignore[union-attr]
            op = OperatorSpec("project", node.op.schema, False, (("exprs", exprs),))
            selection = PhysicalNode(op, ((source, FORWARD),), node.estimate)
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
            if node.op.kind == "sink" or (node.op.kind == "source" and not sources):
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
