"""The csv format (Flink's: no header row): read vectorised with a bad row named as file:line,
and written quoting only the values that need it."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from decimal import ROUND_HALF_UP, Decimal, localcontext
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from sqlengine import types as T
from sqlengine.cast import VALID_TEXT, cast_array, plain_cast, text_kind
from sqlengine.connectors.base import ReadStats, java_unescape
from sqlengine.connectors.csv_quotes import QuoteScan
from sqlengine.connectors.text_rows import (
    JAVA_TEXT,
    BadValue,
    at_line,
    bad_values,
    blank_lines,
    earlier_error,
    finish,
    from_base64,
    jackson_decimal_texts,
    java_booleans,
    line_from_message,
    message_head,
    over_distinct,
    row_lines,
    time_text,
    to_base64,
    valid_utf8,
    without_double_suffix,
)
from sqlengine.errors import ConnectorError


def opt_char(options: dict[str, str], key: str, default: str | None) -> str | None:
    value = options.get(key)
    if value is None:
        return default
    return java_unescape(value)


def csv_quoting(options: dict[str, str]) -> tuple[str | None, str | None]:
    """The table's quote and escape characters (None: not set, or quoting disabled)."""
    quote = None if options.get("csv.disable-quote-character", "false").lower() == "true" \
        else opt_char(options, "csv.quote-character", '"')
    return quote or None, opt_char(options, "csv.escape-character", None) or None


def read_csv(path: Path | str, options: dict[str, str], schema: pa.Schema,
             stats: ReadStats, data: bytes | None = None,
             first_line: int = 1, columns: list[int] | None = None
             ) -> Iterator[pa.RecordBatch]:
    """CSV rows of a file (or of ``data``, lines from ``first_line`` of the stream ``path``
    names: errors say path:line either way). With ``columns``, only those are converted (as
    Flink's csv format decodes only the projected fields: a value in another column is not
    read, so not checked); the others come as NULL. The first bad line is the one named."""
    if data is None:
        data = Path(path).read_bytes()
    try:
        yield from _read_csv(path, options, schema, stats, data, first_line, columns)
    except ConnectorError as e:  # (a malformed row: a line before it may hold a bad value)
        earlier_error(e, data, first_line, lambda head: list(
            _read_csv(path, options, schema, ReadStats(), head, first_line, columns)))
        raise


