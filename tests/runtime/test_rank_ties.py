"""Ranking and deduplication ties against Flink 2.3.

Every expected answer below was produced by PyFlink 2.3.0 (apache-flink==2.3.0) in streaming
mode (batch mode where marked) on the same rows, at parallelism 1, from a csv filesystem
source with `WATERMARK FOR ts AS ts - INTERVAL '1' SECOND` and
`'scan.watermark.emit.strategy' = 'on-event'` (a watermark after every row, as ours), and
hand-checked against Flink's deduplicate functions:

- keep the last row (ROW_NUMBER = 1, ORDER BY a rowtime DESC): of equal times the later row
  wins; late rows are not dropped (RowTimeDeduplicateFunction keeps the current row when
  previous time <= current time). Per window (window deduplication) the same.
- keep the first row by rowtime (ORDER BY ts ASC): insert-only; a key's earliest row (of equal
  times the first) is emitted when the watermark reaches it and the key ignores later rows;
  rows below the watermark are dropped (RowTimeDeduplicateKeepFirstRowFunction).
- by proctime: keep-last is the last row to arrive, keep-first the first.
- Top-N (N > 1, or ORDER BY a non-time column, or several keys) and batch mode: rows with
  equal keys rank in arrival order, the earlier first.
- RANK() and DENSE_RANK(): Flink 2.3 refuses them in streaming mode ("RANK() on streaming table
  is not supported currently").

Our results must not depend on batching, so each case runs with the rows in one batch, one
row per batch and three rows per batch.
"""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

# (k, v, c, seconds) in arrival order.
D1 = [("a", 1, "x", 1), ("a", 2, "y", 1), ("b", 3, "x", 5), ("b", 4, "y", 3), ("b", 5, "z", 5),
      ("a", 6, "z", 0), ("c", 7, "x", 9), ("c", 8, "x", 9), ("c", 9, "y", 9)]
D2 = [("a", 1, "", 5), ("b", 2, "", 4), ("b", 3, "", 4), ("a", 4, "", 3), ("c", 5, "", 9),
      ("b", 6, "", 1), ("a", 7, "", 6), ("c", 8, "", 9), ("c", 9, "", 8.5), ("a", 10, "", 2)]
D3 = [("a", 1, "", 5), ("a", 2, "", 5), ("b", 3, "", 4), ("a", 4, "", 3), ("b", 5, "", 4),
      ("a", 6, "", 7), ("a", 7, "", 7), ("b", 8, "", 2), ("a", 9, "", 12), ("a", 10, "", 12)]

BATCHINGS = (None, 1, 3)


def _batches(rows: list[tuple], size: int | None) -> list[pa.RecordBatch]:
    table = pa.table({
        "k": [r[0] for r in rows], "v": pa.array([r[1] for r in rows], pa.int32()),
        "c": [r[2] for r in rows],
        "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=r[3]) for r in rows],
                       pa.timestamp("ms"))})
    return table.to_batches(max_chunksize=size or len(rows))


def _session(rows: list[tuple], size: int | None, mode: str = "streaming"
             ) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode, "pipeline.auto-watermark-interval": "0"})
    s.register("t", iter(_batches(rows, size)), rowtime="ts",
               watermark="ts - INTERVAL '1' SECOND")
    return s


