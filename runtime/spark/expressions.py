"""Bound expressions as Spark SQL text over positional columns c0, c1, ... with Flink's
semantics; None where Spark's built-ins would differ (the caller then runs our own Arrow kernels
in mapInArrow instead)."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re

import pyarrow as pa

from sqlengine import types as T
from sqlengine.plan.expressions import ROWTIME, Call, Case, Cast, ColumnRef, Expr, InList, Literal


def _past_spark_digits(t: pa.DataType) -> bool:
    """A DECIMAL of more than Spark's 38 digits (an exact comparison's, up to 76)."""
    return pa.types.is_decimal(t) and t.precision > 38


def spark_type(t: pa.DataType) -> str:
    """The Spark SQL name of an Arrow type (timestamps without time zone)."""
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    names = {pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INT",
             pa.int64(): "BIGINT", pa.float32(): "FLOAT", pa.float64(): "DOUBLE",
             pa.date32(): "DATE"}
    if t in names:
        return names[t]
    if pa.types.is_decimal(t) and not _past_spark_digits(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "STRING"
    if pa.types.is_timestamp(t) and t.tz is None:
        return "TIMESTAMP_NTZ"
    if pa.types.is_binary(t):
        return "BINARY"
    if pa.types.is_null(t):
        return "VOID"
    from sqlengine.errors import NotSupportedError

    msg = f"{T.type_name(t)} values have no Spark translation yet (run natively)"
    raise NotSupportedError(msg)


def ddl(schema: pa.Schema, names: list[str] | None = None) -> str:
    """A Spark DDL schema string ("c0 BIGINT, c1 STRING")."""
    names = names or [f"c{i}" for i in range(len(schema))]
    return ", ".join(f"`{n}` {spark_type(f.type)}" for n, f in zip(names, schema))


def _literal(e: Literal) -> str:
    v, t = e.value, e.type
    if v is None:
        return f"CAST(NULL AS {spark_type(t)})" if not pa.types.is_null(t) else "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, dt.timedelta):
        return f"INTERVAL {int(v.total_seconds() * 1000)} MILLISECONDS"
    if isinstance(v, dt.datetime):
        return f"TIMESTAMP_NTZ '{v.isoformat(sep=' ')}'"
    if isinstance(v, dt.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, float) and not math.isfinite(v):  # (Python's repr is a bare nan / inf)
        text = "NaN" if math.isnan(v) else "Infinity" if v > 0 else "-Infinity"
        return f"CAST('{text}' AS {spark_type(t)})"
    if isinstance(v, decimal.Decimal | int | float):
        return f"CAST({v!r} AS {spark_type(t)})" if not isinstance(v, decimal.Decimal) \
            else f"CAST('{v}' AS {spark_type(t)})"
    return str(v)


# (not INITCAP: Flink's starts a word after any character but a letter or digit, Spark's
# after a space; not REPLACE: Flink's Java replace puts the text between the characters for
# an empty search, Spark's leaves the string)
_SAME = {"upper": "upper", "lower": "lower", "reverse": "reverse",
         "char_length": "char_length", "abs": "abs", "power": "power", "sqrt": "sqrt",
         "exp": "exp", "coalesce": "coalesce",
         "nullif": "nullif", "repeat": "repeat", "concat": "concat",
         "date_format": "date_format"}
_EXTRACT = {"year": "year", "quarter": "quarter", "month": "month", "week": "weekofyear",
            "day": "dayofmonth", "doy": "dayofyear", "dow": "dayofweek", "hour": "hour",
            "minute": "minute", "second": "second"}
_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "mod": "%", "eq": "=", "ne": "<>",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "AND", "or": "OR"}


def to_sql(e: Expr) -> str | None:
    """Spark SQL for ``e``, or None when Spark would not give Flink's answer."""
    if isinstance(e, ColumnRef):
        return f"`c{e.index}`"
    if isinstance(e, Literal):
        if isinstance(e.value, dt.time) or _past_spark_digits(e.type):
            return None  # (no TIME in Spark)
        return _literal(e)
    texts = [to_sql(k) for k in e.children()]
    kids = [k for k in texts if k is not None]
    if len(kids) < len(texts):
        return None
    if isinstance(e, Cast):
        src = e.arg.dtype
        if pa.types.is_string(e.type) and (pa.types.is_boolean(src) or
                                           pa.types.is_timestamp(src) or
                                           pa.types.is_floating(src)):
            return None  # Flink prints TRUE / millisecond timestamps / Java doubles
        if pa.types.is_integer(src) and pa.types.is_timestamp(e.type):
            return None  # (Spark casts no integer to a TIMESTAMP_NTZ: our kernel's epoch)
        if pa.types.is_timestamp(e.type) and T.UNIT_DIGITS[e.type.unit] < 6 and not (
                pa.types.is_date(src) or (pa.types.is_timestamp(src) and
                                          T.UNIT_DIGITS[src.unit] <= T.UNIT_DIGITS[e.type.unit])):
            return None  # (Spark's timestamps keep their microseconds: our kernel cuts them)
        if _past_spark_digits(e.type):
            return None  # (an exact comparison's 42 digits: our kernel's)
        if pa.types.is_integer(e.type) and (
                pa.types.is_floating(src) or pa.types.is_decimal(src) or
                (pa.types.is_integer(src) and src.bit_width > e.type.bit_width)):
            return None  # (Java's narrowing, as Flink's: 2147483647 as TINYINT is -1, 1e308
            # as INT 2147483647, NaN 0; Spark's ANSI mode fails with CAST_OVERFLOW)
        if T.is_string(src) and (pa.types.is_integer(e.type) or pa.types.is_boolean(e.type)
                                 or pa.types.is_floating(e.type) or pa.types.is_date(e.type)
                                 or pa.types.is_timestamp(e.type) or
                                 pa.types.is_decimal(e.type)):
            # (Flink's text: '42.5' is INT 42, a tab is no number, ' yes' no BOOLEAN, '-inf'
            # no DOUBLE, '42' the DATE 0042-01-01, '2024-01-05T10:11:12' no DATE, full-width
            # digits no DECIMAL; Spark reads each otherwise)
            return None
        if pa.types.is_decimal(e.type) and pa.types.is_floating(src):
            return None  # (a double's digits as Flink reads them: our kernel)
        # (a number past a DECIMAL's digits is NULL, as in Flink: Spark's ANSI CAST failed,
        # NUMERIC_VALUE_OUT_OF_RANGE; its try_cast gives the NULL)
        word = "try_cast" if e.safe or (pa.types.is_decimal(e.type) and (
            pa.types.is_integer(src) or pa.types.is_decimal(src))) else "CAST"
        return f"{word}({kids[0]} AS {spark_type(e.type)})"
    if isinstance(e, Case):
        parts = " ".join(f"WHEN {kids[2 * i]} THEN {kids[2 * i + 1]}"
                         for i in range(len(e.whens)))
        tail = f" ELSE {kids[-1]}" if e.default is not None else ""
        return f"CASE {parts}{tail} END"
    if isinstance(e, InList):
        word = "NOT IN" if e.negated else "IN"
        return f"({kids[0]} {word} ({', '.join(kids[1:])}))"
    if not isinstance(e, Call):
        return None
    return _call(e, kids)


