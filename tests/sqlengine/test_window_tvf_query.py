"""A window TVF over a query in parentheses, as Flink 2.3 runs it:
``TUMBLE((SELECT * FROM l WHERE v > 10), DESCRIPTOR(ts), ...)`` (on main: refused, "the first
argument of TUMBLE must be TABLE <name>"). Expected rows: PyFlink 2.3, streaming mode, on the
same file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import sqlengine

ROWS = ("a,5,2024-01-01 00:00:01\nb,15,2024-01-01 00:00:02\na,25,2024-01-01 00:00:06\n"
        "b,35,2024-01-01 00:00:07\na,12,2024-01-01 00:00:11\n")


def _t(s: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1) + dt.timedelta(seconds=s)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_window_tvfs_over_a_query(tmp_path: Path, mode: str) -> None:
    (tmp_path / "l.csv").write_text(ROWS)
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE l (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 'l.csv'}', 'format' = 'csv')")
    got = s.sql("SELECT window_start, COUNT(*) AS c, SUM(v) AS s FROM TABLE(TUMBLE((SELECT * "
                "FROM l WHERE v > 10), DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY "
                "window_start, window_end").collect().to_pylist()
    assert sorted((r["window_start"], r["c"], r["s"]) for r in got) == [
        (_t(0), 1, 15), (_t(5), 2, 60), (_t(10), 1, 12)]
    got = s.sql("SELECT k, window_start, SUM(v) AS s FROM TABLE(HOP((SELECT k, v * 2 AS v, ts "
                "FROM l), DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY "
                "k, window_start, window_end").collect().to_pylist()
    assert sorted((r["k"], r["window_start"], r["s"]) for r in got) == sorted([
        ("a", _t(-5), 10), ("b", _t(-5), 30), ("a", _t(0), 60), ("b", _t(0), 100),
        ("a", _t(5), 74), ("b", _t(5), 70), ("a", _t(10), 24)])
    got = s.sql("SELECT k, v, window_start FROM TUMBLE((SELECT * FROM l WHERE k = 'a'), "
                "DESCRIPTOR(ts), INTERVAL '5' SECOND)").collect().to_pylist()
    assert sorted((r["v"], r["window_start"]) for r in got) == [(5, _t(0)), (12, _t(10)),
                                                                (25, _t(5))]
