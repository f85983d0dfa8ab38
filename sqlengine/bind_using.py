"""The columns of a JOIN ... USING (standard SQL, as Calcite has them)."""

from __future__ import annotations

from sqlengine import types as T
from sqlengine.bind_common import Relation
from sqlengine.bind_expr import Scope, ScopeColumn, coerce
from sqlengine.plan.expressions import Call, ColumnRef, Expr
from sqlengine.plan.nodes import LogicalPlan, Project


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