def _final(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def _dedup(order: str, cmp: str = "= 1", cols: str = "k, v", part: str = "k") -> str:
    return (f"SELECT {cols} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {part} "
            f"ORDER BY {order}) AS rn FROM t) WHERE rn {cmp}")


STREAMING = [
    # keep the last row by rowtime: ties go to the later row
    (D1, _dedup("ts DESC"), [("a", 2), ("b", 5), ("c", 9)]),
    (D1, _dedup("ts DESC", cols="k, v, rn"), [("a", 2, 1), ("b", 5, 1), ("c", 9, 1)]),
    (D2, _dedup("ts DESC"), [("a", 7), ("b", 3), ("c", 8)]),  # a7 is late, still kept
    (D3, _dedup("ts DESC"), [("a", 10), ("b", 5)]),
    (D2, "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY ts DESC) AS rn FROM t) "
         "WHERE rn = 1", [("c", 8)]),
    # keep the first row by rowtime: late rows dropped, a key emitted once
    (D1, _dedup("ts ASC"), [("a", 1), ("b", 3), ("c", 7)]),
    (D2, _dedup("ts ASC"), [("a", 1), ("b", 2), ("c", 9)]),
    (D2, _dedup("ts ASC", "<= 1", "k, v, rn"), [("a", 1, 1), ("b", 2, 1), ("c", 9, 1)]),
    (D2, _dedup("ts ASC", "< 2"), [("a", 1), ("b", 2), ("c", 9)]),
    (D3, _dedup("ts ASC"), [("a", 1), ("b", 3)]),
    (D2, "SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY ts ASC) AS rn FROM t) "
         "WHERE rn = 1", [("b", 2)]),
    # Top-N: equal keys in arrival order, no late rows dropped
    (D1, _dedup("ts DESC", "<= 2"), [("a", 1), ("a", 2), ("b", 3), ("b", 5), ("c", 7),
                                     ("c", 8)]),
    (D1, _dedup("ts ASC", "<= 2"), [("a", 1), ("a", 6), ("b", 3), ("b", 4), ("c", 7),
                                    ("c", 8)]),
    (D2, _dedup("ts ASC", "<= 2"), [("a", 4), ("a", 10), ("b", 2), ("b", 6), ("c", 5),
                                    ("c", 9)]),
    (D3, _dedup("ts DESC", "<= 2", "k, v, rn"), [("a", 9, 1), ("a", 10, 2), ("b", 3, 1),
                                                 ("b", 5, 2)]),
    (D2, _dedup("ts ASC, v DESC"), [("a", 10), ("b", 6), ("c", 9)]),  # two keys: a Top-1
    (D1, _dedup("k DESC", part="c", cols="c, v"), [("x", 7), ("y", 9), ("z", 5)]),
    (D1, _dedup("k DESC", "<= 2", part="c", cols="c, v"),
     [("x", 7), ("x", 8), ("y", 4), ("y", 9), ("z", 5), ("z", 6)]),
    (D1, _dedup("k ASC", "<= 2", part="c", cols="c, v, rn"),
     [("x", 1, 1), ("x", 3, 2), ("y", 2, 1), ("y", 4, 2), ("z", 5, 2), ("z", 6, 1)]),
]


@pytest.mark.parametrize("size", BATCHINGS)
@pytest.mark.parametrize(("rows", "sql", "expected"), STREAMING)
def test_streaming_ties_as_flink(rows: list[tuple], sql: str, expected: list[tuple],
                                 size: int | None) -> None:
    assert _final(_session(rows, size), sql) == expected


TVF = "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' SECOND))"


def _window(order: str, cmp: str = "= 1", cols: str = "window_start, k, v",
            part: str = "window_start, window_end, k") -> str:
    return (f"SELECT {cols} FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY {part} "
            f"ORDER BY {order}) AS rn FROM {TVF}) WHERE rn {cmp}")


W0, W10 = dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 10)
WINDOWED = [
    (_window("ts DESC"), [(W0, "a", 7), (W0, "b", 5), (W10, "a", 10)]),
    (_window("ts ASC"), [(W0, "a", 4), (W0, "b", 8), (W10, "a", 9)]),
    (_window("ts DESC", "<= 2"), [(W0, "a", 6), (W0, "a", 7), (W0, "b", 3), (W0, "b", 5),
                                  (W10, "a", 9), (W10, "a", 10)]),
    (_window("k DESC", "<= 3", "window_start, k, v, rn", "window_start, window_end"),
     [(W0, "b", 3, 1), (W0, "b", 5, 2), (W0, "b", 8, 3), (W10, "a", 9, 1),
      (W10, "a", 10, 2)]),
    (_window("k DESC", part="window_start, window_end"), [(W0, "b", 3), (W10, "a", 9)]),
]


@pytest.mark.parametrize("size", BATCHINGS)
@pytest.mark.parametrize(("sql", "expected"), WINDOWED)
def test_window_ties_as_flink(sql: str, expected: list[tuple], size: int | None) -> None:
    assert _final(_session(D3, size), sql) == expected


