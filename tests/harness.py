"""Test helpers (not tests): drive one operator by hand and read its output as rows."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from sqlengine.runtime.elements import ROWKIND_NAMES, data_part, has_rowkind
from sqlengine.runtime.operators.base import Operator, OperatorContext


class OperatorHarness:
    """``OperatorHarness(op).process(batch).end()``; ``rows()`` gives (kind, *values) tuples."""

    def __init__(self, op: Operator) -> None:
        self.op = op
        self.output: list[pa.RecordBatch] = []
        op.open(OperatorContext("test", "op"))

    def _take(self, out: Iterable[pa.RecordBatch]) -> OperatorHarness:
        self.output.extend(out)
        return self

    def process(self, batch: pa.RecordBatch, input_index: int = 0) -> OperatorHarness:
        return self._take(self.op.process_batch(batch, input_index))

    def watermark(self, timestamp: int) -> OperatorHarness:
        from sqlengine.runtime.elements import Watermark

        return self._take(self.op.process_watermark(Watermark(timestamp)))

    def end(self, input_index: int = 0) -> OperatorHarness:
        return self._take(self.op.end_input(input_index))

    def rows(self) -> list[tuple]:
        out = []
        for b in self.output:
            kinds = b.column(b.num_columns - 1).to_pylist() if has_rowkind(b) else \
                [0] * b.num_rows
            for k, row in zip(kinds, data_part(b).to_pylist()):
                out.append((ROWKIND_NAMES[k], *row.values()))
        return out

    def take_rows(self) -> list[tuple]:
        rows = self.rows()
        self.output = []
        return rows


class TestStream:
    """A scripted unbounded source (Apache Beam's TestStream): batches, watermark steps and
    idleness in a fixed order. Register it with ``session.register(name, stream,
    rowtime="ts")``; every row of a batch sees the watermark set before the batch.

        TestStream(schema).add_batch(rows).advance_watermark_to(t).mark_idle()...
            .advance_watermark_to_infinity()
    """

    __test__ = False  # not a pytest test class

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        self.elements: list[object] = []

    def add_batch(self, rows: list[tuple]) -> TestStream:
        cols = list(zip(*rows)) if rows else [[] for _ in self.schema]
        arrays = [pa.array(list(c), f.type) for c, f in zip(cols, self.schema)]
        self.elements.append(pa.RecordBatch.from_arrays(arrays, schema=self.schema))
        return self

    def advance_watermark_to(self, ms: int) -> TestStream:
        from sqlengine.runtime.elements import Watermark

        self.elements.append(Watermark(ms))
        return self

    def mark_idle(self) -> TestStream:
        from sqlengine.runtime.elements import WatermarkStatus

        self.elements.append(WatermarkStatus(True))
        return self

    def advance_watermark_to_infinity(self) -> TestStream:
        from sqlengine.runtime.elements import MAX_WATERMARK

        self.elements.append(MAX_WATERMARK)
        return self

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.elements)
