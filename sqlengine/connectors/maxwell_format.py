"""The maxwell-json format (read): Maxwell's messages, one JSON object per line, as a
changelog (as Flink's MaxwellJsonDeserializationSchema). ``type`` insert gives +I of
``data``; delete -D of ``data``; update -U of the old row, then +U of ``data``: the old row
is ``old``'s value for each field ``old`` names (null included: the field was null before)
and ``data``'s for the others (Maxwell lists only the changed fields' old values). Any other
type (Maxwell's bootstrap and DDL messages) is an error, or skipped with
'maxwell-json.ignore-parse-errors' = 'true'.

Values are read as the json format reads them, strings converted as canal_format.py (whose
machinery this uses) converts them; bad messages are named by file:line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from sqlengine.connectors.base import ReadStats
from sqlengine.connectors.canal_format import BadMessage, Row, read_changelog_json
from sqlengine.connectors.debezium_format import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE


def read_maxwell(path: Path | str, options: dict[str, str], schema: pa.Schema,
                 stats: ReadStats, data: bytes | None = None,
                 first_line: int = 1) -> Iterator[pa.RecordBatch]:
    names = schema.names

    def events(obj: object) -> list[tuple[int, Row]]:
        if not isinstance(obj, dict):
            raise BadMessage("not a JSON object")
        kind = obj.get("type")
        if kind not in ("insert", "update", "delete"):
            raise BadMessage(f"unknown Maxwell \"type\" {kind!r} (expected 'insert', "
                             "'update' or 'delete')")
        data = _row(obj, "data")
        if kind == "insert":
            return [(INSERT, data)]
        if kind == "delete":
            return [(DELETE, data)]
        old = _row(obj, "old")
        before = {n: old[n] if n in old else data.get(n) for n in names}
        return [(UPDATE_BEFORE, before), (UPDATE_AFTER, data)]

    yield from read_changelog_json(path, options, schema, stats, data, first_line,
                                   "maxwell-json", events)


def _row(obj: dict, key: str) -> Row:
    row = obj.get(key)
    if not isinstance(row, dict):
        raise BadMessage(f"{key!r} is not a row (a JSON object)")
    return row
