"""Event time end to end: watermarks per row, windows firing, late rows, allowed lateness.

Every expected result below was worked out by hand from the input order, as comments show.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.runtime.elements import Watermark, with_meta
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.windows import cumulate, hop, sessions, tumble

# item, price, second: rows in arrival order. The watermark trails by 2 s.
ROWS = [("a", 1, 1), ("b", 2, 4), ("a", 3, 9), ("a", 4, 12), ("b", 5, 3), ("a", 6, 25),
        ("a", 7, 8)]
# watermark before each row:  MIN, -1, 2, 7, 10, 10, 23
#   row 5 (b@3) and row 7 (a@8) arrive after their 10 s window [0, 10) fired at 9.999.


def session(tmp_path: Path, rows: list[tuple[str, int, int]] = ROWS,
            options: dict[str, str] | None = None) -> sqlengine.Session:
    lines = [f"{i},{p},2024-01-01 00:00:{s:02d}" for i, p, s in rows]
    (tmp_path / "bids.csv").write_text("\n".join(lines) + "\n")
    s = sqlengine.connect({"pipeline.auto-watermark-interval": "0", **(options or {})})
    s.execute(f"""CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/bids.csv', 'format' = 'csv')""")
    return s


def rows_of(q: sqlengine.Query) -> list[tuple]:
    out = []
    for b in q.stream():
        for r in b.to_pylist():
            vals = [v.strftime("%S") if hasattr(v, "strftime") else v for v in r.values()]
            out.append(tuple(vals))
    return out


def test_tumble_drops_rows_whose_window_fired(tmp_path: Path) -> None:
    q = session(tmp_path).sql(
        "SELECT item, window_start, window_end, COUNT(*) AS n, SUM(price) AS total FROM "
        "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY item, window_start, window_end")
    assert rows_of(q) == [("+I", "a", "00", "10", 2, 4), ("+I", "b", "00", "10", 1, 2),
                          ("+I", "a", "10", "20", 1, 4), ("+I", "a", "20", "30", 1, 6)]
    assert q.late_records_dropped == 2


def test_hop_window(tmp_path: Path) -> None:
    q = session(tmp_path).sql(
        "SELECT window_start, window_end, MAX(price) AS mx FROM TABLE(HOP(TABLE bids, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) "
        "GROUP BY window_start, window_end")
    # [-5,5): 1,2  [0,10): 1,2,3  [5,15): 3,4  [10,20): 4  [20,30) and [25,35): 6
    assert rows_of(q) == [("+I", "55", "05", 2), ("+I", "00", "10", 3), ("+I", "05", "15", 4),
                          ("+I", "10", "20", 4), ("+I", "20", "30", 6), ("+I", "25", "35", 6)]


def test_cumulate_window_takes_a_late_row_into_unfired_windows(tmp_path: Path) -> None:
    q = session(tmp_path).sql(
        "SELECT window_start, window_end, SUM(price) AS s FROM TABLE(CUMULATE(TABLE bids, "
        "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND)) "
        "GROUP BY window_start, window_end")
    # b@3 arrives at watermark 10: [0,5) and [0,10) have fired, [0,15) has not.
    assert rows_of(q) == [("+I", "00", "05", 3), ("+I", "00", "10", 6),
                          ("+I", "00", "15", 15), ("+I", "15", "30", 6)]


def test_session_window_per_key(tmp_path: Path) -> None:
    q = session(tmp_path).sql(
        "SELECT item, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE bids "
        "PARTITION BY item, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
        "GROUP BY item, window_start, window_end")
    # a: 1 | 9, 12 | 25 (gaps of 5 s or more split);  b: 4  (b@3 and a@8 are late)
    assert rows_of(q) == [("+I", "a", "01", "06", 1), ("+I", "b", "04", "09", 1),
                          ("+I", "a", "09", "17", 2), ("+I", "a", "25", "30", 1)]


