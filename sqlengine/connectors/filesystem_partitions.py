"""Partitioned filesystem tables (PARTITIONED BY), as Flink's filesystem connector lays them
out: hive-style directories ``k1=v1/k2=v2/`` under the table's path, the partition columns
kept in the directory names and not in the files.

Reading discovers the partition directories (exactly one ``key=value`` level per partition
column, in PARTITIONED BY's order), gives the partition columns their typed values (the
directory value cast to the column type; the default partition name, option
'partition.default-name', '__DEFAULT_PARTITION__' by default, is NULL) and prunes the
partitions the query's filters on partition columns reject before any of their files is
opened. Writing sends each row to its partition's directory (NULL and blank values to the
default partition); INSERT OVERWRITE replaces the files of the partitions it writes only.
Values are escaped in directory names as Flink (Hive) does: %XX for '/', '=', ':', '%', ...
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import cast_array
from sqlengine.connectors.base import RowFilter, SinkWriter, decode_partition_keys
from sqlengine.errors import ConnectorError, ExecutionError

DEFAULT_PARTITION = "__DEFAULT_PARTITION__"
# The characters Flink's PartitionPathUtils (after Hive's FileUtils) escapes in a value.
_ESCAPED = frozenset([*map(chr, range(1, 0x20)), '"', "#", "%", "'", "*", "/", ":", "=", "?",
                      "\\", "\x7f", "{", "[", "]", "^"])


def default_name(options: dict[str, str]) -> str:
    return options.get("partition.default-name") or DEFAULT_PARTITION


def escape(value: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in value)


def unescape(name: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), name)


@dataclass(frozen=True, slots=True)
class Partition:
    directory: Path
    values: tuple[str | None, ...]  # one per partition column; None: the default partition


def discover(root: Path, keys: tuple[str, ...], default: str) -> list[Partition]:
    """The partition directories under ``root``, sorted; other files and directories (hidden
    ones, files beside the partitions) are not part of the table."""
    if not root.is_dir():
        msg = f"path {str(root)!r} (option 'path') of a partitioned table is not a directory"
        raise ConnectorError(msg)
    found = [Partition(root, ())]
    for key in keys:
        prefix = key + "="
        deeper = []
        for part in found:
            for d in sorted(part.directory.iterdir()):
                if d.is_dir() and d.name.startswith(prefix):
                    raw = unescape(d.name[len(prefix):])
                    deeper.append(Partition(d, (*part.values, None if raw == default
                                                 else raw)))
        found = deeper
    return found


def data_files(directory: Path) -> list[Path]:
    """The files of one partition (hidden and '_' files, such as staging files, skipped)."""
    return sorted(f for f in directory.rglob("*") if f.is_file() and not any(
        p.startswith((".", "_")) for p in f.relative_to(directory).parts))


_ISO_MINUTES = re.compile(r"(\d{4,}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2}(\.\d+)?)?")


def _flink_text(value: str | None, t: pa.DataType) -> str | None:
    """A TIMESTAMP partition value as Flink writes it (LocalDateTime's text,
    '2024-01-01T10:00' or '2024-01-01T10:00:05.123') in CAST's form; others as they are."""
    if value is None or not pa.types.is_timestamp(t):
        return value
    m = _ISO_MINUTES.fullmatch(value)
    if m is None:
        return value
    return f"{m.group(1)} {m.group(2)}{m.group(3) or ':00'}"


def _java_text(value: object) -> str:
    """A partition value's directory text as Flink's writer makes it: Java's toString (a
    BOOLEAN 'true', a TIMESTAMP LocalDateTime's '2024-01-01T10:00', seconds and fraction
    only when not 0)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        text = value.strftime("%Y-%m-%dT%H:%M")
        micros = value.microsecond
        if value.second or micros:
            text += f":{value.second:02d}"
        if micros:
            text += f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
        return text
    return str(value)


def partition_values(parts: list[Partition], keys: tuple[str, ...], schema: pa.Schema
                     ) -> pa.RecordBatch:
    """One row per partition, laid out as the table's columns: the partition columns typed,
    the others NULL."""
    n = len(parts)
    if n == 0:
        return pa.RecordBatch.from_arrays(
            [pa.array([], f.type) for f in schema], schema=schema)
    arrays = []
    for f in schema:
        if f.name not in keys:
            arrays.append(pa.nulls(n, f.type))
            continue
        j = keys.index(f.name)
        text = pa.array([_flink_text(p.values[j], f.type) for p in parts], pa.string())
        try:
            arrays.append(text if T.is_string(f.type) else cast_array(text, f.type))
        except ExecutionError:
            for p in parts:  # (the error path: find the directory to name)
                try:
                    cast_array(pa.array([p.values[j]], pa.string()), f.type)
                except ExecutionError as e:
                    msg = (f"{p.directory}: partition value {p.values[j]!r} is not a "
                           f"{T.type_name(f.type)} (column {f.name!r}): {e.message}")
                    raise ConnectorError(msg) from None
            raise
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def prune(parts: list[Partition], values: pa.RecordBatch, schema: pa.Schema,
          keys: tuple[str, ...], row_filter: RowFilter | None
          ) -> tuple[list[Partition], pa.RecordBatch]:
    """The partitions the pushed-down filters on partition columns keep."""
    if row_filter is None or not parts:
        return parts, values
    key_cols = frozenset(i for i, f in enumerate(schema) if f.name in keys)
    keep = row_filter(values, key_cols)
    idx = np.flatnonzero(keep)
    return [parts[i] for i in idx], values.take(pa.array(idx, pa.int64()))


def with_partition_columns(batch: pa.RecordBatch, values: pa.RecordBatch, row: int,
                           schema: pa.Schema) -> pa.RecordBatch:
    """A batch of the file's columns widened to the table's: partition columns constant."""
    n = batch.num_rows
    zeros = pa.array(np.zeros(n, dtype=np.int64))
    arrays = []
    for i, f in enumerate(schema):
        if f.name in batch.schema.names:
            arrays.append(batch.column(f.name))
        else:
            arrays.append(values.column(i).slice(row, 1).take(zeros))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def file_schema(schema: pa.Schema, keys: tuple[str, ...]) -> pa.Schema:
    """The columns a partitioned table's files hold: all but the partition columns."""
    return pa.schema([f for f in schema if f.name not in keys])


