"""SQL <-> Arrow type mapping, display names and Flink's coercion rules."""

from __future__ import annotations

import re
from collections.abc import Callable

import pyarrow as pa

from sqlengine.bitmap import BITMAP, is_bitmap
from sqlengine.errors import BindError
from sqlengine.variant import VARIANT, is_variant

MAX_DECIMAL_PRECISION = 38

BOOLEAN = pa.bool_()
TINYINT = pa.int8()
SMALLINT = pa.int16()
INT = pa.int32()
BIGINT = pa.int64()
FLOAT = pa.float32()
DOUBLE = pa.float64()
STRING = pa.string()
DATE = pa.date32()
TIMESTAMP = pa.timestamp("ms")
TIME = pa.time32("s")  # TIME(0); TIME(p) by time_type
NULL = pa.null()
INTERVAL_DAY_TIME = pa.duration("ms")  # INTERVAL DAY TO SECOND(3): milliseconds
INTERVAL_YEAR_MONTH = pa.month_day_nano_interval()  # INTERVAL YEAR TO MONTH: months only

_INTEGERS = (TINYINT, SMALLINT, INT, BIGINT)
_INT_DECIMAL_PRECISION = {TINYINT: 3, SMALLINT: 5, INT: 10, BIGINT: 19}

_SIMPLE = {
    "BOOLEAN": BOOLEAN,
    "BOOL": BOOLEAN,
    "TINYINT": TINYINT,
    "SMALLINT": SMALLINT,
    "INT": INT,
    "INTEGER": INT,
    "BIGINT": BIGINT,
    "FLOAT": FLOAT,
    "REAL": FLOAT,
    "DOUBLE": DOUBLE,
    "STRING": STRING,
    "VARCHAR": STRING,
    "CHAR": STRING,
    "TEXT": STRING,
    "DATE": DATE,
    "BYTES": pa.binary(),
    "VARBINARY": pa.binary(),
    "BINARY": pa.binary(),
}

_TYPE_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z_]+(?:\s+PRECISION)?)\s*(?:\(\s*(?P<args>[0-9\s,]*)\))?"
    r"(?P<rest>(?:\s+WITH(?:OUT)?\s+(?:LOCAL\s+)?TIME\s+ZONE)?)\s*$",
    re.IGNORECASE,
)


def parse_type(text: str) -> pa.DataType:
    """Parse a Flink SQL type name (``INT``, ``DECIMAL(10, 2)``, ``TIMESTAMP(3)``,
    ``ARRAY<INT>``, ``MAP<STRING, INT>``, ``ROW<a INT, b STRING>``) to Arrow.

    Raises:
        BindError: the name is not a type sqlengine knows.
    """
    nested = _nested_type(text)
    if nested is not None:
        return nested
    m = _TYPE_RE.match(text)
    if not m:
        msg = f"unknown type {text.strip()!r}"
        raise BindError(msg)
    name = " ".join(m.group("name").upper().split())
    args = [int(a) for a in (m.group("args") or "").replace(" ", "").split(",") if a]
    rest = " ".join(m.group("rest").upper().split())
    if name in ("TIMESTAMP_LTZ", "TIMESTAMPLTZ") or "LOCAL TIME ZONE" in rest:
        if (rest and rest != "WITH LOCAL TIME ZONE") or \
                name not in ("TIMESTAMP_LTZ", "TIMESTAMPLTZ", "TIMESTAMP"):
            msg = f"unknown type {text.strip()!r}"
            raise BindError(msg)
        precision = args[0] if args else 6
        if not 0 <= precision <= 9:
            msg = f"TIMESTAMP_LTZ({precision}) is out of range: precision 0..9"
            raise BindError(msg)
        return ltz_type(precision)
    if rest and (name not in ("TIMESTAMP", "TIME") or rest != "WITHOUT TIME ZONE"):
        msg = f"unknown type {text.strip()!r}"
        raise BindError(msg)
    if name == "DOUBLE PRECISION":
        return DOUBLE
    if name in ("DECIMAL", "DEC", "NUMERIC"):
        precision = args[0] if args else 10
        scale = args[1] if len(args) > 1 else 0
        if not 1 <= precision <= MAX_DECIMAL_PRECISION or not 0 <= scale <= precision:
            msg = (f"DECIMAL({precision}, {scale}) is out of range: precision 1..38, "
                   "scale 0..precision")
            raise BindError(msg)
        return pa.decimal128(precision, scale)
    if name in ("TIMESTAMP", "DATETIME"):
        precision = args[0] if args else 6
        if not 0 <= precision <= 9:
            msg = f"TIMESTAMP({precision}) is out of range: precision 0..9"
            raise BindError(msg)
        return timestamp_type(precision)
    if name == "TIME":
        precision = args[0] if args else 0
        if not 0 <= precision <= 9:
            msg = f"TIME({precision}) is out of range: precision 0..9"
            raise BindError(msg)
        return time_type(precision)
    if name == "BITMAP" and not args:
        return BITMAP
    if name == "VARIANT" and not args:
        return VARIANT
    if name in _SIMPLE:
        if args and (name not in _LENGTHS or len(args) > 1):
            msg = f"unknown type {text.strip()!r}: {name} takes no " + \
                ("length" if name not in _LENGTHS else "second argument")
            raise BindError(msg)
        if args and not 1 <= args[0] <= MAX_LENGTH:
            msg = f"{name}({args[0]}) is out of range: the length is 1..{MAX_LENGTH}"
            raise BindError(msg)
        return _SIMPLE[name]
    msg = f"unknown type {text.strip()!r}"
    raise BindError(msg)


