"""The native executor: builds a task per JobVertex, wires the edges, drives the sources.

Single-threaded and push-based: each source batch is pushed through its chain and on across
edges to downstream tasks before the next batch is read. The run is a generator, so a
caller sees collected results as they are produced and can stop (cancel) at any time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlengine.errors import CheckpointError, SqlEngineError
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.runtime.elements import MAX_WATERMARK, MIN_WATERMARK, Watermark
from sqlengine.runtime.memory import account_for
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.native.factory import build_chain
from sqlengine.runtime.native.input_processor import StreamInputProcessor
from sqlengine.runtime.native.source_driver import SourceDriver
from sqlengine.runtime.operators.sink import CollectSink
from sqlengine.runtime.operators.source import SourceOperator


@dataclass
class JobResult:
    """What a finished (or running) job reports: metrics and skipped-row counts."""

    metrics: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped_rows: int = 0
    skipped_at: list[str] = field(default_factory=list)
    late_records_dropped: int = 0
    # Rows dropped because a Python function failed on them ('python.udf.on-error' = 'skip')
    udf_rows_skipped: int = 0
    sink_rows: dict[str, int] = field(default_factory=dict)


class Executor:
    def __init__(self, graph: JobGraph, options: dict[str, str],
                 tables: dict[str, object] | None = None) -> None:
        self.graph = graph
        self.options = options
        self.tasks: dict[str, ChainedTask] = {}
        # Each task's input: upstream tasks push their output into it by direct calls.
        self.inputs: dict[str, StreamInputProcessor] = {}
        self.collect: CollectSink | None = None
        self.sources: list[tuple[str, SourceOperator]] = []
        self.result = JobResult()
        # Called now and then while the job runs: (rows read by the sources, watermark).
        self.on_progress: Callable[[int, int], None] | None = None
        self._last_progress = 0.0
        self.cancelled = False
        self.coordinator: Any = None  # (a CheckpointCoordinator when checkpoints are on)
        self._lock = threading.RLock()
        self._request: _SavepointRequest | None = None
        self._restored_next_source: str | None = None
        self.ended = False
        self._ended: set[str] = set()  # vertices whose end went to their consumers
        from sqlengine.runtime.checkpoint.config import wanted

        self._coordinator: Any = None
        if wanted(options):
            from sqlengine.runtime.checkpoint.coordinator import CheckpointCoordinator

            self._coordinator = CheckpointCoordinator(graph, options)
            self._coordinator.sink_tokens(options)  # (before the sinks are opened)
        memory = account_for(options)  # (one slot: every task of the job shares it)
        for v in graph.vertices:
            ops = build_chain(v.chain, tables or {})
            names = [spec.label().split("(")[0] for spec in v.chain]
            n_inputs = max(1, len(graph.in_edges(v.id)))
            self.tasks[v.id] = ChainedTask(v.id, ops, names, n_inputs, options,
                                           memory=memory)
            if v.stream_nodes:
                self.tasks[v.id].nodes = tuple(v.stream_nodes)
            if n_inputs > 1:  # (channel i is input i)
                by_input = {e.input_index: graph.origin(e.source) for e in graph.in_edges(v.id)}
                self.tasks[v.id].set_producers([by_input.get(i) for i in range(n_inputs)])
            self.inputs[v.id] = StreamInputProcessor(self.tasks[v.id])
            if isinstance(ops[0], SourceOperator):
                self.sources.append((v.id, ops[0]))
            for op in ops:
                inner = getattr(op, "inner", op)
                if isinstance(inner, CollectSink):
                    self.collect = inner
        for v in graph.vertices:
            outs = graph.out_edges(v.id)
            task = self.tasks[v.id]
            if outs:
                targets = [(self.inputs[e.target], e.input_index) for e in outs]
                task.output = _fan_out(targets)
                task.output_watermark = _fan_out_watermark(targets)
                task.output_status = _fan_out_status(targets)

    def _finish(self, vertex_id: str) -> None:
        self._ended.add(vertex_id)
        for e in self.graph.out_edges(vertex_id):
            if self.inputs[e.target].end_input(e.input_index):
                self._finish(e.target)

    def _finish_early(self) -> None:
        """Tasks that finished before their input ended (a LIMIT that has its rows) end
        their consumers' input."""
        for vid, task in self.tasks.items():
            if vid not in self._ended and task.finish_if_done():
                self._finish(vid)

    def _needed(self, vertex_id: str) -> bool:
        """Whether a vertex's output still goes somewhere: it is unfinished, and a last
        vertex (a sink) or feeding one that is needed."""
        if self.tasks[vertex_id].finished:
            return False
        outs = self.graph.out_edges(vertex_id)
        return not outs or any(self._needed(e.target) for e in outs)

    # -- checkpoints: the executor is single-threaded and pushes each source batch all the
    # way through before reading the next, so between two polls nothing is in flight: every
    # task's state together is a consistent cut, taken without barriers.
    def _setup_checkpoints(self) -> bool:
        """Start checkpointing and restore, as the options say; False when the restored
        checkpoint was taken after the job had finished (nothing is left to run)."""
        coordinator = self._coordinator
        if coordinator is None or not coordinator.enabled:
            return True
        from sqlengine.runtime.checkpoint.snapshot import (
            Restored,
            check_checkpointable,
            restore_task,
        )

        self.coordinator = coordinator
        for task in self.tasks.values():
            check_checkpointable(task)
        restored = coordinator.restored
        if restored is None:
            return True
        old = Restored(restored)
        self._restored_next_source = restored.metadata.get("next_source")
        done: list[str] = []
        for v in self.graph.vertices:
            if restored.finished and self.graph.out_edges(v.id):
                continue  # (a finished job's checkpoint: only its sinks have what to commit)
            own = restore_task(self.tasks[v.id], old, 0, 1)
            if own is not None and own.get("finished"):
                done.append(v.id)
        for vid in done:  # (a task that had finished does not run again)
            self.tasks[vid].finished = True
            self._finish(vid)
        return not restored.finished

    def _checkpoint(self, finished: bool = False, next_source: str | None = None) -> None:
        """Snapshot every task now, complete the checkpoint, then let sinks commit."""
        from sqlengine.runtime.checkpoint.snapshot import snapshot_task

        coordinator = self.coordinator
        assert coordinator is not None
        n = coordinator.trigger()
        try:
            for vid, task in self.tasks.items():
                name = f"{vid}-0"
                entry = coordinator.write_state(n, name,
                                                snapshot_task(task, n, task.finished))
                coordinator.pending[n].acks[name] = entry
            # (the source polled next: a restore keeps the order the sources are read in)
            coordinator.complete(n, finished, {"next_source": next_source})
        except SqlEngineError:
            coordinator.abort(n)
            raise
        except Exception as e:
            coordinator.abort(n)
            raise CheckpointError(f"checkpoint {n} failed: {type(e).__name__}: {e}") from e
        try:
            for task in self.tasks.values():
                for op in task.operators:
                    op.notify_checkpoint_complete(n)
        except SqlEngineError:
            raise
        except Exception as e:
            raise CheckpointError(f"committing checkpoint {n} failed: {type(e).__name__}: "
                                  f"{e}") from e

    def stop_with_savepoint(self, directory: str) -> str:
        """Take a checkpoint now, copy it out as a savepoint under ``directory``, and stop the
        job (Flink's stop-with-savepoint); from another thread, or between two batches the
        job yielded. The running loop serves the request at its next step (a lock alone
        would starve: the loop takes it again at once); a loop that is not running (the
        caller's own, suspended) is served here."""
        request = _SavepointRequest(directory)
        self._request = request
        while not request.done.wait(0.01):
            if self._lock.acquire(timeout=0.01):
                try:
                    self._serve(request)
                finally:
                    self._lock.release()
        if request.error is not None:
            raise request.error
        assert request.path is not None
        return request.path

    def _serve(self, request: _SavepointRequest, next_source: str | None = None) -> None:
        if request.done.is_set():
            return
        try:
            if self.coordinator is None:
                raise CheckpointError("a savepoint needs checkpoints on "
                                      "('execution.checkpointing.interval' and '.dir')")
            if self.cancelled or self.ended:
                raise CheckpointError("the job is no longer running: no savepoint was taken")
            self._checkpoint(next_source=next_source)
            request.path = str(self.coordinator.savepoint(self.coordinator.completed[-1],
                                                          Path(request.directory)))
            self.cancelled = True
        except SqlEngineError as e:
            request.error = e
        finally:
            self._request = None
            request.done.set()

    def _may_checkpoint(self) -> bool:
        return self.coordinator is not None and self.coordinator.due()

    def run(self) -> Iterator[pa.RecordBatch]:
        """Run the job; yields the batches that reach the collect sink (if any)."""
        try:
            yield from self.run_open()
        finally:
            self.close()

    def close(self) -> None:
        self._collect_metrics()
        for task in self.tasks.values():
            task.close()

    def run_open(self) -> Iterator[pa.RecordBatch]:
        """Run the sources to their end, leaving the tasks open (an iteration's step runs
        this way, then has its head fed round after round; ``close`` ends it)."""
        if not self._setup_checkpoints():
            return
        # Sources without a reader (VALUES) emit everything at once.
        for v in self.graph.vertices:
            task = self.tasks[v.id]
            head = task.operators[0]
            if hasattr(head, "values_batches"):
                task.emit_from_head(list(head.values_batches()))
                task.fire_watermark(MAX_WATERMARK, start=1)
                task.end_input(0)
                self._finish(v.id)
                yield from self._drain()
        drivers = [(vid, SourceDriver(self.tasks[vid], self.options))
                   for vid, _ in self.sources]
        first = self._restored_next_source
        if first is not None and first in [vid for vid, _ in drivers]:
            at = [vid for vid, _ in drivers].index(first)
            drivers = drivers[at:] + drivers[:at]
        timed = [t for t in self.tasks.values() if t.has_timers]
        self._finish_early()
        while drivers and not self.cancelled:
            still = []
            for vid, driver in drivers:
                with self._lock:  # (a savepoint is taken between two of these)
                    if self._request is not None:
                        self._serve(self._request, vid)
                    if self.cancelled:
                        break
                    if not self._needed(vid):
                        continue  # (what it feeds has finished: the source is cancelled)
                    if driver.poll():
                        self._finish_early()
                        still.append((vid, driver))
                    else:
                        self._finish(vid)
                    now = time.monotonic()
                    if timed:
                        wall = int(time.time() * 1000)
                        for t in timed:
                            if not t.finished:
                                t.fire_processing_time(wall)
                    if self.on_progress is not None and now - self._last_progress >= 0.5:
                        self._last_progress = now
                        self.on_progress(*self.progress())
                    if self._may_checkpoint():
                        self._checkpoint(next_source=_after(drivers, vid))
                    out = self.collect.drain() if self.collect is not None else []
                yield from out
            drivers = still
        with self._lock:
            if self.coordinator is not None and not self.cancelled:
                self._checkpoint(finished=True)
            self.ended = True
        yield from self._drain()

    def cancel(self) -> None:
        """Stop at the next source read (from another thread, or a progress callback)."""
        self.cancelled = True

    def progress(self) -> tuple[int, int, int | None]:
        """Rows the sources have produced, the lowest watermark among the last vertices, and
        how far that trails the sources' watermarks (ms; None until both are known)."""
        rows = sum(self.tasks[vid].metrics[0].records_out for vid, _ in self.sources)
        ends = [t for vid, t in self.tasks.items() if not self.graph.out_edges(vid)]
        end = min((t.watermark for t in ends), default=0)
        return rows, end, watermark_lag([self.tasks[vid].watermark for vid, _ in self.sources],
                                        end)

    def live_metrics(self) -> dict[str, Any]:
        """The job so far, per vertex: records in (the chain's head) and out (its tail), its
        watermark and idleness, late rows dropped; and the checkpoints completed. Plain
        counters, safe to read from another thread while the job runs (the live web view).
        No busy or backpressure time: every vertex runs in the caller's thread, pushed
        synchronously, so none waits for another."""
        vertices = {vid: {"records_in": t.metrics[0].records_in,
                          "records_out": t.metrics[-1].records_out,
                          "watermark": t.watermark, "idle": t.idle,
                          "late_records_dropped": late_dropped(t),
                          "udf_rows_skipped": udf_skipped(t), "subtasks": 1}
                    for vid, t in self.tasks.items()}
        return {"vertices": vertices, "checkpoints": checkpoint_stats(self.coordinator)}

    def _drain(self) -> Iterator[pa.RecordBatch]:
        if self.collect is not None:
            yield from self.collect.drain()

    def _collect_metrics(self) -> None:
        skipped = 0
        at: list[str] = []
        for _vid, src in self.sources:
            skipped += src.stats.skipped
            at.extend(src.stats.skipped_at)
        self.result.skipped_rows = skipped
        self.result.skipped_at = at[:10]
        for vid, task in self.tasks.items():
            for key, counters, sink in task.operator_counters(vid):
                self.result.metrics[key] = counters
                self.result.late_records_dropped += counters.get("late_records_dropped", 0)
                self.result.udf_rows_skipped += counters.get("udf_rows_skipped", 0)
                if sink is not None:
                    self.result.sink_rows[sink[0]] = sink[1]