def _read_csv(path: Path | str, options: dict[str, str], schema: pa.Schema,
              stats: ReadStats, data: bytes, first_line: int, columns: list[int] | None
              ) -> Iterator[pa.RecordBatch]:
    ignore = options.get("csv.ignore-parse-errors", "false").lower() == "true"
    emptied: list[int] = []  # (lines of invalid UTF-8 skipped: not blank lines)
    data = valid_utf8(path, data, ignore, stats, first_line, "csv", emptied)
    allow_comments = options.get("csv.allow-comments", "false").lower() == "true"
    quote, escape = csv_quoting(options)
    delimiter = opt_char(options, "csv.field-delimiter", ",") or ","
    original = data

    def record_lines() -> np.ndarray:
        """Each record's line (computed only for an error or a skipped row)."""
        return row_lines(original, allow_comments, quote, escape, blanks=True,
                         delimiter=delimiter) + (first_line - 1)

    if quote and escape is None and not allow_comments and quote.encode() in data:
        # (Arrow reads a quoted field without its closing quote to the end of the data, and
        # text after a closing quote into the field; Flink's reader fails on both)
        data = _without_quote_faults(data, quote, delimiter, path, first_line, ignore, stats)
        original = data
    if allow_comments and b"#" in data:
        data = _without_comments(data, quote, escape, delimiter)
    if not data:  # (a block of comment lines: Arrow calls an empty input an error; a blank
        # or all-space line is a row, of one column a NULL or its text: it was dropped)
        return
    bad_rows: list[int] = []
    # Under ignore-parse-errors a row with too few fields is kept, the missing ones NULL (as
    # Flink's format); one with too many is skipped. A row ending in one empty field too many
    # (a trailing delimiter, '1,a,') is read without it, as Flink's reader takes it.
    short: list[tuple[int, str, int]] = []  # (record, padded text, fields it had)

    def on_invalid(row: pacsv.InvalidRow) -> str:
        if row.actual_columns == row.expected_columns + 1 and row.number is not None and \
                row.text.endswith(delimiter):
            short.append((row.number, row.text[:-len(delimiter)], row.expected_columns))
            return "skip"
        if not ignore:
            return "error"
        if row.actual_columns < row.expected_columns and row.number is not None:
            missing = row.expected_columns - row.actual_columns
            short.append((row.number, row.text + delimiter * missing, row.actual_columns))
        else:
            bad_rows.append(row.number or 0)
        return "skip"

    names = [f.name for f in schema]

    def parse(threads: bool, data: bytes = data, handler: Any = on_invalid) -> pa.Table:
        try:
            return _parse(threads, data, handler, None)
        except pa.ArrowInvalid as e:
            if "straddl" not in str(e):
                raise
            # (a record longer than Arrow's 1 MB blocks: one block of the whole data)
            return _parse(threads, data, handler, len(data) + 1)

    def _parse(threads: bool, data: bytes, handler: Any, block: int | None) -> pa.Table:
        return pacsv.read_csv(
            io.BytesIO(data),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=threads,
                                           **({"block_size": block} if block else {})),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter,
                quote_char=quote or False,
                escape_char=escape or False,
                # (a quoted value may hold line breaks: without this Arrow cuts its blocks at
                # a line break inside one, and the rows after it fail or come out wrong)
                newlines_in_values=bool(quote) and quote.encode() in data,
                # (an empty line is a record of one empty field, as Flink reads it: the
                # value '' of a one-column table (it was skipped, losing the rows a sink
                # wrote for '' and NULL), a short row of several: an error, or under
                # ignore-parse-errors a row of NULLs)
                ignore_empty_lines=False,
                invalid_row_handler=handler,
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                include_columns=[names[i] for i in columns] if columns is not None else None,
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                null_values=[],
            ),
        )

    try:
        try:  # Arrow's threads parse the block's parts in parallel ...
            table = parse(threads=True)
        except pa.ArrowInvalid:
            table = None
        if table is None or bad_rows or short:
            # ... but number rows only when parsing alone: a block with a bad row is parsed
            # again, one thread, for the row numbers its error or skipped rows report.
            bad_rows.clear()
            short.clear()
            table = parse(threads=False)
        if short:
            table = _with_short_rows(table, short, bad_rows, parse, names)
    except pa.ArrowInvalid as e:
        msg = f"{path}: malformed CSV: {message_head(str(e))}"
        row = line_from_message(str(e))  # Arrow numbers records (from 1), not lines
        if row is not None:
            lines = record_lines()
            line = int(lines[row - 1]) if 0 < row <= len(lines) else row + first_line - 1
            msg = f"{path}:{line}: malformed CSV row: {message_head(str(e))}"
            raise at_line(ConnectorError(msg), line) from None
        raise ConnectorError(msg) from None
    lines: Callable[[], np.ndarray] = record_lines
    if bad_rows:
        stats.skipped += len(bad_rows)

        def lines() -> np.ndarray:
            # Records the CSV reader skipped (numbered from 1) shift the record -> line map.
            every = record_lines()
            return np.delete(every, [n - 1 for n in bad_rows if 0 < n <= len(every)])
    blank_error: ConnectorError | None = None
    if table.num_rows and _has_blank_line(data):
        table, lines, blank_error = _blank_rows(table, lines, blank_lines(
            original, allow_comments, quote, escape, delimiter) + (first_line - 1), emptied,
            path, ignore, len(names))
    null_literal = options.get("csv.null-literal")
    converted, ok, detail = _convert_strings(table, schema, null_literal, empty_is_null=True,
                                             columns=columns, ignore=ignore)
    yield from finish(converted, ok, lines, path, ignore, stats, "csv", detail)
    if blank_error is not None:  # (after the rows before it, whose errors come first)
        raise blank_error


