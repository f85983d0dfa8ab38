"""What the text formats (csv, json lines) share: line numbers of records, turning rows that
do not parse into file:line errors (or skipped rows), and reading numbers and booleans from
text as Flink's formats do (Java's parsers)."""

from __future__ import annotations

import base64
import binascii
import decimal
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import WIDE_DECIMALS, per_distinct
from sqlengine.connectors.base import ReadStats
from sqlengine.connectors.csv_quotes import QuoteScan
from sqlengine.errors import ConnectorError

BATCH_ROWS = 65536

# Numbers as Java's Integer.parseInt / Double.parseDouble read trimmed text (a double's 'f' /
# 'd' suffix taken off first: without_double_suffix); CAST would take more (12.7 as an INT).
JAVA_TEXT = {
    "int": r"^\s*[+-]?[0-9]+\s*$",
    "float": r"^\s*[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)\s*$",
}


def java_booleans(text: pa.Array) -> pa.Array:
    """Java's Boolean.parseBoolean of trimmed text: 'true' in any case, anything else FALSE."""
    return pc.equal(pc.utf8_lower(pc.utf8_trim_whitespace(text)), "true")


def without_double_suffix(text: pa.Array) -> pa.Array:
    """Numbers' text without the 'f' / 'd' suffix Java's Double.parseDouble takes."""
    return pc.replace_substring_regex(text, r"^(\s*[+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)"
                                            r"[fFdD](\s*)$", r"\1\2")


def row_lines(data: bytes, allow_comments: bool, quote: str | None = None,
              escape: str | None = None, blanks: bool = False,
              delimiter: str = ",") -> np.ndarray:
    """1-based line number where each record starts (comment lines skipped, and blank ones
    unless ``blanks``); with a ``quote`` character, a line break inside a quoted field does
    not start a record (csv_quotes.py)."""
    lines, blank, comment = _record_lines(data, allow_comments, quote, escape, delimiter)
    return lines[~comment & (blanks | ~blank)]


def blank_lines(data: bytes, allow_comments: bool, quote: str | None = None,
                escape: str | None = None, delimiter: str = ",") -> np.ndarray:
    """The 1-based numbers of the blank lines that would start a record (not inside a
    quoted field)."""
    lines, blank, comment = _record_lines(data, allow_comments, quote, escape, delimiter)
    return lines[blank & ~comment]


