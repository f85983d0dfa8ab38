"""Subqueries inside expressions, as the binder leaves them for the optimizer to decorrelate.

A ``SubqueryExpr`` holds a bound query plan. Inside that plan an ``OuterRef`` reads a column
of the enclosing query's row (a correlated reference); ``index`` is the column's position in
the input of the node holding the SubqueryExpr. optimizer/rules/decorrelate.py rewrites every
SubqueryExpr into joins before any other rule runs; no runtime ever sees one.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import ClassVar

import pyarrow as pa

from sqlengine.plan.expressions import INFIX, Expr
from sqlengine.plan.nodes import LogicalPlan
from sqlengine.plan.tree import map_expressions, walk

SUBQUERY_KINDS = ("scalar", "exists", "any")


@dataclass(frozen=True, slots=True)
class OuterRef(Expr):
    """A column of the enclosing query's row, read inside a subquery."""

    foldable: ClassVar[bool] = False

    index: int
    name: str
    type: pa.DataType

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def sql(self) -> str:
        return f"$outer.{self.name}"


@dataclass(frozen=True, slots=True)
class SubqueryExpr(Expr):
    """``(SELECT ...)`` (scalar), ``EXISTS (...)``, or ``operand op ANY (...)``.

    ``x IN (q)`` is ``x = ANY (q)``; ``x NOT IN (q)`` is ``NOT (x = ANY (q))``; ``x op ALL
    (q)`` is ``NOT (x negated-op ANY (q))``: the binder writes them so, and the decorrelation
    rule has three forms to handle.
    """

    foldable: ClassVar[bool] = False

    kind: str  # scalar | exists | any
    plan: LogicalPlan
    type: pa.DataType
    operand: Expr | None = None  # ANY: the left-hand side, over the enclosing row
    op: str = ""  # ANY: the comparison's registry name (eq, lt, ...)

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,) if self.operand is not None else ()

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return replace(self, operand=children[0]) if children else self

    def sql(self) -> str:
        if self.kind == "exists":
            return "EXISTS(<subquery>)"
        if self.kind == "any" and self.operand is not None:
            return f"{self.operand.sql()} {INFIX.get(self.op, self.op)} ANY(<subquery>)"
        return "(<subquery>)"


def has_subquery(expr: Expr) -> bool:
    return any(isinstance(e, SubqueryExpr) for e in expr.walk())


def node_expressions(plan: LogicalPlan) -> list[Expr]:
    """The expressions a node holds (not its children's)."""
    found: list[Expr] = []

    def collect(e: Expr) -> Expr:
        found.append(e)
        return e

    map_expressions(plan, collect)
    return found


def subquery_plans(plan: LogicalPlan) -> Iterator[LogicalPlan]:
    """The plans of the subqueries held anywhere in ``plan`` (outermost first)."""
    for node in walk(plan):
        for e in node_expressions(node):
            for sub in e.walk():
                if isinstance(sub, SubqueryExpr):
                    yield sub.plan
                    yield from subquery_plans(sub.plan)


def outer_refs(plan: LogicalPlan) -> set[int]:
    """The enclosing-row columns that ``plan`` (a subquery's plan) reads."""
    out: set[int] = set()
    for node in walk(plan):
        for e in node_expressions(node):
            out |= {x.index for x in e.walk() if isinstance(x, OuterRef)}
    return out
