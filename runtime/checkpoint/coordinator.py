"""The checkpoint coordinator (Flink's CheckpointCoordinator): when to take a checkpoint,
collecting the subtasks' acknowledgements (their state files), completing it (metadata written
last), aborting one that timed out or failed, keeping 'num-retained' of them; and finding the
checkpoint a job restores from."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlengine.errors import CheckpointError
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.runtime.checkpoint.config import CheckpointConfig, checkpoint_config
from sqlengine.runtime.checkpoint.snapshot import fingerprint, job_layout
from sqlengine.runtime.checkpoint.storage import (
    Checkpoint,
    CheckpointStorage,
    completed_under,
    load_checkpoint,
)


@dataclass
class PendingCheckpoint:
    id: int
    started: float
    acks: dict[str, dict[str, Any]] = field(default_factory=dict)  # subtask -> state entry


class CheckpointCoordinator:
    def __init__(self, graph: JobGraph, options: dict[str, str]) -> None:
        self.config: CheckpointConfig = checkpoint_config(options)
        self.graph = graph
        self.fingerprint = fingerprint(graph)
        self.restored: Checkpoint | None = find_restore(self.config, self.fingerprint, graph)
        self.storage = CheckpointStorage(self.config.directory) \
            if self.config.enabled and self.config.directory is not None else None
        if self.restored is not None and not self.enabled:
            raise CheckpointError("restoring from a checkpoint needs checkpoints on "
                                  "('execution.checkpointing.interval' and '.dir'): what the "
                                  "restored job writes is committed by its checkpoints")
        self.next_id = self.restored.id + 1 if self.restored is not None else 1
        self.last_trigger = time.monotonic()
        self.pending: dict[int, PendingCheckpoint] = {}
        self.completed: list[Path] = []  # this job's completed checkpoints, oldest first
        # Subtasks that have finished: their last state stands for them in later checkpoints.
        self.finished: dict[str, dict[str, Any]] = {}
        self.subtasks = sorted(f"{v.id}-{i}" for v in graph.vertices
                               for i in range(v.parallelism))

    @property
    def enabled(self) -> bool:
        return self.storage is not None

    def sink_tokens(self, options: dict[str, str]) -> None:
        """Tell committing sinks (through ``options``) the token a fresh start names its part
        files with (this job's id) and the tokens of the other jobs that checkpoint into the
        same directory (earlier attempts of this job, killed: what they left uncommitted is
        deleted, except by the line of attempts the restore continues)."""
        if self.storage is None:
            return
        options["$sink-token"] = self.storage.job_id[:12]
        others = [d.name[:12] for d in self.storage.root.iterdir()
                  if d.is_dir() and d.name != self.storage.job_id]
        options["$stale-sink-tokens"] = ",".join(sorted(others))

    def due(self) -> bool:
        """Time for the next periodic checkpoint (none pending)."""
        return self.enabled and not self.pending and \
            (time.monotonic() - self.last_trigger) * 1000 >= self.config.interval_ms

    def trigger(self) -> int:
        n = self.next_id
        self.next_id += 1
        self.last_trigger = time.monotonic()
        self.pending[n] = PendingCheckpoint(n, self.last_trigger)
        return n

    def write_state(self, checkpoint: int, subtask: str, state: Any) -> dict[str, Any]:
        assert self.storage is not None
        return self.storage.write_state(checkpoint, subtask, state)

    def acknowledge(self, checkpoint: int, subtask: str, entry: dict[str, Any]) -> bool:
        """A subtask wrote its state; True when that completed the checkpoint."""
        p = self.pending.get(checkpoint)
        if p is None:
            return False  # (aborted meanwhile)
        p.acks[subtask] = entry
        return self._try_complete(p)

    def finish(self, subtask: str, entry: dict[str, Any]) -> list[int]:
        """A subtask finished (its last state is ``entry``): returns the pending checkpoints
        that completed with it."""
        self.finished[subtask] = entry
        return [p.id for p in list(self.pending.values()) if self._try_complete(p)]

    def _try_complete(self, p: PendingCheckpoint) -> bool:
        if len(p.acks.keys() | self.finished.keys()) < len(self.subtasks):
            return False
        self.complete(p.id)
        return True

    def complete(self, checkpoint: int, finished: bool = False,
                 extra: dict[str, Any] | None = None) -> Path:
        """Every subtask acknowledged: the metadata goes last, then old ones are pruned."""
        assert self.storage is not None
        p = self.pending.pop(checkpoint)
        for name, entry in self.finished.items():
            if name not in p.acks:
                p.acks[name] = self.storage.adopt(checkpoint, entry)
        meta = {"kind": "checkpoint", "fingerprint": self.fingerprint,
                "layout": job_layout(self.graph), "finished": finished,
                "subtasks": dict(sorted(p.acks.items())),
                "duration_ms": int((time.monotonic() - p.started) * 1000), **(extra or {})}
        path = self.storage.complete(checkpoint, meta)
        self.completed.append(path)
        self.storage.prune(self.config.retained)
        return path

    def complete_final(self) -> int:
        """The job's final checkpoint, once its sinks have finished: the finished subtasks'
        last states, marked finished (a restore from it only commits what the sinks
        wrote)."""
        n = self.trigger()
        for pending in list(self.pending):
            if pending != n:
                self.abort(pending)
        self.complete(n, finished=True)
        return n

    def abort(self, checkpoint: int) -> None:
        if self.pending.pop(checkpoint, None) is not None and self.storage is not None:
            self.storage.discard(checkpoint)

    def expired(self) -> list[int]:
        """Pending checkpoints past 'execution.checkpointing.timeout'."""
        now = time.monotonic()
        return [n for n, p in self.pending.items()
                if (now - p.started) * 1000 > self.config.timeout_ms]

    def savepoint(self, checkpoint: Path, directory: Path) -> Path:
        """A completed checkpoint copied out as a savepoint under ``directory`` (its own: the
        job's retention never removes it); the metadata is written last, as for a
        checkpoint."""
        import json
        import shutil

        from sqlengine.runtime.checkpoint.storage import METADATA, write_atomically

        meta = json.loads((checkpoint / METADATA).read_text())
        target = directory / f"savepoint-{meta['job'][:6]}-{meta['checkpoint']}"
        try:
            target.mkdir(parents=True, exist_ok=True)
            for entry in meta["subtasks"].values():
                shutil.copyfile(checkpoint / entry["file"], target / entry["file"])
        except OSError as e:
            raise CheckpointError(f"savepoint directory {str(directory)!r}: "
                                  f"{e.strerror or e}") from None
        meta.update(kind="savepoint", completed_at=time.time())
        write_atomically(target / METADATA, json.dumps(meta, indent=1).encode())
        return target

    @property
    def latest(self) -> Path | None:
        """The newest completed checkpoint of this job, else the one it restored from."""
        if self.completed:
            return self.completed[-1]
        return self.restored.path if self.restored is not None else None


def find_restore(config: CheckpointConfig, job_fingerprint: str, graph: JobGraph
                 ) -> Checkpoint | None:
    """The checkpoint a job restores from: 'execution.state-recovery.path' names one (it must
    be there); ``--restore DIR`` takes the newest completed one of this query under DIR (none
    there, or no DIR yet: a fresh start)."""
    if config.restore is None:
        return None
    path = config.restore
    if config.restore_latest:
        if not path.exists():
            return None
        if not path.is_dir():
            raise CheckpointError(f"restore path {str(path)!r} is not a directory")
        found = completed_under(path)
        if not found:
            return None
        mine = [c for c in found if c.metadata.get("fingerprint") == job_fingerprint]
        if not mine:
            raise CheckpointError(_mismatch(found[-1], graph))
        return mine[-1]
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} ('execution.state-recovery.path') "
                              "does not exist")
    checkpoint = load_checkpoint(path)
    if checkpoint.metadata.get("fingerprint") != job_fingerprint:
        raise CheckpointError(_mismatch(checkpoint, graph))
    return checkpoint


def _mismatch(checkpoint: Checkpoint, graph: JobGraph) -> str:
    layout = checkpoint.metadata.get("layout", {})
    shape = "; ".join(f"{vid}: {' -> '.join(v.get('operators', []))}"
                      for vid, v in layout.items())
    old = {op for v in layout.values() for op in v.get("operators", [])}
    new = {spec.label() for v in graph.vertices for spec in v.chain}
    hint = ""
    if any(op.startswith(("LocalAggregate", "GlobalAggregate", "LocalWindowAggregate",
                          "GlobalWindowAggregate")) for op in old ^ new):
        hint = (" (or the same query planned otherwise: at parallelism 1 an aggregation runs "
                "in one phase, above it in two unless 'table.optimizer.agg-phase-strategy' = "
                "'ONE_PHASE')")
    if old == new:
        from sqlengine.runtime.checkpoint.snapshot import row_types

        then = [t for v in layout.values() for t in v.get("types", [])]
        now = [row_types(spec) for v in graph.vertices for spec in v.chain]
        changed = next((f" (rows of {a} then, {b} now)" for a, b in zip(then, now) if a != b),
                       "")
        return (f"checkpoint {str(checkpoint.path)!r} was taken of the same query over "
                f"columns of other types{changed}: a table's column changed its type, so its "
                "state cannot be restored")
    return (f"checkpoint {str(checkpoint.path)!r} was taken of a different query{hint}: its "
            f"state layout ({shape}) does not match this job's, so it cannot be restored")
