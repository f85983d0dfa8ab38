"""The parquet format: read by row group (the unit parallel subtasks share), columns cast to
the table's types."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sqlengine.connectors.base import RowFilter
from sqlengine.connectors.column_fit import fit_column
from sqlengine.errors import ConnectorError
from sqlengine.statistics import ColumnStats, Estimate, estimate_ndv, type_width

# Rows per batch read: four times the text formats' (a batch's Python work is paid once for
# 256 K rows, not 64 K: TPC-H SF 1 over all of lineitem 13 % faster in total, q19 27 %).
BATCH_ROWS = 262_144


def _parquet_file(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as e:
        msg = f"{path}: not a readable parquet file: {e}"
        raise ConnectorError(msg) from None


def row_groups(path: Path) -> int:
    return max(1, _parquet_file(path).metadata.num_row_groups)


class OpenParquet:
    """A parquet file open for reading, and the same file open to read some string columns
    as dictionaries (one footer read each, kept while its row groups are read)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = _parquet_file(path)
        self._by_dictionary: dict[tuple[str, ...], pq.ParquetFile] = {}

    def reading(self, dictionary: tuple[str, ...]) -> pq.ParquetFile:
        if not dictionary:
            return self.file
        pf = self._by_dictionary.get(dictionary)
        if pf is None:
            pf = pq.ParquetFile(self.path, read_dictionary=list(dictionary))
            self._by_dictionary[dictionary] = pf
        return pf


def open_parquet(path: Path) -> OpenParquet:
    """``path`` open for reading (an error naming it when it is not a parquet file)."""
    return OpenParquet(path)


# A string column whose row group holds it as a dictionary page of at most this many bytes
# and data pages of indices (few distinct values: TPC-H's l_shipmode, o_orderpriority,
# p_brand) is read as Arrow dictionary indices and decoded to strings after, ~1.8x faster
# than reading it as strings (6M values of l_shipmode: 101 ms against 175). A writer whose
# dictionary grew too large falls back to plain pages part way (the encodings listed are the
# same): data pages of more than _INDEX_BYTES per value hold such strings, which Arrow would
# dictionary-encode again (3x slower): those columns are read as strings.
_SMALL_DICTIONARY = 64 * 1024
_INDEX_BYTES = 2  # (an index of up to 16 bits per value, before compression)


def _dictionary_columns(pf: pq.ParquetFile, wanted: list[str], row_group: int | None,
                        schema: pa.Schema) -> tuple[str, ...]:
    meta = pf.metadata
    if meta.num_row_groups == 0:
        return ()
    groups = range(meta.num_row_groups) if row_group is None else [row_group]
    names = {meta.schema.column(i).path: i for i in range(meta.num_columns)}
    found = []
    for name in wanted:
        i = names.get(name)
        if i is None or not pa.types.is_string(schema.field(name).type) or \
                meta.schema.column(i).physical_type != "BYTE_ARRAY":
            continue
        small = True
        for g in groups:
            chunk = meta.row_group(g).column(i)
            start = chunk.dictionary_page_offset
            dictionary = chunk.data_page_offset - start if start is not None else 0
            if not chunk.has_dictionary_page or start is None or \
                    not any("DICTIONARY" in e for e in chunk.encodings) or \
                    dictionary > _SMALL_DICTIONARY or \
                    chunk.total_compressed_size - dictionary > \
                    _INDEX_BYTES * max(chunk.num_values, 1):
                small = False
                break
        if small:
            found.append(name)
    return tuple(found)


