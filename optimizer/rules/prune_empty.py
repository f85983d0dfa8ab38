"""prune_empty: an aggregate without GROUP BY over an input that is empty by its plan (a
filter folded to FALSE or NULL) is the one row of its empty-input values (Calcite's
AggregateValuesRule, which Flink's planner runs)."""

from __future__ import annotations

from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import AggCall, Literal
from sqlengine.plan.nodes import Aggregate, Filter, LogicalPlan, Project, Values
from sqlengine.plan.tree import Transformed

# Each aggregate's value over no rows (a missing one: NULL); the rule leaves an aggregate it
# does not know (a Python function's, PERCENTILE's) to run.
_EMPTY: dict[str, object] = {"count_star": 0, "count": 0, "json_arrayagg": "[]",
                             "json_objectagg": "{}"}
_NULL_WHEN_EMPTY = ("sum", "avg", "min", "max", "first_value", "last_value", "listagg",
                    "array_agg")


class PruneEmpty(OptimizerRule):
    """``Aggregate(keys=[])`` over ``Filter(FALSE)`` (through projections and filters)
    becomes ``Values`` of one row: COUNT 0, JSON_ARRAYAGG '[]', JSON_OBJECTAGG '{}', the
    others NULL. In batch mode this is the row the aggregate gives anyway; in streaming mode
    the aggregate over no rows emitted nothing, where Flink, which folds it the same way,
    emits (0, NULL) for ``SELECT COUNT(*), SUM(n) FROM t WHERE 1 = 0``. The scans below are
    not read.

    Example:
        >>> from tests.plans import plan_of, show
        >>> from sqlengine.optimizer.rules.fold_constants import FoldConstants
        >>> plan = FoldConstants().apply(plan_of("SELECT COUNT(*), SUM(a) FROM t WHERE 1 = 0"),
        ...                              RuleContext()).data
        >>> print(show(PruneEmpty().apply(plan, RuleContext()).data))
        Project: $agg0 AS EXPR$0, $agg1 AS EXPR$1
          Values: rows=1
    """

    name = "prune_empty"
    apply_order = ApplyOrder.BOTTOM_UP

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        if not (isinstance(node, Aggregate) and not node.keys and _empty(node.input)):
            return Transformed.no(node)
        row = [_value(a) for a in node.aggs]
        if any(v is None for v in row):
            return Transformed.no(node)
        return Transformed.yes(Values((tuple(v for v in row if v is not None),),
                                      node.schema))


def _empty(plan: LogicalPlan) -> bool:
    """Whether ``plan`` has no rows by its plan: a filter of FALSE or NULL under projections
    and filters."""
    while isinstance(plan, Project | Filter):
        if isinstance(plan, Filter) and isinstance(plan.predicate, Literal) and \
                plan.predicate.value is not True:
            return True
        plan = plan.input
    return False


def _value(a: AggCall) -> Literal | None:
    if a.func in _EMPTY:
        return Literal(_EMPTY[a.func], a.type)
    if a.func in _NULL_WHEN_EMPTY:
        return Literal(None, a.type)
    return None