def _no_escape(pattern: Expr) -> str | None:
    """An ESCAPE clause that escapes nothing in ``pattern``: without one Spark's LIKE takes a
    backslash as its escape, where Flink's (and DuckDB's) takes it literally. None when the
    pattern is not a constant."""
    if not isinstance(pattern, Literal):
        return None
    if pattern.value is None:
        return ""
    text = str(pattern.value)
    free = next((c for c in "!#$&~^|@`" + "".join(map(chr, range(0x2400, 0x2500)))
                 if c not in text), None)
    return None if free is None else f" ESCAPE '{free}'"


def _shift(e: Call, k: list[str]) -> str | None:
    """DATE / TIMESTAMP plus or minus an interval literal, with Flink's result type."""
    at = 1 if T.is_interval(e.args[1].dtype) else 0
    lit, base = e.args[at], k[1 - at]
    if not isinstance(lit, Literal) or lit.value is None:
        return None
    sign = -1 if e.name == "subtract" else 1
    if isinstance(lit.value, pa.MonthDayNano):
        months = sign * lit.value.months
        if pa.types.is_date(e.type):
            return f"add_months({base}, {months})"  # clamps to the month's end, as Flink
        return f"({base} + make_ym_interval(0, {months}))"
    if not isinstance(lit.value, dt.timedelta):
        return None
    ms = sign * int(lit.value / dt.timedelta(milliseconds=1))
    if pa.types.is_date(e.type):
        return f"date_add({base}, {int(ms / 86_400_000)})"  # whole days, toward zero
    return f"({base} + INTERVAL {ms} MILLISECONDS)"


