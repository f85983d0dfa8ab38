"""A filesystem source with a WATERMARK reads its rowtime column (and the columns the
watermark expression reads) even when the query selects none of them: projection pushdown
must not drop what the watermark needs (parquet reads only the projected columns)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import ExecutionError

FORMATS = ("parquet", "json", "csv")

# Rows in arrival order: ts 1, 2, 12, then 3 (late: the watermark is 12 - 1 = 11 by then,
# so its 5-second window [0, 5) has fired), then 13. wts is a second time column that a
# watermark expression may read instead.
ROWS = [("a", 1, 1, 1), ("b", 2, 2, 2), ("a", 3, 12, 12), ("b", 4, 3, 3), ("a", 5, 13, 13)]


def _ts(second: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, 0, 0, second)


def _write(tmp_path: Path, fmt: str) -> Path:
    table = pa.table({
        "k": [r[0] for r in ROWS], "v": pa.array([r[1] for r in ROWS], pa.int32()),
        "ts": pa.array([_ts(r[2]) for r in ROWS], pa.timestamp("ms")),
        "wts": pa.array([_ts(r[3]) for r in ROWS], pa.timestamp("ms"))})
    path = tmp_path / f"t.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=2)  # several row groups
    elif fmt == "json":
        path.write_text("".join(json.dumps({"k": r["k"], "v": r["v"], "ts": str(r["ts"]),
                                            "wts": str(r["wts"])}) + "\n"
                                for r in table.to_pylist()))
    else:
        path.write_text("".join(f"{r['k']},{r['v']},{r['ts']},{r['wts']}\n"
                                for r in table.to_pylist()))
    return path


def _session(tmp_path: Path, fmt: str, watermark: str = "ts - INTERVAL '1' SECOND",
             parallelism: int = 1) -> sqlengine.Session:
    path = _write(tmp_path, fmt)
    s = sqlengine.connect({"parallelism.default": str(parallelism),
                           "pipeline.auto-watermark-interval": "0",
                           "execution.native.task-mode": "thread"})
    s.execute(f"""CREATE TABLE t (k STRING, v INT, ts TIMESTAMP(3), wts TIMESTAMP(3),
        WATERMARK FOR ts AS {watermark})
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}')""")
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple[object, ...]]:
    table = s.sql(sql).collect()
    return sorted(tuple(r.values()) for r in table.to_pylist())


@pytest.mark.parametrize("fmt", FORMATS)
def test_query_without_the_rowtime_column(tmp_path: Path, fmt: str) -> None:
    s = _session(tmp_path, fmt)
    assert _rows(s, "SELECT k, v FROM t") == [("a", 1), ("a", 3), ("a", 5), ("b", 2), ("b", 4)]
    assert _rows(s, "SELECT v FROM t WHERE k = 'b'") == [(2,), (4,)]
    assert _rows(s, "SELECT k, SUM(v) FROM t GROUP BY k") == [("a", 9), ("b", 6)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_query_with_the_rowtime_column(tmp_path: Path, fmt: str) -> None:
    s = _session(tmp_path, fmt)
    assert _rows(s, "SELECT v, ts FROM t WHERE v > 3") == [(4, _ts(3)), (5, _ts(13))]


@pytest.mark.parametrize("fmt", FORMATS)
def test_window_drops_the_late_row_with_or_without_selecting_time(tmp_path: Path,
                                                                  fmt: str) -> None:
    s = _session(tmp_path, fmt)
    tvf = "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    # The row with ts 3 arrives after the watermark passed 11: late, dropped.
    assert _rows(s, f"SELECT COUNT(*), SUM(v) FROM {tvf} GROUP BY window_start, window_end"
                 ) == [(2, 3), (2, 8)]
    assert _rows(s, f"SELECT window_start, COUNT(*) FROM {tvf} "
                 "GROUP BY window_start, window_end") == [(_ts(0), 2), (_ts(10), 2)]


@pytest.mark.parametrize("fmt", FORMATS)
def test_watermark_expression_reading_another_column(tmp_path: Path, fmt: str) -> None:
    # The watermark comes from wts, which the query never names.
    s = _session(tmp_path, fmt, watermark="wts - INTERVAL '1' SECOND")
    assert _rows(s, "SELECT k, v FROM t WHERE v < 3") == [("a", 1), ("b", 2)]
    tvf = "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
    assert _rows(s, f"SELECT COUNT(*) FROM {tvf} GROUP BY window_start, window_end"
                 ) == [(2,), (2,)]


def test_parquet_at_parallelism_two(tmp_path: Path) -> None:
    s = _session(tmp_path, "parquet", parallelism=2)
    assert _rows(s, "SELECT k, v FROM t") == [("a", 1), ("a", 3), ("a", 5), ("b", 2), ("b", 4)]


def test_a_null_rowtime_still_fails(tmp_path: Path) -> None:
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"v": pa.array([1, 2], pa.int32()),
                             "ts": pa.array([_ts(1), None], pa.timestamp("ms"))}), path)
    s = sqlengine.connect()
    s.execute(f"""CREATE TABLE n (v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts)
        WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')""")
    with pytest.raises(ExecutionError, match="rowtime column 'ts' is NULL in 1 row"):
        s.sql("SELECT v FROM n").collect()


def test_batch_mode_reads_only_the_projection(tmp_path: Path) -> None:
    # Without event time (batch mode) the rowtime column is not needed.
    s = _session(tmp_path, "parquet")
    s.execute("SET 'execution.runtime-mode' = 'batch'")
    assert _rows(s, "SELECT v FROM t WHERE k = 'a'") == [(1,), (3,), (5,)]
