"""Each connector's hooks: statistics for the optimizer, the source reader (split over
subtasks), the sink writer and the Spark reader."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from sqlengine import connectors
from sqlengine.connectors import ReadStats, SourceRead
from sqlengine.connectors.memory import MemoryData
from sqlengine.connectors.print import PrintWriter, format_rows
from sqlengine.errors import ConnectorError
from sqlengine.plan.nodes import Field, Schema, SourceSpec
from sqlengine.statistics import UNKNOWN_ROWS, schema_width, table_stats, type_width
from sqlengine.types import BIGINT, STRING

SCHEMA = Schema((Field("a", BIGINT), Field("s", STRING)))
ARROW = SCHEMA.to_arrow()


def _source(connector: str, **options: str) -> SourceSpec:
    return SourceSpec("t", connector, tuple(options.items()), True)


def _read(connector: str, split: tuple[int, int] = (0, 1), data: object = None,
          **options: str) -> list[pa.RecordBatch]:
    read = SourceRead("t", options, ARROW, ReadStats(), split, None, data)
    return [b for b in connectors.get(connector).open_source(read)
            if isinstance(b, pa.RecordBatch)]


def test_statistics_module() -> None:
    assert type_width(pa.int64()) == 8.0
    assert type_width(pa.string()) == 20.0
    assert schema_width(SCHEMA) == 28.0
    est = table_stats(pa.table({"a": [1, 2, 2, None]}))
    assert est.rows == 4.0
    assert est.columns[0].ndv == 2.0
    assert (est.columns[0].min, est.columns[0].max) == (1, 2)
    assert est.columns[0].null_fraction == 0.25


def test_datagen_statistics_and_reader() -> None:
    opts = {"number-of-rows": "10", "fields.a.min": "1", "fields.a.max": "4",
            "fields.s.length": "5", "rows-per-second": "0"}
    est = connectors.get("datagen").statistics(_source("datagen", **opts), SCHEMA, None)
    assert est is not None
    assert (est.rows, est.width, est.columns[0].ndv) == (10.0, 13.0, 4.0)
    rows = sum(b.num_rows for b in _read("datagen", **opts))
    halves = [sum(b.num_rows for b in _read("datagen", (i, 2), **opts)) for i in range(2)]
    assert rows == 10
    assert sum(halves) == 10


def test_nexmark_statistics() -> None:
    nexmark = connectors.get("nexmark")
    est = nexmark.statistics(_source("nexmark", **{"nexmark.table": "person",
                                                    "nexmark.events": "500"}), SCHEMA, None)
    assert est is not None and est.rows == pytest.approx(10.0)
    est = nexmark.statistics(_source("nexmark", **{"nexmark.table": "bid"}), SCHEMA, None)
    assert est is not None and est.rows == UNKNOWN_ROWS


def test_memory_statistics_and_splits() -> None:
    table = pa.table({"a": pa.array(range(10), pa.int64()),
                      "s": pa.array([str(i) for i in range(10)])})
    data = MemoryData(table=table)
    memory = connectors.get("memory")
    est = memory.statistics(_source("memory"), SCHEMA, data)
    assert est is not None and est.rows == 10.0
    assert memory.statistics(_source("memory"), SCHEMA, None) is None
    assert sum(b.num_rows for b in _read("memory", data=data)) == 10
    with pytest.raises(ConnectorError, match="has no registered data"):
        _read("memory", data=None)


def test_filesystem_statistics_reader_and_writer(tmp_path: Path) -> None:
    fs = connectors.get("filesystem")
    target = tmp_path / "out"
    writer = fs.open_sink("t", {"path": str(target), "format": "parquet"}, ARROW, False)
    writer.write(pa.record_batch([pa.array([1, 2, 3], pa.int32()), pa.array(["x", "y", "z"])],
                                 names=["a", "s"]))  # cast to the sink's schema
    writer.end_input()
    writer.close()
    assert writer.rows == 3
    opts = {"path": str(target), "format": "parquet"}
    est = fs.statistics(_source("filesystem", **opts), SCHEMA, None)
    assert est is not None and est.rows == 3.0
    assert fs.statistics(_source("filesystem", path=str(tmp_path / "nope")), SCHEMA, None) is None
    assert pa.Table.from_batches(_read("filesystem", **opts)).column("a").to_pylist() == [1, 2, 3]
    assert _read("filesystem", (1, 2), **opts) == []  # one row group: subtask 0 reads it
    fs.check_sink(opts)
    (tmp_path / "file").write_text("")
    with pytest.raises(ConnectorError, match="is a file, not a directory"):
        fs.check_sink({"path": str(tmp_path / "file" / "x")})
    assert pq.read_table(target).num_rows == 3


class _FakeReader:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def schema(self, ddl: str) -> _FakeReader:
        self.calls.append(("schema", ddl))
        return self

    def parquet(self, path: str) -> str:
        self.calls.append(("parquet", path))
        return "frame"


class _FakeSpark:
    def __init__(self) -> None:
        self.read = _FakeReader()


def test_spark_reader_hook() -> None:
    spark: Any = _FakeSpark()
    fs = connectors.get("filesystem")
    assert fs.spark_read(spark, _source("filesystem", path="p", format="parquet"),
                         "a BIGINT") == "frame"
    # (a relative path made absolute here, not resolved against the JVM's directory)
    assert spark.read.calls == [("schema", "a BIGINT"), ("parquet", os.path.abspath("p"))]
    assert fs.spark_read(spark, _source("filesystem", path="p", format="csv"), "") is None
    assert connectors.get("datagen").spark_read(spark, _source("datagen"), "") is None


def test_print_and_blackhole_writers() -> None:
    batch = pa.record_batch([pa.array([1, None]), pa.array(["x", "y"])], names=["a", "s"])
    assert format_rows(batch) == ["+I[1, x]", "+I[null, y]"]
    assert format_rows(batch, pa.array(["-U", "+U"])) == ["-U[1, x]", "+U[null, y]"]
    out = io.StringIO()
    writer = PrintWriter("id", stream=out)
    writer.write(batch)
    assert out.getvalue() == "id> +I[1, x]\nid> +I[null, y]\n"
    assert writer.rows == 2
    assert connectors.get("print").open_sink("t", {}, ARROW, False).name == "Print"
    hole = connectors.get("blackhole").open_sink("t", {}, ARROW, False)
    hole.write(batch)
    hole.close()
    assert (hole.name, hole.rows) == ("Blackhole", 2)
