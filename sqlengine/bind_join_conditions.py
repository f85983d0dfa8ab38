"""Subqueries in an outer join's ON condition, computed on one side before the join.

A condition of ``LEFT | RIGHT | FULL JOIN ... ON`` that holds a subquery cannot wait for a
filter above the join (it decides which rows match, not which rows stay), so each subquery
in it becomes a column of the side whose columns it reads, computed there before the join
(its value, or for EXISTS / IN its truth), and the condition reads that column. A subquery
reading the left side's columns (or none) is computed on the left; one whose operand reads the
right side's is computed on the right, shifted to its columns (it may not be correlated then:
its outer columns would be the join's row). One reading both sides is refused by name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlengine.bind_common import Relation
from sqlengine.plan.expressions import ColumnRef, Expr, remap_columns
from sqlengine.plan.nodes import LogicalPlan, Project
from sqlengine.plan.subquery import SubqueryExpr, outer_refs


@dataclass(frozen=True)
class MarkedSides:
    """The join's inputs with the subqueries' columns, and where those columns are."""

    left: Relation
    right: Relation
    conditions: list[Expr]  # the ON conditions over the columns of the new inputs
    n_left: int  # the left input's width, its new columns included
    left_marks: int
    right_marks: int


def mark_sides(conditions: list[Expr], left: Relation, right: Relation, n_left: int,
               side: str, refuse: Callable[[str], Exception]) -> MarkedSides:
    """Each subquery of ``conditions`` (over left + right columns) as a column of its side,
    and the conditions over the new inputs' columns."""
    on_left: list[Expr] = []
    on_right: list[Expr] = []
    sides: list[str] = []  # (each subquery's side, in the order both walks meet them)

    def collect(e: Expr) -> None:
        if isinstance(e, SubqueryExpr):
            operand = set(e.operand.columns()) if e.operand is not None else set()
            inner = outer_refs(e.plan)
            if max(operand | inner, default=-1) < n_left:
                on_left.append(e)
                sides.append("left")
            elif min(operand, default=n_left) >= n_left and not inner:
                on_right.append(remap_columns(e, {i: i - n_left for i in operand}))
                sides.append("right")
            elif min(operand | inner) >= n_left:
                raise refuse(f"a subquery in a {side} JOIN's ON condition that reads the "
                             "right side's columns may not be correlated")
            else:
                raise refuse(f"a subquery in a {side} JOIN's ON condition may read the "
                             "columns of one side only")
            return
        for k in e.children():
            collect(k)

    for c in conditions:
        collect(c)
    n_right = len(right.scope.columns)
    n_l = len(on_left)
    placed = {"left": n_left, "right": n_left + n_l + n_right}
    order = iter(sides)

    def rewrite(e: Expr) -> Expr:
        if isinstance(e, SubqueryExpr):
            where = next(order)
            placed[where] += 1
            return ColumnRef(placed[where] - 1, f"$on_{where}{placed[where]}", e.dtype)
        if isinstance(e, ColumnRef):
            return replace(e, index=e.index if e.index < n_left else e.index + n_l)
        kids = e.children()
        return e.with_children(tuple(rewrite(k) for k in kids)) if kids else e

    return MarkedSides(_with_columns(left, on_left, "$on_left"),
                       _with_columns(right, on_right, "$on_right"),
                       [rewrite(c) for c in conditions], n_left + n_l, n_l, len(on_right))


def drop_marks(plan: LogicalPlan, marked: MarkedSides) -> LogicalPlan:
    """The join's output without the marks' columns (left ones after the left columns,
    right ones at the end)."""
    fields = plan.schema.fields
    n_left = marked.n_left - marked.left_marks
    end = len(fields) - marked.right_marks
    keep = [i for i in range(end) if not n_left <= i < marked.n_left]
    return Project(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in keep),
                   tuple(fields[i].name for i in keep))


def _with_columns(rel: Relation, marks: list[Expr], prefix: str) -> Relation:
    if not marks:
        return rel
    fields = rel.plan.schema.fields
    return Relation(Project(rel.plan, (*(ColumnRef(i, f.name, f.type) for i, f in
                                         enumerate(fields)), *marks),
                            (*(f.name for f in fields),
                             *(f"{prefix}{j}" for j in range(len(marks))))), rel.scope)
