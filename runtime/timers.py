"""TimerService: event-time and processing-time timers, registered and fired as arrays."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from sqlengine.runtime.elements import MIN_WATERMARK


class RowTimers:
    """Timers that carry rows: each buffered row waits for its own timestamp. Registered a
    batch at a time (rows plus an int64 array of timestamps, ms); ``advance(time)`` returns
    the rows whose timer is due (timestamp <= time) in registration order, keeping the rest."""

    __slots__ = ("_batches", "_schema", "_times")

    def __init__(self, schema: pa.Schema | None = None) -> None:
        self._schema = schema
        self._batches: list[pa.RecordBatch] = []
        self._times: list[np.ndarray] = []

    def register(self, rows: pa.RecordBatch, timestamps: np.ndarray) -> None:
        if rows.num_rows:
            self._batches.append(rows)
            self._times.append(np.asarray(timestamps, dtype=np.int64))

    def absorb(self, other: RowTimers, keep: Callable[[pa.RecordBatch], np.ndarray]) -> None:
        """Take the rows of ``other`` that ``keep`` selects, with their timers (a rescaled
        restore: another subtask's rows whose keys this one now owns)."""
        if not other._batches:
            return
        # (the lists are aligned as rows, not batch by batch: ``advance`` keeps the rest as
        # one array of times over possibly several batches)
        times = np.concatenate(other._times)
        table = pa.Table.from_batches(other._batches, other._schema)
        rows = table.combine_chunks().to_batches()[0] if table.num_rows else None
        if rows is None:
            return
        mask = keep(rows)
        if mask.any():
            self._batches.append(rows.filter(pa.array(mask)))
            self._times.append(times[mask])

    def __bool__(self) -> bool:
        return bool(self._batches)

    @property
    def num_rows(self) -> int:
        return sum(b.num_rows for b in self._batches)

    @property
    def batches(self) -> list[pa.RecordBatch]:
        """The rows waiting, in registration order."""
        return list(self._batches)

    def advance(self, time: int) -> pa.Table | None:
        """The rows due at ``time`` as one table, or None when none is."""
        if not self._batches:
            return None
        times = np.concatenate(self._times) if len(self._times) > 1 else self._times[0]
        due = times <= time
        if not due.any():
            return None
        if self._schema is not None:
            table = pa.Table.from_batches(self._batches, self._schema)
        else:
            table = pa.Table.from_batches(self._batches)
        ready = table.filter(pa.array(due))
        rest = table.filter(pa.array(~due))
        self._batches = rest.to_batches() if rest.num_rows else []
        self._times = [times[~due]] if rest.num_rows else []
        return ready


class TimerService:
    """Flink's InternalTimerService for one operator: the current watermark and event-time
    timers that fire when it passes them, processing-time timers that fire by the clock.
    Timers are vectorised: rows wait with their timestamps (``RowTimers``), ``advance_watermark``
    returns the previous watermark and what became due."""

    __slots__ = ("event_time", "processing_time", "watermark")

    def __init__(self, schema: pa.Schema | None = None, sides: int = 1) -> None:
        self.watermark: int = MIN_WATERMARK
        self.event_time = [RowTimers(schema) for _ in range(sides)]
        self.processing_time = RowTimers(schema)

    def is_late(self, timestamps: np.ndarray, row_watermarks: np.ndarray | None = None
                ) -> np.ndarray:
        """Per timestamp: has the watermark before its row (or the current one) passed it?"""
        bound = row_watermarks if row_watermarks is not None else \
            np.full(len(timestamps), self.watermark)
        return ~(timestamps > bound)

    def register_event_time(self, rows: pa.RecordBatch, timestamps: np.ndarray,
                            side: int = 0) -> None:
        self.event_time[side].register(rows, timestamps)

    def register_processing_time(self, rows: pa.RecordBatch, timestamps: np.ndarray) -> None:
        self.processing_time.register(rows, timestamps)

    def advance_watermark(self, timestamp: int, side: int = 0) -> tuple[int, pa.Table | None]:
        """Move the watermark to ``timestamp``; returns (the watermark before, the rows whose
        event-time timers are due on ``side``). With several sides, call
        ``move_watermark`` once and ``due`` per side."""
        before = self.move_watermark(timestamp)
        return before, self.event_time[side].advance(timestamp)

    def move_watermark(self, timestamp: int) -> int:
        before = self.watermark
        self.watermark = timestamp
        return before

    def fired(self, timestamps: np.ndarray) -> np.ndarray:
        """Per timer timestamp (timers kept beside an operator's own state rows, such as a
        window's end - 1 or a join row's cleanup time): has the watermark passed it?"""
        return timestamps <= self.watermark

    def due(self, side: int) -> pa.Table | None:
        return self.event_time[side].advance(self.watermark)

    def advance_processing_time(self, now_ms: int) -> pa.Table | None:
        """The rows whose processing-time timers are due at wall-clock ``now_ms``."""
        return self.processing_time.advance(now_ms)
