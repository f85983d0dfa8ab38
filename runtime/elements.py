"""Stream elements between operators: record batches, watermarks, end of input; row kinds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

# An updating stream carries its row kind in a last int8 column (Flink's RowKind).
ROWKIND = "$row_kind"
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
ROWKIND_NAMES = ("+I", "-U", "+U", "-D")


@dataclass(frozen=True, slots=True)
class Watermark:
    """No more rows with event time <= ``timestamp`` (ms) will arrive on this channel."""

    timestamp: int


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """The channel is finished (a bounded source ran out)."""


MAX_WATERMARK = Watermark(2**63 - 1)


def has_rowkind(batch: pa.RecordBatch) -> bool:
    return batch.num_columns > 0 and batch.schema.names[-1] == ROWKIND


def with_rowkind(batch: pa.RecordBatch, kinds: np.ndarray | int) -> pa.RecordBatch:
    """``batch`` (data columns only) with a row-kind column appended."""
    if isinstance(kinds, int):
        kinds = np.full(batch.num_rows, kinds, dtype=np.int8)
    arrays = [*batch.columns, pa.array(kinds, pa.int8())]
    return pa.RecordBatch.from_arrays(arrays, names=[*batch.schema.names, ROWKIND])


def data_part(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` without its row-kind column (if any)."""
    if has_rowkind(batch):
        return batch.drop_columns([ROWKIND]) if hasattr(batch, "drop_columns") else \
            pa.RecordBatch.from_arrays(batch.columns[:-1], names=batch.schema.names[:-1])
    return batch


def signs(batch: pa.RecordBatch) -> np.ndarray:
    """+1 for +I/+U rows, -1 for -U/-D rows (all +1 for an insert-only batch)."""
    if not has_rowkind(batch):
        return np.ones(batch.num_rows, dtype=np.int64)
    kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
    return np.where((kinds == UPDATE_BEFORE) | (kinds == DELETE), -1, 1).astype(np.int64)
