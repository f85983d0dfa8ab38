"""The per-key timers of Flink's RowTimeRangeBoundedPrecedingFunction, replayed to decide which
rows of a RANGE-bounded OVER aggregation are late, exactly as Flink 2.3 does.

Per key Flink keeps a last triggering time and a cleanup time. An accepted row (its time after
the last triggering time) registers a timer at its time and, when the cleanup time is below
``time + preceding + 1``, a cleanup timer at ``time + 1.5 * preceding + 1``. When the watermark
passes a timer: if the key's cleanup time is at or below it, the key's state is cleared (the
last triggering time too, so older rows are accepted again); otherwise its rows at that time
are emitted and the last triggering time becomes the timer's time, a cleanup timer's included.
That last rule is why a row behind the watermark may be dropped though no row at or after its
time was emitted. Timers of one key with one time fire once.

The replay steps once per row and per timer in Python; only RANGE frames with a bounded
PRECEDING use it (ROWS frames and UNBOUNDED ones have simpler rules, vectorised).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass
class _Key:
    last: int | None = None  # the last triggering time
    cleanup: int | None = None  # the cleanup time


@dataclass
class RangeTriggers:
    preceding: int
    keys: dict[object, _Key] = field(default_factory=dict)
    timers: list[tuple[int, int, object]] = field(default_factory=list)  # (time, seq, key)
    registered: set[tuple[object, int]] = field(default_factory=set)
    watermark: int = np.iinfo(np.int64).min
    seq: int = 0
    cleared: set[object] = field(default_factory=set)  # keys cleared since last asked
    epochs: dict[object, int] = field(default_factory=dict)  # per key: times cleared

    def epoch(self, key: object) -> int:
        return self.epochs.get(key, 0)

    def _register(self, key: object, time: int) -> None:
        if (key, time) in self.registered:
            return
        self.registered.add((key, time))
        heapq.heappush(self.timers, (time, self.seq, key))
        self.seq += 1

    def advance(self, watermark: int) -> None:
        """The watermark moves: every timer at or below it fires, in time order."""
        if watermark <= self.watermark:
            return
        self.watermark = watermark
        while self.timers and self.timers[0][0] <= watermark:
            time, _, key = heapq.heappop(self.timers)
            self.registered.discard((key, time))
            state = self.keys.get(key)
            if state is None:
                continue
            if state.cleanup is not None and state.cleanup <= time:
                del self.keys[key]
                self.cleared.add(key)
                self.epochs[key] = self.epochs.get(key, 0) + 1
                continue
            state.last = time

    def arrive(self, keys: list[object], times: np.ndarray, row_watermarks: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """Rows in arrival order (each with the watermark before it): which are late, and
        each row's epoch (its key's clearings so far)."""
        late = np.zeros(len(times), dtype=bool)
        epochs = np.zeros(len(times), dtype=np.int64)
        p = self.preceding
        for i, (key, ts, wm) in enumerate(zip(keys, times.tolist(), row_watermarks.tolist())):
            if wm > self.watermark:
                self.advance(wm)
            state = self.keys.get(key)
            if state is None:
                state = self.keys[key] = _Key()
            epochs[i] = self.epochs.get(key, 0)
            if ts <= (state.last if state.last is not None else 0):
                late[i] = True
                continue
            self._register(key, ts)
            if state.cleanup is None or state.cleanup < ts + p + 1:
                state.cleanup = ts + int(p * 1.5) + 1
                self._register(key, state.cleanup)
        return late, epochs

    @classmethod
    def merged(cls, parts: list[RangeTriggers], mine: Callable[[list], list[bool]]
               ) -> RangeTriggers:
        """A rescaled restore: the keys ``mine`` keeps (their state, epochs and timers) from
        every old subtask's triggers; the watermark is their lowest (each key's timers only
        ever fire at or after it, in time order, as before)."""
        out = cls(parts[0].preceding)
        timers: list[tuple[int, int, object]] = []
        for part in parts:
            keys = list({*part.keys, *part.epochs, *(k for _, _, k in part.timers)})
            own = {k for k, ok in zip(keys, mine(keys)) if ok}
            out.keys.update((k, v) for k, v in part.keys.items() if k in own)
            out.epochs.update((k, v) for k, v in part.epochs.items() if k in own)
            timers += [t for t in part.timers if t[2] in own]
            out.cleared |= part.cleared & own
        timers.sort(key=lambda t: (t[0], t[1]))
        out.timers = [(time, seq, key) for seq, (time, _, key) in enumerate(timers)]
        out.registered = {(key, time) for time, _, key in out.timers}
        out.seq = len(out.timers)
        out.watermark = min(p.watermark for p in parts)
        return out

    def take_cleared(self) -> set[object]:
        out, self.cleared = self.cleared, set()
        return out
