"""Rows an operator emits when a watermark fires them (a temporal join's joined rows, a SESSION
window TVF's rows) leave before that watermark, as Flink's timers emit before forwarding it:
an operator by their time after it does not take them for late rows. They left stamped with
the watermark that fired them, so a window or OVER after them dropped every row. The expected
rows are PyFlink 2.3's on the same rows (MATCH_RECOGNIZE's case is in
test_match_recognize.py)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine

ORDERS = [(1, "EUR", 1), (2, "EUR", 3), (3, "USD", 4), (4, "EUR", 6), (5, "USD", 8),
          (6, "EUR", 12), (7, "EUR", 20)]


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_a_window_after_an_event_time_temporal_join(tmp_path: Path, parallelism: str) -> None:
    orders, rates = tmp_path / "o.csv", tmp_path / "r.csv"
    orders.write_text("".join(f"{i},{c},2024-01-01 00:00:{s:02d}\n" for i, c, s in ORDERS))
    rates.write_text("EUR,10,2024-01-01 00:00:00\nUSD,20,2024-01-01 00:00:00\n"
                     "EUR,11,2024-01-01 00:00:05\nUSD,21,2024-01-01 00:00:07\n"
                     "EUR,12,2024-01-01 00:00:30\n")
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE o (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{orders}', "
              "'format' = 'csv')")
    s.execute(f"CREATE TABLE r (cur STRING, rate INT, rts TIMESTAMP(3), PRIMARY KEY (cur) NOT "
              f"ENFORCED, WATERMARK FOR rts AS rts - INTERVAL '1' SECOND) WITH ('connector' = "
              f"'filesystem', 'path' = '{rates}', 'format' = 'csv')")
    s.execute("CREATE VIEW j AS SELECT o.id, o.ts, r.rate FROM o JOIN r FOR SYSTEM_TIME AS OF "
              "o.ts ON o.cur = r.cur")
    got = s.sql("SELECT window_start, COUNT(*) AS n, SUM(rate) AS s FROM TABLE(TUMBLE(TABLE j, "
                "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
    at = dt.datetime(2024, 1, 1)
    assert sorted(tuple(r.values()) for r in got.collect().to_pylist()) == [
        (at, 3, 40), (at.replace(second=5), 2, 32), (at.replace(second=10), 1, 11),
        (at.replace(second=20), 1, 11)]


def test_an_over_after_a_session_window_tvf() -> None:
    """One row a batch: the watermark rises between rows, as PyFlink's with a watermark on
    every row. A session's rows at or behind the watermark before the one closing it are
    late for the OVER after it (Flink keeps ids 5, 6, 7)."""
    table = pa.table({"id": pa.array([r[0] for r in ORDERS], pa.int32()),
                      "cur": [r[1] for r in ORDERS],
                      "ts": [dt.datetime(2024, 1, 1, 0, 0, r[2]) for r in ORDERS]})
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("o", iter(table.to_batches(max_chunksize=1)), bounded=False, rowtime="ts",
               watermark="ts - INTERVAL '1' SECOND")
    got = s.sql("SELECT id, COUNT(*) OVER (ORDER BY ts ROWS UNBOUNDED PRECEDING) AS c FROM "
                "TABLE(SESSION(TABLE o PARTITION BY cur, DESCRIPTOR(ts), INTERVAL '2' SECOND))")
    assert [(r["id"], r["c"]) for b in got.stream() for r in b.to_pylist()] == [
        (5, 1), (6, 2), (7, 3)]


@pytest.mark.parametrize(("partition", "expected"), [
    ("", [(5, 1), (6, 2), (7, 3)]),
    ("PARTITION BY cur", [(5, 1), (6, 1), (7, 2)]),
])
def test_an_over_after_a_session_window_tvf_in_one_batch(
        tmp_path: Path, partition: str, expected: list[tuple[int, int]]) -> None:
    """The whole file in one batch: the watermark rises between its rows, and a session the
    rise closes fires there, its rows stamped with the watermark before that rise. They all
    left at the batch's end, stamped with the watermark before the batch, so the OVER kept all
    7 rows. Expected: PyFlink 2.3 with a watermark after every row
    (pipeline.auto-watermark-interval 0)."""
    orders = tmp_path / "o.csv"
    orders.write_text("".join(f"{i},{c},2024-01-01 00:00:{s:02d}\n" for i, c, s in ORDERS))
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE o (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{orders}', "
              "'format' = 'csv')")
    got = s.sql(f"SELECT id, COUNT(*) OVER ({partition} ORDER BY ts ROWS UNBOUNDED PRECEDING) "
                "AS c FROM TABLE(SESSION(TABLE o PARTITION BY cur, DESCRIPTOR(ts), "
                "INTERVAL '2' SECOND))")
    assert [(r["id"], r["c"]) for r in got.collect().to_pylist()] == expected


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize(("join", "expected"), [
    # null-padded rows leave when the watermark expires their left row
    ("LEFT JOIN", [(0, 3, 1), (5, 2, 0), (10, 1, 0), (20, 1, 0)]),
    # a match of a right row 2 s after its left row: the left row's time is behind the
    # watermark then
    ("JOIN", [(0, 1, 1)]),
])
def test_a_window_after_an_interval_join(tmp_path: Path, parallelism: str, join: str,
                                         expected: list[tuple[int, int, int]]) -> None:
    """The join holds its output watermark back by its largest distance (Flink's
    TimeIntervalJoin.getMaxOutputDelay), so its rows are not late for a window after it."""
    orders = tmp_path / "o.csv"
    orders.write_text("".join(f"{i},{c},2024-01-01 00:00:{s:02d}\n" for i, c, s in ORDERS))
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    for name in ("o", "o2"):
        s.execute(f"CREATE TABLE {name} (id INT, cur STRING, ts TIMESTAMP(3), WATERMARK FOR ts "
                  f"AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
                  f"'path' = '{orders}', 'format' = 'csv')")
    s.execute(f"CREATE VIEW ij AS SELECT a.id, a.ts, b.id AS bid FROM o a {join} o2 b ON "
              "a.cur = b.cur AND a.id < b.id AND b.ts BETWEEN a.ts AND a.ts + INTERVAL '2' SECOND")
    got = s.sql("SELECT window_start, COUNT(*) AS n, COUNT(bid) AS nb FROM TABLE(TUMBLE(TABLE "
                "ij, DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
    rows = sorted(tuple(r.values()) for r in got.collect().to_pylist())
    assert [(w.second, n, nb) for w, n, nb in rows] == expected