def _without_quote_faults(data: bytes, quote: str, delimiter: str, path: Path | str,
                          first_line: int, ignore: bool, stats: ReadStats) -> bytes:
    """``data`` without its records whose quoting is broken: a quoted field never closed
    (the record and everything after it, as Flink's reader loses them) or with text after
    its closing quote. An error naming the line, or with ignore-parse-errors the records
    skipped and counted. (A quote inside an unquoted field is a character of it.)"""
    q, d = re.escape(quote.encode()), re.escape(delimiter.encode())
    field = rb"(?:^|(?<=" + d + rb"))" + q + rb"(?:[^" + q + rb"]|" + q + q + rb")*"
    # (suspects, at C speed: an odd number of quotes, or a quote between two other
    # characters, as in '"ab"cd' (or '5" screen', which is fine); the exact scan below only
    # when there are some)
    if not _quote_suspects(data, quote.encode()[0], delimiter.encode()[0]):
        return data
    faults: list[tuple[int, int, str]] = []  # (start, end of the bytes to drop, why)
    for m in re.compile(field + rb"(" + q + rb"|\Z)", re.MULTILINE).finditer(data):
        start = data.rfind(b"\n", 0, m.start()) + 1  # (the record's line)
        if not m.group(1):
            faults.append((start, len(data), "a quoted field has no closing quote"))
            break
        after = data[m.end():m.end() + 1]
        if after and after not in (delimiter.encode(), b"\r", b"\n"):
            end = data.find(b"\n", m.end())
            faults.append((start, len(data) if end < 0 else end + 1,
                           f"text after the closing quote of a field "
                           f"({_first_line(data[m.start():m.end() + 10])!r})"))
    if not faults:
        return data
    if not ignore:
        line = data.count(b"\n", 0, faults[0][0]) + first_line
        msg = (f"{path}:{line}: malformed CSV row: {faults[0][2]} (set "
               "'csv.ignore-parse-errors' = 'true' to skip such rows)")
        raise at_line(ConnectorError(msg), line)
    kept, at = [], 0
    for start, end, _ in faults:
        if start < at:
            continue
        stats.skipped += 1
        if len(stats.skipped_at) < 10:
            line = data.count(b"\n", 0, start) + first_line
            stats.skipped_at.append(f"{path}:{line}")
        kept.append(data[at:start])
        at = end
    kept.append(data[at:])
    return b"".join(kept)


def _without_comments(data: bytes, quote: str | None, escape: str | None,
                      delimiter: str) -> bytes:
    """``data`` without its comment lines ('csv.allow-comments'): a line starting with '#'
    outside a quoted value (one inside a multi-line quoted value is a line of the value: it
    was dropped from the value)."""
    scan = QuoteScan(quote, escape, delimiter, comments=True)
    scan.record_ends(data)
    if not scan.comment_lines:
        return data
    kept, at = [], 0
    for start in scan.comment_lines:
        stop = data.find(b"\n", start)
        kept.append(data[at:start])
        at = len(data) if stop < 0 else stop + 1
    kept.append(data[at:])
    return b"".join(kept)


def _quote_suspects(data: bytes, quote: int, delimiter: int) -> bool:
    """Whether ``data`` may hold a broken quote: an odd number of quotes, or a quote between
    two other characters (numpy over the quotes' positions)."""
    raw = np.frombuffer(data, dtype=np.uint8)
    quotes = raw == quote
    if int(np.count_nonzero(quotes)) % 2:
        return True
    edge = quotes | (raw == delimiter) | (raw == 10)
    between = quotes[1:-1] & ~edge[:-2] & ~(edge[2:] | (raw[2:] == 13))
    return bool(between.any())


def _first_line(text: bytes) -> str:
    return text.split(b"\n", 1)[0].rstrip(b"\r").decode(errors="replace")


def _has_blank_line(data: bytes) -> bool:
    return data.startswith((b"\n", b"\r\n")) or b"\n\n" in data or b"\n\r\n" in data


