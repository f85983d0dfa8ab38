"""The jdbc connector's partitioned scan (Flink's 'scan.partition.*' options): the ranges of the
partition column a scan splits into, and the WHERE clause each range reads.

Flink's rules, followed exactly:

- 'scan.partition.column', 'scan.partition.num', 'scan.partition.lower-bound' and
  'scan.partition.upper-bound' are given all together or not at all; the bounds are integers
  (Flink's LONG options), lower <= upper; the column is numeric, DATE or TIMESTAMP.
- [lower, upper] is cut as JdbcNumericBetweenParametersProvider.ofBatchNum(num) does: ``num``
  (at most upper - lower + 1) consecutive ranges whose sizes differ by at most one, the
  larger first; each is one split reading ``WHERE col BETWEEN start AND end``.
- So only rows whose partition column lies within [lower, upper] are read: rows below
  'lower-bound', above 'upper-bound', or NULL there are not read at all (the bounds are a
  filter, not a hint), and on a DECIMAL / FLOAT / DOUBLE column a value strictly between one
  range's end and the next range's start (1.5 between [0, 1] and [2, 3]) is not read either.

What Flink leaves open, settled here: PostgreSQL compares a date or a timestamp with no
integer, so on a DATE column the bounds count days since 1970-01-01, and on a TIMESTAMP column
milliseconds since 1970-01-01 00:00:00 UTC (a java.sql.Timestamp's long); a TIMESTAMP range
[start, end] reads ``col >= start AND col < end + 1 ms``, which is Flink's BETWEEN for values
of millisecond precision and leaves no gap between ranges for finer ones.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

import pyarrow as pa

from sqlengine.connectors.base import Fail

COLUMN = "scan.partition.column"
NUM = "scan.partition.num"
LOWER = "scan.partition.lower-bound"
UPPER = "scan.partition.upper-bound"
KEYS = (COLUMN, NUM, LOWER, UPPER)

_LONG = re.compile(r"[+-]?[0-9]+")
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_EPOCH = dt.datetime(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class Partitioning:
    column: str
    num: int
    lower: int
    upper: int

    def ranges(self) -> list[tuple[int, int]]:
        """[start, end] of each split, as Flink's JdbcNumericBetweenParametersProvider
        (ofBatchNum, then getParameterValues) computes them; in integers, so that no value is
        lost to rounding however wide the bounds are."""
        count = self.upper - self.lower + 1
        num = min(self.num, count)
        size = -(-count // num)
        big = count - (size - 1) * num  # (the first ``big`` ranges hold ``size`` values)
        out, start = [], self.lower
        for i in range(num):
            end = start + size - 1 - (1 if i >= big else 0)
            out.append((start, end))
            start = end + 1
        return out


def _long(key: str, value: str, fail: Fail) -> int:
    if _LONG.fullmatch(value) is None or not _LONG_MIN <= int(value) <= _LONG_MAX:
        raise fail(key, f"option {key!r} must be an integer (a LONG, as in Flink; on a DATE "
                   "column days, on a TIMESTAMP column milliseconds since 1970-01-01), got "
                   f"{value!r}")
    return int(value)


def partitioning(options: dict[str, str], fail: Fail) -> Partitioning | None:
    """The table's partitioned scan (None: it has none); refuses a partial or invalid set of
    'scan.partition.*' options, naming the key."""
    given = [k for k in KEYS if k in options]
    if not given:
        return None
    missing = [k for k in KEYS if k not in options]
    if missing:
        raise fail(given[0], "partitioned scans need all or none of "
                   f"{', '.join(repr(k) for k in KEYS)} (as in Flink): "
                   f"{', '.join(repr(k) for k in missing)} "
                   f"{'is' if len(missing) == 1 else 'are'} missing")
    num = _long(NUM, options[NUM], fail)
    if num <= 0:
        raise fail(NUM, f"option {NUM!r} must be a positive integer, got {options[NUM]!r}")
    lower, upper = _long(LOWER, options[LOWER], fail), _long(UPPER, options[UPPER], fail)
    if lower > upper:
        raise fail(LOWER, f"'{LOWER}'='{lower}' must not be larger than '{UPPER}'='{upper}'")
    return Partitioning(options[COLUMN], num, lower, upper)


def type_refusal(t: pa.DataType) -> str | None:
    """Why a column of type ``t`` cannot be the partition column (None: it can)."""
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or \
            pa.types.is_date(t) or pa.types.is_timestamp(t):
        return None
    return "a numeric, DATE or TIMESTAMP column"


# (bounds beyond what Python's dates hold, years 1 to 9999, are taken as those limits)
_DAYS = ((dt.date.min - _EPOCH.date()).days, (dt.date.max - _EPOCH.date()).days)
_MILLIS = (_DAYS[0] * 86_400_000, (_DAYS[1] + 1) * 86_400_000 - 1)


def _day(days: int) -> dt.date:
    return _EPOCH.date() + dt.timedelta(days=min(max(days, _DAYS[0]), _DAYS[1]))


def _instant(millis: int) -> dt.datetime:
    return _EPOCH + dt.timedelta(milliseconds=min(max(millis, _MILLIS[0]), _MILLIS[1]))


def predicate(column_sql: str, t: pa.DataType, start: int, end: int) -> str:
    """The WHERE clause of the split [start, end] of a column of type ``t``. On a DATE or
    TIMESTAMP column a range past years 1 to 9999 reads what it holds of them: a side
    beyond them is left open (so a range from before year 1 reads a server's BC values), a
    range wholly beyond them reads nothing (clamped to the limits, ranges overlapped there,
    so rows of year 1 or 9999 were read twice, and the last millisecond of 9999 was cut
    off)."""
    if pa.types.is_date(t):
        lo, hi = _DAYS
        days = _day
        if end < lo or start > hi:
            return "FALSE"
        parts = ([f"{column_sql} >= '{days(start).isoformat()}'"] if start >= lo else []) + \
            ([f"{column_sql} <= '{days(end).isoformat()}'"] if end <= hi else [])
        return " AND ".join(parts) or f"{column_sql} IS NOT NULL"
    if pa.types.is_timestamp(t):
        lo, hi = _MILLIS
        if end < lo or start > hi:
            return "FALSE"
        # (a literal with +00: UTC for a timestamptz column; a timestamp column ignores it)
        parts = ([f"{column_sql} >= '{_instant(start).isoformat(sep=' ')}+00'"]
                 if start >= lo else []) + \
            ([f"{column_sql} < '{_instant(end + 1).isoformat(sep=' ')}+00'"]
             if end < hi else [])
        return " AND ".join(parts) or f"{column_sql} IS NOT NULL"
    return f"{column_sql} BETWEEN {start} AND {end}"
