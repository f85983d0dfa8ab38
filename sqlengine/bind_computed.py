"""A table's computed columns ('total AS price * qty') and its WATERMARK, which may be declared
for a computed column ('ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - INTERVAL '5'
SECOND'), as a scan binds them."""

from __future__ import annotations

from sqlengine.bind_common import scope_of
from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn
from sqlengine.catalog import TableDef
from sqlengine.errors import BindError
from sqlengine.plan.expressions import ROWTIME, Call, ColumnRef, Expr, substitute
from sqlengine.plan.nodes import LogicalPlan, Project, Scan, SourceSpec


def _table_scope(table: TableDef) -> Scope:
    return scope_of(Scan(SourceSpec(table.name, "", (), True), table.schema), None)


def source_watermark(table: TableDef, binder: ExprBinder
                     ) -> tuple[tuple[int, Expr] | None, Expr | None]:
    """The scan's WATERMARK (the rowtime column's position and the bound expression) and, for
    a computed rowtime, its expression over the table's columns (the watermark's expression is
    then over them too, with -1 as the position)."""
    if table.watermark is None:
        return None, None
    col, node = table.watermark
    scope = _table_scope(table)
    at = scope.resolve(col, None)
    if at is not None:
        return (at, binder.bind(node, scope)), None
    exprs = [*(ColumnRef(i, f.name, f.type) for i, f in enumerate(table.schema.fields)),
             *(binder.bind(n, scope) for _, n in table.computed)]
    names = [*(f.name for f in table.schema.fields), *(n for n, _ in table.computed)]
    wide = Scope(tuple(ScopeColumn(None, n, e.dtype) for n, e in zip(names, exprs)))
    at = wide.resolve(col, None)
    if at is None:
        raise BindError(f"table {table.name!r}: unknown WATERMARK column {col!r}")
    return (-1, substitute(binder.bind(node, wide), tuple(exprs))), exprs[at]


def computed_columns(table: TableDef, plan: LogicalPlan, binder: ExprBinder,
                     computed_rowtime: bool) -> LogicalPlan:
    """The table's columns and its computed ones; with ``computed_rowtime``, the one its
    WATERMARK is declared for is marked as the rowtime attribute."""
    rowtime = table.watermark[0].lower() if computed_rowtime and table.watermark else None
    exprs: list[Expr] = [ColumnRef(i, f.name, f.type) for i, f in enumerate(plan.schema.fields)]
    names = [f.name for f in plan.schema.fields]
    scope = scope_of(plan, None)
    for name, node in table.computed:
        e = binder.bind(node, scope)
        exprs.append(Call(ROWTIME, (e,), e.dtype) if name.lower() == rowtime else e)
        names.append(name)
    order = table.in_order(names)  # (as declared: a computed column among the others)
    return Project(plan, tuple(exprs[i] for i in order), tuple(names[i] for i in order))