BATCH = [
    # Flink's batch mode: a sort, equal keys in arrival order, no watermarks
    (D2, _dedup("ts DESC"), [("a", 7), ("b", 2), ("c", 5)]),
    (D2, _dedup("ts ASC"), [("a", 10), ("b", 6), ("c", 9)]),
    (D2, _dedup("ts ASC", "<= 2"), [("a", 4), ("a", 10), ("b", 2), ("b", 6), ("c", 5),
                                    ("c", 9)]),
    (D3, _window("ts DESC"), [(W0, "a", 6), (W0, "b", 3), (W10, "a", 9)]),
]


@pytest.mark.parametrize(("rows", "sql", "expected"), BATCH)
def test_batch_ties_as_flink(rows: list[tuple], sql: str, expected: list[tuple]) -> None:
    assert _final(_session(rows, None, "batch"), sql) == expected


@pytest.mark.parametrize("size", BATCHINGS)
def test_proctime_deduplication_goes_by_arrival(size: int | None) -> None:
    s = _session(D1, size)
    sub = "(SELECT k, v, PROCTIME() AS pt FROM t)"
    last = (f"SELECT k, v FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt DESC)"
            f" AS rn FROM {sub}) WHERE rn = 1")
    first = last.replace("pt DESC", "pt ASC")
    assert _final(s, last) == [("a", 6), ("b", 5), ("c", 9)]
    assert _final(_session(D1, size), first) == [("a", 1), ("b", 3), ("c", 7)]


def test_keep_last_changelog_is_updates() -> None:
    q = _session(D1, 1).sql(_dedup("ts DESC"))
    kinds = [(r["op"], r["k"], r["v"]) for b in q.stream() for r in b.to_pylist()]
    # PyFlink 2.3: +I a1, -U a1, +U a2, +I b3, -U b3, +U b5, +I c7, -U c7, +U c8, -U c8, +U c9
    assert kinds == [("+I", "a", 1), ("-U", "a", 1), ("+U", "a", 2), ("+I", "b", 3),
                     ("-U", "b", 3), ("+U", "b", 5), ("+I", "c", 7), ("-U", "c", 7),
                     ("+U", "c", 8), ("-U", "c", 8), ("+U", "c", 9)]


def test_keep_first_by_rowtime_is_insert_only_and_counts_late_rows() -> None:
    q = _session(D2, 1).sql(_dedup("ts ASC"))
    rows = [(r["op"], r["k"], r["v"]) for b in q.stream() for r in b.to_pylist()]
    # PyFlink 2.3 emitted +I b2, +I a1, +I c9 in this order (by the rows' times)
    assert rows == [("+I", "b", 2), ("+I", "a", 1), ("+I", "c", 9)]
    # late (time below the watermark before it): a4 (3 < 4), b6 (1 < 8), a7 (6 < 8),
    # a10 (2 < 8)
    assert q.late_records_dropped == 4
    plan = _session(D2, None).sql(_dedup("ts ASC")).explain()
    assert "Deduplicate(keep=[FirstRow], key=[k], order=[ROWTIME])" in plan


def test_keep_first_feeds_a_window_aggregate() -> None:
    # Insert-only output keeping its rowtime: a window aggregate can consume it.
    s = _session(D2, 2)
    s.execute(f"CREATE VIEW firsts AS {_dedup('ts ASC', cols='k, v, ts')}")
    sql = ("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE firsts, "
           "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end")
    # PyFlink 2.3: [0, 5) holds b2, [5, 10) a1 and c9
    assert _final(s, sql) == [(dt.datetime(2024, 1, 1), 1),
                              (dt.datetime(2024, 1, 1, 0, 0, 5), 2)]


@pytest.mark.parametrize("fn", ["RANK", "DENSE_RANK"])
def test_rank_and_dense_rank_in_streaming_mode(fn: str) -> None:
    # Flink 2.3 refuses RANK() / DENSE_RANK() on a streaming table. Over an unbounded source
    # so do we; over a bounded one they are computed at its end, as in batch mode.
    sql = (f"SELECT k, v FROM (SELECT *, {fn}() OVER (PARTITION BY k ORDER BY v) AS r "
           "FROM t) WHERE r <= 2")
    assert _final(_session(D1, None), sql) == _final(_session(D1, None, "batch"), sql)
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "pipeline.auto-watermark-interval": "0"})
    s.execute("CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'datagen')")
    with pytest.raises(SqlEngineError, match="bounded"):
        s.sql(sql).collect()
