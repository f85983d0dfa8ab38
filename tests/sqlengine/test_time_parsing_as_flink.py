"""Time text read and written as PyFlink 2.3 does (each expected value is its answer to the
same expression, arguments built from a row's column so that Flink does not fold them):

- TO_TIMESTAMP / TO_TIMESTAMP_LTZ(s, format): a string that does not fit the format is read
  as Flink's DateTimeUtils falls back, java.sql.Timestamp's or Date's text after trimming
  (a day past the month's end rolling over), else NULL;
- DATE_FORMAT(STRING, format): the text read as SimpleDateFormat reads 'yyyy-MM-dd
  HH:mm:ss' (spaces skipped, fields rolling over, the fraction and anything after the
  seconds ignored);
- UNIX_TIMESTAMP(s, format): 'SSS' after a separator takes all its digits as milliseconds
  (SimpleDateFormat); it gave Long.MIN_VALUE for '.1'.
"""

from __future__ import annotations

import datetime as dt

import pytest

import sqlengine


@pytest.fixture(scope="module", params=["UTC", "America/New_York"])
def s(request: pytest.FixtureRequest) -> sqlengine.Session:
    s = sqlengine.connect({"table.local-time-zone": request.param})
    s.execute("CREATE TEMPORARY VIEW g(k) AS VALUES (1)")
    return s


def one(s: sqlengine.Session, expr: str) -> object:
    return s.sql(f"SELECT {expr} AS v FROM g").collect().column(0)[0].as_py()


def text(value: str) -> str:
    """A string built from the row (not a constant)."""
    return f"CONCAT('{value}', SUBSTRING(CAST(k AS STRING), 9))"


@pytest.mark.parametrize("value, pattern, expected", [
    ("2024-03-05", "yyyy-MM-dd HH:mm:ss", dt.datetime(2024, 3, 5)),
    ("2024-03-05 07:08:09", "yyyy-MM-dd", dt.datetime(2024, 3, 5, 7, 8, 9)),
    ("2024-03-05 07:08:09.123", "yyyy-MM-dd HH:mm:ss", dt.datetime(2024, 3, 5, 7, 8, 9, 123000)),
    ("2024-03-05 07:08:09.1", "yyyy-MM-dd HH:mm:ss.SSS", dt.datetime(2024, 3, 5, 7, 8, 9, 100000)),
    ("2024-03-05 07:08:09.1234", "yyyy-MM-dd HH:mm:ss.SSS",
     dt.datetime(2024, 3, 5, 7, 8, 9, 123000)),
    (" 2024-3-5 ", "yyyy/MM/dd", dt.datetime(2024, 3, 5)),
    ("2024-3-5 7:8:9", "yyyy/MM/dd", dt.datetime(2024, 3, 5, 7, 8, 9)),
    ("2024-04-31 07:08:09", "yyyy/MM/dd", dt.datetime(2024, 5, 1, 7, 8, 9)),
    ("2024-03-05 07:08", "yyyy/MM/dd", None),
    # (a day past its month's end fitting the format: the month's last day, as
    # DateTimeFormatter's SMART resolving; strptime had rolled it over)
    ("2024-04-31", "yyyy-MM-dd", dt.datetime(2024, 4, 30)),
    ("2024-02-30", "yyyy-MM-dd", dt.datetime(2024, 2, 29)),
    ("2023-02-29", "yyyy-MM-dd", dt.datetime(2023, 2, 28)),
    ("2024-04-32", "yyyy-MM-dd", None),
    ("bad", "yyyy-MM-dd", None),
])
def test_to_timestamp_falls_back_as_flink(s: sqlengine.Session, value: str, pattern: str,
                                          expected: dt.datetime | None) -> None:
    assert one(s, f"TO_TIMESTAMP({text(value)}, '{pattern}')") == expected


def test_to_timestamp_ltz_and_to_date_fall_back_too(s: sqlengine.Session) -> None:
    # (read in UTC, Flink's default, shown in the session's zone)
    shown = "2024-03-05 00:00:00.000" if s.options.get("table.local-time-zone") == "UTC" \
        else "2024-03-04 19:00:00.000"
    assert one(s, f"CAST(TO_TIMESTAMP_LTZ({text('2024-03-05')}, 'yyyy-MM-dd HH:mm:ss') "
                  "AS STRING)") == shown
    assert one(s, f"TO_DATE({text('2024-03-05 07:08:09.1')}, 'yyyy-MM-dd HH:mm:ss.SSS')") == \
        dt.date(2024, 3, 5)
    assert one(s, f"TO_DATE({text('2024-04-31')}, 'yyyy-MM-dd')") == dt.date(2024, 4, 30)


