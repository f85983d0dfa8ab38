"""The canal-json format (read): Canal's messages, one JSON object per line, as a changelog
(as Flink's CanalJsonDeserializationSchema). ``type`` INSERT gives +I of each row of
``data``; DELETE -D of each; UPDATE, per row i, -U of ``old[i]`` with the fields it does not
list taken from ``data[i]`` (Canal lists only the changed fields' old values, a null one
too), then +U of
``data[i]``; CREATE (a DDL message) is skipped; any other type is an error (or skipped with
'canal-json.ignore-parse-errors'). 'canal-json.database.include' / 'table.include' keep only
the messages whose ``database`` / ``table`` fully match the regular expression.

Canal writes every value as a JSON string ("id": "111"): values are read as their text and
converted as Flink's json format converts a string (json_values.py: a whole number for an
INT, Java's parseBoolean for a BOOLEAN, dates and times read strictly); a BYTES column is
read as base64 (as Flink's). A message with a value that does not convert is an error naming
file:line and the value; with 'canal-json.ignore-parse-errors' = 'true' the value is NULL
and the message kept, as Flink's inner json format sets it.

The shared machinery (lines parsed to events, events to typed rows with their row kinds) is
used by maxwell_format.py too."""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa

from sqlengine import types as T
from sqlengine.connectors.base import ReadStats
from sqlengine.connectors.debezium_format import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    with_kinds,
)
from sqlengine.connectors.json_format import _convert_text_types, iso_timestamps
from sqlengine.connectors.text_rows import BATCH_ROWS, valid_utf8
from sqlengine.errors import ConnectorError

Row = dict[str, object]
# One message's rows with their kinds (an empty list: the message is skipped).
Events = Callable[[object], list[tuple[int, Row]]]


class BadMessage(Exception):
    """A message that is not one the format can read (the text says why)."""


def read_canal(path: Path | str, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, data: bytes | None = None,
               first_line: int = 1) -> Iterator[pa.RecordBatch]:
    db = options.get("canal-json.database.include")
    tb = options.get("canal-json.table.include")
    db_re = re.compile(db) if db is not None else None
    tb_re = re.compile(tb) if tb is not None else None
    names = schema.names

    def events(obj: object) -> list[tuple[int, Row]]:
        if not isinstance(obj, dict):
            raise BadMessage("not a JSON object")
        for key, pattern in (("database", db_re), ("table", tb_re)):
            if pattern is None:
                continue
            value = obj.get(key)
            if value is None:
                raise BadMessage(f"no {key!r} field to match 'canal-json.{key}.include'")
            if pattern.fullmatch(str(value)) is None:
                return []
        kind = obj.get("type")
        if kind == "CREATE":
            return []
        if kind not in ("INSERT", "UPDATE", "DELETE"):
            raise BadMessage(f"unknown Canal \"type\" {kind!r} (expected 'INSERT', 'UPDATE', "
                             "'DELETE' or 'CREATE')")
        data = _rows(obj, "data")
        if kind == "INSERT":
            return [(INSERT, r) for r in data]
        if kind == "DELETE":
            return [(DELETE, r) for r in data]
        old = _rows(obj, "old")
        if len(old) < len(data):
            raise BadMessage(f"an UPDATE with {len(data)} rows in \"data\" and {len(old)} in "
                             "\"old\"")
        out: list[tuple[int, Row]] = []
        for after, before in zip(data, old):
            # (a field "old" lists, with null too, was changed from that value: only an
            # absent one is taken from "data", as Flink's findValue(name) == null tests)
            merged = {n: before[n] if n in before else after.get(n) for n in names}
            out += [(UPDATE_BEFORE, merged), (UPDATE_AFTER, after)]
        return out

    yield from read_changelog_json(path, options, schema, stats, data, first_line,
                                   "canal-json", events)


def _rows(obj: dict, key: str) -> list[Row]:
    rows = obj.get(key)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BadMessage(f"{key!r} is not an array of rows")
    return rows