def _after(drivers: list[tuple[str, SourceDriver]], vid: str) -> str | None:
    """The source polled after ``vid`` in the round-robin over ``drivers``."""
    ids = [v for v, _ in drivers]
    return ids[(ids.index(vid) + 1) % len(ids)] if vid in ids else None


@dataclass
class _SavepointRequest:
    directory: str
    done: threading.Event = field(default_factory=threading.Event)
    path: str | None = None
    error: SqlEngineError | None = None


def _fan_out(targets: list[tuple[StreamInputProcessor, int]]
             ) -> Callable[[pa.RecordBatch], None]:
    def output(batch: pa.RecordBatch) -> None:
        for processor, idx in targets:
            processor.process_batch(batch, idx)

    return output


def _fan_out_watermark(targets: list[tuple[StreamInputProcessor, int]]
                       ) -> Callable[[Watermark], None]:
    def output(wm: Watermark) -> None:
        for processor, idx in targets:
            processor.process_watermark(wm, idx)

    return output


def _fan_out_status(targets: list[tuple[StreamInputProcessor, int]]
                    ) -> Callable[[bool], None]:
    def output(idle: bool) -> None:
        for processor, idx in targets:
            processor.process_status(idle, idx)

    return output


def late_dropped(chain: ChainedTask) -> int:
    """Late rows the operators of a chain dropped so far."""
    return sum(getattr(op, "late_dropped", 0) or 0 for op in chain.operators)


