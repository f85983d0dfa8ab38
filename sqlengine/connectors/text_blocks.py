"""A text file (csv, json lines) read as blocks of whole records, in bounded memory.

A block ends at a line break that ends a record: with a quote character, a line break inside a
quoted field does not (quote parity is carried from the start of the file, quotes preceded by
the escape character not counted, as ``text_rows.row_lines`` numbers records). Each block comes
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

from sqlengine.errors import ConnectorError

BLOCK_BYTES = 8 << 20


class _Parity:
    """Quote parity and line count of the bytes seen so far."""

    def __init__(self, quote: str | None, escape: str | None) -> None:
        self.quote = ord(quote) if quote else None
        self.escape = ord(escape) if escape else None
        self.inside = False
        self.last = -1  # the previous byte (an escape before a chunk's first quote)

    def record_ends(self, chunk: bytes) -> np.ndarray:
        """Offsets in ``chunk`` of the line breaks that end a record; advances the state."""
        raw = np.frombuffer(chunk, dtype=np.uint8)
        if not len(raw):
            return np.empty(0, dtype=np.int64)
        newlines = np.flatnonzero(raw == 10)
        if self.quote is None or self.quote not in raw:
            ends = newlines if not self.inside else np.empty(0, dtype=np.int64)
        else:
            quotes = np.flatnonzero(raw == self.quote)
            if self.escape is not None:
                before = raw[quotes - 1] if len(quotes) else raw[:0]
                if len(quotes) and quotes[0] == 0:
                    before = before.copy()
                    before[0] = self.last if self.last >= 0 else 0
                quotes = quotes[before != self.escape]
            # A line break is inside a field when an odd number of quotes precede it.
            odd = (np.searchsorted(quotes, newlines) + int(self.inside)) & 1
            ends = newlines[odd == 0]
            self.inside = bool((len(quotes) + int(self.inside)) & 1)
        self.last = int(raw[-1])
        return ends


def record_blocks(path: Path | str, quote: str | None = None, escape: str | None = None,
                  split: tuple[int, int] = (0, 1), block_bytes: int | None = None,
                  start: tuple[int, int] | None = None) -> Iterator[tuple[bytes, int, int]]:
    """``_record_blocks``; a file that cannot be read is an error naming it (an I/O error
    came without its path)."""
    try:
        yield from _record_blocks(path, quote, escape, split, block_bytes, start)
    except OSError as e:
        raise ConnectorError(f"{path}: cannot read the file: {e.strerror or e}") from None


def _record_blocks(path: Path | str, quote: str | None, escape: str | None,
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
    parity = _Parity(quote, escape)
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
