"""The canonical form both engines' answers are compared in (no sqlengine import: the
PyFlink generator uses the property checks too).

Values (JSON): NULL -> null; BOOLEAN, integers -> JSON bool/int; FLOAT/DOUBLE -> JSON float
(NaN/Infinity as Python's json writes them); DECIMAL -> its plain string with the type's scale
("1.50"); STRING -> str; BYTES -> {"bytes": hex}; DATE -> "YYYY-MM-DD"; TIME -> "HH:MM:SS[.f]";
TIMESTAMP / TIMESTAMP_LTZ -> "YYYY-MM-DD HH:MM:SS[.f]" (LTZ in UTC, the session time zone;
fraction digits with trailing zeros dropped); INTERVAL DAY TO SECOND -> milliseconds (int);
INTERVAL YEAR TO MONTH -> months (int); ARRAY -> list; ROW -> list of field values; MAP and
MULTISET -> {"map": [[key, value], ...]} sorted by key.

Types are compared by Flink's type name after ``normalise_type``: NOT NULL dropped, CHAR(n) /
VARCHAR(n) -> STRING, BINARY(n) / VARBINARY(n) -> BYTES, interval qualifiers reduced to the
two interval kinds (an Arrow column cannot hold the qualifier).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from decimal import Decimal
from typing import Any

REL_TOL = 1e-12


def normalise_type(t: Any) -> Any:
    if isinstance(t, list):
        return [normalise_type(x) for x in t]
    if t is None:
        return None
    s = str(t).replace(" NOT NULL", "")
    s = re.sub(r"\b(VAR)?CHAR\(\d+\)", "STRING", s)
    s = re.sub(r"\b(VAR)?BINARY\(\d+\)", "BYTES", s)
    s = re.sub(r"\bINTEGER\b", "INT", s)
    s = re.sub(r"TIMESTAMP\((\d)\) WITH LOCAL TIME ZONE", r"TIMESTAMP_LTZ(\1)", s)
    s = re.sub(r"TIMESTAMP\((\d)\) WITHOUT TIME ZONE", r"TIMESTAMP(\1)", s)
    s = re.sub(r"INTERVAL (YEAR|MONTH)[^,>]*", "INTERVAL YEAR TO MONTH", s)
    return re.sub(r"INTERVAL (DAY|HOUR|MINUTE|SECOND)(\(\d+\))?( TO (DAY|HOUR|MINUTE|SECOND)"
                  r"(\(\d+\))?)?", "INTERVAL DAY TO SECOND(3)", s)


def fraction(nanos: int) -> str:
    return ("." + f"{nanos:09d}".rstrip("0")) if nanos else ""


def fmt_time(h: int, m: int, s: int, nanos: int) -> str:
    return f"{h:02d}:{m:02d}:{s:02d}{fraction(nanos)}"


def fmt_date(y: int, mo: int, d: int) -> str:
    return f"{y:04d}-{mo:02d}-{d:02d}"


def fmt_decimal(d: Decimal) -> str:
    return format(d, "f")


def values_equal(a: Any, b: Any) -> bool:
    """Exact equality, except floats (relative 1e-12; NaN equals NaN)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if math.isinf(a) or math.isinf(b):
            return a == b
        return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-300)
    if isinstance(a, float) != isinstance(b, float):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


ANY_VALUE = "(some value)"


def unordered(v: Any, how: str) -> Any:
    """An order-dependent aggregate's value in an order-free form (see calls.Call.unordered):
    its elements sorted ("array", "json-array", or the LISTAGG separator), a JSON object as
    a dict ("json-object"), or only whether it is NULL ("any"). Idempotent."""
    if v is None:
        return None
    if how == "any":
        return ANY_VALUE
    if how == "array":
        return sorted(v, key=sort_key) if isinstance(v, list) else v
    if how in ("json-array", "json-object"):
        try:
            parsed = json.loads(v) if isinstance(v, str) else v
        except ValueError:
            return v
        return sorted(parsed, key=sort_key) if isinstance(parsed, list) else parsed
    return how.join(sorted(v.split(how))) if isinstance(v, str) else v


def sort_key(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str)


def canon_map(pairs: list[tuple[Any, Any]]) -> dict:
    return {"map": sorted(([k, v] for k, v in pairs), key=lambda kv: sort_key(kv[0]))}


def _parse_ts(v: Any) -> dt.datetime | None:
    if not isinstance(v, str):
        return None
    try:
        return dt.datetime.fromisoformat(v[:26])
    except ValueError:
        return None


def _near_now(v: Any) -> bool:
    ts = _parse_ts(v)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    return ts is not None and abs((ts - now).total_seconds()) < 86400


# Non-deterministic calls: the property their value must have (checked on both engines).
PROPERTIES = {
    "unit_interval": lambda v: isinstance(v, float) and 0.0 <= v < 1.0,
    "int_below_10": lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 10,
    "uuid": lambda v: isinstance(v, str) and re.fullmatch(
        r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", v) is not None,
    "recent_ltz": _near_now,
    "recent_timestamp": _near_now,
    "today": lambda v: isinstance(v, str) and abs(
        (dt.date.fromisoformat(v) - dt.datetime.now(dt.UTC).date()).days) <= 1,
    "time_of_day": lambda v: isinstance(v, str) and re.fullmatch(
        r"\d\d:\d\d:\d\d(\.\d+)?", v) is not None,
    "recent_seconds": lambda v: isinstance(v, int) and abs(
        v - dt.datetime.now(dt.UTC).timestamp()) < 86400,
}
