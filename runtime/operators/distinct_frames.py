"""DISTINCT aggregates over window frames: COUNT / SUM / AVG (DISTINCT x) OVER (...).

A value counts in a frame ``[lo, hi]`` at its first row there: row ``j`` counts when no earlier
row of the frame holds its value, i.e. when the previous row with that value (``prev[j]``,
-1 for none) lies before ``lo``. So a frame's distinct count is the number of its rows with
``prev < lo`` (its sum, their values' sum): a two-dimensional count, answered for every frame at
once by a merge-sort tree over the row positions (level ``L`` holds blocks of ``2**L`` rows,
each sorted by ``prev``; a prefix ``[0, m)`` is the blocks of the set bits of ``m``), with one
``searchsorted`` per level: O(n log^2 n), no per-row Python. Frames never cross partitions and
a previous row in an earlier partition lies before every frame of the row's own, so rows of
every partition are counted together.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


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


def count_before(prev: np.ndarray, weights: np.ndarray, ends: np.ndarray, limits: np.ndarray
                 ) -> np.ndarray:
    """Per query ``q``: the sum of ``weights[j]`` over the rows ``j < ends[q]`` whose
    ``prev[j] < limits[q]`` (weights: int64, float64 or Python objects)."""
    n = len(prev)
    out = np.zeros(len(ends), dtype=weights.dtype)
    if not n or not len(ends):
        return out
    width = n + 2
    level = 0
    while (1 << level) <= n:
        size = 1 << level
        has = (ends >> level) & 1 == 1
        if has.any():
            block = np.arange(n, dtype=np.int64) >> level
            keys = block * width + (prev + 1)
            order = np.argsort(keys, kind="stable")
            keys = keys[order]
            zero = np.zeros(1, dtype=weights.dtype)
            cum = np.concatenate([zero, np.cumsum(weights[order])])
            b = (ends[has] >> level) - 1
            start = b * size
            stop = np.searchsorted(keys, b * width + limits[has] + 1, side="left")
            out[has] = out[has] + (cum[stop] - cum[start])
        level += 1
    return out


def frame_distinct(prev: np.ndarray, weights: np.ndarray, lo: np.ndarray, hi: np.ndarray
                   ) -> np.ndarray:
    """Per frame ``[lo, hi]`` (inclusive; ``hi < lo`` for an empty one): the sum of
    ``weights`` (0 for a row not counted) over its rows holding a value for the first time
    in the frame."""
    lo = lo.astype(np.int64)
    upto = np.maximum(hi.astype(np.int64) + 1, lo)
    # (every counted row before lo has its previous row before lo too: the rows before lo
    # are a prefix sum; a row not counted weighs 0)
    before = np.concatenate([np.zeros(1, dtype=weights.dtype), np.cumsum(weights)])
    return count_before(prev, weights, upto, lo) - before[lo]
