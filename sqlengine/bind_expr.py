"""Bind sqlglot scalar expressions to typed plan expressions over a scope of input columns."""

from __future__ import annotations

import decimal
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import bind_compare, bind_foreign, bind_json, bind_nested, bind_scalar, functions
from sqlengine import types as T
from sqlengine.bind_correlation import Equality, reach_through
from sqlengine.bind_interval import interval_literal
from sqlengine.bind_scalar import coerce
from sqlengine.dialect import JsonCall
from sqlengine.errors import BindError, NotSupportedError, SqlEngineError
from sqlengine.parser import node_span
from sqlengine.plan.expressions import Call, Cast, ColumnRef, Expr, InList, Literal

if TYPE_CHECKING:
    from sqlengine.statements import QueryText


@dataclass(frozen=True, slots=True)
class ScopeColumn:
    qualifier: str | None
    name: str
    type: pa.DataType
    rowtime: bool = False
    proctime: bool = False
    # The right side's copy of a USING column: reachable only with its qualifier.
    using_duplicate: bool = False


@dataclass(frozen=True, slots=True)
class Scope:
    """The columns visible to an expression, in input order, with their table qualifiers."""

    columns: tuple[ScopeColumn, ...]

    def resolve(self, name: str, qualifier: str | None) -> int | None:
        """The position of a column, None if absent; raises on ambiguity."""
        lname = name.lower()
        lq = qualifier.lower() if qualifier else None
        hits = [
            i for i, c in enumerate(self.columns)
            if c.name.lower() == lname and (lq is None or (c.qualifier or "").lower() == lq)
            and not (lq is None and c.using_duplicate)
        ]
        if len(hits) > 1:
            raise BindError(f"column {name!r} is ambiguous")
        return hits[0] if hits else None

    def qualifiers(self) -> set[str]:
        return {c.qualifier.lower() for c in self.columns if c.qualifier}


@dataclass(frozen=True, slots=True)
class OuterScope:
    """The enclosing row of a subquery being bound: its scope, or, when it is an aggregate's
    output (HAVING, an aggregated SELECT list), the intercept that maps a grouped column of
    the aggregate's input scope ``grouped`` to its output column."""

    scope: Scope
    intercept: Callable[[exp.Expression], Expr | None] | None = None
    grouped: Scope | None = None
    equals: tuple[Equality, ...] = ()  # (its WHERE's equalities: bind_correlation.py)


_BINARY = {
    exp.Add: "add", exp.Sub: "subtract", exp.Mul: "multiply", exp.Div: "divide",
    exp.Mod: "mod", exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt",
    exp.GTE: "ge", exp.And: "and", exp.Or: "or", exp.DPipe: "concat_op",
}

# sqlglot function classes -> (our name, argument keys in order; "*" = the expressions list)
_FUNCS: dict[type, tuple[str, tuple[str, ...]]] = {
    exp.Upper: ("upper", ("this",)),
    exp.Lower: ("lower", ("this",)),
    exp.Length: ("char_length", ("this",)),
    exp.Initcap: ("initcap", ("this",)),
    exp.Reverse: ("reverse", ("this",)),
    exp.Abs: ("abs", ("this",)),
    exp.Sign: ("sign", ("this",)),
    exp.Floor: ("floor", ("this",)),
    exp.Ceil: ("ceil", ("this",)),
    exp.Round: ("round", ("this", "decimals")),
    exp.Pow: ("power", ("this", "expression")),
    exp.Sqrt: ("sqrt", ("this",)),
    exp.Ln: ("ln", ("this",)),
    exp.Exp: ("exp", ("this",)),
    exp.Coalesce: ("coalesce", ("this", "*")),
    exp.Greatest: ("greatest", ("this", "*")),
    exp.Least: ("least", ("this", "*")),
    exp.Nullif: ("nullif", ("this", "expression")),
    exp.If: ("if", ("this", "true", "false")),
    exp.Concat: ("concat", ("*",)),
    exp.Substring: ("substring", ("this", "start", "length")),
    exp.StrPosition: ("position", ("substr", "this", "position")),
    exp.Trunc: ("truncate", ("this", "decimals")),
    exp.Repeat: ("repeat", ("this", "times")),
}
if hasattr(exp, "Replace"):
    _FUNCS[exp.Replace] = ("replace", ("this", "expression", "replacement"))


