"""SUM of a DECIMAL(38, s) past 38 digits is NULL in every aggregation, as Flink's (its
DecimalData of more digits is NULL), not a wrapped number: a window aggregation summed with
Arrow's DECIMAL(38) sum, which wraps, and a frame's sum of 38 nines was taken for an overflow
(Python's Decimal abs() rounds to 28 digits). Values checked against PyFlink 2.3."""

from __future__ import annotations

from decimal import Decimal, getcontext
from pathlib import Path

import pytest

import sqlengine

getcontext().prec = 80
NINES = Decimal(10 ** 38 - 1)
DDL = ("CREATE TABLE t (k STRING, d DECIMAL(38, 0), ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
       "WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")


def _session(tmp_path: Path, mode: str) -> sqlengine.Session:
    rows = [("a", NINES, 1), ("a", NINES, 2), ("a", -1, 3), ("b", -NINES, 4), ("b", 5, 5)]
    path = tmp_path / "t.csv"
    path.write_text("".join(f"{k},{d},2026-01-01 00:00:0{s}\n" for k, d, s in rows))
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(DDL.format(path=path))
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_window_sum_past_38_digits_is_null(tmp_path: Path, mode: str) -> None:
    s = _session(tmp_path, mode)
    got = _rows(s, "SELECT k, SUM(d), AVG(d), COUNT(*) FROM TABLE(TUMBLE(TABLE t, "
                   "DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY k, window_start, window_end")
    # (Flink 2.3 gives 1 for a's SUM: its sum starts again from the value after an overflow)
    # (b's AVG has 38 integral digits, past AVG's DECIMAL(38, 6): NULL too)
    assert got == [("a", None, None, 3), ("b", 5 - NINES, None, 2)]
    distinct = _rows(s, "SELECT k, SUM(DISTINCT d) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts),"
                        " INTERVAL '1' HOUR)) GROUP BY k, window_start, window_end")
    assert distinct == [("a", NINES - 1), ("b", 5 - NINES)]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_group_and_over_sums_at_38_digits(tmp_path: Path, mode: str) -> None:
    s = _session(tmp_path, mode)
    assert _rows(s, "SELECT k, SUM(d) FROM t GROUP BY k") == [("a", None), ("b", 5 - NINES)]
    over = _rows(s, "SELECT k, ts, SUM(d) OVER (PARTITION BY k ORDER BY ts) FROM t")
    assert [r[2] for r in over] == [NINES, None, None, -NINES, 5 - NINES]  # (as PyFlink's)
    rows = _rows(s, "SELECT k, ts, SUM(d) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 1 "
                    "PRECEDING AND CURRENT ROW) FROM t")
    # (PyFlink 2.3 gives NULL for a's third row: it adds and takes off values one by one,
    # and the NULL of the second frame stays; the frame's rows sum to NINES - 1)
    assert [r[2] for r in rows] == [NINES, None, NINES - 1, -NINES, 5 - NINES]


def test_csv_reads_38_nines_and_refuses_39(tmp_path: Path) -> None:
    s = _session(tmp_path, "batch")
    got = _rows(s, "SELECT d FROM t WHERE k = 'b' OR ts = TIMESTAMP '2026-01-01 00:00:01'")
    assert got == [(-NINES,), (5,), (NINES,)]  # (a float check took 38 nines for 10^38)
    path = tmp_path / "u.csv"
    path.write_text("999.994\n-999.994\n999.995\n")
    s.execute(f"CREATE TABLE u (d DECIMAL(5, 2)) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    with pytest.raises(sqlengine.ConnectorError, match=r"u\.csv:3: .*'999\.995'"):
        s.sql("SELECT d FROM u").collect()
    path.write_text(f"{NINES}9\n")
    s.execute(f"CREATE TABLE w (d DECIMAL(38, 0)) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    with pytest.raises(sqlengine.ConnectorError, match=r"u\.csv:1: .*not a valid DECIMAL"):
        s.sql("SELECT d FROM w").collect()
