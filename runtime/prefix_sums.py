"""Prefix sums whose differences are a range's sum: the frame sums of OVER windows.

A frame's sum is ``P[hi + 1] - P[lo]`` over prefix sums ``P`` of the whole sorted input, all
partitions together. Integers add exactly (int64 wraps as Java's long, and a difference of
wrapped sums is the wrapped sum) and DECIMALs are Python integers. DOUBLEs are not: a value of
1e20 in an earlier partition (or row) absorbed the small ones after it, so a later partition's
1.5 summed to 0.0 and its VAR_POP came out negative. DOUBLE prefix sums therefore carry the
rounding error of each step beside them (Knuth's TwoSum: ``s = a + b`` and
``(a - (s - b')) + (b - b')`` with ``b' = s - a`` is exactly ``a + b - s``), a double-double
whose differences are exact to about 2^-106 of the prefix: 1e20, 1.5, 2.25 sum to 3.75 over
the frame of the last two.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PrefixSums:
    """``head`` (and, for floats, ``error``): n + 1 prefix sums, the first 0.

    For floats the prefix sums hold only the finite values: an infinity or NaN is counted
    (``specials``: prefix counts of +inf, -inf and NaN) so that it reaches only the frames
    holding it, not every frame after it in every partition. Where a prefix sum would
    overflow (finite values beyond DOUBLE's range) the prefix sums start again from zero
    (``segments``: the first row of each run); a frame across such a start is summed on its
    own, in order, as Flink adds a frame's values."""

    head: np.ndarray
    error: np.ndarray | None = None
    specials: np.ndarray | None = None  # (3, n + 1) prefix counts: +inf, -inf, NaN
    segments: np.ndarray | None = None  # (the positions where the prefix sums restart)
    values: np.ndarray | None = None  # (the finite values, with segments)

    def between(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """The sums of the rows ``[start, stop)`` (positions into the prefix sums)."""
        if self.segments is None:
            with np.errstate(over="ignore", invalid="ignore"):  # (a frame's own overflow)
                out = self.head[stop] - self.head[start]
                if self.error is not None:
                    out = out + (self.error[stop] - self.error[start])
        else:  # (a frame beginning where the sums restart: nothing before it)
            restart = np.isin(start, self.segments) & (stop > start)
            with np.errstate(over="ignore", invalid="ignore"):
                out = self.head[stop] - np.where(restart, 0.0, self.head[start])
                if self.error is not None:
                    out = out + (self.error[stop] - np.where(restart, 0.0,
                                                             self.error[start]))
        if self.segments is not None and self.values is not None:
            # (a frame within one run: the difference of its prefix sums, as above; across
            # a restart: its own sum)
            first = np.searchsorted(self.segments, start, side="right")
            last = np.searchsorted(self.segments, np.maximum(stop - 1, start), side="right")
            across = np.flatnonzero((first != last) & (stop > start))
            if len(across):
                out = np.array(out, dtype=np.float64)
                for i in across:
                    out[i] = _in_order(self.values[start[i]:stop[i]])
        if self.specials is not None:
            pos, neg, nan = (self.specials[:, stop] - self.specials[:, start]) > 0
            out = np.where(pos, np.inf, out)
            out = np.where(neg, -np.inf, out)
            out = np.where(nan | (pos & neg), np.nan, out)
        return out


def _in_order(values: np.ndarray) -> float:
    """The sum of ``values`` added one after another (overflowing as Java's doubles do)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.cumsum(values)[-1]) if len(values) else 0.0


def prefix_sums(values: np.ndarray) -> PrefixSums:
    """The prefix sums of ``values`` (int64, float64 or Python objects), 0 first."""
    zero = np.zeros(1, dtype=values.dtype)
    if values.dtype.kind != "f":
        return PrefixSums(np.concatenate([zero, np.cumsum(values)]))
    specials = None
    finite = np.isfinite(values)
    if not finite.all():
        kinds = np.stack([values == np.inf, values == -np.inf, np.isnan(values)])
        specials = np.concatenate([np.zeros((3, 1), np.int64), np.cumsum(kinds, axis=1)],
                                  axis=1)
        values = np.where(finite, values, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        sums = np.cumsum(values)
    segments = None
    if not np.isfinite(sums[-1:]).all():
        sums, segments = _restarting_sums(values)
    head = np.concatenate([zero, sums])
    # (np.cumsum adds in order: head[i + 1] = fl(head[i] + values[i]), whose error TwoSum
    # gives exactly; at a restart the prefix is 0 again, and so is its error)
    a, b, s = head[:-1].copy(), values, head[1:]
    if segments is not None:
        a[segments] = 0.0
    b_part = s - a
    err = (a - (s - b_part)) + (b - b_part)
    error = np.cumsum(err)
    if segments is not None:
        error = _restarting(err, segments)
    return PrefixSums(head, np.concatenate([zero, error]), specials, segments,
                      values if segments is not None else None)


def _restarting_sums(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums that start again from zero where they would overflow: the sums, and the
    positions of the restarts (0 first). A restart comes at the value that overflowed, so
    each run holds one value at least."""
    starts = [0]
    parts = []
    at = 0
    with np.errstate(over="ignore", invalid="ignore"):
        while at < len(values):
            run = np.cumsum(values[at:])
            bad = np.flatnonzero(~np.isfinite(run))
            stop = len(values) if not len(bad) else at + max(int(bad[0]), 1)
            parts.append(run[:stop - at])
            if stop < len(values):
                starts.append(stop)
            at = stop
    return np.concatenate(parts), np.array(starts, dtype=np.int64)


def _restarting(err: np.ndarray, segments: np.ndarray) -> np.ndarray:
    """Prefix sums of ``err`` restarting at ``segments``, as the sums they correct."""
    out = np.cumsum(err)
    for begin in segments[1:]:
        out[begin:] -= out[begin - 1]
    return out
