"""Options only the native runtime reads are refused on Spark, naming the key and what Spark
has instead, rather than accepted and ignored (no JVM starts: the refusal comes first)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


@pytest.mark.parametrize(("key", "value", "instead"), [
    ("execution.native.task-mode", "thread", "spark.executor.cores"),
    ("taskmanager.network.memory.buffers-per-channel", "4", "spark.reducer.maxSizeInFlight"),
    ("taskmanager.network.memory.floating-buffers-per-gate", "4",
     "spark.reducer.maxSizeInFlight"),
    ("execution.buffer-timeout", "10 ms", "shuffle"),
    ("execution.exchange.batch-rows", "1000", "shuffle"),
    ("io.tmp.dirs", "/tmp", "spark.local.dir"),
])
def test_refused_on_spark(key: str, value: str, instead: str) -> None:
    s = sqlengine.connect({"execution.target": "spark", key: value})
    s.register("r", pa.table({"x": [1, 2, 3]}))
    with pytest.raises(SqlEngineError) as info:
        s.sql("SELECT COUNT(*) FROM r").collect()
    assert repr(key) in info.value.message and instead in info.value.message
    assert "would be ignored" in info.value.message


def test_the_same_options_work_natively() -> None:
    s = sqlengine.connect({"execution.native.task-mode": "thread",
                           "execution.exchange.batch-rows": "1000"})
    s.register("r", pa.table({"x": [1, 2, 3]}))
    assert s.sql("SELECT COUNT(*) FROM r").collect().column(0).to_pylist() == [3]
