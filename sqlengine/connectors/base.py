"""The Connector base class: what every layer asks a connector (Flink's DynamicTableFactory,
ScanTableSource and DynamicTableSink in one object).

A connector module defines one subclass and registers one instance in
``sqlengine/connectors/__init__.py``. The front end asks it for its options (validated at
CREATE TABLE, naming the bad key), boundedness and whether it is a source or a sink; the
optimizer for statistics and how its source splits over parallel subtasks; the runtime for the
source reader and the sink writer; the Spark runtime for an optional Spark reader.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import pyarrow as pa

from sqlengine.errors import ConnectorError, NotSupportedError, SqlEngineError
from sqlengine.options import parse_duration, parse_size
from sqlengine.types import is_nested, type_name

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema, SourceSpec
    from sqlengine.statistics import Estimate

Fail = Callable[[str, str], ConnectorError]  # (option key, message) -> the error to raise
# Keeps the rows of a batch (laid out as the table's columns) that the query's pushed-down
# filters reading only ``columns`` (table positions) accept: partition pruning's test.
RowFilter = Callable[[pa.RecordBatch, frozenset[int]], np.ndarray]

# PARTITIONED BY's columns reach the connector among the table's options under this internal
# key (as INSERT OVERWRITE's '$overwrite'); users cannot set it (it fails validation).
PARTITION_KEYS_OPTION = "$partition-keys"
# A changelog source's batches end with this column of row kinds (0 +I, 1 -U, 2 +U, 3 -D), as
# the runtime's batches do (runtime.elements.ROWKIND).
CHANGELOG_COLUMN = "$row_kind"


def encode_partition_keys(keys: tuple[str, ...]) -> str:
    return json.dumps(list(keys))


def decode_partition_keys(options: dict[str, str]) -> tuple[str, ...]:
    """The table's partition columns (PARTITIONED BY), () when it has none."""
    text = options.get(PARTITION_KEYS_OPTION)
    return tuple(json.loads(text)) if text else ()

# The table's PRIMARY KEY columns as JSON (what an upsert sink keys on).
PRIMARY_KEY_OPTION = "$primary-key"
# 'table.exec.sink.not-null-enforcer' = 'DROP' reaches a sink among its table's options so
# (the sink operator drops a row with a NULL in a NOT NULL column instead of failing).
NOT_NULL_ENFORCER = "$not-null-enforcer"
# METADATA columns: [(column, key, virtual)] as JSON under this engine-only option.
METADATA_OPTION = "$metadata"
# CHAR(n) / VARCHAR(n) columns' lengths, JSON {column: [type name, n]} (datagen's strings)
LENGTHS_OPTION = "$declared-lengths"


def encode_metadata(columns: tuple[tuple[str, str, bool], ...]) -> str:
    return json.dumps([list(c) for c in columns])


def decode_metadata(options: dict[str, str]) -> tuple[tuple[str, str, bool], ...]:
    """The table's METADATA columns as (column, key, virtual); () when it has none."""
    text = options.get(METADATA_OPTION)
    return tuple((c, k, bool(v)) for c, k, v in json.loads(text)) if text else ()


_BOOL = ("true", "false")
_JAVA_ESCAPE = re.compile(r"\\(u+[0-9a-fA-F]{4}|[0-3]?[0-7]{1,2}|[btnfr\"'\\])")
_JAVA_CHARS = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "'": "'",
               "\\": "\\"}


def java_unescape(value: str) -> str:
    """``value`` with Java's escapes read (``'\\t'`` a tab, ``'\\u0001'``), as Flink's
    StringEscapeUtils.unescapeJava reads a delimiter option; any other backslash, a lone one
    included, is itself."""
    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] == "u":
            return chr(int(code.lstrip("u"), 16))
        if code[0].isdigit():
            return chr(int(code, 8))
        return _JAVA_CHARS[code]

    return _JAVA_ESCAPE.sub(one, value)


class Clock(Protocol):
    """What a throttled source needs of a clock (the ``time`` module, or a test's fake)."""

    def monotonic(self) -> float: ...

    def sleep(self, seconds: float, /) -> None: ...


