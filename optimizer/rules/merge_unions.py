"""merge_unions: nested UNION ALL becomes one n-ary union (Flink's BinaryUnionReplacer)."""

from __future__ import annotations

from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.nodes import LogicalPlan, Union
from sqlengine.plan.tree import Transformed


class MergeUnions(OptimizerRule):
    """``Union(Union(a, b), c)`` becomes ``Union(a, b, c)``: one operator (one vertex) takes
    every input, instead of a chain of unions each adding a hop. The schema (names of the
    first input) does not change.

    Example:
        >>> from tests.plans import plan_of, show
        >>> sql = "SELECT a FROM t UNION ALL (SELECT a FROM u UNION ALL SELECT a + 1 FROM t)"
        >>> print(show(MergeUnions().apply(plan_of(sql), RuleContext()).data))
        Union
          Project: a
            Scan: t
          Project: a
            Scan: u
          Project: (a + 1) AS EXPR$0
            Scan: t
    """

    name = "merge_unions"
    apply_order = ApplyOrder.BOTTOM_UP

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        if isinstance(node, Union) and any(isinstance(i, Union) for i in node.inputs):
            flat: list[LogicalPlan] = []
            for i in node.inputs:
                flat.extend(i.inputs if isinstance(i, Union) else (i,))
            return Transformed.yes(Union(tuple(flat)))
        return Transformed.no(node)
