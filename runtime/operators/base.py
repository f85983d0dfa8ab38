"""The operator lifecycle: open, process a batch, watermark, end of input, snapshot, close."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

import numpy as np
import pyarrow as pa

from sqlengine.runtime.elements import Watermark
from sqlengine.runtime.memory import MemoryAccount


class Clock(Protocol):
    """What a state TTL reads the time from (the ``time`` module by default; a test's fake
    clock)."""

    def monotonic(self) -> float: ...


@dataclass
class OperatorContext:
    """What an operator learns from its task: ids for errors and metrics, the options."""

    vertex_id: str = "v0"
    step_id: str = "op0"
    options: dict[str, str] = field(default_factory=dict)
    # The slot's memory budget (runtime/memory.py): an operator that runs operators of its
    # own (a spilled join's partitions) checks them against it. None: no budget.
    memory: MemoryAccount | None = None
    subtask: int = 0  # this subtask's index among the vertex's ``parallelism``
    parallelism: int = 1


@dataclass
class OperatorMetrics:
    """Per-operator counters (Flink's numRecordsIn / numRecordsOut)."""

    records_in: int = 0
    records_out: int = 0
    batches_in: int = 0


class NotCheckpointable(Exception):
    """An operator whose state a checkpoint cannot take (yet), and why (the checkpoint's
    refusal says it)."""

    def __init__(self, operator: str, reason: str = "it spilled to disk") -> None:
        super().__init__(operator)
        self.operator = operator
        self.reason = reason


class NotRescalable(Exception):
    """An operator whose state cannot be restored at another parallelism (yet)."""

    def __init__(self, operator: str) -> None:
        super().__init__(operator)
        self.operator = operator


class Operator:
    """Base operator: outputs are *returned*, so a unit test is a plain call."""

    name = "operator"

    def open(self, ctx: OperatorContext) -> None:
        self.ctx = ctx

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        raise NotImplementedError

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        return ()

    # How far behind its input's watermark the operator's output watermark is held (ms), as
    # Flink's interval join delays it: rows it emits at a time that far behind are not late
    # for the operators after it.
    output_delay = 0

    @property
    def holds_until_end(self) -> bool:
        """Whether the operator emits its rows when its input ends (a batch join, GROUP BY,
        sort, Top-N): the watermarks reaching it wait there and leave after those rows
        (runtime/native/chain.py), so an operator after it (a window in batch mode) does not
        take them for rows behind the watermark."""
        return False

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        """Called once per input when it ends; a one-input operator flushes here."""
        return ()

    # True once the operator has emitted every row it ever will (a LIMIT that has its rows):
    # its task then ends the rest of its chain, and what feeds it is no longer needed (the
    # executors stop sources nothing needs, so a LIMIT over an unbounded source finishes).
    done = False

    # Operators with processing-time timers set this; their task then calls
    # ``on_processing_time`` as the wall clock moves, with or without input.
    uses_processing_time = False

    def on_processing_time(self, now_ms: int) -> Iterable[pa.RecordBatch]:
        """The processing-time timers up to ``now_ms`` (wall clock, epoch ms) fire."""
        return ()

    # The attributes that hold what the operator has accumulated (rows, groups, timers, its
    # watermark, counters): a checkpoint snapshots them and a restore sets them back on a
    # freshly opened operator of the same spec. None: the operator cannot be checkpointed
    # yet (a job that would checkpoint it is refused, naming it); () for a stateless one.
    state_fields: ClassVar[tuple[str, ...] | None] = None

    def snapshot_state(self) -> dict[str, object]:
        """The operator's state at a checkpoint barrier, as picklable values (Arrow data,
        numpy arrays, plain Python): serialized at once, before the next batch arrives."""
        if self.state_fields is None:
            raise NotCheckpointable(self.name, "its state cannot be checkpointed yet")
        return {name: getattr(self, name) for name in self.state_fields}

    def restore_state(self, state: Mapping[str, object]) -> None:
        """Set back what ``snapshot_state`` took (on an opened operator of the same spec)."""
        if self.state_fields is None:
            raise NotCheckpointable(self.name, "its state cannot be checkpointed yet")
        for name in self.state_fields:
            if name in state:
                setattr(self, name, state[name])

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """Restore from what the old subtasks of this operator wrote (one state each). At the
        checkpoint's parallelism each subtask takes its own; at another, only an operator
        that can redistribute its state (stateless ones, sources, sinks, keyed state by key
        group) can be restored."""
        if len(states) == parallelism:
            self.restore_state(states[subtask])
            return
        if self.state_fields == ():
            return
        raise NotRescalable(self.name)

    def prepare_snapshot(self, checkpoint: int) -> None:
        """A checkpoint barrier reached the operator: called just before ``snapshot_state``
        (a committing sink readies what it wrote since the last one)."""
        return

    def notify_checkpoint_complete(self, checkpoint: int) -> None:
        """Checkpoint ``checkpoint`` completed (its metadata is written): a committing sink
        makes what it covered visible."""
        return

    def checkpoint_refusal(self) -> str | None:
        """Why a checkpointing job cannot run this operator at all (None: it can); asked
        before the job starts."""
        return None

    def extra_metrics(self) -> dict[str, int]:
        """Counters of the operator's own, reported with its metrics (an iteration's rounds)."""
        return {}

    def state_summary(self) -> Mapping[str, object]:
        """A few figures about the state, for tests and metrics."""
        return {}

    def state_bytes(self) -> int:
        """An estimate of the operator's state in memory: the Arrow and numpy data it holds
        (directly, or in lists and dicts), plus about 100 bytes per dict entry."""
        return sum(_size(v) for v in vars(self).values())

    # Bytes moved to spill files so far (a metric, 'spilled_bytes', when not 0).
    spilled_bytes = 0

    def spill(self, directory: str | None) -> bool:
        """The slot is past its memory budget after this operator grew: move state to files
        under ``directory`` (None: the system's temp dir) and return True, or return False
        if this operator cannot (the job then fails, naming it)."""
        return False

    def spill_refusal(self) -> str:
        """Why this operator cannot spill (' (...)'), for the budget error; '' if unknown."""
        return ""

    def close(self) -> None:
        return None


def _size(value: object, depth: int = 0) -> int:
    if isinstance(value, pa.Table | pa.RecordBatch | pa.Array | pa.ChunkedArray):
        return value.nbytes
    if isinstance(value, np.ndarray):
        return value.nbytes
    if depth > 1:
        return 0
    if isinstance(value, dict):
        counted = sum(_size(v, depth + 1) for v in itertools.islice(value.values(), 1000))
        return 100 * len(value) + (counted if len(value) <= 1000 else
                                   counted * len(value) // 1000)
    if isinstance(value, list | tuple):
        counted = sum(_size(v, depth + 1) for v in value[:1000])
        return counted if len(value) <= 1000 else counted * len(value) // 1000
    return 0
