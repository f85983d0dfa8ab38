"""The json format: one object per line, read vectorised (line by line only to name a bad line
or skip it), written with temporal and decimal values as SQL text."""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from functools import partial
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson

from sqlengine import types as T
from sqlengine.cast import (
    VALID_TEXT,
    cast_array,
    jackson_escapes,
    java_double_text,
    java_double_texts,
    ltz_text,
    text_kind,
)
from sqlengine.connectors.base import ReadStats
from sqlengine.connectors.json_values import (
    STRICT_TEXT,
    JsonValueError,
    converter,
    json_decoder,
)
from sqlengine.connectors.text_rows import (
    BadValue,
    at_line,
    bad_values,
    earlier_error,
    finish,
    from_base64,
    jackson_decimal_texts,
    java_booleans,
    over_distinct,
    row_lines,
    time_text,
    to_base64,
    trimmed_fraction,
    valid_utf8,
    without_double_suffix,
)
from sqlengine.errors import ConnectorError, SqlEngineError


def _json_read_type(t: pa.DataType) -> pa.DataType:
    # Dates and times are read as strings and converted with CAST semantics; a DECIMAL as a
    # wider decimal (JSON numbers and strings both read exactly), rounded to its scale after.
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or \
            pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):  # (BYTES: base64)
        return pa.string()
    if pa.types.is_decimal(t):
        whole = t.precision - t.scale
        if 38 - whole >= 18:
            return pa.decimal128(38, max(t.scale, 18))
        # (a wide DECIMAL(38, 2) read as decimal128(38, 2) refused 1.005, "requires scale
        # 3", where Flink rounds it to 1.01)
        return pa.decimal256(75, max(t.scale, min(18, 75 - whole)))  # (a carry digit left)
    return t


_BLOCK_LINES = 512  # (a bad line costs a parse of the rest of its block)


def read_json(path: Path | str, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, data: bytes | None = None,
               first_line: int = 1) -> Iterator[pa.RecordBatch]:
    ignore = options.get("json.ignore-parse-errors", "false").lower() == "true"
    fail_missing = options.get("json.fail-on-missing-field", "false").lower() == "true"
    read_schema = pa.schema([pa.field(f.name, _json_read_type(f.type)) for f in schema])
    if data is None:
        data = Path(path).read_bytes()
    data = valid_utf8(path, data, ignore, stats, first_line, "json")
    has_map = any(_has_map(f.type) for f in read_schema)
    try:
        if ignore or fail_missing or has_map:
            # (Arrow's json reader reads no MAP: such a table is read with Python's json)
            raise pa.ArrowInvalid("slow path")
        table = _parse(data, read_schema)
        if table.num_rows == 0 and data.strip():
            raise pa.ArrowInvalid("no rows")
        lines: np.ndarray | Callable[[], np.ndarray] = partial(_lines_of, data, first_line)
        if not _whole_lines(data, table.num_rows):
            # (a line holding two objects, or an array of them, or an object spread over
            # lines: Arrow's reader takes any JSON text; Flink's format reads one object a
            # line (an array's objects each): the lines are read one by one, naming a bad one)
            raise pa.ArrowInvalid("not one JSON object a line")
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        try:
            if fail_missing or has_map:
                # Error path (or ignore-parse-errors): parse line by line to name the bad line.
                table, lines = _json_lines(path, data, read_schema, ignore, fail_missing,
                                           stats, first_line)
            else:
                table, lines = _json_blocks(path, data, read_schema, ignore, stats, first_line)
        except ConnectorError as e:
            earlier_error(e, data, first_line, lambda head: list(
                read_json(path, options, schema, ReadStats(), head, first_line)))
            raise
    converted, ok, detail = _convert_text_types(table, schema, ignore,
                                                iso_timestamps(options, "json"))
    yield from finish(converted, ok, lines, path, ignore, stats, "json", detail)


# '<format>.timestamp-format.standard': how TIMESTAMP / TIMESTAMP_LTZ values are written in
# the json formats ('SQL': '2020-12-30 12:13:14.123', 'ISO-8601': '2020-12-30T12:13:14.123';
# a TIMESTAMP_LTZ ends 'Z' in both), read and (json) written so.
TIMESTAMP_STANDARDS = ("SQL", "ISO-8601")


