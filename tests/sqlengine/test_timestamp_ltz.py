"""TIMESTAMP_LTZ (TIMESTAMP WITH LOCAL TIME ZONE) and 'table.local-time-zone', as Flink's
"Timezone" page describes them: an instant, read and written in the session time zone."""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

UTC = dt.UTC


@pytest.fixture
def s() -> Iterator[sqlengine.Session]:
    session = sqlengine.connect()
    yield session
    session.close()


def one(s: sqlengine.Session, sql: str, zone: str = "UTC") -> object:
    """The single value of ``sql`` bound with the session time zone ``zone``."""
    s.execute(f"SET 'table.local-time-zone' = '{zone}'")
    return s.sql(sql).collect().to_pylist()[0]["v"]


def instant(*fields: int) -> dt.datetime:
    return dt.datetime(*fields, tzinfo=UTC)


def test_ddl_describe_show_create_round_trip(s: sqlengine.Session) -> None:
    s.execute("CREATE TABLE t (a TIMESTAMP_LTZ(3), b TIMESTAMP(6) WITH LOCAL TIME ZONE, "
              "c TIMESTAMP_LTZ, d TIMESTAMP_LTZ(0), e TIMESTAMP_LTZ(9)) "
              "WITH ('connector' = 'datagen', 'number-of-rows' = '2')")
    types = [r["type"] for r in s.execute("DESCRIBE t")[0].table.to_pylist()]
    assert types == ["TIMESTAMP_LTZ(3)", "TIMESTAMP_LTZ(6)", "TIMESTAMP_LTZ(6)",
                     "TIMESTAMP_LTZ(0)", "TIMESTAMP_LTZ(9)"]
    text = s.execute("SHOW CREATE TABLE t")[0].table.column(0)[0].as_py()
    s.execute("DROP TABLE t")
    s.execute(text)
    again = [r["type"] for r in s.execute("DESCRIBE t")[0].table.to_pylist()]
    assert again == types
    # (datagen's whole-second timestamps fail for TIMESTAMP(0) as well: a bug of its own)
    s.execute("CREATE TABLE g (a TIMESTAMP_LTZ(3), b TIMESTAMP_LTZ(6)) "
              "WITH ('connector' = 'datagen', 'number-of-rows' = '2')")
    got = s.sql("SELECT * FROM g").collect()
    assert got.schema.field("a").type == pa.timestamp("ms", tz="UTC")
    assert got.schema.field("b").type == pa.timestamp("us", tz="UTC")
    assert got.num_rows == 2
    assert s.sql("SELECT d FROM t").schema.field("d").type == pa.timestamp("s", tz="UTC")


def test_out_of_range_precision_is_refused(s: sqlengine.Session) -> None:
    with pytest.raises(SqlEngineError, match=r"TIMESTAMP_LTZ\(10\)"):
        s.sql("SELECT CAST(TIMESTAMP '2020-01-01 00:00:00' AS TIMESTAMP_LTZ(10)) AS v")


def test_bad_zone_name_is_refused_naming_the_key(s: sqlengine.Session) -> None:
    with pytest.raises(SqlEngineError) as e:
        s.execute("SET 'table.local-time-zone' = 'Mars/Olympus_Mons'")
    assert "table.local-time-zone" in str(e.value) and "Mars/Olympus_Mons" in str(e.value)
    s.execute("SET 'table.local-time-zone' = 'Europe/Berlin'")
    s.execute("SET 'table.local-time-zone' = 'GMT+08:00'")
    assert s.options["table.local-time-zone"] == "GMT+08:00"


def test_session_options_select_the_zone(s: sqlengine.Session) -> None:
    s.execute("SET 'table.local-time-zone' = 'America/New_York'")
    q = s.sql("SELECT CAST(TO_TIMESTAMP_LTZ(0, 3) AS STRING) AS v")
    assert q.collect().to_pylist()[0]["v"] == "1969-12-31 19:00:00.000"
    # the zone is kept in the plan: running it later, elsewhere, gives the same
    assert "America/New_York" in q.explain()


