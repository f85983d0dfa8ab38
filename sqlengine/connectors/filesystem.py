"""The filesystem connector (Flink's): a file or a directory of csv, json or parquet files;
bounded, a source and a sink; its subtasks share the files (parquet: the row groups). The
files are handled in filesystem_files.py, the formats in csv_format.py, json_format.py and
parquet_format.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sqlengine.connectors.base import (
    Connector,
    Fail,
    OptionSpec,
    SinkWriter,
    SourceRead,
    decode_metadata,
    decode_partition_keys,
)
from sqlengine.connectors.filesystem_files import FileWriter, list_files, read_files, sink_path_ok
from sqlengine.connectors.filesystem_partitions import PartitionedWriter
from sqlengine.connectors.parquet_format import parquet_statistics
from sqlengine.errors import ConnectorError
from sqlengine.statistics import ColumnStats, Estimate, schema_width
from sqlengine.types import is_nested, type_name

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema, SourceSpec


_NOT_IMPLEMENTED = {
    "csv.write-bom": "csv files are written without a byte order mark",
    "json.timestamp-format.standard": "json timestamps are read and written in one format",
}


class Filesystem(Connector):
    name = "filesystem"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("path", required=True),
        OptionSpec("format", "enum", ("csv", "json", "parquet", "debezium-json"),
                   required=True),
        OptionSpec("csv.field-delimiter", "char"),
        OptionSpec("csv.quote-character", "char"),
        OptionSpec("csv.disable-quote-character", "bool"),
        OptionSpec("csv.allow-comments", "bool"),
        OptionSpec("csv.ignore-parse-errors", "bool"),
        OptionSpec("csv.null-literal"),
        OptionSpec("csv.escape-character", "char"),
        OptionSpec("json.ignore-parse-errors", "bool"),
        OptionSpec("json.fail-on-missing-field", "bool"),
        OptionSpec("debezium-json.schema-include", "bool"),
        OptionSpec("debezium-json.ignore-parse-errors", "bool"),
        OptionSpec("sink.parallelism", "int"),
        OptionSpec("source.monitor-interval"),
        OptionSpec("partition.default-name"),
        OptionSpec("scan.parallelism", "int"),
        OptionSpec("scan.watermark.idle-timeout"),
    )
    is_source = True
    is_sink = True
    sink_accepts_updates = False  # files are append-only
    supports_overwrite = True
    supports_partitioning = True  # hive-style k=v directories (filesystem_partitions.py)

    def check_extra_option(self, key: str, value: str, columns: set[str], fail: Fail) -> bool:
        """Flink's options this connector does not implement: refused with the reason."""
        why = _NOT_IMPLEMENTED.get(key)
        if why is not None:
            raise fail(key, f"option {key!r} is not implemented yet ({why}); it would be "
                       "ignored")
        return False

    holds_nested = True

    def type_refusal(self, options: dict[str, str], t: pa.DataType) -> str | None:
        """parquet holds every nested type; json holds ARRAY and ROW of JSON's own values
        (numbers, strings, booleans); csv none."""
        if not is_nested(t):
            return None
        fmt = options.get("format", "")
        if fmt == "parquet":
            return None
        if fmt in ("json", "debezium-json") and _json_nested_ok(t):
            return None
        if fmt in ("json", "debezium-json"):
            return (f"the {fmt} format holds only ARRAY and ROW of numbers, strings and "
                    f"booleans, not {type_name(t)} (use parquet)")
        return f"the {fmt} format cannot hold {type_name(t)} (no ARRAY, MAP or ROW; use parquet)"

    def changelog(self, options: dict[str, str]) -> bool:
        return options.get("format") == "debezium-json"

    def check_table(self, options: dict[str, str], fail: Fail) -> None:
        if "source.monitor-interval" in options:
            raise fail("source.monitor-interval", "option 'source.monitor-interval' "
                       "(continuous directory monitoring) is not supported yet")

    def bounded(self, table: TableDef) -> bool:
        return True

    def check_sink(self, options: dict[str, str]) -> None:
        if options.get("format") == "debezium-json":
            msg = ("writing the debezium-json format is not supported yet (it is read as a "
                   "changelog); write csv, json or parquet")
            raise ConnectorError(msg)
        sink_path_ok(options)

    def statistics(self, source: SourceSpec, schema: Schema, data: object | None
                   ) -> Estimate | None:
        """Rows and width from parquet metadata, else from the files' sizes."""
        try:
            files = list_files(source.option("path") or "", source.table)
        except Exception:  # (a missing path is the reader's error to give)
            return None
        width = schema_width(schema)
        unknown = tuple(ColumnStats() for _ in schema.fields)
        if source.option("format") == "parquet":
            return parquet_statistics(files, schema.to_arrow())
        size = float(sum(Path(f).stat().st_size for f in files))
        text_width = width * 1.5  # digits and separators
        return Estimate(max(size / text_width, 1.0), width, unknown)

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        if decode_partition_keys(read.options):
            return "a PARTITIONED BY table cannot resume reading from a checkpoint yet"
        if read.options.get("format") == "debezium-json":
            return "a debezium-json table cannot resume reading from a checkpoint yet"
        return None

    def metadata_types(self, options: dict[str, str]) -> dict[str, pa.DataType]:
        """Flink's filesystem metadata (file.modification-time is a TIMESTAMP_LTZ(3) there;
        here, with the session in UTC, a TIMESTAMP(3))."""
        return {"file.path": pa.string(), "file.name": pa.string(), "file.size": pa.int64(),
                "file.modification-time": pa.timestamp("ms")}

    def open_source(self, read: SourceRead) -> Iterator[object]:
        if decode_metadata(read.options):
            return read_with_metadata(read)
        return read_files(read.table, read.options, read.schema, read.stats, read.columns,
                          read.split, read.row_filter, split_files=not read.ordered,
                          cursor=read.cursor)

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        if decode_partition_keys(options):
            return PartitionedWriter(table, options, schema, overwrite)
        return FileWriter(table, options, schema, overwrite)

    def open_committing_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                             subtask: int) -> SinkWriter | None:
        if decode_partition_keys(options):
            return None  # (PartitionedWriter cannot take part in checkpoints yet)
        from sqlengine.connectors.filesystem_commit import CommittingFileWriter

        return CommittingFileWriter(table, options, schema, subtask)

    def spark_read(self, spark: Any, source: SourceSpec, schema_ddl: str) -> Any | None:
        """Parquet is read by Spark itself; csv and json by our reader (Flink's formats), and
        so is a partitioned table (Flink's default partition name is not Spark's)."""
        if source.option("format") != "parquet" or \
                decode_partition_keys(dict(source.options)):
            return None
        return spark.read.schema(schema_ddl).parquet(source.option("path"))


