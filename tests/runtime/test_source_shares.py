"""A source runs at no more subtasks than its input has shares (connectors' source_shares): a
subtask without one held the watermark of the tasks it feeds at MIN until its end reached
them, so which rows were late, and MATCH_RECOGNIZE's WITHIN time-outs, depended on timing
(tests/runtime/test_match_recognize.py's parallel case failed now and then)."""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine

_COLUMNS = "k STRING, v INT, ts TIMESTAMP(3)"
_WATERMARK = ", WATERMARK FOR ts AS ts - INTERVAL '1' SECOND"
_QUERY = "SELECT k, COUNT(*) AS n FROM t GROUP BY k"


def _csv(path: Path, rows: int = 20) -> None:
    path.write_text("".join(f"k{i % 3},{i},2024-01-01 00:00:{i % 60:02d}\n"
                            for i in range(rows)))


def _parallelism(tmp_path: Path, path: Path, fmt: str, *, watermark: bool,
                 parallelism: int = 2, mode: str = "streaming") -> dict[str, int]:
    s = sqlengine.connect({"parallelism.default": str(parallelism),
                           "execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE t ({_COLUMNS}{_WATERMARK if watermark else ''}) WITH "
              f"('connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}')")
    text = s.sql(_QUERY).explain()
    graph = text.split("== Job Graph ==")[1]
    found = re.findall(r"\[parallelism=(\d+)[^\]]*\]: (\w+)", graph)
    return {name: int(p) for p, name in found}


def test_one_ordered_file_is_read_by_one_subtask(tmp_path: Path) -> None:
    _csv(tmp_path / "t.csv")
    got = _parallelism(tmp_path, tmp_path / "t.csv", "csv", watermark=True)
    assert got["Source"] == 1
    assert max(got.values()) == 2  # (the aggregation behind the hash exchange keeps 2)


def test_a_directory_gives_a_subtask_per_file_up_to_the_parallelism(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    for i in range(3):
        _csv(d / f"part-{i}.csv")
    assert _parallelism(tmp_path, d, "csv", watermark=True, parallelism=4)["Source"] == 3
    assert _parallelism(tmp_path, d, "csv", watermark=True, parallelism=2)["Source"] == 2


@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_unordered_text_is_split_in_byte_ranges(tmp_path: Path, mode: str) -> None:
    _csv(tmp_path / "t.csv")
    # (no WATERMARK, or batch mode: the file's byte ranges go to both subtasks)
    assert _parallelism(tmp_path, tmp_path / "t.csv", "csv", watermark=False,
                        mode=mode)["Source"] == 2
    assert _parallelism(tmp_path, tmp_path / "t.csv", "csv", watermark=True,
                        mode="batch")["Source"] == 2


def test_parquet_counts_row_groups(tmp_path: Path) -> None:
    table = pa.table({"k": [f"k{i % 3}" for i in range(40)], "v": pa.array(range(40),
                                                                             pa.int32()),
                      "ts": pa.array([i * 1000 for i in range(40)], pa.timestamp("ms"))})
    pq.write_table(table, tmp_path / "one.parquet")
    pq.write_table(table, tmp_path / "four.parquet", row_group_size=10)
    assert _parallelism(tmp_path, tmp_path / "one.parquet", "parquet",
                        watermark=True)["Source"] == 1
    assert _parallelism(tmp_path, tmp_path / "four.parquet", "parquet", watermark=True,
                        parallelism=3)["Source"] == 3


def test_rows_are_those_of_one_subtask(tmp_path: Path) -> None:
    # A late row (behind the watermark of the rows before it) is dropped at parallelism 2
    # as at 1, whatever the timing.
    path = tmp_path / "t.csv"
    path.write_text("a,1,2024-01-01 00:00:10\na,2,2024-01-01 00:00:20\n"
                    "a,3,2024-01-01 00:00:05\na,4,2024-01-01 00:00:30\n")
    q = ("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
         "INTERVAL '10' SECOND)) GROUP BY window_start, window_end")
    got = []
    for par in ("1", "2"):
        s = sqlengine.connect({"parallelism.default": par,
                               "pipeline.auto-watermark-interval": "0"})
        s.execute(f"CREATE TABLE t ({_COLUMNS}{_WATERMARK}) WITH ('connector' = "
                  f"'filesystem', 'path' = '{path}', 'format' = 'csv')")
        got.append(sorted(r["n"] for r in s.sql(q).collect().to_pylist()))
    assert got[0] == got[1] == [1, 1, 1]