@pytest.mark.parametrize("value, pattern, expected", [
    ("2024-03-05 07:08:09.123", "yyyy-MM-dd HH:mm:ss.SSS", "2024-03-05 07:08:09.000"),
    ("2024-03-05 07:08:09.5", "SSS", "000"),
    ("2024-02-30 07:08:09", "yyyy-MM-dd HH:mm:ss", "2024-03-01 07:08:09"),
    ("2024-03-05 25:08:09", "yyyy-MM-dd HH:mm:ss", "2024-03-06 01:08:09"),
    (" 2024-03-05 07:08:09 ", "yyyy-MM-dd", "2024-03-05"),
    (" 2024-03-05 07:08:09 ", "EEE", "Tue"),
    ("2024-3-5 7:8:9", "yyyy-MM-dd HH:mm:ss", "2024-03-05 07:08:09"),
    ("2024-03-05 07:08:09xyz", "yyyy-MM-dd HH:mm:ss", "2024-03-05 07:08:09"),
    ("2024-13-05 07:08:09", "yyyy-MM-dd HH:mm:ss", "2025-01-05 07:08:09"),
    ("2024-03-05", "yyyy", None),
    ("2024-03-05T07:08:09", "yyyy", None),
    ("2024-03-05 07:08", "yyyy-MM-dd HH:mm:ss", None),
])
def test_date_format_of_a_string_reads_it_as_simple_date_format(
        s: sqlengine.Session, value: str, pattern: str, expected: str | None) -> None:
    assert one(s, f"DATE_FORMAT({text(value)}, '{pattern}')") == expected


@pytest.mark.parametrize("value, pattern, utc", [
    ("2024-03-05 07:08:09.1234", "yyyy-MM-dd HH:mm:ss.SSS", 1709622490),
    ("2024-03-05 07:08:09.1", "yyyy-MM-dd HH:mm:ss.SSS", 1709622489),
    ("2024-03-05 07:08:09.12", "yyyy-MM-dd HH:mm:ss.SS", 1709622489),
    ("20240305070809123", "yyyyMMddHHmmssSSS", 1709622489),
    ("2024-03-05 25:08:09", "yyyy-MM-dd HH:mm:ss", 1709687289),
])
def test_unix_timestamp_reads_milliseconds_as_simple_date_format(
        s: sqlengine.Session, value: str, pattern: str, utc: int) -> None:
    offset = 0 if s.options.get("table.local-time-zone") == "UTC" else 5 * 3600
    assert one(s, f"UNIX_TIMESTAMP({text(value)}, '{pattern}')") == utc + offset


@pytest.mark.parametrize("pattern, expected", [
    ("'o''clock'", "o'clock"),  # (a quote doubled inside quoted text)
    ("'a''b'", "a'b"),
    ("[yyyy]", "2024"),  # (an optional section's fields printed, its brackets not)
    ("n", "123456000"), ("N", "25689123456000"), ("A", "25689123"), ("g", "60374"),
])
def test_date_format_patterns_as_datetimeformatter(s: sqlengine.Session, pattern: str,
                                                   expected: str) -> None:
    ts = "TIMESTAMP '2024-03-05 07:08:09.123456' + INTERVAL '0' SECOND * k"
    quoted = pattern.replace("'", "''")
    assert one(s, f"DATE_FORMAT({ts}, '{quoted}')") == expected


@pytest.mark.parametrize("pattern", ["#", "yyyy{", "'open"])
def test_reserved_or_unclosed_patterns_fail(s: sqlengine.Session, pattern: str) -> None:
    with pytest.raises(sqlengine.SqlEngineError, match="DATE_FORMAT pattern"):
        one(s, f"DATE_FORMAT(TIMESTAMP '2024-03-05 07:08:09' + INTERVAL '0' SECOND * k, "
               f"'{pattern.replace(chr(39), chr(39) * 2)}')")