MAX_LENGTH = 2**31 - 1
_LENGTHS = ("CHAR", "VARCHAR", "BINARY", "VARBINARY")


def declared_length(text: str) -> tuple[str, int] | None:
    """A CHAR(n) / VARCHAR(n) / BINARY(n) / VARBINARY(n) type's name and length (CHAR and
    BINARY alone are of length 1, as Flink's; VARCHAR / VARBINARY alone, and the longest
    VARCHAR, are STRING / BYTES: None). The Arrow type drops the length; DESCRIBE, SHOW
    CREATE TABLE and datagen keep it."""
    m = _TYPE_RE.match(text)
    if not m or m.group("rest"):
        return None
    name = m.group("name").upper()
    if name not in _LENGTHS:
        return None
    args = [int(a) for a in (m.group("args") or "").replace(" ", "").split(",") if a]
    if not args:
        return (name, 1) if name in ("CHAR", "BINARY") else None
    if name in ("VARCHAR", "VARBINARY") and args[0] == MAX_LENGTH:
        return None
    return name, args[0]


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside <...>, (...) and backticks."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


_NESTED_RE = re.compile(r"^\s*(ARRAY|MAP|ROW|STRUCT|MULTISET)\s*([<(])(.*)([>)])\s*"
                        r"(NOT\s+NULL)?\s*$", re.IGNORECASE | re.DOTALL)
_POSTFIX_RE = re.compile(r"^(.*\S)\s+(ARRAY|MULTISET)\s*$", re.IGNORECASE | re.DOTALL)


def _element(text: str) -> pa.Field:
    """A nested type's element: its type, NOT NULL kept as the field's nullability."""
    m = re.match(r"^(.*?)\s+NOT\s+NULL\s*$", text, re.IGNORECASE | re.DOTALL)
    body = m.group(1) if m else text
    return pa.field("element", parse_type(body), nullable=m is None)