class PartitionedWriter(SinkWriter):
    """Writes each row to its partition's directory, one part file per partition written (a
    checkpointing job's: filesystem_commit.py's CommittingPartitionedWriter). With a
    partition commit policy (partition_commit.py) each partition written gets its success
    file once every row is written."""

    guarantee = None  # (a checkpointing job writes with CommittingPartitionedWriter)

    name = "FileSink"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 overwrite: bool = False) -> None:
        from sqlengine.connectors.partition_commit import CommitPolicy

        self.table = table
        self.options = options
        self.schema = schema
        self.overwrite = overwrite
        self.keys = decode_partition_keys(options)
        self.data_schema = file_schema(schema, self.keys)
        self.default = default_name(options)
        self.policy = CommitPolicy.of(options, self.keys)
        from sqlengine.connectors.filesystem_files import local_path

        self.root = local_path(options["path"], table)
        from sqlengine import safety

        safety.check_file(table, self.root, options)
        if self.root.is_file():
            msg = (f"sink path {options['path']!r}: a partitioned table's path must be a "
                   "directory, not a file")
            raise ConnectorError(msg)
        self.writers: dict[str, SinkWriter] = {}
        self.rows = 0
        self.ended = False
        self.last_written: list[str] = []  # (the partitions the last batch reached)

    def _directory_names(self, batch: pa.RecordBatch) -> pa.Array:
        """Per row its partition's relative directory, 'k1=v1/k2=v2'."""
        parts = []
        for key in self.keys:
            col = batch.column(key)
            if pa.types.is_boolean(col.type) or (pa.types.is_timestamp(col.type) and
                                                 col.type.tz is None and col.type.unit != "ns"):
                enc = pc.dictionary_encode(col)  # (Flink's text, each distinct value once)
                texts = [None if v is None else _java_text(v)
                         for v in enc.dictionary.to_pylist()]
                text = pa.array(texts, pa.string()).take(enc.indices)
            else:
                text = col if T.is_string(col.type) else cast_array(col, pa.string())
            blank = pc.fill_null(pc.equal(pc.utf8_trim_whitespace(text), ""), True)
            text = pc.if_else(blank, self.default, text)
            enc = pc.dictionary_encode(text)  # escape each distinct value once
            escaped = pa.array([escape(v) for v in enc.dictionary.to_pylist()], pa.string())
            text = escaped.take(enc.indices)
            parts.append(pc.binary_join_element_wise(key + "=", text, ""))
        return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, "/")

    def _new_writer(self, name: str) -> SinkWriter:
        """The writer of the partition directory ``name`` (relative to the table's)."""
        from sqlengine.connectors.filesystem_files import FileWriter

        options = {**self.options, "path": str(self.root / name)}
        return FileWriter(self.table, options, self.data_schema, self.overwrite)

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        if batch.schema != self.schema:
            batch = batch.cast(self.schema)
        self.rows += batch.num_rows
        names = self._directory_names(batch)
        data = batch.select(self.data_schema.names)
        self.last_written = pc.unique(names).to_pylist()
        for name in self.last_written:
            rows = data.filter(pc.equal(names, name))
            writer = self.writers.get(name)
            if writer is None:
                writer = self.writers[name] = self._new_writer(name)
            writer.write(rows)

    def end_input(self) -> None:
        self.ended = True
        for w in self.writers.values():
            w.end_input()

    def close(self) -> None:
        for w in self.writers.values():
            w.close()
        if self.ended and self.policy is not None:  # (every part file is published)
            for name in self.writers:
                self.policy.commit(self.root / name)
