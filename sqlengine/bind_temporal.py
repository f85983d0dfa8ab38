"""``JOIN versioned FOR SYSTEM_TIME AS OF left.time``: Flink's temporal joins, bound with Flink's
rules and refusals.

Event time (the left time is a rowtime attribute): the right side must be a table with a
PRIMARY KEY and a WATERMARK (a versioned table), or a versioned view (each key's last row by
event time, plan/versioned_view.py), the ON condition must equate every primary-key
column with the left side, and the join is INNER or LEFT. Processing time (PROCTIME()): a lookup
join, on a table whose connector looks rows up (jdbc); the ON condition must equate at least
one of its columns with the left side (the lookup keys).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine.bind_common import Relation, require_boolean
from sqlengine.bind_expr import Scope
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import (
    Cast,
    ColumnRef,
    Expr,
    conjunction,
)
from sqlengine.plan.join_keys import split_condition
from sqlengine.plan.nodes import TemporalJoin
from sqlengine.plan.subquery import has_subquery
from sqlengine.plan.versioned_view import versioned_view

if TYPE_CHECKING:
    from sqlengine.bind_relations import RelationBinder


def temporal_join(binder: RelationBinder, left: Relation, join: exp.Join,
                  ctes: dict[str, Relation]) -> Relation:
    table = join.this
    version = table.args["version"]
    side = (join.args.get("side") or "").upper()
    if str(version.this).upper() not in ("TIMESTAMP", "SYSTEM_TIME") or \
            str(version.args.get("kind") or "").upper() != "AS OF":
        raise binder.error(NotSupportedError, f"unsupported time travel {version.sql()!r}; "
                           "only FOR SYSTEM_TIME AS OF a time attribute of the left table",
                           version)
    if side not in ("", "LEFT") or (join.args.get("kind") or "").upper() not in ("", "INNER"):
        raise binder.error(NotSupportedError, "a temporal join is INNER or LEFT, not "
                           f"{(side or join.args.get('kind') or '').upper()}", join)
    at = binder.exprs.bind(version.expression, left.scope)
    if not isinstance(at, ColumnRef):
        raise binder.error(BindError, "FOR SYSTEM_TIME AS OF needs a time attribute column of "
                           "the left table", version.expression)
    at_col = left.scope.columns[at.index]
    bare = table.copy()
    bare.set("version", None)
    right = binder.from_item(bare, ctes)
    name = table.name
    if at_col.proctime:
        return lookup_join(binder, left, right, join, "left" if side == "LEFT" else "inner")
    if not at_col.rowtime:
        raise binder.error(BindError, f"FOR SYSTEM_TIME AS OF {version.expression.sql()}: "
                           "the column is not a time attribute (declare a WATERMARK on it, "
                           "or use PROCTIME())", version.expression)
    catalog = binder.binder.catalog
    tdef = None if name.lower() in ctes or catalog.view(name) is not None else \
        catalog.table(name)
    right_plan = right.plan
    monotonic = False
    if tdef is not None and tdef.primary_key:
        primary_key = list(tdef.primary_key)
    else:
        view = versioned_view(right.plan)
        if view is None:
            raise binder.error(BindError, f"the versioned table {name!r} of a temporal join "
                               "needs a PRIMARY KEY: a table with one, or a versioned view "
                               "(each key's last row by event time: ROW_NUMBER() OVER "
                               "(PARTITION BY key ORDER BY rowtime DESC) = 1)", table)
        right_plan = view.plan
        monotonic = True
        primary_key = [right.scope.columns[i].name for i in view.keys]
    right_time = [i for i, c in enumerate(right.scope.columns) if c.rowtime]
    if not right_time:
        raise binder.error(BindError, f"the versioned table {name!r} of an event-time "
                           "temporal join needs an event-time attribute (a WATERMARK)", table)
    on_node = join.args.get("on")
    if on_node is None:
        raise binder.error(BindError, "a temporal join needs an ON condition on the versioned "
                           "table's primary key", join)
    lkeys, rkeys, residual = _split_on(binder, left, right, on_node, "a temporal join")
    keyed = {i for i in map(_column, rkeys) if i is not None}
    names = [c.name.lower() for c in right.scope.columns]
    missing = [pk for pk in primary_key if pk.lower() not in {names[i] for i in keyed}]
    if missing:
        raise binder.error(BindError, f"the temporal join's ON condition must equate the "
                           f"versioned table's primary key {primary_key} with the "
                           f"left side (missing {missing})", on_node)
    plan = TemporalJoin(left.plan, right_plan, "left" if side == "LEFT" else "inner",
                        tuple(lkeys), tuple(rkeys), conjunction(residual), at.index,
                        right_time[0], monotonic)
    cols = (*left.scope.columns, *(replace(c, rowtime=False) for c in right.scope.columns))
    return Relation(plan, Scope(tuple(cols)))


def _split_on(binder: RelationBinder, left: Relation, right: Relation,
              on_node: exp.Expression, what: str) -> tuple[list[Expr], list[Expr], list[Expr]]:
    """The ON condition over (left ++ right) bound and split into left keys, right keys
    (over the right side) and the rest."""
    on = binder.exprs.bind(on_node, Scope(left.scope.columns + right.scope.columns))
    require_boolean(binder.binder, on, on_node, "ON")
    if has_subquery(on):
        raise binder.error(NotSupportedError, f"subqueries in {what}'s ON condition are not "
                           "supported", on_node)
    try:
        return split_condition([on], len(left.scope.columns))
    except BindError as e:
        raise binder.error(BindError, e.message, on_node) from None


def _column(e: Expr) -> int | None:
    """The column a join key reads, through an implicit CAST."""
    if isinstance(e, ColumnRef):
        return e.index
    if isinstance(e, Cast) and isinstance(e.arg, ColumnRef):
        return e.arg.index
    return None


def lookup_join(binder: RelationBinder, left: Relation, right: Relation, join: exp.Join,
                kind: str) -> Relation:
    """``JOIN dim FOR SYSTEM_TIME AS OF left.proctime`` on a lookup table (Flink's rules: an
    equality on the table's columns is the lookup key; other conditions filter the pairs)."""
    from sqlengine import connectors
    from sqlengine.plan.lookup import LookupJoin
    from sqlengine.plan.nodes import Scan

    table = join.this
    name = table.name
    scan = right.plan
    if not isinstance(scan, Scan) or scan.projection is not None:
        raise binder.error(NotSupportedError, f"a processing-time temporal join needs a lookup "
                           f"table, and {name!r} is not a plain table (a view, a subquery or "
                           "computed columns)", table)
    connector = connectors.find(scan.source.connector)
    why = connector.lookup_refusal(dict(scan.source.options)) if connector is not None \
        else "unknown connector"
    if why is not None:
        raise binder.error(NotSupportedError, f"a processing-time temporal join needs a lookup "
                           f"table, and table {name!r} is not one: {why}", table)
    on_node = join.args.get("on")
    if on_node is None:
        raise binder.error(BindError, "a lookup join needs an ON condition equating a column "
                           f"of {name!r} with the left side", join)
    n_left = len(left.scope.columns)
    lkeys, rkeys, residual = _split_on(binder, left, right, on_node, "a lookup join")
    keys: list[Expr] = []
    columns: list[int] = []
    for lk, rk in zip(lkeys, rkeys):
        col = _column(rk)
        if col is None:
            residual.append(_equality(lk, rk, n_left))
            continue
        want = scan.schema.fields[col].type
        keys.append(lk if lk.dtype == want else Cast(lk, want))
        columns.append(col)
    if not keys:
        raise binder.error(BindError, f"a lookup join's ON condition must equate a column of "
                           f"{name!r} with the left side (the lookup key)", on_node)
    lookups = binder.binder.lookup_blocks  # (a LOOKUP hint naming the table: its retries)
    retry = lookups[-1].retry_for(name) if lookups else None
    plan = LookupJoin(left.plan, scan.source, scan.table_schema, kind, tuple(keys),
                      tuple(columns), conjunction(residual), retry)
    cols = (*left.scope.columns, *(replace(c, rowtime=False, proctime=False)
                                   for c in right.scope.columns))
    return Relation(plan, Scope(tuple(cols)))


def _equality(lk: Expr, rk: Expr, n_left: int) -> Expr:
    """``lk = rk`` over (left ++ right) again (a key pair the lookup cannot use)."""
    from sqlengine.plan.expressions import Call, remap_columns
    from sqlengine.types import BOOLEAN

    return Call("eq", (lk, remap_columns(rk, {i: i + n_left for i in rk.columns()})), BOOLEAN)
