"""Kernels of ``sqlengine.functions_time`` (Flink's semantics). The session time zone
('table.local-time-zone') reaches a kernel as a constant argument the binder adds (casts to
and from TIMESTAMP_LTZ, UNIX_TIMESTAMP, FROM_UNIXTIME); the other functions read UTC or the
zone they are given.

Parsing with a format goes through Arrow's strptime on the Java pattern turned into a strftime
one (fractions of a second 'S...' after the last separator are read apart); a string that
does not fit is NULL, as in Flink. The clock functions read the wall clock once per batch.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import cast_array, from_local, to_local
from sqlengine.errors import ExecutionError
from sqlengine.functions_time import YEARS_OF_UNIT
from sqlengine.runtime.column_arguments import constants_or_columns
from sqlengine.runtime.kernels_text import per_distinct

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]
_TS = pa.timestamp("ms")
_LTZ = pa.timestamp("ms", tz="UTC")  # (TIMESTAMP_LTZ(3))
DEFAULT_FORMAT = "yyyy-MM-dd HH:mm:ss"


_PARSE_WIDTHS = {"M": "MM", "d": "dd", "H": "HH", "h": "hh", "m": "mm", "s": "ss",
                 "y": "yyyy", "yyy": "yyyy"}


def _java_format(pattern: str) -> str:
    """A Java pattern for parsing as a strptime format: a field's width does not matter in
    parsing ('yyyy-M-d' reads '2024-3-5' and '2024-03-05'; strptime's %m, %d... take one or
    two digits)."""
    from sqlengine.runtime.kernels import java_pattern_tokens, java_to_strftime

    tokens = java_pattern_tokens(pattern)
    return java_to_strftime("".join(_PARSE_WIDTHS.get(t, t) for t in tokens))


def _strptime(s: Array, pattern: str) -> Array:
    """``pc.strptime`` of a Java pattern; a pattern without a year reads 1970's dates (as
    Java's SimpleDateFormat; strptime's year is 1900)."""
    fmt = _java_format(pattern)
    if not re.search(r"[yuY]", re.sub(r"'[^']*'", "", pattern)):
        s = pc.binary_join_element_wise("1970", s, "\x1f")
        fmt = f"%Y\x1f{fmt}"
    return pc.strptime(s, format=fmt, unit="ms", error_is_null=True)


def parse_timestamps(s: Array, pattern: str) -> Array:
    """Strings in the Java ``pattern`` as TIMESTAMP(3) (UTC wall clock), NULL where they do
    not fit it."""
    # (the fraction at the end, after a separator or right after the seconds: 'ss.SSS',
    # 'ssSSS' as in 'yyyyMMddHHmmssSSS', its digits then as many as its letters)
    m = re.fullmatch(r"(.*?)([^A-Za-z']|(?<=s))(S{1,9})", pattern)
    if "S" in pattern and m is None:
        msg = f"unsupported fraction-of-second pattern in {pattern!r} (only at the end, after " \
              "a separator or the seconds, as in 'yyyy-MM-dd HH:mm:ss.SSS' or 'HHmmssSSS')"
        raise ExecutionError(msg)
    if m is None:
        return _strptime(s, pattern)
    head, sep, frac = m.groups()
    parts = pc.extract_regex(s, pattern=rf"^(?P<head>.*){re.escape(sep)}"
                                        rf"(?P<frac>\d{{{len(frac)}}})$")
    base = _strptime(pc.struct_field(parts, [0]), head)
    digits = pc.struct_field(parts, [1])
    ms = pc.cast(pc.utf8_slice_codeunits(pc.utf8_rpad(digits, 3, "0"), 0, 3), pa.int64())
    return pc.add(base.cast(pa.int64()), ms).cast(_TS)


# Flink's fallback where a string does not fit TO_TIMESTAMP's format: java.sql.Timestamp's
# 'yyyy-[m]m-[d]d hh:mm:ss[.f...]' (with a space), else java.sql.Date's 'yyyy-[m]m-[d]d'
# (midnight), after trimming.
_FALLBACK = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})"
                       r"(?:\.(\d{1,9}))?)?")


def _fallback_ms(text: str) -> int | None:
    m = _FALLBACK.fullmatch(text.strip())
    if m is None or (" " in text.strip()) != (m.group(4) is not None):
        return None
    y, mo, d, h, mi, sec, frac = m.groups()
    if not (1 <= int(mo) <= 12 and 1 <= int(d) <= 31):
        return None
    # (java.sql's constructors roll a day past the month's end over: 04-31 is May 1st)
    try:
        wall = dt.datetime(int(y), int(mo), 1) + dt.timedelta(
            days=int(d) - 1, hours=int(h or 0), minutes=int(mi or 0), seconds=int(sec or 0))
    except (ValueError, OverflowError):
        return None
    ms = int(((frac or "") + "000")[:3])
    return int((wall - dt.datetime(1970, 1, 1)).total_seconds()) * 1000 + ms


def _smart_days(s: Array, pattern: str, parsed: Array) -> Array:
    """A day past its month's end as DateTimeFormatter's SMART resolving reads it: the
    month's last day ('2024-04-31' with 'yyyy-MM-dd' is April 30th), where strptime rolled
    it over into the next month."""
    if not re.search(r"d", re.sub(r"'[^']*'", "", pattern)) or not pc.any(
            pc.less_equal(pc.day(parsed), 3)).as_py():
        return parsed
    try:
        fields = pc.extract_regex(s, pattern="^" + _java_regex(pattern))
    except (ExecutionError, pa.ArrowInvalid):
        return parsed
    if "d" not in [f.name for f in fields.type]:
        return parsed
    day = pc.struct_field(fields, "d").cast(pa.int64())
    got = pc.day(parsed)
    rolled = pc.fill_null(pc.and_(pc.greater(day, 28), pc.not_equal(day, got)), False)
    if not pc.any(rolled).as_py():
        return parsed
    back = pc.subtract(parsed.cast(pa.int64()), pc.multiply(got, 86_400_000)).cast(_TS)
    return pc.if_else(rolled, back, parsed)


def parse_with_fallback(s: Array, pattern: str) -> Array:
    """TO_TIMESTAMP(s, format) / TO_TIMESTAMP_LTZ(s, format): the strings in the format, and
    where one does not fit it, read as Flink's DateTimeUtils falls back (a timestamp or a
    date in SQL's text: '2024-03-05' with 'yyyy-MM-dd HH:mm:ss' is midnight, '2024-03-05
    07:08:09.123' with 'yyyy-MM-dd' keeps its time); NULL where neither reads it."""
    parsed = _smart_days(s, pattern, parse_timestamps(s, pattern))
    bad = pc.and_(pc.is_valid(s), pc.is_null(parsed))
    if not pc.any(bad).as_py():
        return parsed
    fallback = per_distinct(s, _fallback_ms, pa.int64()).cast(_TS)
    return pc.if_else(bad, fallback, parsed)


