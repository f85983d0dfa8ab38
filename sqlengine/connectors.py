"""Connector option specs (Flink's names): validated at CREATE TABLE, naming the bad key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlengine.errors import ConnectorError

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema


@dataclass(frozen=True, slots=True)
class OptionSpec:
    key: str
    kind: str = "string"  # string | int | bool | char | enum
    choices: tuple[str, ...] = ()
    required: bool = False


_BOOL = ("true", "false")

CONNECTORS: dict[str, dict[str, OptionSpec]] = {
    "filesystem": {s.key: s for s in (
        OptionSpec("path", required=True),
        OptionSpec("format", "enum", ("csv", "json", "parquet"), required=True),
        OptionSpec("csv.field-delimiter", "char"),
        OptionSpec("csv.quote-character", "char"),
        OptionSpec("csv.disable-quote-character", "bool"),
        OptionSpec("csv.allow-comments", "bool"),
        OptionSpec("csv.ignore-parse-errors", "bool"),
        OptionSpec("csv.null-literal"),
        OptionSpec("csv.escape-character", "char"),
        OptionSpec("csv.write-bom", "bool"),
        OptionSpec("json.ignore-parse-errors", "bool"),
        OptionSpec("json.fail-on-missing-field", "bool"),
        OptionSpec("json.timestamp-format.standard", "enum", ("SQL", "ISO-8601")),
        OptionSpec("sink.parallelism", "int"),
        OptionSpec("source.monitor-interval"),
        OptionSpec("partition.default-name"),
        OptionSpec("scan.parallelism", "int"),
        OptionSpec("scan.watermark.idle-timeout"),
    )},
    "datagen": {s.key: s for s in (
        OptionSpec("rows-per-second", "int"),
        OptionSpec("number-of-rows", "int"),
        OptionSpec("scan.parallelism", "int"),
        OptionSpec("seed", "int"),  # sqlengine extension: a fixed seed for repeatable data
        OptionSpec("scan.watermark.idle-timeout"),
    )},
    "nexmark": {s.key: s for s in (
        OptionSpec("nexmark.table", "enum", ("person", "auction", "bid"), required=True),
        OptionSpec("nexmark.events", "int"),
        OptionSpec("nexmark.events-per-second", "int"),
        OptionSpec("nexmark.seed", "int"),
        OptionSpec("nexmark.out-of-orderness", "int"),
        OptionSpec("rows-per-second", "int"),
        OptionSpec("scan.parallelism", "int"),
        OptionSpec("scan.watermark.idle-timeout"),
    )},
    "print": {s.key: s for s in (
        OptionSpec("print-identifier"),
        OptionSpec("standard-error", "bool"),
        OptionSpec("sink.parallelism", "int"),
    )},
    "socket": {s.key: s for s in (
        OptionSpec("hostname"),
        OptionSpec("port", "int", required=True),
        OptionSpec("format", "enum", ("csv", "json")),
        OptionSpec("byte-delimiter", "int"),
        OptionSpec("socket.mode", "enum", ("connect", "listen")),
        OptionSpec("socket.max-retries"),  # an integer; -1 retries for ever
        OptionSpec("socket.retry-delay"),
        OptionSpec("csv.field-delimiter", "char"),
        OptionSpec("csv.quote-character", "char"),
        OptionSpec("csv.ignore-parse-errors", "bool"),
        OptionSpec("csv.null-literal"),
        OptionSpec("json.ignore-parse-errors", "bool"),
        OptionSpec("scan.watermark.idle-timeout"),
    )},
    "blackhole": {},
    "memory": {},  # in-memory data registered through the API
}

_FIELD_OPTION = re.compile(r"^fields\.(?P<col>.+)\.(?P<opt>kind|min|max|max-past|length|start|"
                           r"end|null-rate|seed)$")


def validate(table_name: str, options: dict[str, str], schema: Schema,
             offsets: dict[str, int] | None = None, script: str | None = None) -> None:
    """Check a table's WITH options against its connector's spec.

    Raises:
        ConnectorError: naming the option key (and its place in the script when known).
    """
    from sqlengine.errors import Span

    def fail(key: str, msg: str) -> ConnectorError:
        span = None
        if offsets and key in offsets and script is not None:
            span = Span.from_offset(script, offsets[key], offsets[key] + len(key) + 2)
        return ConnectorError(f"table {table_name!r}: {msg}", span=span, sql=script)

    connector = options.get("connector")
    if connector is None:
        raise fail("connector", "option 'connector' is missing (one of: "
                   f"{', '.join(sorted(k for k in CONNECTORS if k != 'memory'))})")
    if connector not in CONNECTORS:
        raise fail("connector", f"unknown connector {connector!r} in option 'connector' "
                   f"(known: {', '.join(sorted(k for k in CONNECTORS if k != 'memory'))})")
    spec = CONNECTORS[connector]
    columns = {f.name for f in schema.fields}
    for key, value in options.items():
        if key == "connector":
            continue
        m = _FIELD_OPTION.match(key)
        if connector == "datagen" and m:
            if m.group("col") not in columns:
                raise fail(key, f"option {key!r} names unknown column {m.group('col')!r}")
            if m.group("opt") == "kind" and value not in ("random", "sequence"):
                raise fail(key, f"option {key!r} must be 'random' or 'sequence', got {value!r}")
            if m.group("opt") in ("min", "max", "start", "end", "null-rate", "length", "seed"):
                try:
                    float(value)
                except ValueError:
                    raise fail(key, f"option {key!r} must be a number, got {value!r}") from None
            continue
        opt = spec.get(key)
        if opt is None:
            known = ", ".join(sorted(spec)) or "none"
            raise fail(key, f"unsupported option {key!r} for connector {connector!r} "
                       f"(supported: {known})")
        _check_value(opt, value, fail)
    for opt in spec.values():
        if opt.required and opt.key not in options:
            raise fail("connector", f"connector {connector!r} needs option {opt.key!r}")
    if connector == "filesystem" and "source.monitor-interval" in options:
        raise fail("source.monitor-interval", "option 'source.monitor-interval' (continuous "
                   "directory monitoring) is not supported yet")


def _check_value(opt: OptionSpec, value: str, fail: object) -> None:
    bad = None
    if opt.kind == "int":
        try:
            if int(value) < 0:
                bad = "a non-negative integer"
        except ValueError:
            bad = "an integer"
    elif opt.kind == "bool" and value.lower() not in _BOOL:
        bad = "'true' or 'false'"
    elif opt.kind == "char" and len(value.encode("utf-8").decode("unicode_escape")) != 1:
        bad = "a single character"
    elif opt.kind == "enum" and value not in opt.choices:
        bad = "one of " + ", ".join(repr(c) for c in opt.choices)
    if bad is not None:
        raise fail(opt.key, f"option {opt.key!r} must be {bad}, got {value!r}")  # type: ignore[operator]


def is_bounded(table: TableDef) -> bool:
    """Whether scanning the table ends (files and in-memory data do; datagen only with a limit)."""
    if table.connector == "datagen":
        if table.option("number-of-rows") is not None:
            return True
        # A sequence field bounds the source: it ends when the sequence does (as in Flink).
        return any(k.endswith(".kind") and v == "sequence" for k, v in table.options)
    if table.connector == "memory":
        return bool(getattr(table.data, "bounded", True))
    if table.connector == "nexmark":
        return table.option("nexmark.events") is not None
    return table.connector == "filesystem"


def is_sink_connector(connector: str) -> bool:
    """Connectors that can be written by INSERT INTO."""
    return connector in ("filesystem", "print", "blackhole")


def is_source_connector(connector: str) -> bool:
    """Connectors that can be read by a query."""
    return connector in ("filesystem", "datagen", "memory", "nexmark", "socket")
