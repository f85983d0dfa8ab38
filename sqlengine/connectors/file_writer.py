"""The filesystem connector's file sink: one part file per sink subtask, written as Flink's
formats do (csv without a header row, quoting only where needed; json one object per line with
temporal values as SQL text; parquet), and the plan-time check that the sink path is writable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sqlengine import types as T
from sqlengine.cast import cast_array
from sqlengine.connectors.base import SinkWriter
from sqlengine.connectors.filesystem_formats import opt_char
from sqlengine.errors import ConnectorError


class FileWriter(SinkWriter):
    """Writes one part file under the sink's directory, batch by batch."""

    name = "FileSink"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 overwrite: bool) -> None:
        self.options = options
        self.schema = schema
        self.format = options["format"]
        root = Path(options["path"])
        if root.exists() and root.is_file():
            if overwrite:
                root.unlink()
            target_dir = None
            self.path = root
        else:
            target_dir = root
        if target_dir is not None:
            try:
                target_dir.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                msg = f"sink path {str(target_dir)!r}: {e.strerror or e}"
                raise ConnectorError(msg) from None
            if overwrite:
                for old in target_dir.iterdir():
                    if old.is_file() and old.name.startswith("part-"):
                        old.unlink()
            n = len([p for p in target_dir.iterdir() if p.name.startswith("part-")])
            self.path = target_dir / f"part-0-{n}"
        self._file = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self._parquet: pq.ParquetWriter | None = None
        self.rows = 0
        del table

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        if batch.schema != self.schema:
            batch = batch.cast(self.schema)
        self.rows += batch.num_rows
        if self.format == "parquet":
            if self._parquet is None:
                self._parquet = pq.ParquetWriter(self._file, self.schema)
            self._parquet.write_batch(batch)
            return
        if self.format == "csv":
            self._file.write(_csv_bytes(batch, self.options))
        else:
            self._file.write(_json_bytes(batch))
        self._file.flush()

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
        self._file.close()


def _text_columns(batch: pa.RecordBatch) -> list[pa.Array]:
    return [col if T.is_string(col.type) else cast_array(col, pa.string())
            for col in batch.columns]


def _csv_bytes(batch: pa.RecordBatch, options: dict[str, str]) -> bytes:
    delim = opt_char(options, "csv.field-delimiter", ",") or ","
    quote = opt_char(options, "csv.quote-character", '"') or '"'
    text = csv_text(_text_columns(batch), delim, quote, options.get("csv.null-literal", ""))
    return text.encode("utf-8")


def csv_text(columns: list[pa.Array], delim: str = ",", quote: str = '"',
             null: str = "") -> str:
    """CSV lines from string columns, quoting only the values that need it."""
    cols = []
    for col in columns:
        needs = pc.or_(pc.match_substring(col, delim),
                       pc.or_(pc.match_substring(col, quote), pc.match_substring(col, "\n")))
        escaped = pc.replace_substring(col, quote, quote + quote)
        quoted = pc.binary_join_element_wise(quote, escaped, quote, "")
        text = pc.if_else(pc.fill_null(needs, False), quoted, col)
        cols.append(pc.fill_null(text, null))
    if not cols or len(cols[0]) == 0:
        return ""
    lines = pc.binary_join_element_wise(*cols, delim) if len(cols) > 1 else cols[0]
    return "\n".join(lines.to_pylist()) + "\n"


def _json_bytes(batch: pa.RecordBatch) -> bytes:
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


def sink_path_ok(options: dict[str, str]) -> None:
    """Fail at plan time when a sink path cannot be created or written."""
    path = Path(options["path"])
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and existing.is_file() and existing != path:
        msg = f"sink path {options['path']!r}: {str(existing)!r} is a file, not a directory"
        raise ConnectorError(msg)
    if existing.exists() and not os.access(existing, os.W_OK):
        msg = f"sink path {options['path']!r}: {str(existing)!r} is not writable"
        raise ConnectorError(msg)