@dataclass(frozen=True, slots=True)
class OptionSpec:
    key: str
    # string | int | positive (>= 1) | port (0..65535) | bool | char | enum | path (not
    # empty) | duration | size (a positive memory size: '128 mb')
    kind: str = "string"
    choices: tuple[str, ...] = ()
    required: bool = False

    def check(self, value: str, fail: Fail) -> None:
        """Raises ``fail(key, ...)`` when ``value`` is not of this option's kind."""
        bad = None
        if self.kind in ("int", "port", "positive"):
            try:
                if self.kind == "positive" and int(value) < 1:
                    bad = "a positive integer"
                elif int(value) < 0:
                    bad = "a non-negative integer"
                elif self.kind == "port" and int(value) > 65535:
                    bad = "a port number (0 to 65535)"
            except ValueError:
                bad = "an integer"
        elif self.kind == "bool" and value.lower() not in _BOOL:
            bad = "'true' or 'false'"
        elif self.kind == "char" and len(java_unescape(value)) != 1:
            bad = "a single character"
        elif self.kind == "duration":
            try:
                parse_duration(value, self.key)
            except SqlEngineError:
                bad = "a duration such as '10 s' or '1 min'"
        elif self.kind == "size":
            try:
                if parse_size(value, self.key) < 1:
                    bad = "a positive size such as '128 mb'"
            except SqlEngineError:
                bad = "a size such as '128 mb' or '1024 b'"
        elif self.kind == "path" and not value.strip():
            bad = "a path, not empty"  # (it read and wrote the working directory)
        elif self.kind == "enum" and value not in self.choices:
            bad = "one of " + ", ".join(repr(c) for c in self.choices)
        if bad is not None:
            raise fail(self.key, f"option {self.key!r} must be {bad}, got {value!r}")


@dataclass
class ReadStats:
    """Rows skipped under '<format>.ignore-parse-errors' (reported by the API and the CLI)."""

    skipped: int = 0
    files: int = 0
    partitions_pruned: int = 0  # partitions of a PARTITIONED BY table the filters skipped
    skipped_at: list[str] = field(default_factory=list)


class SourceCursor:
    """Where a source subtask's reading stands, for checkpoints (Flink's split state).

    A reader that can resume sets ``position[split]`` after each batch it yields, to a
    picklable value meaning "what follows that batch" ('done' once a split is read to its
    end), keyed by split: a file, a parquet row group, a stride of generated chunks. A restored
    job hands the union of the old subtasks' positions in as ``start``: each split resumes
    where its position says, whichever subtask reads it now (so a job can be restored at
    another parallelism where the splits do not depend on it)."""

    def __init__(self, start: dict[str, object] | None = None) -> None:
        self.start: dict[str, object] = dict(start or {})
        # (only the splits this subtask reads: restored positions are merged across
        # subtasks, so one subtask's stale copy must not overwrite another's progress)
        self.position: dict[str, object] = {}
        # Told the positions a completed checkpoint holds (a reader acknowledging its
        # broker's messages up to them, as Flink's sources commit offsets on completion).
        self.on_complete: list[Callable[[dict[str, object]], None]] = []
        self._barriers: dict[int, dict[str, object]] = {}

    def resume(self, split: str) -> object | None:
        """The restored position of ``split`` (None: read it from its beginning)."""
        return self.start.get(split)

    def barrier(self, checkpoint: int) -> None:
        """A checkpoint's barrier: the positions it holds are kept until it completes."""
        if self.on_complete:
            self._barriers[checkpoint] = dict(self.position)

    def completed(self, checkpoint: int) -> None:
        """Checkpoint ``checkpoint`` completed: the listeners are told its positions (and
        those of earlier checkpoints are dropped: a later one covers them)."""
        done = [c for c in self._barriers if c <= checkpoint]
        if not done:
            return
        position = self._barriers[max(done)]
        for c in done:
            del self._barriers[c]
        for listener in self.on_complete:
            listener(position)


DONE = "done"  # a split's position once it has been read to its end


def strided_done(start: dict[str, object], prefix: str, unit: int) -> bool:
    """Whether ``unit`` (a chunk, a batch) of a source whose units go round-robin to its
    subtasks (unit u to subtask u mod parallelism) was read before the checkpoint: positions
    ``{f"{prefix}:{i}/{n}": next unit of subtask i of n}`` say so whatever the parallelism was."""
    for key, nxt in start.items():
        if not key.startswith(prefix + ":"):
            continue
        i, n = (int(x) for x in key[len(prefix) + 1:].split("/"))
        if unit % n == i:
            return unit < int(nxt)  # type: ignore[call-overload]
    return False


