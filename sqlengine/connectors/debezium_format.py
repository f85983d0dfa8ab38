"""The debezium-json format (read): Debezium's change events, one JSON object per line, as
a changelog. ``op`` 'c' (create) and 'r' (snapshot read) are +I of ``after``; 'u' is -U of
``before`` then +U of ``after``; 'd' is -D of ``before`` (as Flink's
DebeziumJsonDeserializationSchema).
With 'debezium-json.schema-include' = 'true' each event is wrapped in ``{"schema": ...,
"payload": {...}}``. Tombstones (a line ``null``) are skipped, as Flink skips them.

Vectorised as the json format is: Arrow parses blocks of lines (a bad line is found by
halving its block), the before/after images are converted as json columns are, and the
output rows are taken from the two images in one step.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.connectors.base import CHANGELOG_COLUMN, ReadStats
from sqlengine.connectors.json_format import (
    _convert_text_types,
    _json_blocks,
    _json_read_type,
    iso_timestamps,
)
from sqlengine.connectors.text_rows import earlier_error, finish, valid_utf8
from sqlengine.errors import ConnectorError

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
_OPTION = "debezium-json.ignore-parse-errors"


def read_debezium(path: Path | str, options: dict[str, str], schema: pa.Schema,
                  stats: ReadStats, data: bytes | None = None,
                  first_line: int = 1) -> Iterator[pa.RecordBatch]:
    ignore = options.get(_OPTION, "false").lower() == "true"
    wrapped = options.get("debezium-json.schema-include", "false").lower() == "true"
    if data is None:
        data = Path(path).read_bytes()
    data = valid_utf8(path, data, ignore, stats, first_line, "debezium-json")
    image = pa.struct([pa.field(f.name, _json_read_type(f.type)) for f in schema])
    event = pa.struct([("before", image), ("after", image), ("op", pa.string())])
    read_schema = pa.schema([("payload", event)]) if wrapped else pa.schema(list(event))
    # (tombstones: a line holding only null)
    data = b"\n".join(b"" if line.strip() == b"null" else line for line in data.split(b"\n"))
    try:
        table, lines = _json_blocks(path, data, read_schema, ignore, stats, first_line,
                                    _OPTION)
    except ConnectorError as e:
        earlier_error(e, data, first_line, lambda head: list(
            read_debezium(path, options, schema, ReadStats(), head, first_line)))
        raise
    if wrapped:
        payload = table.column("payload").combine_chunks()
        before, after, op = (pc.struct_field(payload, [i]) for i in range(3))
    else:
        before, after, op = (table.column(i).combine_chunks() for i in range(3))
    ops = np.asarray(pc.fill_null(op, "").to_numpy(zero_copy_only=False), dtype=object)
    known = np.isin(ops, ["c", "r", "u", "d"])
    if not known.all():
        i = int(np.flatnonzero(~known)[0])
        if not ignore:
            msg = (f"{path}:{int(lines[i])}: unknown Debezium operation {op[i].as_py()!r} "
                   "(expected 'c', 'r', 'u' or 'd'); set "
                   f"'{_OPTION}' = 'true' to skip such rows")
            raise ConnectorError(msg)
        stats.skipped += int((~known).sum())
    is_u, is_d = ops == "u", ops == "d"
    needs_before = (is_u | is_d) & known
    missing = needs_before & np.asarray(pc.is_null(before).to_numpy(zero_copy_only=False))
    if missing.any():
        i = int(np.flatnonzero(missing)[0])
        msg = (f"{path}:{int(lines[i])}: the 'before' field of an "
               f"{'UPDATE' if is_u[i] else 'DELETE'} event is null (with PostgreSQL, set the "
               "table's REPLICA IDENTITY to FULL)")
        raise ConnectorError(msg)
    # Each event's output rows, in order: +I after / -U before, +U after / -D before.
    counts = np.where(known, np.where(is_u, 2, 1), 0)
    event_of = np.repeat(np.arange(len(ops)), counts)
    second = np.zeros(len(event_of), dtype=bool)
    starts = np.cumsum(counts) - counts
    second[starts[is_u & known] + 1] = True
    from_before = (is_d[event_of] | (is_u[event_of] & ~second))
    kinds = np.select([is_d[event_of], is_u[event_of] & ~second, is_u[event_of] & second],
                      [DELETE, UPDATE_BEFORE, UPDATE_AFTER], INSERT).astype(np.int8)
    images = pa.concat_arrays([after, before])
    picked = images.take(pa.array(event_of + np.where(from_before, len(after), 0)))
    flat = pa.Table.from_arrays([pc.struct_field(picked, [i]) for i in range(len(schema))],
                                names=schema.names)
    converted, ok, detail = _convert_text_types(flat, schema, ignore,
                                                iso_timestamps(options, "debezium-json"))
    kinds = kinds[ok]
    row_lines = lines[event_of]
    # (``converted`` holds the rows that are ``ok``: their kinds, in order)
    yield from with_kinds(finish(converted, ok, row_lines, path, ignore, stats,
                                 "debezium-json", detail), kinds)


def with_kinds(batches: Iterator[pa.RecordBatch], kinds: np.ndarray
               ) -> Iterator[pa.RecordBatch]:
    """Batches with their rows' kinds appended as the changelog column."""
    at = 0
    for b in batches:
        k = kinds[at:at + b.num_rows]
        at += b.num_rows
        yield pa.RecordBatch.from_arrays([*b.columns, pa.array(k, pa.int8())],
                                         names=[*b.schema.names, CHANGELOG_COLUMN])