CONNECTOR = Filesystem()


def _json_nested_ok(t: pa.DataType) -> bool:
    if pa.types.is_list(t):
        return _json_nested_ok(t.value_type)
    if pa.types.is_struct(t):
        return all(_json_nested_ok(f.type) for f in t)
    if pa.types.is_map(t):
        return False
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t) or \
        pa.types.is_string(t)


def read_with_metadata(read: SourceRead) -> Iterator[pa.RecordBatch]:
    """A table with METADATA columns, file by file: the files' columns read as without them,
    each file's metadata values added where the table declares them."""
    import os

    meta = {column: key for column, key, _ in decode_metadata(read.options)}
    schema = read.schema
    file_fields = [f for f in schema if f.name not in meta]
    file_schema = pa.schema(file_fields)
    columns = None
    if read.columns is not None:
        wanted = {schema.field(i).name for i in read.columns}
        columns = [j for j, f in enumerate(file_fields) if f.name in wanted]
    for f in list_files(read.options.get("path") or "", read.table):
        one = {**read.options, "path": str(f)}
        st = os.stat(f)
        values = {"file.path": str(f), "file.name": Path(f).name, "file.size": st.st_size,
                  "file.modification-time": st.st_mtime_ns // 1_000_000}
        for batch in read_files(read.table, one, file_schema, read.stats, columns, read.split,
                                read.row_filter, split_files=not read.ordered,
                                cursor=read.cursor):
            arrays, names = [], []
            for field in schema:
                if field.name in meta:
                    arrays.append(pa.array([values[meta[field.name]]] * batch.num_rows,
                                           field.type))
                else:
                    arrays.append(batch.column(field.name))
                names.append(field.name)
            yield pa.RecordBatch.from_arrays(arrays, names=names)