def iso_timestamps(options: dict[str, str], fmt: str) -> bool:
    return options.get(f"{fmt}.timestamp-format.standard", "SQL") == "ISO-8601"


def _lines_of(data: bytes, first_line: int) -> np.ndarray:
    return row_lines(data, False) + (first_line - 1)


def _whole_lines(data: bytes, rows: int) -> bool:
    """Whether ``data``'s non-blank lines are ``rows`` in number and each starts and ends as
    an object (or an array of them) does (numpy over the lines' first and last bytes; the
    few lines with a blank at either end looked at one by one)."""
    if not data.endswith(b"\n"):
        data += b"\n"
    raw = np.frombuffer(data, dtype=np.uint8)
    breaks = np.flatnonzero(raw == 10)
    starts = np.empty(len(breaks), dtype=np.int64)
    starts[0], starts[1:] = 0, breaks[:-1] + 1
    empty = starts == breaks
    last = raw[np.maximum(breaks - 1, 0)]
    crlf = (last == 13) & (breaks - starts > 1)
    if crlf.any():
        last = np.where(crlf, raw[np.maximum(breaks - 2, 0)], last)
    first = raw[np.minimum(starts, len(raw) - 1)]
    whole = ((first == 123) | (first == 91)) & ((last == 125) | (last == 93))  # ({ [ } ])
    count = int(whole.sum())
    for i in np.flatnonzero(~whole & ~empty).tolist():  # (blanks around, or bad)
        text = data[starts[i]:breaks[i]].strip()
        if not text:
            continue
        if text[:1] not in (b"{", b"[") or text[-1:] not in (b"}", b"]"):
            return False
        count += 1
    return count == rows


_NULL_LINE = re.compile(rb"^[ \t\r]*null[ \t\r]*$", re.MULTILINE)


def _parse(data: bytes, read_schema: pa.Schema) -> pa.Table:
    if _NULL_LINE.search(data):
        # (Arrow reads a line of JSON null as a row of NULLs, and crashes the process when
        # it is the first line; Flink's format fails on it: not an object)
        raise pa.ArrowInvalid("a line is null, not a JSON object")
    return pajson.read_json(
        io.BytesIO(data),
        read_options=pajson.ReadOptions(use_threads=False, block_size=max(1 << 20,
                                                                            len(data) + 1)),
        parse_options=pajson.ParseOptions(explicit_schema=read_schema,
                                          unexpected_field_behavior="ignore"))


def _json_blocks(path: Path | str, data: bytes, read_schema: pa.Schema, ignore: bool,
                 stats: ReadStats, first_line: int,
                 option: str = "json.ignore-parse-errors") -> tuple[pa.Table, np.ndarray]:
    """The rows of ``data`` parsed a block of lines at a time, a failing block split in halves
    down to its bad lines (so the work stays vectorised: a bad line costs a few parses)."""
    numbered = [(no, raw) for no, raw in enumerate(data.split(b"\n"), start=first_line)
                if raw.strip()]
    if any(raw.lstrip().startswith(b"[") for _, raw in numbered):
        numbered = _array_lines(numbered)
    tables: list[pa.Table] = []
    lines: list[int] = []
    # (a line that is no whole object, part of one spread over lines, is bad even where a
    # line of two objects makes the block's count of rows come out right)
    partial_lines = {no for no, raw in numbered
                     if not (raw.strip()[:1] in (b"{", b"[") and raw.strip()[-1:] in (b"}", b"]"))}

    def bad(no: int, raw: bytes, e: Exception) -> None:
        if ignore:
            stats.skipped += 1
            if len(stats.skipped_at) < 10:
                stats.skipped_at.append(f"{path}:{no}")
            return
        msg = (f"{path}:{no}: cannot parse JSON row: {_why(raw, e, read_schema)}; set "
               f"'{option}' = 'true' to skip such rows")
        raise at_line(ConnectorError(msg), no) from None

    def take(chunk: list[tuple[int, bytes]]) -> None:
        while chunk:
            try:
                table = _parse(b"\n".join(raw for _, raw in chunk), read_schema)
                if table.num_rows != len(chunk) or \
                        (partial_lines and any(no in partial_lines for no, _ in chunk)):
                    raise pa.ArrowInvalid("a line is not one JSON object")
            except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
                table = _with_text_values(chunk, read_schema, e, lenient=ignore)
                if table is not None:
                    tables.append(table)
                    lines.extend(no for no, _ in chunk)
                    return
                if len(chunk) == 1:
                    bad(*chunk[0], e)
                    return
                # Arrow names the row of a parse error: the rows before it parse, the rest
                # is tried again; a conversion error names none: halve the block.
                at = re.search(r" in row (\d+)$", str(e))
                if at is not None and int(at.group(1)) < len(chunk):
                    x = int(at.group(1))
                    take(chunk[:x])
                    take(chunk[x:x + 1])
                    chunk = chunk[x + 1:]
                else:
                    half = len(chunk) // 2
                    take(chunk[:half])
                    chunk = chunk[half:]
                continue
            tables.append(table)
            lines.extend(no for no, _ in chunk)
            return

    for start in range(0, len(numbered), _BLOCK_LINES):
        take(numbered[start:start + _BLOCK_LINES])
    table = pa.concat_tables(tables) if tables else read_schema.empty_table()
    return table, np.array(lines, dtype=np.int64)