def read_changelog_json(path: Path | str, options: dict[str, str], schema: pa.Schema,
                        stats: ReadStats, data: bytes | None, first_line: int, fmt: str,
                        events: Events) -> Iterator[pa.RecordBatch]:
    """The rows the messages of ``data`` (one per line) give by ``events``, typed as the
    table's columns, with their row kinds as the changelog column."""
    option = f"{fmt}.ignore-parse-errors"
    ignore = options.get(option, "false").lower() == "true"
    if data is None:
        data = Path(path).read_bytes()
    data = valid_utf8(path, data, ignore, stats, first_line, fmt)
    names = schema.names
    binary = {f.name for f in schema if pa.types.is_binary(f.type)}
    columns: list[list[object]] = [[] for _ in names]
    kinds: list[int] = []
    event_of: list[int] = []
    lines: list[int] = []

    def skip(no: int) -> None:
        stats.skipped += 1
        if len(stats.skipped_at) < 10:
            stats.skipped_at.append(f"{path}:{no}")

    for no, raw in enumerate(data.split(b"\n"), start=first_line):
        if not raw.strip():
            continue
        try:
            rows = events(json.loads(raw, parse_float=Decimal))
            values = [[_text(r.get(n), n in binary, n) for n in names] for _, r in rows]
        except (ValueError, BadMessage) as e:
            if ignore:
                skip(no)
                continue
            text = raw.decode("utf-8", errors="replace").strip()
            if len(text) > 200:
                text = text[:200] + "..."
            msg = (f"{path}:{no}: cannot read the {fmt} message {text!r}: {e}; set "
                   f"'{option}' = 'true' to skip such messages")
            raise ConnectorError(msg) from None
        event = len(lines)
        lines.append(no)
        for (kind, _), row in zip(rows, values):
            kinds.append(kind)
            event_of.append(event)
            for c, v in zip(columns, row):
                c.append(v)
    text_schema = pa.schema([pa.field(n, pa.binary() if n in binary else pa.string())
                             for n in names])
    table = pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, text_schema)],
                                 schema=text_schema)
    # (under ignore-parse-errors a value that does not read as its type is NULL, its
    # message kept, as Flink's inner json format sets it)
    converted, ok, detail = _convert_text_types(table, schema, ignore,
                                                iso_timestamps(options, fmt))
    events_of = np.asarray(event_of, dtype=np.int64)
    row_kinds = np.asarray(kinds, dtype=np.int8)
    if not ok.all():
        bad = np.flatnonzero(~ok)
        if not ignore:
            i = int(bad[0])
            what = "a value does not match its column type"
            if detail is not None and detail[0] == i:
                what = f"column {detail[1]!r}: {detail[2]!r} is not a valid {detail[3]}"
            msg = (f"{path}:{lines[events_of[i]]}: cannot parse row as the table's columns "
                   f"({what}); set '{option}' = 'true' to skip such messages")
            raise ConnectorError(msg)
        # (a message is read whole or skipped whole: its other rows go too)
        bad_events = np.unique(events_of[bad])
        for e in bad_events:
            skip(lines[int(e)])
        keep = ~np.isin(events_of, bad_events)
        converted = converted.filter(pa.array(keep[ok]))
        row_kinds = row_kinds[keep]
    batches = (b for b in converted.to_batches(max_chunksize=BATCH_ROWS) if b.num_rows)
    yield from with_kinds(batches, row_kinds)


def _text(v: object, binary: bool, name: str) -> object:
    """A JSON value as the text it is read from (a BYTES column's as base64-decoded bytes)."""
    if v is None:
        return None
    if binary:
        if not isinstance(v, str):
            raise BadMessage(f"column {name!r}: {json.dumps(v, default=str)} is not a base64 "
                             "string (BYTES)")
        try:
            return base64.b64decode(v, validate=True)
        except binascii.Error:
            raise BadMessage(f"column {name!r}: {v!r} is not base64 (BYTES)") from None
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | Decimal):
        return str(v)
    return json.dumps(v, default=str)


def nested_refusal(fmt: str, t: pa.DataType) -> str | None:
    if T.is_nested(t):
        return (f"the {fmt} format reads a database's columns: no {T.type_name(t)} (use "
                "debezium-json or json for nested values)")
    return None