def _blank_rows(table: pa.Table, lines: Callable[[], np.ndarray], blank: np.ndarray,
                emptied: list[int], path: str, ignore: bool, width: int
                ) -> tuple[pa.Table, Callable[[], np.ndarray], ConnectorError | None]:
    """``table`` and its rows' lines, its blank lines read as Flink's reader reads them: in a
    table of one column the value '', in one of several a row of one field, so an error
    naming its line (returned with the rows before it) or, under ignore-parse-errors, a row
    of NULLs (Arrow reads a row of empty fields; it was skipped). Lines of invalid UTF-8
    skipped (emptied) are no rows."""
    row_line = lines()
    gone = np.isin(row_line, np.asarray(emptied, dtype=np.int64))
    empty = np.isin(row_line, blank) & ~gone if width > 1 else np.zeros(len(gone), bool)
    if empty.any() and not ignore:
        first = int(np.flatnonzero(empty)[0])
        msg = (f"{path}:{int(row_line[first])}: malformed CSV row: a blank line, where the "
               f"table has {width} columns (set 'csv.ignore-parse-errors' = 'true' to read it "
               "as a row of NULLs)")
        before = row_line[:first]
        return table.slice(0, first), lambda: before, ConnectorError(msg)
    if empty.any():
        mask = pa.array(empty)
        table = pa.table({name: pc.if_else(mask, pa.nulls(len(empty), col.type), col)
                          for name, col in zip(table.column_names, table.columns)})
    if gone.any():
        table = table.filter(pa.array(~gone))
        kept = row_line[~gone]
        return table, lambda: kept, None
    return table, lines, None


def _with_short_rows(table: pa.Table, short: list[tuple[int, str, int]], skipped: list[int],
                     parse: Callable[..., pa.Table], names: list[str]) -> pa.Table:
    """``table`` with the rows that had too few fields (record number, text padded with
    empty fields, the fields it had) put back in their places, the missing fields NULL (as
    Flink's format reads them; the padding read as '')."""
    def rows(texts: list[str]) -> pa.Table | None:
        try:
            got = parse(False, "\n".join(texts).encode("utf-8"), None)  # (None: an error)
        except pa.ArrowInvalid:
            return None
        return got if got.num_rows == len(texts) else None

    padded = rows([text for _, text, _ in short])
    if padded is None:  # (one at a time: a row that still does not parse is skipped)
        pieces = [(n, rows([text]), had) for n, text, had in short]
        skipped.extend(n for n, got, _ in pieces if got is None)
        short = [(n, "", had) for n, got, had in pieces if got is not None]
        padded = pa.concat_tables([got for _, got, _ in pieces if got is not None]) \
            if short else table.slice(0, 0)
    had = np.array([h for _, _, h in short], dtype=np.int64)
    for j, name in enumerate(padded.column_names):
        missing = had <= names.index(name)
        if missing.any():
            col = padded.column(j)
            padded = padded.set_column(j, name, pc.if_else(
                pa.array(missing), pa.nulls(len(missing), col.type), col))
    numbers = [n for n, _, _ in short]
    gone = set(numbers) | set(skipped)
    total = table.num_rows + len(gone)
    kept = [n for n in range(1, total + 1) if n not in gone]
    order = np.argsort(np.array(kept + numbers), kind="stable")
    return pa.concat_tables([table, padded]).take(pa.array(order))


# The text of values Flink's csv format reads (CsvToRowDataConverters: Integer.parseInt of
# the trimmed text, java.sql's Date.valueOf, ISO times), where CAST would take more (12.7
# as an INT, '2023-01-02 ' as a DATE, '1:2:3' as a TIME, '10:00' as a TIMESTAMP's time).
CSV_TEXT = {
    **JAVA_TEXT,
    # (Java's new BigDecimal(text), as Flink's csv format reads a DECIMAL: no blanks around;
    # ' 2.5 ' failed with Arrow's message, naming no file or line)
    "decimal": r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$",
    "date": r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}$",
    "time": r"^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?$",
    "timestamp": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2} [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}"
                 r"(\.[0-9]{1,9})?\s*$",
    # (a UTC time ending 'Z', as Flink's csv format reads and writes a TIMESTAMP_LTZ; one
    # without it was read as UTC without a word, where Flink fails)
    "ltz": r"^\s*[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}[ T][0-9]{1,2}:[0-9]{2}(:[0-9]{2}"
           r"(\.[0-9]{1,9})?)?Z\s*$",
}


