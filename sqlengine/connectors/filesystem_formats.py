"""The filesystem connector's formats: csv, json (one object per line) and parquet, read as
Flink's formats do (csv has no header row), with bad rows reported as file:line. Writing is in
file_writer.py."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.json as pajson
import pyarrow.parquet as pq

from sqlengine import types as T
from sqlengine.cast import VALID_TEXT, cast_array, text_kind
from sqlengine.connectors.base import ReadStats
from sqlengine.errors import ConnectorError, ExecutionError

BATCH_ROWS = 65536


def list_files(path: str, table: str) -> list[Path]:
    """The files a filesystem table reads: the file itself, or a directory's visible files."""
    p = Path(path)
    if p.is_file():
        return [p]
    if p.is_dir():
        return sorted(f for f in p.rglob("*") if f.is_file()
                      and not any(part.startswith((".", "_")) for part in
                                  f.relative_to(p).parts))
    msg = f"table {table!r}: path {path!r} (option 'path') does not exist"
    raise ConnectorError(msg)


def read_files(table: str, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, columns: list[int] | None = None,
               split: tuple[int, int] = (0, 1)) -> Iterator[pa.RecordBatch]:
    """Yield record batches of ``schema`` from this subtask's share of the files under the
    table's path: csv and json by file, parquet by row group (file i / row group i goes to
    subtask i mod parallelism)."""
    fmt = options["format"]
    index, parallelism = split
    files = list_files(options["path"], table)
    if fmt == "parquet":
        units = [(f, g) for f in files for g in range(_row_groups(f))]
        for f, g in units[index::parallelism]:
            stats.files += 1
            yield from _read_parquet(f, schema, columns, g)
        return
    for f in files[index::parallelism]:
        stats.files += 1
        if fmt == "csv":
            yield from read_csv(f, options, schema, stats)
        else:
            yield from read_json(f, options, schema, stats)


# -- csv -----------------------------------------------------------------------------------
def opt_char(options: dict[str, str], key: str, default: str | None) -> str | None:
    value = options.get(key)
    if value is None:
        return default
    return value.encode("utf-8").decode("unicode_escape")


