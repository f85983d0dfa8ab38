"""Each group's row count walked through a batch of changes in arrival order, vectorised:
what Flink's per-record state does to a changelog that does not add up (a retraction of what
the state does not hold), shared by the GROUP BY and the join operators."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, slots=True)
class CountWalk:
    """The rows sorted by group (arrival order within one), with, per sorted row:"""

    order: np.ndarray  # the batch row it is
    first_of: np.ndarray  # whether it is its group's first
    segment: np.ndarray  # its group's number (0, 1, ... in sorted order)
    level: np.ndarray  # its group's count after it (from the group's start, unfloored)
    low: np.ndarray  # the lowest level of its group up to it


def walk_counts(group: np.ndarray, sign: np.ndarray, start: np.ndarray | None = None
                ) -> CountWalk:
    """``group``: each row's group id (0..); ``sign``: +1 / -1 per row; ``start``: each
    group id's count before the batch (0 without)."""
    n = len(group)
    order = np.argsort(group, kind="stable")
    g, s = group[order], sign[order]
    first_of = np.ones(n, dtype=bool)
    first_of[1:] = g[1:] != g[:-1]
    segment = np.cumsum(first_of) - 1
    total = np.cumsum(s)
    level = total - (total - s)[first_of][segment]  # (the running count from 0)
    if start is not None:
        level = level + start[g]
    # The running minimum restarting with each group: an offset per group puts each group's
    # levels below all the earlier groups'.
    span = int(level.max() - level.min()) + 1 if n else 1
    low = np.minimum.accumulate(level - segment * span) + segment * span
    return CountWalk(order, first_of, segment, level, low)
