"""Branch tracking: what several consumers read is computed once (a DAG, not a tree)."""

from __future__ import annotations

from dataclasses import replace

from sqlengine import types as T
from sqlengine.optimizer.passes.base import PassContext, PhysicalPass
from sqlengine.optimizer.physical import FORWARD, PhysicalNode, transform_up, walk
from sqlengine.optimizer.specs import FilterSpec, ProjectSpec, TableScanSpec, TableSinkSpec
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import Call, ColumnRef, Expr, remap_columns, substitute

SOURCE_SWITCH = "table.optimizer.reuse-source-enabled"


def _table_key(op: TableScanSpec) -> object | None:
    """Sources that read the same rows: one table, one schema."""
    key = (op.source, op.table_schema)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _and(preds: tuple[Expr, ...]) -> Expr:
    out = preds[0]
    for p in preds[1:]:
        out = Call("and", (out, p), T.BOOLEAN)
    return out


class ReuseSources(PhysicalPass):
    """Source reuse (Flink's ScanReuser): sources of one table become one source reading the
    union of their columns; each reader keeps its own columns by a projection above it
    (merged into the reader's own projection, if it has one). In streaming mode, readers of
    an event-time table whose pushed-down filters differ share a source that keeps the
    filters they all have; each applies the rest above it. So a self-join reads its table
    once, as in Flink, whose file sources take no filters: both inputs see the same rows and
    watermarks in the same order (which rows are late then does not depend on how two reads
    interleave). Elsewhere such readers stay apart and keep their filters' pruning."""

    name = "reuse_sources"
    switch = SOURCE_SWITCH

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        scans = [node.op for node in walk(root) if isinstance(node.op, TableScanSpec)
                 and _table_key(node.op) is not None]
        readers: dict[object, list[TableScanSpec]] = {}
        for op in scans:
            readers.setdefault(_table_key(op), []).append(op)
        common: dict[object, tuple[Expr, ...]] = {}  # table -> the filters every reader has
        for k, ops in readers.items():
            # (only where it decides which rows are late: an event-time table in streaming
            # mode; elsewhere each reader keeps its pushed filters, and its pruning)
            timed = ctx.streaming and ops[0].event_time and ops[0].source.watermark is not None
            if timed and len({op.filters for op in ops}) > 1:
                common[k] = tuple(f for f in ops[0].filters
                                  if all(f in op.filters for op in ops))

        def shared(op: TableScanSpec) -> tuple[object, tuple[Expr, ...]]:
            """The shared source's key (table and pushed filters) and the reader's own rest."""
            table = _table_key(op)
            if table not in common:
                return (table, op.filters), ()
            kept = common[table]
            return (table, kept), tuple(f for f in op.filters if f not in kept)

        columns: dict[object, set[int]] = {}
        reads: dict[object, set[tuple[tuple[int, ...], tuple[Expr, ...]]]] = {}
        for op in scans:
            key, rest = shared(op)
            proj = op.projection if op.projection is not None else \
                tuple(range(len(op.table_schema)))
            reads.setdefault(key, set()).add((proj, rest))
            columns.setdefault(key, set()).update(proj)
            for f in rest:
                columns[key].update(f.columns())
        merged = {k: tuple(sorted(columns[k])) for k, rs in reads.items() if len(rs) > 1}
        if not merged:
            return root
        sources: dict[object, PhysicalNode] = {}
        selections: set[int] = set()  # the column selections made here

        def rewrite(node: PhysicalNode) -> PhysicalNode:
            op = node.op
            if isinstance(op, ProjectSpec) and id(node.inputs[0][0]) in selections:
                # A projection over a selection made here reads what the selection read.
                (selection, _), = node.inputs
                assert isinstance(selection.op, ProjectSpec)
                picked = selection.op.exprs
                exprs = tuple(substitute(e, picked) for e in op.exprs)
                return replace(node, op=replace(op, exprs=exprs), inputs=selection.inputs)
            if not isinstance(op, TableScanSpec) or _table_key(op) is None:
                return node
            key, rest = shared(op)
            if key not in merged:
                return node
            cols = merged[key]
            table_schema = op.table_schema
            if key not in sources:
                filters = key[1]  # type: ignore[index]
                schema = N.Schema(tuple(table_schema.fields[i] for i in cols))
                scan_op = replace(op, schema=schema, updating=False, projection=cols,
                                  filters=filters)
                scan = N.Scan(op.source, table_schema, cols, filters)
                sources[key] = PhysicalNode(scan_op, (), ctx.estimator.estimate(scan))
                ctx.note(self.name, f"{node.op.label()}: one source reads columns "
                                    f"{', '.join(table_schema.fields[i].name for i in cols)} "
                                    "for all its readers")
            source = sources[key]
            at = {c: i for i, c in enumerate(cols)}
            below = source
            if rest:  # (the reader's own filters, over the shared source's columns)
                predicate = _and(tuple(remap_columns(f, at) for f in rest))
                below = PhysicalNode(FilterSpec(schema=source.op.schema, predicate=predicate),
                                     ((source, FORWARD),), node.estimate)
            proj = op.projection
            wanted = proj if proj is not None else tuple(range(len(table_schema)))
            if wanted == cols:
                return below
            exprs = tuple(ColumnRef(at[i], table_schema.fields[i].name,
                                    table_schema.fields[i].type)
                          for i in wanted)
            selection = PhysicalNode(ProjectSpec(schema=op.schema, exprs=exprs),
                                     ((below, FORWARD),), node.estimate)
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
