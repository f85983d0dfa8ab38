"""Windows over a TIMESTAMP_LTZ column follow the session time zone's wall clock, as Flink's
do ('table.local-time-zone'): a day is the zone's day, window_start and window_end are its
wall-clock TIMESTAMPs and window_time is the TIMESTAMP_LTZ instant of window_end - 1 ms.
The expected windows come from Python's zoneinfo, row by row; PyFlink 2.3 gives the same
counts on these instants (TUMBLE 1 DAY in Europe/Berlin: 2, 6, 4 and 6 rows)."""

from __future__ import annotations

import collections
import datetime as dt
import zoneinfo
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine

UTC = dt.UTC


def _instants() -> list[dt.datetime]:
    """Rows around both of Berlin's 2023 clock changes (26 March, 29 October) and around
    local midnights, 23 to 37 minutes apart."""
    fall = [dt.datetime(2023, 10, 28, 20, 0, tzinfo=UTC) + dt.timedelta(minutes=37 * i)
            for i in range(14)]
    spring = [dt.datetime(2023, 3, 25, 21, 40, tzinfo=UTC) + dt.timedelta(minutes=23 * i)
              for i in range(12)]
    return fall + spring


@pytest.fixture
def s() -> Iterator[sqlengine.Session]:
    session = sqlengine.connect({"execution.runtime-mode": "batch"})
    times = _instants()
    session.register("raw", pa.table({
        "id": pa.array(range(len(times)), pa.int64()),
        "v": pa.array([3 * i for i in range(len(times))], pa.int64()),
        "ms": pa.array([int(t.timestamp() * 1000) for t in times], pa.int64())}))
    session.execute("CREATE VIEW ev AS SELECT id, v, TO_TIMESTAMP_LTZ(ms, 3) AS lts FROM raw")
    yield session
    session.close()


def _floor(local: dt.datetime, size: dt.timedelta) -> dt.datetime:
    """The start of the wall-clock window of ``size`` (a whole divisor of a day) holding
    ``local``, counted from the local midnight."""
    midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight + (local - midnight) // size * size


