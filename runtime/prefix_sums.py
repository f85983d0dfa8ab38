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
    """``head`` (and, for floats, ``error``): n + 1 prefix sums, the first 0."""

    head: np.ndarray
    error: np.ndarray | None = None

    def between(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """The sums of the rows ``[start, stop)`` (positions into the prefix sums)."""
        out = self.head[stop] - self.head[start]
        if self.error is not None:
            out = out + (self.error[stop] - self.error[start])
        return out


def prefix_sums(values: np.ndarray) -> PrefixSums:
    """The prefix sums of ``values`` (int64, float64 or Python objects), 0 first."""
    zero = np.zeros(1, dtype=values.dtype)
    head = np.concatenate([zero, np.cumsum(values)])
    if values.dtype.kind != "f":
        return PrefixSums(head)
    # (np.cumsum adds in order: head[i + 1] = fl(head[i] + values[i]), whose error TwoSum
    # gives exactly)
    a, b, s = head[:-1], values, head[1:]
    with np.errstate(invalid="ignore", over="ignore"):
        b_part = s - a
        err = (a - (s - b_part)) + (b - b_part)
    finite = np.isfinite(err)
    if not finite.all():  # (an infinity or NaN: the plain sums say so)
        err = np.where(finite, err, 0.0)
    return PrefixSums(head, np.concatenate([zero, np.cumsum(err)]))
