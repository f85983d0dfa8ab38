"""STRING to DATE and to TIMESTAMP as Flink's CAST reads them (DateTimeUtils.parseDate and
its DEFAULT_TIMESTAMP_FORMATTER), vectorised.

DATE:
The text is cut at its first space when that is not its first character (a TIMESTAMP's text
gives its date: '2024-03-06 10:00:00' is 2024-03-06); what is left is ``y``, ``y-m`` or
``y-m-d`` (a missing month or day is 1), each part digits only once trimmed of Java's white
space (characters up to U+0020); the year 0 to 9999, the month 1 to 12, the day one of the
month's. Anything else is not a date ('2024-03-06T10:00', '+2024-03-06', '2024-02-30').

TIMESTAMP(p): the whole text (no white space around it) is 'yyyy-M[M]-d[d]', then maybe
' H[H]:m[m]:s[s]' and a fraction ('.' and up to 9 digits, cut to p); a day past the month's
last is its last ('2024-02-30' is 2024-02-29, as java.time's SMART resolving), '24:00:00' is
the next midnight; hours up to 23, minutes and seconds up to 59 otherwise.

(The csv and json formats read DATE and TIMESTAMP columns by their own, stricter rules:
cast.VALID_TEXT.)
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import _PER_SECOND

# (Java's String.trim(): every character up to U+0020)
_JAVA_SPACE = "".join(chr(c) for c in range(0x21))
_PARTS = r"(?s)^(?P<y>[^-]*)(?:-(?P<m>[^-]*)(?:-(?P<d>.*))?)?$"
_DAYS = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_TIMESTAMP = (r"^(?P<y>[0-9]{4})-(?P<mo>[0-9]{1,2})-(?P<d>[0-9]{1,2})"
              r"(?: (?P<h>[0-9]{1,2}):(?P<mi>[0-9]{1,2}):(?P<s>[0-9]{1,2})"
              r"(?:\.(?P<f>[0-9]{0,9}))?)?$")


def parse_dates(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(days since 1970-01-01, whether the value is a date) per value of a STRING array (a
    NULL is not a date)."""
    text = pc.replace_substring_regex(arr, r"(?s)^([^ ][^ ]*) .*$", r"\1")
    parts = pc.extract_regex(text, _PARTS)
    ok = pc.is_valid(parts).to_numpy(zero_copy_only=False).astype(bool)
    hyphens = pc.count_substring(pc.fill_null(text, ""), "-").to_numpy(zero_copy_only=False)
    fields = []
    for name, hyphens_before in (("y", 0), ("m", 1), ("d", 2)):
        part = pc.utf8_trim(pc.struct_field(parts, name), _JAVA_SPACE)
        digits = pc.fill_null(pc.match_substring_regex(part, r"^[0-9]{1,9}$"), False)
        value = pc.cast(pc.if_else(digits, part, pa.scalar("0")), pa.int64())
        given = hyphens >= hyphens_before  # (a month or day not written is 1)
        ok &= ~given | digits.to_numpy(zero_copy_only=False)
        fields.append(np.where(given, value.to_numpy(zero_copy_only=False), 1))
    y, m, d = fields
    ok &= (y <= 9999) & (m >= 1) & (m <= 12) & (d >= 1) & (d <= _month_days(y, m))
    days = epoch_days(np.where(ok, y, 1970), np.where(ok, m, 1), np.where(ok, d, 1))
    return days, ok


def parse_timestamps(arr: pa.Array, unit: str) -> tuple[np.ndarray, np.ndarray]:
    """(ticks of ``unit`` since 1970-01-01 00:00, whether the value is a timestamp) per value
    of a STRING array (a NULL is not a timestamp)."""
    parts = pc.extract_regex(arr, _TIMESTAMP)
    ok = pc.is_valid(parts).to_numpy(zero_copy_only=False).astype(bool)

    def field(name: str) -> np.ndarray:
        text = pc.struct_field(parts, name)
        text = pc.if_else(pc.equal(text, ""), pa.scalar("0"), text)
        return text.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)

    y, m, d = field("y"), field("mo"), field("d")
    h, mi, sec = field("h"), field("mi"), field("s")
    ok &= (m >= 1) & (m <= 12) & (d >= 1) & (d <= 31) & (mi <= 59) & (sec <= 59)
    d = np.minimum(d, _month_days(y, m))  # (SMART)
    frac = pc.utf8_rpad(pc.fill_null(pc.struct_field(parts, "f"), ""), width=9, padding="0")
    nanos = pc.if_else(pc.equal(frac, ""), pa.scalar("0"), frac).cast(pa.int64())
    nanos = nanos.to_numpy(zero_copy_only=False)
    ok &= (h <= 23) | ((h == 24) & (mi == 0) & (sec == 0) & (nanos == 0))
    days = epoch_days(np.where(ok, y, 1970), np.where(ok, m, 1), np.where(ok, d, 1))
    per = _PER_SECOND[unit]
    seconds = days * 86_400 + h * 3_600 + mi * 60 + sec
    if per == 1_000_000_000:  # (nanoseconds in an int64 hold 1677-09-21 to 2262-04-11 only)
        ok &= ((seconds > -9_223_372_037) & (seconds < 9_223_372_036)) | (
            (seconds == 9_223_372_036) & (nanos <= 854_775_807)) | (
            (seconds == -9_223_372_037) & (nanos > 145_224_192))  # (int64 min is NaT)
        seconds = np.where(ok, seconds, 0)
    return np.where(ok, seconds * per + nanos // (1_000_000_000 // per), 0), ok


def _month_days(y: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The number of days of month ``m`` (clipped to 1..12) of year ``y``."""
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    return _DAYS[np.clip(m, 1, 12) - 1] + ((m == 2) & leap)


def epoch_days(y: np.ndarray, m: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (Flink's ymdToUnixDate)."""
    a = (14 - m) // 12
    yy = y + 4800 - a
    mm = m + 12 * a - 3
    julian = d + (153 * mm + 2) // 5 + 365 * yy + yy // 4 - yy // 100 + yy // 400 - 32045
    return julian - 2440588
