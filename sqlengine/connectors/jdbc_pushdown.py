"""The jdbc connector's filter pushdown: the query's filters on a scan (conjuncts, on the table's
columns) that PostgreSQL can evaluate exactly as the engine does become the WHERE clause of the
SELECT sent to the server, their literals bound as parameters (no literal is spliced into the
SQL text). The engine still applies every filter to the rows read (the source operator's
filters), so what is pushed only saves rows on the wire: a filter that cannot be pushed is
applied by the engine alone.

Pushed, when all of a conjunct can be: comparisons (=, <>, <, <=, >, >=) between a column and a
literal or two columns, IN / NOT IN lists of literals (NULL among them as in SQL), IS [NOT]
NULL, IS [NOT] TRUE / FALSE, a BOOLEAN column as a condition, and AND / OR / NOT of those; a
column may be widened exactly on the way (INT to BIGINT or DECIMAL, DECIMAL to a wider DECIMAL,
DATE to TIMESTAMP). Not pushed: arithmetic and functions, LIKE, FLOAT / DOUBLE columns and
literals (NaN orders differently), any other type.

Exactness: strings are compared in PostgreSQL with ``COLLATE "C"`` for <, <=, >, >= (code
point order, the engine's; equality needs no collation), and a column is only pushed when the
server holds it in a type with the declared type's values and comparisons (``columns_safe``:
INT columns as int2/4/8; DECIMAL(p, s) as an integer or numeric with a scale of at most s;
STRING as text or varchar, not CHAR(n), whose comparisons ignore trailing blanks; BOOLEAN as
boolean; DATE as date; TIMESTAMP(p) as timestamp of at most p fractional digits). The server's
types are read when the scan starts; EXPLAIN shows the filters pushed given the declared types.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from sqlengine.plan.expressions import Call, Cast, ColumnRef, Expr, InList, Literal

_OPS = {"eq": "=", "ne": "<>", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
_FLIP = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_ORDERING = ("lt", "le", "gt", "ge")


@dataclass(frozen=True, slots=True)
class Pushed:
    """The WHERE clause of the pushed filters (``$n`` parameters, numbered from ``first``),
    its parameters' values as text, and the filters it holds."""

    sql: str
    params: tuple[str, ...]
    filters: tuple[Expr, ...]


def _family(t: pa.DataType) -> str | None:
    """The comparison family of a column type pushdown handles (None: not pushed)."""
    if pa.types.is_integer(t):
        return "int"
    if pa.types.is_decimal(t):
        return "decimal"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_date32(t):
        return "date"
    if pa.types.is_timestamp(t) and t.tz is None:
        return "timestamp"
    return None


_PG_TYPE = {"int": "int8", "decimal": "numeric", "string": "text", "bool": "boolean",
            "date": "date", "timestamp": "timestamp"}


def _widening(frm: pa.DataType, to: pa.DataType) -> bool:
    """Whether CAST(frm AS to) keeps every value and its order (the column can be compared as
    it is)."""
    f, t = _family(frm), _family(to)
    if f is None or t is None:
        return False
    if f == t == "int":
        return to.bit_width >= frm.bit_width
    if f == "int" and t == "decimal":
        digits = {8: 3, 16: 5, 32: 10, 64: 19}[frm.bit_width]
        return to.precision - to.scale >= digits
    if f == t == "decimal":
        return to.scale >= frm.scale and to.precision - to.scale >= frm.precision - frm.scale
    if f == "date" and t == "timestamp":
        return True
    if f == t == "timestamp":
        return _digits(to) >= _digits(frm)
    return False


def _digits(t: pa.DataType) -> int:
    return {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]


def _text(value: object, family: str) -> str | None:
    """A literal's value as the parameter text PostgreSQL casts to its type (None: it
    cannot be sent exactly)."""
    if isinstance(value, bool):
        return "true" if value else "false" if family == "bool" else None
    if family == "int" and isinstance(value, int):
        return str(value)
    if family in ("int", "decimal") and isinstance(value, decimal.Decimal | int):
        return format(decimal.Decimal(value), "f")
    if family == "string" and isinstance(value, str):
        return value if "\x00" not in value else None  # (PostgreSQL text holds no NUL)
    if family == "timestamp" and isinstance(value, dt.datetime):
        if getattr(value, "nanosecond", 0):  # (PostgreSQL keeps microseconds: it would
            return None  # round the literal, and compare with another value)
        return value.isoformat(sep=" ")
    if family == "date" and isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value.isoformat()
    return None