def _nested_type(text: str) -> pa.DataType | None:
    """ARRAY<T> / T ARRAY, MAP<K, V>, ROW<name T, ...> / ROW(name T, ...); None for a type
    that is not nested. MULTISET<T>: see multiset_of."""
    post = _POSTFIX_RE.match(text)
    if post and not _NESTED_RE.match(text):
        kind = post.group(2).upper()
        return parse_type(f"{kind}<{post.group(1)}>")
    m = _NESTED_RE.match(text)
    if m is None:
        return None
    kind, opening, body, closing = m.group(1).upper(), m.group(2), m.group(3), m.group(4)
    if (opening, closing) not in (("<", ">"), ("(", ")")) or \
            (opening == "(" and kind not in ("ROW", "STRUCT")):
        msg = f"unknown type {text.strip()!r}"
        raise BindError(msg)
    if kind == "MULTISET":
        element = _element(body)
        if is_nested(element.type) or is_opaque(element.type):
            msg = (f"{text.strip()}: a MULTISET of {type_name(element.type)} values is not "
                   "supported (of numbers, strings, booleans and times it is)")
            raise BindError(msg)
        return multiset_of(element.type)
    if kind == "ARRAY":
        return pa.list_(_element(body))  # (field "element", as array_of names it)
    if kind == "MAP":
        parts = _split_top(body)
        if len(parts) != 2:
            msg = f"{text.strip()}: MAP takes a key type and a value type"
            raise BindError(msg)
        key, value = _element(parts[0]), _element(parts[1])
        return pa.map_(pa.field("key", key.type, nullable=False),
                       pa.field("value", value.type, nullable=value.nullable))
    fields = []
    for part in _split_top(body):
        f = re.match(r"^\s*(`(?:[^`]|``)+`|[A-Za-z_][\w$]*)\s+(.*?)\s*"
                     r"(?:'(?:[^']|'')*')?\s*$", part, re.DOTALL)
        if f is None:
            msg = f"{text.strip()}: a ROW field is a name and a type, got {part!r}"
            raise BindError(msg)
        name = f.group(1)
        name = name[1:-1].replace("``", "`") if name.startswith("`") else name
        element = _element(f.group(2))
        fields.append(pa.field(name, element.type, nullable=element.nullable))
    if not fields:
        msg = f"{text.strip()}: a ROW has at least one field"
        raise BindError(msg)
    return pa.struct(fields)


def timestamp_type(precision: int) -> pa.DataType:
    """Flink's TIMESTAMP(p) as the narrowest Arrow unit that holds p fractional digits
    (TIMESTAMP(0) whole seconds; TIMESTAMP(1) and (2) are held, and named, as TIMESTAMP(3),
    and so on: the Arrow unit carries the precision)."""
    if precision <= 0:
        return pa.timestamp("s")
    if precision <= 3:
        return pa.timestamp("ms")
    if precision <= 6:
        return pa.timestamp("us")
    return pa.timestamp("ns")


def ltz_type(precision: int) -> pa.DataType:
    """Flink's TIMESTAMP_LTZ(p) (TIMESTAMP(p) WITH LOCAL TIME ZONE): an instant, held as an
    Arrow timestamp in UTC with the unit of TIMESTAMP(p); shown in the session time zone."""
    return pa.timestamp(timestamp_type(precision).unit, tz="UTC")


def is_ltz(t: pa.DataType) -> bool:
    """True for TIMESTAMP_LTZ(p) (a time-zone-aware Arrow timestamp)."""
    return pa.types.is_timestamp(t) and t.tz is not None


def time_type(precision: int) -> pa.DataType:
    """Flink's TIME(p) as Arrow: TIME(0) whole seconds (time32[s]), TIME(1..3) milliseconds,
    TIME(4..6) microseconds, TIME(7..9) nanoseconds (named by the unit's digits)."""
    if precision <= 0:
        return pa.time32("s")
    if precision <= 3:
        return pa.time32("ms")
    if precision <= 6:
        return pa.time64("us")
    return pa.time64("ns")


UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def precision_of(t: pa.DataType) -> int:
    """The fractional digits of a TIMESTAMP or TIME type (its Arrow unit's)."""
    return UNIT_DIGITS[t.unit]