def _expected(zone: str, size: dt.timedelta, slide: dt.timedelta | None = None
              ) -> collections.Counter:
    z = zoneinfo.ZoneInfo(zone)
    got: collections.Counter = collections.Counter()
    for t in _instants():
        local = t.astimezone(z).replace(tzinfo=None)
        step = slide or size
        last = _floor(local, step)
        for k in range(size // step):
            start = last - k * step
            got[(start, start + size)] += 1
    return got


def _windows(s: sqlengine.Session, zone: str, tvf: str) -> collections.Counter:
    s.execute(f"SET 'table.local-time-zone' = '{zone}'")
    rows = s.sql(f"SELECT window_start, window_end, COUNT(*) AS n FROM TABLE({tvf}) "
                 "GROUP BY window_start, window_end").collect().to_pylist()
    return collections.Counter({(r["window_start"], r["window_end"]): r["n"] for r in rows})


@pytest.mark.parametrize("zone", ["Europe/Berlin", "Asia/Shanghai", "America/New_York",
                                  "Asia/Kolkata", "GMT+05:45"])
def test_tumble_days_and_hours_are_the_session_zones(s: sqlengine.Session, zone: str) -> None:
    py_zone = zone.replace("GMT+05:45", "Asia/Kathmandu")
    for size, text in ((dt.timedelta(days=1), "1' DAY"), (dt.timedelta(hours=1), "1' HOUR"),
                       (dt.timedelta(hours=3), "3' HOUR")):
        got = _windows(s, zone, f"TUMBLE(TABLE ev, DESCRIPTOR(lts), INTERVAL '{text})")
        assert got == _expected(py_zone, size), (zone, text)


def test_hop_and_cumulate_follow_the_zones_clock(s: sqlengine.Session) -> None:
    got = _windows(s, "Europe/Berlin",
                   "HOP(TABLE ev, DESCRIPTOR(lts), INTERVAL '1' HOUR, INTERVAL '2' HOUR)")
    assert got == _expected("Europe/Berlin", dt.timedelta(hours=2), dt.timedelta(hours=1))
    cumulated = _windows(s, "Europe/Berlin", "CUMULATE(TABLE ev, DESCRIPTOR(lts), "
                         "INTERVAL '6' HOUR, INTERVAL '1' DAY)")
    z = zoneinfo.ZoneInfo("Europe/Berlin")
    want: collections.Counter = collections.Counter()
    for t in _instants():
        local = t.astimezone(z).replace(tzinfo=None)
        day = _floor(local, dt.timedelta(days=1))
        for k in range(1, 5):
            if day + k * dt.timedelta(hours=6) > local:
                want[(day, day + k * dt.timedelta(hours=6))] += 1
    assert cumulated == want


def test_window_time_is_the_instant_of_the_windows_last_millisecond(
        s: sqlengine.Session) -> None:
    s.execute("SET 'table.local-time-zone' = 'Europe/Berlin'")
    q = s.sql("SELECT id, window_start, window_end, window_time FROM TABLE(TUMBLE(TABLE ev, "
              "DESCRIPTOR(lts), INTERVAL '1' DAY))")
    assert q.schema.field("window_start").type == pa.timestamp("ms")
    assert q.schema.field("window_time").type == pa.timestamp("ms", tz="UTC")
    z = zoneinfo.ZoneInfo("Europe/Berlin")
    for r in q.collect().to_pylist():
        last = (r["window_end"] - dt.timedelta(milliseconds=1)).replace(tzinfo=z)
        assert r["window_time"] == last.astimezone(UTC), r
    # 29 October 2023 has 25 hours in Berlin: its day window is 00:00 CEST to 00:00 CET
    day = s.sql("SELECT MIN(window_time) AS v FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(lts), "
                "INTERVAL '1' DAY)) WHERE window_start = TIMESTAMP '2023-10-29 00:00:00'")
    assert day.collect().to_pylist()[0]["v"] == dt.datetime(2023, 10, 29, 22, 59, 59, 999000,
                                                            tzinfo=UTC)


def test_group_windows_and_the_tvf_agree(s: sqlengine.Session) -> None:
    s.execute("SET 'table.local-time-zone' = 'Asia/Shanghai'")
    legacy = s.sql("SELECT TUMBLE_START(lts, INTERVAL '1' DAY) AS ws, "
                   "TUMBLE_END(lts, INTERVAL '1' DAY) AS we, COUNT(*) AS n FROM ev "
                   "GROUP BY TUMBLE(lts, INTERVAL '1' DAY)").collect().to_pylist()
    got = collections.Counter({(r["ws"], r["we"]): r["n"] for r in legacy})
    assert got == _expected("Asia/Shanghai", dt.timedelta(days=1))


def test_utc_windows_keep_an_ltz_window_time(s: sqlengine.Session) -> None:
    """In UTC too window_time over a TIMESTAMP_LTZ is a TIMESTAMP_LTZ(3), as PyFlink 2.3's
    (it was a TIMESTAMP(3), and TIMESTAMPDIFF against the rowtime was refused)."""
    got = _windows(s, "UTC", "TUMBLE(TABLE ev, DESCRIPTOR(lts), INTERVAL '1' DAY)")
    assert got == _expected("UTC", dt.timedelta(days=1))
    q = s.sql("SELECT window_start, window_time, TIMESTAMPDIFF(SECOND, lts, window_time) AS d "
              "FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(lts), INTERVAL '1' DAY))")
    assert q.schema.field("window_time").type == pa.timestamp("ms", tz="UTC")
    assert q.schema.field("window_start").type == pa.timestamp("ms")
    for r in q.collect().to_pylist():
        assert r["window_time"] == r["window_start"].replace(tzinfo=dt.UTC) + \
            dt.timedelta(days=1, milliseconds=-1)
        assert 0 <= r["d"] < 86400


# (PyFlink 2.3's sessions of a 45-minute gap over these instants, streaming mode: the rows'
# times are read on the zone's clock and merged there, so in New York, where the clocks go
# back from 02:00 to 01:00 at 06:00 UTC, 05:10, 05:40 and 06:20 UTC read 01:10, 01:40, 01:20
# and make one session ending at 02:25; Flink's batch mode has no session windows)
_SESSION_ROWS = ["a,2024-11-03 05:10:00", "a,2024-11-03 05:40:00", "a,2024-11-03 06:20:00",
                 "b,2024-11-03 05:50:00", "a,2024-11-03 08:00:00", "b,2024-11-03 09:00:00"]
_FLINK_SESSIONS = {
    "Asia/Shanghai": [("a", "13:10", "15:05", "15:04:59.999", 3),
                      ("a", "16:00", "16:45", "16:44:59.999", 1),
                      ("b", "13:50", "14:35", "14:34:59.999", 1),
                      ("b", "17:00", "17:45", "17:44:59.999", 1)],
    "America/New_York": [("a", "01:10", "02:25", "02:24:59.999", 3),
                         ("a", "03:00", "03:45", "03:44:59.999", 1),
                         ("b", "01:50", "02:35", "02:34:59.999", 1),
                         ("b", "04:00", "04:45", "04:44:59.999", 1)],
}


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("zone", sorted(_FLINK_SESSIONS))
def test_session_windows_of_a_zones_clock_as_flink(tmp_path: Path, zone: str,
                                                   parallelism: int) -> None:
    """SESSION windows over a TIMESTAMP_LTZ outside UTC (refused before), as the TVF under an
    aggregate, on its own and as a legacy group window."""
    path = tmp_path / "e.csv"
    path.write_text("".join(
        f"{k},{int(dt.datetime.fromisoformat(t).replace(tzinfo=dt.UTC).timestamp())}"
        f"000\n" for k, t in (r.split(",") for r in _SESSION_ROWS)))
    st = sqlengine.connect({"execution.runtime-mode": "streaming", "table.local-time-zone": zone,
                            "parallelism.default": str(parallelism)})
    st.execute(f"CREATE TABLE e (k STRING, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK "
               f"FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
               f"'path' = '{path}', 'format' = 'csv')")
    tvf = "TABLE(SESSION(TABLE e PARTITION BY k, DESCRIPTOR(ts), INTERVAL '45' MINUTE))"

    def hm(v: dt.datetime) -> str:
        return v.strftime("%H:%M")

    rows = st.sql(f"SELECT k, window_start, window_end, CAST(window_time AS STRING) AS wt, "
                  f"COUNT(*) AS n FROM {tvf} GROUP BY k, window_start, window_end, window_time"
                  ).collect().to_pylist()
    want = _FLINK_SESSIONS[zone]
    assert sorted((r["k"], hm(r["window_start"]), hm(r["window_end"]), r["wt"][11:], r["n"])
                  for r in rows) == want
    rows = st.sql(f"SELECT k, window_start, window_end FROM {tvf}").collect().to_pylist()
    assert sorted(collections.Counter((r["k"], hm(r["window_start"]), hm(r["window_end"]))
                                      for r in rows).items()) == \
        [((k, s, e), n) for k, s, e, _, n in want]
    rows = st.sql("SELECT k, SESSION_START(ts, INTERVAL '45' MINUTE) AS s, COUNT(*) AS n "
                  "FROM e GROUP BY k, SESSION(ts, INTERVAL '45' MINUTE)").collect().to_pylist()
    assert sorted((r["k"], hm(r["s"]), r["n"]) for r in rows) == \
        [(k, s, n) for k, s, _, _, n in want]


def _streaming(tmp_path: Path, zone: str, instants: list[dt.datetime],
               parallelism: int = 1) -> sqlengine.Session:
    path = tmp_path / "events.csv"
    path.write_text("".join(f"{i},{int(t.timestamp() * 1000)}\n"
                            for i, t in enumerate(instants)))
    st = sqlengine.connect({"execution.runtime-mode": "streaming",
                            "table.local-time-zone": zone,
                            "parallelism.default": str(parallelism)})
    st.execute(f"CREATE TABLE e (id INT, ms BIGINT, lts AS TO_TIMESTAMP_LTZ(ms, 3), "
               f"WATERMARK FOR lts AS lts) WITH ('connector' = 'filesystem', "
               f"'path' = '{path}', 'format' = 'csv')")
    return st


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("zone", ["Europe/Berlin", "America/Los_Angeles", "Asia/Shanghai"])
def test_streaming_windows_fire_by_the_zones_clock(tmp_path: Path, zone: str,
                                                   parallelism: int) -> None:
    """In order, across both clock changes: the windows batch mode gives (zoneinfo's)."""
    st = _streaming(tmp_path, zone, sorted(_instants()), parallelism)
    for size, text in ((dt.timedelta(days=1), "1' DAY"), (dt.timedelta(hours=1), "1' HOUR")):
        rows = st.sql(f"SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE "
                      f"e, DESCRIPTOR(lts), INTERVAL '{text})) GROUP BY window_start, "
                      f"window_end").collect().to_pylist()
        got = collections.Counter({(r["window_start"], r["window_end"]): r["n"] for r in rows})
        assert got == _expected(zone, size), (zone, text)
    st.close()


def test_a_window_in_the_repeated_hour_fires_at_its_later_reading(tmp_path: Path) -> None:
    """Berlin's clocks show 02:00-03:00 twice on 29 October 2023 (00:00-01:00 UTC in summer
    time, 01:00-02:00 UTC in winter time): the window [02:00, 03:00) takes the rows of both
    and fires when the watermark passes 01:59:59.999 UTC, as Flink's; a row for it after
    that is late."""
    at = [dt.datetime(2023, 10, 29, h, m, tzinfo=UTC) for h, m in
          ((0, 30), (1, 20), (1, 50), (2, 10), (0, 40))]
    st = _streaming(tmp_path, "Europe/Berlin", at)
    rows = st.sql("SELECT window_start, window_time, COUNT(*) AS n, MIN(id) AS first_id, "
                  "MAX(id) AS last_id FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(lts), "
                  "INTERVAL '1' HOUR)) GROUP BY window_start, window_end, window_time"
                  ).collect().to_pylist()
    assert rows == [
        {"window_start": dt.datetime(2023, 10, 29, 2), "n": 3, "first_id": 0, "last_id": 2,
         # (window_time: the earlier reading of 02:59:59.999, as Flink's toEpochMills)
         "window_time": dt.datetime(2023, 10, 29, 0, 59, 59, 999000, tzinfo=UTC)},
        {"window_start": dt.datetime(2023, 10, 29, 3), "n": 1, "first_id": 3, "last_id": 3,
         "window_time": dt.datetime(2023, 10, 29, 2, 59, 59, 999000, tzinfo=UTC)}]
    st.close()


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_session_ending_in_the_repeated_hour_waits_for_its_later_reading(
        tmp_path: Path, parallelism: int) -> None:
    """New York shows 01:00-02:00 twice on 3 November 2024. Key c's rows at 01:10 EDT (05:10
    UTC) and 01:20 EST (06:20 UTC) with a 45-minute gap make one session [01:10, 02:05): the
    first one's session [01:10, 01:55) fires only at the later reading of 01:55 (06:55 UTC),
    as Flink's timers: it closed at the first reading once b's row at 05:59:30 UTC moved the
    watermark past it, and c's second row started a session of its own. PyFlink 2.3's rows
    for the same file."""
    at = [dt.datetime(2024, 11, 3, 5, 10, tzinfo=UTC),
          dt.datetime(2024, 11, 3, 5, 59, 30, tzinfo=UTC),
          dt.datetime(2024, 11, 3, 6, 20, tzinfo=UTC)]
    st = _streaming(tmp_path, "America/New_York", at, parallelism)
    st.execute("CREATE TEMPORARY VIEW kv AS SELECT CASE WHEN id = 1 THEN 'b' ELSE 'c' END AS k, "
               "lts FROM e")
    got = st.sql("SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION("
                 "TABLE kv PARTITION BY k, DESCRIPTOR(lts), INTERVAL '45' MINUTE)) GROUP BY k, "
                 "window_start, window_end").collect().to_pylist()
    assert sorted(tuple(r.values()) for r in got) == [
        ("b", dt.datetime(2024, 11, 3, 1, 59, 30), dt.datetime(2024, 11, 3, 2, 44, 30), 1),
        ("c", dt.datetime(2024, 11, 3, 1, 10), dt.datetime(2024, 11, 3, 2, 5), 2)]
    st.close()


def test_floor_to_hour_keeps_the_values_own_reading_of_a_repeated_hour(
        s: sqlengine.Session) -> None:
    """01:30 UTC on 29 October 2023 is 02:30 CET, the second 02:30 of Berlin's night: its
    hour starts at 01:00 UTC (02:00 CET), not at the first 02:00 (00:00 UTC), as Flink's."""
    s.execute("SET 'table.local-time-zone' = 'Europe/Berlin'")
    got = s.sql("SELECT FLOOR(TO_TIMESTAMP_LTZ(1698543000000, 3) TO HOUR) AS f, "
                "CEIL(TO_TIMESTAMP_LTZ(1698539940000, 3) TO HOUR) AS c, "
                "FLOOR(TO_TIMESTAMP_LTZ(1698543000000, 3) TO DAY) AS d").collect().to_pylist()[0]
    assert got["f"] == dt.datetime(2023, 10, 29, 1, 0, tzinfo=UTC)
    # 00:39 UTC is 02:39 CEST: the next hour boundary is 01:00 UTC (02:00 CET)
    assert got["c"] == dt.datetime(2023, 10, 29, 1, 0, tzinfo=UTC)
    assert got["d"] == dt.datetime(2023, 10, 28, 22, 0, tzinfo=UTC)  # Berlin's midnight


@pytest.mark.parametrize("zone", ["UTC", "Asia/Shanghai", "America/Los_Angeles"])
def test_processing_time_is_the_zones_wall_clock(zone: str) -> None:
    """PROCTIME() reads as the session zone's wall clock (Flink's is a TIMESTAMP_LTZ shown
    there), so its day windows are the zone's days; the group windows take it too."""
    z = zoneinfo.ZoneInfo(zone)
    st = sqlengine.connect({"execution.runtime-mode": "streaming",
                            "table.local-time-zone": zone})
    st.execute("CREATE TABLE d (k INT, pt AS PROCTIME()) WITH ('connector' = 'datagen', "
               "'number-of-rows' = '5')")
    before = dt.datetime.now(z).replace(tzinfo=None)
    shown = st.sql("SELECT PROCTIME() AS p").collect().to_pylist()[0]["p"]
    days = st.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE d, "
                  "DESCRIPTOR(pt), INTERVAL '1' DAY)) GROUP BY window_start, window_end"
                  ).collect().to_pylist()
    hours = st.sql("SELECT TUMBLE_START(pt, INTERVAL '1' HOUR) AS w, COUNT(*) AS n FROM d "
                   "GROUP BY TUMBLE(pt, INTERVAL '1' HOUR)").collect().to_pylist()
    after = dt.datetime.now(z).replace(tzinfo=None)
    assert before - dt.timedelta(seconds=1) <= shown <= after + dt.timedelta(seconds=1)
    midnights = {before.replace(hour=0, minute=0, second=0, microsecond=0),
                 after.replace(hour=0, minute=0, second=0, microsecond=0)}
    assert {r["window_start"] for r in days} <= midnights
    assert sum(r["n"] for r in days) == 5
    starts = {before.replace(minute=0, second=0, microsecond=0),
              after.replace(minute=0, second=0, microsecond=0)}
    assert {r["w"] for r in hours} <= starts and sum(r["n"] for r in hours) == 5
    st.close()