def _wrapping(name: str, a: str, b: str, t: pa.DataType) -> str:
    """Integer + - * as Java's, wrapping around past the type's range, as Flink's (Spark's ANSI
    mode fails with ARITHMETIC_OVERFLOW): Spark's try_ form, and where it overflows (NULL
    from two values) the result taken modulo 2^bits in a wider type."""
    bits = t.bit_width
    wide = "BIGINT" if bits < 64 else "DECIMAL(38, 0)"
    op = {"add": "+", "subtract": "-", "multiply": "*"}[name]
    wrapped = _wrapped(f"CAST({a} AS {wide}) {op} CAST({b} AS {wide})", bits, spark_type(t))
    return (f"coalesce(try_{name}({a}, {b}), CASE WHEN {a} IS NULL OR {b} IS NULL THEN NULL "
            f"ELSE {wrapped} END)")


def _wrapped(wide: str, bits: int, out: str) -> str:
    """``wide`` (computed in a wider type) as a ``bits``-bit integer of Spark type ``out``,
    wrapped around as Java's narrowing does."""
    half, whole = 1 << (bits - 1), 1 << bits
    return f"CAST(pmod({wide} + {half}, {whole}) - {half} AS {out})"


def _positive(e: Expr, least: int = 1) -> bool:
    """Whether ``e`` is an integer constant of at least ``least``."""
    return isinstance(e, Literal) and isinstance(e.value, int) and e.value >= least


