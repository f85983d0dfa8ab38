"""Flink's TIME(p) type and the temporal functions around it: literals typed by their digits,
CAST to and from STRING / TIMESTAMP, EXTRACT, FLOOR / CEIL, TIME +/- INTERVAL (around the
clock), OVERLAPS, EXTRACT's other units, DATE_FORMAT's Java letters, UNIX_TIMESTAMP with a
zone offset, TIME columns through csv / json / parquet and DESCRIBE. DuckDB answers where its
semantics agree with Flink's; the others are Flink 2.3's own answers (tests/conformance)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    return sqlengine.connect({"execution.runtime-mode": "batch"})


def one(s: sqlengine.Session, expr: str) -> tuple[object, pa.DataType]:
    t = s.sql(f"SELECT {expr}").collect()
    return t.column(0)[0].as_py(), t.schema.field(0).type


@pytest.mark.parametrize(("expr", "value", "arrow"), [
    ("TIME '10:11:12'", dt.time(10, 11, 12), pa.time32("s")),
    ("TIME '23:59:59.999'", dt.time(23, 59, 59, 999000), pa.time32("ms")),
    ("TIME '2:55:00'", dt.time(2, 55), pa.time32("s")),
    ("CAST('10:11:12' AS TIME)", dt.time(10, 11, 12), pa.time32("s")),
    ("CAST('10:11:12.123456' AS TIME(3))", dt.time(10, 11, 12, 123000), pa.time32("ms")),
    ("CAST(TIMESTAMP '2020-01-02 10:11:12' AS TIME)", dt.time(10, 11, 12), pa.time32("s")),
    ("CAST(TIME '10:11:12' AS STRING)", "10:11:12", pa.string()),
    ("CAST(TIME '23:59:59.999' AS STRING)", "23:59:59.999", pa.string()),
    ("TIME '23:00:00' + INTERVAL '2' HOUR", dt.time(1, 0), pa.time32("s")),
    ("TIME '01:00:00' - INTERVAL '90' MINUTE", dt.time(23, 30), pa.time32("s")),
    ("INTERVAL '1' HOUR + TIME '10:00:00'", dt.time(11, 0), pa.time32("s")),
    ("EXTRACT(HOUR FROM TIME '10:11:12')", 10, pa.int64()),
    ("EXTRACT(MINUTE FROM TIME '10:11:12')", 11, pa.int64()),
    ("EXTRACT(SECOND FROM TIME '10:11:12')", 12, pa.int64()),
    ("HOUR(TIME '10:11:12')", 10, pa.int64()),
    ("FLOOR(TIME '12:44:31' TO MINUTE)", dt.time(12, 44), pa.time32("s")),
    ("CEIL(TIME '12:44:31' TO MINUTE)", dt.time(12, 45), pa.time32("s")),
    ("CEIL(TIME '23:44:31' TO HOUR)", dt.time(0, 0), pa.time32("s")),
    ("TIME '10:00:00' < TIME '10:00:01'", True, pa.bool_()),
    ("TRY_CAST('25:00:00' AS TIME)", None, pa.time32("s")),
    # TIMESTAMPADD / TIMESTAMPDIFF of a TIME (as Flink 2.3: round the clock; days leave it)
    ("TIMESTAMPADD(SECOND, 90, TIME '23:59:00')", dt.time(0, 0, 30), pa.time32("s")),
    ("TIMESTAMPADD(MINUTE, -90, TIME '00:30:00')", dt.time(23, 0), pa.time32("s")),
    ("TIMESTAMPADD(HOUR, 25, TIME '10:00:00')", dt.time(11, 0), pa.time32("s")),
    ("TIMESTAMPADD(DAY, 1, TIME '10:00:00')", dt.time(10, 0), pa.time32("s")),
    ("TIMESTAMPADD(MONTH, 1, TIME '10:00:00')", dt.time(10, 0), pa.time32("s")),
    ("TIMESTAMPADD(SECOND, 1, TIME '10:00:00.123')", dt.time(10, 0, 1, 123000),
     pa.time32("ms")),
    ("TIMESTAMPADD(SECOND, -1, CAST('00:00:00' AS TIME(6)))", dt.time(23, 59, 59),
     pa.time64("us")),
    ("TIMESTAMPADD(SECOND, CAST(NULL AS INT), TIME '10:00:00')", None, pa.time32("s")),
    ("TIMESTAMPDIFF(SECOND, TIME '10:00:00', TIME '11:00:00')", 3600, pa.int32()),
    ("TIMESTAMPDIFF(MINUTE, TIME '10:00:00', TIME '09:00:30')", -59, pa.int32()),
    # (a year-month interval leaves the time of day as it is, and a one-digit field reads:
    # PyFlink 2.3's answers)
    ("TIME '10:00:00' + INTERVAL '1' MONTH", dt.time(10, 0), pa.time32("s")),
    ("TIME '10:00:00' - INTERVAL '2' YEAR", dt.time(10, 0), pa.time32("s")),
    ("INTERVAL '1' MONTH + TIME '10:00:01'", dt.time(10, 0, 1), pa.time32("s")),
    ("CAST('1:2:3' AS TIME)", dt.time(1, 2, 3), pa.time32("s")),
    ("CAST('1:2' AS TIME)", dt.time(1, 2), pa.time32("s")),
])
def test_time_values(s: sqlengine.Session, expr: str, value: object,
                     arrow: pa.DataType) -> None:
    assert one(s, expr) == (value, arrow)


@pytest.mark.parametrize("sql", [
    "SELECT CAST('25:00:00' AS TIME)",
    "SELECT CAST('noon' AS TIME)",
    "SELECT EXTRACT(YEAR FROM TIME '10:00:00')",
    "SELECT CAST('x' AS TIME(10))",
    "SELECT TIMESTAMPDIFF(SECOND, TIME '10:00:00', TIMESTAMP '2020-01-01 00:00:00')",
    "SELECT TIMESTAMPDIFF(MONTH, TIME '10:00:00', TIME '11:00:00')",
])
def test_time_refusals(s: sqlengine.Session, sql: str) -> None:
    with pytest.raises(SqlEngineError) as e:
        s.sql(sql).collect()
    assert "bug in sqlengine" not in str(e.value)


@pytest.mark.parametrize(("expr", "type_name"), [
    ("TIMESTAMP '2020-01-02 10:11:12'", "TIMESTAMP(0)"),
    ("TIMESTAMP '2020-01-02 10:11:12.123'", "TIMESTAMP(3)"),
    ("TIMESTAMP '2020-01-02 10:11:12.123456'", "TIMESTAMP(6)"),
    ("TIMESTAMP '2020-01-02 10:11:12.123456789'", "TIMESTAMP(9)"),
    ("CAST('2020-01-02 10:11:12' AS TIMESTAMP)", "TIMESTAMP(6)"),
    ("FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO HOUR)", "TIMESTAMP(0)"),
    ("TIMESTAMPADD(DAY, 3, TIMESTAMP '2020-01-30 10:00:00')", "TIMESTAMP(0)"),
    ("TIMESTAMP '2020-01-01 00:00:00' + INTERVAL '1' DAY", "TIMESTAMP(0)"),
    ("TIME '10:11:12'", "TIME(0)"),
    ("TIME '10:11:12.5'", "TIME(3)"),
])
def test_literal_precision(s: sqlengine.Session, expr: str, type_name: str) -> None:
    from sqlengine.types import type_name as name_of

    assert name_of(one(s, expr)[1]) == type_name


def test_nanosecond_literal(s: sqlengine.Session) -> None:
    got = s.sql("SELECT CAST(TIMESTAMP '2020-01-02 10:11:12.123456789' AS STRING)").collect()
    assert got.column(0)[0].as_py() == "2020-01-02 10:11:12.123456789"


@pytest.mark.parametrize(("expr", "value"), [
    ("(TIME '2:55:00', INTERVAL '1' HOUR) OVERLAPS (TIME '3:30:00', INTERVAL '2' HOUR)", True),
    ("(TIME '9:00:00', TIME '10:00:00') OVERLAPS (TIME '10:15:00', INTERVAL '3' HOUR)", False),
    ("(DATE '2020-01-01', DATE '2020-01-10') OVERLAPS (DATE '2020-01-05', DATE '2020-01-20')",
     True),
    ("(DATE '2020-01-10', DATE '2020-01-01') OVERLAPS (DATE '2020-01-05', DATE '2020-01-20')",
     True),
    ("(TIMESTAMP '2020-01-01 00:00:00', INTERVAL '1' DAY) OVERLAPS "
     "(TIMESTAMP '2020-01-03 00:00:00', INTERVAL '1' DAY)", False),
    ("(DATE '2020-01-01', CAST(NULL AS DATE)) OVERLAPS (DATE '2020-01-05', DATE '2020-01-20')",
     None),
    ("EXTRACT(MICROSECOND FROM TIMESTAMP '2020-01-02 10:11:12.123456')", 123456),
    ("EXTRACT(MILLISECOND FROM TIMESTAMP '2020-01-02 10:11:12.123')", 123),
    ("EXTRACT(EPOCH FROM TIMESTAMP '1970-01-02 00:00:00')", 86400),
    ("EXTRACT(CENTURY FROM DATE '2020-01-01')", 21),
    ("EXTRACT(DAY FROM INTERVAL '3' DAY)", 3),
    ("EXTRACT(HOUR FROM INTERVAL '1 02:03:04.5' DAY TO SECOND)", 2),
    ("EXTRACT(MONTH FROM INTERVAL '2-10' YEAR TO MONTH)", 10),
    ("EXTRACT(YEAR FROM INTERVAL '2-10' YEAR TO MONTH)", 2),
    ("INTERVAL '1' DAY * 3", dt.timedelta(days=3)),
    ("2 * INTERVAL '5' MINUTE", dt.timedelta(minutes=10)),
    ("FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO WEEK)", dt.datetime(2020, 5, 17)),
    ("FLOOR(TIMESTAMP '2020-05-20 12:44:31' TO WEEK)", dt.datetime(2020, 5, 17)),
    ("DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12', 'EEE, d MMM yyyy')", "Thu, 2 Jan 2020"),
    ("DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12.345', 'HH:mm:ss.SSS')", "10:11:12.345"),
    ("DATE_FORMAT(TIMESTAMP '2020-01-02 15:11:12', 'h a, EEEE MMMM')",
     "3 PM, Thursday January"),
    ("DATE_FORMAT('garbage', 'yyyy')", None),
    ("DATE_FORMAT('2020-01-02 10:11:12', 'yyyyMMdd')", "20200102"),
    ("UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS X')", 1),
    ("UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS')", 28801),
    ("UNIX_TIMESTAMP('1970-01-01 08:00:01.001', 'yyyy-MM-dd HH:mm:ss.SSS')", 28801),
    ("UNIX_TIMESTAMP('garbage')", -(2**63)),
    # A precision between Arrow's units (held in the next unit) is cut to its digits
    ("CAST(TIMESTAMP '2020-01-01 00:00:00.123456' AS TIMESTAMP(5))",
     dt.datetime(2020, 1, 1, 0, 0, 0, 123450)),
    ("CAST(TIMESTAMP '1969-12-31 23:59:59.987' AS TIMESTAMP(1))",
     dt.datetime(1969, 12, 31, 23, 59, 59, 900000)),
    ("CAST(CAST('2020-01-01 00:00:00.129' AS TIMESTAMP(2)) AS TIMESTAMP(3))",
     dt.datetime(2020, 1, 1, 0, 0, 0, 120000)),
    ("TRY_CAST('2020-01-01 00:00:00.99' AS TIMESTAMP(1))",
     dt.datetime(2020, 1, 1, 0, 0, 0, 900000)),
    ("CAST(TIME '10:11:12.345' AS TIME(2))", dt.time(10, 11, 12, 340000)),
    ("CAST(TO_TIMESTAMP_LTZ(1234, 3) AS TIMESTAMP_LTZ(1)) = TO_TIMESTAMP_LTZ(1200, 3)", True),
])
def test_flink_answers(s: sqlengine.Session, expr: str, value: object) -> None:
    assert one(s, expr)[0] == value


def test_date_format_refuses_a_date(s: sqlengine.Session) -> None:
    with pytest.raises(SqlEngineError, match="DATE_FORMAT"):
        s.sql("SELECT DATE_FORMAT(DATE '2020-01-02', 'yyyy/MM/dd')").collect()


def test_current_time(s: sqlengine.Session) -> None:
    before = dt.datetime.now(dt.UTC)
    got = s.sql("SELECT CURRENT_TIME AS a, LOCALTIME AS b").collect()
    after = dt.datetime.now(dt.UTC)
    assert got.schema.field(0).type == pa.time32("s")
    for v in got.to_pylist()[0].values():
        assert v.replace(microsecond=0) in {
            (before + dt.timedelta(seconds=k)).time().replace(microsecond=0)
            for k in range(-1, int((after - before).total_seconds()) + 2)}


STAMPS = ["2020-01-05 10:11:12.123456", "2021-01-01 00:00:00", "1999-12-31 23:59:59.5",
          "2000-02-29 12:00:00", "1969-07-20 20:17:40"]


@pytest.mark.parametrize("unit", ["MICROSECOND", "EPOCH", "CENTURY", "MILLENNIUM", "DECADE",
                                  "ISODOW", "ISOYEAR", "DOW", "DOY", "WEEK", "QUARTER"])
def test_extract_against_duckdb(s: sqlengine.Session, unit: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    for stamp in STAMPS:
        ours = one(s, f"EXTRACT({unit} FROM TIMESTAMP '{stamp}')")[0]
        if unit == "EPOCH":
            theirs = duckdb.sql(f"SELECT CAST(FLOOR(EPOCH(TIMESTAMP '{stamp}')) AS BIGINT)"
                                ).fetchone()[0]
        elif unit == "MICROSECOND":  # DuckDB's counts the seconds too
            theirs = duckdb.sql(f"SELECT EXTRACT(MICROSECOND FROM TIMESTAMP '{stamp}') "
                                "% 1000000").fetchone()[0]
        elif unit == "DOW":  # DuckDB's 0 = Sunday, Flink's 1 = Sunday
            theirs = duckdb.sql(f"SELECT EXTRACT(DOW FROM TIMESTAMP '{stamp}') + 1"
                                ).fetchone()[0]
        else:
            theirs = duckdb.sql(f"SELECT EXTRACT({unit} FROM TIMESTAMP '{stamp}')"
                                ).fetchone()[0]
        assert ours == theirs, (unit, stamp)


@pytest.mark.parametrize("expr", [
    "TIME '10:11:12'", "TIME '23:00:00' + INTERVAL '2' HOUR",
    "TIME '00:30:00' - INTERVAL '1' HOUR", "CAST(TIMESTAMP '2020-01-02 10:11:12' AS TIME)",
    "EXTRACT(HOUR FROM TIME '13:14:15')", "EXTRACT(SECOND FROM TIME '13:14:15')",
    "CAST(TIME '09:08:07' AS VARCHAR)",
])
def test_time_against_duckdb(s: sqlengine.Session, expr: str) -> None:
    duckdb = pytest.importorskip("duckdb")
    theirs = duckdb.sql(f"SELECT {expr}").fetchone()[0]
    assert one(s, expr)[0] == theirs


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet"])
def test_time_columns_through_connectors(s: sqlengine.Session, tmp_path: Path,
                                         fmt: str) -> None:
    src = tmp_path / "in.csv"
    src.write_text("1,10:11:12\n2,23:59:59\n3,\n")
    s.execute(f"CREATE TABLE tin_{fmt} (id INT, t TIME) WITH ('connector' = 'filesystem', "
              f"'path' = '{src}', 'format' = 'csv')")
    s.execute(f"CREATE TABLE tout_{fmt} (id INT, t TIME) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'out'}', 'format' = '{fmt}')")
    s.execute(f"INSERT INTO tout_{fmt} SELECT id, t + INTERVAL '1' HOUR FROM tin_{fmt}")
    got = s.sql(f"SELECT id, t, EXTRACT(MINUTE FROM t) FROM tout_{fmt} ORDER BY id").collect()
    assert got.to_pylist() == [
        {"id": 1, "t": dt.time(11, 11, 12), "EXPR$2": 11},
        {"id": 2, "t": dt.time(0, 59, 59), "EXPR$2": 59},
        {"id": 3, "t": None, "EXPR$2": None}]
    described = s.execute(f"DESCRIBE tout_{fmt}")[0].table.to_pylist()
    assert described[1]["type"] == "TIME(0)"


def test_describe_time_precision(s: sqlengine.Session, tmp_path: Path) -> None:
    s.execute(f"CREATE TABLE tp (a TIME(3), b TIME(6), c TIME WITHOUT TIME ZONE, "
              f"d TIMESTAMP(0)) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
              "'format' = 'csv')")
    types = [r["type"] for r in s.execute("DESCRIBE tp")[0].table.to_pylist()]
    assert types == ["TIME(3)", "TIME(6)", "TIME(0)", "TIMESTAMP(0)"]


# Days from 1970 across DATE's whole range: years 1 to 9999, 0 and BC, 10,000 to 32,767 (where
# Arrow's strftime still writes them), beyond (where it wrapped around: 2,739,927 as -12585).
_FAR_DAYS = [0, -719_163, -755_762, -4_371_587, -4_371_588, 2_932_896, 2_932_897, 11_000_000,
             -11_000_000, 12_000_000, 18_262 + 999_999_999, 18_262 - 999_999_999,
             2_147_483_647, -2_147_483_648]


def test_far_date_text_against_numpy(s: sqlengine.Session) -> None:
    """CAST(DATE AS STRING), and so the shell's and the sinks' text, writes the year in full
    (astronomical years, as numpy's datetime64 writes them, zero-padded to 4 digits)."""
    import numpy as np

    from sqlengine.cast import cast_array

    dates = pa.array([*_FAR_DAYS, None], pa.int32()).cast(pa.date32())
    ours = cast_array(dates, pa.string()).to_pylist()
    expected = []
    for d in _FAR_DAYS:
        text = str(np.datetime64(d, "D"))
        sign, body = ("-", text[1:]) if text.startswith("-") else ("", text)
        year, month_day = body.split("-", 1)
        expected.append(f"{sign}{year.zfill(4)}-{month_day}")
    assert ours == [*expected, None]
    # Through SQL: a date moved far by an interval, and a TIMESTAMP(3) past year 32,767
    assert one(s, "CAST(DATE '2020-01-01' + INTERVAL '999999999' DAY AS STRING)")[0] == \
        "2739927-01-03"
    assert one(s, "CAST(DATE '2020-01-01' - INTERVAL '999999999' DAY AS STRING)")[0] == \
        "-2735888-12-30"
    assert one(s, "CAST(TIMESTAMP '2020-01-01 10:11:12.5' + INTERVAL '99999999' DAY "
                  "AS STRING)")[0] == "275810-09-13 10:11:12.500"
