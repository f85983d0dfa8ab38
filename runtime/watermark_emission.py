"""When a source's watermark is emitted, row by row, as Flink's WatermarkAssignerOperator does.

Flink's SQL sources (the filesystem source among them) compute the WATERMARK expression for
every row and emit the watermark eagerly when it has grown by more than
``pipeline.auto-watermark-interval`` since the last one emitted, and otherwise on a wall-clock
timer every interval. A row is judged against the last watermark emitted before it. Here the
eager rule is kept exactly, and the wall-clock timer is replaced by the end of each batch the
source reads, so that the answer is repeatable. An interval of 0 emits on every advance: each
row sees the watermark of all rows before it (Flink's 'on-event').
"""

from __future__ import annotations

import numpy as np


def emitted_before(marks: np.ndarray, emitted: int, interval: int) -> np.ndarray:
    """The watermark in effect before each row of a batch.

    ``marks`` are the rows' WATERMARK expression values (ms), ``emitted`` the last watermark
    emitted before the batch, ``interval`` the eager-emission threshold (ms). Emission events
    are followed as a chain of indexes (each found by one binary search over the running
    maximum), so the work is a pass over the batch plus one step per emission.
    """
    n = len(marks)
    if n == 0:
        return np.empty(0, dtype=np.int64)
    running = np.maximum.accumulate(np.maximum(marks.astype(np.int64, copy=False), emitted))
    flags = np.zeros(n, dtype=bool)
    if interval == 0:
        flags[1:] = running[1:] > running[:-1]
        flags[0] = running[0] > emitted
    else:
        j = int(np.searchsorted(running, emitted + interval, side="right")) \
            if emitted > np.iinfo(np.int64).min + interval else 0
        # The next emission: the first row whose running mark exceeds this one's + interval.
        # One binary search per emission while they are few (the usual case: an interval of
        # many rows); past a budget, the next row of every row in one vectorised search.
        budget = 64
        while j < n and budget:
            flags[j] = True
            j = int(np.searchsorted(running, running[j] + interval, side="right"))
            budget -= 1
        if j < n:
            nxt = np.searchsorted(running, running + interval, side="right").tolist()
            while j < n:
                flags[j] = True
                j = nxt[j]
    values = np.where(flags, running, np.iinfo(np.int64).min)
    after = np.maximum.accumulate(np.maximum(values, emitted))
    before = np.empty(n, dtype=np.int64)
    before[0] = emitted
    before[1:] = after[:-1]
    return before