def type_name(t: pa.DataType) -> str:
    """The Flink SQL name of an Arrow type, as DESCRIBE and EXPLAIN print it."""
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if is_bitmap(t):
        return "BITMAP"
    if is_variant(t):
        return "VARIANT"
    names = {TINYINT: "TINYINT", SMALLINT: "SMALLINT", INT: "INT", BIGINT: "BIGINT",
             FLOAT: "FLOAT", DOUBLE: "DOUBLE", DATE: "DATE", NULL: "NULL"}
    if t in names:
        return names[t]
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "STRING"
    if pa.types.is_binary(t):
        return "BYTES"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision}, {t.scale})"
    if t == INTERVAL_DAY_TIME:
        return "INTERVAL DAY TO SECOND(3)"
    if t == INTERVAL_YEAR_MONTH:
        return "INTERVAL YEAR TO MONTH"
    if pa.types.is_timestamp(t):
        if t.tz is not None:
            return f"TIMESTAMP_LTZ({UNIT_DIGITS[t.unit]})"
        return f"TIMESTAMP({UNIT_DIGITS[t.unit]})"
    if is_time(t):
        return f"TIME({UNIT_DIGITS[t.unit]})"
    if pa.types.is_fixed_size_binary(t):
        return f"BINARY({t.byte_width})"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"ARRAY<{_field_name(t.value_field)}>"
    if is_multiset(t):
        return f"MULTISET<{type_name(t.key_type)}>"
    if pa.types.is_map(t):
        return f"MAP<{type_name(t.key_type)}, {_field_name(t.item_field)}>"
    if pa.types.is_struct(t):
        inner = ", ".join(f"`{f.name}` {_field_name(f)}" for f in t)
        return f"ROW<{inner}>"
    return str(t).upper()


def _field_name(f: pa.Field) -> str:
    return type_name(f.type) + ("" if f.nullable else " NOT NULL")


def array_of(t: pa.DataType) -> pa.DataType:
    """ARRAY<t> (its element field named as a declared ARRAY's is)."""
    return pa.list_(pa.field("element", t))


def groupable(t: pa.DataType) -> bool:
    """Whether values of ``t`` can be grouped by (runtime/key_bytes.py has their bytes): ROW,
    ARRAY and MAP of booleans, numbers (DECIMAL up to 38 digits), strings, binary strings,
    times and INTERVAL DAY TO SECOND."""
    if pa.types.is_struct(t):
        return all(groupable(f.type) for f in t)
    if pa.types.is_map(t):
        return groupable(t.key_type) and groupable(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return groupable(t.value_type)
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or
            pa.types.is_large_binary(t) or pa.types.is_boolean(t) or
            pa.types.is_floating(t) or pa.types.is_decimal128(t) or pa.types.is_integer(t) or
            pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or
            pa.types.is_duration(t))


def is_nested(t: pa.DataType) -> bool:
    """ARRAY, MAP or ROW."""
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t) or \
        pa.types.is_struct(t)


def is_interval(t: pa.DataType) -> bool:
    """True for the two interval types (day-time and year-month)."""
    return t in (INTERVAL_DAY_TIME, INTERVAL_YEAR_MONTH)


def is_integer(t: pa.DataType) -> bool:
    """True for the exact whole-number types."""
    return pa.types.is_integer(t)


def is_numeric(t: pa.DataType) -> bool:
    """True for integers, floating point and decimals."""
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)


def is_string(t: pa.DataType) -> bool:
    """True for character strings."""
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def is_time(t: pa.DataType) -> bool:
    """True for TIME(p)."""
    return pa.types.is_time(t)


def is_temporal(t: pa.DataType) -> bool:
    """True for DATE and TIMESTAMP."""
    return pa.types.is_timestamp(t) or pa.types.is_date(t)


def as_decimal(t: pa.DataType) -> pa.Decimal128Type:
    """The decimal type that holds every value of an exact type ``t``."""
    if pa.types.is_decimal(t):
        return t
    return pa.decimal128(_INT_DECIMAL_PRECISION.get(t, 19), 0)


def _bounded_decimal(precision: int, scale: int) -> pa.DataType:
    # Flink's LogicalTypeMerging.adjustPrecisionScale: keep the integral digits, give up scale
    # (but not below 6) when the precision would pass 38.
    if precision <= MAX_DECIMAL_PRECISION:
        return pa.decimal128(max(precision, 1), scale)
    integral = precision - scale
    min_scale = min(scale, 6)
    scale = max(MAX_DECIMAL_PRECISION - integral, min_scale)
    return pa.decimal128(MAX_DECIMAL_PRECISION, scale)


