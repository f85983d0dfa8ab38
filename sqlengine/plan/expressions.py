"""Bound scalar expressions: typed, resolved to input column positions, immutable."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import ClassVar

import pyarrow as pa

from sqlengine.types import type_name

INFIX = {
    "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "mod": "%",
    "eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "and": "AND", "or": "OR", "concat_op": "||",
}


@dataclass(frozen=True, slots=True)
class Expr:
    """Base of bound expressions; every one knows its Arrow result type."""

    # False for expressions that only the optimizer can rewrite away (subqueries, references
    # to an enclosing query's row): never evaluated, so never folded to a constant.
    foldable: ClassVar[bool] = True

    def children(self) -> tuple[Expr, ...]:
        return ()

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return self

    @property
    def dtype(self) -> pa.DataType:
        raise NotImplementedError

    def sql(self) -> str:
        raise NotImplementedError

    def walk(self) -> Iterator[Expr]:
        """This expression and every descendant, pre-order."""
        yield self
        for c in self.children():
            yield from c.walk()

    def columns(self) -> set[int]:
        """The input column positions this expression reads."""
        return {e.index for e in self.walk() if isinstance(e, ColumnRef)}


@dataclass(frozen=True, slots=True)
class ColumnRef(Expr):
    index: int
    name: str
    type: pa.DataType

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def sql(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    value: object
    type: pa.DataType

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def sql(self) -> str:
        return literal_sql(self.value, self.type)

    def __hash__(self) -> int:
        # (an ARRAY's, ROW's or MAP's constant is a list / dict: hashed as frozen values, for
        # the optimizer's sets of filters)
        return hash((_frozen(self.value), self.type))


def _frozen(value: object) -> object:
    """A hashable stand-in for a literal's value (equal values give equal stand-ins)."""
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    return value


@dataclass(frozen=True, slots=True)
class Call(Expr):
    """A scalar function or operator, by its registry name (``add``, ``upper``, ...)."""

    name: str
    args: tuple[Expr, ...]
    type: pa.DataType

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return replace(self, args=children)

    def sql(self) -> str:
        if self.name == ROWTIME:
            return self.args[0].sql()
        if self.name in INFIX and len(self.args) == 2:
            return f"({self.args[0].sql()} {INFIX[self.name]} {self.args[1].sql()})"
        if self.name == "not":
            return f"NOT {self.args[0].sql()}"
        if self.name == "negate":
            return f"-{self.args[0].sql()}"
        if self.name in ("is_null", "is_not_null", "is_true", "is_false"):
            word = self.name.upper().replace("_", " ")[3:]
            return f"{self.args[0].sql()} IS {word}"
        if self.name in ("like", "not_like", "similar_to", "not_similar_to"):
            word = self.name.upper().replace("_", " ")
            escape = f" ESCAPE {self.args[2].sql()}" if len(self.args) > 2 else ""
            return f"{self.args[0].sql()} {word} {self.args[1].sql()}{escape}"
        nested = _nested_sql(self)
        if nested is not None:
            return nested
        return f"{self.name.upper()}({', '.join(a.sql() for a in self.args)})"


def _nested_sql(call: Call) -> str | None:
    """How the calls behind ARRAY / MAP / ROW syntax and the SQL/JSON clauses read in SQL
    (EXPLAIN shows ``items[1].sku``, not its internal calls)."""
    name, args = call.name, call.args
    text = [a.sql() for a in args]
    if name == "element_at":
        return f"{text[0]}[{text[1]}]"
    if name == "field" and isinstance(args[1], Literal) and pa.types.is_struct(args[0].dtype):
        return f"{text[0]}.{args[0].dtype.field(int(args[1].value)).name}"  # type: ignore[call-overload]
    if name == "array_value":
        return f"ARRAY[{', '.join(text)}]"
    if name == "map_value":
        return f"MAP[{', '.join(text)}]"
    if name == "row_value":
        return f"ROW({', '.join(text)})"
    if name in ("json_value", "json_query", "json_exists"):
        return f"{name.upper()}({text[0]}, {text[1]})"
    if name in ("json_object", "json_array"):
        return f"{name.upper()}({', '.join(text[2:])})"
    if name.startswith("py:"):
        from sqlengine.functions_python import display_name

        return f"{display_name(name)}({', '.join(text)})"
    if name in ("floor_time", "ceil_time") and isinstance(args[1], Literal):
        return f"{name[:-5].upper()}({text[0]} TO {args[1].value})"
    if name == "is_json" and isinstance(args[1], Literal):
        return f"{text[0]} IS JSON {args[1].value}"
    return None