def test_results_do_not_depend_on_batching(tmp_path: Path) -> None:
    sql = ("SELECT item, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bids, "
           "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY item, window_start, window_end")
    whole = session(tmp_path).sql(sql)
    whole_rows = sorted(whole.collect().to_pylist(), key=str)
    # The same rows, one file (so one batch, then a watermark) per row.
    (tmp_path / "parts").mkdir()
    for n, (i, p, sec) in enumerate(ROWS):
        (tmp_path / "parts" / f"p{n:02d}").write_text(f"{i},{p},2024-01-01 00:00:{sec:02d}\n")
    split = sqlengine.connect({"pipeline.auto-watermark-interval": "0"})
    split.execute(f"""CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/parts', 'format' = 'csv')""")
    q = split.sql(sql)
    assert sorted(q.collect().to_pylist(), key=str) == whole_rows
    assert q.late_records_dropped == whole.late_records_dropped == 2


def test_periodic_watermarks_follow_batches_not_the_interval(tmp_path: Path) -> None:
    """Under on-periodic (the default) the watermark moves at each batch the source reads: with
    one file per row that is every row, so the answer equals on-event's whatever the
    interval's value, and each watermark fires what it closes as it arrives."""
    (tmp_path / "parts").mkdir()
    for n, (i, p, sec) in enumerate(ROWS):
        (tmp_path / "parts" / f"p{n:02d}").write_text(f"{i},{p},2024-01-01 00:00:{sec:02d}\n")
    sql = ("SELECT item, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bids, "
           "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY item, window_start, window_end")
    steps = {}
    for interval in ("0", "200 ms", "1 h"):
        s = sqlengine.connect({"pipeline.auto-watermark-interval": interval})
        s.execute(f"""CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem',
            'path' = '{tmp_path}/parts', 'format' = 'csv')""")
        q = s.sql(sql)
        steps[interval] = [b.to_pylist() for b in q.stream()]
        assert q.late_records_dropped == 2
    flat = {k: sorted(str(r) for b in v for r in b) for k, v in steps.items()}
    assert flat["0"] == flat["200 ms"] == flat["1 h"]
    assert all(len(v) > 1 for v in steps.values())


def test_allowed_lateness_updates_a_fired_window(tmp_path: Path) -> None:
    q = session(tmp_path, options={"table.exec.emit.allow-lateness": "5 s",
                                   "table.exec.emit.late-fire.enabled": "true"}).sql(
        "SELECT item, window_start, COUNT(*) AS n, SUM(price) AS total FROM "
        "TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
        "GROUP BY item, window_start, window_end")
    # The file is one batch, so the first watermark (23) arrives after every row: b@3 (wm 10)
    # is within [0,10)'s lateness (9.999 + 5 > 10) and joins before it fires; a@8 at wm 23 is
    # beyond it and is dropped.
    assert rows_of(q) == [("+I", "a", "00", 2, 4), ("+I", "b", "00", 2, 7),
                          ("+I", "a", "10", 1, 4), ("+I", "a", "20", 1, 6)]
    assert q.late_records_dropped == 1


def test_allowed_lateness_emits_updates_when_the_window_already_fired(tmp_path: Path) -> None:
    # One file per row: a watermark follows every row, so [0,10) fires at wm 10 (after a@12),
    # then b@3 arrives late but within 5 s of lateness: -U / +U of b's result.
    rows = [("a", 1, 1), ("b", 2, 4), ("a", 4, 12), ("b", 5, 3), ("a", 6, 25), ("b", 9, 7)]
    (tmp_path / "parts").mkdir()
    for n, (i, p, sec) in enumerate(rows):
        (tmp_path / "parts" / f"p{n:02d}").write_text(f"{i},{p},2024-01-01 00:00:{sec:02d}\n")
    s = sqlengine.connect({"table.exec.emit.allow-lateness": "5 s",
                           "table.exec.emit.late-fire.enabled": "true",
                           "pipeline.auto-watermark-interval": "0"})
    s.execute(f"""CREATE TABLE bids (item STRING, price INT, ts TIMESTAMP(3),
        WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/parts', 'format' = 'csv')""")
    q = s.sql("SELECT item, window_start, SUM(price) AS total FROM TABLE(TUMBLE(TABLE bids, "
              "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY item, window_start, window_end")
    assert rows_of(q) == [
        ("+I", "a", "00", 1), ("+I", "b", "00", 2),      # fired at wm 10 (after a@12)
        ("-U", "b", "00", 2), ("+U", "b", "00", 7),      # b@3 at wm 10: late, within 5 s
        ("+I", "a", "10", 4),                            # fired at wm 23 (after a@25)
        ("+I", "a", "20", 6),                            # end of input
    ]
    # b@7 arrives at wm 23: [0,10) expired at 9.999 + 5 <= 23, so it is dropped
    assert q.late_records_dropped == 1
    final = sorted((r["item"], r["window_start"].second, r["total"])
                   for r in q.collect().to_pylist())
    assert final == [("a", 0, 1), ("a", 10, 4), ("a", 20, 6), ("b", 0, 7)]