def _convert_strings(table: pa.Table, schema: pa.Schema, null_literal: str | None,
                     empty_is_null: bool, columns: list[int] | None = None,
                     ignore: bool = False) -> tuple[pa.Table, np.ndarray, BadValue | None]:
    """Cast string columns to the schema; returns the table, a per-row validity mask and the
    first bad value (row, column, text). A value that does not read as its type (it does not
    look like one, or it is out of its range: INT 99999999999, TINYINT 300, DATE 2020-02-30,
    DECIMAL(5, 2) 123456.789) makes its row bad, never a silent NULL; with ``ignore``
    ('csv.ignore-parse-errors') it is NULL and the row stays, as in Flink's format."""
    ok = np.ones(table.num_rows, dtype=bool)
    first: BadValue | None = None
    arrays = []
    wanted = set(columns) if columns is not None else set(range(len(schema)))
    for i, f in enumerate(schema):
        if i not in wanted:
            arrays.append(pa.nulls(table.num_rows, f.type))
            continue
        col = table.column(f.name).combine_chunks() if table.num_columns else pa.nulls(0)
        if null_literal is not None:
            col = pc.if_else(pc.equal(col, null_literal), pa.nulls(len(col), col.type), col)
        if T.is_string(f.type):
            arrays.append(col)
            continue
        kind = text_kind(f.type)
        if empty_is_null and kind != "bytes":  # (an empty BYTES field is b'', as Flink's)
            col = pc.if_else(pc.equal(pc.utf8_trim_whitespace(col), ""),
                             pa.nulls(len(col), pa.string()), col)
        if kind is None:
            arrays.append(cast_array(col, f.type))
            continue
        if kind == "bytes":  # (base64, as Flink's csv format writes BYTES)
            decoded, good = from_base64(col)
            bad = ~good
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                if first is None or i < first[0]:
                    first = (i, f.name, col[i].as_py(), "base64 BYTES")
            arrays.append(bad_values(cast_array(decoded, f.type), bad, ok, ignore))
            continue
        if kind == "bool":  # (any text but 'true' is FALSE)
            arrays.append(java_booleans(col))
            continue
        plain = plain_cast(col, f.type)
        if plain is not None:
            arrays.append(plain)
            continue
        if kind == "float":
            col = without_double_suffix(col)
        valid = pc.fill_null(pc.match_substring_regex(col, CSV_TEXT.get(kind, VALID_TEXT[kind])),
                             True)
        valid_np = np.asarray(valid.to_numpy(zero_copy_only=False))
        looks = pc.if_else(valid, col, pa.nulls(len(col), pa.string()))
        casted = cast_array(looks, f.type, safe=True, checked=True)
        lost = valid_np & np.asarray(pc.and_(pc.is_valid(looks), pc.is_null(casted))
                                     .to_numpy(zero_copy_only=False))
        if pa.types.is_decimal(f.type):  # more integral digits than DECIMAL(p, s) holds
            limit = 10.0 ** (f.type.precision - f.type.scale)
            approx = pc.round(pc.cast(looks, pa.float64(), safe=False), f.type.scale)
            big = pc.fill_null(pc.greater_equal(pc.abs(approx), limit), False)
            lost |= _too_big(looks, np.asarray(big.to_numpy(zero_copy_only=False)), f.type)
        bad = ~valid_np | lost
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            if first is None or i < first[0]:
                first = (i, f.name, col[i].as_py(), T.type_name(f.type) + (
                    " (UTC text ending 'Z')" if kind == "ltz" else ""))
        arrays.append(bad_values(casted, bad, ok, ignore))
    keep = pa.array(ok)
    out = [col.filter(keep) if not ok.all() else col for col in arrays]
    return pa.Table.from_arrays(out, schema=schema), ok, first


