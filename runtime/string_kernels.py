"""Flink's positional string functions over Arrow: SUBSTRING, POSITION / LOCATE, and the
fitting of a string to CHAR(n) / VARCHAR(n) after a CAST. Positions count characters, from 1."""

from __future__ import annotations

from typing import SupportsInt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

Array = pa.Array

_END = 2**31 - 1

# Any character but a line terminator: what '_' of LIKE and SIMILAR TO (Calcite's '.', where
# '%' is '(?s:.*)') and a Java regex's '.' match; literal characters, which RE2 and Python's
# re both read in a class.
NOT_LINE_END = "[^\n\r\x85\u2028\u2029]"


def as_int(value: object) -> int:
    """``int(value)`` for a literal argument (a number, or a string of digits)."""
    if isinstance(value, (str, bytes, SupportsInt)):
        return int(value)
    raise TypeError(f"int() argument must be a string or a number, not {type(value).__name__!r}")


def substring(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """SUBSTRING(s, pos [, len]) as Flink's BinaryStringDataUtil.substringSQL: pos 0 is 1, a
    negative pos counts from the end; a start before the first character or after the last
    gives ''; a negative len gives NULL. ``pos`` and ``len`` may be columns."""
    s = args[0]
    if any(lit is None and a.null_count != len(a) for a, lit in zip(args[1:], lits[1:])):
        return _substring_columns(s, args[1], args[2] if len(args) > 2 else None)
    start = lits[1]
    length = lits[2] if len(lits) > 2 else None
    if start is None or (len(lits) > 2 and length is None):
        return pa.nulls(len(s), pa.string())
    pos = as_int(start)
    if length is not None and as_int(length) < 0:
        return pa.nulls(len(s), pa.string())
    n = _END if length is None else as_int(length)
    if pos >= 0:
        begin = max(pos - 1, 0)
        return pc.utf8_slice_codeunits(s, start=begin, stop=min(begin + n, _END))
    stop = pos + n
    cut = pc.utf8_slice_codeunits(s, start=pos, stop=stop if stop < 0 else _END)
    before_first = pc.less(pc.utf8_length(s), -pos)  # len + pos < 0
    return pc.if_else(before_first, pa.scalar("", pa.string()), cut)


def _substring_columns(s: Array, pos: Array, length: Array | None) -> Array:
    """SUBSTRING with a position (and length) per row: the same rules, row by row, computed
    on whole columns."""
    s = _plain(s)
    valid = _valid(s) & _valid(pos)
    p = _ints(pos)
    if length is not None:
        valid &= _valid(length)
        n = _ints(length)
        valid &= n >= 0
    layout = _Layout(s)
    chars = layout.chars
    start = np.where(p > 0, p - 1, np.where(p < 0, chars + p, 0))
    empty = (start < 0) | (start >= chars)
    start = np.clip(start, 0, chars)
    stop = chars if length is None else np.minimum(chars, start + np.maximum(n, 0))
    stop = np.where(empty, start, stop)
    return slice_chars(s, start, stop, valid, layout)


def _valid(a: Array) -> np.ndarray:
    if a.null_count == 0:
        return np.ones(len(a), dtype=bool)
    return pc.is_valid(a).to_numpy(zero_copy_only=False)


def _ints(a: Array) -> np.ndarray:
    return pc.fill_null(a.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)


def _plain(s: Array) -> Array:
    """A string array of one chunk with 32-bit offsets."""
    if isinstance(s, pa.ChunkedArray):
        s = s.combine_chunks()
    return s if s.type == pa.string() else s.cast(pa.string())


class _Layout:
    """Where the characters of a string array's rows are: ``chars`` per row and, unless every
    byte is a character (ASCII), the byte at which each character begins."""

    def __init__(self, s: Array) -> None:
        offsets = np.frombuffer(s.buffers()[1], dtype=np.int32)
        self.offsets = offsets[s.offset:s.offset + len(s) + 1].astype(np.int64)
        data = s.buffers()[2]
        self.data = np.frombuffer(data, dtype=np.uint8) if data is not None \
            else np.zeros(0, dtype=np.uint8)
        base, end = int(self.offsets[0]), int(self.offsets[-1])
        used = self.data[base:end]
        self.lead: np.ndarray | None = None
        if not (used >= 0x80).any():
            self.first = self.offsets[:-1]
            self.chars = np.diff(self.offsets)
            return
        is_lead = (used & 0xC0) != 0x80
        # (lead positions, and per byte the number of characters begun before it)
        self.lead = np.flatnonzero(is_lead) + base
        before = np.zeros(len(used) + 1, dtype=np.int32)  # (int32: 4x faster than int64)
        np.cumsum(is_lead, dtype=np.int32, out=before[1:])
        self.first = before[self.offsets[:-1] - base].astype(np.int64)
        self.chars = before[self.offsets[1:] - base] - self.first

    def byte_of(self, char: np.ndarray) -> np.ndarray:
        """The byte at which character ``char`` (0-based, at most the row's length) of each
        row begins; the row's end for ``char`` = its length."""
        if self.lead is None:
            return self.offsets[:-1] + char
        inside = char < self.chars
        at = np.where(inside, self.first + char, 0)
        lead = self.lead if len(self.lead) else np.zeros(1, dtype=np.int64)
        return np.where(inside, lead[at], self.offsets[1:])


def slice_chars(s: Array, start: np.ndarray, stop: np.ndarray, valid: np.ndarray,
                layout: _Layout | None = None) -> Array:
    """Characters ``start[i]`` to ``stop[i]`` (0-based, stop excluded, both within the
    string) of each string; NULL where ``valid`` is False."""
    s = _plain(s)
    layout = layout or _Layout(s)
    first, last = layout.byte_of(start), layout.byte_of(stop)
    lengths = np.where(valid, np.maximum(last - first, 0), 0)
    new_offsets = np.zeros(len(s) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    total = int(new_offsets[-1])
    if total:
        gather = np.repeat(first - new_offsets[:-1], lengths) + np.arange(total)
        chars = layout.data[gather]
    else:
        chars = np.zeros(0, dtype=np.uint8)
    bitmap = None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))
    if total >= 2**31:
        result = pa.Array.from_buffers(pa.large_string(), len(s), [
            bitmap, pa.py_buffer(new_offsets), pa.py_buffer(chars)])
        return result.cast(pa.string())
    return pa.Array.from_buffers(pa.string(), len(s), [
        bitmap, pa.py_buffer(new_offsets.astype(np.int32)), pa.py_buffer(chars)])


