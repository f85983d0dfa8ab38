"""Bind subqueries inside expressions: scalar ``(SELECT ...)``, ``[NOT] EXISTS``, ``x [NOT] IN
(SELECT ...)`` and ``x op ANY | SOME | ALL (SELECT ...)``.

The subquery is bound with the enclosing query's scope one level out, so that a column it
does not find among its own resolves there, as an ``OuterRef`` (a correlated reference). The
result is a ``SubqueryExpr`` holding the subquery's plan; optimizer/rules/decorrelate.py turns
it into joins. IN is written as ``= ANY``, NOT IN as ``NOT (= ANY)`` and ``op ALL`` as
``NOT (negated-op ANY)``, so that decorrelation has three forms to know.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import ClauseBinder, Relation
from sqlengine.bind_correlation import outer_equalities
from sqlengine.bind_expr import OuterScope, Scope, coerce
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import Call, ColumnRef, Expr
from sqlengine.plan.nodes import Limit, LogicalPlan, Project, Sort
from sqlengine.plan.subquery import SubqueryExpr

if TYPE_CHECKING:
    from sqlengine.binder import Binder

_COMPARE = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt",
            exp.GTE: "ge"}
_NEGATED = {"eq": "ne", "ne": "eq", "lt": "ge", "le": "gt", "gt": "le", "ge": "lt"}


class SubqueryBinder(ClauseBinder):
    """Subqueries in expressions (the expression binder hands them here)."""

    def __init__(self, binder: Binder) -> None:
        super().__init__(binder)
        # The CTEs visible where the current SELECT block is bound.
        self.ctes: dict[str, Relation] = {}

    def bind(self, node: exp.Expression, scope: Scope, negated: bool = False) -> Expr:
        """A subquery expression: exp.Subquery / exp.Select (scalar), exp.Exists, exp.In with
        a query, or a comparison whose right side is exp.Any / exp.All."""
        if isinstance(node, exp.Exists):
            out: Expr = SubqueryExpr("exists", _rows_at_all(self.plan(node.this, scope)),
                                     T.BOOLEAN)
        elif isinstance(node, exp.In):
            out = self._quantified(node.this, "eq", node.args["query"], scope, node)
        elif isinstance(node, exp.Subquery | exp.Select):
            plan = self.plan(node, scope)
            if len(plan.schema) != 1:
                raise self.error(BindError, f"a scalar subquery must return one column, this "
                                 f"one returns {len(plan.schema)}", node)
            out = SubqueryExpr("scalar", plan, plan.schema.fields[0].type)
        elif type(node) in _COMPARE and isinstance(node.expression, exp.Any | exp.All):
            op = _COMPARE[type(node)]
            quantified = node.expression
            if isinstance(quantified, exp.All):
                inner = self._quantified(node.this, _NEGATED[op], quantified.this, scope, node)
                out = Call("not", (inner,), T.BOOLEAN)
            else:
                out = self._quantified(node.this, op, quantified.this, scope, node)
        else:
            raise self.error(NotSupportedError, f"unsupported subquery {node.sql()!r}", node)
        return Call("not", (out,), T.BOOLEAN) if negated else out

    def _quantified(self, operand_node: exp.Expression, op: str, query: exp.Expression,
                    scope: Scope, node: exp.Expression) -> Expr:
        inner_query = query.this if isinstance(query, exp.Paren | exp.Subquery) else query
        if not isinstance(inner_query, exp.Query):
            raise self.error(NotSupportedError, "ANY / ALL / SOME take a subquery; for an "
                             "array, write ARRAY_CONTAINS(array, value)", node)
        if isinstance(operand_node, exp.Tuple):
            return self._row_in(operand_node, op, query, scope, node)
        operand = self.exprs.bind(operand_node, scope)
        plan = self.plan(query, scope)
        if len(plan.schema) != 1:
            raise self.error(BindError, f"the subquery of IN / ANY / ALL must return one "
                             f"column, this one returns {len(plan.schema)}", node)
        inner_type = plan.schema.fields[0].type
        try:
            common = T.common_type([operand.dtype, inner_type], "IN / ANY / ALL operands")
        except BindError as e:
            raise self.error(BindError, e.message, node) from None
        if common != inner_type:
            f = plan.schema.fields[0]
            plan = Project(plan, (coerce(ColumnRef(0, f.name, f.type), common),), (f.name,))
        return SubqueryExpr("any", plan, T.BOOLEAN, coerce(operand, common), op)

    def _row_in(self, operand_node: exp.Tuple, op: str, query: exp.Expression, scope: Scope,
                node: exp.Expression) -> Expr:
        """``(a, b, ...) IN (q)``: q returns as many columns; each pair meets at its common
        type (the decorrelate rule makes it a semi join, NOT IN an anti join)."""
        if op != "eq":
            raise self.error(NotSupportedError, "a row of values compares with a subquery "
                             "only by IN / = ANY", node)
        fields = [self.exprs.bind(e, scope) for e in operand_node.expressions]
        plan = self.plan(query, scope)
        if len(plan.schema) != len(fields):
            raise self.error(BindError, f"IN compares rows of {len(fields)} values, but the "
                             f"subquery returns {len(plan.schema)} columns", node)
        commons = []
        for f, col in zip(fields, plan.schema.fields):
            try:
                commons.append(T.comparison_type([f.dtype, col.type], "IN operands"))
            except BindError as e:
                raise self.error(BindError, e.message, node) from None
        cols = plan.schema.fields
        if any(c != col.type for c, col in zip(commons, cols)):
            plan = Project(plan, tuple(coerce(ColumnRef(i, col.name, col.type), c)
                                       for i, (col, c) in enumerate(zip(cols, commons))),
                           tuple(col.name for col in cols))
        args = tuple(coerce(f, c) for f, c in zip(fields, commons))
        row = Call("row_value", args, pa.struct([pa.field(f"EXPR${i}", a.dtype)
                                                 for i, a in enumerate(args)]))
        return SubqueryExpr("any", plan, T.BOOLEAN, row, "eq")

    def plan(self, query: exp.Expression, scope: Scope) -> LogicalPlan:
        """Bind ``query`` with ``scope`` as the enclosing row (and the current CTEs)."""
        if isinstance(query, exp.Subquery):
            inner = query.this
            outer_node = query
        else:
            inner = outer_node = query
        exprs = self.exprs
        saved_intercept, exprs.intercept = exprs.intercept, None
        equals = outer_equalities(exprs, outer_node, scope) if saved_intercept is None else ()
        exprs.outer.append(OuterScope(scope, saved_intercept, exprs.intercept_scope
                                      if saved_intercept is not None else None, equals))
        saved_ctes = self.ctes
        try:
            rel = self.binder.query(inner, self.ctes)
            if outer_node is not inner:
                rel = self.binder.selects.order_limit(outer_node, rel)
        finally:
            exprs.outer.pop()
            exprs.intercept = saved_intercept
            self.ctes = saved_ctes
        return rel.plan



def _rows_at_all(plan: LogicalPlan) -> LogicalPlan:
    """An EXISTS subquery's plan without what cannot change whether it has a row: a LIMIT of
    at least one row without OFFSET, and an ORDER BY (a correlated subquery through a LIMIT
    cannot be decorrelated; Flink answers NOT EXISTS (... LIMIT 1))."""
    if isinstance(plan, Project):
        inner = _rows_at_all(plan.input)
        return plan if inner is plan.input else replace(plan, input=inner)
    if isinstance(plan, Limit | Sort) and not plan.offset and (plan.fetch is None or
                                                               plan.fetch >= 1):
        return _rows_at_all(plan.input)
    return plan