def _too_big(texts: pa.Array, near: np.ndarray, target: pa.Decimal128Type) -> np.ndarray:
    """Which of the decimal ``texts`` whose float value is ``near`` or past DECIMAL(p, s)'s
    range really are past it once rounded to its scale: a float cannot tell 38 nines (a
    DECIMAL(38, 0)) from 10^38; only these few rows are looked at one by one."""
    out = near.copy()
    step = Decimal(1).scaleb(-target.scale)
    limit = Decimal(10) ** (target.precision - target.scale)
    with localcontext() as ctx:
        ctx.prec = 100
        for i in np.flatnonzero(near):
            value = Decimal(texts[int(i)].as_py().strip())
            out[i] = abs(value.quantize(step, rounding=ROUND_HALF_UP)) >= limit
    return out


# The characters a value's text can hold, by its text kind (cast.text_kind; a kind not
# here, or no kind, can hold any character).
_TEXT_CHARS = {"int": "0123456789-.", "decimal": "0123456789-.E+", "bool": "truefals",
               "float": "0123456789-.E+NaInfity",
               "date": "0123456789-", "time": "0123456789:.", "timestamp": "0123456789-:. ",
               "ltz": "0123456789-:. Z"}
# The kinds Jackson writes as numbers or booleans, never quoted.
_UNQUOTED = ("int", "decimal", "float", "bool")


def _ltz_text(col: pa.Array) -> pa.Array:
    """TIMESTAMP_LTZ values in UTC ending 'Z', as Flink's csv format writes them."""
    utc = cast_array(col, pa.timestamp(col.type.unit))
    return pc.binary_join_element_wise(time_text(utc, cast_array(utc, pa.string())), "Z", "")


def _time_text(col: pa.Array) -> pa.Array:
    """TIME / TIMESTAMP values without the fraction's trailing zeros."""
    return time_text(col, cast_array(col, pa.string()))


def csv_rows(batch: pa.RecordBatch, options: dict[str, str]) -> pa.Array | None:
    """Each row's CSV text, without its newline (None when there are no columns or no
    rows), as Flink's csv format (Jackson's CsvEncoder) writes it: a value is quoted when it
    holds a character below the higher of the delimiter and the quote character, or a
    backslash ('a b', '2024-01-01 10:00:00'); a time's fraction without trailing zeros; a
    TIMESTAMP_LTZ in UTC ending 'Z'; BYTES as base64; a BOOLEAN as 'true'."""
    delim = opt_char(options, "csv.field-delimiter", ",") or ","
    quote = opt_char(options, "csv.quote-character", '"') or '"'
    limit = max(ord(delim), ord(quote)) + 1
    escape = csv_quoting(options)[1]
    kinds = [text_kind(col.type) for col in batch.columns]
    if csv_quoting(options)[0] is None:  # (quoting disabled: values as they are, as Flink)
        plain = [True] * len(kinds)
        quoted = [False] * len(kinds)
    else:
        # (Jackson writes numbers and booleans as they are, unquoted whatever the
        # delimiter; other text is quoted by its characters)
        plain = [(chars := _TEXT_CHARS.get(kind or "")) is not None and
                 ((kind in _UNQUOTED and delim not in chars and quote not in chars) or
                  all(ord(c) >= limit and c not in ("\\", escape) for c in chars))
                 for kind in kinds]
        # (a timestamp's text always holds a space, the least of its characters: when it is
        # not plain, every value is quoted; unless it may hold a character a quoted value
        # doubles, it is quoted without a look at it)
        quoted = [not p and kind in ("timestamp", "ltz") and
                  not {quote, escape, "\\"} & set(_TEXT_CHARS[kind])
                  for p, kind in zip(plain, kinds)]
    columns = [_cell_texts(col, quote if q else None) for col, q in zip(batch.columns, quoted)]
    extra = re.escape(escape) if escape is not None and escape != "\\" else ""
    unsafe = rf"[\x00-\x{{{limit - 1:x}}}\\{extra}]"
    return _csv_lines(columns, delim, quote, options.get("csv.null-literal", ""),
                      [p or q for p, q in zip(plain, quoted)], unsafe, escape)


