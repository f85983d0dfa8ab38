"""What the clause binders share: the bound Relation, their base class and scope helpers."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn
from sqlengine.errors import BindError, SqlEngineError
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.plan.nodes import Aggregate, LogicalPlan, SortKey

if TYPE_CHECKING:
    from sqlengine.binder import Binder


@dataclass(frozen=True, slots=True)
class Relation:
    """A bound FROM item or query: its plan and the scope it exposes."""

    plan: LogicalPlan
    scope: Scope


class ClauseBinder:
    """Binds one kind of clause; reaches the others (and the shared state) through the
    ``Binder`` façade it belongs to."""

    def __init__(self, binder: Binder) -> None:
        self.binder = binder

    @property
    def exprs(self) -> ExprBinder:
        return self.binder.exprs

    def error(self, cls: type[SqlEngineError], msg: str, node: exp.Expression) -> SqlEngineError:
        return self.binder.error(cls, msg, node)


def sort_key(clause: ClauseBinder, o: exp.Ordered, ref: Expr) -> SortKey:
    """An ORDER BY key (of a query, an OVER window or a Top-N)."""
    if T.is_opaque(ref.dtype):
        raise clause.error(BindError, f"cannot ORDER BY a {T.type_name(ref.dtype)}: it has no "
                           "order (as in Flink); order by a value read from it", o.this)
    desc = bool(o.args.get("desc"))
    nulls_first = o.args.get("nulls_first")
    if nulls_first is None:
        nulls_first = not desc  # Flink: NULLs are smallest (first ascending, last descending)
    return SortKey(ref, not desc, bool(nulls_first))


def distinct(plan: LogicalPlan) -> LogicalPlan:
    fields = plan.schema.fields
    keys = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields))
    return Aggregate(plan, keys, tuple(f.name for f in fields), (), ())


def scope_of(plan: LogicalPlan, alias: str | None, source: Scope | None = None,
             exprs: list[Expr] | None = None) -> Scope:
    cols = []
    for i, f in enumerate(plan.schema.fields):
        rowtime, proctime = f.rowtime, f.proctime
        if source is not None and exprs is not None and i < len(exprs):
            e = exprs[i]
            rowtime = isinstance(e, ColumnRef) and source.columns[e.index].rowtime
            proctime = proctime or (isinstance(e, ColumnRef) and
                                    source.columns[e.index].proctime)
        cols.append(ScopeColumn(alias, f.name, f.type, rowtime, proctime))
    return Scope(tuple(cols))


def requalify(scope: Scope, alias: str) -> Scope:
    return Scope(tuple(replace(c, qualifier=alias) for c in scope.columns))


def unique_names(names: list[str]) -> list[str]:
    """``names`` made unique as Calcite's validator makes them (Flink's column names): a name
    taken already gets the first of 0, 1, 2, ... that makes it new (a, a0, a1; they were a,
    a1, a2, so a view's ``a0`` was not found)."""
    used: set[str] = set()
    out = []
    for n in names:
        name, attempt = n, 0
        while name.lower() in used:
            name, attempt = f"{n}{attempt}", attempt + 1
        used.add(name.lower())
        out.append(name)
    return out


def _outside_subqueries(node: exp.Expression) -> list[exp.Expression]:
    """The nodes of ``node`` that are not inside a subquery or an OVER window."""
    boundary = (exp.Window, exp.Subquery, exp.Select, exp.Exists)
    return [n for n in node.walk(prune=lambda n: isinstance(n, boundary))
            if not isinstance(n, boundary)]


def has_aggregate(node: exp.Expression) -> bool:
    # Aggregates inside OVER (...) are window aggregates, not GROUP BY ones; aggregates of a
    # subquery belong to the subquery.
    return any(isinstance(n, exp.AggFunc) for n in _outside_subqueries(node))


def no_aggregates(binder: Binder, node: exp.Expression, where: str) -> None:
    for n in _outside_subqueries(node):
        if isinstance(n, exp.AggFunc):
            raise binder.error(BindError, f"aggregate functions are not allowed in {where}", n)


def require_boolean(binder: Binder, e: Expr, node: exp.Expression, where: str) -> None:
    if e.dtype not in (T.BOOLEAN, T.NULL):
        raise binder.error(BindError, f"{where} condition must be BOOLEAN, got "
                           f"{T.type_name(e.dtype)}", node)


def hidden_name(names: list[str], idx: int) -> str:
    return names[idx] if idx < len(names) else f"$h{idx}"


def unread_clause(node: exp.Expression, read: frozenset[str],
                  words: dict[str, str] | None = None) -> tuple[str, exp.Expression] | None:
    """The first clause of ``node`` that binding does not read (a sqlglot argument outside
    ``read`` that is set), as (its words for a message, the node to point at); None when
    there is none. Other engines' SQL that the parser knows is refused by name this way."""
    for arg, value in node.args.items():
        if arg in read or value in (None, [], False):
            continue
        where = value[0] if isinstance(value, list) else value
        text = (words or {}).get(arg, arg.rstrip("_").upper().replace("_", " "))
        return text, where if isinstance(where, exp.Expression) else node
    return None
