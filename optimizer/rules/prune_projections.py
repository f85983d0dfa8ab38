"""prune_projections: read and carry only the columns that something above uses."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import ColumnRef, Expr, remap_columns
from sqlengine.plan.nodes import (
    Aggregate,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    OverAggregate,
    Project,
    Rank,
    Scan,
    Sink,
    Sort,
    Union,
    Unnest,
    WindowTVF,
)
from sqlengine.plan.tree import Transformed

Mapping = dict[int, int]


class PruneProjections(OptimizerRule):
    """Drop unused columns and aggregates bottom-up, and push the needed columns into the
    Scan as its projection.

    Example:
        >>> from tests.plans import plan_of, show
        >>> print(show(PruneProjections().apply(plan_of("SELECT a FROM t"), RuleContext()).data))
        Project: a
          Scan: t, projection=[a]
    """

    name = "prune_projections"
    apply_order = ApplyOrder.WHOLE_TREE

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        new, mapping = _prune(node, set(range(len(node.schema))))
        if any(mapping[i] != i for i in range(len(node.schema))) or \
                len(new.schema) != len(node.schema):
            fields = new.schema.fields
            new = Project(new, tuple(ColumnRef(mapping[i], fields[mapping[i]].name,
                                               fields[mapping[i]].type)
                                     for i in range(len(node.schema))),
                          tuple(node.schema.names()))
        return Transformed(new, new != node)


def _prune(node: LogicalPlan, required: set[int]) -> tuple[LogicalPlan, Mapping]:
    """Prune ``node`` keeping at least ``required``; returns old -> new column positions."""
    match node:
        case Scan():
            table_cols = list(node.projection) if node.projection is not None \
                else list(range(len(node.table_schema)))
            keep = sorted(required) or [0]
            projection = tuple(table_cols[i] for i in keep)
            return replace(node, projection=projection), {old: new for new, old in
                                                           enumerate(keep)}
        case Project():
            keep = sorted(required) or [0]
            exprs = [node.exprs[i] for i in keep]
            child, m = _prune(node.input, _cols(exprs))
            new: LogicalPlan = Project(child, tuple(remap_columns(e, m) for e in exprs),
                                       tuple(node.names[i] for i in keep))
            return new, {old: new_i for new_i, old in enumerate(keep)}
        case Filter():
            child, m = _prune(node.input, required | node.predicate.columns())
            return Filter(child, remap_columns(node.predicate, m)), m
        case Aggregate():
            n_keys = len(node.keys)
            keep_aggs = sorted(i - n_keys for i in required if i >= n_keys)
            if not n_keys and not keep_aggs and node.aggs:
                # (a global aggregate's one row: kept by its cheapest aggregate, as a row of
                # no columns would be lost: SELECT 1 ... GROUP BY ())
                keep_aggs = [min(range(len(node.aggs)),
                                 key=lambda j: node.aggs[j].func != "count_star")]
            aggs = [node.aggs[j] for j in keep_aggs]
            needed = _cols(list(node.keys))
            for a in aggs:
                needed |= a.columns()
            child, m = _prune(node.input, needed)
            new_aggs = tuple(replace(a, args=tuple(remap_columns(x, m) for x in a.args),
                                     filter=remap_columns(a.filter, m) if a.filter is not None
                                     else None) for a in aggs)
            new = replace(node, input=child, keys=tuple(remap_columns(k, m) for k in node.keys),
                          aggs=new_aggs, agg_names=tuple(node.agg_names[j] for j in keep_aggs))
            mapping = {i: i for i in range(n_keys)}
            mapping.update({n_keys + j: n_keys + k for k, j in enumerate(keep_aggs)})
            return new, mapping
        case Join():
            n_left = len(node.left.schema)
            needed = set(required)
            if node.condition is not None:
                needed |= node.condition.columns()
            left_req = {i for i in needed if i < n_left} | _cols(list(node.left_keys))
            right_req = {i - n_left for i in needed if i >= n_left} | _cols(list(node.right_keys))
            left, lm = _prune(node.left, left_req)
            right, rm = _prune(node.right, right_req)
            width = len(left.schema)
            mapping = dict(lm)
            mapping.update({i + n_left: j + width for i, j in rm.items()})
            new = replace(node, left=left, right=right,
                          left_keys=tuple(remap_columns(k, lm) for k in node.left_keys),
                          right_keys=tuple(remap_columns(k, rm) for k in node.right_keys),
                          condition=remap_columns(node.condition, mapping)
                          if node.condition is not None else None)
            return new, mapping
        case Sort():
            child, m = _prune(node.input, required | _cols([k.expr for k in node.keys]))
            keys = tuple(replace(k, expr=remap_columns(k.expr, m)) for k in node.keys)
            return replace(node, input=child, keys=keys), m
        case Limit():
            child, m = _prune(node.input, required)
            return replace(node, input=child), m
        case Union():
            keep = sorted(required) or [0]
            inputs = []
            for i in node.inputs:
                child, m = _prune(i, set(keep))
                fields = child.schema.fields
                if [m[k] for k in keep] != list(range(len(fields))):
                    child = Project(child, tuple(ColumnRef(m[k], fields[m[k]].name,
                                                           fields[m[k]].type) for k in keep),
                                    tuple(fields[m[k]].name for k in keep))
                inputs.append(child)
            return Union(tuple(inputs)), {old: new for new, old in enumerate(keep)}
        case OverAggregate():
            width = len(node.input.schema)
            needed = {i for i in required if i < width} | {node.time_index}
            needed |= _cols(list(node.partition))
            for a in node.aggs:
                needed |= a.columns()
            child, m = _prune(node.input, needed)
            new = replace(node, input=child, time_index=m[node.time_index],
                          partition=tuple(remap_columns(p, m) for p in node.partition),
                          aggs=tuple(replace(a, args=tuple(remap_columns(x, m) for x in a.args),
                                             filter=remap_columns(a.filter, m)
                                             if a.filter is not None else None)
                                     for a in node.aggs))
            mapping = dict(m)
            mapping.update({width + j: len(child.schema) + j for j in range(len(node.aggs))})
            return new, mapping
        case Rank():
            width = len(node.input.schema)
            needed = {i for i in required if i < width}
            needed |= _cols(list(node.partition)) | _cols([k.expr for k in node.order])
            child, m = _prune(node.input, needed)
            new = replace(node, input=child,
                          partition=tuple(remap_columns(p, m) for p in node.partition),
                          order=tuple(replace(k, expr=remap_columns(k.expr, m))
                                      for k in node.order),
                          output_rank=node.output_rank and width in required)
            mapping = dict(m)
            mapping[width] = len(child.schema)
            return new, mapping
        case WindowTVF():
            width = len(node.input.schema)
            needed = {i for i in required if i < width} | {node.time_index}
            needed |= set(node.partition_keys)
            child, m = _prune(node.input, needed)
            new = replace(node, input=child, time_index=m[node.time_index],
                          partition_keys=tuple(m[k] for k in node.partition_keys))
            mapping = dict(m)
            mapping.update({width + j: len(child.schema) + j for j in range(3)})
            return new, mapping
        case Unnest():
            # The other columns above needs, and the container (kept last: pruning keeps the
            # columns' order); every element column stays. (Unpruned, a column carried
            # beside the array, the array itself when selected from the table, was copied
            # once per element: memory growing with the square of a row's elements.)
            width = len(node.input.schema)
            child, m = _prune(node.input, {i for i in required if i < width - 1} |
                              {width - 1})
            new = replace(node, input=child)
            made = len(node.schema) - (width - 1)
            mapping = {i: m[i] for i in range(width - 1) if i in m}
            mapping.update({width - 1 + j: len(child.schema) - 1 + j for j in range(made)})
            return new, mapping
        case Sink():
            child, m = _prune(node.input, set(range(len(node.input.schema))))
            return replace(node, input=child), m
        case _:
            return node, {i: i for i in range(len(node.schema))}


def _cols(exprs: list[Expr]) -> set[int]:
    out: set[int] = set()
    for e in exprs:
        out |= e.columns()
    return out
