"""A JSON value as a column takes it, by the rules of Flink's json format
(JsonToRowDataConverters): where Arrow's reader refuses a value (its JSON type is not its
column's) or a MAP column needs Python's json, each value goes through a converter made once
per column type. Under 'json.ignore-parse-errors' a value that does not convert is NULL at
its own level (an ARRAY element, a MAP value, a ROW field), never its row.

- BOOLEAN: a JSON boolean, else its text is 'true' (any case, trimmed) or it is FALSE
  (Java's Boolean.parseBoolean: 1 and "yes" are FALSE).
- INT / BIGINT: a JSON number in range (a fraction cut), else its trimmed text as a whole
  number; TINYINT / SMALLINT: the text always (12.5 does not convert).
- FLOAT / DOUBLE: a JSON number, else its trimmed text as Java's Double.parseDouble reads it.
- DECIMAL: a JSON number, else its text as Java's BigDecimal reads it (no spaces, no NaN).
- STRING: a string's value, a number's or boolean's text, an object's or array's JSON text.
- DATE / TIME / TIMESTAMP: the text, read strictly after (see STRICT_TEXT).
- ARRAY: a JSON array only; MAP: an object's members (anything else is an empty MAP, as
  Jackson's fields() of a non-object); ROW: an object only (missing fields NULL).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

import pyarrow as pa

from sqlengine import types as T
from sqlengine.connectors.text_rows import JAVA_TEXT

# The text of temporal values the json format reads (Flink's ISO_LOCAL_DATE, SQL_TIME_FORMAT
# and SQL_TIMESTAMP_FORMAT: 'yyyy-MM-dd', 'HH:mm:ss[.fraction]', date and time with a
# space; a TIMESTAMP_LTZ ends 'Z'): CAST would take more ('2023-1-2', '10:11').
STRICT_TEXT = {
    **JAVA_TEXT,  # (numbers as text: a changelog format's values, canal-json's all strings)
    "decimal": r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$",
    "date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "time": r"^[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?$",
    "timestamp": r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?$",
    "ltz": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?Z$",
}

_WHOLE = re.compile(JAVA_TEXT["int"])
_DOUBLE = re.compile(JAVA_TEXT["float"])
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_RANGES = {8: 1 << 7, 16: 1 << 15, 32: 1 << 31, 64: 1 << 63}


class JsonValueError(ValueError):
    """A JSON value its column's type does not take."""


class JsonFloat(Decimal):
    """A JSON number with a fraction or exponent, read exactly, with its text as written
    (a STRING column takes the text: Flink's json parser gives '1e2', not '1E+2')."""

    text: str

    def __new__(cls, text: str) -> JsonFloat:
        number = super().__new__(cls, text)
        number.text = text
        return number


class JsonInt(int):
    """A whole JSON number with its text as written ('-0' stays '-0' for a STRING)."""

    text: str

    def __new__(cls, text: str) -> JsonInt:
        number = super().__new__(cls, text)
        number.text = text
        return number


def json_decoder() -> json.JSONDecoder:
    """A decoder of JSON text whose numbers keep their text (JsonFloat, JsonInt)."""
    return json.JSONDecoder(parse_float=JsonFloat, parse_int=JsonInt)


def as_text(v: object) -> str:
    """Jackson's asText(): a string's value, a number's or boolean's text (as written, when
    read by json_decoder); '' for an object or array."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, JsonFloat | JsonInt):
        return v.text
    if isinstance(v, Decimal | int | float):
        return str(v)
    return ""


def json_text(v: object) -> str:
    """A value as a STRING column takes it: an object's or array's JSON text."""
    if isinstance(v, dict | list):
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"),
                          default=lambda d: float(d) if isinstance(d, Decimal) else str(d))
    return as_text(v)


def converter(t: pa.DataType, ignore: bool) -> Callable[[object], object]:
    """A converter of JSON values (as json.loads gives them, floats as Decimal) to Python
    values of column type ``t``; a JSON null is None; a value that does not convert raises
    JsonValueError, or is None when ``ignore``."""
    inner = _not_null(t, ignore)

    def convert(v: object) -> object:
        if v is None:
            return None
        try:
            return inner(v)
        except JsonValueError:
            raise  # (an element's or field's, named as it is)
        except (ValueError, TypeError, OverflowError, ArithmeticError):
            if ignore:
                return None
            text = json_text(v)
            raise JsonValueError(f"{text[:60]!r} does not read as {T.type_name(t)}") from None

    return convert


def _not_null(t: pa.DataType, ignore: bool) -> Callable[[object], object]:
    if T.is_string(t):
        return json_text
    if pa.types.is_boolean(t):
        return lambda v: v if isinstance(v, bool) else as_text(v).strip().lower() == "true"
    if pa.types.is_integer(t):
        return _integer(t.bit_width)
    if pa.types.is_floating(t):
        return _double
    if pa.types.is_decimal(t):
        return _decimal
    if pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_timestamp(t):
        return as_text  # (read strictly as its type after: STRICT_TEXT)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        elem = converter(t.value_type, ignore)

        def array(v: object) -> object:
            if not isinstance(v, list):
                raise TypeError("not an array")
            return [elem(x) for x in v]

        return array
    if pa.types.is_map(t):
        key, item = converter(t.key_type, ignore), converter(t.item_type, ignore)

        def entries(v: object) -> object:
            if not isinstance(v, dict):  # (Flink: "Fail to deserialize at field")
                raise TypeError("not an object")
            return [(key(k), item(x)) for k, x in v.items()]

        return entries
    if pa.types.is_struct(t):
        fields = [(f.name, converter(f.type, ignore)) for f in t]

        def row(v: object) -> object:
            if not isinstance(v, dict):
                raise TypeError("not an object")
            return {n: c(v.get(n)) for n, c in fields}

        return row
    return lambda v: v


def _integer(bits: int) -> Callable[[object], int]:
    limit = _RANGES[bits]

    def convert(v: object) -> int:
        if bits >= 32 and isinstance(v, int | Decimal) and not isinstance(v, bool):
            n = int(v)  # (Jackson's asInt / asLong of a number: its fraction cut)
        else:
            text = as_text(v).strip()
            if isinstance(v, bool) or not _WHOLE.fullmatch(text):
                raise ValueError(text)
            n = int(text)
        if not -limit <= n < limit:
            raise OverflowError(n)
        return n

    return convert


def _double(v: object) -> float:
    if isinstance(v, int | Decimal) and not isinstance(v, bool):
        return float(v)
    text = as_text(v).strip()
    if text and text[-1] in "fFdD":
        text = text[:-1]  # (Java's 'f' / 'd' suffix)
    if isinstance(v, bool) or not _DOUBLE.fullmatch(text):
        raise ValueError(text)
    return float(text)  # (Python reads 'NaN' and 'Infinity' as Java does)


def _decimal(v: object) -> Decimal:
    if isinstance(v, int | Decimal) and not isinstance(v, bool):
        return Decimal(v)
    text = as_text(v)
    if isinstance(v, bool) or not _DECIMAL.fullmatch(text):
        raise InvalidOperation(text)
    return Decimal(text)
