"""Test helpers (not tests): drive one operator by hand and read its output as rows."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from runtime.elements import ROWKIND_NAMES, data_part, has_rowkind
from runtime.operators.base import Operator, OperatorContext


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