# (a value of another JSON type; or a number Arrow does not read as its integer column, 1.5
# or 1e2, which Flink's format cuts to its whole part; or one past a DOUBLE's range, 1e400,
# which Flink's reads as Infinity)
def _array_lines(numbered: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """A line holding a JSON array of objects as one line per object (Flink's json format
    reads each element of a top-level array as a row); any other line as it is."""
    out: list[tuple[int, bytes]] = []
    for no, raw in numbered:
        if raw.lstrip().startswith(b"["):
            try:
                items = json.loads(raw)
            except ValueError:
                items = None
            if isinstance(items, list) and all(isinstance(i, dict) for i in items):
                out.extend((no, json.dumps(i, ensure_ascii=False).encode("utf-8"))
                           for i in items)
                continue
        out.append((no, raw))
    return out


# (and a key given twice in an object: Flink's reader, Jackson's, keeps its last value)
_TYPE_CONFLICT = re.compile(r"Column\(/[^)]*\) changed from \w+ to \w+|"
                            r"Failed to convert JSON to u?int\d+|"
                            r"Number too big to be stored in double|"
                            r"Column\(/[^)]*\) was specified twice")


def _with_text_values(chunk: list[tuple[int, bytes]], read_schema: pa.Schema,
                      error: Exception, lenient: bool = False) -> pa.Table | None:
    """The rows of ``chunk`` when Arrow refused them only because a value's JSON type is
    not its column's, where Flink's json format reads it: a STRING column takes any value
    as its JSON text ('1.5', 'true', '["x","y"]'); a number or BOOLEAN column a string
    holding one ("3.25", "true"), read with CAST's rules. Read with Python's json (None
    when the error is another, or a line is bad for any reason). ``lenient``
    ('json.ignore-parse-errors'): a value its column cannot hold is NULL, as in Flink's
    format (None only when a line is no JSON object)."""
    if _TYPE_CONFLICT.search(str(error)) is None:
        return None
    try:
        decode = json_decoder().decode
        objs = [decode(raw.decode("utf-8")) for _, raw in chunk]
        if not all(isinstance(o, dict) for o in objs):
            return None
        arrays = []
        for f in read_schema:
            convert = converter(f.type, lenient)
            arrays.append(pa.array([convert(o.get(f.name)) for o in objs], f.type))
        return pa.Table.from_arrays(arrays, schema=read_schema)
    except (ValueError, UnicodeDecodeError, pa.ArrowInvalid, pa.ArrowTypeError, TypeError,
            OverflowError, ArithmeticError, SqlEngineError):
        return None


def _why(raw: bytes, e: Exception, schema: pa.Schema | None = None) -> str:
    """What is wrong with one line, in words a user can act on: the first value its column
    does not take (with ``schema``), else the parser's words."""
    try:
        obj = json_decoder().decode(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as bad:
        return str(bad)
    if not isinstance(obj, dict):
        return "not a JSON object"
    for f in schema or ():
        try:
            converter(f.type, False)(obj.get(f.name))
        except JsonValueError as bad:
            return f"column {f.name!r}: {bad}"
    return str(e).removeprefix("JSON parse error: ")


def _json_lines(path: Path | str, data: bytes, read_schema: pa.Schema, ignore: bool,
                fail_missing: bool, stats: ReadStats,
                first_line: int = 1) -> tuple[pa.Table, np.ndarray]:
    before = (stats.skipped, list(stats.skipped_at))
    try:  # (every row's types checked at once; one by one only to name a bad one)
        return _json_rows(path, data, read_schema, ignore, fail_missing, stats, first_line,
                          checked=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
        stats.skipped, stats.skipped_at[:] = before[0], before[1]
        return _json_rows(path, data, read_schema, ignore, fail_missing, stats, first_line,
                          checked=True)


def _json_rows(path: Path | str, data: bytes, read_schema: pa.Schema, ignore: bool,
               fail_missing: bool, stats: ReadStats, first_line: int, checked: bool
               ) -> tuple[pa.Table, np.ndarray]:
    rows: list[dict[str, object]] = []
    lines: list[int] = []
    names = read_schema.names
    converters = [(f.name, converter(f.type, ignore)) for f in read_schema]
    decode = json_decoder().decode
    for no, raw in enumerate(data.decode("utf-8", errors="replace").split("\n"),
                             start=first_line):
        if not raw.strip():
            continue
        try:
            got = decode(raw)
            # (a top-level array of objects: a row each, as Flink's format reads it)
            objs = got if isinstance(got, list) and got and \
                all(isinstance(o, dict) for o in got) else [got]
            line_rows = []
            for obj in objs:
                if not isinstance(obj, dict):
                    raise ValueError("not a JSON object")
                if fail_missing:
                    missing = [n for n in names if n not in obj]
                    if missing:
                        raise ValueError(f"missing field {missing[0]!r}")
                row = {n: c(obj.get(n)) for n, c in converters}
                if checked:
                    pa.Table.from_pylist([row], schema=read_schema)  # type check of this row
                line_rows.append(row)
        except (ValueError, pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError,
                ArithmeticError) as e:
            if ignore:
                stats.skipped += 1
                if len(stats.skipped_at) < 10:
                    stats.skipped_at.append(f"{path}:{no}")
                continue
            msg = (f"{path}:{no}: cannot parse JSON row: {e}; set 'json.ignore-parse-errors'"
                   " = 'true' to skip such rows")
            raise at_line(ConnectorError(msg), no) from None
        rows.extend(line_rows)
        lines.extend([no] * len(line_rows))
    return pa.Table.from_pylist(rows, schema=read_schema), np.array(lines, dtype=np.int64)


def _has_map(t: pa.DataType) -> bool:
    if pa.types.is_map(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_map(t.value_type)
    return pa.types.is_struct(t) and any(_has_map(f.type) for f in t)


def _convert_text_types(table: pa.Table, schema: pa.Schema, ignore: bool = False,
                        iso: bool = False) -> tuple[pa.Table, np.ndarray, BadValue | None]:
    """Text values of typed columns (dates, times, decimals written as strings) read as their
    type; one that does not (a malformed or impossible date, 2020-02-30) makes its row bad,
    never a silent NULL; under 'json.ignore-parse-errors' it is NULL and the row stays (as
    Flink's format: "fields are set to null in case of errors")."""
    ok = np.ones(table.num_rows, dtype=bool)
    first: BadValue | None = None
    out = []
    for f in schema:
        col = table.column(f.name).combine_chunks()
        if col.type == f.type:
            out.append(col)
            continue
        if not T.is_string(col.type):
            # (a DECIMAL read wider: rounded to its scale; one out of its range is bad)
            casted = cast_array(col, f.type, safe=True)
            bad = np.asarray(pc.and_(pc.is_valid(col), pc.is_null(casted))
                             .to_numpy(zero_copy_only=False))
            if pa.types.is_decimal(f.type):
                # Out of range once rounded half up: |v| >= 10^(p-s) - 5 * 10^-(s+1).
                p, sc = f.type.precision, f.type.scale
                limit = pa.scalar(Decimal(10) ** (p - sc) - Decimal(5).scaleb(-(sc + 1)),
                                  col.type)
                over = pc.fill_null(pc.greater_equal(pc.abs(col), limit), False)
                bad |= np.asarray(over.to_numpy(zero_copy_only=False))
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                if first is None or i < first[0]:
                    v = col[i].as_py()
                    text = format(v.normalize(), "f") if isinstance(v, Decimal) else str(v)
                    first = (i, f.name, text, T.type_name(f.type))
            out.append(bad_values(casted, bad, ok, ignore))
            continue
        kind = text_kind(f.type)
        if kind == "bool":  # (never an error: any text but 'true' is FALSE)
            out.append(java_booleans(col))
            continue
        if kind == "bytes":  # (base64, as Flink's json format writes BYTES)
            decoded, good = from_base64(col)
            if not good.all():
                i = int(np.flatnonzero(~good)[0])
                if first is None or i < first[0]:
                    first = (i, f.name, col[i].as_py(), "base64 BYTES")
            out.append(bad_values(cast_array(decoded, f.type), ~good, ok, ignore))
            continue
        if kind == "float":
            col = without_double_suffix(col)
        pattern = STRICT_TEXT.get(kind or "") or VALID_TEXT.get(kind or "")
        if kind in ("timestamp", "ltz"):  # (the date and time parted by ' ' or by 'T')
            pattern = pattern.replace(" ", "T") if kind == "timestamp" and iso else \
                pattern.replace("[ T]", "T" if iso else " ")
        valid = np.asarray(pc.fill_null(pc.match_substring_regex(col, pattern), True)
                           .to_numpy(zero_copy_only=False)) if pattern \
            else np.ones(len(col), dtype=bool)
        looks = pc.if_else(pa.array(valid), col, pa.nulls(len(col), pa.string()))
        if iso and kind in ("timestamp", "ltz"):
            looks = pc.replace_substring(looks, "T", " ", max_replacements=1)
        casted = cast_array(looks, f.type, safe=True, checked=kind is not None)
        lost = np.asarray(pc.and_(pc.is_valid(looks), pc.is_null(casted))
                          .to_numpy(zero_copy_only=False))
        bad = ~valid | lost
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            if first is None or i < first[0]:
                first = (i, f.name, col[i].as_py(), T.type_name(f.type))
        out.append(bad_values(casted, bad, ok, ignore))
    keep = pa.array(ok)
    out = [c.filter(keep) if not ok.all() else c for c in out]
    return pa.Table.from_arrays(out, schema=schema), ok, first


def plain_decimals(options: dict[str, str], fmt: str) -> bool:
    """'<fmt>.encode.decimal-as-plain-number': DECIMALs written with all their digits."""
    return options.get(f"{fmt}.encode.decimal-as-plain-number", "false").lower() == "true"


def _timestamp_text(col: pa.Array, iso: bool) -> pa.Array:
    """TIMESTAMP values without the fraction's trailing zeros, with a 'T' if ``iso``."""
    text = trimmed_fraction(cast_array(col, pa.string()))
    return pc.replace_substring(text, " ", "T", max_replacements=1) if iso else text


def json_bytes(batch: pa.RecordBatch, iso: bool = False, plain_decimals: bool = False
               ) -> bytes:
    """Rows as Flink's json format writes them: compact objects, temporal values as SQL
    text (a timestamp's fraction without trailing zeros: '10:00:00.12', '10:00:00'; ``iso``:
    the 'ISO-8601' timestamp standard, '2020-12-30T10:00:00'), a DOUBLE / FLOAT as Java
    prints it ('1.0E-5'), a DECIMAL as Jackson writes its BigDecimal without trailing zeros
    ('1.5', '1E+2'; ``plain_decimals``: with all its digits, '100.00')."""
    fields = {}
    for f, col in zip(batch.schema, batch.columns):
        # (a time's text is made once per distinct value: window bounds repeat)
        if T.is_ltz(f.type):  # (UTC, ending 'Z')
            fields[f.name] = over_distinct(
                col, lambda c: trimmed_fraction(ltz_text(c, iso=iso))).to_pylist()
        elif pa.types.is_timestamp(f.type):
            fields[f.name] = over_distinct(col, partial(_timestamp_text, iso=iso)).to_pylist()
        elif pa.types.is_time(f.type):  # (as a timestamp's: '01:02:03.4', '00:00:00')
            fields[f.name] = over_distinct(
                col, lambda c: time_text(c, cast_array(c, pa.string()))).to_pylist()
        elif T.is_temporal(f.type) or T.is_time(f.type):
            fields[f.name] = cast_array(col, pa.string()).to_pylist()
        elif pa.types.is_floating(f.type):
            # (NaN and the infinities as JSON strings, as Flink writes them: a bare NaN is no
            # JSON, and Flink's reader refuses it)
            finite = pc.fill_null(pc.is_finite(col), False).to_numpy(zero_copy_only=False)
            fields[f.name] = [_Number(t) if ok else t for t, ok in zip(
                java_double_texts(col).to_pylist(), finite)]
        elif pa.types.is_binary(f.type) or pa.types.is_fixed_size_binary(f.type):
            fields[f.name] = to_base64(col).to_pylist()
        elif pa.types.is_decimal(f.type):
            # Exact: the number's digits, not a float's (Flink writes a DECIMAL as a JSON
            # number with all its digits).
            texts = [None if v is None else format(v, "f") for v in col.to_pylist()] \
                if plain_decimals else jackson_decimal_texts(col).to_pylist()
            fields[f.name] = [None if v is None else _Number(v) for v in texts]
        elif pa.types.is_nested(f.type):  # (a MAP as a JSON object, doubles as Java's)
            fields[f.name] = [_Number(_nested(v, f.type)) for v in col.to_pylist()]
        else:
            fields[f.name] = col.to_pylist()
    names = list(fields)
    keys = [json.dumps(n, ensure_ascii=False) for n in names]
    rows = zip(*fields.values()) if names else iter(())
    out = "".join("{" + ",".join(f"{k}:{_value(v)}" for k, v in zip(keys, r)) + "}\n"
                  for r in rows)
    return jackson_escapes(out).encode("utf-8")


def _nested(value: object, t: pa.DataType) -> str:
    """The JSON text of a value of type ``t`` (Arrow's Python form): a MAP as an object, a
    DOUBLE / FLOAT as Java prints it ('1.0E-5', as at the top level; NaN and the infinities
    as strings, '"NaN"')."""
    if value is None:
        return "null"
    if pa.types.is_floating(t):
        v = float(value)  # type: ignore[arg-type]
        text = java_double_text(v, t == pa.float32())
        # (NaN and the infinities as JSON strings, as at the top level and as Flink writes
        # them: a bare NaN is no JSON)
        return text if math.isfinite(v) else json.dumps(text)
    if pa.types.is_map(t):
        return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_nested(v, t.item_type)}"
                              for k, v in value) + "}"  # type: ignore[attr-defined]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return "[" + ",".join(_nested(v, t.value_type) for v in value) + "]"  # type: ignore[attr-defined]
    if pa.types.is_struct(t):
        return "{" + ",".join(f"{json.dumps(f.name, ensure_ascii=False)}:"
                              f"{_nested(value[f.name], f.type)}" for f in t) + "}"  # type: ignore[index]
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class _Number(str):
    """A JSON number already written as text."""


def _value(v: object) -> str:
    return str(v) if isinstance(v, _Number) else json.dumps(v, ensure_ascii=False,
                                                           separators=(",", ":"))


def options_refusal(options: dict[str, str]) -> str | None:
    """Why the json options contradict each other (as Flink's JsonFormatFactory refuses
    them), or None."""
    def on(key: str) -> bool:
        return options.get(key, "false").lower() == "true"

    if on("json.fail-on-missing-field") and on("json.ignore-parse-errors"):
        return ("options 'json.fail-on-missing-field' and 'json.ignore-parse-errors' cannot "
                "both be 'true' (a missing field would fail the read and be skipped)")
    return None
