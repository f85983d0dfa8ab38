"""'table.exec.state.ttl' for the operators that keep state per partition id (rank.py's
Top-N and deduplications, deduplicate.py's FirstRowOperator): each id's state is stamped
when it is written, and an id whose state has not been written for the TTL is forgotten
without a word, as Flink's expired state (its next row starts it again). Its partition key
is then taken out of the operator's id index too, so state stays bounded: the ids are
renumbered once the forgotten ones are many (``compact``).

The stamps are readings of ``clock``'s monotonic time; a checkpoint holds them as ages, so a
restored job keeps each one's span (the time it was down does not count)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from sqlengine.runtime.operators.base import Clock

_MIN_COMPACT = 1024  # (forgotten ids past which the index is renumbered, or half of it)


@dataclass
class PartitionTtl:
    ttl: float  # seconds (0: state is kept for ever)
    clock: Clock
    written: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float64))

    def touch(self, pids: np.ndarray) -> None:
        """The state of ``pids`` was written now."""
        if not len(pids):
            return
        top = int(pids.max()) + 1
        if top > len(self.written):
            grown = np.full(max(top, 2 * len(self.written)), -np.inf)
            grown[: len(self.written)] = self.written
            self.written = grown
        self.written[pids] = self.clock.monotonic()

    def expired(self, live: np.ndarray) -> np.ndarray:
        """Of the ids with state (``live``, a mask or index array over ids), those written
        longer than the TTL ago; their stamps are cleared."""
        now = self.clock.monotonic()
        n = len(self.written)
        ids = np.flatnonzero(live) if live.dtype == bool else live
        ids = ids[ids < n]
        old = ids[self.written[ids] <= now - self.ttl]
        self.written[old] = -np.inf
        return old

    def ages(self) -> np.ndarray:
        """For a checkpoint: each id's age (inf where it has no state)."""
        return self.clock.monotonic() - self.written

    def restore(self, ages: np.ndarray | None) -> None:
        self.written = np.zeros(0, np.float64) if ages is None else \
            self.clock.monotonic() - np.asarray(ages, np.float64)

    def remapped(self, mapping: np.ndarray, ages: np.ndarray, size: int) -> None:
        """Take the stamps of an old subtask's ids (``mapping``: old id -> new id, -1 not
        this subtask's) from its checkpoint's ``ages``."""
        if size > len(self.written):
            grown = np.full(size, -np.inf)
            grown[: len(self.written)] = self.written
            self.written = grown
        n = min(len(mapping), len(ages))
        moved = mapping[:n] >= 0
        self.written[mapping[:n][moved]] = self.clock.monotonic() - ages[:n][moved]


def fit(values: np.ndarray, n: int, fill: object) -> np.ndarray:
    """``values`` cut or padded (with ``fill``) to ``n`` entries."""
    if len(values) >= n:
        return values[:n].copy()
    out = np.full(n, fill, dtype=values.dtype)
    out[: len(values)] = values
    return out


def compact(ids: dict[tuple, int], live: np.ndarray) -> tuple[dict[tuple, int], np.ndarray]:
    """The id index without the keys whose id has no state (``live``: a mask over ids),
    renumbered densely in the old order, and old id -> new id (-1: dropped)."""
    mapping = np.full(len(live), -1, dtype=np.int64)
    kept = np.flatnonzero(live)
    mapping[kept] = np.arange(len(kept))
    new = {k: int(mapping[i]) for k, i in ids.items() if i < len(live) and live[i]}
    return new, mapping


def worth_compacting(ids: dict[tuple, int], live_count: int) -> bool:
    forgotten = len(ids) - live_count
    return forgotten >= max(_MIN_COMPACT, len(ids) // 2)


class KeepsPartitionTtl:
    """Mixed into an operator (before Operator) with a ``ttl`` (a PartitionTtl, or None): its
    stamps go into its checkpoints as ages and come back from them."""

    ttl: PartitionTtl | None

    def snapshot_state(self) -> dict[str, object]:
        state: dict[str, object] = super().snapshot_state()  # type: ignore[misc]
        state["ttl"] = None if self.ttl is None else self.ttl.ages()
        return state

    def restore_state(self, state: Mapping[str, object]) -> None:
        super().restore_state(state)  # type: ignore[misc]
        if self.ttl is not None:
            self.ttl.restore(state.get("ttl"))  # type: ignore[arg-type]