def test_window_top_n(tmp_path: Path) -> None:
    q = session(tmp_path).sql(
        "SELECT window_start, item, price, rn FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
        "window_start, window_end ORDER BY price DESC) AS rn FROM TABLE(TUMBLE(TABLE bids, "
        "DESCRIPTOR(ts), INTERVAL '10' SECOND))) WHERE rn <= 2")
    # [0,10): a1 b2 a3 (b5, a7 late) -> a3, b2;  [10,20): a4;  [20,30): a6
    assert rows_of(q) == [("+I", "00", "a", 3, 1), ("+I", "00", "b", 2, 2),
                          ("+I", "10", "a", 4, 1), ("+I", "20", "a", 6, 1)]


def test_window_top_n_over_a_window_aggregate(tmp_path: Path) -> None:
    q = session(tmp_path, [*ROWS[:4], ("b", 9, 14), *ROWS[4:]]).sql(
        "SELECT window_start, item, total FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY "
        "window_start, window_end ORDER BY total DESC) AS rn FROM (SELECT window_start, "
        "window_end, item, SUM(price) AS total FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), "
        "INTERVAL '10' SECOND)) GROUP BY window_start, window_end, item)) WHERE rn = 1")
    # [0,10): a 4 vs b 2 -> a;  [10,20): a 4 vs b 9 -> b;  [20,30): a 6
    assert rows_of(q) == [("+I", "00", "a", 4), ("+I", "10", "b", 9), ("+I", "20", "a", 6)]


@pytest.mark.parametrize(("legacy", "tvf"), [
    ("SELECT item, TUMBLE_START(ts, INTERVAL '10' SECOND) AS ws, TUMBLE_END(ts, INTERVAL '10' "
     "SECOND) AS we, COUNT(*) AS n FROM bids GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), item",
     "SELECT item, window_start AS ws, window_end AS we, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE "
     "bids, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY item, window_start, window_end"),
    ("SELECT HOP_START(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND) AS ws, MAX(price) AS m "
     "FROM bids GROUP BY HOP(ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)",
     "SELECT window_start AS ws, MAX(price) AS m FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), "
     "INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY window_start, window_end"),
    ("SELECT item, SESSION_START(ts, INTERVAL '5' SECOND) AS ws, SESSION_END(ts, INTERVAL '5' "
     "SECOND) AS we, SUM(price) AS s FROM bids GROUP BY item, SESSION(ts, INTERVAL '5' SECOND)",
     "SELECT item, window_start AS ws, window_end AS we, SUM(price) AS s FROM TABLE(SESSION("
     "TABLE bids PARTITION BY item, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
     "GROUP BY item, window_start, window_end"),
], ids=["tumble", "hop", "session"])
def test_legacy_group_windows_match_the_window_tvfs(tmp_path: Path, legacy: str,
                                                    tvf: str) -> None:
    s = session(tmp_path)
    assert rows_of(s.sql(legacy)) == rows_of(s.sql(tvf))


def test_tumble_rowtime_is_the_last_millisecond(tmp_path: Path) -> None:
    q = session(tmp_path).sql("SELECT TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND) AS rt, COUNT(*) "
                              "AS n FROM bids GROUP BY TUMBLE(ts, INTERVAL '10' SECOND)")
    got = [(r["rt"].second, r["rt"].microsecond, r["n"]) for r in q.collect().to_pylist()]
    assert sorted(got) == [(9, 999000, 3), (19, 999000, 1), (29, 999000, 1)]


