"""Bind the SQL/JSON functions (kernels in ``runtime.kernels_json``): JSON_VALUE, JSON_QUERY,
JSON_EXISTS and JSON_ARRAY with their clauses (``dialect.JsonCall``), JSON_OBJECT, IS JSON,
JSON_STRING, and JSON(s) as a value of JSON_ARRAY / JSON_OBJECT."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_scalar import coerce, data_type
from sqlengine.dialect import JsonCall
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.functions_json import not_json_convertible
from sqlengine.plan.expressions import Call, Expr, Literal
from sqlengine.variant import is_variant

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder, Scope

# The functions whose value is JSON text already (inserted as is into JSON_OBJECT/ARRAY):
# Flink's JSON construction functions and JSON(s). JSON_QUERY's is a STRING, quoted as one
# (PyFlink 2.3: JSON_ARRAY(JSON_QUERY(j, '$.b')) is '["[1,2]"]').
_JSON_VALUED = ("json_object", "json_array", "json", "variant_text")

_RETURNING = (T.STRING, T.BOOLEAN, T.TINYINT, T.SMALLINT, T.INT, T.BIGINT, T.FLOAT, T.DOUBLE,
              T.DATE, T.TIMESTAMP)


def _text(binder: ExprBinder, e: Expr, node: exp.Expression, what: str) -> Expr:
    if is_variant(e.dtype):  # (a VARIANT's JSON text, as Flink reads one)
        return Call("variant_text", (e,), T.STRING)
    if not (T.is_string(e.dtype) or e.dtype == T.NULL):
        raise binder.error(BindError, f"{what} must be a STRING, got {T.type_name(e.dtype)}",
                           node)
    return coerce(e, T.STRING)


def _path(binder: ExprBinder, e: Expr, node: exp.Expression, name: str) -> Expr:
    """The path: a constant is checked now; another STRING is read per row."""
    if not isinstance(e, Literal):
        return _text(binder, e, node, f"the path of {name}")
    if e.value is not None:
        from sqlengine.errors import ExecutionError
        from sqlengine.json_path import parse_path

        try:
            parse_path(str(e.value))
        except ExecutionError as err:
            raise binder.error(BindError, err.message, node) from None
    return coerce(e, T.STRING)


def _behaviour(binder: ExprBinder, node: JsonCall, key: str, allowed: tuple[str, ...],
               default: str, name: str) -> tuple[str, exp.Expression | None]:
    """(kind, the DEFAULT expression) of the ON EMPTY / ON ERROR clause ``key``."""
    b = node.args.get(key)
    if b is None:
        return default, None
    if isinstance(b, exp.Var):
        kind = b.name.upper()
        if kind not in allowed:
            raise binder.error(BindError, f"{kind} ON {key[3:].upper()} is not allowed in "
                               f"{name}", node)
        return kind, None
    if "DEFAULT" not in allowed:
        raise binder.error(BindError, f"DEFAULT ... ON {key[3:].upper()} is not allowed in "
                           f"{name}", node)
    return "DEFAULT", b


def bind_json_call(binder: ExprBinder, node: JsonCall, scope: Scope) -> Expr:
    name = str(node.this).upper()
    args_nodes = list(node.expressions)
    if name == "JSON_ARRAY":
        return _json_array(binder, node, args_nodes, scope)
    if len(args_nodes) != 2:
        raise binder.error(BindError, f"{name} takes a JSON string and a path, got "
                           f"{len(args_nodes)} arguments", node)
    doc = _text(binder, binder.bind(args_nodes[0], scope), args_nodes[0],
                f"the JSON argument of {name}")
    path = _path(binder, binder.bind(args_nodes[1], scope), args_nodes[1], name)
    returning = node.args.get("returning")
    out = data_type(returning, binder, node) if returning is not None else T.STRING
    if name == "JSON_EXISTS":
        if returning is not None or node.args.get("wrapper") or node.args.get("on_empty"):
            raise binder.error(BindError, "JSON_EXISTS takes only an ON ERROR clause", node)
        kind, _ = _behaviour(binder, node, "on_error", ("TRUE", "FALSE", "UNKNOWN", "ERROR"),
                             "FALSE", name)
        return Call("json_exists", (doc, path, Literal(kind, T.STRING)), T.BOOLEAN)
    if name == "JSON_QUERY":
        strings = pa.list_(pa.field("element", T.STRING))
        if out != T.STRING and not (pa.types.is_list(out) and T.is_string(out.value_type)):
            raise binder.error(NotSupportedError, "JSON_QUERY RETURNING "
                               f"{T.type_name(out)} is not supported (STRING or "
                               "ARRAY<STRING> only)", node)
        wrapper = node.args.get("wrapper")
        kinds = ("NULL", "ERROR", "EMPTY ARRAY", "EMPTY OBJECT")
        empty, _ = _behaviour(binder, node, "on_empty", kinds, "NULL", name)
        error, _ = _behaviour(binder, node, "on_error", kinds, "NULL", name)
        if out != T.STRING and "EMPTY OBJECT" in (empty, error):
            raise binder.error(BindError, "EMPTY OBJECT is no value of JSON_QUERY RETURNING "
                               "ARRAY<STRING>", node)
        # (RETURNING ARRAY<STRING>: the selected array's elements, each a string's text or
        # the JSON text of another value)
        return Call("json_query", (doc, path, Literal(wrapper.name if wrapper else "WITHOUT",
                                                      T.STRING),
                                   Literal(empty, T.STRING), Literal(error, T.STRING)),
                    T.STRING if out == T.STRING else strings)
    # JSON_VALUE
    if node.args.get("wrapper"):
        raise binder.error(BindError, "JSON_VALUE takes no WRAPPER clause", node)
    if out not in _RETURNING and not pa.types.is_decimal(out):
        raise binder.error(NotSupportedError, f"JSON_VALUE RETURNING {T.type_name(out)} is "
                           "not supported", node)
    parts: list[Expr] = [doc, path]
    for key in ("on_empty", "on_error"):
        kind, default = _behaviour(binder, node, key, ("NULL", "ERROR", "DEFAULT"), "NULL",
                                   name)
        bound = binder.bind(default, scope) if default is not None else None
        value = coerce(bound, out) if bound is not None else Literal(None, out)
        if bound is not None and bound.dtype == T.BOOLEAN and out == T.STRING:
            # (Flink writes a boolean default as JSON does: 'true' / 'false')
            value = Call("lower", (value,), T.STRING)
        if default is not None and not (T.can_implicitly_cast(value.dtype, out) or
                                        value.dtype == out):
            raise binder.error(BindError, f"the DEFAULT of JSON_VALUE must be a "
                               f"{T.type_name(out)}", default)
        parts += [Literal(kind, T.STRING), value]
    return Call("json_value", tuple(parts), out)


def _convertible(binder: ExprBinder, value: Expr, node: exp.Expression, name: str) -> None:
    """Refuse a value Flink cannot write as JSON (a DATE, TIME or interval, also inside an
    array, map or row)."""
    bad = not_json_convertible(value.dtype)
    if bad is not None:
        raise binder.error(BindError, f"{name} cannot convert a {T.type_name(bad)} to JSON "
                           "(strings, binary strings, numbers, booleans, timestamps, arrays, "
                           "maps and rows)", node)


def is_json_valued(value: Expr) -> bool:
    """Whether the value is JSON text already (written as it is inside JSON, not quoted)."""
    return isinstance(value, Call) and value.name in _JSON_VALUED


def _bind_value(binder: ExprBinder, node: exp.Expression, scope: Scope) -> Expr:
    """A value of JSON_ARRAY or JSON_OBJECT; ``JSON(s)`` (allowed only there, as in Flink):
    the document of the STRING s, inserted as JSON rather than as a string."""
    if not (isinstance(node, exp.Anonymous) and str(node.this).upper() == "JSON"):
        value = binder.bind(node, scope)
        if is_variant(value.dtype):  # (inserted as JSON, as Flink inserts a VARIANT)
            return Call("variant_text", (value,), T.STRING)
        return value
    if len(node.expressions) != 1:
        raise binder.error(BindError, f"JSON takes 1 argument, got {len(node.expressions)}",
                           node)
    text = _text(binder, binder.bind(node.expressions[0], scope), node.expressions[0],
                 "the argument of JSON()")
    return Call("json", (text,), T.STRING)


def _raw_flags(values: list[Expr]) -> str:
    return "".join("1" if is_json_valued(v) else "0" for v in values)


def _json_array(binder: ExprBinder, node: JsonCall, nodes: list[exp.Expression],
                scope: Scope) -> Expr:
    for key in ("returning", "wrapper", "on_empty", "on_error"):
        if node.args.get(key) is not None:
            raise binder.error(BindError, "JSON_ARRAY takes only NULL / ABSENT ON NULL", node)
    values = [_bind_value(binder, n, scope) for n in nodes]
    for v, n in zip(values, nodes):
        _convertible(binder, v, n, "JSON_ARRAY")
    on_null = node.args.get("on_null")
    flags = _raw_flags(values)
    return Call("json_array", (Literal(on_null.name if on_null else "ABSENT", T.STRING),
                               Literal(flags or "-", T.STRING), *values), T.STRING)


def bind_json_object(binder: ExprBinder, node: exp.JSONObject, scope: Scope) -> Expr:
    """JSON_OBJECT([KEY] k VALUE v, ... [NULL | ABSENT ON NULL]); NULL ON NULL by default."""
    for key in ("unique_keys", "return_type", "encoding"):
        if node.args.get(key):
            raise binder.error(NotSupportedError, f"JSON_OBJECT {key.replace('_', ' ')} is "
                               "not supported", node)
    handling = (node.args.get("null_handling") or "NULL ON NULL").upper()
    parts: list[Expr] = []
    values: list[Expr] = []
    for kv in node.expressions:
        if not isinstance(kv, exp.JSONKeyValue):
            raise binder.error(BindError, "JSON_OBJECT takes KEY k VALUE v pairs", kv)
        k = _text(binder, binder.bind(kv.this, scope), kv.this, "a JSON_OBJECT key")
        v = _bind_value(binder, kv.expression, scope)
        _convertible(binder, v, kv.expression, "JSON_OBJECT")
        parts += [k, v]
        values.append(v)
    return Call("json_object", (Literal("ABSENT" if handling.startswith("ABSENT") else "NULL",
                                        T.STRING),
                                Literal(_raw_flags(values) or "-", T.STRING), *parts),
                T.STRING)


def bind_is_json(binder: ExprBinder, arg: Expr, kind_node: exp.Expression,
                 node: exp.Expression) -> Expr:
    """``s IS JSON [VALUE | SCALAR | ARRAY | OBJECT]``."""
    kind = kind_node.this.name.upper() if isinstance(kind_node.this, exp.Expression) else \
        (str(kind_node.this).upper() if kind_node.this else "VALUE")
    if kind in ("FALSE", ""):
        kind = "VALUE"
    if kind not in ("VALUE", "SCALAR", "ARRAY", "OBJECT"):
        raise binder.error(BindError, f"IS JSON {kind} is not a JSON type", node)
    if kind_node.args.get("unique"):
        raise binder.error(NotSupportedError, "IS JSON ... WITH UNIQUE KEYS is not supported",
                           node)
    doc = _text(binder, arg, node, "the argument of IS JSON")
    return Call("is_json", (doc, Literal(kind, T.STRING)), T.BOOLEAN)
