"""Stream elements between operators: record batches, watermarks, end of input; row kinds."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

# Meta columns ride at the end of a batch, after the data columns, in this order:
#   $wm        int64: the watermark in effect before the row (event-time sources only);
#              lateness is judged against it, so it depends on input order, not batching
#   $row_kind  int8: Flink's RowKind, on updating streams only
WM = "$wm"
ROWKIND = "$row_kind"
MIN_WATERMARK = -(2**63)
INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
ROWKIND_NAMES = ("+I", "-U", "+U", "-D")


@dataclass(frozen=True, slots=True)
class Watermark:
    """No more rows with event time <= ``timestamp`` (ms) will arrive on this channel."""

    timestamp: int


@dataclass(frozen=True, slots=True)
class WatermarkStatus:
    """A channel turned idle (excluded from the minimum) or active again."""

    idle: bool


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


def data_width(batch: pa.RecordBatch) -> int:
    """The number of data columns (the batch minus its trailing meta columns)."""
    names = batch.schema.names
    n = len(names)
    while n and names[n - 1] in (WM, ROWKIND):
        n -= 1
    return n


def data_part(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` without its meta columns (row kind, row watermark)."""
    n = data_width(batch)
    if n == batch.num_columns:
        return batch
    return pa.RecordBatch.from_arrays(batch.columns[:n], names=batch.schema.names[:n])


def meta_columns(batch: pa.RecordBatch) -> list[tuple[str, pa.Array]]:
    """The trailing meta columns, as (name, array) pairs in order."""
    n = data_width(batch)
    return [(batch.schema.names[i], batch.column(i)) for i in range(n, batch.num_columns)]


def row_watermarks(batch: pa.RecordBatch) -> np.ndarray | None:
    """The per-row ``$wm`` column as int64 milliseconds, or None when the batch has none."""
    names = batch.schema.names
    if WM not in names:
        return None
    return batch.column(names.index(WM)).to_numpy(zero_copy_only=False)


def with_meta(data: pa.RecordBatch, wm: np.ndarray | None = None,
              rowkind: pa.Array | np.ndarray | None = None) -> pa.RecordBatch:
    """``data`` (data columns only) with the given meta columns appended in canonical order."""
    arrays = list(data.columns)
    names = list(data.schema.names)
    if wm is not None:
        arrays.append(pa.array(wm, pa.int64()))
        names.append(WM)
    if rowkind is not None:
        arrays.append(pa.array(rowkind, pa.int8()))
        names.append(ROWKIND)
    return pa.RecordBatch.from_arrays(arrays, names=names)


def signs(batch: pa.RecordBatch) -> np.ndarray:
    """+1 for +I/+U rows, -1 for -U/-D rows (all +1 for an insert-only batch)."""
    if not has_rowkind(batch):
        return np.ones(batch.num_rows, dtype=np.int64)
    kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
    return np.where((kinds == UPDATE_BEFORE) | (kinds == DELETE), -1, 1).astype(np.int64)


def millis(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """Event times (TIMESTAMP or DATE) as int64 milliseconds."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    per_ms = {"us": 1000, "ns": 1_000_000}.get(getattr(arr.type, "unit", ""))
    if per_ms:  # (a TIMESTAMP(4..9): its millisecond, floored, as Flink's TimestampData)
        return arr.cast(pa.int64()).to_numpy(zero_copy_only=False) // per_ms
    return arr.cast(pa.timestamp("ms")).cast(pa.int64()).to_numpy(zero_copy_only=False)


def rows_only(num_rows: int) -> pa.RecordBatch:
    """A batch of rows without columns (a SELECT without FROM): Arrow loses the row count of
    a table without columns in take and concatenation, so one placeholder column keeps it."""
    return pa.record_batch([pa.nulls(num_rows, pa.int8())], names=[ROWS_ONLY])


ROWS_ONLY = "$rows"


def conformed(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` with ``schema``'s fields when they differ only in what the planner declared
    (a column's NOT NULL, say, which one operator marks and a later projection drops); a
    batch of a relation without columns keeps its placeholder (``rows_only``)."""
    if batch.schema == schema:
        return batch
    if not schema.names:
        return rows_only(batch.num_rows)
    return pa.RecordBatch.from_arrays(batch.columns, schema=schema)