# (wall-clock text, zone, the instant as Java's LocalDateTime.atZone(zone) gives it: a time in
# a DST gap moves on by the gap, a time passed twice takes the earlier offset)
CASES = [
    ("2020-07-01 12:00:00", "UTC", instant(2020, 7, 1, 12)),
    ("2020-07-01 12:00:00", "Europe/Berlin", instant(2020, 7, 1, 10)),
    ("2020-01-01 12:00:00", "Europe/Berlin", instant(2020, 1, 1, 11)),
    ("2020-03-29 02:30:00", "Europe/Berlin", instant(2020, 3, 29, 1, 30)),  # gap -> 03:30
    ("2020-10-25 02:30:00", "Europe/Berlin", instant(2020, 10, 25, 0, 30)),  # twice: CEST
    ("2020-03-08 02:30:00", "America/New_York", instant(2020, 3, 8, 7, 30)),  # gap -> 03:30
    ("2020-11-01 01:30:00", "America/New_York", instant(2020, 11, 1, 5, 30)),  # twice: EDT
    ("2020-07-01 00:00:00", "America/New_York", instant(2020, 7, 1, 4)),
]


@pytest.mark.parametrize(("text", "zone", "expected"), CASES)
def test_timestamp_to_ltz_and_back(s: sqlengine.Session, text: str, zone: str,
                                   expected: dt.datetime) -> None:
    # the value as Python's zoneinfo reads it (fold=0: the earlier offset)
    local = dt.datetime.fromisoformat(text)
    z = zoneinfo.ZoneInfo(zone)
    assert local.replace(tzinfo=z, fold=0).astimezone(UTC) == expected
    got = one(s, f"SELECT CAST(TIMESTAMP '{text}' AS TIMESTAMP_LTZ(3)) AS v", zone)
    assert got == expected
    assert one(s, f"SELECT CAST('{text}' AS TIMESTAMP_LTZ(3)) AS v", zone) == expected
    # TO_TIMESTAMP_LTZ of a string reads it in the zone it is given, else in UTC (Flink 2.3:
    # not the session's zone)
    zoned = one(s, f"SELECT TO_TIMESTAMP_LTZ('{text}', 'yyyy-MM-dd HH:mm:ss', '{zone}') AS v",
                "UTC")
    assert zoned == expected
    assert one(s, f"SELECT TO_TIMESTAMP_LTZ('{text}') AS v", zone) == \
        local.replace(tzinfo=UTC)
    # back: the instant's wall clock in the zone (a gap's time shows as it moved)
    ms = int(expected.timestamp() * 1000)
    wall = expected.astimezone(z).replace(tzinfo=None)
    back = one(s, f"SELECT CAST(TO_TIMESTAMP_LTZ({ms}, 3) AS TIMESTAMP(3)) AS v", zone)
    assert back == wall
    assert one(s, f"SELECT CAST(TO_TIMESTAMP_LTZ({ms}, 3) AS STRING) AS v", zone) == \
        wall.strftime("%Y-%m-%d %H:%M:%S.000")
    assert one(s, f"SELECT CAST(TO_TIMESTAMP_LTZ({ms}, 3) AS DATE) AS v", zone) == wall.date()


def test_agrees_with_duckdb_timestamptz() -> None:
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'Europe/Berlin'")
    except duckdb.Error:
        pytest.skip("DuckDB's ICU extension is not available")
    s = sqlengine.connect()
    # (not the fall-back hour: DuckDB takes the later offset there, Java the earlier)
    for text in ("2020-07-01 12:00:00", "2020-01-01 12:00:00", "2020-03-29 02:30:00",
                 "2020-03-29 03:00:00", "2021-12-31 23:59:59"):
        want = con.execute(f"SELECT epoch_ms(CAST(TIMESTAMP '{text}' AS TIMESTAMPTZ))"
                           ).fetchone()[0]
        got = one(s, f"SELECT CAST(TIMESTAMP '{text}' AS TIMESTAMP_LTZ(3)) AS v",
                  "Europe/Berlin")
        assert int(got.timestamp() * 1000) == want, text
        shown = con.execute(f"SELECT strftime(make_timestamptz({want} * 1000), "
                            "'%Y-%m-%d %H:%M:%S')").fetchone()[0]
        got_text = one(s, f"SELECT DATE_FORMAT(TO_TIMESTAMP_LTZ({want}, 3), "
                          "'yyyy-MM-dd HH:mm:ss') AS v", "Europe/Berlin")
        assert got_text == shown, text
    s.close()