def test_tumble_rowtime_is_a_time_attribute_for_a_window_after_it(tmp_path: Path) -> None:
    """As in Flink 2.3 (DESCRIBE: TIMESTAMP(3) *ROWTIME*), a legacy group window's
    TUMBLE_ROWTIME windows again, by a cascaded group window or a window TVF (both were
    refused: "column 'wr' is not a time attribute")."""
    s = session(tmp_path)
    s.execute("CREATE TEMPORARY VIEW g AS SELECT TUMBLE_ROWTIME(ts, INTERVAL '10' SECOND) AS "
              "wr, COUNT(*) AS c FROM bids GROUP BY TUMBLE(ts, INTERVAL '10' SECOND)")
    assert s.execute("DESCRIBE g")[0].table.column("type").to_pylist()[0] == \
        "TIMESTAMP(3) *ROWTIME*"
    legacy = s.sql("SELECT TUMBLE_START(wr, INTERVAL '20' SECOND) AS w, SUM(c) AS c FROM g "
                   "GROUP BY TUMBLE(wr, INTERVAL '20' SECOND)")
    tvf = s.sql("SELECT window_start AS w, SUM(c) AS c FROM TABLE(TUMBLE(TABLE g, "
                "DESCRIPTOR(wr), INTERVAL '20' SECOND)) GROUP BY window_start, window_end")
    want = [(0, 4), (20, 1)]  # (windows of 10 s: 3, 1, 1 rows; of 20 s: 0-19 and 20-39)
    for q in (legacy, tvf):
        assert sorted((r["w"].second, r["c"]) for r in q.collect().to_pylist()) == want


def _orders_and_shipments(tmp_path: Path, ships: str) -> sqlengine.Session:
    (tmp_path / "o.csv").write_text("o1,2024-01-01 00:00:01\no2,2024-01-01 00:00:05\n"
                                    "o3,2024-01-01 00:00:20\n")
    (tmp_path / "s.csv").write_text(ships)
    s = sqlengine.connect()
    s.execute(f"""
      CREATE TABLE o (id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/o.csv', 'format' = 'csv');
      CREATE TABLE sh (id STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/s.csv', 'format' = 'csv');""")
    return s


def test_interval_join(tmp_path: Path) -> None:
    # o1 ships 2 s later (within 10 s); o2 ships 25 s later (too late); o3 ships 1 s later.
    s = _orders_and_shipments(tmp_path, "o1,2024-01-01 00:00:03\no2,2024-01-01 00:00:30\n"
                                        "o3,2024-01-01 00:00:21\n")
    sql = ("SELECT o.id, sh.ts IS NOT NULL AS shipped FROM o {} sh ON o.id = sh.id AND "
           "sh.ts BETWEEN o.ts AND o.ts + INTERVAL '10' SECOND")
    inner = s.sql(sql.format("JOIN"))
    assert "IntervalJoin(inner, -10000 ms <= left time - right time <= 0 ms)" in inner.explain()
    assert rows_of(inner) == [("+I", "o1", True), ("+I", "o3", True)]
    left = s.sql(sql.format("LEFT JOIN"))
    # o2's null-padded row leaves when the watermark passes its last chance (5 s + 10 s).
    assert sorted(rows_of(left)) == [("+I", "o1", True), ("+I", "o2", False),
                                     ("+I", "o3", True)]


def test_window_join(tmp_path: Path) -> None:
    s = _orders_and_shipments(tmp_path, "o1,2024-01-01 00:00:03\no2,2024-01-01 00:00:12\n"
                                        "o3,2024-01-01 00:00:25\n")
    sql = ("SELECT L.id, L.window_start, R.id IS NOT NULL AS same_window FROM (SELECT * FROM "
           "TABLE(TUMBLE(TABLE o, DESCRIPTOR(ts), INTERVAL '10' SECOND))) AS L {} (SELECT * "
           "FROM TABLE(TUMBLE(TABLE sh, DESCRIPTOR(ts), INTERVAL '10' SECOND))) AS R ON "
           "L.id = R.id AND L.window_start = R.window_start AND L.window_end = R.window_end")
    left = s.sql(sql.format("LEFT JOIN"))
    assert "WindowJoin(left)" in left.explain()
    # o1 and its shipment both in [0,10); o2 in [0,10) but shipped in [10,20); o3 in [20,30).
    assert sorted(rows_of(left)) == [("+I", "o1", "00", True), ("+I", "o2", "00", False),
                                     ("+I", "o3", "20", True)]
    inner = s.sql(sql.format("JOIN"))
    assert sorted(rows_of(inner)) == [("+I", "o1", "00", True), ("+I", "o3", "20", True)]


