"""The json format: one object per line, read vectorised (line by line only to name a bad line
or skip it), written with temporal and decimal values as SQL text."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from sqlengine import types as T
from sqlengine.cast import VALID_TEXT, cast_array, text_kind
from sqlengine.connectors.base import ReadStats
from sqlengine.connectors.text_rows import BadValue, finish, row_lines
from sqlengine.errors import ConnectorError


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
        lines = row_lines(data, False) + (first_line - 1)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        # Error path (or ignore-parse-errors): parse line by line to name the bad line.
        table, lines = _json_lines(path, data, read_schema, ignore, fail_missing, stats,
                                   first_line)
    converted, ok, detail = _convert_text_types(table, schema)
    yield from finish(converted, ok, lines, path, ignore, stats, "json", detail)


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


def _convert_text_types(table: pa.Table, schema: pa.Schema
                        ) -> tuple[pa.Table, np.ndarray, BadValue | None]:
    """Text values of typed columns (dates, times, decimals written as strings) read as their
    type; one that does not (a malformed or impossible date, 2020-02-30) makes its row bad,
    never a silent NULL."""
    ok = np.ones(table.num_rows, dtype=bool)
    first: BadValue | None = None
    out = []
    for f in schema:
        col = table.column(f.name).combine_chunks()
        if col.type == f.type or not T.is_string(col.type):
            out.append(col if col.type == f.type else cast_array(col, f.type, safe=True))
            continue
        kind = text_kind(f.type)
        valid = np.asarray(pc.fill_null(pc.match_substring_regex(col, VALID_TEXT[kind]), True)
                           .to_numpy(zero_copy_only=False)) if kind \
            else np.ones(len(col), dtype=bool)
        looks = pc.if_else(pa.array(valid), col, pa.nulls(len(col), pa.string()))
        casted = cast_array(looks, f.type, safe=True)
        lost = np.asarray(pc.and_(pc.is_valid(looks), pc.is_null(casted))
                          .to_numpy(zero_copy_only=False))
        bad = ~valid | lost
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            if first is None or i < first[0]:
                first = (i, f.name, col[i].as_py(), T.type_name(f.type))
        ok &= ~bad
        out.append(casted)
    keep = pa.array(ok)
    out = [c.filter(keep) if not ok.all() else c for c in out]
    return pa.Table.from_arrays(out, schema=schema), ok, first


def json_bytes(batch: pa.RecordBatch) -> bytes:
    # Temporal and decimal values as SQL text, as Flink's json format writes them.
    fields = {}
    for f, col in zip(batch.schema, batch.columns):
        if T.is_temporal(f.type):
            fields[f.name] = cast_array(col, pa.string()).to_pylist()
        elif pa.types.is_decimal(f.type):
            fields[f.name] = [None if v is None else float(v) for v in col.to_pylist()]
        else:
            fields[f.name] = col.to_pylist()
    names = list(fields)
    rows = zip(*fields.values()) if names else iter(())
    out = "".join(json.dumps(dict(zip(names, r)), ensure_ascii=False) + "\n" for r in rows)
    return out.encode("utf-8")