def _call(e: Call, k: list[str]) -> str | None:
    name, t = e.name, e.type
    if name == ROWTIME:  # (a computed rowtime column's mark: its value)
        return k[0]
    if name.startswith("py:"):
        return None  # our kernel calls it in mapInArrow (the function shipped with the plan)
    out = spark_type(t)
    if name == "divide":
        if pa.types.is_integer(t):
            return f"CAST(({k[0]} div {k[1]}) AS {out})"
        if pa.types.is_floating(t):
            # Java's: x / 0.0 is an infinity of the signs' product, 0 / 0.0 and NaN / 0.0
            # NaN (Spark's ANSI mode fails with DIVIDE_BY_ZERO)
            a, b = k
            negative_zero = f"(CAST({b} AS STRING) LIKE '-%')"
            by_zero = (f"CASE WHEN {a} IS NULL THEN NULL WHEN {a} = 0 OR isnan({a}) THEN "
                       f"CAST('NaN' AS {out}) WHEN ({a} > 0) <> {negative_zero} THEN "
                       f"CAST('Infinity' AS {out}) ELSE CAST('-Infinity' AS {out}) END")
            return f"CAST(CASE WHEN {b} = 0 THEN {by_zero} ELSE {a} / {b} END AS {out})"
        return f"CAST(({k[0]} / {k[1]}) AS {out})"
    if name in ("add", "subtract", "multiply") and pa.types.is_integer(t):
        return _wrapping(name, k[0], k[1], t)
    if name == "negate" and pa.types.is_integer(t):
        return _wrapping("subtract", f"CAST(0 AS {out})", k[0], t)
    if name in ("add", "subtract") and T.is_temporal(t):
        return _shift(e, k)
    if name == "scalar_subquery_value":
        return (f"CASE WHEN {k[0]} > 1 THEN raise_error('a scalar subquery returned more "
                f"than one row') ELSE {k[1]} END")
    if name in _INFIX:
        text = f"({k[0]} {_INFIX[name]} {k[1]})"
        if name in ("add", "subtract", "multiply") and pa.types.is_decimal(t):
            # (a DECIMAL past its digits is NULL, as Flink's; Spark's ANSI mode failed the
            # query: NUMERIC_VALUE_OUT_OF_RANGE)
            return f"try_cast(try_{name}({k[0]}, {k[1]}) AS {out})"
        if name in ("add", "subtract", "multiply", "mod"):
            if pa.types.is_timestamp(t):
                return text
            return f"CAST({text} AS {out})"
        if name in ("eq", "ne", "lt", "le", "gt", "ge") and \
                any(pa.types.is_floating(a.dtype) for a in e.args):
            # Java's comparisons, as Flink's: a NaN is neither equal to, below nor above
            # anything (Spark orders NaN above every number and equal to itself)
            if name == "ne":
                return f"({text} OR isnan({k[0]}) OR isnan({k[1]}))"
            return f"({text} AND NOT isnan({k[0]}) AND NOT isnan({k[1]}))"
        return text
    if name == "negate":
        return f"(-{k[0]})"
    if name == "not":
        return f"(NOT {k[0]})"
    simple = {"is_null": "IS NULL", "is_not_null": "IS NOT NULL", "is_true": "IS TRUE",
              "is_false": "IS FALSE", "is_not_true": "IS NOT TRUE",
              "is_not_false": "IS NOT FALSE"}
    if name in simple:
        return f"({k[0]} {simple[name]})"
    if name in ("like", "not_like"):
        escape = f" ESCAPE {k[2]}" if len(k) > 2 else _no_escape(e.args[1])
        if escape is None:
            return None
        return f"({k[0]} {'NOT ' if name == 'not_like' else ''}LIKE {k[1]}{escape})"
    if name == "concat_op":
        return f"concat({k[0]}, {k[1]})"
    if name in ("trim", "ltrim", "rtrim"):
        where = {"trim": "BOTH", "ltrim": "LEADING", "rtrim": "TRAILING"}[name]
        chars = k[1] if len(k) > 1 else "' '"
        return f"trim({where} {chars} FROM {k[0]})"
    if name == "substring":
        if not _positive(e.args[1]) or (len(e.args) > 2 and not _positive(e.args[2], 0)):
            return None  # Spark counts positions <= 0 and negative lengths differently
        return f"substring({', '.join(k)})"
    if name == "position":
        if len(k) == 2:
            return f"position({k[0]}, {k[1]})"
        needle = e.args[0]
        if not (_positive(e.args[2]) and isinstance(needle, Literal) and needle.value):
            return None  # Spark finds '' at the start position, Flink at 1
        return f"locate({k[0]}, {k[1]}, {k[2]})"
    if name == "char_fit":
        return f"rpad({k[0]}, {k[1]}, ' ')"  # cuts a longer string too
    if name == "varchar_fit":
        return f"substring({k[0]}, 1, {k[1]})"
    if name in ("sign", "floor", "ceil", "round"):
        fn = {"sign": "signum", "floor": "floor", "ceil": "ceil", "round": "round"}[name]
        bits = {8: 8, 16: 16, 32: 32}.get(t.bit_width) if pa.types.is_integer(t) else None
        if name == "round" and bits:
            # Flink's ROUND(TINYINT 125, -1) is 130 wrapped around to -126; Spark (ANSI)
            # raises on the overflow: round as BIGINT, then wrap as Java's narrowing does.
            wide = f"round(CAST({k[0]} AS BIGINT), {', '.join(k[1:]) or '0'})"
            return _wrapped(wide, bits, out)
        if name in ("floor", "ceil") and pa.types.is_floating(t):
            # (Spark's floor / ceil of a DOUBLE is a BIGINT: 1e308 and Infinity failed with
            # ARITHMETIC_OVERFLOW; Java's Math.floor keeps them, -0.0 and NaN too)
            a = k[0]
            return (f"CASE WHEN isnan({a}) OR abs({a}) >= 4503599627370496 OR {a} = 0 "
                    f"THEN {a} ELSE CAST({fn}({a}) AS {out}) END")
        return f"CAST({fn}({', '.join(k)}) AS {out})"
    if name in ("greatest", "least"):
        # Flink: NULL if any argument is NULL (Spark skips NULLs).
        nulls = " OR ".join(f"{x} IS NULL" for x in k)
        return f"CASE WHEN {nulls} THEN CAST(NULL AS {out}) ELSE {name}({', '.join(k)}) END"
    if name == "if":
        return f"IF({k[0]}, {k[1]}, {k[2]})"
    if name.startswith("extract_"):
        unit = name.removeprefix("extract_")
        if unit not in _EXTRACT:
            return None
        return f"CAST({_EXTRACT[unit]}({k[0]}) AS BIGINT)"
    if name in ("regexp_extract", "regexp") and _bad_pattern(e.args[1]):
        return None  # (Flink: NULL / FALSE, our kernel's; Spark failed, INVALID_PARAMETER_VALUE)
    if name == "regexp_extract":
        group = k[2] if len(k) > 2 else "0"  # (Flink's default: the whole match)
        return f"nullif(regexp_extract({k[0]}, {k[1]}, {group}), '')"
    if name in ("ln", "log10"):
        # (Java's Math.log: -Infinity at 0, NaN below; Spark's ln gives NULL for both)
        x = f"CAST({k[0]} AS DOUBLE)"
        return f"CASE WHEN {x} > 0 THEN {name}({x}) WHEN {x} = 0 THEN CAST('-Infinity' AS " \
               f"DOUBLE) WHEN {x} < 0 THEN CAST('NaN' AS DOUBLE) ELSE {x} END"
    if name == "split_index":
        sep = e.args[1]
        if not isinstance(sep, Literal) or not sep.value:
            return None  # (Flink splits at whitespace for '': the Arrow kernel's)
        pattern = "'" + re.escape(str(sep.value)).replace("\\", "\\\\").replace("'", "\\'") + "'"
        # (Flink: NULL at a negative index and for '', which has no parts; Spark's index 0
        # is an error, and it splits '' into one empty part)
        return f"IF({k[2]} < 0 OR {k[0]} = '', NULL, try_element_at(split({k[0]}, " \
               f"{pattern}), CAST({k[2]} AS INT) + 1))"
    if name == "regexp":
        # Flink: an empty regex matches nothing.
        return f"IF({k[1]} = '', IF({k[0]} IS NULL, NULL, false), ({k[0]} RLIKE {k[1]}))"
    if name in ("lpad", "rpad"):
        # Flink: NULL for a negative width or an empty padding (Spark: '' and no padding)
        return f"IF({k[1]} < 0 OR {k[2]} = '', NULL, {name}({', '.join(k)}))"
    if name == "date_format" and not _spark_formats(e):
        return None
    if name in _SAME:
        return f"CAST({_SAME[name]}({', '.join(k)}) AS {out})"
    return None


