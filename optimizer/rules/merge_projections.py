"""merge_projections: collapse Project over Project and drop identity projections."""

from __future__ import annotations

from collections import Counter

from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import ColumnRef, Expr, Literal, substitute
from sqlengine.plan.nodes import LogicalPlan, Project
from sqlengine.plan.tree import Transformed


class MergeProjections(OptimizerRule):
    """``Project(Project(x))`` becomes one Project when no computed column would be evaluated
    twice; a Project that returns its input unchanged disappears.

    Example:
        >>> from tests.plans import plan_of, show
        >>> print(show(MergeProjections().apply(plan_of("SELECT a FROM (SELECT a, b FROM t)"),
        ...                                     RuleContext()).data))
        Project: a
          Scan: t
    """

    name = "merge_projections"
    apply_order = ApplyOrder.BOTTOM_UP

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        match node:
            case Project(input=Project() as inner):
                uses = Counter(i for e in node.exprs for i in _refs(e))
                for idx, n in uses.items():
                    if n > 1 and not isinstance(inner.exprs[idx], ColumnRef | Literal):
                        return _identity_or_same(node)
                merged = tuple(substitute(e, inner.exprs) for e in node.exprs)
                return Transformed.yes(Project(inner.input, merged, node.names))
            case _:
                return _identity_or_same(node)


def _refs(e: Expr) -> list[int]:
    return [x.index for x in e.walk() if isinstance(x, ColumnRef)]


def _identity_or_same(node: LogicalPlan) -> Transformed[LogicalPlan]:
    if isinstance(node, Project):
        fields = node.input.schema.fields
        if len(node.exprs) == len(fields) and all(
            isinstance(e, ColumnRef) and e.index == i and n == f.name
            for i, (e, n, f) in enumerate(zip(node.exprs, node.names, fields))
        ):
            return Transformed.yes(node.input)
    return Transformed.no(node)
