"""A text file (csv, json lines) read as blocks of whole records, in bounded memory.

A block ends at a line break that ends a record: with a quote character, a line break inside a
quoted field does not (the quote state is carried from the start of the file: csv_quotes.py,
as ``text_rows.row_lines`` numbers records). Each block comes
with the line number of its first line, so errors still name ``file:line``.

With ``split=(i, n)`` a file is read as the i-th of n byte ranges: a subtask reads the records
that start in its range (the record that crosses the range's end included), so the n subtasks
together read every record once. Finding where a range's first record starts needs the quote
parity and line count before it: the bytes before the range are scanned (counted, not parsed).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from sqlengine.connectors.csv_quotes import QuoteScan
from sqlengine.errors import ConnectorError

BLOCK_BYTES = 8 << 20


def record_blocks(path: Path | str, quote: str | None = None, escape: str | None = None,
                  split: tuple[int, int] = (0, 1), block_bytes: int | None = None,
                  start: tuple[int, int] | None = None, delimiter: str = ",",
                  comments: bool = False) -> Iterator[tuple[bytes, int, int]]:
    """``_record_blocks``; a file that cannot be read is an error naming it (an I/O error
    came without its path)."""
    try:
        scan = QuoteScan(quote, escape, delimiter, comments)
        yield from _record_blocks(path, scan, split, block_bytes, start)
    except OSError as e:
        raise ConnectorError(f"{path}: cannot read the file: {e.strerror or e}") from None


def _record_blocks(path: Path | str, parity: QuoteScan,
                   split: tuple[int, int], block_bytes: int | None,
                   start: tuple[int, int] | None) -> Iterator[tuple[bytes, int, int]]:
    """(bytes of whole records, line number of the first, file offset of the first) for the
    records of ``path`` that start in byte range ``split`` (see the module's docstring); blocks
    of about ``block_bytes`` (BLOCK_BYTES by default), longer when one record is. ``start`` =
    (offset, line) resumes at a record that starts there (a checkpointed position)."""
    block_bytes = block_bytes or BLOCK_BYTES
    index, count = split
    size = os.path.getsize(path)
    lo = size * index // count
    hi = size * (index + 1) // count
    if lo >= hi and count > 1:
        return
    line = 1
    with open(path, "rb") as f:
        pos = 0
        if start is not None:  # (a record starts there: outside quotes by definition)
            pos, line = start
            f.seek(pos)
            lo = pos
        # Scan up to the byte before the range: the record starting in it is found below as
        # the one after the first record end at or past lo - 1.
        skip_to = max(lo - 1, 0)
        while pos < skip_to:
            chunk = f.read(min(block_bytes, skip_to - pos))
            if not chunk:
                return
            parity.record_ends(chunk)
            line += chunk.count(b"\n")
            pos += len(chunk)
        started = lo == 0 or start is not None
        pending = b""  # bytes of records not yet yielded, from file offset pos - len(pending)
        pending_line = line
        pending_at = pos  # the file offset of pending's first byte
        while True:
            chunk = f.read(block_bytes)
            if not chunk:
                break
            ends = parity.record_ends(chunk)
            base = pos  # file offset of chunk[0]
            pos += len(chunk)
            if not started:
                if not len(ends):
                    line += chunk.count(b"\n")
                    continue
                first = int(ends[0]) + 1  # the first record starting at or after lo
                line += chunk.count(b"\n", 0, first)
                if base + first >= hi:
                    return
                chunk = chunk[first:]
                ends = ends[1:] - first
                base += first
                started = True
                pending_line = line
                pending_at = base
            # Records that start at or past hi belong to the next range.
            past = np.flatnonzero(base + ends + 1 >= hi)
            if len(past):
                cut = int(ends[past[0]]) + 1
                block = pending + chunk[:cut]
                if block:
                    yield block, pending_line, pending_at
                return
            if len(ends):
                cut = int(ends[-1]) + 1
                block = pending + chunk[:cut]
                yield block, pending_line, pending_at
                pending_line += block.count(b"\n")
                pending_at += len(block)
                pending = chunk[cut:]
            else:
                pending += chunk
        if started and pending:
            yield pending, pending_line, pending_at
