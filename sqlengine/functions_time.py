"""Flink's temporal functions beyond EXTRACT / DATE_FORMAT / TIMESTAMPADD / TIMESTAMPDIFF:
TO_TIMESTAMP, TO_DATE, UNIX_TIMESTAMP, FROM_UNIXTIME, CONVERT_TZ, FLOOR / CEIL(t TO unit),
CURRENT_TIMESTAMP / NOW / LOCALTIMESTAMP / CURRENT_DATE (signatures; kernels in
``runtime.kernels_time``).

The session's time zone is UTC ('table.local-time-zone' is not implemented and is refused as
an unknown option): UNIX_TIMESTAMP and FROM_UNIXTIME read and write UTC wall-clock times.
"""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import ALIASES, Inference, Signature, _err, register

# FLOOR / CEIL(t TO unit)
TIME_FLOOR_UNITS = ("YEAR", "QUARTER", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND",
                    "MILLISECOND")


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
        if not (T.is_temporal(t) or t == T.NULL):
            raise _err(name, types[:1], "a DATE or TIMESTAMP")
        t = T.TIMESTAMP if t == T.NULL else t
        return t, [t, T.STRING]

    return infer


def _now(t: pa.DataType) -> Inference:
    return lambda types: (t, [])


register(Signature("to_timestamp", 1, 2, _parse(T.TIMESTAMP, "to_timestamp"),
                   literal_args=(1,)))
register(Signature("to_date", 1, 2, _parse(T.DATE, "to_date"), literal_args=(1,)))
register(Signature("unix_timestamp", 0, 2, _unix_timestamp, literal_args=(1,)))
register(Signature("from_unixtime", 1, 2, _from_unixtime, literal_args=(1,)))
register(Signature("convert_tz", 3, 3, _convert_tz, literal_args=(1, 2)))
register(Signature("floor_time", 2, 2, _floor_time("floor"), literal_args=(1,)))
register(Signature("ceil_time", 2, 2, _floor_time("ceil"), literal_args=(1,)))
register(Signature("current_timestamp", 0, 0, _now(T.TIMESTAMP)))
register(Signature("localtimestamp", 0, 0, _now(T.TIMESTAMP)))
register(Signature("current_date", 0, 0, _now(T.DATE)))
register(Signature("current_row_timestamp", 0, 0, _now(T.TIMESTAMP)))

ALIASES.update({"now": "current_timestamp", "localtime_stamp": "localtimestamp"})