def position(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """POSITION(needle IN s) and LOCATE(needle, s [, from]): the 1-based character position of
    the first needle at or after ``from`` (a ``from`` below 1 is 1), 0 if there is none; an
    empty needle is found at 1 wherever ``from`` is (Flink's BinaryStringData.indexOf).
    ``from`` may be a column; a needle that is a column: see column_arguments.py."""
    hay = args[1]
    if lits[0] is None or (len(lits) > 2 and lits[2] is None and
                           args[2].null_count == len(args[2])):
        return pa.nulls(len(hay), pa.int32())
    needle = str(lits[0])
    if len(lits) > 2 and lits[2] is None:  # (from, per row)
        hay = _plain(hay)
        valid = _valid(hay) & _valid(args[2])
        layout = _Layout(hay)
        skip = np.clip(_ints(args[2]) - 1, 0, layout.chars)
        if needle == "":
            return pa.array(np.ones(len(hay), dtype=np.int32), pa.int32(), mask=~valid)
        rest = slice_chars(hay, skip, layout.chars, valid, layout)
        found = _find(rest, needle)
        at = pc.add(found, pa.array(skip, pa.int64())).cast(pa.int32())
        return pc.if_else(pc.greater(found, 0), at, pa.scalar(0, pa.int32()))
    skip = max(as_int(lits[2]) - 1, 0) if len(lits) > 2 else 0
    if needle == "":
        return pc.if_else(pc.is_null(hay), pa.scalar(None, pa.int32()),
                          pa.scalar(1, pa.int32()))
    rest = pc.utf8_slice_codeunits(hay, start=skip, stop=_END) if skip else hay
    found = _find(rest, needle)
    return pc.if_else(pc.greater(found, 0), pc.add(found, skip).cast(pa.int32()),
                      pa.scalar(0, pa.int32()))


def _find(hay: Array, needle: str) -> Array:
    """The 1-based character position of the first ``needle`` in each string, 0 if none."""
    # The text before the first needle, in characters (find_substring counts bytes).
    parts = pc.split_pattern(hay, pattern=needle, max_splits=1)
    found = pc.equal(pc.list_value_length(parts), 2)
    before = pc.add(pc.utf8_length(pc.list_element(parts, 0)), 1).cast(pa.int64())
    return pc.if_else(found, before, pa.scalar(0, pa.int64()))


def char_fit(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A string CAST to CHAR(n): cut to n characters, or padded with spaces to n."""
    n = as_int(lits[1])
    return pc.utf8_slice_codeunits(pc.utf8_rpad(args[0], width=n, padding=" "), 0, n)


def varchar_fit(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A string CAST to VARCHAR(n): cut to n characters; bytes CAST to VARBINARY(n): cut to
    n bytes."""
    if pa.types.is_binary(args[0].type):
        return pc.binary_slice(args[0], 0, as_int(lits[1]))
    return pc.utf8_slice_codeunits(args[0], 0, as_int(lits[1]))


def join_skipping_nulls(values: list[Array], sep: Array | str) -> Array:
    """Arrow's ``binary_join_element_wise(..., null_handling="skip")``, one output row per
    input row: the values of each row that are not NULL joined by ``sep`` ('' when all are
    NULL; NULL where ``sep`` is NULL). Arrow 26 drops the rows whose values are all NULL
    (a shorter result); here such a row's first value is '' before the join."""
    all_null = pc.is_null(values[0])
    for v in values[1:]:
        all_null = pc.and_(all_null, pc.is_null(v))
    first = pc.if_else(all_null, pa.scalar("", values[0].type), values[0])
    return pc.binary_join_element_wise(first, *values[1:], sep, null_handling="skip")
