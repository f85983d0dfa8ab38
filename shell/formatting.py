"""Render results for people (tables) and for programs (csv with a header, JSON lines)."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import cast_array
from sqlengine.connectors.csv_format import csv_text
from sqlengine.errors import SqlEngineError


def _text(col: pa.Array, null: str) -> list[str]:
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_timestamp(col.type) and col.type.tz is not None:
        # A TIMESTAMP_LTZ in the session time zone, as Flink's client shows one (it was
        # shown in UTC whatever 'table.local-time-zone' said; the caller binds the zone)
        from sqlengine.cast import to_local
        from sqlengine.options import session_time_zone

        col = to_local(col, session_time_zone())
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type) or \
            pa.types.is_fixed_size_binary(col.type):
        # (BYTES as Flink's client shows them, x'deadbeef'; they were decoded as text, the
        # bytes of no character shown as replacement marks, breaking the columns)
        return [null if v is None else f"x'{v.hex()}'" for v in col.to_pylist()]
    if not T.is_string(col.type):
        # (a DOUBLE / FLOAT as CAST(x AS STRING) writes it, Java's Double.toString, as
        # Flink's client shows it: 1.0E-300, NaN, Infinity, a FLOAT's 0.1 as 0.1; they came
        # as Python's 1e-300, nan, inf and 0.10000000149011612)
        col = cast_array(col, pa.string())
    return pc.fill_null(col, null).to_pylist()


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (CJK and emoji take two; wcwidth)."""
    if text.isascii() and text.isprintable():
        return len(text)  # (without importing wcwidth's tables: ~13 ms of start-up)
    from wcwidth import wcswidth

    width = wcswidth(text)
    return width if width >= 0 else len(text)  # (a control character: counted as one)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(m: re.Match[str]) -> str:
    ch = m.group()
    return _ESCAPES.get(ch) or f"\\x{ord(ch):02x}"


def visible(text: str) -> str:
    """``text`` on one line of a terminal: a control character (a newline, a tab, ESC) as its
    escape, \\n, \\t, \\x1b. (They were written raw: a newline broke a table's row in two, a
    tab moved the columns, ESC reached the terminal.)"""
    return text if text.isprintable() else _CONTROL.sub(_escape, text)


def cell_lines(text: str) -> list[str]:
    """``text`` as the lines of a table cell, as psql shows a value with newlines: one line
    per line of the value, tabs expanded, other control characters escaped."""
    if text.isprintable():
        return [text]
    return [visible(line.expandtabs(8)) for line in
            text.replace("\r\n", "\n").split("\n")]


def _pad(text: str, width: int, align: str) -> str:
    gap = max(width - display_width(text), 0)
    if align == ">":
        return " " * gap + text
    if align == "^":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


NULL_TEXT = "<NULL>"
"""A NULL in a table, as Flink's SQL client shows one (it was NULL, as the string 'NULL' is
shown; a NULL inside an ARRAY, MAP or ROW stays NULL there, as in Flink's client)."""


def render_table(table: pa.Table, null: str = NULL_TEXT) -> str:
    """An ASCII table with a header, as Flink's SQL client (tableau mode) prints one; columns
    are as wide as their widest value on a terminal (wide characters count twice)."""
    names = [visible(n) for n in table.column_names]
    cols = [[cell_lines(v) for v in _text(table.column(i), null)]
            for i in range(table.num_columns)]
    widths = [max([display_width(n)] + [display_width(x) for v in c for x in v])
              for n, c in zip(names, cols)]
    numeric = [T.is_numeric(f.type) for f in table.schema]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [sep, "|" + "|".join(f" {_pad(n, w, '^')} " for n, w in zip(names, widths)) + "|",
             sep]
    for r in range(table.num_rows):
        # (a value with newlines takes as many lines as it has, the row's other cells blank
        # below their first line)
        for k in range(max((len(c[r]) for c in cols), default=1)):
            cells = []
            for c, w, num in zip(cols, widths, numeric):
                part = c[r][k] if k < len(c[r]) else ""
                cells.append(f" {_pad(part, w, '>' if num else '<')} ")
            lines.append("|" + "|".join(cells) + "|")
    if table.num_rows:
        lines.append(sep)
    return "\n".join(lines) + "\n"


def render_csv(table: pa.Table, header: bool = True, null: str = "") -> str:
    """CSV with a header row; NULL is an empty field, an empty string ""; quotes only where
    needed."""
    cols = [pa.array(_text(table.column(i), "\0"), pa.string()) for i in
            range(table.num_columns)]
    cols = [pc.if_else(pc.equal(c, "\0"), pa.nulls(len(c), pa.string()), c) for c in cols]
    head = csv_text([pa.array([n]) for n in table.column_names]) if header else ""
    # ('' as "" when a NULL is an empty field: they were alike, and a row of one NULL a
    # blank line)
    return head + csv_text(cols, null=null, quote_empty=null == "")


def render_json(table: pa.Table) -> str:
    """One JSON object per row: numbers, booleans and strings as JSON's; a DECIMAL, a time, a
    date, an interval as the text SQL shows (a DECIMAL's digits kept); BYTES as base64 (as
    Flink's json format writes them); NaN and the infinities as strings (JSON has no such
    number, as Flink's json format writes them); ARRAY / ROW as arrays / objects, a MAP as
    an array of [key, value] pairs. (A TIME, INTERVAL, BYTES or a nested DECIMAL failed with
    an internal error, and NaN was written bare, which no JSON reader takes.)"""
    cols = []
    for f, col in zip(table.schema, table.columns):
        t = f.type
        if pa.types.is_integer(t) or pa.types.is_boolean(t) or T.is_string(t) or \
                pa.types.is_null(t):
            cols.append(col.to_pylist())
        elif pa.types.is_floating(t):  # (the number CAST's text gives: a FLOAT's 0.1 as 0.1)
            texts = _text(col, "\0")
            cols.append([None if v == "\0" else _json_value(float(v)) for v in texts])
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t) or \
                pa.types.is_map(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t) \
                or pa.types.is_fixed_size_binary(t):
            cols.append([_json_value(v) for v in col.to_pylist()])
        else:
            cols.append(_text(col, "\0"))
            cols[-1] = [None if v == "\0" else v for v in cols[-1]]
    names = table.column_names
    return "".join(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n"
                   for row in zip(*cols)) if names else ""


def _json_value(v: object) -> object:
    """A Python value of a result (to_pylist's) as JSON takes it (see render_json)."""
    if v is None or isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, dict):
        return {k: _json_value(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_json_value(x) for x in v]
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, dt.datetime):
        return v.isoformat(sep=" ")
    return str(v)  # (a date, a time, an interval's timedelta)


def render(table: pa.Table, fmt: str, header: bool = True, statement: bool = False) -> str:
    """``statement``: the result of a statement (DESCRIBE, SHOW), whose table shows a NULL as
    an empty cell, as Flink's client prints one."""
    if fmt == "csv":
        return render_csv(table, header)
    if fmt == "json":
        return render_json(table)
    return render_table(table, "" if statement else NULL_TEXT)


def render_error(e: SqlEngineError) -> str:
    """``file:line:col: message`` and the caret excerpt."""
    return f"error: {e}" if e.span is None and not e.source else str(e)