def test_over_range_frame(tmp_path: Path) -> None:
    q = session(tmp_path).sql(
        "SELECT item, price, SUM(price) OVER w5 AS s5, COUNT(*) OVER w5 AS c5 FROM bids"
        .replace("OVER w5", "OVER (PARTITION BY item ORDER BY ts RANGE BETWEEN INTERVAL '5' "
                            "SECOND PRECEDING AND CURRENT ROW)"))
    # a@9 sees only itself (a@1 is 8 s back); a@12 sees a@9 and itself; b@3 and a@8 are late.
    assert rows_of(q) == [("+I", "a", 1, 1, 1), ("+I", "b", 2, 2, 1), ("+I", "a", 3, 3, 1),
                          ("+I", "a", 4, 7, 2), ("+I", "a", 6, 6, 1)]
    assert q.late_records_dropped == 2


def test_over_rows_frame(tmp_path: Path) -> None:
    frame = "OVER (PARTITION BY item ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"
    q = session(tmp_path).sql(f"SELECT item, price, MAX(price) {frame} AS m2, "
                              f"AVG(price) {frame} AS a2, MIN(ts) {frame} AS t2 FROM bids")
    got = [(r[1], r[2], r[3], r[4], r[5]) for r in rows_of(q)]
    # a: 1 | 1,3 | 3,4 | 4,6 (AVG of INT truncates: 3.5 -> 3, 5)
    assert got == [("a", 1, 1, 1, "01"), ("b", 2, 2, 2, "04"), ("a", 3, 3, 2, "01"),
                   ("a", 4, 4, 3, "09"), ("a", 6, 6, 5, "12")]


def test_over_unbounded_frame_in_both_modes(tmp_path: Path) -> None:
    sql = ("SELECT item, price, SUM(price) OVER (PARTITION BY item ORDER BY ts) AS running "
           "FROM bids")
    got = sorted(rows_of(session(tmp_path).sql(sql)))
    assert got == [("+I", "a", 1, 1), ("+I", "a", 3, 4), ("+I", "a", 4, 8), ("+I", "a", 6, 14),
                   ("+I", "b", 2, 2)]
    # Batch mode has no late rows: b@3 and a@8 count, in time order.
    batch = session(tmp_path, options={"execution.runtime-mode": "batch"}).sql(sql)
    assert sorted(rows_of(batch)) == [
        ("+I", "a", 1, 1), ("+I", "a", 3, 11), ("+I", "a", 4, 15), ("+I", "a", 6, 21),
        ("+I", "a", 7, 8), ("+I", "b", 2, 7), ("+I", "b", 5, 5)]


def test_window_assigners_by_timeline() -> None:
    # TUMBLE(10):  ts 12 -> [10,20); ts -3 -> [-10,0)
    t = tumble(np.array([12, -3]), 10)
    assert list(zip(t.start, t.end)) == [(10, 20), (-10, 0)]
    # HOP(slide 5, size 10): ts 12 -> [10,20), [5,15)
    h = hop(np.array([12]), 5, 10)
    assert list(zip(h.start, h.end)) == [(10, 20), (5, 15)]
    # CUMULATE(step 5, size 15): ts 3 -> [0,5) [0,10) [0,15); ts 12 -> [0,15)
    c = cumulate(np.array([3, 12]), 5, 15)
    assert list(zip(c.rows, c.start, c.end)) == [(0, 0, 5), (0, 0, 10), (0, 0, 15),
                                                  (1, 0, 15)]
    # sessions(gap 5) over sorted (key, ts): key A: 1, 3, 9 -> [1,8) [9,14); key B: 2 -> [2,7)
    ids, starts, ends = sessions(np.array([False, False, False, True]),
                                 np.array([1, 3, 9, 2]), 5)
    assert list(ids) == [0, 0, 1, 2]
    assert list(zip(starts, ends)) == [(1, 8), (9, 14), (2, 7)]


