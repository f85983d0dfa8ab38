"""Flink's positional string functions over Arrow: SUBSTRING, POSITION / LOCATE, and the
fitting of a string to CHAR(n) / VARCHAR(n) after a CAST. Positions count characters, from 1."""

from __future__ import annotations

from typing import SupportsInt

import pyarrow as pa
import pyarrow.compute as pc

Array = pa.Array

_END = 2**31 - 1


def as_int(value: object) -> int:
    """``int(value)`` for a literal argument (a number, or a string of digits)."""
    if isinstance(value, (str, bytes, SupportsInt)):
        return int(value)
    raise TypeError(f"int() argument must be a string or a number, not {type(value).__name__!r}")


def substring(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """SUBSTRING(s, pos [, len]) as Flink's BinaryStringDataUtil.substringSQL: pos 0 is 1, a
    negative pos counts from the end; a start before the first character gives ''; a
    negative len gives NULL."""
    s = args[0]
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


def position(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """POSITION(needle IN s) and LOCATE(needle, s [, from]): the 1-based character position of
    the first needle at or after ``from`` (a ``from`` below 1 is 1), 0 if there is none; an
    empty needle is found at 1 wherever ``from`` is (Flink's BinaryStringData.indexOf)."""
    hay = args[1]
    if lits[0] is None or (len(lits) > 2 and lits[2] is None):
        return pa.nulls(len(hay), pa.int32())
    needle = str(lits[0])
    skip = max(as_int(lits[2]) - 1, 0) if len(lits) > 2 else 0
    if needle == "":
        return pc.if_else(pc.is_null(hay), pa.scalar(None, pa.int32()),
                          pa.scalar(1, pa.int32()))
    rest = pc.utf8_slice_codeunits(hay, start=skip, stop=_END) if skip else hay
    # The text before the first needle, in characters (find_substring counts bytes).
    parts = pc.split_pattern(rest, pattern=needle, max_splits=1)
    found = pc.equal(pc.list_value_length(parts), 2)
    before = pc.utf8_length(pc.list_element(parts, 0))
    at = pc.add(before, skip + 1).cast(pa.int32())
    return pc.if_else(found, at, pa.scalar(0, pa.int32()))


def char_fit(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A string CAST to CHAR(n): cut to n characters, or padded with spaces to n."""
    n = as_int(lits[1])
    return pc.utf8_slice_codeunits(pc.utf8_rpad(args[0], width=n, padding=" "), 0, n)


def varchar_fit(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A string CAST to VARCHAR(n): cut to n characters."""
    return pc.utf8_slice_codeunits(args[0], 0, as_int(lits[1]))