def _record_lines(data: bytes, allow_comments: bool, quote: str | None,
                  escape: str | None, delimiter: str = ","
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line that may start a record: its number, whether it is blank, whether it is a
    comment."""
    raw = np.frombuffer(data, dtype=np.uint8)
    breaks = np.nonzero(raw == 10)[0]
    line_of = None
    if quote is not None and len(raw) and ord(quote) in raw:
        line_of = np.concatenate([[0], breaks + 1])  # every physical line's start
        breaks = QuoteScan(quote, escape, delimiter, allow_comments).record_ends(data)
    starts = np.concatenate([[0], breaks + 1])
    starts = starts[starts < len(raw)] if len(raw) else starts[:0]
    ends = np.append(starts[1:] - 1, len(raw) - int(len(raw) > 0 and raw[-1] == 10))
    length = ends - starts
    # A line holding only "\r" is blank too.
    blank = (length == 0) | ((length == 1) & (raw[np.minimum(starts, len(raw) - 1)] == 13))
    comment = np.zeros(len(starts), dtype=bool)
    if allow_comments and len(raw):
        comment = raw[np.minimum(starts, len(raw) - 1)] == ord("#")
    lines = np.arange(1, len(starts) + 1) if line_of is None else \
        np.searchsorted(line_of, starts) + 1
    return lines, blank, comment


# The first bad value of a read: (row, column name, its text, the column's type).
BadValue = tuple[int, str, object, str]


def bad_values(casted: pa.Array, bad: np.ndarray, ok: np.ndarray, ignore: bool) -> pa.Array:
    """``casted`` with its ``bad`` values NULL (ignoring parse errors), or their rows marked
    not ``ok`` (in place)."""
    if not bad.any():
        return casted
    if ignore:
        return pc.if_else(pa.array(bad), pa.nulls(len(casted), casted.type), casted)
    ok &= ~bad
    return casted


def finish(table: pa.Table, ok: np.ndarray, lines: np.ndarray | Callable[[], np.ndarray],
           path: Path | str, ignore: bool, stats: ReadStats, fmt: str,
           detail: BadValue | None = None) -> Iterator[pa.RecordBatch]:
    """``table``'s rows in batches, its bad rows (``~ok``) an error naming file:line (or
    skipped and counted); ``lines`` (each row's line, or what computes them when a row is
    bad) is only read for a bad row."""
    if not ok.all():
        if callable(lines):
            lines = lines()
        bad = np.nonzero(~ok)[0]
        if not ignore:
            line = int(lines[bad[0]]) if bad[0] < len(lines) else int(bad[0]) + 1
            what = "a value does not match its column type"
            remedy = "to skip such rows"
            if detail is not None and detail[0] == bad[0]:
                what = f"column {detail[1]!r}: {detail[2]!r} is not a valid {detail[3]}"
                remedy = "to read such values as NULL"  # (as Flink: the row is kept)
            msg = (f"{path}:{line}: cannot parse row as the table's columns ({what}); set "
                   f"'{fmt}.ignore-parse-errors' = 'true' {remedy}")
            raise ConnectorError(msg)
        stats.skipped += len(bad)
        stats.skipped_at.extend(f"{path}:{int(lines[i])}" for i in bad[:10] if i < len(lines))
    yield from (b for b in table.to_batches(max_chunksize=BATCH_ROWS) if b.num_rows)


def valid_utf8(path: Path | str, data: bytes, ignore: bool, stats: ReadStats,
               first_line: int, fmt: str, emptied: list[int] | None = None) -> bytes:
    """``data`` if it is UTF-8; otherwise the error naming the first bad line and byte, or,
    with ignore-parse-errors, ``data`` with its bad lines emptied (and counted as skipped;
    their numbers added to ``emptied``)."""
    if data.isascii():  # (no copy: a word at a time)
        return data
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        pass
    lines = data.split(b"\n")
    for i, raw in enumerate(lines):
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            no = first_line + i
            if not ignore:
                msg = (f"{path}:{no}:{e.start + 1}: invalid UTF-8 (byte 0x{raw[e.start]:02x}); "
                       f"set '{fmt}.ignore-parse-errors' = 'true' to skip such rows")
                raise ConnectorError(msg) from None
            stats.skipped += 1
            if len(stats.skipped_at) < 10:
                stats.skipped_at.append(f"{path}:{no}")
            lines[i] = b""
            if emptied is not None:
                emptied.append(no)
    return b"\n".join(lines)


def message_head(text: str) -> str:
    """The first line of an error message."""
    return text.strip().splitlines()[0] if text.strip() else text


def line_from_message(text: str) -> int | None:
    import re

    m = re.search(r"[Rr]ow #?(\d+)", text)
    return int(m.group(1)) if m else None


def to_base64(col: pa.Array) -> pa.Array:
    """BYTES as the base64 text Flink's csv and json formats write."""
    return pa.array([None if v is None else base64.b64encode(v).decode("ascii")
                     for v in col.to_pylist()], pa.string())


def from_base64(col: pa.Array) -> tuple[pa.Array, np.ndarray]:
    """base64 text as BYTES (NULL stays NULL), and which values were base64."""
    out: list[bytes | None] = []
    good = np.ones(len(col), dtype=bool)
    for i, v in enumerate(col.to_pylist()):
        if v is None:
            out.append(None)
            continue
        try:
            out.append(base64.b64decode(v.strip(), validate=True))
        except (binascii.Error, ValueError):
            out.append(None)
            good[i] = False
    return pa.array(out, pa.binary()), good


