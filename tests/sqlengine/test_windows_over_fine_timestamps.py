"""Windows and OVER frames over a TIMESTAMP(6) or TIMESTAMP(9) column in batch mode. They
failed with Arrow's "Casting from timestamp[ns] to timestamp[ms] would lose data"; a row
counts by its millisecond, floored, as Flink's TimestampData does (the TUMBLE and HOP rows
are PyFlink 2.3's on the same file)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import sqlengine

ROWS = "1,2024-01-01 00:00:00.123456789\n2,2024-01-01 10:00:00.000000001\n3,2024-01-02 00:00:00\n"
DAY = dt.datetime(2024, 1, 1)


@pytest.fixture(params=[6, 9])
def session(request: pytest.FixtureRequest, tmp_path: Path) -> sqlengine.Session:
    path = tmp_path / "n.csv"
    path.write_text(ROWS)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE n (a INT, t TIMESTAMP({request.param})) WITH ('connector' = "
              f"'filesystem', 'path' = '{path}', 'format' = 'csv')")
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def test_tumble_and_hop(session: sqlengine.Session) -> None:
    end = dt.timedelta(days=1, milliseconds=-1)
    assert _rows(session, "SELECT window_start, window_end, window_time, COUNT(*) FROM "
                          "TABLE(TUMBLE(TABLE n, DESCRIPTOR(t), INTERVAL '1' DAY)) "
                          "GROUP BY window_start, window_end, window_time") == [
        (DAY, DAY + dt.timedelta(days=1), DAY + end, 2),
        (DAY + dt.timedelta(days=1), DAY + dt.timedelta(days=2), DAY + dt.timedelta(days=1) + end,
         1)]
    half = dt.timedelta(hours=12)
    assert _rows(session, "SELECT a, window_start FROM TABLE(HOP(TABLE n, DESCRIPTOR(t), "
                          "INTERVAL '12' HOUR, INTERVAL '1' DAY))") == [
        (1, DAY - half), (1, DAY), (2, DAY - half), (2, DAY), (3, DAY + half),
        (3, DAY + 2 * half)]


def test_session_windows_start_at_the_millisecond(session: sqlengine.Session) -> None:
    assert _rows(session, "SELECT window_start, COUNT(*) FROM TABLE(SESSION(TABLE n, "
                          "DESCRIPTOR(t), INTERVAL '11' HOUR)) GROUP BY window_start, "
                          "window_end") == [
        (DAY + dt.timedelta(milliseconds=123), 2), (DAY + dt.timedelta(days=1), 1)]


def test_over_frames(session: sqlengine.Session) -> None:
    got = _rows(session, "SELECT a, COUNT(*) OVER (ORDER BY t RANGE BETWEEN INTERVAL '12' "
                         "HOUR PRECEDING AND CURRENT ROW), CAST(MAX(t) OVER (ORDER BY t RANGE "
                         "BETWEEN INTERVAL '12' HOUR PRECEDING AND CURRENT ROW) AS STRING) "
                         "FROM n")
    assert [(a, c) for a, c, _ in got] == [(1, 1), (2, 2), (3, 1)]
    # (MAX keeps the column's own digits)
    assert [m[:26] for _, _, m in got] == ["2024-01-01 00:00:00.123456",
                                           "2024-01-01 10:00:00.000000",
                                           "2024-01-02 00:00:00.000000"]
