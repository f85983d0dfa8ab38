"""The columns of a JOIN ... USING and a NATURAL JOIN (standard SQL, as Calcite has them)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import Relation
from sqlengine.bind_expr import Scope, ScopeColumn, coerce
from sqlengine.errors import BindError
from sqlengine.plan.expressions import Call, ColumnRef, Expr
from sqlengine.plan.nodes import LogicalPlan, Project

if TYPE_CHECKING:
    from sqlengine.bind_common import ClauseBinder


def using_parts(binder: ClauseBinder, left: Relation, right: Relation,
                names: list[tuple[str, exp.Expression]]
                ) -> tuple[list[tuple[ColumnRef, ColumnRef]], Relation, Relation]:
    """Per USING column (name, and the node an error points at): its (left, right) copies
    in the joined row; and both sides with those copies reachable by their qualifiers only
    (the unqualified name is the merged column added after the join)."""
    n_left = len(left.scope.columns)
    parts = []
    for name, node in names:
        li, ri = left.scope.resolve(name, None), right.scope.resolve(name, None)
        if li is None or ri is None:
            raise binder.error(BindError, f"USING column {name!r} is not on both sides", node)
        lc, rc = left.scope.columns[li], right.scope.columns[ri]
        parts.append((ColumnRef(li, lc.name, lc.type), ColumnRef(n_left + ri, rc.name, rc.type)))
    left_dup = {a.index for a, _ in parts}
    right_dup = {b.index - n_left for _, b in parts}
    left = Relation(left.plan, Scope(tuple(
        replace(c, using_duplicate=True) if i in left_dup else c
        for i, c in enumerate(left.scope.columns))))
    right = Relation(right.plan, Scope(tuple(
        replace(c, using_duplicate=True) if i in right_dup else c
        for i, c in enumerate(right.scope.columns))))
    return parts, left, right


def natural_columns(left: Scope, right: Scope) -> list[str]:
    """A NATURAL JOIN's USING columns: the names both sides show (unqualified), in the left
    side's order."""
    def shown(scope: Scope) -> list[str]:
        return [c.name for c in scope.columns if not c.using_duplicate
                and not c.name.startswith("$")]

    theirs = {n.lower() for n in shown(right)}
    out: list[str] = []
    for name in shown(left):
        if name.lower() in theirs and name.lower() not in {o.lower() for o in out}:
            out.append(name)
    return out


def using_columns(plan: LogicalPlan, scope: Scope, parts: list[tuple[ColumnRef, ColumnRef]],
                  position: list[int], side: str) -> Relation:
    """The join's USING columns first: the left's value, the right's for a RIGHT JOIN and
    COALESCE of both for a FULL JOIN; then every column of both sides (the copies reachable
    by their qualifiers only). ``parts``: (preserved side's copy, other side's copy) before a
    RIGHT JOIN's sides were put back; ``position``: where each is in ``plan``. (Main took
    the left copy for a FULL JOIN: a row only the right side had read NULL.)"""
    fields = plan.schema.fields
    merged: list[Expr] = []
    columns: list[ScopeColumn] = []
    for a, b in parts:
        ka, kb = position[a.index], position[b.index]
        ra = ColumnRef(ka, fields[ka].name, fields[ka].type)
        rb = ColumnRef(kb, fields[kb].name, fields[kb].type)
        if side == "FULL":
            t = T.common_type([ra.dtype, rb.dtype], "USING columns")
            value: Expr = Call("coalesce", (coerce(ra, t), coerce(rb, t)), t)
        else:  # (the preserved side's: the written left's, a RIGHT JOIN's right's)
            value = ra
        merged.append(value)
        columns.append(ScopeColumn(None, scope.columns[ka].name, value.dtype))
    exprs = (*merged, *(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields)))
    names = (*(c.name for c in columns), *(f.name for f in fields))
    return Relation(Project(plan, exprs, names), Scope((*columns, *scope.columns)))