# Functions called without parentheses that sqlglot reads as column names.
_NILADIC = {"LOCALTIMESTAMP": "localtimestamp", "CURRENT_ROW_TIMESTAMP": "current_row_timestamp"}


class ExprBinder:
    """Binds expressions of one query; knows the script (for spans) and the parameters."""

    def __init__(self, query: QueryText, script: str, params: dict[str, object] | None,
                 positional: list[object] | None) -> None:
        self.query = query
        self.script = script
        self.params = params or {}
        self.positional = positional or []
        self._next_positional = 0
        self.used_params: set[str] = set()
        # Hook used in aggregate context: may replace a node by a column of the agg output.
        self.intercept: Callable[[exp.Expression], Expr | None] | None = None
        self.intercept_scope: Scope | None = None  # the scope the intercepted query groups
        # Subqueries: the enclosing rows (innermost last) and the binder that takes them.
        self.outer: list[OuterScope] = []
        self.subqueries: Callable[[exp.Expression, Scope, bool], Expr] | None = None
        # The session's Python functions: name (lower case) -> the key its calls carry.
        self.udfs: dict[str, str] = {}
        self.current_names = ("default_catalog", "default_database")  # (the session's)

    def error(self, cls: type[SqlEngineError], msg: str, node: exp.Expression) -> SqlEngineError:
        return cls(msg, span=node_span(node, self.query, self.script), sql=self.script)

    # -- entry ---------------------------------------------------------------------------
    def bind(self, node: exp.Expression, scope: Scope) -> Expr:
        if self.intercept is not None:
            hit = self.intercept(node)
            if hit is not None:
                return hit
        try:
            return self._bind(node, scope)
        except SqlEngineError as e:
            if e.span is None:
                e.span = node_span(node, self.query, self.script)
                e.sql = self.script
            raise

    def _bind(self, node: exp.Expression, scope: Scope) -> Expr:
        if isinstance(node, exp.Paren | exp.Alias):
            return self.bind(node.this, scope)
        if isinstance(node, exp.Column):
            return self._column(node, scope)
        if isinstance(node, exp.Literal | exp.Boolean | exp.Null):
            return literal(node)
        if isinstance(node, exp.UnicodeString):
            from sqlengine.unicode_literal import unicode_text

            return Literal(unicode_text(node), T.STRING)
        if isinstance(node, exp.Placeholder):
            return self._placeholder(node)
        if isinstance(node, exp.Cast | exp.TryCast):
            return bind_scalar.cast(self, node, scope)
        if isinstance(node, exp.Interval):
            return interval_literal(node, self)
        if isinstance(node.args.get("expression"), exp.Any | exp.All) or \
                isinstance(node, exp.Subquery | exp.Select | exp.Exists):
            return self._subquery(node, scope, negated=False)
        if isinstance(node, exp.Binary) and isinstance(node.this, exp.Tuple) and \
                isinstance(node.expression, exp.Tuple):  # (a, b) = (x, y): row comparison
            return bind_compare.row_compare(self, node, scope)
        if isinstance(node, exp.EQ | exp.NEQ) and _row_constructor(node.this) and \
                _row_constructor(node.expression):  # ROW(..) = ROW(..): field by field
            return bind_compare.row_compare(self, node, scope)
        for cls, name in _BINARY.items():
            if type(node) is cls:
                return self.call(name, [node.this, node.expression], scope, node)
        if isinstance(node, exp.Neg):
            if isinstance(node.this, exp.Literal) and not node.this.is_string:
                return literal(node.this, negated=True)
            return self.call("negate", [node.this], scope, node)
        if isinstance(node, exp.Not):
            return self._not(node, scope)
        if isinstance(node, exp.Is):
            return self._is(node, scope, negated=False)
        if isinstance(node, exp.Between):
            return bind_scalar.between(self, node, scope)
        if isinstance(node, exp.In):
            return self._in(node, scope, negated=False)
        if isinstance(node, exp.Like | exp.ILike | exp.SimilarTo):
            return bind_compare.like(self, node, scope)
        if isinstance(node, exp.Escape):
            return bind_compare.like(self, node.this, scope, escape=node.expression)
        if isinstance(node, exp.NullSafeEQ | exp.NullSafeNEQ):
            return bind_compare.distinct(self, node, scope)
        if isinstance(node, exp.Case):
            return bind_scalar.case(self, node, scope)
        if isinstance(node, exp.CurrentCatalog | exp.CurrentDatabase):
            return Literal(self.current_names[isinstance(node, exp.CurrentDatabase)], T.STRING)
        if isinstance(node, exp.Tuple):  # (a, b, ...): the ROW constructor
            return self.call("row_value", list(node.expressions), scope, node)
        if isinstance(node, exp.Trim):
            return self._trim(node, scope)
        if isinstance(node, exp.Pad):
            name = "lpad" if node.args.get("is_left") else "rpad"
            args = [node.this, node.expression, node.args.get("fill_pattern")]
            return self.call(name, [a for a in args if a is not None], scope, node)
        if isinstance(node, exp.AggFunc):
            raise self.error(BindError, f"aggregate function {node.sql_name()} is not allowed "
                             "here", node)
        if isinstance(node, exp.Window):
            raise self.error(BindError, "a window function (OVER) is not allowed here, only "
                             "in the SELECT list and ORDER BY: compute it in a subquery's "
                             "SELECT list and use its column", node)
        if isinstance(node, exp.Extract):
            unit = node.this.name.lower()
            unit = {"dayofweek": "dow", "dayofyear": "doy", "epoch": "epoch"}.get(unit, unit)
            if f"extract_{unit}" not in functions.SIGNATURES:
                raise self.error(NotSupportedError, f"EXTRACT({unit.upper()} ...) is not "
                                 "supported", node)
            return self.call(f"extract_{unit}", [node.expression], scope, node)
        if isinstance(node, exp.RegexpExtract):
            group = node.args.get("group") or node.args.get("position")
            args = [node.this, node.expression] + ([group] if group is not None else [])
            return self.call("regexp_extract", args, scope, node)
        if isinstance(node, JsonCall):
            return bind_json.bind_json_call(self, node, scope)
        if isinstance(node, exp.Array):
            if not node.expressions:
                raise self.error(BindError, "ARRAY[] needs at least one element", node)
            return self.call("array_value", list(node.expressions), scope, node)
        if isinstance(node, exp.Bracket):
            return bind_nested.bracket(self, node, scope)
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Identifier):
            return bind_nested.field_of(self, self.bind(node.this, scope),
                                        node.expression.name, node)
        if isinstance(node, exp.JSONObject):
            return bind_json.bind_json_object(self, node, scope)
        if isinstance(node, exp.Floor | exp.Ceil) and node.args.get("to") is not None:
            return bind_scalar.floor_ceil_time(self, node, scope)
        if isinstance(node, exp.StrToDate | exp.StrToTime) and node.meta.get("cast_format"):
            raise self.error(NotSupportedError, "CAST ... FORMAT is not supported (TO_DATE(s, "
                             "format) and TO_TIMESTAMP(s, format) read a text by a pattern)",
                             node)
        if isinstance(node, exp.DateTrunc | exp.TimestampTrunc):
            return bind_scalar.date_trunc(self, node, scope)
        if type(node) in _FUNCS:
            name, keys = _FUNCS[type(node)]
            return self.call(name, _args(node, keys), scope, node)
        if isinstance(node, exp.Anonymous) and node.name.lower() in ("timestampadd",
                                                                     "timestampdiff"):
            return bind_scalar.timestamp_function(self, node, scope)
        if isinstance(node, exp.Anonymous):
            return self.call(str(node.this), list(node.expressions), scope, node)
        if isinstance(node, exp.Func):
            name = node.sql_name().lower()
            args = [a for k in node.arg_types for a in _as_list(node.args.get(k))]
            bind_foreign.no_foreign_operator(self, node, name)
            return self.call(name, args, scope, node)
        if isinstance(node, exp.WithinGroup):  # (LISTAGG / PERCENTILE_CONT ... WITHIN GROUP)
            name = "LISTAGG" if isinstance(node.this, exp.GroupConcat) else \
                node.this.sql_name()
            raise self.error(NotSupportedError, f"{name} ... WITHIN GROUP "
                             "(ORDER BY ...) is not supported (PERCENTILE_CONT(f), with a "
                             "constant f if DESC, and LISTAGG are)", node)
        raise bind_foreign.unsupported(self, node)

    # -- pieces ----------------------------------------------------------------------------
    def _column(self, node: exp.Column, scope: Scope) -> Expr:
        path = bind_nested.field_path(self, node, scope)
        if path is not None:
            return path
        name = node.name
        qualifier = node.table or None
        if qualifier and qualifier.lower() not in scope.qualifiers():
            if self.outer:
                return self._outer_column(node, name, qualifier)
            raise self.error(BindError, f"unknown table or alias {qualifier!r}", node)
        try:
            idx = scope.resolve(name, qualifier)
        except BindError as e:
            raise self.error(BindError, e.message, node) from None
        if idx is None and self.outer:
            return self._outer_column(node, name, qualifier)
        if idx is None and not qualifier and name.upper() in _NILADIC:
            return bind_scalar.apply(self, _NILADIC[name.upper()], [], [], node)
        if idx is None:
            near = _nearest(name, [c.name for c in scope.columns])
            hint = f"; did you mean {near!r}?" if near else ""
            raise self.error(BindError, f"unknown column {node.sql()!r}{hint}", node)
        col = scope.columns[idx]
        return ColumnRef(idx, col.name, col.type)

    def _outer_column(self, node: exp.Column, name: str, qualifier: str | None) -> Expr:
        """A column of an enclosing query (a correlated reference), one level out."""
        from sqlengine.plan.subquery import OuterRef

        for depth, outer in enumerate(reversed(self.outer)):
            scope = outer.grouped if outer.grouped is not None else outer.scope
            if qualifier and qualifier.lower() not in scope.qualifiers():
                continue
            try:
                idx = scope.resolve(name, qualifier)
            except BindError as e:
                raise self.error(BindError, e.message, node) from None
            if idx is None:
                continue
            if depth > 0:  # (through an equality of the query between, or refused)
                return reach_through(self, node, len(self.outer) - 1 - depth, idx)
            if outer.intercept is not None:
                return self._outer_grouped(node, outer)
            col = outer.scope.columns[idx]
            return OuterRef(idx, col.name, col.type)
        if qualifier:
            raise self.error(BindError, f"unknown table or alias {qualifier!r}", node)
        raise self.error(BindError, f"unknown column {node.sql()!r}", node)

    def _outer_grouped(self, node: exp.Column, outer: OuterScope) -> Expr:
        """A grouped column of an enclosing aggregate query: its output column."""
        from sqlengine.plan.subquery import OuterRef

        assert outer.intercept is not None
        saved = self.outer
        self.outer = saved[:saved.index(outer)]  # resolve as the enclosing query would
        try:
            ref = outer.intercept(node)
        finally:
            self.outer = saved
        if not isinstance(ref, ColumnRef):
            raise self.error(NotSupportedError, f"correlated reference {node.sql()!r}", node)
        return OuterRef(ref.index, ref.name, ref.type)

    def _subquery(self, node: exp.Expression, scope: Scope, negated: bool) -> Expr:
        if self.subqueries is None:
            raise self.error(NotSupportedError, "subqueries are not supported here", node)
        return self.subqueries(node, scope, negated)

    def _placeholder(self, node: exp.Placeholder) -> Expr:
        name = node.name if node.this else None
        if name:
            if name not in self.params:
                raise self.error(BindError, f"no value given for parameter :{name}", node)
            value = self.params[name]
            self.used_params.add(name)
        else:
            # (its place in the text, numbered by binder.number_placeholders: the binder
            # reaches the WHERE before the select list)
            at = node.meta.get("position")
            if at is None:
                at = self._next_positional
                self._next_positional += 1
            if at >= len(self.positional):
                raise self.error(BindError, "more ? placeholders than parameters", node)
            value = self.positional[at]
        return bind_scalar.python_literal(value, self, node)

    def _not(self, node: exp.Not, scope: Scope) -> Expr:
        inner = node.this
        if isinstance(inner, exp.Is):
            return self._is(inner, scope, negated=True)
        if isinstance(inner, exp.In):
            return self._in(inner, scope, negated=True)
        if isinstance(inner, exp.Like | exp.SimilarTo) and not inner.args.get("negate"):
            return bind_compare.like(self, inner, scope, negated=True)
        if isinstance(inner, exp.Escape) and isinstance(inner.this, exp.Like | exp.SimilarTo):
            return bind_compare.like(self, inner.this, scope, escape=inner.expression,
                                     negated=True)
        return self.call("not", [inner], scope, node)

    def _is(self, node: exp.Is, scope: Scope, negated: bool) -> Expr:
        negated = negated != bool(node.args.get("negate"))
        target = node.expression
        if isinstance(target, exp.Null):
            return self.call("is_not_null" if negated else "is_null", [node.this], scope, node)
        if isinstance(target, exp.Boolean):
            word = "true" if target.this else "false"
            return self.call(f"is_not_{word}" if negated else f"is_{word}", [node.this],
                             scope, node)
        if isinstance(target, exp.JSON):
            test = bind_json.bind_is_json(self, self.bind(node.this, scope), target, node)
            return Call("not", (test,), T.BOOLEAN) if negated else test
        raise self.error(NotSupportedError, f"unsupported IS {target.sql()}", node)

    def _in(self, node: exp.In, scope: Scope, negated: bool) -> Expr:
        if node.args.get("query") is not None:
            return self._subquery(node, scope, negated)
        if len(node.expressions) == 1 and isinstance(node.expressions[0], exp.Values):
            # x IN (VALUES (1), (2)): the list x IN (1, 2); (a, b) IN (VALUES (1, 2), ...)
            # the rows' list
            rows = node.expressions[0].expressions
            node = node.copy()
            node.set("expressions", [r.expressions[0] if isinstance(r, exp.Tuple) and
                                     len(r.expressions) == 1 else r for r in rows])
        if isinstance(node.this, exp.Tuple):
            return bind_compare.row_in(self, node, scope, negated)
        arg = self.bind(node.this, scope)
        values = [self.bind(v, scope) for v in node.expressions]
        common = T.comparison_type([arg.dtype] + [v.dtype for v in values], "IN list values")
        return InList(coerce(arg, common), tuple(coerce(v, common) for v in values), negated)

    def _trim(self, node: exp.Trim, scope: Scope) -> Expr:
        position = str(node.args.get("position") or "BOTH").upper()
        name = {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(position, "trim")
        chars = node.expression
        return self.call(name, [node.this] + ([chars] if chars is not None else []), scope, node)

    def call(self, name: str, arg_nodes: list[exp.Expression], scope: Scope,
             node: exp.Expression) -> Expr:
        """Bind a scalar function call: arity, literal-only arguments, implicit casts."""
        key = self.udfs.get(name.lower())
        if key is not None:  # (a session's Python function shadows nothing built in)
            return bind_scalar.python_call(self, key, [self.bind(a, scope) for a in arg_nodes],
                                           node)
        bind_scalar.signature(self, name, len(arg_nodes), node)  # fails before the arguments
        args = [_null_literal(self.bind(a, scope)) for a in arg_nodes]
        return bind_scalar.apply(self, name, args, arg_nodes, node)


def _row_constructor(node: exp.Expression) -> bool:
    """``ROW(...)`` or ``(a, b, ...)``: Calcite compares two of them field by field (three
    valued: ROW(1, NULL) = ROW(1, NULL) is NULL in Flink 2.3), any other ROW value whole."""
    return isinstance(node, exp.Tuple) or (
        isinstance(node, exp.Anonymous) and str(node.this).upper() == "ROW")


def _null_literal(e: Expr) -> Expr:
    """``CAST(NULL AS t)`` as the NULL literal of type t (a constant argument)."""
    if isinstance(e, Cast) and isinstance(e.arg, Literal) and e.arg.value is None:
        return Literal(None, e.type)
    return e


def _args(node: exp.Expression, keys: tuple[str, ...]) -> list[exp.Expression]:
    out: list[exp.Expression] = []
    for k in keys:
        if k == "*":
            out.extend(node.expressions)
        elif node.args.get(k) is not None:
            out.extend(_as_list(node.args[k]))
    return out


def _as_list(value: object) -> list[exp.Expression]:
    if value is None:
        return []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, exp.Expression)]
    return [value] if isinstance(value, exp.Expression) else []