def _row_lines(data: bytes, allow_comments: bool) -> np.ndarray:
    """1-based line number of each CSV record (blank and comment lines skipped)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    starts = np.concatenate([[0], np.nonzero(raw == 10)[0] + 1])
    starts = starts[starts < len(raw)] if len(raw) else starts[:0]
    ends = np.append(starts[1:] - 1, len(raw))
    length = ends - starts
    # A line holding only "\r" is blank too.
    blank = (length == 0) | ((length == 1) & (raw[np.minimum(starts, len(raw) - 1)] == 13))
    keep = ~blank
    if allow_comments and len(raw):
        keep &= raw[starts] != ord("#")
    return np.nonzero(keep)[0] + 1


def read_csv(path: Path | str, options: dict[str, str], schema: pa.Schema,
              stats: ReadStats, data: bytes | None = None,
              first_line: int = 1) -> Iterator[pa.RecordBatch]:
    """CSV rows of a file (or of ``data``, lines from ``first_line`` of the stream ``path``
    names: errors say path:line either way)."""
    if data is None:
        data = Path(path).read_bytes()
    ignore = options.get("csv.ignore-parse-errors", "false").lower() == "true"
    allow_comments = options.get("csv.allow-comments", "false").lower() == "true"
    lines = _row_lines(data, allow_comments) + (first_line - 1)
    if allow_comments:
        data = b"\n".join(ln for ln in data.split(b"\n") if not ln.startswith(b"#"))
    quote = None if options.get("csv.disable-quote-character", "false").lower() == "true" \
        else opt_char(options, "csv.quote-character", '"')
    bad_rows: list[int] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        if not ignore:
            return "error"
        bad_rows.append(row.number or 0)
        return "skip"

    names = [f.name for f in schema]
    try:
        table = pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pacsv.ParseOptions(
                delimiter=opt_char(options, "csv.field-delimiter", ","),
                quote_char=quote or False,
                escape_char=opt_char(options, "csv.escape-character", None) or False,
                ignore_empty_lines=True,
                invalid_row_handler=on_invalid,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )
    except pa.ArrowInvalid as e:
        msg = f"{path}: malformed CSV: {_first_line(str(e))}"
        line = _line_from_message(str(e))
        if line is not None:
            msg = f"{path}:{line + first_line - 1}: malformed CSV row: {_first_line(str(e))}"
        raise ConnectorError(msg) from None
    if bad_rows:
        stats.skipped += len(bad_rows)
        # Rows the CSV reader skipped shift the record -> line mapping.
        skip_lines = set(bad_rows)
        lines = np.array([ln for ln in lines if ln not in skip_lines]) if skip_lines else lines
    null_literal = options.get("csv.null-literal")
    converted, ok = _convert_strings(table, schema, null_literal, empty_is_null=True)
    yield from _finish(converted, ok, lines, path, ignore, stats, "csv")


def _convert_strings(table: pa.Table, schema: pa.Schema, null_literal: str | None,
                     empty_is_null: bool) -> tuple[pa.Table, np.ndarray]:
    """Cast string columns to the schema; returns the table and a per-row validity mask."""
    ok = np.ones(table.num_rows, dtype=bool)
    arrays = []
    for f in schema:
        col = table.column(f.name).combine_chunks() if table.num_columns else pa.nulls(0)
        if null_literal is not None:
            col = pc.if_else(pc.equal(col, null_literal), pa.nulls(len(col), col.type), col)
        if T.is_string(f.type):
            arrays.append(col)
            continue
        if empty_is_null:
            col = pc.if_else(pc.equal(pc.utf8_trim_whitespace(col), ""),
                             pa.nulls(len(col), pa.string()), col)
        kind = text_kind(f.type)
        if kind is None:
            arrays.append(cast_array(col, f.type))
            continue
        valid = pc.fill_null(pc.match_substring_regex(col, VALID_TEXT[kind]), True)
        ok &= valid.to_numpy(zero_copy_only=False)
        arrays.append(col)
    keep = pa.array(ok)
    out = []
    for f, col in zip(schema, arrays):
        col = col.filter(keep) if not ok.all() else col
        out.append(cast_array(col, f.type, safe=True) if not T.is_string(f.type) else col)
    return pa.Table.from_arrays(out, schema=schema), ok


def _finish(table: pa.Table, ok: np.ndarray, lines: np.ndarray, path: Path | str,
            ignore: bool,
            stats: ReadStats, fmt: str) -> Iterator[pa.RecordBatch]:
    if not ok.all():
        bad = np.nonzero(~ok)[0]
        if not ignore:
            line = int(lines[bad[0]]) if bad[0] < len(lines) else int(bad[0]) + 1
            msg = (f"{path}:{line}: cannot parse row as the table's columns (a value does not "
                   f"match its column type); set '{fmt}.ignore-parse-errors' = 'true' to skip "
                   "such rows")
            raise ConnectorError(msg)
        stats.skipped += len(bad)
        stats.skipped_at.extend(f"{path}:{int(lines[i])}" for i in bad[:10] if i < len(lines))
    yield from (b for b in table.to_batches(max_chunksize=BATCH_ROWS) if b.num_rows)


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


def _line_from_message(text: str) -> int | None:
    import re

    m = re.search(r"[Rr]ow #?(\d+)", text)
    return int(m.group(1)) if m else None


# -- json ----------------------------------------------------------------------------------
def _json_read_type(t: pa.DataType) -> pa.DataType:
    # Read text-encoded types as strings and convert with CAST semantics.
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_decimal(t):
        return pa.string()
    return t


def read_json(path: Path | str, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, data: bytes | None = None,
               first_line: int = 1) -> Iterator[pa.RecordBatch]:
    ignore = options.get("json.ignore-parse-errors", "false").lower() == "true"
    fail_missing = options.get("json.fail-on-missing-field", "false").lower() == "true"
    read_schema = pa.schema([pa.field(f.name, _json_read_type(f.type)) for f in schema])
    if data is None:
        data = Path(path).read_bytes()
    try:
        if ignore or fail_missing:
            raise pa.ArrowInvalid("slow path")
        table = pajson.read_json(
            io.BytesIO(data),
            read_options=pajson.ReadOptions(use_threads=False, block_size=max(1 << 20,
                                                                                len(data) + 1)),
            parse_options=pajson.ParseOptions(explicit_schema=read_schema,
                                              unexpected_field_behavior="ignore"),
        )
        if table.num_rows == 0 and data.strip():
            raise pa.ArrowInvalid("no rows")
        lines = _row_lines(data, False) + (first_line - 1)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # Error path (or ignore-parse-errors): parse line by line to name the bad line.
        table, lines = _json_lines(path, data, read_schema, ignore, fail_missing, stats,
                                   first_line)
    converted, ok = _convert_text_types(table, schema)
    yield from _finish(converted, ok, lines, path, ignore, stats, "json")


def _json_lines(path: Path | str, data: bytes, read_schema: pa.Schema, ignore: bool,
                fail_missing: bool, stats: ReadStats,
                first_line: int = 1) -> tuple[pa.Table, np.ndarray]:
    rows: list[dict[str, object]] = []
    lines: list[int] = []
    names = read_schema.names
    for no, raw in enumerate(data.decode("utf-8", errors="replace").split("\n"),
                             start=first_line):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            if fail_missing:
                missing = [n for n in names if n not in obj]
                if missing:
                    raise ValueError(f"missing field {missing[0]!r}")
            row = {n: obj.get(n) for n in names}
            pa.Table.from_pylist([row], schema=read_schema)  # type check of this row
        except (ValueError, pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as e:
            if ignore:
                stats.skipped += 1
                if len(stats.skipped_at) < 10:
                    stats.skipped_at.append(f"{path}:{no}")
                continue
            msg = (f"{path}:{no}: cannot parse JSON row: {e}; set 'json.ignore-parse-errors'"
                   " = 'true' to skip such rows")
            raise ConnectorError(msg) from None
        rows.append(row)
        lines.append(no)
    return pa.Table.from_pylist(rows, schema=read_schema), np.array(lines, dtype=np.int64)


def _convert_text_types(table: pa.Table, schema: pa.Schema) -> tuple[pa.Table, np.ndarray]:
    ok = np.ones(table.num_rows, dtype=bool)
    cols = []
    for f in schema:
        col = table.column(f.name).combine_chunks()
        if col.type != f.type and T.is_string(col.type):
            kind = text_kind(f.type)
            valid = pc.fill_null(pc.match_substring_regex(col, VALID_TEXT[kind]), True) if kind \
                else pa.array(np.ones(len(col), bool))
            ok &= valid.to_numpy(zero_copy_only=False)
        cols.append(col)
    keep = pa.array(ok)
    out = []
    for f, col in zip(schema, cols):
        if not ok.all():
            col = col.filter(keep)
        out.append(cast_array(col, f.type, safe=True) if col.type != f.type else col)
    return pa.Table.from_arrays(out, schema=schema), ok


# -- parquet -------------------------------------------------------------------------------
def _parquet_file(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as e:
        msg = f"{path}: not a readable parquet file: {e}"
        raise ConnectorError(msg) from None


def _row_groups(path: Path) -> int:
    return max(1, _parquet_file(path).metadata.num_row_groups)


def _read_parquet(path: Path, schema: pa.Schema, columns: list[int] | None,
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

