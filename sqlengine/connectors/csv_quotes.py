"""Which line breaks of csv text end a record, reading quotes as a csv reader does (Arrow's and
Jackson's, RFC 4180): a quote opens a quoted field only at a field's start (after the
delimiter, a line break, or at the start of the text); anywhere else outside a quoted field it
is a character of the value (``5" screen``); inside a quoted field a quote closes it, two
quotes standing for one quote of the value. A quote after an odd run of escape characters is
no quote (``\\"``; ``\\\\"`` is an escaped escape, then a quote). With comments on, a line
starting with ``#`` outside a quoted field is skipped whole, its quotes not counted.

Vectorised over the quotes' runs: a run of L quotes at a field's start flips the state when L
is odd (open; close; "" inside), a run elsewhere closes a quoted field when L is odd and
changes nothing when L is even; the state at a line break is the composition of the runs
before it (numpy cumulative sums). Fed chunk by chunk (a file read in blocks): the state,
the byte before the chunk, the escape characters ending the text and a run of quotes ending
it (a run may go on in the next chunk) carry over.
"""

from __future__ import annotations

import numpy as np

_EMPTY = np.empty(0, dtype=np.int64)


class QuoteScan:
    """The quote state of csv text read so far (see the module's docstring)."""

    def __init__(self, quote: str | None, escape: str | None = None, delimiter: str = ",",
                 comments: bool = False) -> None:
        self.quote = ord(quote) if quote else None
        self.escape = ord(escape) if escape else None
        self.delimiter = ord(delimiter[0]) if delimiter else ord(",")
        self.comments = comments
        self.inside = False
        self.last = 10  # the byte before the text not yet scanned (a line break at the start)
        self.escapes = 0  # escape characters ending the text scanned so far
        self.held = 0  # quotes ending the text scanned so far (their run may go on)
        self.in_comment = False  # (the text scanned so far ends inside a comment line)
        # Offsets (in the last chunk) of the comment lines found in it.
        self.comment_lines: list[int] = []

    def record_ends(self, chunk: bytes) -> np.ndarray:
        """Offsets in ``chunk`` of the line breaks that end a record (a comment line's
        too); advances the state."""
        self.comment_lines = []
        if not self.comments:
            return self._ends(chunk)
        out = []
        at = 0
        if self.in_comment:  # (a comment line that began in the chunk before)
            stop = chunk.find(b"\n")
            if stop < 0:
                return _EMPTY
            out.append(np.array([stop], dtype=np.int64))
            self.in_comment, self.last, self.escapes, at = False, 10, 0, stop + 1
        # Lines starting with '#' (the chunk's first too, after a line break).
        starts = [at] if self.last == 10 and not self.held and chunk[at:at + 1] == b"#" \
            else []
        pos = chunk.find(b"\n#", at)
        while pos >= 0:
            starts.append(pos + 1)
            pos = chunk.find(b"\n#", pos + 1)
        for start in starts:
            if start < at:
                continue
            out.append(self._ends(chunk[at:start]) + at)
            at = start
            if self.inside:  # (a line of a quoted value)
                continue
            self.comment_lines.append(start)
            stop = chunk.find(b"\n", start)
            if stop < 0:  # (it goes on in the next chunk)
                self.in_comment, at = True, len(chunk)
                break
            out.append(np.array([stop], dtype=np.int64))
            self.last, self.escapes, at = 10, 0, stop + 1
        if at < len(chunk):
            out.append(self._ends(chunk[at:]) + at)
        return np.concatenate(out) if out else _EMPTY

    def _ends(self, chunk: bytes) -> np.ndarray:
        raw = np.frombuffer(chunk, dtype=np.uint8)
        if not len(raw):
            return _EMPTY
        newlines = np.flatnonzero(raw == 10)
        if self.quote is None:
            self.last = int(raw[-1])
            return newlines
        held = self.held
        if held:  # (the quotes that ended the text before this chunk, in front of it)
            raw = np.concatenate([np.full(held, self.quote, dtype=np.uint8), raw])
            newlines = newlines + held
        n = len(raw)
        quotes = np.flatnonzero(raw == self.quote)
        is_escape = raw == self.escape if self.escape is not None else None
        if is_escape is not None and len(quotes):
            # Escape characters right before each quote (those ending the text before too).
            other = np.maximum.accumulate(np.where(is_escape, -1, np.arange(n)))
            before = quotes - 1
            prev = other[np.maximum(before, 0)]
            run = np.where(before < 0, self.escapes,
                           before - prev + np.where(prev < 0, self.escapes, 0))
            quotes = quotes[(run % 2 == 0) | (quotes < held)]
        if is_escape is not None:
            tail = n - 1 - int(np.flatnonzero(~is_escape)[-1]) if (~is_escape).any() else \
                n + self.escapes
            self.escapes = tail
        if not len(quotes):
            self.held = 0
            self.last = int(raw[-1])
            return newlines if not self.inside else _EMPTY
        cut = np.flatnonzero(np.diff(quotes) != 1) + 1
        first = np.concatenate([[0], cut])
        start = quotes[first]
        length = np.diff(np.concatenate([first, [len(quotes)]]))
        if start[-1] + length[-1] == n:  # (the text ends in quotes: their run may go on)
            self.held = int(length[-1])
            before_held = int(raw[start[-1] - 1]) if start[-1] > 0 else self.last
            start, length = start[:-1], length[:-1]
        else:
            self.held = 0
            before_held = int(raw[-1])
        if len(start):
            prev_byte = np.where(start > 0, raw[np.maximum(start - 1, 0)], self.last)
            at_start = (prev_byte == self.delimiter) | (prev_byte == 10) | (prev_byte == 13)
            odd = (length & 1) == 1
            flips = np.cumsum(at_start & odd)
            k = np.arange(len(start))
            reset = np.maximum.accumulate(np.where(~at_start & odd, k, -1))
            state = np.where(reset >= 0, flips - flips[np.maximum(reset, 0)],
                             flips + int(self.inside)) & 1
            j = np.searchsorted(start, newlines) - 1
            inside = np.where(j >= 0, state[np.maximum(j, 0)], int(self.inside)).astype(bool)
            self.inside = bool(state[-1])
        else:
            inside = np.full(len(newlines), self.inside)
        self.last = before_held
        return newlines[~inside] - held
