"""Batch mode windows a plain TIMESTAMP column (no WATERMARK), as Flink 2.3's batch mode does;
streaming mode still refuses it by name. It was refused in both ("not a time attribute").

The expected rows are PyFlink 2.3's (batch mode, the same VALUES), hand-copied; a row whose
time is NULL falls in no window (it failed in Arrow: "Unsupported cast from double to
timestamp")."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

VIEW = ("CREATE TEMPORARY VIEW t (k, v, ts) AS SELECT * FROM (VALUES "
        "(1, 10, TIMESTAMP '2024-01-01 10:00:00'), (1, 20, TIMESTAMP '2024-01-01 10:00:04'), "
        "(2, 5, TIMESTAMP '2024-01-01 10:00:07'), (1, 7, TIMESTAMP '2024-01-01 10:00:12'), "
        "(2, 3, TIMESTAMP '2024-01-01 10:00:13'), (2, 100, CAST(NULL AS TIMESTAMP(3))))")


def ts(s: str) -> dt.datetime:
    return dt.datetime.fromisoformat(f"2024-01-01 {s}")


def _rows(sql: str, mode: str = "batch") -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(VIEW)
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()),
                  key=lambda r: tuple((v is None, v if v is not None else 0) for v in r))


def test_tumble_and_hop_over_a_plain_timestamp() -> None:
    assert _rows("SELECT k, window_start, window_end, SUM(v) FROM TABLE(TUMBLE(TABLE t, "
                 "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY k, window_start, "
                 "window_end") == [
        (1, ts("10:00:00"), ts("10:00:05"), 30), (1, ts("10:00:10"), ts("10:00:15"), 7),
        (2, ts("10:00:05"), ts("10:00:10"), 5), (2, ts("10:00:10"), ts("10:00:15"), 3)]
    assert _rows("SELECT k, window_start, SUM(v) FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), "
                 "INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY k, window_start, "
                 "window_end") == [
        (1, ts("09:59:55"), 30), (1, ts("10:00:00"), 30), (1, ts("10:00:05"), 7),
        (1, ts("10:00:10"), 7), (2, ts("10:00:00"), 5), (2, ts("10:00:05"), 8),
        (2, ts("10:00:10"), 3)]


def test_cumulate_rollup_and_group_windows_over_a_plain_timestamp() -> None:
    assert _rows("SELECT window_start, window_end, SUM(v) FROM TABLE(CUMULATE(TABLE t, "
                 "DESCRIPTOR(ts), INTERVAL '4' SECOND, INTERVAL '8' SECOND)) GROUP BY "
                 "window_start, window_end") == [
        (ts("10:00:00"), ts("10:00:04"), 10), (ts("10:00:00"), ts("10:00:08"), 35),
        (ts("10:00:08"), ts("10:00:16"), 10)]  # (no row in [10:00:08, 10:00:12): no window)
    assert _rows("SELECT window_start, k, SUM(v) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
                 "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, ROLLUP(k)") == [
        (ts("10:00:00"), 1, 30), (ts("10:00:00"), 2, 5), (ts("10:00:00"), None, 35),
        (ts("10:00:10"), 1, 7), (ts("10:00:10"), 2, 3), (ts("10:00:10"), None, 10)]
    assert _rows("SELECT k, TUMBLE_START(ts, INTERVAL '5' SECOND), COUNT(*) FROM t "
                 "GROUP BY k, TUMBLE(ts, INTERVAL '5' SECOND)") == [
        (1, ts("10:00:00"), 2), (1, ts("10:00:10"), 1), (2, ts("10:00:05"), 1),
        (2, ts("10:00:10"), 1)]


def test_a_null_time_falls_in_no_window() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("e", pa.table({"v": [1, 2, 3], "ts": pa.array(
        [ts("10:00:01"), None, ts("10:00:07")], pa.timestamp("ms"))}))
    got = s.sql("SELECT v, window_start FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '5' "
                "SECOND, INTERVAL '10' SECOND))").collect().to_pylist()
    assert sorted(tuple(r.values()) for r in got) == [
        (1, ts("09:59:55")), (1, ts("10:00:00")), (3, ts("10:00:00")), (3, ts("10:00:05"))]


@pytest.mark.parametrize("sql", [
    "SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' "
    "SECOND)) GROUP BY window_start, window_end",
    "SELECT TUMBLE_START(ts, INTERVAL '5' SECOND), COUNT(*) FROM t GROUP BY TUMBLE(ts, "
    "INTERVAL '5' SECOND)"])
def test_streaming_mode_still_needs_a_time_attribute(sql: str) -> None:
    with pytest.raises(SqlEngineError, match=r"column 'ts' is not a time attribute: windows "
                       r"in streaming mode need a rowtime column"):
        _rows(sql, "streaming")


@pytest.mark.parametrize("aux", [
    "TUMBLE_START(ts, INTERVAL '7' SECOND)", "TUMBLE_END(ts, INTERVAL '1' HOUR)",
    "HOP_START(ts, INTERVAL '1' SECOND, INTERVAL '9' SECOND)",
    "SESSION_END(ts, INTERVAL '5' SECOND)"])
def test_a_window_auxiliary_of_another_window_is_refused(aux: str) -> None:
    """Flink refuses TUMBLE_START(...) whose window is not GROUP BY's; its arguments were
    ignored (each gave the 5-second window's bounds)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    with pytest.raises(SqlEngineError, match=r"does not match the group window TUMBLE\(ts, "
                                             r"INTERVAL '5' SECOND\) of GROUP BY"):
        s.sql(f"SELECT {aux} AS w, COUNT(*) AS n FROM t "
              "GROUP BY TUMBLE(ts, INTERVAL '5' SECOND)").collect()
    got = s.sql("SELECT TUMBLE_START(ts, INTERVAL '5' SECOND) AS w, COUNT(*) AS n FROM t "
                "GROUP BY tumble(ts, interval '5' second)").collect().to_pylist()
    assert sorted((r["w"], r["n"]) for r in got) == [
        (ts("10:00:00"), 2), (ts("10:00:05"), 1), (ts("10:00:10"), 2)]
