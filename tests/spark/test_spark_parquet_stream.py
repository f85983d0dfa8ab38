"""A parquet file source on Structured Streaming: streamed by Spark as it is (linked, not read
by us and written again) when no row of it can be behind its watermark and its columns are
the table's; otherwise read as the native runtime reads it, each row with its watermark.
Both give the native runtime's rows and late-row count."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from tests.nexmark import rows

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}
SQL = ("SELECT k, window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE("
       "TABLE t, DESCRIPTOR(ts), INTERVAL '2' SECOND)) WHERE v <> 3 GROUP BY k, window_start, "
       "window_end")


def _file(tmp_path: Path, disorder_ms: int, v_type: pa.DataType) -> Path:
    rng = random.Random(5)
    base = dt.datetime(2024, 1, 1)
    ts = [base + dt.timedelta(milliseconds=i * 50 + rng.randint(0, disorder_ms))
          for i in range(1000)]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"k": pa.array([rng.randint(0, 4) for _ in ts], pa.int64()),
                             "v": pa.array([rng.randint(0, 9) for _ in ts], v_type),
                             "ts": pa.array(ts, pa.timestamp("ms"))}), path)
    return path


def _run(path: Path, options: dict[str, str]) -> tuple[list[tuple], int]:
    s = sqlengine.connect(options)
    s.execute(f"CREATE TABLE t (k BIGINT, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
              f"ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = 'parquet')")
    q = s.sql(SQL)
    return rows([tuple(r.values()) for r in q.collect().to_pylist()]), q.late_records_dropped


@pytest.mark.parametrize(("disorder_ms", "v_type", "streamed_as_it_is"), [
    (0, pa.int64(), True),
    # (disorder within the bound: no row behind the watermark)
    (900, pa.int64(), True),
    # (rows behind the watermark: each judged as the native source judges it)
    (3000, pa.int64(), False),
    # (a column of another type than the table's: read and converted by ours)
    (0, pa.int32(), False),
], ids=["in-order", "within-bound", "late-rows", "other-type"])
def test_a_parquet_source_gives_natives_rows(tmp_path: Path, disorder_ms: int,
                                             v_type: pa.DataType, streamed_as_it_is: bool,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlengine.runtime.spark import streaming

    taken: list[str | None] = []
    plain = streaming._plain_parquet

    def recorded(*args: object) -> str | None:
        taken.append(plain(*args))  # type: ignore[arg-type]
        return taken[-1]

    monkeypatch.setattr(streaming, "_plain_parquet", recorded)
    path = _file(tmp_path, disorder_ms, v_type)
    got, late = _run(path, STREAMING)
    want, want_late = _run(path, {})
    assert got == want and len(want) > 50
    assert late == want_late and (want_late > 0) == (disorder_ms > 1000)
    assert taken == [str(path) if streamed_as_it_is else None]
