"""The raw format (Flink's): each line of a file is one value of the table's single physical
column, a STRING decoded with 'raw.charset' (UTF-8 by default) or BYTES as they are; a line
ending in "\\r\\n" loses its "\\r" (as Flink's filesystem line reader), an empty line is an
empty value. Written one value per line.

In files the raw format holds STRING and BYTES: Flink's raw numbers (their bytes in
'raw.endianness' order) are refused, as a number's bytes may hold a line break."""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from sqlengine.connectors.base import ReadStats
from sqlengine.connectors.text_rows import BATCH_ROWS
from sqlengine.errors import ConnectorError
from sqlengine.types import type_name

ENDIANNESS = ("big-endian", "little-endian")


def charset(options: dict[str, str]) -> str:
    return options.get("raw.charset", "UTF-8")


def charset_refusal(name: str, lines: bool = True) -> str | None:
    """Why 'raw.charset' = ``name`` cannot be used (None: it can); ``lines``: the values are
    a file's lines (a message of NATS or MQTT is one value: any charset reads it)."""
    try:
        codecs.lookup(name)
    except LookupError:
        return f"option 'raw.charset': unknown charset {name!r}"
    if not lines:
        return None
    try:
        newline = "\n".encode(name)
    except UnicodeError:
        newline = b""
    if newline != b"\n":
        return (f"option 'raw.charset': {name!r} does not write a line break as the byte "
                "0x0a, so a file's lines cannot be told apart (the filesystem connector "
                "reads one value per line)")
    return None


def type_refusal(t: pa.DataType, lines: bool = True) -> str | None:
    """Why a raw column cannot be of type ``t`` (None: it can); ``lines``: as for
    charset_refusal."""
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return None
    if not lines:
        return (f"the raw format reads and writes STRING or BYTES, not {type_name(t)} (a "
                "number's bytes, 'raw.endianness', are not implemented)")
    return (f"the raw format holds one STRING or BYTES value per line, not {type_name(t)} "
            "(a number's bytes may hold a line break)")


def read_raw(path: Path | str, options: dict[str, str], schema: pa.Schema,
             stats: ReadStats, data: bytes | None = None,
             first_line: int = 1) -> Iterator[pa.RecordBatch]:
    del stats
    if data is None:
        data = Path(path).read_bytes()
    if not data:
        return
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    lines = [b[:-1] if b.endswith(b"\r") else b for b in lines]
    field = schema.field(0)
    column = pa.array(lines, pa.binary())
    if pa.types.is_string(field.type):
        column = _decode(path, lines, column, charset(options), first_line)
    for start in range(0, len(column), BATCH_ROWS):
        yield pa.RecordBatch.from_arrays([column.slice(start, BATCH_ROWS)], schema=schema)


def _decode(path: Path | str, lines: list[bytes], column: pa.Array, name: str,
            first_line: int) -> pa.Array:
    utf8 = codecs.lookup(name).name == "utf-8"
    if utf8:
        try:
            return column.cast(pa.string())
        except pa.ArrowInvalid:
            pass
    out = []
    for i, raw in enumerate(lines):
        try:
            out.append(raw.decode(name))
        except UnicodeDecodeError as e:
            msg = (f"{path}:{first_line + i}: the line {raw!r} is not valid {name} (byte "
                   f"{e.start + 1}); declare the column BYTES to read it as it is")
            raise ConnectorError(msg) from None
    return pa.array(out, pa.string())


def raw_bytes(batch: pa.RecordBatch, options: dict[str, str]) -> bytes:
    """The batch's values, one per line; a NULL (Flink's raw format writes no bytes for it, so
    the filesystem sink cannot write it), a value holding a line break (it would read back
    as two values) or ending in a carriage return (it would read back without it) is refused
    naming the column."""
    col = batch.column(0)
    name = batch.schema.field(0).name
    values = col.to_pylist()
    if col.null_count:
        msg = (f"column {name!r}: the raw format cannot write NULL (a line holds a value; "
               "filter the NULLs out or COALESCE them)")
        raise ConnectorError(msg)
    if pa.types.is_string(col.type):
        cs = charset(options)
        try:
            encoded = [v.encode(cs) for v in values]
        except UnicodeEncodeError as e:
            msg = f"column {name!r}: a value cannot be written in {cs}: {e.reason}"
            raise ConnectorError(msg) from None
    else:
        encoded = values
    for v in encoded:
        if b"\n" in v:
            msg = (f"column {name!r}: the value {v!r} holds a line break, which the raw "
                   "format would read back as two values")
            raise ConnectorError(msg)
        if v.endswith(b"\r"):  # (read back, "...\r\n" loses its "\r": a changed value)
            msg = (f"column {name!r}: the value {v!r} ends in a carriage return, which the "
                   "raw format would read back without it (a line's \"\\r\\n\" ends it)")
            raise ConnectorError(msg)
    return b"".join(v + b"\n" for v in encoded)