def decimal_add_type(a: pa.Decimal128Type, b: pa.Decimal128Type) -> pa.DataType:
    """Flink's result type of DECIMAL + / - DECIMAL."""
    scale = max(a.scale, b.scale)
    precision = max(a.precision - a.scale, b.precision - b.scale) + scale + 1
    return _bounded_decimal(precision, scale)


def decimal_multiply_type(a: pa.Decimal128Type, b: pa.Decimal128Type) -> pa.DataType:
    """Flink's result type of DECIMAL * DECIMAL."""
    return _bounded_decimal(a.precision + b.precision + 1, a.scale + b.scale)


def decimal_divide_type(a: pa.Decimal128Type, b: pa.Decimal128Type) -> pa.DataType:
    """Flink's result type of DECIMAL / DECIMAL (LogicalTypeMerging.findDivisionDecimalType)."""
    scale = max(6, a.scale + b.precision + 1)
    precision = a.precision - a.scale + b.scale + scale
    return _bounded_decimal(precision, scale)


def decimal_mod_type(a: pa.Decimal128Type, b: pa.Decimal128Type) -> pa.DataType:
    """Flink's result type of MOD(DECIMAL, DECIMAL)."""
    scale = max(a.scale, b.scale)
    precision = min(a.precision - a.scale, b.precision - b.scale) + scale
    return _bounded_decimal(precision, scale)


def sum_type(t: pa.DataType) -> pa.DataType:
    """Flink's SUM result type: the input type, except DECIMAL(38, s)."""
    if pa.types.is_decimal(t):
        return pa.decimal128(MAX_DECIMAL_PRECISION, t.scale)
    return t


def avg_type(t: pa.DataType) -> pa.DataType:
    """Flink's AVG result type: the input type (integer AVG truncates), DECIMAL(38, max(6, s))."""
    if pa.types.is_decimal(t):
        return decimal_divide_type(pa.decimal128(MAX_DECIMAL_PRECISION, t.scale),
                                   pa.decimal128(20, 0))
    return t


def _numeric_rank(t: pa.DataType) -> int:
    order = [TINYINT, SMALLINT, INT, BIGINT]
    if t in order:
        return order.index(t)
    if pa.types.is_decimal(t):
        return 4
    if t == FLOAT:
        return 5
    return 6


def common_type(types: list[pa.DataType], what: str = "values") -> pa.DataType:
    """The type that every type in ``types`` widens to (for CASE, COALESCE, UNION, IN, ...).

    Raises:
        BindError: the types have no common type (``what`` names the construct in the message).
    """
    real = [t for t in types if t != NULL]
    if not real:
        return NULL
    first = real[0]
    if all(t == first for t in real):
        return first
    if all(is_numeric(t) for t in real):
        if any(pa.types.is_floating(t) for t in real):
            return DOUBLE if any(t == DOUBLE or not pa.types.is_floating(t) for t in real) \
                else FLOAT
        if any(pa.types.is_decimal(t) for t in real):
            # (Flink's LogicalTypeMerging: the integral digits first, then the scale that
            # fits beside them; DECIMAL(38, 18) and DECIMAL(38, 0) meet in DECIMAL(38, 0))
            decs = [as_decimal(t) for t in real]
            integral = min(max(d.precision - d.scale for d in decs), MAX_DECIMAL_PRECISION)
            scale = min(max(d.scale for d in decs), MAX_DECIMAL_PRECISION - integral)
            return pa.decimal128(max(integral + scale, 1), scale)
        return max(real, key=_numeric_rank)
    if all(is_string(t) for t in real):
        return STRING
    units = ["s", "ms", "us", "ns"]
    if all(pa.types.is_timestamp(t) for t in real) and any(is_ltz(t) for t in real):
        # (a TIMESTAMP_LTZ among them: one; a TIMESTAMP is read in the session time zone, as
        # Flink's common type. TIMESTAMPs of different precisions alone stay TIMESTAMP: they
        # became a TIMESTAMP_LTZ, their wall-clock times moved by the session's zone.)
        return pa.timestamp(max((t.unit for t in real), key=units.index), tz="UTC")
    if all((pa.types.is_timestamp(t) and not is_ltz(t)) or pa.types.is_date(t) for t in real):
        ts = [t for t in real if pa.types.is_timestamp(t)]
        if ts:
            return pa.timestamp(max((t.unit for t in ts), key=units.index))
        return DATE
    if all(is_time(t) for t in real):
        return time_type(max(precision_of(t) for t in real))
    if all(pa.types.is_struct(t) for t in real) and len({t.num_fields for t in real}) == 1:
        # ROWs of as many fields: field by field (the first's names, as Flink's)
        return pa.struct([pa.field(real[0].field(i).name,
                                   common_type([t.field(i).type for t in real], what))
                          for i in range(real[0].num_fields)])
    names = ", ".join(sorted({type_name(t) for t in real}))
    msg = f"{what} have incompatible types: {names}"
    raise BindError(msg)


