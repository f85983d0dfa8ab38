"""Flink's temporal functions beyond EXTRACT / DATE_FORMAT / TIMESTAMPADD / TIMESTAMPDIFF:
TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP, FROM_UNIXTIME, CONVERT_TZ, FLOOR / CEIL(t TO unit),
CURRENT_TIMESTAMP / NOW / LOCALTIMESTAMP / CURRENT_DATE (signatures; kernels in
``runtime.kernels_time``).

TO_TIMESTAMP_LTZ gives a TIMESTAMP_LTZ(3) (an instant): from seconds or milliseconds since
1970, or from a string read in the zone it names, else in UTC (Flink's default). EXTRACT,
DATE_FORMAT and FLOOR / CEIL of a TIMESTAMP_LTZ read it in the session time zone
('table.local-time-zone'; the binder casts it to its wall-clock TIMESTAMP first).
UNIX_TIMESTAMP reads and FROM_UNIXTIME writes wall-clock times of the session time zone (the
binder hands their kernels the zone as a last, constant argument).
"""

from __future__ import annotations

import pyarrow as pa

from sqlengine import functions as F
from sqlengine import types as T
from sqlengine.errors import BindError, PlanError
from sqlengine.functions import ALIASES, Inference, Signature, _err, register
from sqlengine.options import check_time_zone

# FLOOR / CEIL(t TO unit)
TIME_FLOOR_UNITS = ("MILLENNIUM", "CENTURY", "DECADE", "YEAR", "QUARTER", "MONTH", "WEEK",
                    "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND")
# (units of years beyond one: Calcite's, centuries and millennia starting in years ...01)
YEARS_OF_UNIT = {"DECADE": 10, "CENTURY": 100, "MILLENNIUM": 1000}
# The units FLOOR / CEIL and EXTRACT take on a TIME.
_TIME_OF_DAY = ("hour", "minute", "second", "millisecond", "microsecond", "nanosecond")
# EXTRACT's units beyond functions.EXTRACT_UNITS (added to it here, so that they stay
# internal names: EXTRACT(EPOCH FROM t) binds to extract_epoch).
_MORE_EXTRACT = ("microsecond", "nanosecond", "epoch", "century", "millennium", "decade",
                 "isodow", "isoyear")
# EXTRACT from an interval: the fields of a day-time or of a year-month interval.
_DAY_TIME_FIELDS = ("day", "hour", "minute", "second", "millisecond")
_YEAR_MONTH_FIELDS = ("year", "month")


