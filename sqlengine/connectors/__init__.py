"""The connector registry: each connector (a module of this package) registered once, by its
Flink name, and asked by every layer (``get(name)``) instead of comparing names.

Adding a connector is adding its module: one that ends with ``CONNECTOR = MyConnector()`` (a
``Connector`` subclass, see base.py) is registered when this package is first imported.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import TYPE_CHECKING

import pyarrow as pa

from sqlengine.connectors.base import (
    LENGTHS_OPTION,
    METADATA_OPTION,
    NOT_NULL_ENFORCER,
    PARTITION_KEYS_OPTION,
    PRIMARY_KEY_OPTION,
    Connector,
    Fail,
    OptionSpec,
    ReadStats,
    SinkWriter,
    SourceCursor,
    SourceRead,
    decode_metadata,
    decode_partition_keys,
    encode_metadata,
    encode_partition_keys,
)
from sqlengine.errors import ConnectorError, Span

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema

__all__ = ["LENGTHS_OPTION", "METADATA_OPTION", "NOT_NULL_ENFORCER", "PARTITION_KEYS_OPTION",
           "PRIMARY_KEY_OPTION",
           "Connector", "OptionSpec", "ReadStats", "SinkWriter", "SourceCursor", "SourceRead",
           "decode_metadata", "decode_partition_keys", "encode_metadata", "encode_partition_keys",
           "find", "get", "is_bounded", "is_sink_connector", "is_source_connector", "names",
           "validate"]



def _discover() -> dict[str, Connector]:
    """The ``CONNECTOR`` of each module of this package, by name."""
    found: dict[str, Connector] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        connector = getattr(module, "CONNECTOR", None)
        if isinstance(connector, Connector):
            if connector.name in found:
                msg = f"connector {connector.name!r} is registered twice ({info.name})"
                raise ImportError(msg)
            found[connector.name] = connector
    return found


@functools.cache
def _by_name() -> dict[str, Connector]:
    """Every connector (imports every connector module: for listing their names)."""
    return _discover()


# The module of each connector: a lookup by name imports that module only (importing all of
# them, drivers and clients included, took a noticeable share of a short job's start-up).
# tests/connectors/test_registry.py checks it against _discover().
MODULES = {"blackhole": "blackhole", "datagen": "datagen", "filesystem": "filesystem",
           "jdbc": "jdbc", "memory": "memory", "mqtt": "mqtt", "nats": "nats",
           "nexmark": "nexmark", "print": "print", "socket": "socket"}


@functools.cache
def _named(name: str) -> Connector | None:
    module = MODULES.get(name)
    if module is None:
        return None
    connector = getattr(importlib.import_module(f"{__name__}.{module}"), "CONNECTOR", None)
    return connector if isinstance(connector, Connector) and connector.name == name else None


def find(name: str) -> Connector | None:
    """The connector called ``name`` (None for an unknown name, or the API's 'collect')."""
    if name == "collect":  # the result of a query: no module to load
        return None
    return _named(name)


def get(name: str) -> Connector:
    """The connector called ``name``.

    Raises:
        ConnectorError: for an unknown name.
    """
    found = _named(name)
    if found is None:
        msg = f"unknown connector {name!r} (known: {', '.join(names())})"
        raise ConnectorError(msg)
    return found


def names(listed_only: bool = True) -> list[str]:
    """The connectors' names, sorted (without 'memory', which the API registers, unless
    ``listed_only`` is False)."""
    return sorted(c.name for c in _by_name().values() if c.listed or not listed_only)


def validate(table_name: str, options: dict[str, str], schema: Schema,
             offsets: dict[str, int] | None = None, script: str | None = None) -> None:
    """Check a table's WITH options against its connector's spec.

    Raises:
        ConnectorError: naming the option key (and its place in the script when known).
    """

    def fail(key: str, msg: str) -> ConnectorError:
        span = None
        if offsets and key in offsets and script is not None:
            span = Span.from_offset(script, offsets[key], offsets[key] + len(key) + 2)
        return ConnectorError(f"table {table_name!r}: {msg}", span=span, sql=script)

    name = options.get("connector")
    if name is None:
        other = next((k for k in options if k.lower() == "connector"), None)
        if other is not None:  # (option keys are case-sensitive, as Flink's)
            raise fail(other, f"option 'connector' is missing: keys are case-sensitive, "
                       f"{other!r} is not 'connector'")
        raise fail("connector", "option 'connector' is missing (one of: "
                   f"{', '.join(names())})")
    connector = _named(name)
    if connector is None:
        raise fail("connector", f"unknown connector {name!r} in option 'connector' "
                   f"(known: {', '.join(names())})")
    spec = connector.option_specs()
    columns = {f.name for f in schema.fields}
    for key, value in options.items():
        if key.startswith("$"):
            continue  # (the engine's own keys: users cannot write them, see ddl and hints)
        if key == EMIT_STRATEGY and "scan.watermark.idle-timeout" in spec:
            _check_emit_strategy(value, fail)
            continue
        if key == "connector" or connector.check_extra_option(key, value, columns, fail):
            continue
        opt = spec.get(key)
        if opt is None:
            import difflib

            near = [k for k in spec if k.lower() == key.lower()] or \
                difflib.get_close_matches(key, list(spec), n=1, cutoff=0.75)
            if near:  # (keys are case-sensitive, as Flink's)
                raise fail(key, f"unsupported option {key!r} for connector {name!r}; did you "
                           f"mean {near[0]!r}?")
            known = ", ".join(sorted(spec)) or "none"
            raise fail(key, f"unsupported option {key!r} for connector {name!r} "
                       f"(supported: {known})")
        opt.check(value, fail)
    for opt in spec.values():
        if opt.required and opt.key not in options:
            raise fail("connector", f"connector {name!r} needs option {opt.key!r}")
    connector.check_table(options, fail)
    connector.check_columns(options, schema, fail)
    _check_metadata(connector, table_name, options, schema, script)
    from sqlengine.types import contains_opaque, contains_variant

    for f in schema.fields:
        why = connector.type_refusal(options, f.type)
        if why is None and contains_opaque(f.type) and not connector.holds_opaque:
            # (as Flink 2.3: its csv, json, raw and datagen refuse a BITMAP or a VARIANT,
            # print and blackhole take one)
            why = f"connector {name!r} does not support " + (
                "VARIANT columns (print and blackhole do; read a STRING column and "
                "TRY_PARSE_JSON it, write JSON_STRING of it)" if contains_variant(f.type)
                else "BITMAP columns (print and blackhole do; write BITMAP_TO_BYTES or "
                "BITMAP_TO_STRING of it instead)")
        if why is not None:
            raise ConnectorError(f"table {table_name!r}: column {f.name!r}: {why}",
                                 span=_column_place(script, f.name), sql=script)


def _check_metadata(connector: Connector, table_name: str, options: dict[str, str],
                    schema: Schema, script: str | None) -> None:
    """METADATA columns: keys the connector has, of a type it can give."""
    from sqlengine.connectors.base import decode_metadata
    from sqlengine.types import type_name

    known = connector.metadata_types(options)
    types = {f.name: f.type for f in schema.fields}
    for column, key, _virtual in decode_metadata(options):
        span = _column_place(script, column, f"'{key}'" if key != column else None)
        if key not in known:
            have = ", ".join(repr(k) for k in known) or "none"
            raise ConnectorError(f"table {table_name!r}: column {column!r}: connector "
                                 f"{connector.name!r} has no metadata {key!r} (it has: "
                                 f"{have})", span=span, sql=script)
        want, got = known[key], types[column]
        same = got == want or (pa.types.is_timestamp(got) and pa.types.is_timestamp(want))
        if not same:
            raise ConnectorError(f"table {table_name!r}: column {column!r}: metadata {key!r} "
                                 f"is a {type_name(want)}, not {type_name(got)}", span=span,
                                 sql=script)


def _column_place(script: str | None, column: str, then: str | None = None) -> Span | None:
    """Where a CREATE TABLE's ``script`` defines ``column`` (the first place after its
    column list opens where the name is followed by white space), or the text ``then``
    after it (a METADATA key); the statement's start when neither is found."""
    import re

    if not script:
        return None
    opening = script.find("(")
    found = re.compile(rf"(?<![\w`']){re.escape(column)}(?=\s)|`{re.escape(column)}`",
                       re.IGNORECASE).search(script, max(opening, 0))
    if found is None:
        return Span.from_offset(script, 0)
    if then is not None:
        at = script.find(then, found.end())
        if at >= 0:
            return Span.from_offset(script, at, at + len(then))
    return Span.from_offset(script, found.start(), found.end())


EMIT_STRATEGY = "scan.watermark.emit.strategy"


def _check_emit_strategy(value: str, fail: Fail) -> None:
    """Flink's watermark emit strategy: 'on-event' (a watermark after every row) or
    'on-periodic' (Flink's default: here at each batch the source reads; see the source
    driver)."""
    if value not in ("on-event", "on-periodic"):
        raise fail(EMIT_STRATEGY, f"option {EMIT_STRATEGY!r} takes 'on-event' or "
                   f"'on-periodic', not {value!r}")


def is_bounded(table: TableDef) -> bool:
    """Whether scanning the table ends (files and in-memory data do; datagen only with a limit)."""
    found = _named(table.connector)
    return found is not None and found.bounded(table)


def is_changelog(table: TableDef) -> bool:
    """Whether scanning the table reads a changelog (a CDC format such as debezium-json)."""
    found = _named(table.connector)
    return found is not None and found.changelog(dict(table.options))


def is_sink_connector(connector: str) -> bool:
    """Connectors that can be written by INSERT INTO."""
    found = _named(connector)
    return found is not None and found.is_sink


def is_source_connector(connector: str) -> bool:
    """Connectors that can be read by a query."""
    found = _named(connector)
    return found is not None and found.is_source