def read_parquet(path: Path, schema: pa.Schema, columns: list[int] | None,
                  row_group: int | None = None, opened: OpenParquet | None = None,
                  prune: RowFilter | None = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``path`` (of one row group), with the table's ``schema``: the ``columns``
    read (all by default), the others NULL; ``opened``: the file already open.

    ``prune``: the pushed filters (connectors/base.py's RowFilter), which may drop rows here
    (the source applies them again; only where the rows dropped matter to nothing else, no
    watermark nor a resumable position): a filter on one column read as a dictionary is
    evaluated on the dictionary's values, and the rows it rejects are dropped before any
    string is decoded (TPC-H q12's ``l_shipmode IN ('MAIL', 'SHIP')``: 7 values tested, not
    6 million)."""
    opened = opened if opened is not None else OpenParquet(path)
    pf = opened.file
    wanted = [schema.field(i).name for i in (columns if columns is not None
                                              else range(len(schema)))]
    # (a column the file lacks is NULL, as Flink's parquet reader fills it)
    named = file_columns(pf.schema_arrow.names, wanted)
    wanted = [n for n in wanted if n in named]
    groups = None if row_group is None or pf.metadata.num_row_groups == 0 else [row_group]
    dictionary = _dictionary_columns(pf, [n for n in wanted if named[n] == n], row_group,
                                     schema)
    renamed = any(named[n] != n for n in wanted)
    # Arrow decodes the columns on its thread pool (half the time on two cores).
    for batch in opened.reading(dictionary).iter_batches(
            batch_size=BATCH_ROWS, columns=[named[n] for n in wanted], row_groups=groups,
            use_threads=True):
        if renamed:
            batch = batch.rename_columns(wanted)
        if dictionary:
            if prune is not None:
                batch = _pruned(batch, schema, dictionary, prune)
                if batch.num_rows == 0:
                    continue
            batch = pa.RecordBatch.from_arrays(
                [c.cast(c.type.value_type) if pa.types.is_dictionary(c.type) else c
                 for c in batch.columns], names=batch.schema.names)
        yield conform_columns(batch, schema, wanted, path)


def file_columns(present: list[str], wanted: list[str]) -> dict[str, str]:
    """The file's column of each ``wanted`` table column it has: of the same name, else the
    one column of that name in another case (names are case-insensitive here: a file's
    ``ID`` is the table's ``id``, which read as NULLs without a word)."""
    exact = set(present)
    folded: dict[str, list[str]] = {}
    for name in present:
        folded.setdefault(name.lower(), []).append(name)
    out = {}
    for name in wanted:
        if name in exact:
            out[name] = name
        elif len(folded.get(name.lower(), [])) == 1:
            out[name] = folded[name.lower()][0]
    return out


def _pruned(batch: pa.RecordBatch, schema: pa.Schema, dictionary: tuple[str, ...],
            prune: RowFilter) -> pa.RecordBatch:
    """``batch`` without the rows the filters on one dictionary column alone reject, judged
    on the column's distinct values (and NULL) as a batch of the table's columns."""
    keep: np.ndarray | None = None
    for name in dictionary:
        col = batch.column(name)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        values = pa.concat_arrays([col.dictionary.cast(pa.string()),
                                   pa.nulls(1, pa.string())])  # (the last: NULL)
        probe = pa.RecordBatch.from_arrays(
            [values if f.name == name else pa.nulls(len(values), f.type) for f in schema],
            schema=schema)
        verdict = prune(probe, frozenset({schema.get_field_index(name)}))
        if verdict.all():
            continue
        indices = col.indices.fill_null(len(values) - 1) if col.null_count else col.indices
        rows = verdict[indices.to_numpy(zero_copy_only=False)]
        keep = rows if keep is None else keep & rows
    return batch if keep is None or keep.all() else batch.filter(pa.array(keep))


def conform_columns(batch: pa.RecordBatch, schema: pa.Schema, wanted: list[str],
                    path: object) -> pa.RecordBatch:
    """A batch read from a columnar file as ``schema``: the ``wanted`` columns cast to the
    table's types (a failure names the file and column), the others NULL."""
    arrays = []
    for f in schema:
        if f.name in wanted:
            arrays.append(fit_column(batch.column(f.name), f.type, path, f.name))
        else:
            arrays.append(null_column(f.type, batch.num_rows))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


@functools.lru_cache(maxsize=64)
def null_column(t: pa.DataType, n: int) -> pa.Array:
    """``n`` NULLs of type ``t`` (arrays are immutable: one per type and length serves every
    batch of a column the query does not read)."""
    return pa.nulls(n, t)


SAMPLE_ROWS = 65_536
NARROW_BYTES = 24


def parquet_statistics(files: list[Path], schema: pa.Schema,
                       read: frozenset[str] | None = None) -> Estimate | None:
    """Rows and bytes from the files' footers; per column min / max and nulls from the row
    groups' statistics where the writer kept them, and distinct values estimated from a sample
    of the first file's first rows (statistics.estimate_ndv) for the columns in ``read`` (all
    when None: reading a sample of every column costs ~10 ms each). None when a file is
    unreadable (the reader's error to give)."""
    parts = []
    for f in files:
        try:
            st = f.stat()
        except OSError:
            return None
        found = _file_statistics(str(f), st.st_size, st.st_mtime_ns, schema, read)
        if found is None:
            return None
        parts.append(found)
    if not parts:
        width = max(sum(type_width(f.type) for f in schema), 1.0)
        return Estimate(1.0, width, tuple(ColumnStats() for _ in schema))
    rows = sum(p.rows for p in parts)
    size = sum(p.rows * p.width for p in parts)
    columns = []
    for i in range(len(schema)):
        stats = [p.columns[i] for p in parts]
        ndv = stats[0].ndv
        if ndv is not None and len(parts) > 1:
            ndv = min(rows, ndv * rows / max(parts[0].rows, 1.0))
        lows = [s.min for s in stats]
        highs = [s.max for s in stats]
        lo = min(lows) if None not in lows else None
        hi = max(highs) if None not in highs else None
        nulls = sum(s.null_fraction * p.rows for s, p in zip(stats, parts)) / max(rows, 1.0)
        columns.append(ColumnStats(ndv, lo, hi, nulls))
    return Estimate(max(rows, 1.0), max(size / max(rows, 1.0), 1.0), tuple(columns))


@functools.lru_cache(maxsize=256)
def _file_statistics(path: str, size: int, mtime_ns: int, schema: pa.Schema,
                     read: frozenset[str] | None = None) -> Estimate | None:
    """One file's statistics (cached while its size and modification time stay)."""
    try:
        pf = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError):
        return None
    meta = pf.metadata
    rows = float(meta.num_rows)
    byte_size = sum(meta.row_group(g).total_byte_size for g in range(meta.num_row_groups))
    names = pf.schema_arrow.names
    named = file_columns(names, schema.names)
    sample_names = [named[f.name] for f in schema if f.name in named
                    and (read is None or f.name in read)
                    and _narrow(meta, names.index(named[f.name]))]
    sample = None
    if meta.num_row_groups and sample_names:
        try:
            sample = next(pf.iter_batches(batch_size=SAMPLE_ROWS, row_groups=[0],
                                          columns=sample_names, use_threads=False), None)
        except (pa.ArrowInvalid, OSError):
            return None
    columns = []
    for f in schema:
        if f.name not in named:
            columns.append(ColumnStats())
            continue
        j = names.index(named[f.name])
        lo, hi, nulls = _min_max_nulls(meta, j, f.type)
        ndv = estimate_ndv(sample.column(named[f.name]), rows) \
            if sample is not None and named[f.name] in sample_names else None
        columns.append(ColumnStats(ndv or None, lo, hi, nulls / max(rows, 1.0)))
    return Estimate(max(rows, 1.0), max(byte_size / max(rows, 1.0), 1.0), tuple(columns))


def _narrow(meta: pq.FileMetaData, column: int) -> bool:
    """Whether a column's values average at most NARROW_BYTES (keys, codes, names: what joins
    and groups read; long texts are not sampled for their distinct values)."""
    if not meta.num_row_groups:
        return False
    chunk = meta.row_group(0).column(column)
    return chunk.total_uncompressed_size <= NARROW_BYTES * max(chunk.num_values, 1)


def _min_max_nulls(meta: pq.FileMetaData, column: int, t: pa.DataType
                   ) -> tuple[object, object, float]:
    """Min, max (numbers, dates and timestamps: what the selectivity of a range compares) and
    null count over the row groups' statistics; None for min / max when a row group has none."""
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) \
        or pa.types.is_date(t) or pa.types.is_timestamp(t)
    lo = hi = None
    nulls = 0.0
    for g in range(meta.num_row_groups):
        st = meta.row_group(g).column(column).statistics
        if st is None:
            return None, None, 0.0
        if st.has_null_count:
            nulls += st.null_count
        if not numeric:
            continue
        if not st.has_min_max:
            return None, None, nulls
        lo = st.min if lo is None else min(lo, st.min)
        hi = st.max if hi is None else max(hi, st.max)
    return lo, hi, nulls
