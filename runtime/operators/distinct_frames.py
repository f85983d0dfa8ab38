"""DISTINCT aggregates over window frames: COUNT / SUM / AVG (DISTINCT x) OVER (...).

A value counts in a frame ``[lo, hi]`` at its first row there: row ``j`` counts when no earlier
row of the frame holds its value, i.e. when the previous row with that value (``prev[j]``,
-1 for none) lies before ``lo``. So a frame's distinct count is the number of its rows with
``prev < lo`` (its sum, their values' sum): a two-dimensional count, answered for every frame at
once by a merge-sort tree over the row positions (level ``L`` holds blocks of ``2**L`` rows,
each sorted by ``prev``; a frame is the aligned blocks a segment tree would cut it into), with
one ``searchsorted`` per level: O(n log^2 n), no per-row Python. Frames never cross partitions
and a previous row in an earlier partition lies before every frame of the row's own, so rows
of every partition are counted together.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.runtime.prefix_sums import prefix_sums


def previous_equal(values: pa.Array, valid: np.ndarray) -> np.ndarray:
    """Per row, the position of the previous counted row with an equal value (-1 for none);
    rows not counted (NULL, or filtered out) get ``n``, so that they count in no frame."""
    n = len(values)
    prev = np.full(n, n, dtype=np.int64)
    rows = np.flatnonzero(valid)
    if not len(rows):
        return prev
    codes = np.asarray(pc.rank(values.take(pa.array(rows)), sort_keys="ascending",
                               tiebreaker="dense").to_numpy(zero_copy_only=False),
                       dtype=np.int64)
    order = np.lexsort((rows, codes))
    same = np.r_[False, codes[order][1:] == codes[order][:-1]]
    before = np.where(same, np.r_[-1, rows[order][:-1]], -1)
    prev[rows[order]] = before
    return prev


def count_within(prev: np.ndarray, weights: np.ndarray, starts: np.ndarray,
                 ends: np.ndarray, limits: np.ndarray) -> np.ndarray:
    """Per query ``q``: the sum of ``weights[j]`` over the rows ``starts[q] <= j < ends[q]``
    whose ``prev[j] < limits[q]`` (weights: int64, float64 or Python objects). The range is
    cut into aligned blocks, as a segment tree's query, so that only its own rows are added:
    a DOUBLE of an earlier partition, subtracted again, absorbed the small ones."""
    n = len(prev)
    out = np.zeros(len(ends), dtype=weights.dtype)
    if not n or not len(ends):
        return out
    width = n + 2
    lo, hi = starts.astype(np.int64).copy(), ends.astype(np.int64).copy()
    level = 0
    while (lo < hi).any():
        size = 1 << level
        left = (lo & 1 == 1) & (lo < hi)
        right = (hi & 1 == 1) & (lo < hi)
        if left.any() or right.any():
            block = np.arange(n, dtype=np.int64) >> level
            keys = block * width + (prev + 1)
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
            cum = prefix_sums(weights[order])
            for take, b in ((left, lo[left]), (right, hi[right] - 1)):
                if take.any():
                    start = b * size
                    stop = np.searchsorted(keys, b * width + limits[take] + 1, side="left")
                    out[take] = out[take] + cum.between(start, stop)
        lo = np.where(left, lo + 1, lo) >> 1
        hi = np.where(right, hi - 1, hi) >> 1
        level += 1
    return out


def frame_distinct(prev: np.ndarray, weights: np.ndarray, lo: np.ndarray, hi: np.ndarray
                   ) -> np.ndarray:
    """Per frame ``[lo, hi]`` (inclusive; ``hi < lo`` for an empty one): the sum of
    ``weights`` (0 for a row not counted) over its rows holding a value for the first time
    in the frame."""
    lo = lo.astype(np.int64)
    upto = np.maximum(hi.astype(np.int64) + 1, lo)
    return count_within(prev, weights, lo, upto, lo)
