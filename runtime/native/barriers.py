"""Checkpoint barriers inside the parallel runtime (Flink's CheckpointBarrierHandler and the
task side of its CheckpointCoordinator).

Sources take their snapshot between two reads and send a barrier after it, on every output
channel. A task with several input channels aligns the barriers (EXACTLY_ONCE): once a channel
has delivered barrier n, what comes after it on that channel is held back until every other
live channel has delivered n too; the task then snapshots its chain, forwards the barrier and
processes what it held. Under AT_LEAST_ONCE nothing is held (rows after a barrier may be in the
snapshot and come again after a restore). An ended channel counts as aligned.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlengine.runtime.checkpoint.storage import CheckpointStorage

Item = tuple[int, Any, Any]  # (channel, kind, payload) as an InputGate holds it

# The job's final checkpoint (taken when the sinks have finished) is staged under this id and
# completed under the next free one; sinks tag what it covers with it.
FINAL = 1 << 62


@dataclass
class TaskCheckpoints:
    """What a task needs to take part in checkpoints (shared values cross processes)."""

    storage: CheckpointStorage
    trigger: Any  # .value: the newest checkpoint the coordinator triggered (sources read it)
    completed: Any  # .value: the newest completed checkpoint (sinks commit up to it)
    ack: Callable[[str, int, str, dict[str, Any]], None]  # (kind, id, subtask, entry)
    exactly_once: bool = True
    last_injected: int = 0  # (a source's last barrier)
    notified: int = 0  # (the last completion passed to the operators)


class BarrierAligner:
    """The barriers of one task's input channels (see the module's docstring)."""

    def __init__(self, n_channels: int, exactly_once: bool) -> None:
        self.n = n_channels
        self.exactly_once = exactly_once
        self.current = 0  # the checkpoint being aligned (0: none)
        self.arrived: set[int] = set()  # channels that delivered it
        self.ended: set[int] = set()
        self.held: deque[Item] = deque()  # what blocked channels delivered after the barrier
        self.released: deque[Item] = deque()  # held items, to be processed now

    def next_released(self) -> Item | None:
        return self.released.popleft() if self.released else None

    def holds(self, channel: int) -> bool:
        """Whether an item from ``channel`` must wait (it came after the channel's barrier)."""
        return self.exactly_once and self.current != 0 and channel in self.arrived

    def hold(self, item: Item) -> None:
        self.held.append(item)

    def on_barrier(self, channel: int, checkpoint: int) -> int | None:
        """Barrier ``checkpoint`` on ``channel``; returns it when the task is aligned (time
        to snapshot), else None."""
        if checkpoint < self.current:
            return None  # (of a checkpoint given up on)
        if checkpoint > self.current:
            self._release()  # (a newer checkpoint: the older one was given up on)
            self.current = checkpoint
            self.arrived = set()
        self.arrived.add(channel)
        return self._aligned()

    def on_end(self, channel: int) -> int | None:
        """``channel`` ended (after its items were processed): it no longer holds back an
        alignment in progress."""
        self.ended.add(channel)
        return self._aligned() if self.current else None

    def _aligned(self) -> int | None:
        if len(self.arrived | self.ended) < self.n:
            return None
        return self.current

    def finish(self) -> None:
        """The snapshot of the aligned checkpoint was taken: held items go on."""
        self.current = 0
        self.arrived = set()
        self._release()

    def _release(self) -> None:
        self.released.extend(self.held)
        self.held.clear()