def _parse(result: pa.DataType, name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        for t in types:
            if not (T.is_string(t) or t == T.NULL):
                raise _err(name, types, "a STRING and a format STRING")
        return result, [T.STRING] * len(types)

    return infer


def _unix_timestamp(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("unix_timestamp", types, "a STRING and a format STRING")
    return T.BIGINT, [T.STRING] * len(types)


def _from_unixtime(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_numeric(types[0]) or types[0] == T.NULL) or any(
            not (T.is_string(t) or t == T.NULL) for t in types[1:]):
        raise _err("from_unixtime", types, "a number of seconds and a format STRING")
    return T.STRING, [T.BIGINT] + [T.STRING] * (len(types) - 1)


def _convert_tz(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("convert_tz", types, "STRING arguments")
    return T.STRING, [T.STRING] * 3


def _floor_time(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        t = types[0]
        if not (T.is_temporal(t) or T.is_time(t) or t == T.NULL):
            raise _err(name, types[:1], "a DATE, TIME or TIMESTAMP")
        t = T.TIMESTAMP if t == T.NULL else t
        return t, [t, T.STRING]

    return infer


def _extract(unit: str) -> Inference:
    """EXTRACT(unit FROM t): a BIGINT from a DATE or TIMESTAMP, a TIME for the units of a
    time of day, an interval for its own fields."""
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        t = types[0]
        ok = T.is_temporal(t) or t == T.NULL or \
            (T.is_time(t) and unit in _TIME_OF_DAY) or \
            (t == T.INTERVAL_DAY_TIME and unit in _DAY_TIME_FIELDS) or \
            (t == T.INTERVAL_YEAR_MONTH and unit in _YEAR_MONTH_FIELDS)
        if not ok:
            what = "a DATE, TIME or TIMESTAMP" if unit in _TIME_OF_DAY else "a DATE or TIMESTAMP"
            raise _err(unit, types, what)
        return T.BIGINT, [t if t != T.NULL else T.TIMESTAMP]

    return infer


def _date_format(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    """DATE_FORMAT(TIMESTAMP | STRING [, format]): as Flink, not a DATE (a string that is not
    a timestamp gives NULL)."""
    t = types[0]
    if not (pa.types.is_timestamp(t) or T.is_string(t) or t == T.NULL):
        raise _err("date_format", types, "a TIMESTAMP or STRING and a format STRING")
    arg = T.STRING if t == T.NULL else t
    return T.STRING, [arg, *([T.STRING] if len(types) > 1 else [])]


# TO_TIMESTAMP_LTZ's default format (Flink's; a string without a format is read as CAST reads
# a TIMESTAMP, so the fraction of a second may be left out).
LTZ_DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss.SSS"


def _to_timestamp_ltz(types: list[pa.DataType], values: list[object]
                      ) -> tuple[pa.DataType, list[pa.DataType]]:
    """TO_TIMESTAMP_LTZ(numeric [, precision 0 | 3]) or (string [, format [, zone]]): a
    TIMESTAMP_LTZ(3)."""
    first = types[0]
    out = T.ltz_type(3)
    if T.is_numeric(first) or (first == T.NULL and len(types) == 2 and
                               T.is_integer(types[1])):
        if len(types) > 2 or (len(types) == 2 and not (T.is_integer(types[1]) or
                                                        types[1] == T.NULL)):
            raise _err("to_timestamp_ltz", types, "a number and a precision (0 or 3), or a "
                       "STRING [, a format STRING [, a time zone STRING]]")
        if len(values) > 1 and values[1] is not None:
            if not (isinstance(values[1], int) and 0 <= values[1] <= 9):
                msg = (f"TO_TIMESTAMP_LTZ: the precision must be 0 (seconds) to 9 "
                       f"(nanoseconds), got {values[1]}")
                raise BindError(msg)
            # (the number counts 10^-precision seconds; a TIMESTAMP_LTZ(3) up to
            # milliseconds, finer ones as fine as that, as Flink 2.3)
            out = T.ltz_type(max(3, values[1]))
        return out, [T.BIGINT if first == T.NULL else first, T.INT][:len(types)]
    if not all(T.is_string(t) or t == T.NULL for t in types):
        raise _err("to_timestamp_ltz", types, "a number and a precision (0 or 3), or a "
                   "STRING [, a format STRING [, a time zone STRING]]")
    if len(values) > 2 and values[2] is not None:
        try:
            check_time_zone(str(values[2]))
        except PlanError:
            msg = f"TO_TIMESTAMP_LTZ: unknown time zone {values[2]!r}"
            raise BindError(msg) from None
    return out, [T.STRING] * len(types)


def _now(t: pa.DataType) -> Inference:
    return lambda types: (t, [])


register(Signature("to_timestamp", 1, 2, _parse(T.TIMESTAMP, "to_timestamp")))
register(Signature("to_date", 1, 2, _parse(T.DATE, "to_date")))
register(Signature("unix_timestamp", 0, 2, _unix_timestamp))
register(Signature("from_unixtime", 1, 2, _from_unixtime))
register(Signature("convert_tz", 3, 3, _convert_tz))
register(Signature("floor_time", 2, 2, _floor_time("floor"), literal_args=(1,)))
register(Signature("ceil_time", 2, 2, _floor_time("ceil"), literal_args=(1,)))
# The clock functions whose value is the session time zone's wall clock: LOCALTIMESTAMP,
# CURRENT_DATE, CURRENT_TIME / LOCALTIME. Outside UTC they are bound with the zone as an
# argument (bind_scalar.py). CURRENT_TIMESTAMP / NOW() / CURRENT_ROW_TIMESTAMP() are
# TIMESTAMP_LTZ(3) instants, as in Flink (shown in the zone, whatever it is).
WALL_CLOCK = frozenset({"localtimestamp", "current_date", "current_time"})
register(Signature("current_timestamp", 0, 0, _now(T.ltz_type(3))))
register(Signature("localtimestamp", 0, 0, _now(T.TIMESTAMP)))
register(Signature("current_date", 0, 0, _now(T.DATE)))
register(Signature("current_row_timestamp", 0, 0, _now(T.ltz_type(3))))
register(Signature("current_time", 0, 0, _now(T.TIME)))
register(Signature("date_format", 1, 2, _date_format))
register(Signature("to_timestamp_ltz", 1, 3, lambda types: _to_timestamp_ltz(types, []),
                   literal_args=(1, 2), by_value=_to_timestamp_ltz))
F.EXTRACT_UNITS = (*F.EXTRACT_UNITS, *(u for u in _MORE_EXTRACT if u not in F.EXTRACT_UNITS))
for _unit in F.EXTRACT_UNITS:
    register(Signature(f"extract_{_unit}", 1, 1, _extract(_unit)))

ALIASES.update({"now": "current_timestamp", "localtime_stamp": "localtimestamp",
                "localtime": "current_time"})
