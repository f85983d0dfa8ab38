"""The filesystem connector (Flink's): a file or a directory of csv, json, raw, parquet, orc or
avro files, or of a changelog format's messages (debezium-json, canal-json, maxwell-json);
bounded, a source and a sink; its subtasks share the files (parquet: the row groups, orc:
the stripes). The files are handled in filesystem_files.py, the formats in csv_format.py,
json_format.py, raw_format.py, parquet_format.py, orc_format.py, avro_format.py,
debezium_format.py, canal_format.py and maxwell_format.py."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sqlengine.connectors import avro_format, json_format, orc_format, raw_format
from sqlengine.connectors import partition_commit as PC
from sqlengine.connectors.base import (
    Connector,
    Fail,
    OptionSpec,
    SinkWriter,
    SourceRead,
    decode_metadata,
    decode_partition_keys,
)
from sqlengine.connectors.canal_format import nested_refusal
from sqlengine.connectors.filesystem_files import (
    URI_SCHEME,
    FileWriter,
    list_files,
    read_files,
    sink_path_ok,
)
from sqlengine.connectors.filesystem_partitions import PartitionedWriter
from sqlengine.connectors.json_format import TIMESTAMP_STANDARDS
from sqlengine.connectors.parquet_format import parquet_statistics, row_groups
from sqlengine.errors import ConnectorError
from sqlengine.statistics import ColumnStats, Estimate, schema_width
from sqlengine.types import is_nested, type_name

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema, SourceSpec


_NOT_IMPLEMENTED = {
    "source.monitor-interval": "continuous directory monitoring",
    "csv.write-bom": "csv files are written without a byte order mark",
    **{f"{fmt}.{key}": why for fmt in ("canal-json", "maxwell-json") for key, why in (
        ("map-null-key.mode", "writing the format is not supported"),
        ("map-null-key.literal", "writing the format is not supported"),
        ("encode.decimal-as-plain-number", "writing the format is not supported"))},
}

# Formats read as a changelog (+I / -U / +U / -D): read only, in streaming mode.
CHANGELOG_FORMATS = ("debezium-json", "canal-json", "maxwell-json")
FORMATS = ("csv", "json", "parquet", *CHANGELOG_FORMATS, "raw", "orc", "avro")
# Each format's own option prefix: such an option set for another format is refused.
_PREFIXES = {"csv": "csv.", "json": "json.", "raw": "raw.", "orc": "orc.", "avro": "avro.",
             **{f: f + "." for f in CHANGELOG_FORMATS}}


class Filesystem(Connector):
    name = "filesystem"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("path", "path", required=True),
        OptionSpec("format", "enum", FORMATS, required=True),
        OptionSpec("csv.field-delimiter", "char"),
        OptionSpec("csv.quote-character", "char"),
        OptionSpec("csv.disable-quote-character", "bool"),
        OptionSpec("csv.allow-comments", "bool"),
        OptionSpec("csv.ignore-parse-errors", "bool"),
        OptionSpec("csv.null-literal"),
        OptionSpec("csv.escape-character", "char"),
        OptionSpec("json.ignore-parse-errors", "bool"),
        OptionSpec("json.fail-on-missing-field", "bool"),
        OptionSpec("json.encode.decimal-as-plain-number", "bool"),
        *(OptionSpec(f"{fmt}.timestamp-format.standard", "enum", TIMESTAMP_STANDARDS)
          for fmt in ("json", *CHANGELOG_FORMATS)),
        OptionSpec("debezium-json.schema-include", "bool"),
        OptionSpec("debezium-json.ignore-parse-errors", "bool"),
        OptionSpec("canal-json.ignore-parse-errors", "bool"),
        OptionSpec("canal-json.database.include"),
        OptionSpec("canal-json.table.include"),
        OptionSpec("maxwell-json.ignore-parse-errors", "bool"),
        OptionSpec("raw.charset"),
        OptionSpec("raw.endianness", "enum", raw_format.ENDIANNESS),
        OptionSpec("orc.compress"),
        OptionSpec("orc.compress.size", "int"),
        OptionSpec("orc.stripe.size", "int"),
        OptionSpec("orc.row.index.stride", "int"),
        OptionSpec("orc.bloom.filter.columns"),
        OptionSpec("orc.bloom.filter.fpp"),
        OptionSpec("orc.dictionary.key.threshold"),
        OptionSpec("avro.codec", "enum", avro_format.CODECS),
        OptionSpec("avro.timestamp_mapping.legacy", "bool"),
        OptionSpec("sink.parallelism", "positive"),
        OptionSpec("sink.rolling-policy.file-size", "size"),
        OptionSpec("sink.rolling-policy.rollover-interval", "duration"),
        OptionSpec("sink.rolling-policy.inactivity-interval", "duration"),
        OptionSpec("sink.rolling-policy.check-interval", "duration"),
        OptionSpec("partition.default-name"),
        OptionSpec("sink.partition-commit.policy.kind"),
        OptionSpec("sink.partition-commit.trigger", "enum", PC.TRIGGERS),
        OptionSpec("sink.partition-commit.delay", "duration"),
        OptionSpec("sink.partition-commit.success-file.name"),
        OptionSpec("sink.partition-commit.watermark-time-zone"),
        *(OptionSpec(k) for k in PC.CLASS_KEYS),
        OptionSpec("partition.time-extractor.kind"),
        OptionSpec("partition.time-extractor.timestamp-pattern"),
        OptionSpec("partition.time-extractor.timestamp-formatter"),
        OptionSpec("scan.parallelism", "positive"),
        OptionSpec("scan.watermark.idle-timeout", "duration"),
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
        """parquet holds every nested type; orc and avro the types they have; json holds
        ARRAY and ROW of JSON's own values (numbers, strings, booleans); csv none; raw one
        STRING or BYTES."""
        fmt = options.get("format", "")
        if fmt == "raw":
            return raw_format.type_refusal(t)
        if fmt == "orc":
            return orc_format.orc_type_refusal(t)
        if fmt == "avro":
            return avro_format.avro_type_refusal(t)
        if not is_nested(t):
            return None
        if fmt in ("canal-json", "maxwell-json"):
            return nested_refusal(fmt, t)
        if fmt == "parquet":
            return None
        if fmt in ("json", "debezium-json") and _json_nested_ok(t, maps=fmt == "json"):
            return None
        if fmt == "json":
            return (f"the json format holds only ARRAY, ROW and MAP<STRING, ...> of numbers, "
                    f"strings and booleans, not {type_name(t)} (use parquet)")
        if fmt == "debezium-json":
            return (f"the {fmt} format holds only ARRAY and ROW of numbers, strings and "
                    f"booleans, not {type_name(t)} (use parquet)")
        return f"the {fmt} format cannot hold {type_name(t)} (no ARRAY, MAP or ROW; use parquet)"

    def changelog(self, options: dict[str, str]) -> bool:
        return options.get("format") in CHANGELOG_FORMATS

    def check_table(self, options: dict[str, str], fail: Fail) -> None:
        fmt = options.get("format", "")
        for key in options:
            owner = next((f for f, prefix in _PREFIXES.items() if key.startswith(prefix)),
                         None)
            if owner is not None and owner != fmt:
                raise fail(key, f"option {key!r} is an option of the {owner} format; this "
                           f"table's format is {fmt!r}, so it would be ignored")
        for key in ("canal-json.database.include", "canal-json.table.include"):
            if key in options:
                try:
                    re.compile(options[key])
                except re.error as e:
                    raise fail(key, f"option {key!r}: {options[key]!r} is not a regular "
                               f"expression ({e})") from None
        why_json = json_format.options_refusal(options)
        if why_json is not None:
            raise fail("json.ignore-parse-errors", why_json)
        if "raw.charset" in options:
            why = raw_format.charset_refusal(options["raw.charset"])
            if why is not None:
                raise fail("raw.charset", why)
        PC.check_options(options, decode_partition_keys(options), fail)
        if "orc.compress" in options and \
                options["orc.compress"].upper() not in orc_format.COMPRESS_CHOICES:
            raise fail("orc.compress", "option 'orc.compress' must be one of "
                       + ", ".join(repr(c) for c in orc_format.COMPRESS_CHOICES)
                       + f", got {options['orc.compress']!r}")

    def check_columns(self, options: dict[str, str], schema: Schema, fail: Fail) -> None:
        """raw: a single physical column (as Flink's raw format); avro: column names Avro
        can hold; orc: the writer properties that name columns."""
        fmt = options.get("format", "")
        meta = {c for c, _, _ in decode_metadata(options)}
        keys = set(decode_partition_keys(options))
        physical = [f.name for f in schema.fields if f.name not in meta | keys]
        if fmt == "raw" and len(physical) != 1:
            raise fail("format", "the raw format reads and writes a single physical column; "
                       f"this table has {len(physical)}: "
                       + ", ".join(repr(n) for n in physical))
        if fmt == "avro":
            for n in physical:
                why = avro_format.avro_name_refusal(n)
                if why is not None:
                    raise fail("format", f"column {n!r}: {why}")
        if fmt == "orc":
            orc_format.check_orc_options(options, set(physical), fail)

    def bounded(self, table: TableDef) -> bool:
        return True

    def check_sink(self, options: dict[str, str]) -> None:
        fmt = options.get("format")
        if fmt in CHANGELOG_FORMATS:
            msg = (f"writing the {fmt} format is not supported yet (it is read as a "
                   "changelog); write csv, json, raw, parquet, orc or avro")
            raise ConnectorError(msg)
        sink_path_ok(options)

    def statistics(self, source: SourceSpec, schema: Schema, data: object | None,
                   read: frozenset[str] | None = None) -> Estimate | None:
        """Rows and width from parquet metadata, else from the files' sizes."""
        try:
            files = list_files(source.option("path") or "", source.table)
        except Exception:  # (a missing path is the reader's error to give)
            return None
        width = schema_width(schema)
        unknown = tuple(ColumnStats() for _ in schema.fields)
        if source.option("format") == "parquet":
            return parquet_statistics(files, schema.to_arrow(), read)
        if source.option("format") == "orc":
            counts = [orc_format.orc_rows(f) for f in files]
            if None not in counts:
                rows = float(sum(c or 0 for c in counts))
                return Estimate(max(rows, 1.0), width, unknown)
        size = float(sum(Path(f).stat().st_size for f in files))
        text_width = width * 1.5  # digits and separators
        return Estimate(max(size / text_width, 1.0), width, unknown)

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        if decode_partition_keys(read.options):
            return "a PARTITIONED BY table cannot resume reading from a checkpoint yet"
        fmt = read.options.get("format")
        if fmt in CHANGELOG_FORMATS:
            return f"a {fmt} table cannot resume reading from a checkpoint yet"
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

    def source_shares(self, source: SourceSpec, ordered: bool) -> int | None:
        """Parquet's row groups and orc's stripes go to subtasks in turn (file by file with
        METADATA columns); a text or avro file is read by one subtask. (Partitions are not
        counted.)"""
        options = dict(source.options)
        fmt = options.get("format")
        if not ordered or decode_partition_keys(options):
            return None
        try:
            files = list_files(options.get("path") or "", source.table)
            if fmt in ("parquet", "orc"):
                count = row_groups if fmt == "parquet" else orc_format.stripes
                units = [count(f) for f in files]
            else:
                units = [1] * len(files)
        except (ConnectorError, OSError, pa.ArrowException):
            return None  # (reading reports it)
        if decode_metadata(options):  # (each file is read alone, its units shared out)
            return max(units, default=1)
        return max(1, sum(units))

    def parallel_sink(self, options: dict[str, str]) -> bool:
        """Each subtask writes part files of its own (``part-<subtask>-<n>``); a PARTITIONED
        BY table is written by one subtask, and so is a table with a partition commit policy
        (its success file is written when all its parts are)."""
        return not decode_partition_keys(options) and PC.KIND not in options

    def sink_refusal(self, options: dict[str, str], streaming: bool, bounded: bool,
                     checkpointing: bool) -> str | None:
        if PC.KIND not in options or not streaming:
            return None
        if not decode_partition_keys(options):
            return (f"option {PC.KIND!r} commits the partitions of a PARTITIONED BY table in "
                    "streaming mode; this table has none, so it would be ignored (batch mode "
                    "writes the table's success file)")
        if not bounded and not checkpointing:
            return (f"option {PC.KIND!r}: a streaming job commits partitions when its "
                    "checkpoints complete, and this one has no checkpoints and no end, so no "
                    "partition would ever be committed; set 'execution.checkpointing.interval'")
        return None

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        if decode_partition_keys(options):
            return PartitionedWriter(table, options, schema, overwrite)
        return FileWriter(table, options, schema, overwrite)

    def open_committing_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                             subtask: int) -> SinkWriter | None:
        from sqlengine.connectors.filesystem_commit import (
            CommittingFileWriter,
            CommittingPartitionedWriter,
        )

        if decode_partition_keys(options):
            return CommittingPartitionedWriter(table, options, schema, subtask)
        return CommittingFileWriter(table, options, schema, subtask)

    def spark_read(self, spark: Any, source: SourceSpec, schema_ddl: str) -> Any | None:
        """Parquet is read by Spark itself; csv and json by our reader (Flink's formats), and
        so is a partitioned table (Flink's default partition name is not Spark's)."""
        if source.option("format") != "parquet" or \
                decode_partition_keys(dict(source.options)):
            return None
        return spark.read.schema(schema_ddl).parquet(spark_path(source.option("path")))


def spark_path(path: str) -> str:
    """A table's local path for Spark, made absolute against this process's working directory
    (as the native runtime reads and writes it): Spark resolves a relative one against the
    JVM's, fixed when Spark started, so a script run after a ``chdir`` wrote where it did not
    read. A URI (``file:``, ``hdfs://``, ``s3a://`` ...) is Spark's to resolve."""
    if URI_SCHEME.match(path):
        return path
    return os.path.abspath(path)


CONNECTOR = Filesystem()


def _json_nested_ok(t: pa.DataType, maps: bool = False) -> bool:
    """ARRAY and ROW of JSON's own values; ``maps``: MAP<STRING, ...> (a JSON object) too."""
    if pa.types.is_list(t):
        return _json_nested_ok(t.value_type, maps)
    if pa.types.is_struct(t):
        return all(_json_nested_ok(f.type, maps) for f in t)
    if pa.types.is_map(t):
        return maps and pa.types.is_string(t.key_type) and _json_nested_ok(t.item_type, maps)
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
