"""A correlated reference two query levels out, reached through an equality of the query
between. In

    SELECT a.k FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.k = a.k AND
                                    EXISTS (SELECT 1 FROM c WHERE c.k = a.k))

the innermost query's ``a.k`` is ``b.k`` wherever the middle query's WHERE can hold:
``b.k = a.k`` is one of its conjuncts and the subquery lies in another, so where
``b.k <> a.k`` (or either is NULL) that WHERE is not TRUE whatever the subquery gives. The
reference binds as one to ``b.k``, one level out, which the decorrelation takes (each query
correlated with the one around it). A column of the same type only; other references more
than one level out are refused by name (Flink's planner and DuckDB take some of them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine.errors import BindError, NotSupportedError

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder, Scope
    from sqlengine.plan.expressions import Expr

# (position in ExprBinder.outer of the column's scope, its index there, the index of the
# column it equals in the query between)
Equality = tuple[int, int, int]


def outer_equalities(exprs: ExprBinder, query: exp.Expression, scope: Scope
                     ) -> tuple[Equality, ...]:
    """The equalities ``own = outer`` among the conjuncts of the WHERE that holds subquery
    ``query`` (``scope``: that WHERE's query's columns; ``exprs.outer``: the queries around
    it), but the conjunct holding ``query``."""
    where, holder = _enclosing_where(query)
    if where is None or not exprs.outer or exprs.outer[-1].intercept is not None:
        return ()
    around = exprs.outer[-1].scope
    found = []
    for conjunct in _conjuncts(where.this):
        if conjunct is holder or not isinstance(conjunct, exp.EQ):
            continue
        sides = [_unwrapped(conjunct.this), _unwrapped(conjunct.expression)]
        if not all(isinstance(s, exp.Column) for s in sides):
            continue
        for own, far in (sides, sides[::-1]):
            i = _resolve(scope, own)
            if i is None or _resolve(scope, far) is not None:
                continue
            j = _resolve(around, far)
            if j is not None and around.columns[j].type == scope.columns[i].type:
                found.append((len(exprs.outer) - 1, j, i))
    return tuple(found)


def reach_through(exprs: ExprBinder, node: exp.Column, position: int, index: int) -> Expr:
    """Column ``index`` of the scope at ``position`` in ``exprs.outer`` (two or more levels
    out of the query being bound), as the column of the query one level out that its WHERE
    equates it with; refused if there is none."""
    from sqlengine.plan.subquery import OuterRef

    between = exprs.outer[-1]
    for at, far, own in between.equals:
        if at == position and far == index and between.intercept is None:
            col = between.scope.columns[own]
            return OuterRef(own, col.name, col.type)
    raise exprs.error(NotSupportedError, f"column {node.sql()!r} belongs to a query more than "
                      "one level out; correlated references reach only the enclosing query, "
                      "or one further through an equality with a column of it in the "
                      "enclosing query's WHERE", node)


def _enclosing_where(query: exp.Expression) -> tuple[exp.Where | None, exp.Expression | None]:
    """The WHERE of the SELECT whose WHERE holds ``query`` and the top-level conjunct holding
    it; (None, None) if it lies elsewhere (the select list, FROM, HAVING ...)."""
    node = query
    while node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.Where):
            if not isinstance(parent.parent, exp.Select):
                return None, None
            holder = next(c for c in _conjuncts(parent.this)
                          if any(n is query for n in c.walk()))
            return parent, holder
        if isinstance(parent, exp.Select | exp.From | exp.Join | exp.Having | exp.Group):
            return None, None
        node = parent
    return None, None


def _conjuncts(node: exp.Expression) -> list[exp.Expression]:
    node = _unwrapped(node)
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    return [node]


def _unwrapped(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def _resolve(scope: Scope, column: exp.Column) -> int | None:
    if column.args.get("db") is not None or column.args.get("catalog") is not None:
        return None
    qualifier = column.table or None
    if qualifier and qualifier.lower() not in scope.qualifiers():
        return None
    try:
        return scope.resolve(column.name, qualifier)
    except BindError:
        return None