def _cell_texts(col: pa.Array, quote: str | None) -> pa.Array:
    """The text of each value of ``col`` (NULL for NULL), between ``quote`` characters if
    one is given; a time's text is made once per distinct value (window bounds repeat)."""
    if pa.types.is_timestamp(col.type) or pa.types.is_time(col.type):
        text = _ltz_text if T.is_ltz(col.type) else _time_text
        if quote is None:
            return over_distinct(col, text)
        return over_distinct(
            col, lambda v: pc.binary_join_element_wise(quote, text(v), quote, ""))
    assert quote is None, col.type
    return (col if pa.types.is_string(col.type) else col.cast(pa.string())
            if T.is_string(col.type)
            # (a BOOLEAN as Java writes it, 'true': CAST's text is 'TRUE')
            else pc.if_else(col, "true", "false") if pa.types.is_boolean(col.type)
            else to_base64(col) if pa.types.is_binary(col.type) or
            pa.types.is_fixed_size_binary(col.type) or pa.types.is_large_binary(col.type)
            # (Jackson's number of the BigDecimal without trailing zeros: '1.5', '1E+2')
            else jackson_decimal_texts(col) if pa.types.is_decimal(col.type)
            else cast_array(col, pa.string()))


def csv_bytes(batch: pa.RecordBatch, options: dict[str, str]) -> bytes:
    lines = csv_rows(batch, options)
    if lines is None:
        return b""
    # Each line and its newline, taken from the joined array's data buffer (no Python
    # string per line).
    text = pc.binary_join_element_wise(lines, "", "\n")
    offsets = np.frombuffer(text.buffers()[1], dtype=np.int64 if pa.types.is_large_string(
        text.type) else np.int32)
    data = text.buffers()[2]
    if data is None:
        return b""
    first, last = int(offsets[text.offset]), int(offsets[text.offset + len(text)])
    return data.to_pybytes()[first:last]


def csv_text(columns: list[pa.Array], delim: str = ",", quote: str = '"',
             null: str = "", quote_empty: bool = False) -> str:
    """CSV lines from string columns, quoting only the values that need it (and with
    ``quote_empty`` an empty string, as "", so that it reads back apart from a NULL)."""
    unsafe = f"[{re.escape(delim)}{re.escape(quote)}\n]|^$" if quote_empty else None
    lines = _csv_lines(columns, delim, quote, null, [False] * len(columns), unsafe)
    if lines is None:
        return ""
    return "\n".join(lines.to_pylist()) + "\n"


def _csv_lines(columns: list[pa.Array], delim: str, quote: str, null: str,
               plain: list[bool], unsafe: str | None = None, escape: str | None = None
               ) -> pa.Array | None:
    """One CSV line per row (None when there are no columns or no rows); ``plain``: the
    columns whose text never needs quoting; ``unsafe``: a pattern of the characters that
    make a value quoted (else the delimiter, the quote character and a newline); in a
    quoted value the quote character is doubled, and so is the ``escape`` character, as
    Jackson writes them (C:\\temp -> "C:\\\\temp": read back with the escape character, the
    same text)."""
    cols = []
    for col, is_plain in zip(columns, plain):
        if is_plain:
            cols.append(pc.fill_null(col, null))
            continue
        needs = pc.match_substring_regex(col, unsafe) if unsafe is not None else pc.or_(
            pc.match_substring(col, delim),
            pc.or_(pc.match_substring(col, quote), pc.match_substring(col, "\n")))
        escaped = col if escape is None else pc.replace_substring(col, escape, escape * 2)
        escaped = pc.replace_substring(escaped, quote, quote + quote)
        text = pc.if_else(pc.fill_null(needs, False),
                          pc.binary_join_element_wise(quote, escaped, quote, ""), col)
        cols.append(pc.fill_null(text, null))
    if not cols or len(cols[0]) == 0:
        return None
    return pc.binary_join_element_wise(*cols, delim) if len(cols) > 1 else cols[0]
