"""When the filesystem sink closes a part file and begins the next: Flink's rolling policy
options ('sink.rolling-policy.*'), checked at every batch written.

- 'file-size' (128 MB): a part file rolls once a row has taken it past the size, as Flink's
  row formats do (json, raw; csv too, which Flink writes in blocks); parquet, orc and avro
  files, written a batch at a time, roll after the batch that takes them past it;
- 'rollover-interval' (30 min) and 'inactivity-interval' (30 min): a part file open that
  long, or not written to for that long, rolls before the next batch, which begins a new
  one (Flink rolls it on a timer in between; the files hold the same rows);
- 'check-interval' (1 min): how often Flink looks at the two intervals; they are looked at
  on every batch here, which is as often as there is anything to roll.

A checkpoint also completes the part file (filesystem_commit.py), as Flink's bulk formats
do; the rows a part file holds are the same either way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from sqlengine.options import parse_duration, parse_size

_PREFIX = "sink.rolling-policy."
KEYS = tuple(_PREFIX + k for k in ("file-size", "rollover-interval", "inactivity-interval",
                                   "check-interval"))


_SIZE = 128 << 20
_INTERVAL = 1800.0  # (30 min)


@dataclass(frozen=True, slots=True)
class RollingPolicy:
    size: int = _SIZE  # bytes
    rollover: float = _INTERVAL  # seconds a part file may stay open
    inactivity: float = _INTERVAL  # seconds without a write after which it rolls

    @classmethod
    def of(cls, options: dict[str, str]) -> RollingPolicy:
        size = options.get(_PREFIX + "file-size")
        rollover = options.get(_PREFIX + "rollover-interval")
        inactivity = options.get(_PREFIX + "inactivity-interval")
        return cls(
            parse_size(size, _PREFIX + "file-size") if size else _SIZE,
            parse_duration(rollover, _PREFIX + "rollover-interval") / 1000 if rollover
            else _INTERVAL,
            parse_duration(inactivity, _PREFIX + "inactivity-interval") / 1000 if inactivity
            else _INTERVAL)

    def due(self, open_for: float, since_last_write: float) -> bool:
        """Roll before writing (where Flink's timer would have rolled the part file in the
        meantime): open for the rollover interval, or not written to for the inactivity
        interval."""
        return open_for >= self.rollover or since_last_write >= self.inactivity

    def pieces(self, batch: pa.RecordBatch, written: int,
               encode: Callable[[pa.RecordBatch], bytes]) -> Iterator[tuple[bytes, bool]]:
        """A batch of a row format as the bytes to write into the part file, which holds
        ``written`` bytes, in pieces: each with whether the file rolls after it (its last
        row took it past the size, as Flink rolls before the next row). One line per row:
        cut at the lines; else (a csv value holding a line break) by the batch's bytes per
        row."""
        data = encode(batch)
        rows = batch.num_rows
        if written + len(data) <= self.size or rows <= 1:
            yield data, written + len(data) > self.size
            return
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10) + 1
        if len(ends) == rows and ends[-1] == len(data):
            start = 0
            while start < len(data):
                cut = int(np.searchsorted(ends, start + self.size - written, side="right"))
                stop = int(ends[min(cut, rows - 1)])
                full = written + stop - start > self.size
                yield data[start:stop], full
                written = 0 if full else written + stop - start
                start = stop
            return
        per_row = len(data) / rows
        start = 0
        while start < rows:
            take = max(1, math.ceil((self.size + 1 - written) / per_row))
            piece = data if (start, take) == (0, rows) else encode(batch.slice(start, take))
            start += take
            written += len(piece)
            full = written > self.size
            yield piece, full
            if full:
                written = 0
