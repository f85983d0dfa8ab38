"""Which CASTs Flink allows, by the kinds of the two types (Flink's LogicalTypeCasts and what
PyFlink 2.3's validator refuses): a CAST Flink refuses is refused when it is bound, whatever
the data (CAST(b AS DATE) of a BOOLEAN failed only on a row that reached it, and with
Arrow's words; CAST(x'01' AS INT) parsed the bytes as text).

The kinds' rules (NULL casts to anything; every type casts to a character string):
BOOLEAN from numbers and strings; numbers from numbers, strings and BOOLEAN; binary strings
from binary and character strings; DATE from timestamps and strings; TIME from timestamps and
strings; TIMESTAMP from DATE, TIME, timestamps and strings; an ARRAY, MAP or ROW only from
one of its kind, element by element (a ROW of as many fields). Between a number and a date
or time, BITMAP, VARIANT and MULTISET the binder has its own messages (bind_scalar.cast)."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T

# The kinds a CAST to each kind takes (beside itself, NULL and, for a string, any kind).
_FROM: dict[str, frozenset[str]] = {
    "BOOLEAN": frozenset({"numeric", "string"}),
    "numeric": frozenset({"BOOLEAN", "string"}),
    "binary": frozenset({"string"}),
    "DATE": frozenset({"TIMESTAMP", "string"}),
    "TIME": frozenset({"TIMESTAMP", "string"}),
    "TIMESTAMP": frozenset({"DATE", "TIME", "string"}),
}


def kind(t: pa.DataType) -> str:
    """The kind of ``t`` the rules speak of."""
    if t == T.NULL:
        return "NULL"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if T.is_numeric(t):
        return "numeric"
    if T.is_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or \
            pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_date(t):
        return "DATE"
    if T.is_time(t):
        return "TIME"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP"
    if T.is_interval(t) or pa.types.is_duration(t) or pa.types.is_interval(t):
        return "INTERVAL"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "ARRAY"
    if pa.types.is_map(t):
        return "MAP"
    if pa.types.is_struct(t):
        return "ROW"
    return "other"


def refusal(src: pa.DataType, dst: pa.DataType) -> str | None:
    """Why Flink cannot CAST a ``src`` value to ``dst``; None when it can."""
    a, b = kind(src), kind(dst)
    if a == "NULL" or b == "string" or src == dst or "other" in (a, b):
        return None
    if b in ("ARRAY", "MAP", "ROW") or a in ("ARRAY", "MAP", "ROW"):
        return _nested(src, dst, a, b)
    if a == b and a != "INTERVAL":
        return None
    if a == "INTERVAL" or b == "INTERVAL":
        if a == b:
            return None if src == dst else \
                "a year-month interval and a day-time interval do not cast to each other"
        if b == "INTERVAL":
            return None  # (a number or a string to an interval: as the type allows)
        return "an interval casts only to a character string; use EXTRACT or TIMESTAMPDIFF " \
               "for a number"
    if a in _FROM.get(b, frozenset()):
        return None
    return f"Flink casts a {_said(b)} only from " + \
        ", ".join(sorted(_said(k) for k in {b, *_FROM.get(b, ())})) + " or NULL"


def _nested(src: pa.DataType, dst: pa.DataType, a: str, b: str) -> str | None:
    if a != b:
        if a in ("ARRAY", "MAP", "ROW"):
            return f"{_an(a)} casts only to {_an(a)} or to a character string"
        return f"only {_an(b)} casts to {_an(b)}"
    if a == "ARRAY":
        return refusal(src.value_type, dst.value_type)
    if a == "MAP":
        return refusal(src.key_type, dst.key_type) or refusal(src.item_type, dst.item_type)
    if src.num_fields != dst.num_fields:
        return f"a ROW of {src.num_fields} fields does not cast to one of {dst.num_fields}"
    for x, y in zip(src, dst):
        why = refusal(x.type, y.type)
        if why:
            return why
    return None


def _an(k: str) -> str:
    return f"an {k}" if k == "ARRAY" else f"a {k}"


def _said(k: str) -> str:
    return {"numeric": "number", "string": "character string",
            "binary": "binary string"}.get(k, k)