class Recorder(Operator):
    name = "Recorder"

    def __init__(self) -> None:
        self.seen: list[object] = []

    def process_batch(self, batch, input_index=0):  # type: ignore[no-untyped-def]
        self.seen.append(batch.column("$wm").to_pylist())
        return ()

    def process_watermark(self, wm: Watermark):  # type: ignore[no-untyped-def]
        self.seen.append(wm.timestamp)
        return ()


def test_multi_channel_watermark_is_the_minimum_over_active_channels() -> None:
    rec = Recorder()
    task = ChainedTask("v1", [rec], ["Recorder"], 2, {})
    task.process_watermark(Watermark(10), 0)
    assert rec.seen == []                      # channel 1 has no watermark yet
    task.process_watermark(Watermark(5), 1)
    assert rec.seen == [5]
    task.process_watermark(Watermark(3), 1)    # never backwards
    task.process_watermark(Watermark(20), 1)
    assert rec.seen == [5, 10]
    task.set_idle(True, 0)                     # an idle channel is left out: 20 now
    assert rec.seen == [5, 10, 20]
    task.process_watermark(Watermark(30), 1)
    assert rec.seen == [5, 10, 20, 30]
    task.process_watermark(Watermark(25), 0)   # back to active: min is 25 < 30, no regress
    assert rec.seen == [5, 10, 20, 30]
    # A row's watermark on one channel is capped by the other channels' watermarks.
    batch = with_meta(pa.record_batch({"x": [1, 2]}), np.array([40, 50]))
    task.process(batch, 1)
    assert rec.seen[-1] == [25, 25]


def test_current_watermark_is_the_watermark_before_each_row(tmp_path: Path) -> None:
    q = session(tmp_path).sql("SELECT price, CURRENT_WATERMARK(ts) AS wm FROM bids "
                              "WHERE CURRENT_WATERMARK(ts) IS NULL OR price > 0")
    start = dt.datetime(2024, 1, 1)
    got = [(r["price"], None if r["wm"] is None else
            int((r["wm"] - start).total_seconds())) for r in q.collect().to_pylist()]
    assert got == [(1, None), (2, -1), (3, 2), (4, 7), (5, 10), (6, 10), (7, 23)]


def test_processing_time_windows_fire_by_the_wall_clock() -> None:
    s = sqlengine.connect()
    s.execute("""CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '250',
                   'rows-per-second' = '100')""")
    s.execute("CREATE VIEW gp AS SELECT a, PROCTIME() AS pt FROM g")
    q = s.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE gp, DESCRIPTOR(pt), "
              "INTERVAL '1' SECOND)) GROUP BY window_start, window_end")
    batches = [b.to_pylist() for b in q.stream()]
    # 2.5 s of rows: windows close while rows still arrive, not only at the end.
    assert len(batches) >= 2
    rows = [r for b in batches for r in b]
    assert sum(r["n"] for r in rows) == 250
    assert len({r["window_start"] for r in rows}) == len(rows) >= 3


def test_hop_with_many_windows_per_row_is_assigned_a_slice_at_a_time() -> None:
    # 2,000 rows a second apart in 3,600 windows each: 7.2M (row, window) pairs, built in
    # slices of at most 4M (one batch would hold them all at once).
    import datetime as dt

    import pyarrow as pa

    base = dt.datetime(2024, 1, 1)
    t = pa.table({"ts": pa.array([base + dt.timedelta(seconds=i) for i in range(2000)],
                                 pa.timestamp("ms"))})
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", t, rowtime="ts")
    got = s.sql("SELECT COUNT(*) AS w, SUM(n) AS pairs FROM (SELECT window_start, COUNT(*) AS n "
                "FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '1' SECOND, INTERVAL '1' "
                "HOUR)) GROUP BY window_start, window_end)").collect().to_pylist()
    assert got == [{"w": 2000 + 3599, "pairs": 2000 * 3600}]


def test_hop_past_the_windows_per_row_bound_is_refused() -> None:
    from sqlengine.errors import NotSupportedError

    s = session_for_bound()
    with pytest.raises(NotSupportedError, match="puts every row in 3,600,000 windows") as info:
        s.sql("SELECT * FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '0.001' SECOND, "
              "INTERVAL '1' HOUR))").collect()
    assert info.value.span is not None


def session_for_bound() -> sqlengine.Session:
    import datetime as dt

    import pyarrow as pa

    s = sqlengine.connect()
    s.register("t", pa.table({"ts": pa.array([dt.datetime(2024, 1, 1)], pa.timestamp("ms"))}),
               rowtime="ts")
    return s


