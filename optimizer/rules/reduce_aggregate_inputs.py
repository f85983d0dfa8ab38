"""reduce_aggregate_inputs: an aggregate joined on its grouping keys first drops the rows of
groups no row of the other side can meet (a semi-join reduction, DuckDB's "delim join").

A correlated scalar subquery becomes ``outer LEFT JOIN (SELECT k, agg(..) FROM r GROUP BY k)
ON outer.k = k`` (decorrelate.py): every group of ``r`` is aggregated, though only the groups
whose key the outer rows hold are read. In TPC-H q17 that is the average quantity of all 200,000
parts' lineitems for the 200 parts the outer query keeps; in q20 the sums of 900,000 lineitems
for the pairs of ~8,000 partsupp rows. The rows of a group whose key no outer row holds cannot
reach the join's output, so ``r`` is first semi-joined with the outer side's key values:

    outer JOIN Aggregate(keys=k, r)  ->  outer JOIN Aggregate(keys=k, r SEMI JOIN keys(outer))

The key values are taken from the part of the outer side with the fewest estimated rows that
still holds every key the join sees (an input of an inner join, the left input of a semi or left
join: a superset of the values that reach the join, so the reduction stays exact). It applies
to inner and left joins whose right keys are grouping keys of the aggregate, in batch mode,
when the estimates say the key values are at most a quarter of the groups (otherwise the extra
join costs more than it saves).
"""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.estimates import Estimator
from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import ColumnRef, Expr, remap_columns
from sqlengine.plan.nodes import Aggregate, Filter, Join, LogicalPlan, Project
from sqlengine.plan.tree import Transformed, transform_down

RATIO = 0.25


class ReduceAggregateInputs(OptimizerRule):
    """Join with an aggregate on its keys -> the aggregate's input semi-joined with the keys.

    Example:
        >>> from tests.plans import plan_of, show, sized_catalog
        >>> ctx = RuleContext({"execution.runtime-mode": "batch"})
        >>> plan = plan_of("SELECT * FROM t JOIN (SELECT a, COUNT(*) AS n FROM u GROUP BY a) "
        ...                "AS g ON t.a = g.a", sized_catalog())
        >>> print(show(ReduceAggregateInputs().apply(plan, ctx).data))
        Project: a, b, c, d, a AS a0, n
          Join: inner, on=[a = a]
            Scan: t
            Project: a, $agg0 AS n
              Aggregate: keys=[a], aggs=[count(*)]
                Join: semi, on=[a = $k0]
                  Scan: u
                  Project: a AS $k0
                    Scan: t
    """

    name = "reduce_aggregate_inputs"
    apply_order = ApplyOrder.WHOLE_TREE

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        if ctx.options.get("execution.runtime-mode", "streaming").lower() != "batch":
            return Transformed.no(node)
        estimator = Estimator(ctx.tables)
        return transform_down(node, lambda n: _reduce(n, estimator))


def _reduce(node: LogicalPlan, estimator: Estimator) -> Transformed[LogicalPlan]:
    if not (isinstance(node, Join) and node.kind in ("inner", "left") and node.left_keys):
        return Transformed.no(node)
    found = _aggregate_keys(node.right, node.right_keys)
    if found is None:
        return Transformed.no(node)
    path, agg, group_keys = found
    if _reduced(agg, group_keys):
        return Transformed.no(node)
    keys = _key_values(node.left, list(node.left_keys), estimator)
    if keys is None:
        return Transformed.no(node)
    source, source_keys = keys
    if estimator.estimate(source).rows > RATIO * estimator.estimate(agg).rows:
        return Transformed.no(node)
    exprs = tuple(source_keys)
    names = tuple(f"$k{i}" for i in range(len(exprs)))
    values = Project(source, exprs, names)
    width = len(agg.input.schema)
    semi = Join(agg.input, values, "semi", tuple(group_keys),
                tuple(ColumnRef(i, names[i], e.dtype) for i, e in enumerate(exprs)))
    assert width == len(semi.schema)
    new_right = _replace_along(node.right, path, replace(agg, input=semi))
    return Transformed.yes(replace(node, right=new_right))


def _aggregate_keys(plan: LogicalPlan, keys: tuple[Expr, ...]
                    ) -> tuple[list[int], Aggregate, list[Expr]] | None:
    """(the path to an aggregate below ``plan`` through projections and filters, the
    aggregate, its input's expressions for ``keys``) when every key is a grouping key."""
    path: list[int] = []
    current = list(keys)
    while isinstance(plan, Project | Filter):
        if isinstance(plan, Project):
            mapped = []
            for k in current:
                if not isinstance(k, ColumnRef):
                    return None
                e = plan.exprs[k.index]
                if not isinstance(e, ColumnRef):
                    return None
                mapped.append(e)
            current = mapped
        elif not all(isinstance(k, ColumnRef) for k in current):
            return None
        plan = plan.input
        path.append(0)
    if not isinstance(plan, Aggregate):
        return None
    group: list[Expr] = []
    for k in current:
        if not isinstance(k, ColumnRef) or k.index >= len(plan.keys):
            return None
        group.append(plan.keys[k.index])
    return path, plan, group


def _reduced(agg: Aggregate, group_keys: list[Expr]) -> bool:
    """Whether the aggregate's input already is a semi join on these keys (the rule ran)."""
    inp = agg.input
    return isinstance(inp, Join) and inp.kind == "semi" and list(inp.left_keys) == group_keys


def _replace_along(plan: LogicalPlan, path: list[int], new: LogicalPlan) -> LogicalPlan:
    if not path:
        return new
    kids = list(plan.children())
    kids[path[0]] = _replace_along(kids[path[0]], path[1:], new)
    return plan.with_children(tuple(kids))


def _key_values(plan: LogicalPlan, keys: list[Expr], estimator: Estimator
                ) -> tuple[LogicalPlan, list[Expr]] | None:
    """The smallest (by estimated rows) part of ``plan`` that holds all the values ``keys``
    take on ``plan``'s rows, with the keys over it."""
    best: tuple[LogicalPlan, list[Expr]] = (plan, keys)
    while True:
        cols = {c for k in keys for c in k.columns()}
        if isinstance(plan, Filter):
            plan = plan.input
        elif isinstance(plan, Project):
            if not all(isinstance(plan.exprs[c], ColumnRef) for c in cols):
                break
            keys = [remap_columns(k, {c: plan.exprs[c].index for c in k.columns()})
                    for k in keys]
            plan = plan.input
        elif isinstance(plan, Join) and plan.kind in ("inner", "left", "semi", "anti"):
            width = len(plan.left.schema)
            if cols and max(cols) < width:
                plan = plan.left
            elif plan.kind == "inner" and cols and min(cols) >= width:
                keys = [remap_columns(k, {c: c - width for c in k.columns()}) for k in keys]
                plan = plan.right
            else:
                break
        else:
            break
        if estimator.estimate(plan).rows < estimator.estimate(best[0]).rows:
            best = (plan, keys)
    return best