def column_common_type(types: list[pa.DataType], what: str = "values") -> pa.DataType:
    """The common type of a column of VALUES rows or of UNION / INTERSECT / EXCEPT inputs:
    ``common_type``, but for TIMESTAMP_LTZs meeting TIMESTAMPs, which meet in a TIMESTAMP
    here (each instant read as the session zone's wall clock), as in Flink 2.3, where CASE
    and COALESCE give a TIMESTAMP_LTZ."""
    real = [t for t in types if t != NULL]
    if real and all(pa.types.is_timestamp(t) for t in real) and \
            any(is_ltz(t) for t in real) and not all(is_ltz(t) for t in real):
        units = ["s", "ms", "us", "ns"]
        return pa.timestamp(max((t.unit for t in real), key=units.index))
    return common_type(types, what)


def comparison_type(types: list[pa.DataType], what: str = "compared values") -> pa.DataType:
    """The type values of ``types`` are compared as (=, <, BETWEEN, IN): their common type,
    except that STRING values compared with DATE, TIME or TIMESTAMP ones are read as those
    (Flink's implicit cast: ``d >= '2024-01-01'``).

    Raises:
        BindError: the types cannot be compared.
    """
    temporal = [t for t in types if t != NULL and not is_string(t)]
    if temporal and len(temporal) < len([t for t in types if t != NULL]) and \
            all(is_temporal(t) or is_time(t) for t in temporal):
        return common_type(temporal, what)
    common = common_type(types, what)
    if pa.types.is_decimal(common):
        # Compared exactly: a common DECIMAL(38, 0) of DECIMAL(38, 18) and DECIMAL(38, 0)
        # would round 1.5 to 2 (and equal it), DECIMAL(38, 6) failed on 38 nines.
        decs = [as_decimal(t) for t in types if t != NULL and not pa.types.is_floating(t)]
        integral = max(d.precision - d.scale for d in decs)
        scale = max(d.scale for d in decs)
        if integral + scale > MAX_DECIMAL_PRECISION and scale > common.scale:
            return pa.decimal256(integral + scale, scale)
    return common