@dataclass(frozen=True, slots=True)
class SourceRead:
    """One subtask's read of a table: its share ``split`` = (subtask, parallelism) of the
    input, the columns it needs (None: all), registered data (the memory connector) and the
    stats the reader reports skipped rows into."""

    table: str
    options: dict[str, str]
    schema: pa.Schema
    stats: ReadStats
    split: tuple[int, int] = (0, 1)
    columns: list[int] | None = None
    data: object | None = None
    row_filter: RowFilter | None = None  # the pushed filters, for pruning partitions
    # Whether rows must come in the input's order (event time with watermarks: a file split
    # between subtasks would change which rows are late), so a file is not split.
    ordered: bool = False
    # Where a checkpointed job resumes, and where the reader records its position (None: the
    # job does not checkpoint).
    cursor: SourceCursor | None = None
    # The query's filters on the table (bound expressions on its column positions; every one
    # is applied to the rows read all the same): what a connector may push into its reads.
    filters: tuple[Any, ...] = ()


class SinkWriter:
    """Writes a sink's rows: ``write`` per batch (its data columns, and the row kinds' short
    names, +I / -U / +U / -D, when the input is a changelog), ``close`` at the end.

    In a checkpointing job (Flink's two-phase commit sink): ``prepare_commit`` at a
    checkpoint barrier readies what was written since the last one to be committed when that
    checkpoint completes (``commit``), ``snapshot`` is the writer's state in the checkpoint,
    ``restore`` resumes from it (committing what the checkpoint covered, discarding what was
    written after it). ``guarantee`` says what a restored job promises of the sink's rows."""

    name = "Sink"
    # 'exactly-once' (rows reach readers only through completed checkpoints), 'at-least-once'
    # (rows written after the last checkpoint are written again after a restore), or None:
    # the sink cannot take part in checkpoints.
    guarantee: ClassVar[str | None] = "at-least-once"

    def __init__(self) -> None:
        self.rows = 0

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        self.rows += batch.num_rows

    def watermark(self, timestamp: int) -> None:
        """The sink's input watermark advanced to ``timestamp`` (ms)."""
        return

    def end_input(self) -> None:
        """Every row has been written (a committing sink readies the last ones here)."""
        return

    def prepare_commit(self, checkpoint: int) -> None:
        return None

    def snapshot(self) -> object:
        return {"rows": self.rows}

    def commit(self, checkpoint: int) -> None:
        return None

    def set_tokens(self, token: str | None, stale: str) -> None:
        """The name token of this job's files (None: the writer's own) and a comma list of
        earlier attempts' tokens whose uncommitted files may be deleted."""
        return

    def restore(self, states: list[object], subtask: int, parallelism: int) -> None:
        """Resume from the states the old subtasks wrote (one each; the job may have had
        another parallelism)."""
        if parallelism == len(states):
            state = states[subtask]
            if isinstance(state, dict):
                self.rows = int(state.get("rows", 0))

    def close(self) -> None:
        return None


class LookupFunction(Protocol):
    """What ``Connector.open_lookup`` returns."""

    def lookup(self, keys: pa.Table) -> pa.Table: ...

    def close(self) -> None: ...