def _to_timestamp(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """TO_TIMESTAMP(s [, format]): without a format as CAST(s AS TIMESTAMP(3)) reads it (a
    date alone is midnight); with one, as parse_with_fallback; NULL where it does not
    parse."""
    if len(args) > 1:
        if lits[1] is None:
            return pa.nulls(len(args[0]), out)
        return parse_with_fallback(args[0], str(lits[1]))
    return cast_array(args[0], _TS, safe=True)


def _to_date(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    if len(args) > 1:
        if lits[1] is None:
            return pa.nulls(len(args[0]), out)
        pattern = str(lits[1])
        days = _smart_days(args[0], pattern, parse_timestamps(args[0], pattern)
                           ).cast(pa.date32())
        bad = pc.and_(pc.is_valid(args[0]), pc.is_null(days))
        if pc.any(bad).as_py():  # as SimpleDateFormat: a leading match, fields rolling over
            secs = per_distinct(args[0], _lenient_seconds(pattern), pa.int64())
            secs = pc.if_else(pc.equal(secs, -(2**63)), pa.scalar(None, pa.int64()), secs)
            lenient = pc.multiply(secs, 1000).cast(_TS).cast(pa.date32())
            days = pc.if_else(bad, lenient, days)
        return days
    return cast_array(args[0], pa.date32(), safe=True)


def _unix_timestamp(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """UNIX_TIMESTAMP(s [, format], session zone): seconds since 1970 of the time read in the
    session time zone ('table.local-time-zone', added by the binder; a wall-clock time the
    clocks pass twice is standard time, one they skip moves on by the gap, as Flink's
    SimpleDateFormat reads them); a string that does not parse gives Long.MIN_VALUE, as
    Flink's DateTimeUtils.unixTimestamp."""
    zone = str(lits[-1])
    args, lits = args[:-1], lits[:-1]
    if len(args) > 1 and lits[1] is None:
        return pa.nulls(len(args[0]), out)
    pattern = str(lits[1]) if len(args) > 1 else DEFAULT_FORMAT
    try:
        ts = from_local(parse_timestamps(args[0], pattern), zone, later=True)
        # (milliseconds / 1000 in Java's long division, toward zero: 1969-12-31 23:59:59.5
        # is 0, as Flink's)
        secs = pc.trunc(pc.divide(ts.cast(pa.int64()).cast(pa.float64()), 1000.0)
                        ).cast(pa.int64())
    except ExecutionError:  # (a pattern Arrow's strptime cannot take)
        ts = secs = pa.nulls(len(args[0]), pa.int64())
    bad = pc.and_(pc.is_valid(args[0]), pc.is_null(ts))
    if pc.any(bad).as_py():  # as SimpleDateFormat: a leading match, a zone offset 'X'
        lenient = per_distinct(args[0], _lenient_seconds(pattern, zone), pa.int64())
        secs = pc.if_else(bad, lenient, secs)
    return secs


_NUMBER_FIELDS = {"y": "y", "M": "M", "d": "d", "H": "H", "k": "k", "h": "h", "K": "K",
                  "m": "m", "s": "s", "S": "S", "D": "D"}
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _java_regex(pattern: str) -> str:
    """A Java date pattern as a regular expression with a group per field (SimpleDateFormat's
    reading: a field of two letters or more next to a number takes that many digits)."""
    from sqlengine.runtime.kernels import java_pattern_tokens

    out = []
    tokens = java_pattern_tokens(pattern)
    for i, token in enumerate(tokens):
        letter = token[0]
        # (a field takes as many digits as its letters only when another number field
        # follows it at once, 'HHmmss'; else all the digits there: 'ss.SSS' reads '.1234'
        # as 1234 ms, as SimpleDateFormat does)
        abutting = i + 1 < len(tokens) and tokens[i + 1][0] in _NUMBER_FIELDS and \
            not (tokens[i + 1][0] == "M" and len(tokens[i + 1]) >= 3)
        if token.startswith("'"):
            out.append(re.escape(token[1:-1] or "'"))
        elif letter == "M" and len(token) >= 3:
            out.append(r"(?P<Mname>[A-Za-z]+)")
        elif letter in _NUMBER_FIELDS:
            width = rf"\d{{{len(token)}}}" if len(token) >= 2 and abutting else r"\d+"
            # (SimpleDateFormat.subParse skips spaces and tabs before a field)
            out.append(rf"[ \t]*(?P<{letter}>{'[+-]?' if letter == 'y' else ''}{width})")
        elif letter in "XZz":
            out.append(r"(?P<zone>Z|[+-]\d{2}(?::?\d{2})?|GMT|UTC)")
        elif letter == "a":
            out.append(r"(?P<a>[AaPp][Mm])")
        elif letter == "E":
            out.append(r"[A-Za-z]+")
        elif letter.isalpha():
            msg = f"unsupported pattern letter {token!r} in {pattern!r}"
            raise ExecutionError(msg)
        else:
            out.append(r"\s*" if token.isspace() else re.escape(token))
    return "".join(out)


def _lenient_seconds(pattern: str, zone: str = "UTC") -> Callable[[str], int]:
    """UNIX_TIMESTAMP's reading of one string, as Flink's (SimpleDateFormat): the pattern
    matched at the start (text after it ignored), a zone offset applied (else the time is
    ``zone``'s, see _later_instant); Long.MIN_VALUE where it does not match."""
    regex = re.compile(_java_regex(pattern))
    local = _zone(zone)

    def one(text: str) -> int:
        m = regex.match(text)
        if m is None:
            return -(2**63)
        f = {k: v for k, v in m.groupdict().items() if v is not None}
        try:
            month = int(f["M"]) if "M" in f else \
                _MONTHS.index(f["Mname"][:3].lower()) + 1 if "Mname" in f else 1
            year = int(f.get("y", 1970)) + (month - 1) // 12  # (month 13: next January)
            month = (month - 1) % 12 + 1
            # (an hour past the day's rolls over into the next; 'k' counts 1 to 24, 24 the
            # day's midnight)
            hour = int(f["H"]) if "H" in f else int(f.get("k", 0)) % 24
            if "h" in f or "K" in f:
                hour = int(f.get("h", f.get("K", 0))) % 12 + \
                    (12 if f.get("a", "am").lower() == "pm" else 0)
            day = dt.datetime(year, month, 1) + \
                dt.timedelta(days=int(f.get("d", 1)) - 1 + (int(f["D"]) - 1 if "D" in f else 0))
            wall = day + dt.timedelta(
                hours=hour, minutes=int(f.get("m", 0)), seconds=int(f.get("s", 0)),
                milliseconds=int(f.get("S", 0)))
            if "zone" not in f:
                return int(_later_instant(wall, local) // 1)
        except (ValueError, OverflowError):
            return -(2**63)
        stamp = wall.replace(tzinfo=dt.UTC)
        zone_text = f["zone"]
        if zone_text[0] in "+-":
            hh, mm = int(zone_text[1:3]), int(zone_text[-2:]) if len(zone_text) > 3 else 0
            stamp -= (1 if zone_text[0] == "+" else -1) * dt.timedelta(hours=hh, minutes=mm)
        return int(stamp.timestamp() // 1)

    return one


def _later_instant(wall: dt.datetime, zone: dt.tzinfo) -> float:
    """Seconds since 1970 of a wall-clock time of ``zone`` as java.util's calendar reads it:
    of the two readings of a time the clocks pass twice, the later (standard time); a time
    they skip, read with the offset before the gap (so it moves on by the gap)."""
    return max(wall.replace(tzinfo=zone, fold=0).timestamp(),
               wall.replace(tzinfo=zone, fold=1).timestamp())


def _from_unixtime(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """FROM_UNIXTIME(seconds [, format], session zone): the session time zone's wall-clock
    time as text in the (Java) format."""
    zone = str(lits[-1])
    args, lits = args[:-1], lits[:-1]
    if len(args) > 1 and lits[1] is None:
        return pa.nulls(len(args[0]), out)
    pattern = str(lits[1]) if len(args) > 1 else DEFAULT_FORMAT
    secs = args[0].cast(pa.int64())
    from sqlengine.runtime.kernels import java_pattern_tokens, kernel_for

    tokens = java_pattern_tokens(pattern)
    if any(t[0] in "zZX" for t in tokens):  # (the zone's name or offset at each instant)
        return per_distinct(secs, _zoned_text(tokens, zone), pa.string())
    beyond = pc.greater(secs, _LAST_SECOND)
    near = pc.if_else(beyond, 0, secs) if pc.any(beyond).as_py() else secs
    ts = to_local(pc.multiply(near, 1000).cast(pa.timestamp("ms", tz="UTC")), zone)
    text = kernel_for("date_format")([ts, pa.nulls(len(ts), pa.string())], [None, pattern],
                                     pa.string())
    if near is secs:
        return text
    # Past year 9999 (seconds given in milliseconds, say): the year as many digits as it
    # takes, as Java's SimpleDateFormat writes it (strftime's years wrapped around)
    far = per_distinct(pc.if_else(beyond, secs, None), _far_text(tokens, pattern, zone),
                       pa.string())
    return pc.if_else(beyond, far, text)


# The last second of year 9999 (UTC) and the seconds of 400 Gregorian years: the calendar
# repeats itself every 400 years, weekdays too (146,097 days, 20,871 weeks).
_LAST_SECOND = 253_402_300_799
_CYCLE_SECONDS = 146_097 * 86_400


def _far_text(tokens: list[str], pattern: str, zone: str) -> Callable[[int], str]:
    """FROM_UNIXTIME's text of an instant past year 9999: formatted as the same instant a
    whole number of 400-year cycles earlier, its year written that many years later."""
    fmt = _java_format_tokens(tokens, pattern)
    tz = _zone(zone)

    def one(secs: int) -> str:
        cycles = (secs - _LAST_SECOND) // _CYCLE_SECONDS + 1
        v = dt.datetime.fromtimestamp(secs - cycles * _CYCLE_SECONDS, tz).replace(tzinfo=None)
        return fmt(v, 0, 400 * cycles)

    return one


def _zoned_text(tokens: list[str], zone: str) -> Callable[[int], str]:
    """FROM_UNIXTIME's text of one instant with zone letters, as SimpleDateFormat writes them
    in the session zone: 'z' its short name (UTC, EST, EDT, CST), 'Z' the offset as -0500,
    'X' / 'XX' / 'XXX' as -05 / -0500 / -05:00 (Z at UTC); the other letters as DATE_FORMAT
    writes the zone's wall clock."""
    tz = _zone(zone)
    formats: dict[tuple, Callable[..., str]] = {}

    def one(secs: int) -> str:
        # (past year 9999 whole 400-year cycles earlier, the year written as many later: the
        # calendar repeats itself, see _far_text)
        cycles = (secs - _LAST_SECOND) // _CYCLE_SECONDS + 1 if secs > _LAST_SECOND else 0
        aware = dt.datetime.fromtimestamp(secs - cycles * _CYCLE_SECONDS, tz)
        offset = aware.utcoffset() or dt.timedelta(0)
        minutes = int(offset.total_seconds() // 60)
        sign = "-" if minutes < 0 else "+"
        hh, mm = divmod(abs(minutes), 60)
        parts = []
        for t in tokens:
            letter = t[0]
            if letter == "z":
                if len(t) >= 4:
                    msg = f"FROM_UNIXTIME: the long zone name {t!r} is not supported"
                    raise ExecutionError(msg)
                text = aware.tzname() or "GMT"
            elif letter == "Z":
                text = f"{sign}{hh:02d}{mm:02d}"
            elif letter == "X":
                text = "Z" if minutes == 0 else f"{sign}{hh:02d}" + (
                    "" if len(t) == 1 else f"{mm:02d}" if len(t) == 2 else f":{mm:02d}")
            else:
                parts.append(t)
                continue
            parts.append(f"'{text}'")  # (a literal token: its text between the quotes)
        key = tuple(parts)
        if key not in formats:
            formats[key] = _java_format_tokens(parts, "".join(tokens))
        return formats[key](aware.replace(tzinfo=None), 0, 400 * cycles)

    return one


_CONVERT_TZ_TEXT = re.compile(r"\s*(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})")


def _convert_tz(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """CONVERT_TZ(text, from_zone, to_zone): the 'yyyy-MM-dd HH:mm:ss' time in one zone as
    text in the other (a time the first zone's clocks pass twice read as standard time, as
    Flink's SimpleDateFormat); the zones named as java.util.TimeZone names them
    (_java_time_zone)."""
    if lits[1] is None or lits[2] is None:
        return pa.nulls(len(args[0]), out)
    src, dst = _java_time_zone(str(lits[1])), _java_time_zone(str(lits[2]))

    def one(v: str) -> str | None:
        # (Java's SimpleDateFormat.parse reads the pattern's part and ignores what follows:
        # '2020-03-08 01:30:00.5' is 01:30:00)
        m = _CONVERT_TZ_TEXT.match(v)
        if m is None:
            return None
        y, mo, d, h, mi, sec = (int(g) for g in m.groups())
        try:  # (lenient, as SimpleDateFormat: February 30 is March 1 or 2)
            year, month = divmod(y * 12 + mo - 1, 12)
            local = dt.datetime(year, month + 1, 1) + dt.timedelta(
                days=d - 1, hours=h, minutes=mi, seconds=sec)
        except (ValueError, OverflowError):
            return None
        seconds = int(_later_instant(local, src))
        # (the zone's offset at the instant, or at the last one Python has, 9999-12-31: the
        # wall clock may pass year 9999, as Flink's '10000-01-01 05:29:59')
        at = dt.datetime.fromtimestamp(min(seconds, _LAST_SECOND), dt.UTC)
        offset = at.astimezone(dst).utcoffset() or dt.timedelta(0)
        return _wall_text(seconds + int(offset.total_seconds()))

    return per_distinct(args[0], one, pa.string())


_LAST_SECOND = int(dt.datetime(9999, 12, 31, tzinfo=dt.UTC).timestamp())


def _wall_text(seconds: int) -> str:
    """'yyyy-MM-dd HH:mm:ss' of seconds since 1970, past year 9999 too (numpy's datetime64
    reaches there; Python's datetime stops at 9999)."""
    return str(np.datetime64(seconds, "s")).replace("T", " ")


# java.util.TimeZone's three-letter IDs (ZoneId.SHORT_IDS; EST, MST and HST fixed offsets).
_JAVA_SHORT_IDS = {
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires", "ART": "Africa/Cairo", "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka", "CAT": "Africa/Harare",
    "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata", "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh"}
_JAVA_FIXED = {"EST": -5, "MST": -7, "HST": -10}


def _java_time_zone(name: str) -> dt.tzinfo:
    """A zone as java.util.TimeZone.getTimeZone reads its name (CONVERT_TZ's, in Flink): an
    ID as the tz database spells it (case counts), 'GMT+8' / 'GMT-05:30', a three-letter ID;
    any other name is GMT, without an error ('+08:00', 'UTC+8', 'utc')."""
    m = re.fullmatch(r"GMT([+-])(\d{1,2})(?::?(\d{2}))?", name)
    if m is not None:
        hours, minutes = int(m.group(2)), int(m.group(3) or 0)
        if hours <= 23 and minutes <= 59:
            delta = dt.timedelta(hours=hours, minutes=minutes)
            return dt.timezone(delta if m.group(1) == "+" else -delta)
        return dt.UTC
    if name in _JAVA_FIXED:
        return dt.timezone(dt.timedelta(hours=_JAVA_FIXED[name]))
    name = _JAVA_SHORT_IDS.get(name, name)
    if name in ("UTC", "GMT"):
        return dt.UTC
    import zoneinfo

    try:
        return zoneinfo.ZoneInfo(name)
    except (LookupError, ValueError, OSError):
        return dt.UTC


def _zone(name: str) -> dt.tzinfo:
    m = re.fullmatch(r"(?:GMT|UTC)?([+-])(\d{1,2}):?(\d{2})?", name)
    if m:
        delta = dt.timedelta(hours=int(m.group(2)), minutes=int(m.group(3) or 0))
        return dt.timezone(delta if m.group(1) == "+" else -delta)
    if name.upper() in ("UTC", "GMT", "Z"):
        return dt.UTC
    import zoneinfo  # (only when a zone is named)

    return zoneinfo.ZoneInfo(name)


_ARROW_UNITS = {"YEAR": "year", "QUARTER": "quarter", "MONTH": "month", "WEEK": "week",
                "DAY": "day", "HOUR": "hour", "MINUTE": "minute", "SECOND": "second",
                "MILLISECOND": "millisecond"}
_PER_SECOND = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}
_DAY = 86_400


def _round_time(fn: Callable[..., Array]) -> Kernel:
    """FLOOR / CEIL(t TO unit); weeks start on Sunday (as Calcite's); a TIME's CEIL past
    23:00 wraps to midnight."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if len(args) == 3:  # (a TIMESTAMP_LTZ, a unit below a day, the session time zone)
            from sqlengine.cast import to_local

            t = args[0]
            local = to_local(t, str(lits[2]))
            rounded = kernel([local, args[1]], lits[:2], local.type)
            shift = pc.subtract(rounded.cast(pa.int64()), local.cast(pa.int64()))
            return pc.add(t.cast(pa.int64()), shift).cast(t.type)
        if str(lits[1]) in YEARS_OF_UNIT:
            return _round_years(args[0], YEARS_OF_UNIT[str(lits[1])], fn is pc.ceil_temporal)
        unit = _ARROW_UNITS[str(lits[1])]
        t = args[0]
        ts = t.cast(_TS) if pa.types.is_date(t.type) else t
        res = fn(ts, unit=unit, week_starts_monday=False)
        if fn is pc.ceil_temporal:
            # (Arrow's CEIL of a value already on a year, quarter or month boundary is the
            # next one; Flink's keeps it, as for the other units)
            floor = pc.floor_temporal(ts, unit=unit, week_starts_monday=False)
            res = pc.if_else(pc.equal(floor, ts), ts, res)
        if pa.types.is_date(t.type):
            return res.cast(pa.date32())
        if pa.types.is_time(t.type):
            return _time_of_day(_time_ticks(res), res.type, _mask(res))
        return res

    return kernel


def _round_years(t: Array, years: int, ceil: bool) -> Array:
    """FLOOR / CEIL(t TO DECADE | CENTURY | MILLENNIUM) of a DATE or TIMESTAMP, as Flink 2.3
    (Calcite's): decades start in years ...0, centuries and millennia in years ...01; CEIL is
    the FLOOR plus the unit, also for a value on a boundary (CEIL of 2020-01-01 TO DECADE is
    2030-01-01)."""
    from sqlengine.cast_datetime_text import epoch_days

    y = pc.year(t).fill_null(1970).to_numpy(zero_copy_only=False).astype(np.int64)
    first = y // years * years if years == 10 else (y - 1) // years * years + 1
    first = first + years if ceil else first
    days = epoch_days(first, np.ones_like(first), np.ones_like(first))
    if pa.types.is_date(t.type):
        return pa.array(days.astype(np.int32), pa.int32(), mask=_mask(t)).cast(t.type)
    ticks = days * _DAY * _PER_SECOND[t.type.unit]
    return pa.array(ticks, pa.int64(), mask=_mask(t)).cast(t.type)


def _mask(*arrays: Array) -> np.ndarray | None:
    masks = [pc.is_null(a).to_numpy(zero_copy_only=False) for a in arrays if a.null_count]
    return np.logical_or.reduce(masks) if masks else None


def _time_ticks(a: Array) -> np.ndarray:
    raw = a.cast(pa.int32() if pa.types.is_time32(a.type) else pa.int64())
    return raw.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)


def _time_of_day(ticks: np.ndarray, t: pa.DataType, mask: np.ndarray | None) -> Array:
    """Ticks of ``t``'s unit wrapped into one day, as a TIME ``t``."""
    ticks = np.mod(ticks, _DAY * _PER_SECOND[t.unit])
    store = pa.int32() if pa.types.is_time32(t) else pa.int64()
    return pa.array(ticks.astype(store.to_pandas_dtype()), store, mask=mask).cast(t)


def _time_shift(sign: int) -> Kernel:
    """TIME +/- a day-time interval, around the clock (TIME '23:00' + 2 hours is 01:00)."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        t, interval = args
        ms = interval.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        per = _PER_SECOND[t.type.unit]
        delta = ms * (per // 1000) if per >= 1000 else np.floor_divide(ms, 1000 // per)
        return _time_of_day(_time_ticks(t) + sign * delta, out, _mask(t, interval))

    return kernel


def _interval_times(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """An interval times an integer."""
    interval, n = args
    count = n.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    mask = _mask(interval, n)
    if out == T.INTERVAL_YEAR_MONTH:
        from sqlengine.runtime.intervals import month_intervals, months

        return month_intervals(months(interval) * count, mask)
    ms = interval.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    return pa.array(ms * count, pa.int64(), mask=mask).cast(out)


def _toward_zero(a: np.ndarray, b: int) -> np.ndarray:
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def _extract(unit: str) -> Kernel:
    """EXTRACT(unit FROM x) as Flink: of a DATE, TIME or TIMESTAMP, or a field of an interval
    (Java's truncating division); MILLISECOND / MICROSECOND / NANOSECOND are the fraction of
    the second, EPOCH the seconds since 1970, DOW 1 = Sunday, ISODOW 1 = Monday."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        x = args[0]
        t = x.type
        if t == T.INTERVAL_DAY_TIME:
            ms = x.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
            span = {"day": 86_400_000, "hour": 3_600_000, "minute": 60_000, "second": 1000,
                    "millisecond": 1}[unit]
            within = {"day": None, "hour": 86_400_000, "minute": 3_600_000, "second": 60_000,
                      "millisecond": 1000}[unit]
            if within is not None:
                ms = np.fmod(ms, within)
            return pa.array(_toward_zero(ms, span), pa.int64(), mask=_mask(x))
        if t == T.INTERVAL_YEAR_MONTH:
            months = np.array([0 if v is None else v.months for v in x.to_pylist()], np.int64)
            res = _toward_zero(months, 12) if unit == "year" else np.fmod(months, 12)
            return pa.array(res, pa.int64(), mask=_mask(x))
        if pa.types.is_date(t) and unit in ("hour", "minute", "second", "millisecond",
                                            "microsecond", "nanosecond"):
            x = x.cast(pa.timestamp("s"))
        return _part(unit, x).cast(pa.int64())

    return kernel


def _part(unit: str, x: Array) -> Array:
    if unit == "dow":  # Flink: 1 = Sunday ... 7 = Saturday
        return pc.day_of_week(x, count_from_zero=False, week_start=7)
    if unit == "isodow":
        return pc.day_of_week(x, count_from_zero=False, week_start=1)
    if unit == "microsecond":
        return pc.add(pc.multiply(pc.millisecond(x).cast(pa.int64()), 1000),
                      pc.microsecond(x).cast(pa.int64()))
    if unit == "nanosecond":
        micro = _part("microsecond", x)
        return pc.add(pc.multiply(micro, 1000), pc.nanosecond(x).cast(pa.int64()))
    if unit == "epoch":
        if pa.types.is_date(x.type):
            return pc.multiply(x.cast(pa.int32()).cast(pa.int64()), _DAY)
        ticks = x.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        secs = np.floor_divide(ticks, _PER_SECOND[x.type.unit])
        return pa.array(secs, pa.int64(), mask=_mask(x))
    if unit in ("century", "millennium", "decade"):
        year = pc.year(x).cast(pa.int64())
        if unit == "decade":
            return pc.floor(pc.divide(year.cast(pa.float64()), 10.0)).cast(pa.int64())
        span = 100 if unit == "century" else 1000
        years = year.fill_null(0).to_numpy(zero_copy_only=False)
        res = np.where(years > 0, (years + span - 1) // span,
                       -((-years + span - 1) // span))
        return pa.array(res, pa.int64(), mask=_mask(x))
    fn = {"year": pc.year, "quarter": pc.quarter, "month": pc.month, "week": pc.iso_week,
          "day": pc.day, "doy": pc.day_of_year, "hour": pc.hour, "minute": pc.minute,
          "second": pc.second, "millisecond": pc.millisecond, "isoyear": pc.iso_year}[unit]
    return fn(x)


_JAVA_NAMES = {"EEE": "%a", "EEEE": "%A", "MMM": "%b", "MMMM": "%B"}
_MJD_EPOCH = dt.date(1858, 11, 17)  # (day 0 of the modified Julian days)


def _java_format_one(pattern: str) -> Callable[..., str]:
    """A Java DateTimeFormatter pattern as a function of one datetime (its nanoseconds in
    ``.nanos`` when it has them)."""
    from sqlengine.runtime.kernels import java_pattern_tokens

    return _java_format_tokens(java_pattern_tokens(pattern), pattern)


def _java_format_tokens(tokens: list[str], pattern: str) -> Callable[..., str]:
    """``_java_format_one`` of a pattern's tokens (a quoted token: its literal text between
    the quotes; ``''`` a quote)."""
    for token in tokens:
        if token[0].isascii() and token[0].isalpha() and \
                token[0] not in "yuYMLdDHhkKmsSEawWFecQqGnNAg" and not token.startswith("'"):
            msg = f"unsupported DATE_FORMAT pattern letter {token!r} in {pattern!r}"
            raise ExecutionError(msg)

    def one(v: dt.datetime, nanos: int, years: int = 0) -> str:
        # (``years``: whole 400-year cycles to add to v's year, which has the same calendar)
        out = []
        for token in tokens:
            letter, n = token[0], len(token)
            if token.startswith("'"):
                out.append(token[1:-1] or "'")
            elif letter in "yuY":  # (Y: the year of the US week, w, holding the day)
                year = (_us_week(v)[0] if letter == "Y" else v.year) + years
                out.append(f"{year % 100:02d}" if n == 2 else f"{year:0{n}d}")
            elif letter in "Qq":
                quarter = (v.month - 1) // 3 + 1
                out.append(f"Q{quarter}" if n == 3 else
                           f"{quarter}{('st', 'nd', 'rd', 'th')[quarter - 1]} quarter"
                           if n >= 4 else f"{quarter:0{n}d}")
            elif letter == "G":
                out.append("Anno Domini" if n >= 4 else "AD")
            elif letter in "ML":  # (L: stand-alone, the same words in English; five
                # letters: Java's narrow form, the first letter)
                name = v.strftime(_JAVA_NAMES["MMMM" if n >= 4 else "MMM"])
                out.append(name[0] if n == 5 else name if n >= 3 else f"{v.month:0{n}d}")
            elif letter == "E":
                name = v.strftime(_JAVA_NAMES["EEEE" if n >= 4 else "EEE"])
                out.append(name[0] if n == 5 else name)
            elif letter == "S":
                out.append(f"{nanos:09d}"[:n].ljust(n, "0"))
            elif letter == "a":
                out.append("AM" if v.hour < 12 else "PM")
            elif letter in "dDHhkKmswWFec":
                sunday_first = (v.weekday() + 1) % 7  # (0: Sunday)
                first = (dt.date(v.year, v.month, 1).weekday() + 1) % 7
                value = {"d": v.day, "D": v.timetuple().tm_yday, "H": v.hour,
                         "h": (v.hour % 12) or 12, "k": v.hour or 24, "K": v.hour % 12,
                         "m": v.minute, "s": v.second, "w": _us_week(v)[1],
                         "W": (v.day - 1 + first) // 7 + 1, "F": (v.day - 1) % 7 + 1,
                         "e": sunday_first + 1, "c": sunday_first + 1}[letter]
                out.append(f"{value:0{n}d}")
            elif letter in "nNAg":  # (nano-of-second, nano- and milli-of-day, modified
                # Julian day: at least as many digits as letters)
                second = v.hour * 3600 + v.minute * 60 + v.second
                value = {"n": nanos, "N": second * 1_000_000_000 + nanos,
                         "A": second * 1000 + nanos // 1_000_000,
                         "g": (v.date() - _MJD_EPOCH).days + years // 400 * 146_097}[letter]
                out.append(f"{value:0{n}d}")
            else:
                out.append(token)
        return "".join(out)

    return one


def _us_week(v: dt.datetime) -> tuple[int, int]:
    """(week-based year, week of it) of Java's US week (WeekFields.of(Locale.US): weeks
    start on Sunday; week 1 is the one holding January 1st), which DATE_FORMAT's 'Y' and 'w'
    give in Flink (its JVM's default locale). In day ordinals: the week of 9999-12-31 ends in
    year 10000, that of 0001-01-01 starts before year 1 (dates there overflowed)."""
    day = v.date() if isinstance(v, dt.datetime) else v

    def since_sunday(ordinal: int) -> int:  # (ordinal 1, 0001-01-01, is a Monday)
        return (ordinal - 1) % 7 + 1 if (ordinal - 1) % 7 != 6 else 0

    last_day = dt.date.max.toordinal()
    o = day.toordinal()
    sunday = o - since_sunday(o)
    year = dt.date.fromordinal(sunday + 6).year if sunday + 6 <= last_day else dt.MAXYEAR + 1
    jan1 = dt.date(year, 1, 1).toordinal() if year <= dt.MAXYEAR else last_day + 1
    start = jan1 - since_sunday(jan1)
    return year, (sunday - start) // 7 + 1


def _date_format(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """DATE_FORMAT(TIMESTAMP | STRING [, format]): a string that is not a timestamp gives
    NULL (as Flink); the Java pattern through strftime when it has a translation, else per
    distinct value."""
    from sqlengine.runtime import kernels as core

    x = args[0]
    if T.is_string(x.type):
        # (a text is read as Flink's SimpleDateFormat reads 'yyyy-MM-dd HH:mm:ss': from its
        # start, spaces before a field skipped, what follows the seconds ignored (a fraction
        # too), fields rolling over ('2024-02-30' is March 1st, hour 25 the next day); a
        # date alone does not read: NULL)
        secs = per_distinct(x, _lenient_seconds(DEFAULT_FORMAT), pa.int64())
        secs = pc.if_else(pc.equal(secs, -(2**63)), pa.scalar(None, pa.int64()), secs)
        x = pc.multiply(secs, 1000).cast(_TS)
    if len(lits) > 1 and lits[1] is None:
        return pa.nulls(len(x), pa.string())
    try:
        return core._date_format([x, *args[1:]], lits, out)
    except ExecutionError:
        pass
    fmt = _java_format_one(str(lits[1]) if len(lits) > 1 else DEFAULT_FORMAT)
    per = _PER_SECOND[x.type.unit]
    ticks = x.cast(pa.int64())

    def one(tick: int) -> str:
        secs, frac = divmod(tick, per)
        v = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=secs)
        return fmt(v, frac * (1_000_000_000 // per))

    return per_distinct(ticks, one, pa.string())


# Flink's range of TO_TIMESTAMP_LTZ (years 0001 to 9999): beyond it the value is NULL.
_MIN_MS, _MAX_MS = -62_135_596_800_000, 253_402_300_799_999


def _cast_ltz(safe: bool) -> Kernel:
    """CAST / TRY_CAST to or from TIMESTAMP_LTZ: (value, the session time zone)."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        return cast_array(args[0], out, safe, zone=str(lits[1]))

    return kernel


def _epoch_ms(x: Array, precision: int, per_ms: int = 1) -> Array:
    """10^-precision seconds since 1970 (seconds at 0, milliseconds at 3, nanoseconds at 9) as
    whole 1 / ``per_ms`` milliseconds: a fraction is cut toward zero (as Flink's (long)
    cast); NULL beyond years 1..9999 (1677..2262 in nanoseconds)."""
    scale = 1000 * per_ms // 10 ** precision
    top, low = _MAX_MS * per_ms, _MIN_MS * per_ms
    if per_ms == 1_000_000:  # (Arrow's int64 nanoseconds)
        top, low = 2**63 - 1, -(2**63) + 1
    if T.is_integer(x.type):
        v = x.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
        bound = top // scale + 1
        inside = (v > -bound) & (v < bound)
        ms = np.where(inside, v, 0) * scale
    elif pa.types.is_decimal(x.type):
        import decimal

        def one(d: decimal.Decimal) -> int | None:
            ms = int(d) * scale  # (whole seconds or milliseconds, toward zero, as Flink)
            return ms if low <= ms <= top else None

        return per_distinct(x, one, pa.int64())
    else:
        f = x.cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False) * scale
        with np.errstate(invalid="ignore"):
            inside = np.isfinite(f) & (f >= low) & (f < float(top))
        ms = np.trunc(np.where(inside, f, 0)).astype(np.int64)
    ms = np.where(inside, ms, 0)
    mask = ~inside | (_mask(x) if x.null_count else False)
    return pa.array(ms, pa.int64(), mask=np.asarray(mask, dtype=bool))


def _to_timestamp_ltz(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """TO_TIMESTAMP_LTZ(number [, precision]) and (string [, format [, zone]]): a string is
    read in the zone given, else UTC (Flink's default, not the session's); one that does not
    read as a time is NULL."""
    x = args[0]
    n = len(x)
    if not T.is_string(x.type):
        if len(args) > 1 and lits[1] is None:
            return pa.nulls(n, out)
        precision = int(lits[1]) if len(args) > 1 else 3
        per_ms = {"ms": 1, "us": 1000, "ns": 1_000_000}[out.unit]
        return pa.array(_epoch_ms(x, precision, per_ms).cast(pa.int64()),
                        pa.int64()).cast(pa.timestamp(out.unit)).cast(out)
    zone = "UTC"  # (Flink's default: not the session's)
    given = lits[1:]
    if len(given) > 1:
        if given[1] is None:
            return pa.nulls(n, out)
        zone = str(given[1])
    if given and given[0] is None:
        return pa.nulls(n, out)
    if given:
        local = parse_with_fallback(x, str(given[0]))
    else:
        local = cast_array(x, _TS, safe=True)
    return from_local(local, zone).cast(out)


_UNIT_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}


def _fraction_fit(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A TIMESTAMP / TIMESTAMP_LTZ / TIME cast to a precision between Arrow's units (1, 2, 4,
    5, 7, 8 digits, held in the next unit): the fraction of a second cut to that many digits,
    toward the earlier instant, as Flink's CAST does."""
    x = args[0]
    keep = int(lits[1])  # type: ignore[arg-type]
    step = 10 ** (_UNIT_DIGITS[x.type.unit] - keep)
    if step <= 1:
        return x
    ints = pa.int64() if x.type.bit_width == 64 else pa.int32()
    ticks = x.cast(ints)
    rem = pc.subtract(ticks, pc.multiply(pc.divide(ticks, step), step))
    rem = pc.if_else(pc.less(rem, 0), pc.add(rem, step), rem)
    return pc.subtract(ticks, rem).cast(ints).cast(x.type)


KERNELS: dict[str, Kernel] = {
    "fraction_fit": _fraction_fit,
    # (TIME +/- a year-month interval: the time, NULL where the interval is)
    "time_months": lambda args, lits, out: pc.if_else(pc.is_valid(args[1]), args[0],
                                                      pa.nulls(len(args[0]), out)),
    "cast_ltz": _cast_ltz(False),
    "try_cast_ltz": _cast_ltz(True),
    "to_timestamp_ltz": _to_timestamp_ltz,
    "to_timestamp": constants_or_columns(_to_timestamp, (1,)),
    "to_date": constants_or_columns(_to_date, (1,)),
    "unix_timestamp": constants_or_columns(_unix_timestamp, (1,)),
    "from_unixtime": constants_or_columns(_from_unixtime, (1,)),
    "convert_tz": constants_or_columns(_convert_tz, (1, 2)),
    "floor_time": _round_time(pc.floor_temporal),
    "ceil_time": _round_time(pc.ceil_temporal),
    "time_add": _time_shift(1),
    "time_subtract": _time_shift(-1),
    "interval_times": _interval_times,
    "date_format": constants_or_columns(_date_format, (1,)),
    **{f"extract_{u}": _extract(u) for u in (
        "year", "quarter", "month", "week", "day", "doy", "dow", "hour", "minute", "second",
        "millisecond", "microsecond", "nanosecond", "epoch", "century", "millennium",
        "decade", "isodow", "isoyear")},
}


def wall_clock(name: str, n: int, zone: str, now: float | None = None) -> Array:
    """A clock function's value in ``zone``'s wall clock (the session time zone's), for n
    rows: the instant now, read there."""
    from sqlengine.cast import to_local

    instant = pa.array([int((time.time() if now is None else now) * 1000)],
                       pa.timestamp("ms", tz="UTC"))
    local = int(to_local(instant, zone).cast(pa.int64())[0].as_py())
    if name == "current_date":
        return pa.array(np.full(n, local // (_DAY * 1000), np.int32), pa.date32())
    if name == "current_time":
        return pa.array(np.full(n, local // 1000 % _DAY, np.int32), pa.time32("s"))
    return pa.array(np.full(n, local, np.int64), _TS)


# The clock functions, per batch of n rows.
CLOCK: dict[str, Callable[[int, float], Array]] = {
    # (CURRENT_TIMESTAMP, NOW(), CURRENT_ROW_TIMESTAMP(): TIMESTAMP_LTZ(3), the instant)
    "current_timestamp": lambda n, now: pa.array(np.full(n, int(now * 1000)), _LTZ),
    "localtimestamp": lambda n, now: pa.array(np.full(n, int(now * 1000)), _TS),
    "current_row_timestamp": lambda n, now: pa.array(np.full(n, int(now * 1000)), _LTZ),
    "current_time": lambda n, now: pa.array(np.full(n, int(now) % _DAY, np.int32),
                                            pa.time32("s")),
    "current_date": lambda n, now: pa.array(np.full(n, int(now // 86400), np.int32),
                                            pa.date32()),
    "unix_timestamp": lambda n, now: pa.array(np.full(n, int(now), dtype=np.int64)),
}