def udf_skipped(chain: ChainedTask) -> int:
    """Rows the operators of a chain dropped because a Python function failed on them."""
    return sum(getattr(op, "udf_rows_skipped", 0) or 0 for op in chain.operators)


def checkpoint_stats(coordinator: Any) -> dict[str, Any] | None:
    """Completed checkpoints of a running job and the last one's duration (None when the job
    does not checkpoint)."""
    if coordinator is None:
        return None
    completed = list(coordinator.completed)
    last_ms = None
    if completed:
        import json

        from sqlengine.runtime.checkpoint.storage import METADATA

        try:
            meta = json.loads((completed[-1] / METADATA).read_text())
            last_ms = meta.get("duration_ms")
        except (OSError, ValueError):
            pass  # (pruned meanwhile: the next poll reads the newer one)
    return {"completed": len(completed), "last_duration_ms": last_ms,
            "interval_ms": coordinator.config.interval_ms}


def watermark_lag(sources: list[int], end: int) -> int | None:
    """How far the end of the pipeline's watermark trails its sources' (ms)."""
    finite = [w for w in sources if MIN_WATERMARK < w < MAX_WATERMARK.timestamp]
    if not finite or not MIN_WATERMARK < end < MAX_WATERMARK.timestamp:
        return None
    return max(0, max(finite) - end)