def can_implicitly_cast(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether a value of ``src`` may be used where ``dst`` is expected without a CAST."""
    if src in (dst, NULL):
        return True
    if is_numeric(src) and is_numeric(dst):
        return True
    if is_string(src) and is_string(dst):
        return True
    if is_time(src) and is_time(dst):
        return True
    if is_ltz(src) or is_ltz(dst):  # (between TIMESTAMP_LTZ and TIMESTAMP / DATE: a CAST,
        return is_ltz(src) and is_ltz(dst)  # which reads the session time zone)
    return is_temporal(src) and is_temporal(dst)


def can_store(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether INSERT may write a ``src`` value into a ``dst`` column without a CAST: Flink's
    implicit casts (LogicalTypeCasts), which lose no information. An integer is not narrowed
    (300 would wrap to 44 in a TINYINT) nor a fraction dropped (DOUBLE or DECIMAL into an
    INT); a DECIMAL or DOUBLE column takes any number, FLOAT any but a DOUBLE; a DATE or TIME
    column takes a TIMESTAMP, and TIMESTAMP and TIMESTAMP_LTZ take each other (in the session
    time zone). ARRAY, MAP and ROW values are stored element by element by the same rule.
    Also what sqlengine has always allowed without loss: a DATE into a TIMESTAMP column."""
    if src in (dst, NULL):
        return True
    if pa.types.is_list(src) and pa.types.is_list(dst):
        return can_store(src.value_type, dst.value_type)
    if pa.types.is_map(src) and pa.types.is_map(dst):
        return can_store(src.key_type, dst.key_type) and can_store(src.item_type, dst.item_type)
    if pa.types.is_struct(src) and pa.types.is_struct(dst):
        return src.num_fields == dst.num_fields and \
            all(can_store(a.type, b.type) for a, b in zip(src, dst, strict=True))
    if is_integer(src) and is_integer(dst):
        return src.bit_width <= dst.bit_width
    if is_numeric(src) and (pa.types.is_decimal(dst) or dst == DOUBLE):
        return True
    if is_numeric(src) and dst == FLOAT:
        return src != DOUBLE
    if is_string(src) and is_string(dst):
        return True
    if pa.types.is_binary(src) and pa.types.is_binary(dst):
        return True
    if pa.types.is_timestamp(src):
        return pa.types.is_timestamp(dst) or \
            (not is_ltz(src) and (pa.types.is_date(dst) or is_time(dst)))
    if is_time(src) and is_time(dst):
        return True
    return pa.types.is_date(src) and pa.types.is_timestamp(dst) and not is_ltz(dst)


def is_supported(t: pa.DataType) -> bool:
    """Whether sqlengine has a SQL type for an Arrow type."""
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return is_supported(t.value_type)
    if pa.types.is_map(t):
        return is_supported(t.key_type) and is_supported(t.item_type)
    if pa.types.is_struct(t):
        return all(is_supported(f.type) for f in t)
    return (pa.types.is_boolean(t) or t in _INTEGERS or t in (FLOAT, DOUBLE) or is_opaque(t)
            or pa.types.is_decimal128(t) or is_string(t) or pa.types.is_binary(t)
            or t == DATE or (pa.types.is_timestamp(t) and t.tz in (None, "UTC"))
            or is_time(t))


def is_opaque(t: pa.DataType) -> bool:
    """BITMAP or VARIANT: values compared only whole, by = / <> (an Arrow extension type over
    bytes or text that kernels, keys and joins see as its storage), never ordered."""
    return is_bitmap(t) or is_variant(t)


def contains_opaque(t: pa.DataType) -> bool:
    """Whether ``t`` is a BITMAP or a VARIANT or an ARRAY, MAP or ROW holding one."""
    return _holds(t, is_opaque)


def contains_ltz(t: pa.DataType) -> bool:
    """Whether ``t`` is a TIMESTAMP_LTZ or an ARRAY, MAP or ROW holding one."""
    return _holds(t, is_ltz)


def contains_variant(t: pa.DataType) -> bool:
    return _holds(t, is_variant)


def contains_bitmap(t: pa.DataType) -> bool:
    return _holds(t, is_bitmap)


def _holds(t: pa.DataType, leaf: Callable[[pa.DataType], bool]) -> bool:
    if leaf(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _holds(t.value_type, leaf)
    if pa.types.is_map(t):
        return _holds(t.key_type, leaf) or _holds(t.item_type, leaf)
    if pa.types.is_struct(t):
        return any(_holds(f.type, leaf) for f in t)
    return False


_ELEMENT, _COUNT = "element", "count"


def multiset_of(t: pa.DataType) -> pa.DataType:
    """Flink's MULTISET<t> (COLLECT's result): held as an Arrow map of each element to its
    count (an INT), its fields named so (MAP's are "key" and "value"); its entries in the order
    Flink's HashMap keeps them (see collect_aggregate)."""
    return pa.map_(pa.field(_ELEMENT, t, nullable=False), pa.field(_COUNT, INT, nullable=False))


def is_multiset(t: pa.DataType) -> bool:
    return pa.types.is_map(t) and t.key_field.name == _ELEMENT and t.item_field.name == _COUNT
