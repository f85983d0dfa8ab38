"""fold_constants: evaluate expressions without column references once, at plan time."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import SqlEngineError
from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import Call, Cast, ColumnRef, Expr, Literal, is_volatile
from sqlengine.plan.nodes import Filter, LogicalPlan
from sqlengine.plan.tree import Transformed, map_expressions


class FoldConstants(OptimizerRule):
    """Replace constant sub-expressions by literals (in every node's expressions, VALUES rows
    included); simplify AND/OR with a constant side; drop a Filter whose predicate is TRUE.

    Example:
        >>> from tests.plans import plan_of
        >>> print(FoldConstants().apply(plan_of("SELECT a FROM t WHERE a > 1 + 2"),
        ...                             RuleContext()).data.explain_label())
        Project: a
    """

    name = "fold_constants"
    apply_order = ApplyOrder.BOTTOM_UP

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        changed = False

        def fold(e: Expr) -> Expr:
            nonlocal changed
            out = fold_expr(e)
            changed = changed or out != e
            return out

        new = map_expressions(node, fold)
        if isinstance(new, Filter) and isinstance(new.predicate, Literal) \
                and new.predicate.value is True:
            return Transformed.yes(new.input)
        return Transformed(new, changed)


def fold_expr(e: Expr) -> Expr:
    """Fold ``e`` bottom-up; leaves expressions that fail to evaluate for the runtime to report."""
    kids = e.children()
    if isinstance(e, Call) and e.name in _SELF_COMPARED and e.args[0] == e.args[1] and \
            not T.is_nested(e.args[0].dtype) and \
            not any(isinstance(x, Call) and is_volatile(x.name) for x in e.walk()):
        # x = x is TRUE (NULL for a NULL x), x <> x FALSE: Calcite's simplification, which
        # Flink's answers show (a NaN compared with itself too, where NaN = NaN is FALSE;
        # judged before folding: a NaN literal is not equal to itself)
        return fold_expr(_SELF_COMPARED[e.name](e.args[0]))
    if kids:
        folded = tuple(fold_expr(k) for k in kids)
        if folded != kids:
            e = e.with_children(folded)
    if isinstance(e, Call) and e.name in ("and", "or"):
        simplified = _simplify_logic(e)
        if simplified is not None:
            return simplified
    if isinstance(e, Literal | ColumnRef) or any(isinstance(x, ColumnRef) or not x.foldable
                                                 for x in e.walk()):
        return e
    if any(isinstance(x, Call) and is_volatile(x.name) for x in e.walk()):
        return e  # its value depends on when it runs
    if isinstance(e, Cast) and isinstance(e.arg, Literal) and e.arg.value is None:
        return Literal(None, e.type)
    if isinstance(e.dtype, pa.ExtensionType):  # (a BITMAP has no literal: its arguments are)
        return e
    from sqlengine.runtime.evaluate import evaluate

    try:
        value = evaluate(e, pa.record_batch([pa.array([0])], names=["_"]))[0].as_py()
    except (SqlEngineError, OverflowError, ValueError):  # (no Python value: a year 0 date)
        return e
    return Literal(value, e.dtype)


def _true_unless_null(x: Expr) -> Expr:
    return Call("or", (Call("is_not_null", (x,), pa.bool_()), Literal(None, pa.bool_())),
                pa.bool_())


def _false_unless_null(x: Expr) -> Expr:
    return Call("and", (Call("is_null", (x,), pa.bool_()), Literal(None, pa.bool_())),
                pa.bool_())


_SELF_COMPARED = {"eq": _true_unless_null, "le": _true_unless_null, "ge": _true_unless_null,
                  "ne": _false_unless_null, "lt": _false_unless_null, "gt": _false_unless_null}


def _simplify_logic(e: Call) -> Expr | None:
    a, b = e.args
    for x, y in ((a, b), (b, a)):
        if isinstance(x, Literal) and x.value is not None:
            if e.name == "and":
                return y if x.value is True else Literal(False, pa.bool_())
            return Literal(True, pa.bool_()) if x.value is True else y
    return None
