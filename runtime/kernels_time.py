"""Kernels of ``sqlengine.functions_time`` (Flink's semantics; the session time zone is UTC).

Parsing with a format goes through Arrow's strptime on the Java pattern turned into a strftime
one (fractions of a second 'S...' after the last separator are read apart); a string that
does not fit is NULL, as in Flink. The clock functions read the wall clock once per batch.
"""

from __future__ import annotations

import datetime as dt
import re
import time
import zoneinfo
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import cast_array
from sqlengine.errors import ExecutionError
from sqlengine.runtime.kernels_text import per_distinct

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]
_TS = pa.timestamp("ms")
DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss"


def _java_format(pattern: str) -> str:
    from sqlengine.runtime.kernels import java_to_strftime

    return java_to_strftime(pattern)


def parse_timestamps(s: Array, pattern: str) -> Array:
    """Strings in the Java ``pattern`` as TIMESTAMP(3) (UTC wall clock), NULL where they do
    not fit it."""
    m = re.fullmatch(r"(.*?)([^A-Za-z'])(S{1,9})", pattern)
    if "S" in pattern and m is None:
        msg = f"unsupported fraction-of-second pattern in {pattern!r} (only at the end, after " \
              "a separator, as in 'yyyy-MM-dd HH:mm:ss.SSS')"
        raise ExecutionError(msg)
    if m is None:
        return pc.strptime(s, format=_java_format(pattern), unit="ms", error_is_null=True)
    head, sep, frac = m.groups()
    parts = pc.extract_regex(s, pattern=rf"^(?P<head>.*){re.escape(sep)}"
                                        rf"(?P<frac>\d{{{len(frac)}}})$")
    base = pc.strptime(pc.struct_field(parts, [0]), format=_java_format(head), unit="ms",
                       error_is_null=True)
    digits = pc.struct_field(parts, [1])
    ms = pc.cast(pc.utf8_slice_codeunits(pc.utf8_rpad(digits, 3, "0"), 0, 3), pa.int64())
    return pc.add(base.cast(pa.int64()), ms).cast(_TS)


def _to_timestamp(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """TO_TIMESTAMP(s [, format]): without a format as CAST(s AS TIMESTAMP(3)) reads it (a
    date alone is midnight); NULL where it does not parse."""
    if len(args) > 1:
        if lits[1] is None:
            return pa.nulls(len(args[0]), out)
        return parse_timestamps(args[0], str(lits[1]))
    return cast_array(args[0], _TS, safe=True)


def _to_date(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    if len(args) > 1:
        if lits[1] is None:
            return pa.nulls(len(args[0]), out)
        return parse_timestamps(args[0], str(lits[1])).cast(pa.date32())
    return cast_array(args[0], pa.date32(), safe=True)


def _unix_timestamp(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """UNIX_TIMESTAMP(s [, format]): seconds since 1970 of the (UTC) time; a string that does
    not parse gives Long.MIN_VALUE, as Flink's DateTimeUtils.unixTimestamp."""
    if len(args) > 1 and lits[1] is None:
        return pa.nulls(len(args[0]), out)
    pattern = str(lits[1]) if len(args) > 1 else DEFAULT_FORMAT
    ts = parse_timestamps(args[0], pattern)
    secs = pc.floor(pc.divide(ts.cast(pa.int64()).cast(pa.float64()), 1000.0)).cast(pa.int64())
    bad = pc.and_(pc.is_valid(args[0]), pc.is_null(ts))
    return pc.if_else(bad, pa.scalar(-(2**63), pa.int64()), secs)


def unix_now(n: int) -> Array:
    return pa.array(np.full(n, int(time.time()), dtype=np.int64))


def _from_unixtime(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """FROM_UNIXTIME(seconds [, format]): the UTC time as text in the (Java) format."""
    if len(args) > 1 and lits[1] is None:
        return pa.nulls(len(args[0]), out)
    pattern = str(lits[1]) if len(args) > 1 else DEFAULT_FORMAT
    secs = args[0].cast(pa.int64())
    ts = pc.multiply(secs, 1000).cast(_TS)
    from sqlengine.runtime.kernels import kernel_for

    return kernel_for("date_format")([ts, pa.nulls(len(ts), pa.string())], [None, pattern],
                                     pa.string())


def _convert_tz(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """CONVERT_TZ(text, from_zone, to_zone): the 'yyyy-MM-dd HH:mm:ss' time in one zone as
    text in the other."""
    if lits[1] is None or lits[2] is None:
        return pa.nulls(len(args[0]), out)
    try:
        src, dst = _zone(str(lits[1])), _zone(str(lits[2]))
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        msg = f"CONVERT_TZ: unknown time zone {lits[1]!r} or {lits[2]!r}"
        raise ExecutionError(msg) from None

    def one(v: str) -> str | None:
        try:
            local = dt.datetime.strptime(v.strip(), "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None
        return local.replace(tzinfo=src).astimezone(dst).strftime("%Y-%m-%d %H:%M:%S")

    return per_distinct(args[0], one, pa.string())


def _zone(name: str) -> dt.tzinfo:
    m = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?", name)
    if m:
        delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return dt.timezone(delta if m.group(1) == "+" else -delta)
    if name.upper() in ("UTC", "GMT", "Z"):
        return dt.UTC
    return zoneinfo.ZoneInfo(name)


_ARROW_UNITS = {"YEAR": "year", "QUARTER": "quarter", "MONTH": "month", "DAY": "day",
                "HOUR": "hour", "MINUTE": "minute", "SECOND": "second",
                "MILLISECOND": "millisecond"}


def _round_time(fn: Callable[..., Array]) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        unit = _ARROW_UNITS[str(lits[1])]
        t = args[0]
        if pa.types.is_date(t.type):
            res = fn(t.cast(_TS), unit=unit)
            return res.cast(pa.date32())
        return fn(t, unit=unit)

    return kernel


KERNELS: dict[str, Kernel] = {
    "to_timestamp": _to_timestamp,
    "to_date": _to_date,
    "unix_timestamp": _unix_timestamp,
    "from_unixtime": _from_unixtime,
    "convert_tz": _convert_tz,
    "floor_time": _round_time(pc.floor_temporal),
    "ceil_time": _round_time(pc.ceil_temporal),
}

# The clock functions, per batch of n rows.
CLOCK: dict[str, Callable[[int], Array]] = {
    "current_timestamp": lambda n: pa.array(np.full(n, int(time.time() * 1000)), _TS),
    "localtimestamp": lambda n: pa.array(np.full(n, int(time.time() * 1000)), _TS),
    "current_row_timestamp": lambda n: pa.array(np.full(n, int(time.time() * 1000)), _TS),
    "current_date": lambda n: pa.array(np.full(n, int(time.time() // 86400), np.int32),
                                       pa.date32()),
    "unix_timestamp": unix_now,
}