def _nearest(name: str, candidates: list[str]) -> str | None:
    import difflib

    hits = difflib.get_close_matches(name.lower(), [c.lower() for c in candidates], n=1)
    if not hits:
        return None
    return next(c for c in candidates if c.lower() == hits[0])


def literal(node: exp.Expression, negated: bool = False) -> Literal:
    """A SQL literal with Flink's (Calcite's) types: INT, else BIGINT; ``1.50`` a
    DECIMAL(3, 2) (every digit written counts); ``5.`` an INT; ``1e3`` a DOUBLE. ``negated``:
    the literal under a unary minus, which belongs to it (``-2147483648`` is an INT)."""
    if isinstance(node, exp.Null):
        return Literal(None, T.NULL)
    if isinstance(node, exp.Boolean):
        return Literal(bool(node.this), T.BOOLEAN)
    text = str(node.this)
    if node.is_string:
        return Literal(text, T.STRING)
    sign = -1 if negated else 1
    if not re.fullmatch(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", text):
        raise BindError(f"malformed numeric literal {text!r}")
    if len(text.lstrip("0")) > 40 and "e" not in text.lower():
        raise BindError(f"numeric literal {text!r:.40}... is out of range")
    if "e" in text.lower():
        number = float(text)
        if number in (float("inf"), float("-inf")):
            raise BindError(f"numeric literal {text!r} is out of range")
        return Literal(sign * number, T.DOUBLE)
    whole, point, frac = text.partition(".")
    if point and frac:
        if int(whole + frac) >= 2**63:  # Calcite: the unscaled value must fit a BIGINT
            raise BindError(f"numeric literal {text!r} is out of range")
        d = decimal.Decimal(text)
        precision = min(len(whole) + len(frac), T.MAX_DECIMAL_PRECISION)
        scale = min(len(frac), precision)
        return Literal(-d if negated else d, pa.decimal128(precision, scale))
    value = sign * int(whole)
    if -(2**31) <= value < 2**31:
        return Literal(value, T.INT)
    if -(2**63) <= value < 2**63:
        return Literal(value, T.BIGINT)
    raise BindError(f"numeric literal {text!r} is out of range")