class Connector:
    """A connector: its options and capabilities, and the hooks each layer calls."""

    name: ClassVar[str] = ""
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    is_source: ClassVar[bool] = False
    is_sink: ClassVar[bool] = False
    listed: ClassVar[bool] = True  # named in CREATE TABLE's error messages and completion
    parallel_source: ClassVar[bool] = True  # its source splits over parallel subtasks

    def source_shares(self, source: SourceSpec, ordered: bool) -> int | None:
        """How many subtasks can get a share of the table's input (None: any number). The
        source then runs at no more subtasks than that: a subtask without a share would hold
        the watermark of the tasks it feeds at its start until its end reached them, so what
        is late would depend on timing. ``ordered``: the rows keep their order (event time or
        a changelog), so a file is not split between subtasks."""
        del source, ordered
        return None

    def parallel_sink(self, options: dict[str, str]) -> bool:
        """Whether the sink of a table with these options may run as parallel subtasks, each
        writing its share (as Flink's sinks run at the default parallelism); one subtask
        otherwise."""
        del options
        return False
    sink_accepts_updates: ClassVar[bool] = True  # its sink can consume a changelog
    supports_overwrite: ClassVar[bool] = False  # INSERT OVERWRITE
    supports_partitioning: ClassVar[bool] = False  # PARTITIONED BY

    def option_specs(self) -> dict[str, OptionSpec]:
        return {s.key: s for s in self.options}

    # -- front end ---------------------------------------------------------------------------
    def check_extra_option(self, key: str, value: str, columns: set[str], fail: Fail) -> bool:
        """Validates a key outside ``options`` (datagen's per-column 'fields.*'); True when
        the key is this connector's."""
        return False

    def check_table(self, options: dict[str, str], fail: Fail) -> None:
        """Checks across options, after each was validated."""
        return

    def check_columns(self, options: dict[str, str], schema: Schema, fail: Fail) -> None:
        """Checks of options against the columns' types (after ``check_table``)."""
        return

    # Whether the connector reads and writes ARRAY / MAP / ROW columns.
    holds_nested = False
    # Whether it takes BITMAP and VARIANT columns (print and blackhole, as Flink's).
    holds_opaque = False

    def accepts_updates(self, options: dict[str, str]) -> bool:
        """Whether this table, as a sink, takes an updating result (+I/-U/+U/-D)."""
        return self.sink_accepts_updates

    def metadata_types(self, options: dict[str, str]) -> dict[str, pa.DataType]:
        """The METADATA keys a table of this connector can read, with their types."""
        return {}

    def changelog(self, options: dict[str, str]) -> bool:
        """Whether the source reads a changelog (+I / -U / +U / -D rows: each batch then ends
        with the CHANGELOG_COLUMN of row kinds) rather than inserts only."""
        return False

    def type_refusal(self, options: dict[str, str], t: pa.DataType) -> str | None:
        """Why a column of type ``t`` cannot be used with these options (None: it can)."""
        if not self.holds_nested and is_nested(t):
            return f"connector {self.name!r} does not support {type_name(t)} columns"
        return None

    def bounded(self, table: TableDef) -> bool:
        """Whether scanning the table ends."""
        return False

    def check_sink(self, options: dict[str, str]) -> None:
        """Checks an INSERT's target before planning (e.g. that a file path is writable)."""
        return

    def sink_refusal(self, options: dict[str, str], streaming: bool, bounded: bool,
                     checkpointing: bool) -> str | None:
        """Why the table's options cannot act in a job of this kind (None: they can):
        ``bounded``, its input ends; ``checkpointing``, it takes checkpoints."""
        del options, streaming, bounded, checkpointing
        return None

    # -- optimizer ---------------------------------------------------------------------------
    def statistics(self, source: SourceSpec, schema: Schema, data: object | None,
                   read: frozenset[str] | None = None) -> Estimate | None:
        """The table's statistics (None: unknown)."""
        return None

    def explain_scan(self, options: dict[str, str], schema: pa.Schema,
                     filters: tuple[Any, ...]) -> str:
        """What EXPLAIN adds to a scan of this table (", key=[...]"): the filters the connector
        pushes into its own reads ("" when none)."""
        return ""

    # -- runtime -----------------------------------------------------------------------------
    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        """Why this source cannot resume from a checkpoint (None: its reader keeps
        ``read.cursor``'s positions, so a restored job reads on exactly where it stood)."""
        return f"the {self.name} connector cannot resume reading from a checkpoint"

    def open_source(self, read: SourceRead) -> Iterator[object]:
        """This subtask's record batches; None when there is no data right now; control
        elements (watermarks) as registered data interleaves them."""
        msg = f"table {read.table!r}: connector {self.name!r} cannot be read"
        raise ConnectorError(msg)

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        msg = f"connector {self.name!r} cannot be written"
        raise NotSupportedError(msg)

    def open_committing_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                             subtask: int) -> SinkWriter | None:
        """In a checkpointing job: a writer that commits its rows when a checkpoint completes
        (exactly-once), or None to write with ``open_sink``'s writer (whose ``guarantee`` then
        says what a restore promises)."""
        return None

    # -- lookups (the dimension side of a processing-time temporal join) ----------------------
    def lookup_refusal(self, options: dict[str, str]) -> str | None:
        """Why a lookup join cannot read this table (None: ``open_lookup`` looks rows up)."""
        return f"the {self.name} connector offers no lookups (jdbc does)"

    def open_lookup(self, source: SourceSpec, schema: pa.Schema, keys: list[str]
                    ) -> LookupFunction:
        """A function from key rows (a table of the ``keys`` columns, distinct, no NULLs) to
        the table's rows with those key values (every column of ``schema``)."""
        raise NotSupportedError(self.lookup_refusal(dict(source.options)) or self.name)

    def spark_read(self, spark: Any, source: SourceSpec, schema_ddl: str) -> Any | None:
        """A Spark DataFrame reading the table (``spark`` a SparkSession; PySpark, if needed,
        imported inside), or None to read it with ``open_source`` and hand it over as Arrow."""
        return None