@dataclass(frozen=True, slots=True)
class Cast(Expr):
    arg: Expr
    type: pa.DataType
    safe: bool = False  # TRY_CAST: NULL instead of an error

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def children(self) -> tuple[Expr, ...]:
        return (self.arg,)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return replace(self, arg=children[0])

    def sql(self) -> str:
        word = "TRY_CAST" if self.safe else "CAST"
        return f"{word}({self.arg.sql()} AS {type_name(self.type)})"


@dataclass(frozen=True, slots=True)
class Case(Expr):
    """Searched CASE: ``whens`` are (condition, result) pairs; ``default`` may be None."""

    whens: tuple[tuple[Expr, Expr], ...]
    default: Expr | None
    type: pa.DataType

    @property
    def dtype(self) -> pa.DataType:
        return self.type

    def children(self) -> tuple[Expr, ...]:
        flat = [e for pair in self.whens for e in pair]
        return (*flat, self.default) if self.default is not None else tuple(flat)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        n = len(self.whens)
        whens = tuple((children[2 * i], children[2 * i + 1]) for i in range(n))
        default = children[2 * n] if self.default is not None else None
        return replace(self, whens=whens, default=default)

    def sql(self) -> str:
        parts = " ".join(f"WHEN {c.sql()} THEN {r.sql()}" for c, r in self.whens)
        tail = f" ELSE {self.default.sql()}" if self.default is not None else ""
        return f"CASE {parts}{tail} END"


@dataclass(frozen=True, slots=True)
class InList(Expr):
    arg: Expr
    values: tuple[Expr, ...]
    negated: bool = False

    @property
    def dtype(self) -> pa.DataType:
        return pa.bool_()

    def children(self) -> tuple[Expr, ...]:
        return (self.arg, *self.values)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return replace(self, arg=children[0], values=tuple(children[1:]))

    def sql(self) -> str:
        word = "NOT IN" if self.negated else "IN"
        return f"{self.arg.sql()} {word} ({', '.join(v.sql() for v in self.values)})"


@dataclass(frozen=True, slots=True)
class AggCall:
    """An aggregate function call of an Aggregate node: ``func`` over ``args`` of its input."""

    func: str  # count, count_star, sum, min, max, avg
    args: tuple[Expr, ...]
    type: pa.DataType
    distinct: bool = False
    filter: Expr | None = None
    # A Python aggregate's (func 'py:name:n') line:column in the SQL text, for its errors.
    where: str | None = field(default=None, compare=False)

    def sql(self) -> str:
        if self.func == "count_star":
            inner = "*"
        else:
            inner = ("DISTINCT " if self.distinct else "") + ", ".join(a.sql() for a in self.args)
        name = "count" if self.func == "count_star" else self.func
        if name.startswith("py:"):
            from sqlengine.functions_python import display_name

            name = display_name(name)
        text = f"{name}({inner})"
        if self.filter is not None:
            text += f" FILTER (WHERE {self.filter.sql()})"
        return text

    def columns(self) -> set[int]:
        cols: set[int] = set()
        for a in self.args:
            cols |= a.columns()
        if self.filter is not None:
            cols |= self.filter.columns()
        return cols


