"""Window assigners: pure, vectorised functions from event times to windows (no state).

Times are int64 milliseconds; a window is [start, end) and fires when the watermark reaches
end - 1.

    TUMBLE(size=10)            HOP(slide=5, size=10)         CUMULATE(step=5, size=15)
    ts=12 -> [10, 20)          ts=12 -> [5, 15), [10, 20)    ts=12 -> [0, 15)
                                                             ts=3  -> [0, 5), [0, 10), [0, 15)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

_HOUR = 3_600_000


@dataclass(frozen=True, slots=True)
class Assigned:
    """Row positions (into the input) and the window of each assignment."""

    rows: np.ndarray
    start: np.ndarray
    end: np.ndarray


def _floor_start(ts: np.ndarray, size: int, offset: int) -> np.ndarray:
    # Python-style modulo keeps negative times in the right window.
    return ts - np.mod(ts - offset, size)


def tumble(ts: np.ndarray, size: int, offset: int = 0) -> Assigned:
    start = _floor_start(ts, size, offset)
    return Assigned(np.arange(len(ts)), start, start + size)


def hop(ts: np.ndarray, slide: int, size: int, offset: int = 0) -> Assigned:
    n = -(-size // slide)  # (a size not a multiple of the slide: the last may miss the row)
    last = _floor_start(ts, slide, offset)
    rows = np.repeat(np.arange(len(ts)), n)
    start = np.repeat(last, n) - np.tile(np.arange(n, dtype=np.int64) * slide, len(ts))
    if size % slide:
        keep = start + size > ts[rows]
        rows, start = rows[keep], start[keep]
    return Assigned(rows, start, start + size)


def cumulate(ts: np.ndarray, step: int, size: int, offset: int = 0) -> Assigned:
    n = size // step
    start = _floor_start(ts, size, offset)
    rows = np.repeat(np.arange(len(ts)), n)
    starts = np.repeat(start, n)
    ends = starts + np.tile(np.arange(1, n + 1, dtype=np.int64) * step, len(ts))
    keep = ends > np.repeat(ts, n)  # only the windows that contain the row
    return Assigned(rows[keep], starts[keep], ends[keep])


def assign(kind: str, ts: np.ndarray, size: int, slide: int, offset: int) -> Assigned:
    """All (row, window) pairs for TUMBLE, HOP or CUMULATE.

    SESSION windows depend on other rows, so they are formed by the session aggregate; here
    each row gets the placeholder window [ts, ts + gap).
    """
    if kind == "tumble":
        return tumble(ts, size, offset)
    if kind == "hop":
        return hop(ts, slide, size, offset)
    if kind == "cumulate":
        return cumulate(ts, slide, size, offset)
    return Assigned(np.arange(len(ts)), ts.copy(), ts + size)


def fire_times(ends: np.ndarray, zone: str = "") -> np.ndarray:
    """When windows ending at ``ends`` fire: once the watermark reaches end - 1 ms. Windows
    of a zone's wall clock (over a TIMESTAMP_LTZ column, see WindowTVF.zone) fire at the
    instant that clock shows end - 1 ms, as Flink's TimeWindowUtil.toEpochMillsForTimer
    reads it: in the hour the clocks pass twice, its later reading; in the hour they skip,
    the instant they jump."""
    last = ends - 1
    if not zone:
        return last
    from sqlengine.cast import from_local

    def instants(local: np.ndarray) -> np.ndarray:
        arr = from_local(pa.array(local, pa.timestamp("ms")), zone)
        return arr.cast(pa.int64()).to_numpy(zero_copy_only=False)

    t1, t2 = instants(last), instants(last + _HOUR)
    return np.where(t1 == t2, t1 - t1 % _HOUR, np.where(t2 - t1 > _HOUR, t1 + _HOUR, t1))


def local_marks(marks: np.ndarray | None, zone: str) -> np.ndarray | None:
    """Watermarks (instants) as the latest time of a zone's wall clock whose window end would
    have fired by then (fire_times: the later reading of a time the clocks pass twice): the
    zone's reading, but in the first pass of a repeated hour the time before that hour (its
    times fire on the second pass), never going back: what sessions of that clock are judged
    against when rows enter them (runtime/session_admission.py), as Flink's timers fire."""
    if marks is None or not zone or not len(marks):
        return marks
    from sqlengine.cast import to_local

    low = np.iinfo(np.int64).min
    finite = np.maximum(marks, -(1 << 52))  # (the start of time: no local reading)
    local = to_local(pa.array(finite, pa.timestamp("ms", tz="UTC")), zone)
    local = local.cast(pa.int64()).to_numpy(zero_copy_only=False)
    ahead = fire_times(local + 1, zone) - finite  # (> 0: the first pass of a repeated hour)
    first_pass = ahead > 0
    if first_pass.any():  # (the repeated span starts at a multiple of its length)
        shift = np.where(first_pass, ahead, 1)
        local = np.where(first_pass, local - local % shift - 1, local)
    out = np.maximum.accumulate(local)
    return np.where(marks == low, low, out)


def window_times(ends: np.ndarray, zone: str) -> pa.Array:
    """window_time of windows ending at ``ends``: their last millisecond, an instant for a
    zone's wall-clock windows (a TIMESTAMP_LTZ)."""
    last = pa.array(ends - 1, pa.timestamp("ms"))
    if not zone:
        return last
    from sqlengine.cast import from_local

    return from_local(last, zone).cast(pa.timestamp("ms", tz="UTC"))


def sessions(keys_sorted_change: np.ndarray, ts_sorted: np.ndarray, gap: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Session ids for rows sorted by (key, time): a new session starts at a new key or when
    the time is more than ``gap`` after the previous row's (Flink merges windows [t, t + gap)
    that touch: rows exactly one gap apart share a session). Returns (ids, starts, ends) with
    one start and end per session id."""
    n = len(ts_sorted)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    new = np.ones(n, dtype=bool)
    new[1:] = keys_sorted_change[1:] | (ts_sorted[1:] - ts_sorted[:-1] > gap)
    ids = np.cumsum(new) - 1
    starts = ts_sorted[new]
    last = np.ones(n, dtype=bool)
    last[:-1] = new[1:]
    ends = ts_sorted[last] + gap
    return ids, starts, ends
