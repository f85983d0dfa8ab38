"""Comparison predicates with a syntax of their own: ``[NOT] LIKE`` / ``ILIKE`` / ``SIMILAR TO``
with an optional ``ESCAPE``, ``IS [NOT] DISTINCT FROM`` and ``(a, b) [NOT] IN ((1, 2), ...)``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import bind_scalar
from sqlengine import types as T
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import Call, Expr
from sqlengine.plan.join_keys import not_distinct

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder, Scope


def like(binder: ExprBinder, node: exp.Expression, scope: Scope,
         escape: exp.Expression | None = None, negated: bool = False) -> Expr:
    """``x [NOT] LIKE p``, ``x [NOT] ILIKE p`` and ``x [NOT] SIMILAR TO p``, each with an
    optional ``ESCAPE e`` (sqlglot marks NOT as ``negate``); ILIKE compares lower-cased
    text, with a string-literal pattern lowered here so that it stays the constant LIKE
    needs."""
    if not isinstance(node, exp.Like | exp.ILike | exp.SimilarTo):
        raise binder.error(NotSupportedError, f"ESCAPE after {node.sql()!r}: only LIKE and "
                           "SIMILAR TO take an ESCAPE", node)
    base = "similar_to" if isinstance(node, exp.SimilarTo) else "like"
    name = f"not_{base}" if negated != bool(node.args.get("negate")) else base
    args: list[exp.Expression] = [node.this, node.expression]
    if isinstance(node, exp.ILike):
        pattern = node.expression
        if isinstance(pattern, exp.Literal) and pattern.is_string:
            pattern = exp.Literal.string(pattern.this.lower())
        else:
            pattern = exp.Lower(this=pattern)
        args = [exp.Lower(this=node.this), pattern]
    return binder.call(name, args + ([escape] if escape is not None else []), scope, node)


def distinct(binder: ExprBinder, node: exp.NullSafeEQ | exp.NullSafeNEQ, scope: Scope) -> Expr:
    """``a IS [NOT] DISTINCT FROM b``: never NULL; two NULLs are not distinct.
    ``a IS NOT DISTINCT FROM b`` = ``COALESCE(a = b, a IS NULL AND b IS NULL)``."""
    a, b = binder.bind(node.this, scope), binder.bind(node.expression, scope)
    nodes = [node.this, node.expression]
    eq = bind_scalar.apply(binder, "eq", [a, b], nodes, node)
    if isinstance(eq, Call) and eq.name == "eq" and len(eq.args) == 2:
        same = not_distinct(*eq.args)  # (the operands cast to their common type, as eq's)
    else:
        both_null = Call("and", (Call("is_null", (a,), T.BOOLEAN),
                                 Call("is_null", (b,), T.BOOLEAN)), T.BOOLEAN)
        same = Call("coalesce", (eq, both_null), T.BOOLEAN)
    return same if isinstance(node, exp.NullSafeEQ) else Call("not", (same,), T.BOOLEAN)


def row_in(binder: ExprBinder, node: exp.In, scope: Scope, negated: bool) -> Expr:
    """``(a, b) [NOT] IN ((x1, y1), (x2, y2), ...)``: ``(a = x1 AND b = y1) OR ...`` (three
    valued: a NULL field makes a comparison UNKNOWN, as in a row comparison)."""
    fields = node.this.expressions
    alternatives: list[Expr] = []
    for value in node.expressions:
        items = value.expressions if isinstance(value, exp.Tuple) else [value]
        if len(items) != len(fields):
            raise binder.error(BindError, f"IN compares rows of {len(fields)} values, but "
                               f"{value.sql()!r} has {len(items)}", value)
        eqs = [binder.call("eq", [f, v], scope, value) for f, v in zip(fields, items)]
        both = eqs[0]
        for e in eqs[1:]:
            both = Call("and", (both, e), T.BOOLEAN)
        alternatives.append(both)
    out = alternatives[0]
    for a in alternatives[1:]:
        out = Call("or", (out, a), T.BOOLEAN)
    return Call("not", (out,), T.BOOLEAN) if negated else out


_ROW_ORDER = {exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}


def row_compare(binder: ExprBinder, node: exp.Binary, scope: Scope) -> Expr:
    """``(a, b) op (x, y)``: ``=`` holds when every field is equal, ``<>`` when one differs,
    ``<`` / ``<=`` / ``>`` / ``>=`` compare the fields in order (the first that differs
    decides), each three valued as its field comparisons (as PostgreSQL and DuckDB)."""
    left, right = node.this.expressions, node.expression.expressions
    if len(left) != len(right):
        raise binder.error(BindError, f"rows of {len(left)} and {len(right)} values cannot be "
                           "compared", node)
    pairs = list(zip(left, right))
    if isinstance(node, exp.NullSafeEQ | exp.NullSafeNEQ):
        # (not distinct: every field not distinct, as Flink's; distinct: one field is)
        same = _all([distinct(binder, exp.NullSafeEQ(this=a, expression=b), scope)
                     for a, b in pairs])
        return same if isinstance(node, exp.NullSafeEQ) else Call("not", (same,), T.BOOLEAN)
    if not isinstance(node, exp.EQ | exp.NEQ) and type(node) not in _ROW_ORDER:
        raise binder.error(BindError, f"rows cannot be combined with {node.key.upper()}",
                           node)
    if isinstance(node, exp.EQ | exp.NEQ):
        out = _all([binder.call("eq", [a, b], scope, node) for a, b in pairs])
        return Call("not", (out,), T.BOOLEAN) if isinstance(node, exp.NEQ) else out
    op = _ROW_ORDER[type(node)]
    strict = op[0] + "t"  # (lt / gt: a field that differs decides)
    out = binder.call(op, [pairs[-1][0], pairs[-1][1]], scope, node)
    for a, b in reversed(pairs[:-1]):
        out = Call("or", (binder.call(strict, [a, b], scope, node), Call(
            "and", (binder.call("eq", [a, b], scope, node), out), T.BOOLEAN)), T.BOOLEAN)
    return out


def _all(parts: list[Expr]) -> Expr:
    out = parts[0]
    for p in parts[1:]:
        out = Call("and", (out, p), T.BOOLEAN)
    return out
