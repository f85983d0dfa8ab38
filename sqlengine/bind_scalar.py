"""Bind function calls and Flink's scalar forms with their own syntax: BETWEEN [A]SYMMETRIC,
CAST to CHAR(n) / VARCHAR(n), TIMESTAMPADD / TIMESTAMPDIFF with their unit keyword."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import functions
from sqlengine import types as T
from sqlengine.bitmap import is_bitmap
from sqlengine.cast_rules import refusal
from sqlengine.errors import BindError, NotSupportedError, ParseError, Span
from sqlengine.functions_time import WALL_CLOCK
from sqlengine.parser import node_span, written_call_name
from sqlengine.plan.expressions import Call, Case, Cast, Expr, Literal
from sqlengine.variant import is_variant

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder, Scope

# TIMESTAMPADD / TIMESTAMPDIFF units (Calcite also spells them SQL_TSI_<unit>).
TIME_UNITS = ("SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR")


def coerce(e: Expr, target: pa.DataType) -> Expr:
    """``e`` as ``target``: unchanged, a retyped literal, or wrapped in a Cast."""
    if e.dtype == target or target == T.NULL:
        return e
    if isinstance(e, Literal) and e.value is None:
        return Literal(None, target)
    return make_cast(e, target)


def zoned(src: pa.DataType, target: pa.DataType) -> bool:
    """Whether a cast from ``src`` to ``target`` reads the session time zone (to or from a
    TIMESTAMP_LTZ, not both; or of an ARRAY, MAP or ROW holding one: its text was the UTC
    wall clock)."""
    return src != T.NULL and (T.is_ltz(src) != T.is_ltz(target) or (
        T.is_nested(src) and src != target and (T.contains_ltz(src) or T.contains_ltz(target))))


def make_cast(e: Expr, target: pa.DataType, safe: bool = False) -> Expr:
    """CAST(e AS target); a cast to or from TIMESTAMP_LTZ is a call that carries the session
    time zone ('table.local-time-zone' when it is bound) as a constant, so that the plan
    keeps it."""
    if zoned(e.dtype, target):
        from sqlengine.options import session_time_zone

        return Call("try_cast_ltz" if safe else "cast_ltz",
                    (e, Literal(session_time_zone(), T.STRING)), target)
    return Cast(e, target, safe)


def _local(e: Expr) -> Expr:
    """A TIMESTAMP_LTZ as the wall-clock TIMESTAMP of the session time zone."""
    return make_cast(e, pa.timestamp(e.dtype.unit))


def data_type(node: exp.DataType, binder: ExprBinder, at: exp.Expression) -> pa.DataType:
    """Map a sqlglot DataType to Arrow through the Flink type names."""
    text = node.sql()
    try:
        return T.parse_type(text)
    except BindError as e:
        raise BindError(e.message, span=_type_span(binder, text, at), sql=binder.script) \
            from None


def _type_span(binder: ExprBinder, text: str, at: exp.Expression) -> Span:
    """Where the type ``text`` stands in ``at`` (CAST(x AS t), RETURNING t): its first word
    after the last AS or RETURNING before it (the caret was on ``at``'s first token, x)."""
    span = node_span(at, binder.query, binder.script)
    word = re.match(r"\w+", text)
    found = word and re.compile(rf"\b(?:AS|RETURNING)\s+({re.escape(word.group())})\b",
                                re.I).search(binder.script, span.start)
    return Span.from_offset(binder.script, found.start(1), found.end(1)) if found else span


def signature(binder: ExprBinder, name: str, n: int,
              node: exp.Expression) -> functions.Signature:
    """The signature of scalar function ``name`` called with ``n`` arguments.

    Raises:
        BindError: an unknown function, an aggregate here, or the wrong number of arguments.
    """
    sig = functions.lookup(name)
    if sig is None:
        if name.lower() in functions.AGGREGATES:
            raise binder.error(BindError, f"aggregate function {name.upper()} is not allowed "
                               "here", node)
        if name.lower() in ("row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
                            "ntile", "lag", "lead"):
            raise binder.error(BindError, f"{name.upper()}() is a window function: it needs "
                               "OVER (...)", node)
        if name.lower() == "json":
            raise binder.error(BindError, "JSON() is only supported inside JSON_ARRAY() or as "
                               "the VALUE of JSON_OBJECT(), as in Flink: JSON_OBJECT('a' "
                               "VALUE JSON('{\"k\": 1}'))", node)
        written = written_call_name(node, binder.query, binder.script) or name.upper()
        raise binder.error(BindError, f"unknown function {written}", node)
    if n < sig.min_args or (sig.max_args is not None and n > sig.max_args):
        want = str(sig.min_args) if sig.max_args == sig.min_args else \
            f"{sig.min_args} to {sig.max_args if sig.max_args is not None else 'any'}"
        raise binder.error(BindError, f"{name.upper()} takes {want} arguments, got {n}", node)
    return sig


def apply(binder: ExprBinder, name: str, args: list[Expr], nodes: list[exp.Expression],
          node: exp.Expression) -> Expr:
    """The call of scalar function ``name`` on bound ``args`` (bound from ``nodes``): arity,
    constant-only arguments, Flink's result type and the implicit casts of the arguments."""
    sig = signature(binder, name, len(args), node)
    special = _time_arithmetic(sig.name, args)
    if special is not None:
        return special
    if args and T.is_ltz(args[0].dtype) and sig.name in _IN_SESSION_ZONE:
        # Flink reads a TIMESTAMP_LTZ's fields in the session time zone; FLOOR / CEIL give
        # the instant of the rounded wall-clock time.
        local = apply(binder, name, [_local(args[0]), *args[1:]], nodes, node)
        if sig.name not in ("floor_time", "ceil_time"):
            return local
        if isinstance(local, Call) and str(getattr(local.args[1], "value", "")) in _SUB_DAY:
            # (below a day, the boundary at the value's own offset: in the hour the clocks
            # pass twice, FLOOR TO HOUR stays in the value's reading of it, as Flink's)
            from sqlengine.options import session_time_zone

            return Call(sig.name, (args[0], local.args[1], Literal(session_time_zone(),
                                                                    T.STRING)), args[0].dtype)
        return make_cast(local, args[0].dtype)
    for pos in sig.literal_args:
        if pos < len(args) and not isinstance(args[pos], Literal):
            raise binder.error(NotSupportedError, f"argument {pos + 1} of {name.upper()} "
                               "must be a constant", nodes[pos])
    values = [a.value if isinstance(a, Literal) else None for a in args]
    try:
        result, want = sig.resolve([a.dtype for a in args], values)
    except BindError as e:
        raise binder.error(BindError, e.message, node) from None
    bound = tuple(coerce(a, t) for a, t in zip(args, want))
    if sig.name == "json_string" and is_variant(bound[0].dtype):  # (its JSON text)
        return Call("variant_text", bound, T.STRING)
    if sig.name in ("unix_timestamp", "from_unixtime") and bound:  # (+ the session zone)
        from sqlengine.options import session_time_zone

        bound = (*bound, Literal(session_time_zone(), T.STRING))
    if sig.name in WALL_CLOCK or sig.name == "proctime":
        # (the session zone's wall clock; UTC's without an argument)
        from sqlengine.cast import arrow_zone
        from sqlengine.options import session_time_zone

        if arrow_zone(session_time_zone()) != "UTC":
            bound = (Literal(session_time_zone(), T.STRING),)
    return Call(sig.name, bound, result)


_SUB_DAY = frozenset({"HOUR", "MINUTE", "SECOND", "MILLISECOND"})

# Functions of a TIMESTAMP that read a TIMESTAMP_LTZ in the session time zone (EXTRACT(EPOCH)
# and the arithmetic take the instant).
_IN_SESSION_ZONE = frozenset({
    "date_format", "floor_time", "ceil_time",
    *(f"extract_{u}" for u in ("year", "quarter", "month", "week", "day", "doy", "dow",
                               "hour", "minute", "second", "millisecond", "microsecond",
                               "nanosecond", "century", "millennium", "decade", "isodow",
                               "isoyear", "epoch")),
})


def _time_arithmetic(name: str, args: list[Expr]) -> Expr | None:
    """TIME +/- a day-time interval (wrapping around midnight, as Flink) or a year-month
    one (the time unchanged), and an interval times an integer: calls of their own kernels;
    None for any other arithmetic."""
    if len(args) != 2:
        return None
    a, b = args
    if name in ("add", "subtract") and T.is_time(a.dtype) and b.dtype == T.INTERVAL_DAY_TIME:
        return Call(f"time_{name}", (a, b), a.dtype)
    if name == "add" and a.dtype == T.INTERVAL_DAY_TIME and T.is_time(b.dtype):
        return Call("time_add", (b, a), b.dtype)
    # (TIME +/- months: the same time of day, as Flink; NULL with a NULL interval)
    if name in ("add", "subtract") and T.is_time(a.dtype) and b.dtype == T.INTERVAL_YEAR_MONTH:
        return Call("time_months", (a, b), a.dtype)
    if name == "add" and a.dtype == T.INTERVAL_YEAR_MONTH and T.is_time(b.dtype):
        return Call("time_months", (b, a), b.dtype)
    if name == "multiply":
        for x, y in ((a, b), (b, a)):
            if T.is_interval(x.dtype) and T.is_integer(y.dtype):
                return Call("interval_times", (x, coerce(y, T.BIGINT)), x.dtype)
    return None


def between(binder: ExprBinder, node: exp.Between, scope: Scope) -> Expr:
    """``x BETWEEN [ASYMMETRIC] a AND b`` is ``x >= a AND x <= b``; SYMMETRIC also accepts
    the bounds the other way round: ``(x >= a AND x <= b) OR (x >= b AND x <= a)``."""
    x, lo, hi = (binder.bind(n, scope) for n in (node.this, node.args["low"],
                                                   node.args["high"]))
    nodes = [node.this, node.args["low"]]

    def within(a: Expr, b: Expr) -> Expr:
        ge = apply(binder, "ge", [x, a], nodes, node)
        le = apply(binder, "le", [x, b], nodes, node)
        return Call("and", (ge, le), T.BOOLEAN)

    if node.args.get("symmetric"):
        return Call("or", (within(lo, hi), within(hi, lo)), T.BOOLEAN)
    return within(lo, hi)


def cast(binder: ExprBinder, node: exp.Cast, scope: Scope) -> Expr:
    """CAST / TRY_CAST. To CHAR(n) Flink pads with spaces or cuts to n characters (CHAR alone
    is CHAR(1)); to VARCHAR(n) it cuts to n characters."""
    if node.meta.get("hex"):  # X'616263': a BINARY literal
        text = str(node.this.name)
        if len(text) % 2 or not all(c in "0123456789abcdefABCDEF" for c in text):
            raise binder.error(BindError, f"malformed binary literal X'{text}'", node)
        return Literal(bytes.fromhex(text), pa.binary())
    for clause, words in (("format", "FORMAT"), ("default", "DEFAULT ... ON CONVERSION ERROR"),
                          ("action", "with an action clause")):
        if node.args.get(clause) is not None:  # (other engines' CAST options: not ignored)
            raise binder.error(NotSupportedError, f"CAST ... {words} is not supported", node)
    arg = binder.bind(node.this, scope)
    to = node.to
    target = data_type(to, binder, node)
    safe = isinstance(node, exp.TryCast)
    timed = [t for t in (arg.dtype, target) if T.is_temporal(t) or T.is_time(t)]
    if len(timed) == 1 and any(T.is_numeric(t) for t in (arg.dtype, target)):
        # (as Flink 2.3's validator: the number would be of no one unit; it was ms of a
        # TIMESTAMP(3) but ns of a TIMESTAMP(9), s of a TIMESTAMP_LTZ, days of a DATE)
        raise binder.error(BindError, f"cannot CAST {T.type_name(arg.dtype)} to "
                           f"{T.type_name(target)}, as Flink cannot; use UNIX_TIMESTAMP, "
                           "TO_TIMESTAMP_LTZ(n, precision), TIMESTAMPDIFF or EXTRACT", node)
    if (T.contains_bitmap(arg.dtype) or T.contains_bitmap(target)) and not (
            (is_bitmap(arg.dtype) and (T.is_string(target) or is_bitmap(target))) or
            (arg.dtype == T.NULL and is_bitmap(target))):
        raise binder.error(BindError, f"cannot CAST {T.type_name(arg.dtype)} to "
                           f"{T.type_name(target)}: a BITMAP casts only to a character "
                           "string, and nothing but NULL casts to a BITMAP (as in Flink)", node)
    if (T.contains_variant(arg.dtype) or T.contains_variant(target)) and not (
            arg.dtype == target or (arg.dtype == T.NULL and is_variant(target))):
        raise binder.error(BindError, f"cannot CAST {T.type_name(arg.dtype)} to "
                           f"{T.type_name(target)}: nothing casts to or from a VARIANT but "
                           "NULL (as in Flink 2.3); read a value with v['key'] / v[i], "
                           "JSON_VALUE(v, path RETURNING type) or JSON_STRING(v)", node)
    if (T.is_multiset(arg.dtype) or T.is_multiset(target)) and not (
            arg.dtype == target or (T.is_multiset(arg.dtype) and T.is_string(target)) or
            (arg.dtype == T.NULL and T.is_multiset(target))):
        if T.is_multiset(arg.dtype) and T.is_multiset(target):
            raise binder.error(NotSupportedError, f"cannot CAST {T.type_name(arg.dtype)} to "
                               f"{T.type_name(target)}: a cast between MULTISETs of different "
                               "elements is not supported yet", node)
        raise binder.error(BindError, f"cannot CAST {T.type_name(arg.dtype)} to "
                           f"{T.type_name(target)}: a MULTISET casts only to a character "
                           "string (as in Flink 2.3); UNNEST it for its elements", node)
    why = refusal(arg.dtype, target)
    if why:  # (the caret on the type)
        raise BindError(f"cannot CAST {T.type_name(arg.dtype)} to {T.type_name(target)}: "
                        f"{why}", span=_type_span(binder, to.sql(), node.this), sql=binder.script)
    out = arg if arg.dtype == target and not safe else make_cast(arg, target, safe)
    if not safe and isinstance(arg, Literal) and isinstance(arg.value, str) and \
            (T.is_temporal(target) or T.is_time(target)):
        _check_temporal_text(binder, arg.value, target, node)
    kind = to.this if isinstance(to, exp.DataType) else None
    digits = _between_units(target, to)
    if digits is not None:  # TIMESTAMP(5) is held in microseconds: cut the sixth digit
        return Call("fraction_fit", (out, Literal(digits, T.INT)), target)
    if kind == exp.DataType.Type.BINARY and to.expressions and target == pa.binary():
        # BINARY(n): Flink pads with zero bytes or cuts to n bytes
        width = _length(to.expressions[0])
        if width < 1:
            raise binder.error(BindError, f"BINARY({width}): the length must be at least 1",
                               node)
        return Cast(Cast(out, pa.binary(width), safe), target)
    if kind == exp.DataType.Type.VARBINARY and to.expressions and target == pa.binary():
        width = _length(to.expressions[0])  # (Flink cuts to n bytes)
        if width < 1:
            raise binder.error(BindError, f"VARBINARY({width}): the length must be at least "
                               "1", node)
        return Call("varchar_fit", (out, Literal(width, T.INT)), target)
    if kind not in (exp.DataType.Type.CHAR, exp.DataType.Type.NCHAR,
                    exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR):
        return out
    fixed = kind in (exp.DataType.Type.CHAR, exp.DataType.Type.NCHAR)
    params = to.expressions
    if not params:
        return Call("char_fit", (out, Literal(1, T.INT)), T.STRING) if fixed else out
    length = _length(params[0])
    if length < 1:
        raise binder.error(BindError, f"{'CHAR' if fixed else 'VARCHAR'}({length}): the "
                           "length must be at least 1", node)
    return Call("char_fit" if fixed else "varchar_fit", (out, Literal(length, T.INT)),
                T.STRING)


def _check_temporal_text(binder: ExprBinder, text: str, target: pa.DataType,
                         node: exp.Expression) -> None:
    """DATE '2024-13-45' (or a CAST of that text) is refused where it is written, as Flink's
    validator refuses it; it failed when the job ran, at the statement's start."""
    from sqlengine.cast import cast_array
    from sqlengine.errors import SqlEngineError

    try:
        cast_array(pa.array([text]), target, safe=False)
    except SqlEngineError as e:  # ("cannot CAST '2024-13-45' to DATE: not a valid value")
        raise binder.error(BindError, e.message, node) from None
    except (pa.ArrowInvalid, ValueError, OverflowError):
        raise binder.error(BindError, f"cannot CAST {text!r} to {T.type_name(target)}: not "
                           "a valid value", node) from None


def _between_units(target: pa.DataType, to: exp.Expression) -> int | None:
    """The declared precision of a TIMESTAMP / TIMESTAMP_LTZ / TIME type whose digits fall
    between Arrow's units (1, 2, 4, 5, 7, 8), else None."""
    if not (pa.types.is_timestamp(target) or pa.types.is_time(target)):
        return None
    params = to.expressions if isinstance(to, exp.DataType) else []
    digits = _length(params[0]) if params else None
    return digits if digits in (1, 2, 4, 5, 7, 8) else None


def _length(param: exp.Expression) -> int:
    return int(param.this.name) if isinstance(param, exp.DataTypeParam) else int(param.name)


def timestamp_function(binder: ExprBinder, node: exp.Anonymous, scope: Scope) -> Expr:
    """``TIMESTAMPADD(unit, n, t)`` and ``TIMESTAMPDIFF(unit, t1, t2)``: the unit keyword
    becomes a string constant argument."""
    name = node.name.lower()
    args = list(node.expressions)
    if len(args) != 3:
        raise binder.error(BindError, f"{name.upper()} takes 3 arguments, got {len(args)}",
                           node)
    unit_node = args[0]
    unit = unit_node.name.upper() if isinstance(unit_node, exp.Column | exp.Var) else ""
    unit = unit.removeprefix("SQL_TSI_")
    # (TIMESTAMPADD by milliseconds as Flink 2.3; its TIMESTAMPDIFF in them counts whole
    # seconds, so that one stays refused)
    if unit not in TIME_UNITS and not (name == "timestampadd" and unit == "MILLISECOND"):
        raise binder.error(NotSupportedError, f"{name.upper()} unit {unit_node.sql()!r} is "
                           f"not supported; use one of {', '.join(TIME_UNITS)}", unit_node)
    bound = [Literal(unit, T.STRING)] + [binder.bind(a, scope) for a in args[1:]]
    return apply(binder, name, bound, args, node)


def floor_ceil_time(binder: ExprBinder, node: exp.Floor | exp.Ceil, scope: Scope) -> Expr:
    """FLOOR / CEIL(t TO unit): t rounded down / up to a whole unit."""
    from sqlengine.functions_time import TIME_FLOOR_UNITS

    to = node.args["to"]
    unit = to.name.upper() if isinstance(to, exp.Column | exp.Var) else to.sql().upper()
    if unit not in TIME_FLOOR_UNITS:
        raise binder.error(NotSupportedError, f"{type(node).__name__.upper()}(... TO {unit}) is "
                           f"not supported; use one of {', '.join(TIME_FLOOR_UNITS)}", to)
    name = "floor_time" if isinstance(node, exp.Floor) else "ceil_time"
    arg = binder.bind(node.this, scope)
    if unit in ("DECADE", "CENTURY", "MILLENNIUM") and not (
            pa.types.is_date(arg.dtype) or (pa.types.is_timestamp(arg.dtype) and
                                            arg.dtype.tz is None) or arg.dtype == T.NULL):
        raise binder.error(NotSupportedError, f"{type(node).__name__.upper()}(... TO {unit}) "
                           "takes a DATE or a TIMESTAMP", node)
    return apply(binder, name, [arg, Literal(unit, T.STRING)], [node.this, to], node)


def date_trunc(binder: ExprBinder, node: exp.DateTrunc, scope: Scope) -> Expr:
    """PostgreSQL's, DuckDB's and Spark's DATE_TRUNC('unit', t): t rounded down to a whole
    unit as FLOOR(t TO unit), but a week starts on Monday as in those engines (Flink's FLOOR
    TO WEEK starts on Sunday), and a DATE gives a TIMESTAMP, as in PostgreSQL and DuckDB."""
    from sqlengine.functions_time import TIME_FLOOR_UNITS

    unit_node = node.args.get("unit")
    if not (isinstance(unit_node, exp.Literal) and unit_node.is_string):
        raise binder.error(BindError, "the unit of DATE_TRUNC must be a constant string, such "
                           "as 'month'", unit_node or node)
    written = unit_node.this.strip().upper()
    unit = {"CENTURIES": "CENTURY", "MILLENNIA": "MILLENNIUM"}.get(written, written)
    if unit not in TIME_FLOOR_UNITS and unit.endswith("S"):
        unit = unit[:-1]  # (PostgreSQL takes 'months' too)
    if unit not in TIME_FLOOR_UNITS:
        units = ", ".join(u.lower() for u in TIME_FLOOR_UNITS)
        raise binder.error(NotSupportedError, f"DATE_TRUNC to {unit_node.this.lower()!r} is not "
                           f"supported; use one of {units}", node)
    arg = binder.bind(node.this, scope)
    if pa.types.is_date(arg.dtype) or arg.dtype == T.NULL:
        arg = Cast(arg, T.TIMESTAMP)
    if not pa.types.is_timestamp(arg.dtype):
        raise binder.error(BindError, f"DATE_TRUNC takes a DATE or a TIMESTAMP, got "
                           f"{T.type_name(arg.dtype)}", node.this)
    nodes = [node.this, unit_node]
    if unit != "WEEK":
        return apply(binder, "floor_time", [arg, Literal(unit, T.STRING)], nodes, node)
    day = Literal(dt.timedelta(days=1), pa.duration("ms"))
    before = apply(binder, "subtract", [arg, day], nodes, node)
    sunday = apply(binder, "floor_time", [before, Literal(unit, T.STRING)], nodes, node)
    return apply(binder, "add", [sunday, day], nodes, node)


def python_call(binder: ExprBinder, key: str, args: list[Expr], node: exp.Expression) -> Expr:
    """A call of a session's Python function: its arguments as they are, its declared
    result type."""
    from sqlengine.functions_python import display_name, registered

    function = registered(key)
    if function is None:
        raise binder.error(BindError, f"the Python function {display_name(key)} is gone", node)
    if function.kind == "table":
        raise binder.error(BindError, f"{display_name(key)} is a table function: call it in "
                           "FROM ... LATERAL TABLE(...)", node)
    for a in args:
        if not T.is_supported(a.dtype) and a.dtype != T.NULL:
            raise binder.error(BindError, f"{display_name(key)}: an argument of type "
                               f"{T.type_name(a.dtype)} cannot be passed to Python", node)
    return Call(key, tuple(args), function.result_type)


def case(binder: ExprBinder, node: exp.Case, scope: Scope) -> Expr:
    """CASE [subject] WHEN ... THEN ... [ELSE ...] END: BOOLEAN conditions, results of one
    common type."""
    subject = node.args.get("this")
    conds: list[Expr] = []
    results: list[Expr] = []
    for when in node.args.get("ifs") or []:
        if when.this is None or when.args.get("true") is None:  # (sqlglot lets them go)
            raise binder.error(ParseError, "CASE WHEN needs a condition and a THEN value", when)
        if subject is not None:
            cond = binder.call("eq", [subject, when.this], scope, when)
        else:
            cond = binder.bind(when.this, scope)
            if cond.dtype not in (T.BOOLEAN, T.NULL):
                raise binder.error(BindError, "CASE WHEN condition must be BOOLEAN", when.this)
        conds.append(coerce(cond, T.BOOLEAN))
        results.append(binder.bind(when.args["true"], scope))
    default_node = node.args.get("default")
    default = binder.bind(default_node, scope) if default_node is not None else None
    all_results = results + ([default] if default is not None else [])
    out = T.common_type([r.dtype for r in all_results], "CASE branches")
    out = T.STRING if out == T.NULL else out
    whens = tuple((c, coerce(r, out)) for c, r in zip(conds, results))
    return Case(whens, coerce(default, out) if default is not None else None, out)


def python_literal(value: object, binder: ExprBinder, node: exp.Expression) -> Literal:
    """A typed literal for a Python parameter value (never spliced into SQL text)."""
    if value is None:
        return Literal(None, T.NULL)
    if isinstance(value, bool):
        return Literal(value, T.BOOLEAN)
    if isinstance(value, int):
        if -(2**63) <= value < 2**63:
            return Literal(value, T.INT if -(2**31) <= value < 2**31 else T.BIGINT)
        value = decimal.Decimal(value)  # (beyond BIGINT: a DECIMAL, as such a SQL literal)
    if isinstance(value, float):
        return Literal(value, T.DOUBLE)
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and value.as_tuple().exponent > 0:  # type: ignore[operator]
            # (1E+5: its digits written out, 100000; its DECIMAL(1, 0) failed at run time)
            value = decimal.Decimal(int(value))
        t = value.as_tuple()
        if not value.is_finite() or max(len(t.digits), -int(t.exponent)) > 38:
            raise binder.error(BindError, f"the parameter {value} does not fit a DECIMAL "
                               "(38 digits at most)", node)
        scale = max(0, -int(t.exponent))
        return Literal(value, pa.decimal128(max(len(t.digits), scale, 1), scale))
    if isinstance(value, str):
        return Literal(value, T.STRING)
    if isinstance(value, dt.datetime):
        # (TIMESTAMP(6) when it has microseconds, as a SQL literal with six digits; an
        # aware datetime is an instant: a TIMESTAMP_LTZ)
        precision = 6 if value.microsecond % 1000 else 3
        if value.tzinfo is not None and value.utcoffset() is not None:
            utc = value.astimezone(dt.UTC).replace(tzinfo=None)
            return Literal(utc, T.ltz_type(precision))
        return Literal(value, T.timestamp_type(precision))
    if isinstance(value, dt.date):
        return Literal(value, T.DATE)
    if isinstance(value, dt.time):
        if value.tzinfo is not None and value.utcoffset() is not None:
            raise binder.error(BindError, f"cannot bind the time {value} with a time zone: "
                               "TIME has none", node)
        digits = 0 if not value.microsecond else 3 if value.microsecond % 1000 == 0 else 6
        return Literal(value.replace(tzinfo=None), T.time_type(digits))
    if isinstance(value, bytes | bytearray | memoryview):
        return Literal(bytes(value), pa.binary())
    raise binder.error(BindError, f"cannot bind a parameter of type {type(value).__name__}",
                       node)