@pytest.mark.parametrize("zone, expected", [
    ("UTC", ("+0000", "UTC", "Z", "16:00:00 UTC", "2024-07-03 09:46 UTC Z Z", "at 16")),
    ("America/New_York", ("-0500", "EST", "-05:00", "11:00:00 EST",
                          "2024-07-03 05:46 EDT -04 -0400", "at 11")),
    ("Asia/Shanghai", ("+0800", "CST", "+08:00", "00:00:00 CST",
                       "2024-07-03 17:46 CST +08 +0800", "at 00")),
])
def test_from_unixtime_writes_the_sessions_zone(zone: str, expected: tuple) -> None:
    """FROM_UNIXTIME's zone letters (they were refused): PyFlink 2.3's text in each zone."""
    s = sqlengine.connect({"table.local-time-zone": zone})
    s.execute("CREATE TEMPORARY VIEW g(k) AS VALUES (1)")
    row = s.sql("SELECT FROM_UNIXTIME(1709999999 + k, 'Z'), FROM_UNIXTIME(1709999999 + k, "
                "'z'), FROM_UNIXTIME(1709999999 + k, 'XXX'), FROM_UNIXTIME(1709999999 + k, "
                "'HH:mm:ss z'), FROM_UNIXTIME(1719999999 + k, 'yyyy-MM-dd HH:mm z X XX'), "
                "FROM_UNIXTIME(1709999999 + k, '''at'' HH') FROM g").collect().to_pylist()[0]
    assert tuple(row.values()) == expected


@pytest.mark.parametrize("zone, seconds, pattern, expected", [
    # PyFlink 2.3 (UTC): seconds given in milliseconds, and Long.MAX_VALUE / 1000; ours were
    # '-24445-11-25 05:02:03' and '2404-04-06 2576980377607:12:55' (strftime's years wrap)
    ("UTC", 1234567890123, None, "41091-11-25 05:02:03"),
    ("UTC", 9223372036854775, None, "292278994-08-17 07:12:55"),
    ("UTC", 253402300800, None, "10000-01-01 00:00:00"),
    ("UTC", 253402300799, None, "9999-12-31 23:59:59"),
    # (the calendar repeats every 400 years: 41091-11-25 is a Wednesday, day 329)
    ("America/New_York", 1234567890123, "yyyy-MM-dd HH:mm EEE D Z z",
     "41091-11-25 00:02 Wed 329 -0500 EST"),
])
def test_from_unixtime_past_year_9999(zone: str, seconds: int, pattern: str | None,
                                      expected: str) -> None:
    s = sqlengine.connect({"table.local-time-zone": zone})
    s.execute("CREATE TEMPORARY VIEW g(k) AS VALUES (0), (1)")
    call = f"FROM_UNIXTIME({seconds} + k * 0" + (f", '{pattern}')" if pattern else ")")
    rows = s.sql(f"SELECT k, {call} AS t FROM g").collect().to_pylist()
    assert sorted((r["k"], r["t"]) for r in rows) == [(0, expected), (1, expected)]


@pytest.mark.parametrize("zones, value, expected", [
    # (java.util.TimeZone: an unknown name is GMT, without an error)
    (("UTC", "Bad/Zone"), "2024-03-05 07:08:09", "2024-03-05 07:08:09"),
    (("utc", "asia/shanghai"), "2024-03-05 07:08:09", "2024-03-05 07:08:09"),
    (("+08:00", "UTC"), "2024-03-05 07:08:09", "2024-03-05 07:08:09"),
    (("UTC+8", "UTC"), "2024-03-05 07:08:09", "2024-03-05 07:08:09"),
    (("GMT+24", "UTC"), "2024-07-05 07:08:09", "2024-07-05 07:08:09"),
    # (its custom and three-letter IDs: EST a fixed -05:00, PST Los Angeles, CTT Shanghai)
    (("GMT+8", "UTC"), "2024-03-05 07:08:09", "2024-03-04 23:08:09"),
    (("GMT-05:30", "UTC"), "2024-03-05 07:08:09", "2024-03-05 12:38:09"),
    (("PST", "UTC"), "2024-03-05 07:08:09", "2024-03-05 15:08:09"),
    (("EST", "UTC"), "2024-07-05 07:08:09", "2024-07-05 12:08:09"),
    (("CTT", "UTC"), "2024-07-05 07:08:09", "2024-07-04 23:08:09"),
    (("Asia/Shanghai", "America/New_York"), "2024-07-05 07:08:09", "2024-07-04 19:08:09"),
])
def test_convert_tz_names_zones_as_java(s: sqlengine.Session, zones: tuple, value: str,
                                        expected: str) -> None:
    """CONVERT_TZ's zones as PyFlink 2.3 reads them (each value its answer)."""
    assert one(s, f"CONVERT_TZ({text(value)}, '{zones[0]}', '{zones[1]}')") == expected

