"""Render results for people (tables) and for programs (csv with a header, JSON lines)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import cast_array
from sqlengine.connectors.csv_format import csv_text
from sqlengine.errors import SqlEngineError


def _text(col: pa.Array, null: str) -> list[str]:
    col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if not T.is_string(col.type):
        if pa.types.is_floating(col.type):
            values = [None if v is None else _float(v) for v in col.to_pylist()]
            return [null if v is None else v for v in values]
        col = cast_array(col, pa.string())
    return pc.fill_null(col, null).to_pylist()


def _float(v: float) -> str:
    return repr(v)


def display_width(text: str) -> int:
    """Columns ``text`` takes on a terminal (CJK and emoji take two; wcwidth)."""
    if text.isascii() and text.isprintable():
        return len(text)  # (without importing wcwidth's tables: ~13 ms of start-up)
    from wcwidth import wcswidth

    width = wcswidth(text)
    return width if width >= 0 else len(text)  # (a control character: counted as one)


def _pad(text: str, width: int, align: str) -> str:
    gap = max(width - display_width(text), 0)
    if align == ">":
        return " " * gap + text
    if align == "^":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


def render_table(table: pa.Table, null: str = "NULL") -> str:
    """An ASCII table with a header, as Flink's SQL client (tableau mode) prints one; columns
    are as wide as their widest value on a terminal (wide characters count twice)."""
    names = table.column_names
    cols = [_text(table.column(i), null) for i in range(table.num_columns)]
    widths = [max([display_width(n)] + [display_width(v) for v in c])
              for n, c in zip(names, cols)]
    numeric = [T.is_numeric(f.type) for f in table.schema]
    sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [sep, "|" + "|".join(f" {_pad(n, w, '^')} " for n, w in zip(names, widths)) + "|",
             sep]
    for r in range(table.num_rows):
        cells = []
        for c, w, num in zip(cols, widths, numeric):
            cells.append(f" {_pad(c[r], w, '>' if num else '<')} ")
        lines.append("|" + "|".join(cells) + "|")
    if table.num_rows:
        lines.append(sep)
    return "\n".join(lines) + "\n"


def render_csv(table: pa.Table, header: bool = True, null: str = "") -> str:
    """CSV with a header row; NULL is an empty field; quotes only where needed."""
    cols = [pa.array(_text(table.column(i), "\0"), pa.string()) for i in
            range(table.num_columns)]
    cols = [pc.if_else(pc.equal(c, "\0"), pa.nulls(len(c), pa.string()), c) for c in cols]
    head = csv_text([pa.array([n]) for n in table.column_names]) if header else ""
    return head + csv_text(cols, null=null)


def render_json(table: pa.Table) -> str:
    """One JSON object per row."""
    cols = []
    for f, col in zip(table.schema, table.columns):
        if T.is_temporal(f.type) or pa.types.is_decimal(f.type):
            cols.append(_text(col, "\0"))
            cols[-1] = [None if v == "\0" else v for v in cols[-1]]
        else:
            cols.append(col.to_pylist())
    names = table.column_names
    return "".join(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n"
                   for row in zip(*cols)) if names else ""


def render(table: pa.Table, fmt: str, header: bool = True) -> str:
    if fmt == "csv":
        return render_csv(table, header)
    if fmt == "json":
        return render_json(table)
    return render_table(table)


def render_error(e: SqlEngineError) -> str:
    """``file:line:col: message`` and the caret excerpt."""
    return f"error: {e}" if e.span is None and not e.source else str(e)