def time_text(col: pa.Array, text: pa.Array) -> pa.Array:
    """``text``, the text of TIME / TIMESTAMP values ``col`` (with all the unit's digits),
    without the fraction's trailing zeros, as trimmed_fraction, from the values' ticks:
    one cut per number of zeros instead of a regular expression per value (a tenth of the
    time, for a csv sink of window bounds)."""
    digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[col.type.unit]
    if digits == 0:
        return text
    store = pa.int32() if pa.types.is_time32(col.type) else pa.int64()
    frac = np.mod(col.cast(store).fill_null(0).to_numpy(zero_copy_only=False)
                  .astype(np.int64), 10 ** digits)
    cut = np.where(frac == 0, digits + 1, 0)
    for k in range(1, digits):
        cut += (frac != 0) & (frac % 10 ** k == 0)
    out = text
    for c in np.unique(cut).tolist():
        if c:
            out = pc.if_else(pa.array(cut == c), pc.utf8_slice_codeunits(text, 0, -c), out)
    return out


def over_distinct(col: pa.Array, fn: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``fn(col)`` for an element-wise array function ``fn``, computed over the distinct
    values when they are few (a quarter of the rows or fewer: window bounds, dates) and
    spread back over the rows; a text per value is costly to make, a take is not."""
    if len(col) >= 64:
        encoded = pc.dictionary_encode(col)
        if isinstance(encoded, pa.ChunkedArray):
            encoded = encoded.combine_chunks()
        if len(encoded.dictionary) * 4 <= len(col):
            return pc.take(fn(encoded.dictionary), encoded.indices)
    return fn(col)


def trimmed_fraction(text: pa.Array) -> pa.Array:
    """Times' and timestamps' text without the fraction's trailing zeros (nor an empty
    fraction), as Flink's csv and json formats write them: '10:00:00.1', '10:00:00'."""
    text = pc.replace_substring_regex(text, r"(\.[0-9]*?)0+(Z?)$", r"\1\2")
    return pc.replace_substring_regex(text, r"\.(Z?)$", r"\1")


def jackson_decimal_texts(col: pa.Array) -> pa.Array:
    """DECIMAL values as Flink's csv and json formats write them: Jackson's number of the
    value's BigDecimal without trailing zeros, in Java's toString (1.50 -> '1.5', 0.00 ->
    '0', 100.00 -> '1E+2', 0.00000012 -> '1.2E-7'). The text of Arrow's cast is trimmed
    for most values; a whole number ending in 0 and a value below 10^-6, which Java writes
    in E notation, are written one distinct value at a time (Python's Decimal prints as
    Java's BigDecimal)."""
    text = pc.cast(col, pa.string())  # (Arrow's text of 10^-8 is '1.00E-8' too)
    if col.type.scale > 0:
        text = pc.if_else(pc.match_substring(text, "."),
                          pc.replace_substring_regex(text, r"\.?0+$", ""), text)
    rest = pc.fill_null(pc.or_(pc.match_substring_regex(text, r"^-?[0-9]*0$|E"),
                               pc.match_substring_regex(text, r"^-?0\.000000")), False)
    zero = pc.fill_null(pc.equal(col, pa.scalar(decimal.Decimal(0), col.type)), False)
    text = pc.if_else(zero, "0", text)
    rest = pc.and_(rest, pc.invert(zero))
    if not pc.any(rest).as_py():
        return text
    wide = WIDE_DECIMALS
    others = per_distinct(col.filter(rest), lambda v: str(wide.normalize(v)), pa.string())
    return pc.replace_with_mask(text, rest, others)


def at_line(e: ConnectorError, line: int) -> ConnectorError:
    """``e``, which names ``line`` as one that cannot be parsed (for earlier_error)."""
    e.line = line  # type: ignore[attr-defined]
    return e


def earlier_error(e: ConnectorError, data: bytes, first_line: int,
                  read: Callable[[bytes], object]) -> None:
    """Raise the error of a line before the one ``e`` names (a line that is no JSON or CSV
    row), if one is bad in a way found after parsing (a value its column cannot hold, an unknown
    operation): the first bad line is the one named. (The later line was named: the lines
    are parsed before their values are checked.) ``read`` reads lines as the format does."""
    line = getattr(e, "line", None)
    if isinstance(line, int) and line > first_line:
        read(b"\n".join(data.split(b"\n")[:line - first_line]))
