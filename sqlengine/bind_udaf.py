"""Bind calls of Python aggregate functions (sqlengine.functions_python.udaf).

sqlglot reads ``f(x)`` of an unknown ``f`` as an anonymous function; before a query is bound,
calls of the session's Python aggregates become :class:`PythonAgg` nodes, which are
aggregates to sqlglot (``exp.AggFunc``), so GROUP BY, HAVING, OVER and the checks that keep
aggregates out of WHERE see them as the built-in ones. Bound, a call is an ``AggCall`` whose
``func`` is the function's registry key (``py:name:n``), with every argument, DISTINCT,
FILTER (WHERE ...) and the call's place in the SQL text (for errors in the user's code).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import types as T
from sqlengine.errors import BindError
from sqlengine.functions_python import builtin_key, display_name, is_aggregate, registered
from sqlengine.plan.expressions import AggCall, Expr

if TYPE_CHECKING:
    from sqlengine.bind_aggregate import AggregateBinder
    from sqlengine.bind_expr import Scope


class PythonAgg(exp.Expression, exp.AggFunc):
    """A call of a Python aggregate function: ``this`` its registry key, ``expressions`` its
    arguments (one ``exp.Distinct`` holding them for ``f(DISTINCT ...)``)."""

    arg_types = {"this": True, "expressions": False, "name": False}
    is_var_len_args = True

    @property
    def name(self) -> str:  # (as the user wrote it)
        return str(self.args.get("name") or display_name(str(self.this)))

    def sql_name(self) -> str:
        return self.name.upper()


def _calls_as_written(tree: exp.Expression, udfs: Mapping[str, str], sql: str) -> None:
    """A call of a session function whose name sqlglot reads as a function of its own (FIRST,
    LAST, MODE, AGG) as the anonymous call it is, by its name in the SQL text. (Such a call
    was bound as sqlglot's function and refused as not supported.)"""
    for node in list(tree.find_all(exp.Func)):
        if isinstance(node, exp.Anonymous | PythonAgg):
            continue
        start, end = node.meta.get("start"), node.meta.get("end")
        if not isinstance(start, int) or not isinstance(end, int):
            continue
        name = sql[start:end + 1].strip("`")
        if name.lower() not in udfs or not sql[end + 1:].lstrip().startswith("("):
            continue
        args: list[exp.Expression] = []
        for key in node.arg_types:
            value = node.args.get(key)
            args.extend(value if isinstance(value, list) else [] if value is None else [value])
        call = exp.Anonymous(this=name, expressions=args)
        call.meta.update(node.meta)
        node.replace(call)


def mark_python_aggregates(tree: exp.Expression, udfs: Mapping[str, str],
                           sql: str | None = None) -> None:
    """Turn the calls of Python aggregate functions in ``tree`` into PythonAgg nodes (in
    place; the nodes keep their positions in the SQL text); ``sql``: the text the nodes'
    positions are in, to find the session's functions sqlglot reads as its own."""
    if sql is not None and udfs:
        _calls_as_written(tree, udfs, sql)
    for node in list(tree.find_all(exp.Anonymous, exp.BitmapOrAgg)):
        if isinstance(node, exp.BitmapOrAgg):  # (sqlglot knows BITMAP_OR_AGG by name)
            name, args = "BITMAP_OR_AGG", [node.this]
        else:
            name, args = str(node.this), list(node.expressions)
        key = udfs.get(name.lower()) or builtin_key(name)
        if key is None or not is_aggregate(key):
            continue
        call = PythonAgg(this=key, expressions=args, name=name)
        call.meta.update(node.meta)
        node.replace(call)


def udaf_call(b: AggregateBinder, node: PythonAgg, scope: Scope, filt: Expr | None
              ) -> AggCall:
    """The AggCall of a Python aggregate: its arguments as they are (NULL-typed ones as
    STRING), its declared result type."""
    from sqlengine.bind_common import no_aggregates
    from sqlengine.bind_expr import coerce

    key = str(node.this)
    function = registered(key)
    if function is None:
        raise b.error(BindError, f"the Python function {node.sql_name()} is gone", node)
    nodes = list(node.expressions)
    distinct = len(nodes) == 1 and isinstance(nodes[0], exp.Distinct)
    if distinct:
        nodes = list(nodes[0].expressions)
    if getattr(function.fn, "argument_refusal", None) is not None and len(nodes) != 1:
        raise b.error(BindError, f"{node.sql_name()} takes 1 argument, got {len(nodes)}", node)
    args: list[Expr] = []
    for n in nodes:
        no_aggregates(b.binder, n, "an aggregate argument")
        bound = b.bind_plain(n, scope)
        check = getattr(function.fn, "argument_refusal", None)  # (a built-in's own check)
        if check is not None:
            if bound.dtype == T.NULL:
                bound = coerce(bound, function.fn.null_type())
            why = check(bound.dtype)
            if why is not None:
                raise b.error(BindError, why, n)
        if bound.dtype == T.NULL:
            bound = coerce(bound, T.STRING)
        if not T.is_supported(bound.dtype):
            raise b.error(BindError, f"{node.sql_name()}: an argument of type "
                          f"{T.type_name(bound.dtype)} cannot be passed to Python", n)
        args.append(bound)
    span = b.binder.error(BindError, "", node).span
    where = f"{span.line}:{span.column}" if span is not None else None
    result = function.fn.result_for(args[0].dtype) if hasattr(function.fn, "result_for") \
        else function.result_type  # (COLLECT: the MULTISET of its argument's type)
    return AggCall(key, tuple(args), result, distinct, filt, where)