# DATE_FORMAT pattern fields Spark's formatter writes as Java's does (five letters, a
# stand-alone 'L', week fields... it refuses or writes otherwise: our kernel's then)
_SPARK_FIELDS = {"yyyy", "yy", "MM", "MMM", "MMMM", "dd", "HH", "hh", "mm", "ss", "SSS", "a",
                 "EEE", "EEEE"}


def _spark_formats(e: Call) -> bool:
    """Whether Spark's date_format gives Flink's text for this call: a TIMESTAMP (a text is
    read as 'yyyy-MM-dd HH:mm:ss' first, which Spark does not) and a constant pattern of
    fields Spark writes as Java does."""
    if not pa.types.is_timestamp(e.args[0].dtype):
        return False
    if len(e.args) < 2:
        return True
    pattern = e.args[1]
    if not isinstance(pattern, Literal) or pattern.value is None:
        return False
    fields = [m.group(0) for m in re.finditer(r"'[^']*'|([A-Za-z])\1*", str(pattern.value))
              if not m.group(0).startswith("'")]
    return all(f in _SPARK_FIELDS for f in fields)


def _bad_pattern(pattern: Expr) -> bool:
    """Whether a constant regular expression does not compile (an invalid one fails a Spark
    job; Flink's functions give NULL or FALSE, as our kernels)."""
    if not isinstance(pattern, Literal) or not isinstance(pattern.value, str):
        return False
    try:
        re.compile(pattern.value)
    except re.error:
        return True
    return False