def test_extract_date_format_floor_in_the_session_zone(s: sqlengine.Session) -> None:
    ltz = "TO_TIMESTAMP_LTZ(1593561600000, 3)"  # 2020-07-01 00:00:00 UTC
    assert one(s, f"SELECT EXTRACT(HOUR FROM {ltz}) AS v") == 0
    assert one(s, f"SELECT EXTRACT(HOUR FROM {ltz}) AS v", "Europe/Berlin") == 2
    assert one(s, f"SELECT EXTRACT(DAY FROM {ltz}) AS v", "America/New_York") == 30
    # (EPOCH too reads the zone's wall clock: PyFlink 2.3 gives 1593547200 in New York)
    assert one(s, f"SELECT EXTRACT(EPOCH FROM {ltz}) AS v", "America/New_York") == \
        1593561600 - 4 * 3600
    assert one(s, f"SELECT EXTRACT(EPOCH FROM {ltz}) AS v") == 1593561600
    assert one(s, f"SELECT DATE_FORMAT({ltz}, 'yyyy-MM-dd HH:mm') AS v",
               "America/New_York") == "2020-06-30 20:00"
    assert one(s, f"SELECT DATE_FORMAT({ltz}) AS v", "Europe/Berlin") == \
        "2020-07-01 02:00:00"
    # FLOOR to a day of the zone: its local midnight, an instant again
    assert one(s, f"SELECT FLOOR({ltz} TO DAY) AS v", "Europe/Berlin") == \
        instant(2020, 6, 30, 22)
    assert one(s, f"SELECT CEIL({ltz} TO DAY) AS v", "America/New_York") == \
        instant(2020, 7, 1, 4)
    assert one(s, f"SELECT FLOOR({ltz} TO HOUR) AS v", "UTC") == instant(2020, 7, 1)


def test_to_timestamp_ltz_forms(s: sqlengine.Session) -> None:
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(1600000000, 0) AS v") == instant(2020, 9, 13, 12,
                                                                            26, 40)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(1600000000123) AS v") == \
        dt.datetime(2020, 9, 13, 12, 26, 40, 123000, tzinfo=UTC)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(1.5E0, 0) AS v") == \
        dt.datetime(1970, 1, 1, 0, 0, 1, 500000, tzinfo=UTC)
    # a DECIMAL is cut to whole seconds or milliseconds first (as Flink 2.3; not a DOUBLE)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(CAST(1.5 AS DECIMAL(5, 1)), 0) AS v") == \
        dt.datetime(1970, 1, 1, 0, 0, 1, tzinfo=UTC)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(CAST(-1.5 AS DECIMAL(5, 1)), 3) AS v") == \
        dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(CAST(NULL AS BIGINT), 3) AS v") is None
    # the numeric forms are instants: the session zone does not change them
    assert one(s, "SELECT TO_TIMESTAMP_LTZ(0, 3) AS v", "Europe/Berlin") == instant(1970, 1, 1)
    # strings: in the zone given, else in UTC whatever the session's zone (as Flink 2.3)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ('2020-01-02 10:11:12') AS v", "Europe/Berlin") == \
        instant(2020, 1, 2, 10, 11, 12)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ('02/01/2020 10:11', 'dd/MM/yyyy HH:mm') AS v",
               "America/New_York") == instant(2020, 1, 2, 10, 11)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ('2020-01-02 10:11:12.250', "
                  "'yyyy-MM-dd HH:mm:ss.SSS', 'Asia/Tokyo') AS v", "Europe/Berlin") == \
        dt.datetime(2020, 1, 2, 1, 11, 12, 250000, tzinfo=UTC)
    assert one(s, "SELECT TO_TIMESTAMP_LTZ('not a time') AS v") is None
    schema = s.sql("SELECT TO_TIMESTAMP_LTZ(0, 0) AS v").schema
    assert schema.field("v").type == pa.timestamp("ms", tz="UTC")
    with pytest.raises(SqlEngineError, match=r"precision must be 0 .* to 9"):
        s.sql("SELECT TO_TIMESTAMP_LTZ(0, 10) AS v")
    with pytest.raises(SqlEngineError, match="unknown time zone"):
        s.sql("SELECT TO_TIMESTAMP_LTZ('2020-01-01 00:00:00', 'yyyy-MM-dd HH:mm:ss', "
              "'Nowhere/City') AS v")


