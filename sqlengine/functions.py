"""Scalar function signatures: arity and Flink's result-type rules (kernels live in runtime)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import BindError

# An inference returns (result type, the type each argument is cast to).
Inference = Callable[[list[pa.DataType]], tuple[pa.DataType, list[pa.DataType]]]
# One whose result type depends on constant arguments too (their values, None if not constant).
ValueInference = Callable[[list[pa.DataType], list[object]],
                          tuple[pa.DataType, list[pa.DataType]]]


@dataclass(frozen=True, slots=True)
class Signature:
    name: str
    min_args: int
    max_args: int | None
    infer: Inference
    literal_args: tuple[int, ...] = ()  # argument positions that must be literals
    by_value: ValueInference | None = None  # used instead of ``infer`` when given

    def resolve(self, types: list[pa.DataType],
                values: list[object]) -> tuple[pa.DataType, list[pa.DataType]]:
        """(result type, argument types) for arguments of ``types`` (constants' ``values``)."""
        return self.by_value(types, values) if self.by_value else self.infer(types)


def _err(name: str, types: list[pa.DataType], wanted: str) -> BindError:
    got = ", ".join(T.type_name(t) for t in types)
    return BindError(f"{name.upper()} expects {wanted}, got ({got})")


def _arith(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        a, b = types
        if a == T.NULL and b == T.NULL:
            return T.INT, [T.INT, T.INT]
        a = b if a == T.NULL else a
        b = a if b == T.NULL else b
        # Flink: DATE +/- an interval is a DATE (a day-time interval counts whole days),
        # TIMESTAMP +/- an interval a TIMESTAMP; months clamp to the end of the month.
        if name in ("add", "subtract") and T.is_temporal(a) and T.is_interval(b):
            return a, [a, b]
        if name == "add" and T.is_interval(a) and T.is_temporal(b):
            return b, [a, b]
        if name in ("add", "subtract") and a == b and T.is_interval(a):
            return a, [a, b]
        if not (T.is_numeric(a) and T.is_numeric(b)):
            if name in ("add", "subtract") and T.is_temporal(a) and T.is_numeric(b):
                # (PostgreSQL's and DuckDB's date + 5, which Flink refuses too)
                raise _err(name, types, "numeric arguments (to add days to a date, add an "
                           "interval: d + INTERVAL '5' DAY)")
            raise _err(name, types, "numeric arguments")
        if pa.types.is_floating(a) or pa.types.is_floating(b):
            # Flink 2.3 (TYPEOF): FLOAT with an integer stays FLOAT; with a DECIMAL it is
            # DOUBLE (the decimal read exactly, the float widened: 3.10 + 3.1f is
            # 6.199999904632568, where it was computed in FLOAT, 6.199999809265137).
            out = T.DOUBLE if T.DOUBLE in (a, b) or pa.types.is_decimal(a) or \
                pa.types.is_decimal(b) else T.FLOAT
            return out, [out, out]
        if pa.types.is_decimal(a) or pa.types.is_decimal(b):
            da, db = T.as_decimal(a), T.as_decimal(b)
            rule = {
                "add": T.decimal_add_type, "subtract": T.decimal_add_type,
                "multiply": T.decimal_multiply_type, "divide": T.decimal_divide_type,
                "mod": T.decimal_mod_type,
            }[name]
            return rule(da, db), [da, db]
        out = T.common_type([a, b])
        if name == "mod":
            # (Flink's MOD and % are of the divisor's type, which holds the remainder: MOD of
            # a BIGINT by an INT is an INT; computed in the wider type)
            return b, [out, out]
        return out, [out, out]

    return infer


def _compare(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    try:
        common = T.comparison_type(types, "compared values")
    except BindError:
        raise _err("comparison", types, "comparable arguments") from None
    return T.BOOLEAN, [common, common]


def _boolean(n: int) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        for t in types:
            if t not in (T.BOOLEAN, T.NULL):
                raise _err("boolean operator", types, "BOOLEAN arguments")
        return T.BOOLEAN, [T.BOOLEAN] * n

    return infer


def _any_to_bool(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    return T.BOOLEAN, list(types)


def _strings(name: str, result: pa.DataType, extra: tuple[pa.DataType, ...] = (),
             n_str: int | None = None) -> Inference:
    """Leading STRING arguments (all of them unless ``n_str``), then ``extra`` typed ones."""

    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        k = len(types) if n_str is None else n_str
        for t in types[:k]:
            if not (T.is_string(t) or t == T.NULL):
                raise _err(name, types, "STRING arguments")
        want = list(extra[: len(types) - k])
        for t, w in zip(types[k:], want):
            if T.is_numeric(w) and not (T.is_numeric(t) or t == T.NULL):
                raise _err(name, types, "numeric position arguments")
            if w == T.INT and T.is_numeric(t) and not (
                    pa.types.is_integer(t) and t.bit_width <= 32):
                # (as Flink: a BIGINT count was cut to 32 bits, REPEAT('ab', 4294967298)
                # gave 'abab')
                raise _err(name, types, "INT position and length arguments (CAST a wider "
                           "one AS INT)")
            if T.is_string(w) and not (T.is_string(t) or t == T.NULL):
                raise _err(name, types, "STRING arguments")
        return result, [T.STRING] * k + want

    return infer


def _concat(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    # Flink's || and CONCAT take strings; other types must be CAST first.
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("concat", types, "STRING arguments")
    return T.STRING, [T.STRING] * len(types)


def _same_numeric(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        t = types[0]
        if not (T.is_numeric(t) or t == T.NULL):
            raise _err(name, types, "a numeric argument")
        t = T.INT if t == T.NULL else t
        return t, [t]

    return infer


def _floor_ceil(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        t = types[0]
        if not (T.is_numeric(t) or t == T.NULL):
            raise _err(name, types, "a numeric argument")
        if pa.types.is_decimal(t):  # Flink keeps the precision: DECIMAL(p, s) -> (p, 0)
            return pa.decimal128(t.precision, 0), [t]
        t = T.DOUBLE if t == T.NULL else t
        return t, [t]

    return infer


def round_decimal_type(t: pa.Decimal128Type, digits: int) -> pa.DataType:
    """Flink's type of ROUND / TRUNCATE(DECIMAL(p, s), digits): the scale is ``digits``
    (at most s, at least 0), with one more integral digit for the carry of rounding up
    (LogicalTypeMerging.findRoundDecimalType)."""
    p, s = t.precision, t.scale
    if digits >= s:
        return t
    if digits < 0:
        return pa.decimal128(min(T.MAX_DECIMAL_PRECISION, 1 + p - s), 0)
    return pa.decimal128(min(T.MAX_DECIMAL_PRECISION, 1 + p - s + digits), digits)


def _round(name: str) -> ValueInference:
    """ROUND / TRUNCATE(x [, digits]): an integer or floating type stays itself; a DECIMAL
    takes the scale of the (constant) digits."""
    def infer(types: list[pa.DataType],
              values: list[object]) -> tuple[pa.DataType, list[pa.DataType]]:
        t = types[0]
        if not (T.is_numeric(t) or t == T.NULL):
            raise _err(name, types, "a numeric argument")
        if len(types) > 1 and not (T.is_integer(types[1]) or types[1] == T.NULL):
            raise _err(name, types, "an integer number of digits")
        t = T.DOUBLE if t == T.NULL else t
        digits = values[1] if len(values) > 1 else 0
        out = round_decimal_type(t, int(digits)) \
            if pa.types.is_decimal(t) and isinstance(digits, int) else t
        return out, [t, *([T.INT] if len(types) > 1 else [])]

    return infer


def _no_values(infer: ValueInference) -> Inference:
    """``infer`` for arguments none of which is known to be constant."""
    return lambda types: infer(types, [None] * len(types))


def _timestampadd(types: list[pa.DataType],
                  values: list[object]) -> tuple[pa.DataType, list[pa.DataType]]:
    """TIMESTAMPADD(unit, n, t): a TIMESTAMP or TIME stays itself, a DATE stays a DATE for
    whole days and more, else it becomes a TIMESTAMP."""
    _unit, n, t = types
    if not (T.is_integer(n) or n == T.NULL) or not (T.is_temporal(t) or T.is_time(t) or
                                                     t == T.NULL):
        raise _err("timestampadd", types[1:], "an integer and a DATE, TIME or TIMESTAMP")
    t = T.TIMESTAMP if t == T.NULL else t
    if values[0] == "MILLISECOND":
        if pa.types.is_date(t):  # (Flink 2.3 has no plan for it either)
            raise _err("timestampadd", types[1:], "a TIME or TIMESTAMP for MILLISECOND")
        if t.unit == "s":  # (a TIMESTAMP(0) / TIME(0) becomes one of milliseconds)
            t = pa.timestamp("ms", tz=t.tz) if pa.types.is_timestamp(t) else pa.time32("ms")
    out = T.TIMESTAMP if pa.types.is_date(t) and values[0] in ("SECOND", "MINUTE", "HOUR") \
        else t
    return out, [T.STRING, T.BIGINT, t]


def _timestampdiff(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    """TIMESTAMPDIFF(unit, t1, t2): the whole units from t1 to t2, an INT."""
    times = [T.is_time(t) for t in types[1:] if t != T.NULL]
    if any(times) and not all(times):
        raise _err("timestampdiff", types[1:], "two TIME or two DATE / TIMESTAMP arguments")
    for t in types[1:]:
        if not (T.is_temporal(t) or T.is_time(t) or t == T.NULL):
            raise _err("timestampdiff", types[1:], "DATE, TIME or TIMESTAMP arguments")
    ltz = [T.is_ltz(t) for t in types[1:] if t != T.NULL]
    if any(ltz) and not all(ltz):  # (as Flink: "TIMESTAMP_LTZ only supports diff between
        # the same type")
        raise _err("timestampdiff", types[1:], "two TIMESTAMP_LTZ arguments, or none")
    return T.INT, [T.STRING] + [T.TIMESTAMP if t == T.NULL else t for t in types[1:]]


def _double(name: str, n: int = 1) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        for t in types:
            if not (T.is_numeric(t) or t == T.NULL):
                raise _err(name, types, "numeric arguments")
        return T.DOUBLE, [T.DOUBLE] * len(types)

    return infer


def _common(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        if name != "coalesce" and any(T.is_opaque(t) for t in types):
            raise _err(name, types, "values with an order (a BITMAP or VARIANT has none)")
        out = T.common_type(types, f"{name.upper()} arguments")
        out = T.STRING if out == T.NULL else out
        return out, [out] * len(types)

    return infer


def _if(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if types[0] not in (T.BOOLEAN, T.NULL):
        raise _err("if", types, "a BOOLEAN condition")
    out = T.common_type(types[1:], "IF branches")
    return out, [T.BOOLEAN, out, out]


def _nullif(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    common = T.common_type(types, "NULLIF arguments")
    return types[0] if types[0] != T.NULL else common, [common, common]


def _negate(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if T.is_interval(t):  # (- INTERVAL '1' DAY, as Flink's)
        return t, [t]
    if not (T.is_numeric(t) or t == T.NULL):
        raise _err("negation", types, "a numeric argument or an interval")
    t = T.INT if t == T.NULL else t
    return t, [t]


SIGNATURES: dict[str, Signature] = {}


def _register(sig: Signature) -> None:
    SIGNATURES[sig.name] = sig


register = _register  # (for the function families' modules)


for _op in ("add", "subtract", "multiply", "divide", "mod"):
    _register(Signature(_op, 2, 2, _arith(_op)))
def _ordering(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    """< <= > >=: of values with an order (a BITMAP has none, as in Flink)."""
    if any(T.is_opaque(t) for t in types):
        raise _err("comparison", types, "values with an order (a BITMAP or VARIANT has none:"
                   " compare with = or <>)")
    return _compare(types)


_register(Signature("eq", 2, 2, _compare))
_register(Signature("ne", 2, 2, _compare))
for _op in ("lt", "le", "gt", "ge"):
    _register(Signature(_op, 2, 2, _ordering))
_register(Signature("and", 2, 2, _boolean(2)))
_register(Signature("or", 2, 2, _boolean(2)))
_register(Signature("not", 1, 1, _boolean(1)))
for _op in ("is_true", "is_false", "is_not_true", "is_not_false"):
    _register(Signature(_op, 1, 1, _boolean(1)))
_register(Signature("is_null", 1, 1, _any_to_bool))
_register(Signature("is_not_null", 1, 1, _any_to_bool))
_register(Signature("negate", 1, 1, _negate))
# The third argument is the ESCAPE character.
for _op in ("like", "not_like", "similar_to", "not_similar_to"):
    _register(Signature(_op, 2, 3, _strings(_op.removeprefix("not_"), T.BOOLEAN)))
_register(Signature("concat_op", 2, 2, _concat))
_register(Signature("concat", 1, None, _concat))
_register(Signature("upper", 1, 1, _strings("upper", T.STRING)))
_register(Signature("initcap", 1, 1, _strings("initcap", T.STRING)))
_register(Signature("lower", 1, 1, _strings("lower", T.STRING)))
_register(Signature("reverse", 1, 1, _strings("reverse", T.STRING)))
_register(Signature("char_length", 1, 1, _strings("char_length", T.INT)))
_register(Signature("trim", 1, 2, _strings("trim", T.STRING)))
_register(Signature("ltrim", 1, 2, _strings("ltrim", T.STRING)))
_register(Signature("rtrim", 1, 2, _strings("rtrim", T.STRING)))
_register(Signature("substring", 2, 3, _strings("substring", T.STRING, (T.INT, T.INT), 1)))
_register(Signature("position", 2, 3, _strings("position", T.INT, (T.INT,), 2)))
_register(Signature("lpad", 3, 3, _strings("lpad", T.STRING, (T.INT, T.STRING), 1)))
_register(Signature("rpad", 3, 3, _strings("rpad", T.STRING, (T.INT, T.STRING), 1)))
_register(Signature("repeat", 2, 2, _strings("repeat", T.STRING, (T.INT,), 1)))
_register(Signature("abs", 1, 1, _same_numeric("abs")))
_register(Signature("sign", 1, 1, _same_numeric("sign")))
_register(Signature("floor", 1, 1, _floor_ceil("floor")))
_register(Signature("ceil", 1, 1, _floor_ceil("ceil")))
for _fn in ("round", "truncate"):
    _register(Signature(_fn, 1, 2, _no_values(_round(_fn)), literal_args=(1,),
                        by_value=_round(_fn)))
_register(Signature("timestampadd", 3, 3, _no_values(_timestampadd), literal_args=(0,),
                    by_value=_timestampadd))
_register(Signature("timestampdiff", 3, 3, _timestampdiff, literal_args=(0,)))
_register(Signature("power", 2, 2, _double("power", 2)))
for _fn in ("sqrt", "ln", "log10", "exp"):
    _register(Signature(_fn, 1, 1, _double(_fn)))
_register(Signature("coalesce", 1, None, _common("coalesce")))
_register(Signature("greatest", 1, None, _common("greatest")))
_register(Signature("least", 1, None, _common("least")))
_register(Signature("if", 3, 3, _if))
_register(Signature("nullif", 2, 2, _nullif))

def _current_watermark(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not pa.types.is_timestamp(types[0]):
        raise _err("current_watermark", types, "a rowtime column")
    # (a TIMESTAMP_LTZ rowtime's is a TIMESTAMP_LTZ(3), as Flink's: it was a TIMESTAMP(3) of
    # the UTC wall clock, which compared with the rowtime in the session time zone)
    return pa.timestamp("ms", types[0].tz), list(types)


_register(Signature("current_watermark", 1, 1, _current_watermark))
_register(Signature("proctime", 0, 0, lambda types: (T.TIMESTAMP, [])))


def _temporal_part(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        t = types[0]
        if not (T.is_temporal(t) or t == T.NULL):
            raise _err(name, types, "a DATE or TIMESTAMP")
        return T.BIGINT, [t if t != T.NULL else T.TIMESTAMP]

    return infer


EXTRACT_UNITS = ("year", "quarter", "month", "week", "day", "doy", "dow", "hour", "minute",
                 "second", "millisecond")
for _unit in EXTRACT_UNITS:
    _register(Signature(f"extract_{_unit}", 1, 1, _temporal_part(_unit)))


def _date_format(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not (T.is_temporal(t) or T.is_string(t) or t == T.NULL):
        raise _err("date_format", types, "a TIMESTAMP and a format STRING")
    arg = T.TIMESTAMP if T.is_string(t) or t == T.NULL else t
    return T.STRING, [arg, *([T.STRING] if len(types) > 1 else [])]


_register(Signature("date_format", 1, 2, _date_format))
_register(Signature("split_index", 3, 3, _strings("split_index", T.STRING, (T.STRING, T.INT),
                                                  1)))

ALIASES = {
    "character_length": "char_length", "length": "char_length", "len": "char_length",
    "substr": "substring", "ceiling": "ceil", "pow": "power", "ucase": "upper",
    "lcase": "lower", "mod": "mod", "strposition": "position", "locate": "position",
    "hour": "extract_hour", "minute": "extract_minute", "second": "extract_second",
    "year": "extract_year", "month": "extract_month", "dayofmonth": "extract_day",
    "dayofweek": "extract_dow", "dayofyear": "extract_doy", "quarter": "extract_quarter",
    "week": "extract_week", "day": "extract_day", "regexp_like": "regexp",
    "day_of_week": "extract_dow", "day_of_year": "extract_doy", "day_of_month": "extract_day",
    "row": "row_value",
}

AGGREGATES = {"count", "sum", "min", "max", "avg", "first_value", "last_value", "listagg",
              "array_agg", "json_arrayagg", "json_objectagg", "percentile"}


# The families with modules of their own register their signatures when imported.
from sqlengine import (  # noqa: E402,F401
    functions_bitmap,
    functions_json,
    functions_math,
    functions_nested,
    functions_text,
    functions_time,
    functions_variant,
)

# Signatures reached only through operators or their own syntax (``a = b``, ``x IS NULL``,
# ``EXTRACT(DAY FROM t)``, ``FLOOR(t TO DAY)``, ``s IS JSON``, CAST to CHAR(n) or
# TIMESTAMP(5)), not by name.
INTERNAL = frozenset({
    "add", "subtract", "multiply", "divide", "eq", "ne", "lt", "le", "gt", "ge", "and", "or",
    "not", "is_true", "is_false", "is_not_true", "is_not_false", "is_null", "is_not_null",
    "negate", "like", "not_like", "similar_to", "not_similar_to", "concat_op", "char_fit",
    "varchar_fit", "fraction_fit", "json_text", "exact_square", "exact_product", "variance",
    "integral_part", "split_variance", "comoment", "key_bytes", "key_value",
    "scalar_subquery_value", "floor_time", "ceil_time", "is_json", "array_value",
    "map_value", "row_value", "element_at", "field", "variant_get", "variant_text",
    "multiset_elements", "ordered_values", "percentile_disc",
    *(f"extract_{u}" for u in EXTRACT_UNITS),
})
# Functions with a syntax of their own that SHOW FUNCTIONS lists besides the named ones.
SYNTAX_FUNCTIONS = ("CAST", "TRY_CAST", "EXTRACT", "CASE", "TIMESTAMPADD", "TIMESTAMPDIFF",
                    "ARRAY", "MAP", "ROW",
                    "STDDEV_POP", "STDDEV_SAMP", "STDDEV", "VAR_POP",
                    "VAR_SAMP", "VARIANCE",
                    # (window functions, as Flink's SHOW FUNCTIONS lists them)
                    "ROW_NUMBER", "RANK", "DENSE_RANK", "PERCENT_RANK", "CUME_DIST", "NTILE",
                    "LAG", "LEAD",
                    # (the standard's and other engines', reduced or ordered: bind_reduce,
                    # bind_ordered)
                    "CORR", "COVAR_POP", "COVAR_SAMP", "REGR_SLOPE", "REGR_INTERCEPT",
                    "REGR_COUNT", "REGR_R2", "REGR_AVGX", "REGR_AVGY", "REGR_SXX", "REGR_SYY",
                    "REGR_SXY", "BOOL_AND", "BOOL_OR", "EVERY", "ANY_VALUE", "MEDIAN",
                    "PERCENTILE_CONT", "PERCENTILE_DISC", "STRING_AGG", "DATE_TRUNC")
# The names people call some functions by (sqlglot's spelling is kept as the signature's).
_SHOWN_AS = {"starts_with": "STARTSWITH", "ends_with": "ENDSWITH"}


def callable_names() -> list[str]:
    """Every function a query can call by name or with its own syntax (SHOW FUNCTIONS)."""
    names = {_SHOWN_AS.get(n, n.upper()) for n in SIGNATURES if n not in INTERNAL}
    names |= {a.upper() for a, target in ALIASES.items() if target not in INTERNAL or
              target.startswith("extract_")}
    names |= {a.upper() for a in AGGREGATES}
    from sqlengine.bitmap_aggregates import NAMES as BITMAP_AGGREGATES

    names |= {a.upper() for a in BITMAP_AGGREGATES} | {"COLLECT"}
    names |= set(SYNTAX_FUNCTIONS)
    return sorted(names)


# Names of the engine's own that SHOW FUNCTIONS does not list (as Flink's does not): the
# window table functions, the group windows and their auxiliaries, the grouping functions.
_OTHER_OWN_NAMES = frozenset({
    "APPROX_COUNT_DISTINCT", "GROUPING", "GROUPING_ID", "GROUP_ID", "TUMBLE", "HOP",
    "SESSION", "CUMULATE", "UNNEST", "FIRST_VALUE", "LAST_VALUE", "NTH_VALUE",
    *(f"{w}_{part}" for w in ("TUMBLE", "HOP", "SESSION")
      for part in ("START", "END", "ROWTIME", "PROCTIME")),
})


def is_own_name(name: str) -> bool:
    """``name`` calls one of the engine's functions (a session function may not take it: a
    call would reach the built-in one, or the built-in one no longer be reached)."""
    upper = name.upper()
    return lookup(name) is not None or upper in _OTHER_OWN_NAMES or \
        upper in callable_names()


def lookup(name: str) -> Signature | None:
    """The signature of a scalar function by (case-insensitive) name or alias."""
    key = name.lower()
    return SIGNATURES.get(ALIASES.get(key, key))
