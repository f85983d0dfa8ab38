"""The parquet format: read by row group (the unit parallel subtasks share), columns cast to
the table's types."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from sqlengine.cast import cast_array
from sqlengine.connectors.text_rows import BATCH_ROWS
from sqlengine.errors import ConnectorError, ExecutionError


def _parquet_file(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as e:
        msg = f"{path}: not a readable parquet file: {e}"
        raise ConnectorError(msg) from None


def row_groups(path: Path) -> int:
    return max(1, _parquet_file(path).metadata.num_row_groups)


def read_parquet(path: Path, schema: pa.Schema, columns: list[int] | None,
                  row_group: int | None = None) -> Iterator[pa.RecordBatch]:
    pf = _parquet_file(path)
    present = set(pf.schema_arrow.names)
    wanted = [schema.field(i).name for i in (columns if columns is not None
                                              else range(len(schema)))]
    missing = [n for n in wanted if n not in present]
    if missing:
        msg = f"{path}: parquet file has no column {missing[0]!r}"
        raise ConnectorError(msg)
    groups = None if row_group is None or pf.metadata.num_row_groups == 0 else [row_group]
    for batch in pf.iter_batches(batch_size=BATCH_ROWS, columns=wanted, row_groups=groups,
                                 use_threads=False):
        arrays = []
        for f in schema:
            if f.name in wanted:
                col = batch.column(f.name)
                try:
                    arrays.append(col if col.type == f.type else cast_array(col, f.type))
                except ExecutionError as e:
                    msg = f"{path}: column {f.name!r}: {e.message}"
                    raise ConnectorError(msg) from None
            else:
                arrays.append(pa.nulls(batch.num_rows, f.type))
        yield pa.RecordBatch.from_arrays(arrays, schema=schema)