class _Translator:
    """Exact translations of filter expressions into PostgreSQL's SQL, or None."""

    def __init__(self, names: list[str], types: list[pa.DataType],
                 allowed: Callable[[int], bool], quote: Callable[[str], str],
                 first: int) -> None:
        self.names = names
        self.types = types
        self.allowed = allowed  # (a column the server holds in a safe type)
        self.quote = quote
        self.params: list[str] = []
        self.first = first

    def _param(self, text: str, family: str) -> str:
        self.params.append(text)
        return f"${self.first + len(self.params) - 1}::{_PG_TYPE[family]}"

    def _column(self, e: Expr) -> tuple[str, str] | None:
        """(its SQL, its family) for a column, exactly widened or not."""
        if isinstance(e, Cast) and not e.safe and isinstance(e.arg, ColumnRef) and \
                _widening(e.arg.type, e.type):
            inner = self._column(e.arg)
            family = _family(e.type)
            return (inner[0], family) if inner is not None and family is not None else None
        if isinstance(e, ColumnRef) and self.allowed(e.index):
            family = _family(self.types[e.index])
            if family is not None:
                return self.quote(self.names[e.index]), family
        return None

    def _literal(self, e: Expr, family: str) -> str | None:
        if not isinstance(e, Literal) or e.value is None:
            return None
        lit = _family(e.type)
        compatible = lit == family or {lit, family} <= {"int", "decimal"} or \
            (lit, family) in (("date", "timestamp"), ("timestamp", "date"))
        if lit is None or not compatible:
            return None
        text = _text(e.value, lit)
        return None if text is None else self._param(text, lit)

    def exact(self, e: Expr) -> str | None:
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, InList):
            return self._in(e)
        col = self._column(e)
        if col is not None and col[1] == "bool":
            return col[0]
        return None

    def _call(self, e: Call) -> str | None:
        name, args = e.name, e.args
        if name in ("and", "or"):
            parts = [self.exact(a) for a in args]
            if any(p is None for p in parts):
                return None
            return "(" + f" {name.upper()} ".join(parts) + ")"  # type: ignore[arg-type]
        if name == "not" and len(args) == 1:
            inner = self.exact(args[0])
            return None if inner is None else f"(NOT {inner})"
        if name in ("is_null", "is_not_null") and len(args) == 1:
            col = self._column(args[0])
            if col is None:
                return None
            return f"({col[0]} IS {'NOT ' if name == 'is_not_null' else ''}NULL)"
        if name in ("is_true", "is_false", "is_not_true", "is_not_false") and len(args) == 1:
            col = self._column(args[0])
            if col is None or col[1] != "bool":
                return None
            return f"({col[0]} IS {name[3:].upper().replace('_', ' ')})"
        if name in _OPS and len(args) == 2:
            return self._compare(name, args[0], args[1])
        return None

    def _compare(self, op: str, a: Expr, b: Expr) -> str | None:
        left = self._column(a)
        if left is None:
            left_b = self._column(b)
            if left_b is None:
                return None
            return self._compare(_FLIP[op], b, a)
        family = left[1]
        right = self._column(b)
        if right is not None:
            same = right[1] == family or {right[1], family} <= {"int", "decimal"} or \
                {right[1], family} == {"date", "timestamp"}
            if not same:
                return None
            other = right[0]
        else:
            other = self._literal(b, family)  # type: ignore[assignment]
            if other is None:
                return None
        column = left[0]
        if family == "string" and op in _ORDERING:  # (code point order, the engine's)
            column = f'{column} COLLATE "C"'
            other = f'{other} COLLATE "C"'
        return f"({column} {_OPS[op]} {other})"

    def _in(self, e: InList) -> str | None:
        col = self._column(e.arg)
        if col is None:
            return None
        values = []
        for v in e.values:
            if isinstance(v, Literal) and v.value is None:
                values.append("NULL")
                continue
            text = self._literal(v, col[1])
            if text is None:
                return None
            values.append(text)
        word = "NOT IN" if e.negated else "IN"
        return f"({col[0]} {word} ({', '.join(values)}))"


def push(filters: tuple[Expr, ...], schema: pa.Schema, quote: Callable[[str], str],
         allowed: Callable[[int], bool] = lambda _i: True, first: int = 1) -> Pushed:
    """The filters (conjuncts, on ``schema``'s columns) PostgreSQL evaluates exactly, as a
    WHERE clause; ``allowed`` says which columns the server holds in a safe type."""
    names, types = schema.names, list(schema.types)
    clauses: list[str] = []
    params: list[str] = []
    pushed: list[Expr] = []
    for f in filters:
        t = _Translator(names, types, allowed, quote, first + len(params))
        sql = t.exact(f)
        if sql is None:
            continue
        clauses.append(sql)
        params.extend(t.params)
        pushed.append(f)
    return Pushed(" AND ".join(clauses), tuple(params), tuple(pushed))


# -- the server's column types ------------------------------------------------------------------

COLUMN_TYPES_SQL = (
    "SELECT a.attname, t.typname, a.atttypmod, COALESCE(c.collisdeterministic, true) "
    "FROM pg_catalog.pg_attribute a "
    "JOIN pg_catalog.pg_type t ON t.oid = a.atttypid "
    "LEFT JOIN pg_catalog.pg_collation c ON c.oid = a.attcollation "
    "WHERE a.attrelid = $1::text::regclass AND a.attnum > 0 AND NOT a.attisdropped")


def columns_safe(schema: pa.Schema, server: dict[str, tuple[str, int, bool]]) -> set[int]:
    """The columns (positions of ``schema``) whose server type (name, typmod) has the declared
    type's values and comparisons, so that a filter on them can be pushed."""
    safe: set[int] = set()
    for i, f in enumerate(schema):
        found = server.get(f.name)
        if found is None:
            continue
        typ, mod, deterministic = found
        family = _family(f.type)
        ok = False
        if family == "int":
            ok = typ in ("int2", "int4", "int8")
        elif family == "decimal":
            scale = (mod - 4) & 0xFFFF if mod >= 4 else None  # (numeric's typmod)
            ok = typ in ("int2", "int4", "int8") or \
                (typ == "numeric" and scale is not None and scale <= f.type.scale)
        elif family == "string":
            # (a nondeterministic collation, an ICU one ignoring case say, has 'abc' = 'ABC':
            # a pushed <> or NOT IN dropped rows the engine keeps)
            ok = typ in ("text", "varchar") and deterministic
        elif family == "bool":
            ok = typ == "bool"
        elif family == "date":
            ok = typ == "date"
        elif family == "timestamp":
            ok = typ == "timestamp" and (6 if mod < 0 else mod) <= _digits(f.type)
        if ok:
            safe.add(i)
    return safe