def test_over_variances_in_streaming(tmp_path: Path) -> None:
    """VAR_* / STDDEV_* OVER a rowtime frame (the OverAggregate, from SUM(x * x), SUM(x) and
    COUNT(x); typed as AVG: an INT column's is an INT, truncated)."""
    frame = "OVER (PARTITION BY item ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)"
    q = session(tmp_path).sql(f"SELECT item, price, VAR_POP(price) {frame} AS vp, "
                              f"STDDEV_SAMP(CAST(price AS DOUBLE)) {frame} AS sd FROM bids")
    got = [(r[1], r[2], r[3], r[4]) for r in rows_of(q)]
    # a: 1 | 1,3 | 3,4 | 4,6; b: 2
    assert [g[:3] for g in got] == [("a", 1, 0), ("b", 2, 0), ("a", 3, 1), ("a", 4, 0),
                                    ("a", 6, 1)]
    # (one value: no sample deviation)
    assert [g[3] for g in got[:2]] == [None, None]
    assert [g[3] for g in got[2:]] == pytest.approx([2 ** 0.5, 0.5 ** 0.5, 2 ** 0.5])


def test_allowed_lateness_alone_is_refused_as_flink_ignores_it(tmp_path: Path) -> None:
    """PyFlink 2.3 ignores 'table.exec.emit.allow-lateness' without late firing (its rows
    equal the run without it: the late row is dropped); it updated fired windows here.
    Refused now, naming what makes it act; a late-fire delay other than 0 is refused."""
    sql = ("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bids, DESCRIPTOR(ts), "
           "INTERVAL '10' SECOND)) GROUP BY window_start, window_end")
    with pytest.raises(sqlengine.SqlEngineError,
                       match=r"takes effect only with 'table\.exec\.emit\.late-fire\.enabled'"):
        session(tmp_path, options={"table.exec.emit.allow-lateness": "5 s"}).sql(sql).collect()
    with pytest.raises(sqlengine.SqlEngineError, match="other than 0 is not implemented"):
        session(tmp_path, options={"table.exec.emit.allow-lateness": "5 s",
                                   "table.exec.emit.late-fire.enabled": "true",
                                   "table.exec.emit.late-fire.delay": "1 s"}).sql(sql).collect()
    fired = session(tmp_path, options={"table.exec.emit.allow-lateness": "5 s",
                                       "table.exec.emit.late-fire.enabled": "true",
                                       "table.exec.emit.late-fire.delay": "0 s"})
    assert fired.sql(sql).collect().num_rows == 3


def test_current_watermark_of_an_ltz_rowtime_is_an_ltz(tmp_path: Path) -> None:
    """PyFlink 2.3's answers (a probe in Los Angeles): the watermark of a TIMESTAMP_LTZ rowtime
    is a TIMESTAMP_LTZ(3), shown in the session zone; the late-row filter keeps every row
    here. It was a TIMESTAMP(3) of the UTC wall clock: 15:29:59 compared with the rowtime's
    07:29:59 dropped rows 2 and 3, and TIMESTAMPDIFF against the rowtime was refused."""
    (tmp_path / "cw.csv").write_text("1,1704123000000\n2,1704126600000\n3,1704153599999\n")
    s = sqlengine.connect({"table.local-time-zone": "America/Los_Angeles"})
    s.execute(f"CREATE TABLE ev (id INT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK "
              f"FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' "
              f"= '{tmp_path / 'cw.csv'}', 'format' = 'csv', 'scan.watermark.emit.strategy' "
              "= 'on-event')")
    got = s.sql("SELECT id, CAST(CURRENT_WATERMARK(ts) AS STRING) AS wm, TIMESTAMPDIFF(SECOND, "
                "CURRENT_WATERMARK(ts), ts) AS d FROM ev WHERE CURRENT_WATERMARK(ts) IS NULL OR "
                "ts > CURRENT_WATERMARK(ts)").collect().to_pylist()
    assert [tuple(r.values()) for r in got] == [
        (1, None, None), (2, "2024-01-01 07:29:59.000", 3601),
        (3, "2024-01-01 08:29:59.000", 27000)]
