"""The runtime's sinks write through the connector's SinkWriter (row kinds as short names)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from sqlengine.connectors.base import SinkWriter
from sqlengine.errors import NotSupportedError
from sqlengine.runtime.elements import ROWKIND
from sqlengine.runtime.operators.sink import ConnectorSink, row_kind_names


class _Recorder(SinkWriter):
    name = "Recorder"

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[list[str], list[str] | None]] = []

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        super().write(batch, kinds)
        self.seen.append((batch.schema.names, None if kinds is None else kinds.to_pylist()))


def test_data_columns_and_row_kinds() -> None:
    recorder = _Recorder()
    sink = ConnectorSink(recorder)
    plain = pa.record_batch([pa.array([1, 2])], names=["a"])
    changes = pa.record_batch([pa.array([1, 2]), pa.array([1, 2], pa.int8())],
                              names=["a", ROWKIND])
    assert row_kind_names(plain) is None
    assert list(sink.process_batch(plain)) == []
    assert list(sink.process_batch(changes)) == []
    assert recorder.seen == [(["a"], None), (["a"], ["-U", "+U"])]
    assert (sink.name, sink.rows) == ("Recorder", 4)


def test_open_by_connector(tmp_path: Path) -> None:
    schema = pa.schema([("a", pa.int64())])
    sink = ConnectorSink.open("t", "filesystem", {"path": str(tmp_path / "o"), "format": "csv",
                                                  "$overwrite": "true"}, schema)
    sink.process_batch(pa.record_batch([pa.array([7], pa.int64())], names=["a"]))
    sink.end_input()
    sink.close()
    assert sink.name == "FileSink"
    assert (tmp_path / "o" / "part-0-0").read_text() == "7\n"
    with pytest.raises(NotSupportedError, match="connector 'datagen' cannot be written"):
        ConnectorSink.open("t", "datagen", {}, schema)
    with pytest.raises(NotSupportedError, match="connector 'nope' cannot be written"):
        ConnectorSink.open("t", "nope", {}, schema)
