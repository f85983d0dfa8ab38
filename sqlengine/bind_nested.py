"""Bind the syntax of ARRAY / MAP / ROW values: ``r.f`` (a ROW's field, also ``t.r.f`` and
``r.f.g``), ``a[i]`` / ``m[k]`` and the ``MAP[k, v, ...]`` constructor (the functions behind
them: ``sqlengine.functions_nested``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.errors import BindError
from sqlengine.plan.expressions import Call, Cast, ColumnRef, Expr, Literal
from sqlengine.variant import is_variant

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder, Scope


def field_path(binder: ExprBinder, node: exp.Column, scope: Scope) -> Expr | None:
    """``r.f`` / ``t.r.f`` / ``r.f.g``: fields of a ROW column (None when the dotted
    name is a plain, possibly qualified, column)."""
    parts = [p.name for p in node.parts]
    if len(parts) < 2:
        return None
    qualifiers = scope.qualifiers()
    # (an enclosing query's table alias: ``d.k`` in a subquery is its column k, before a
    # column d of the subquery's own tables, as Flink (Calcite) resolves it)
    outer = {q for o in binder.outer for q in (o.grouped or o.scope).qualifiers()} | \
        {q for o in binder.outer for q in o.scope.qualifiers()}
    starts = []
    if len(parts) >= 3 and parts[0].lower() in qualifiers:
        starts.append((parts[0], parts[1], parts[2:]))
    if parts[0].lower() not in qualifiers and (len(parts) >= 3 or
                                               parts[0].lower() not in outer):
        starts.append((None, parts[0], parts[1:]))
    for qualifier, column, fields in starts:
        try:
            idx = scope.resolve(column, qualifier)
        except BindError:
            continue
        if idx is None:
            continue
        col = scope.columns[idx]
        value: Expr = ColumnRef(idx, col.name, col.type)
        for f in fields:
            value = field_of(binder, value, f, node)
        return value
    return None


def field_of(binder: ExprBinder, value: Expr, name: str, node: exp.Expression) -> Expr:
    t = value.dtype
    if not pa.types.is_struct(t):
        raise binder.error(BindError, f"{T.type_name(t)} has no field {name!r} (only a ROW "
                         "has fields)", node)
    names = [f.name for f in t]
    pos = names.index(name) if name in names else None
    if pos is None:
        folded = [i for i, n in enumerate(names) if n.lower() == name.lower()]
        if len(folded) != 1:
            raise binder.error(BindError, f"{T.type_name(t)} has no field {name!r}", node)
        pos = folded[0]
    return Call("field", (value, Literal(pos, T.INT)), t.field(pos).type)


def bracket(binder: ExprBinder, node: exp.Bracket, scope: Scope) -> Expr:
    """``MAP[k, v, ...]`` (the map constructor), else ``a[i]`` / ``m[k]``."""
    this = node.this
    if isinstance(this, exp.Column) and not this.table and this.name.upper() == "MAP" \
            and scope.resolve(this.name, None) is None:
        return binder.call("map_value", list(node.expressions), scope, node)
    if len(node.expressions) != 1:
        raise binder.error(BindError, "an ARRAY or MAP is indexed by one value", node)
    call = binder.call("element_at", [this, node.expressions[0]], scope, node)
    if isinstance(call, Call) and is_variant(call.args[0].dtype):
        return dataclasses.replace(call, name="variant_get")
    if isinstance(call, Call) and (pa.types.is_list(call.args[0].dtype) or
                                   pa.types.is_large_list(call.args[0].dtype)):
        index = call.args[1]
        while isinstance(index, Cast):
            index = index.arg
        # (Flink refuses a constant index below 1 when it validates the query; an index
        # computed per row that is out of range gives NULL)
        if isinstance(index, Literal) and isinstance(index.value, int) and \
                not isinstance(index.value, bool) and index.value < 1:
            raise binder.error(BindError, "Array element access needs an index starting at 1 "
                               f"but was {index.value}", node.expressions[0])
    return call