def test_to_timestamp_ltz_of_any_precision(s: sqlengine.Session) -> None:
    """The number counts 10^-precision seconds, 0 to 9 (PyFlink 2.3's values; it refused
    all but 0 and 3)."""
    def text(sql: str) -> object:
        return one(s, f"SELECT CAST({sql} AS STRING) AS v")

    assert text("TO_TIMESTAMP_LTZ(17096224891, 1)") == "2024-03-05 07:08:09.100"
    assert text("TO_TIMESTAMP_LTZ(1709622489123456, 6)") == "2024-03-05 07:08:09.123456"
    assert text("TO_TIMESTAMP_LTZ(1709622489123456789, 9)") == "2024-03-05 07:08:09.123456789"
    assert text("TO_TIMESTAMP_LTZ(-1, 6)") == "1969-12-31 23:59:59.999999"
    assert text("TO_TIMESTAMP_LTZ(1.5e0, 6)") == "1970-01-01 00:00:00.000001"
    # (Flink shows TIMESTAMP_LTZ(5) with 5 digits; ours with 6: the same instant)
    assert text("TO_TIMESTAMP_LTZ(170962248912345, 5)") == "2024-03-05 07:08:09.123450"


def test_ltz_and_timestamp_meet_in_the_session_zone(s: sqlengine.Session) -> None:
    """A TIMESTAMP compared or combined with a TIMESTAMP_LTZ is read in the session time zone
    (their common type is TIMESTAMP_LTZ); answers as Flink 2.3's in New York."""
    ny = "America/New_York"
    ltz = "TO_TIMESTAMP_LTZ(1700000000, 0)"  # 2023-11-14 22:13:20 UTC, 17:13:20 in New York
    assert one(s, f"SELECT {ltz} = TIMESTAMP '2023-11-14 17:13:20' AS v", ny) is True
    assert one(s, f"SELECT {ltz} = TIMESTAMP '2023-11-14 22:13:20' AS v", ny) is False
    assert one(s, f"SELECT {ltz} < TIMESTAMP '2023-11-14 20:00:00' AS v", ny) is True
    assert one(s, f"SELECT {ltz} = TIMESTAMP '2023-11-14 22:13:20' AS v", "UTC") is True
    assert one(s, f"SELECT {ltz} BETWEEN TIMESTAMP '2023-11-14 17:00:00' AND "
                  "TIMESTAMP '2023-11-14 18:00:00' AS v", ny) is True
    assert one(s, f"SELECT {ltz} IN (TIMESTAMP '2023-11-14 17:13:20') AS v", ny) is True
    assert one(s, f"SELECT CAST(COALESCE(CAST(NULL AS TIMESTAMP(3)), {ltz}) AS STRING) AS v",
               ny) == "2023-11-14 17:13:20.000"
    assert one(s, f"SELECT GREATEST({ltz}, TIMESTAMP '2023-11-14 20:00:00') AS v", ny) == \
        instant(2023, 11, 15, 1)
    # (VALUES rows and UNION inputs meet in a TIMESTAMP, the instant read as the zone's
    # wall clock: PyFlink 2.3's TYPEOF there is TIMESTAMP(3), where COALESCE's and CASE's is
    # TIMESTAMP_LTZ(3))
    s.execute(f"SET 'table.local-time-zone' = '{ny}'")
    rows = s.sql("SELECT v FROM (VALUES (TO_TIMESTAMP_LTZ(0, 3)), "
                 "(TIMESTAMP '2020-01-01 00:00:00')) AS t(v)").collect()
    assert rows.schema.field("v").type == pa.timestamp("ms")
    assert rows.column("v").to_pylist() == [dt.datetime(1969, 12, 31, 19),
                                            dt.datetime(2020, 1, 1)]
    assert one(s, f"SELECT CAST(v AS STRING) AS v FROM (SELECT {ltz} AS v UNION ALL SELECT "
                  "TIMESTAMP '2020-01-01 00:00:00') WHERE v > TIMESTAMP '2023-11-14 00:00:00'",
               ny)[:19] == "2023-11-14 17:13:20"
    assert one(s, f"SELECT CAST(CASE WHEN {ltz} IS NULL THEN TIMESTAMP '2020-01-01 00:00:00' "
                  f"ELSE {ltz} END AS STRING) AS v", ny)[:19] == "2023-11-14 17:13:20"
    with pytest.raises(SqlEngineError, match="TIMESTAMP_LTZ arguments, or none"):
        s.sql(f"SELECT TIMESTAMPDIFF(HOUR, TIMESTAMP '2023-11-14 17:13:20', {ltz}) AS v")
    with pytest.raises(SqlEngineError, match="TIMESTAMP_LTZ"):  # (Flink refuses it too)
        s.sql(f"SELECT {ltz} > DATE '2023-11-14' AS v")


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "avro", "orc"])
def test_formats_round_trip(s: sqlengine.Session, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / fmt
    s.execute(f"CREATE TABLE t (id INT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = "
              f"'filesystem', 'path' = '{path}', 'format' = '{fmt}')")
    s.execute("INSERT INTO t VALUES (1, TO_TIMESTAMP_LTZ(1600000000123)), "
              "(2, CAST(NULL AS TIMESTAMP_LTZ(3)))")
    got = s.sql("SELECT id, ts FROM t ORDER BY id").collect()
    assert got.schema.field("ts").type == pa.timestamp("ms", tz="UTC")
    assert got.to_pylist() == [
        {"id": 1, "ts": dt.datetime(2020, 9, 13, 12, 26, 40, 123000, tzinfo=UTC)},
        {"id": 2, "ts": None}]
    files = [p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")]
    if fmt == "csv":  # Flink's csv format (PyFlink 2.3's file): in UTC, ending 'Z'
        assert '"2020-09-13 12:26:40.123Z"' in files[0].read_text()
    if fmt == "json":  # Flink's json format ('SQL' standard): in UTC, ending 'Z'
        assert '"2020-09-13 12:26:40.123Z"' in files[0].read_text()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        assert pq.read_schema(files[0]).field("ts").type.tz == "UTC"


def test_csv_reads_utc_text_and_refuses_plain_text(s: sqlengine.Session, tmp_path: Path
                                                   ) -> None:
    """A TIMESTAMP_LTZ in csv is UTC text ending 'Z', as Flink's csv format writes it; text
    without the 'Z' fails in PyFlink 2.3 (DateTimeParseException) and is refused here naming
    the file, line and value (it was read as UTC without a word, whatever the session zone)."""
    (tmp_path / "a.csv").write_text("1,2020-09-13T12:26:40.123Z\n2,2020-09-13 12:26:40Z\n")
    s.execute(f"CREATE TABLE t (id INT, ts TIMESTAMP_LTZ(3)) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path}', 'format' = 'csv')")
    got = s.sql("SELECT ts FROM t ORDER BY id").collect().column(0).to_pylist()
    assert got == [dt.datetime(2020, 9, 13, 12, 26, 40, 123000, tzinfo=UTC),
                   dt.datetime(2020, 9, 13, 12, 26, 40, tzinfo=UTC)]
    (tmp_path / "a.csv").write_text("1,2020-09-13T12:26:40.123Z\n2,2020-09-13 12:26:40\n")
    with pytest.raises(SqlEngineError, match=r"a\.csv:2: .*'2020-09-13 12:26:40' is not a "
                                             r"valid TIMESTAMP_LTZ\(3\) \(UTC text ending 'Z'\)"):
        s.sql("SELECT ts FROM t").collect()


def test_spark_refuses_ltz_by_name() -> None:
    from sqlengine.errors import NotSupportedError
    from sqlengine.runtime.spark.expressions import spark_type

    with pytest.raises(NotSupportedError, match=r"TIMESTAMP_LTZ\(3\)"):
        spark_type(pa.timestamp("ms", tz="UTC"))
    assert spark_type(pa.timestamp("ms")) == "TIMESTAMP_NTZ"


def test_the_session_option_reaches_every_statement() -> None:
    """SET 'table.local-time-zone' (and connect's options) change how later statements see an
    instant; the zone is fixed into a query's plan when it is bound."""
    sql = ("SELECT CAST(TO_TIMESTAMP_LTZ(0, 3) AS STRING) AS s, "
           "EXTRACT(HOUR FROM TO_TIMESTAMP_LTZ(0, 3)) AS h")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    assert s.sql(sql).collect().to_pylist() == [{"s": "1970-01-01 00:00:00.000", "h": 0}]
    bound_in_utc = s.sql(sql)
    s.execute("SET 'table.local-time-zone' = 'Asia/Tokyo'")
    assert s.sql(sql).collect().to_pylist() == [{"s": "1970-01-01 09:00:00.000", "h": 9}]
    assert bound_in_utc.collect().to_pylist()[0]["h"] == 0
    other = sqlengine.connect({"execution.runtime-mode": "batch",
                               "table.local-time-zone": "America/New_York"})
    assert other.sql(sql).collect().to_pylist() == [{"s": "1969-12-31 19:00:00.000", "h": 19}]


def test_unix_time_functions_use_the_session_zone(s: sqlengine.Session) -> None:
    """UNIX_TIMESTAMP reads and FROM_UNIXTIME writes the session zone's wall clock; with
    CONVERT_TZ, a time the clocks pass twice is standard time (java.util's calendar), one
    they skip moves on by the gap. Expected values: Flink 2.3's in New York."""
    ny = "America/New_York"
    assert one(s, "SELECT UNIX_TIMESTAMP('2024-01-01 00:00:00') AS v", ny) == 1704085200
    assert one(s, "SELECT UNIX_TIMESTAMP('2024-01-01 00:00:00') AS v", "UTC") == 1704067200
    assert one(s, "SELECT UNIX_TIMESTAMP('2024/01/01', 'yyyy/MM/dd') AS v", ny) == 1704085200
    assert one(s, "SELECT UNIX_TIMESTAMP('2024-11-03 01:30:00') AS v", ny) == 1730615400
    assert one(s, "SELECT UNIX_TIMESTAMP('2024-03-10 02:30:00') AS v", ny) == 1710055800
    # (a zone in the text wins; the lenient reading of a date alone is the zone's midnight)
    assert one(s, "SELECT UNIX_TIMESTAMP('2024-11-03 01:30:00 +0000', "
                  "'yyyy-MM-dd HH:mm:ss Z') AS v", ny) == 1730597400
    assert one(s, "SELECT UNIX_TIMESTAMP('2024-11-03', 'yyyy-MM-dd') AS v", ny) == 1730606400
    assert one(s, "SELECT FROM_UNIXTIME(0) AS v", ny) == "1969-12-31 19:00:00"
    assert one(s, "SELECT FROM_UNIXTIME(-86400) AS v", ny) == "1969-12-30 19:00:00"
    assert one(s, "SELECT FROM_UNIXTIME(1730611800, 'yyyy-MM-dd HH:mm:ss') AS v", ny) == \
        "2024-11-03 01:30:00"
    assert one(s, "SELECT FROM_UNIXTIME(1730615400) AS v", ny) == "2024-11-03 01:30:00"
    assert one(s, "SELECT FROM_UNIXTIME(0) AS v", "UTC") == "1970-01-01 00:00:00"
    assert one(s, "SELECT CONVERT_TZ('2024-11-03 01:30:00', 'America/New_York', 'UTC') AS v",
               "UTC") == "2024-11-03 06:30:00"
    assert one(s, "SELECT CONVERT_TZ('2024-03-10 02:30:00', 'America/New_York', 'UTC') AS v",
               "UTC") == "2024-03-10 07:30:00"
    assert one(s, "SELECT CONVERT_TZ('2024-11-03 05:30:00', 'UTC', 'America/New_York') AS v",
               "UTC") == "2024-11-03 01:30:00"
    # UNIX_TIMESTAMP() alone is the clock: no zone
    assert abs(one(s, "SELECT UNIX_TIMESTAMP() AS v", ny) - __import__("time").time()) < 600


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Kolkata", "UTC"])
def test_clock_functions_read_the_session_time_zones_wall_clock(zone: str) -> None:
    """LOCALTIMESTAMP, CURRENT_DATE and CURRENT_TIME are the session time zone's wall clock,
    as PyFlink 2.3 shows them in New York ('2026-11-28 09:49:59.504' at 14:49:59 UTC);
    CURRENT_TIMESTAMP, NOW() and CURRENT_ROW_TIMESTAMP() are TIMESTAMP_LTZ(3) instants (as
    Flink's), which the zone shows as the same wall clock."""
    import datetime as dt
    from zoneinfo import ZoneInfo

    s = sqlengine.connect({"execution.runtime-mode": "batch", "table.local-time-zone": zone})
    before = dt.datetime.now(ZoneInfo(zone)).replace(tzinfo=None)
    (row,) = s.sql("SELECT CURRENT_TIMESTAMP AS a, NOW() AS b, LOCALTIMESTAMP AS c, "
                   "CURRENT_ROW_TIMESTAMP() AS d, CURRENT_DATE AS e, CURRENT_TIME AS f"
                   ).collect().to_pylist()
    after = dt.datetime.now(ZoneInfo(zone)).replace(tzinfo=None)
    for key in "abd":
        row[key] = row[key].astimezone(ZoneInfo(zone)).replace(tzinfo=None)
    for key in "abcd":  # (milliseconds: the clock read is cut to them)
        assert before - dt.timedelta(milliseconds=1) <= row[key] <= after
    assert row["e"] in (before.date(), after.date())
    assert before.replace(microsecond=0).time() <= row["f"] <= after.time() or \
        before.date() != after.date()


def test_current_timestamp_is_the_instant_outside_utc() -> None:
    """CURRENT_TIMESTAMP is a TIMESTAMP_LTZ(3), as Flink's: against another instant it is
    no hours off (in Shanghai it was 8 hours off, a TIMESTAMP of the wall clock read as
    UTC); PyFlink 2.3 answers 0 and True here, and refuses CURRENT_TIMESTAMP against a
    TIMESTAMP in TIMESTAMPDIFF."""
    s = sqlengine.connect({"table.local-time-zone": "Asia/Shanghai"})
    (row,) = s.sql(
        "SELECT TIMESTAMPDIFF(HOUR, CURRENT_TIMESTAMP, TO_TIMESTAMP_LTZ(UNIX_TIMESTAMP() * "
        "1000, 3)) AS h, ABS(TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(UNIX_TIMESTAMP(), 0), "
        "NOW())) < 5 AS near, CURRENT_TIMESTAMP > LOCALTIMESTAMP - INTERVAL '1' MINUTE AS "
        "after, HOUR(CURRENT_TIMESTAMP) = HOUR(LOCALTIMESTAMP) AS same_hour").collect(
    ).to_pylist()
    assert row["h"] == 0 and row["near"] and row["after"]
    assert row["same_hour"] or dt.datetime.now().minute == 0
    with pytest.raises(SqlEngineError, match="TIMESTAMP_LTZ arguments, or none"):
        s.sql("SELECT TIMESTAMPDIFF(HOUR, LOCALTIMESTAMP, CURRENT_TIMESTAMP)")


def test_the_clock_functions_of_a_row_read_one_instant(tmp_path: Path) -> None:
    """As Flink reads the clock once per record: two CURRENT_TIMESTAMPs of a row are one
    instant, LOCALTIMESTAMP its wall clock (they were read one after another, the second
    after the first's cast to the zone, 0.2 s later on a first run)."""
    s = sqlengine.connect({"table.local-time-zone": "Asia/Shanghai"})
    (row,) = s.sql("SELECT CURRENT_TIMESTAMP = NOW() AS a, CAST(CURRENT_TIMESTAMP AS "
                   "TIMESTAMP(3)) = LOCALTIMESTAMP AS b, CURRENT_DATE = CAST(LOCALTIMESTAMP "
                   "AS DATE) AS c, UNIX_TIMESTAMP() = UNIX_TIMESTAMP() AS d").collect(
    ).to_pylist()
    assert row == {"a": True, "b": True, "c": True, "d": True}
    s.execute(f"CREATE TABLE o (ts TIMESTAMP(3), z TIMESTAMP_LTZ(3)) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'o'}', 'format' = 'csv')")
    s.execute("INSERT INTO o SELECT CURRENT_TIMESTAMP, CURRENT_TIMESTAMP")
    (got,) = s.sql("SELECT CAST(ts AS TIMESTAMP_LTZ(3)) = z AS same FROM o").collect(
    ).to_pylist()
    assert got == {"same": True}


@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/Los_Angeles"])
def test_a_nested_ltz_casts_to_text_in_the_session_zone(s: sqlengine.Session, zone: str
                                                       ) -> None:
    """PyFlink 2.3 writes an ARRAY's, ROW's and MAP's TIMESTAMP_LTZ in the session zone, as a
    plain one (a probe in Shanghai: 1970-01-01 08:00:00.000 everywhere); they were written in
    UTC."""
    local = dt.datetime.fromtimestamp(0, zoneinfo.ZoneInfo(zone)).strftime(
        "%Y-%m-%d %H:%M:%S.000")
    s.execute(f"SET 'table.local-time-zone' = '{zone}'")
    got = s.sql("SELECT CAST(ARRAY[TO_TIMESTAMP_LTZ(0, 3)] AS ARRAY<STRING>) AS a, "
                "CAST(ROW(TO_TIMESTAMP_LTZ(0, 3), 1) AS STRING) AS r, "
                "CAST(ROW(TO_TIMESTAMP_LTZ(0, 3)) AS ROW<t STRING>) AS f, "
                "CAST(MAP['k', TO_TIMESTAMP_LTZ(0, 3)] AS MAP<STRING, STRING>) AS m"
                ).collect().to_pylist()[0]
    assert got == {"a": [local], "r": f"({local}, 1)", "f": {"t": local},
                   "m": [("k", local)]}


@pytest.mark.parametrize("zone", ["+08:00", "UTC+8", "EST", "Z", "MST"])
def test_a_session_zone_flink_refuses_is_refused(zone: str) -> None:
    """PyFlink 2.3 refuses these as 'table.local-time-zone' ("Invalid time zone": Java's
    TimeZone reads them otherwise than ZoneId); they were taken. GMT offsets, TZDB names and
    UTC stay."""
    with pytest.raises(SqlEngineError, match=r"must be a time zone name .* 'GMT\+08:00' or "
                                             r"'UTC', as in Flink; got"):
        sqlengine.connect().execute(f"SET 'table.local-time-zone' = '{zone}'")
    for ok in ("GMT+08:00", "GMT-8", "Etc/GMT-8", "UTC", "GMT", "America/Los_Angeles"):
        sqlengine.connect().execute(f"SET 'table.local-time-zone' = '{ok}'")
