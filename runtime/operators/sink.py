"""Sinks: collect (for the API), print (Flink's +I[...] lines), blackhole, filesystem."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlengine.runtime.cast import cast_array
from sqlengine.runtime.elements import ROWKIND_NAMES, data_part, has_rowkind
from sqlengine.runtime.operators.base import Operator


class CollectSink(Operator):
    """Keeps what arrives for the caller (the API drains ``pending`` as the job runs)."""

    name = "Collect"

    def __init__(self) -> None:
        self.pending: list[pa.RecordBatch] = []
        self.rows = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.pending.append(batch)
        self.rows += batch.num_rows
        return ()

    def drain(self) -> list[pa.RecordBatch]:
        out, self.pending = self.pending, []
        return out


class BlackholeSink(Operator):
    name = "Blackhole"

    def __init__(self) -> None:
        self.rows = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.rows += batch.num_rows
        return ()


def format_rows(batch: pa.RecordBatch) -> list[str]:
    """Flink's print format: ``+I[1, abc, NULL]`` per row (vectorised to strings)."""
    data = data_part(batch)
    n = data.num_rows
    cols = []
    for col in data.columns:
        text = cast_array(col, pa.string()) if not pa.types.is_string(col.type) else col
        cols.append(pc.fill_null(text, "NULL"))
    if has_rowkind(batch):
        kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
        prefix = pa.array(np.array(ROWKIND_NAMES, dtype=object)[kinds], pa.string())
    else:
        prefix = pa.array(["+I"] * n, pa.string())
    body = pc.binary_join_element_wise(*cols, ", ") if cols else pa.array([""] * n)
    lines = pc.binary_join_element_wise(prefix, body, "[")
    return [f"{line}]" for line in lines.to_pylist()]


class PrintSink(Operator):
    name = "Print"

    def __init__(self, identifier: str | None = None, stream: TextIO | None = None,
                 use_stderr: bool = False) -> None:
        self.identifier = identifier
        self.stream = stream
        self.use_stderr = use_stderr
        self.rows = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        out = self.stream or (sys.stderr if self.use_stderr else sys.stdout)
        prefix = f"{self.identifier}> " if self.identifier else ""
        out.write("".join(f"{prefix}{line}\n" for line in format_rows(batch)))
        out.flush()
        self.rows += batch.num_rows
        return ()