def literal_sql(value: object, t: pa.DataType) -> str:
    """A literal as Flink SQL text."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, dt.datetime):
        return f"TIMESTAMP '{value.isoformat(sep=' ')}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, pa.MonthDayNano):
        return f"INTERVAL '{value.months}' MONTH"
    return str(value)


def remap_columns(expr: Expr, mapping: dict[int, int]) -> Expr:
    """Rewrite column positions through ``mapping`` (after a projection changes the input)."""
    if isinstance(expr, ColumnRef):
        return replace(expr, index=mapping[expr.index])
    kids = expr.children()
    if not kids:
        return expr
    return expr.with_children(tuple(remap_columns(k, mapping) for k in kids))


def substitute(expr: Expr, exprs: tuple[Expr, ...]) -> Expr:
    """Replace each column reference ``#i`` by ``exprs[i]`` (inline a projection)."""
    if isinstance(expr, ColumnRef):
        return exprs[expr.index]
    kids = expr.children()
    if not kids:
        return expr
    return expr.with_children(tuple(substitute(k, exprs) for k in kids))


def conjuncts(expr: Expr) -> list[Expr]:
    """Split ``a AND b AND c`` into its parts."""
    if isinstance(expr, Call) and expr.name == "and":
        return [c for a in expr.args for c in conjuncts(a)]
    return [expr]


def disjuncts(expr: Expr) -> list[Expr]:
    """Split ``a OR b OR c`` into its parts."""
    if isinstance(expr, Call) and expr.name == "or":
        return [c for a in expr.args for c in disjuncts(a)]
    return [expr]


def factored_conjuncts(expr: Expr) -> list[Expr]:
    """The conjuncts of ``expr``, with the conjuncts common to every branch of an OR taken
    out of it: ``(k = j AND x) OR (k = j AND y)`` is ``k = j AND (x OR y)`` (so that the
    equality can be a join key; TPC-H's q19 is written so)."""
    out: list[Expr] = []
    for part in conjuncts(expr):
        branches = [[_factor_key(c) for c in conjuncts(b)] for b in disjuncts(part)]
        if len(branches) < 2:
            out.append(part)
            continue
        common = [c for c in branches[0] if all(c in b for b in branches[1:])]
        if not common:
            out.append(part)
            continue
        out.extend(common)
        rests = [[c for c in b if c not in common] for b in branches]
        if all(rests):  # a branch with nothing left is TRUE, and so is the OR
            ored = conjunction(rests[0])
            for r in rests[1:]:
                ored = Call("or", (ored, conjunction(r)), pa.bool_())
            assert ored is not None
            out.append(ored)
    return out


def _factor_key(e: Expr) -> Expr:
    """``e``, an equality's sides in one order (``t.k = s.k`` and ``s.k = t.k`` are one factor
    of ``(t.k = s.k AND x) OR (s.k = t.k AND y)``)."""
    if isinstance(e, Call) and e.name in ("eq", "ne") and len(e.args) == 2:
        a, b = e.args
        if b.sql() < a.sql():
            return Call(e.name, (b, a), e.type)
    return e


def conjunction(parts: list[Expr]) -> Expr | None:
    """``AND`` the parts together (None for no parts)."""
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = Call("and", (out, p), pa.bool_())
    return out


# Functions whose value depends on when they run, or that draw random numbers (never folded
# to a constant, never shared between two calls).
# The computed column a WATERMARK is declared for ('ts AS TO_TIMESTAMP_LTZ(ms, 3)'): its
# expression wrapped in this call, which marks a projection's column as a rowtime attribute
# (as a PROCTIME() call marks one as processing time) and evaluates to its argument.
ROWTIME = "$rowtime"

VOLATILE = frozenset({"proctime", "rand", "rand_integer", "uuid", "current_timestamp",
                      "localtimestamp", "current_date", "current_row_timestamp",
                      "unix_timestamp"})


def is_volatile(name: str) -> bool:
    """Whether a call of ``name`` must run every time (never folded, never shared)."""
    if name in VOLATILE:
        return True
    if not name.startswith("py:"):  # (functions_python.PREFIX: only Python functions vary)
        return False
    from sqlengine.functions_python import is_volatile as python_volatile

    return python_volatile(name)


def is_constant(expr: Expr) -> bool:
    """True when ``expr`` reads no column and calls no volatile function: one value, known
    before the query runs (literals, ``1 + 2``, ``CAST('1' AS INT)``)."""
    return not any(isinstance(x, ColumnRef) or (isinstance(x, Call) and is_volatile(x.name))
                   or not x.foldable for x in expr.walk())
