"""'table.exec.sink.not-null-enforcer' on Spark: a filesystem table written by Spark's own
writer (batch) or by micro-batches (streaming) took NULLs into its NOT NULL columns without a
word; it now fails naming the column (ERROR) or drops the rows (DROP), as the native
runtime and Flink do."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

SPARK = {"execution.target": "spark"}
ROWS = ("SELECT * FROM (VALUES (1, 'a'), (CAST(NULL AS INT), 'b'), (3, CAST(NULL AS STRING)), "
        "(4, 'd')) AS t(a, b)")


def test_batch(tmp_path: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch", **SPARK})
    s.execute(f"CREATE TABLE k (a INT NOT NULL, b STRING NOT NULL) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'k'}', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match="column 'a' of table 'k' is NOT NULL"):
        s.execute(f"INSERT INTO k {ROWS}")
    s.execute("SET 'table.exec.sink.not-null-enforcer' = 'DROP'")
    s.execute(f"INSERT INTO k {ROWS}")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM k").collect().to_pylist()) \
        == [(1, "a"), (4, "d")]


def test_streaming_drops_the_rows(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **SPARK,
                           "execution.checkpoint-location": str(tmp_path / "chk"),
                           "table.exec.sink.not-null-enforcer": "DROP"})
    s.execute("CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '200', 'fields.v.null-rate' = '0.5')")
    s.execute(f"CREATE TABLE sink (id BIGINT, v INT NOT NULL) WITH ('connector' = "
              f"'filesystem', 'path' = '{out}', 'format' = 'parquet')")
    job = s.start("INSERT INTO sink SELECT id, v FROM g")
    deadline = time.monotonic() + 300

    def written() -> int:
        files = [f for f in out.iterdir() if not f.name.startswith(".")]
        return ds.dataset(files, format="parquet").count_rows() if files else 0

    while written() < 50 and time.monotonic() < deadline and not job.done:
        time.sleep(0.5)
    job.cancel()
    assert job.error is None
    files = [str(f) for f in out.iterdir() if not f.name.startswith(".")]
    values = ds.dataset(files, format="parquet").to_table().column("v")
    assert len(values) >= 50 and values.null_count == 0
