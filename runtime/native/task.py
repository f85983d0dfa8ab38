"""Task: one ExecutionVertex (a parallel subtask) running its operator chain in a thread.

A task goes CREATED -> DEPLOYING -> RUNNING -> FINISHED, or ends CANCELED (the job was
cancelled, or another task failed) or FAILED (its own error, which fails the job).
"""

from __future__ import annotations

import contextlib
import threading
import time
from enum import Enum
from typing import Any

import pyarrow as pa

from sqlengine.runtime.elements import MAX_WATERMARK
from sqlengine.runtime.native.barriers import FINAL, BarrierAligner, TaskCheckpoints
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.native.execution_graph import ExecutionVertex
from sqlengine.runtime.native.input_processor import StreamInputProcessor
from sqlengine.runtime.native.network import (
    BlockingWriter,
    Cancelled,
    ChannelMetrics,
    InputGate,
    JobControl,
    Kind,
    RecordWriter,
)
from sqlengine.runtime.native.source_driver import SourceDriver
from sqlengine.runtime.operators.sink import CollectSink, ConnectorSink
from sqlengine.runtime.operators.source import SourceOperator


class TaskState(Enum):
    CREATED = "CREATED"
    DEPLOYING = "DEPLOYING"
    RUNNING = "RUNNING"
    FINISHED = "FINISHED"
    CANCELING = "CANCELING"
    CANCELED = "CANCELED"
    FAILED = "FAILED"


class Task:
    def __init__(self, vertex: ExecutionVertex, chain: ChainedTask, gate: InputGate,
                 control: JobControl, options: dict[str, str],
                 results: InputGate | None = None) -> None:
        self.vertex = vertex
        self.chain = chain
        self.gate = gate
        self.control = control
        self.options = options
        self.results = results  # where a collect sink's rows go (the caller's queue)
        self.writers: list[RecordWriter | BlockingWriter] = []
        self.output_metrics = ChannelMetrics()
        self.state = TaskState.CREATED
        self.thread: threading.Thread | None = None
        self.collect = next((inner for op in chain.operators
                             if isinstance(inner := getattr(op, "inner", op), CollectSink)),
                            None)
        # (a connector's sink in the chain: it commits at the final checkpoint, also where
        # the chain goes on, to a statement set's last vertex)
        self.holds_sink = any(isinstance(getattr(op, "inner", op), ConnectorSink)
                              for op in chain.operators)
        self.latency: dict[str, float] = {}  # per source vertex: last marker's latency, ms
        # (board, index): where this task posts its rows read and watermark for progress.
        self.progress: tuple[Any, int] | None = None
        self.cpu_s = 0.0  # CPU time of the task's thread
        self.timers = chain.has_timers
        self.checkpoints: TaskCheckpoints | None = None  # (set when the job checkpoints)
        # Restored from the last state of a task that had finished: it does not run again.
        self.restored_finished: dict[str, Any] | None = None
        chain.output = self._emit
        chain.output_watermark = lambda wm: self._broadcast(Kind.WATERMARK, wm.timestamp)
        chain.output_status = lambda idle: self._broadcast(Kind.IDLE, idle)

    # -- output -----------------------------------------------------------------------------
    def _emit(self, batch: pa.RecordBatch) -> None:
        for w in self.writers:
            w.emit(batch)

    def _broadcast(self, kind: Kind, payload: Any) -> None:
        for w in self.writers:
            w.broadcast(kind, payload)

    def _flush_due(self) -> None:
        """Called after each step and while waiting: output buffers past their timeout go,
        and processing-time timers fire."""
        now = time.monotonic()
        for w in self.writers:
            w.flush_due(now)
        if self.timers and not self.chain.finished:
            self.chain.fire_processing_time(int(time.time() * 1000))
        cp = self.checkpoints
        if cp is not None and cp.completed.value > cp.notified:
            cp.notified = cp.completed.value
            for op in self.chain.operators:
                op.notify_checkpoint_complete(cp.notified)
            if not self.writers or self.holds_sink:  # (a stop with savepoint, and the
                # job's end, wait for a sink's commit)
                cp.ack("committed", cp.notified, self.state_name, {})

    def _post_progress(self) -> None:
        if self.progress is not None:
            board, i = self.progress
            board[i] = self.chain.metrics[0].records_out
            board[i + 1] = self.chain.watermark

    def _drain_collect(self) -> None:
        self._post_progress()
        if self.collect is not None and self.results is not None:
            for b in self.collect.drain():
                self.results.put((0, Kind.BATCH, b), self.output_metrics)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        self.state = TaskState.DEPLOYING
        self.thread = threading.Thread(target=self._run, name=f"sqlengine {self.vertex.name}",
                                       daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.state = TaskState.RUNNING
        started = time.thread_time()
        try:
            head = self.chain.operators[0]
            if self.restored_finished is not None:
                self._broadcast(Kind.WATERMARK, MAX_WATERMARK.timestamp)
            elif self.chain.finish_if_done():
                pass  # (LIMIT 0: done before any input)
            elif isinstance(head, SourceOperator):
                self._run_source()
            elif hasattr(head, "values_batches"):
                self.chain.emit_from_head(list(head.values_batches()))
                self.chain.fire_watermark(MAX_WATERMARK, start=1)
                self.chain.end_input(0)
            else:
                self._run_inputs()
            self._drain_collect()
            if self.checkpoints is not None:
                self._final_checkpoint()
            self._broadcast(Kind.END, None)
            self._await_final_checkpoint(head)
            if self.checkpoints is not None and self.writers and self.holds_sink and \
                    self.restored_finished is None:
                # A sink whose chain goes on (to a statement set's last vertex) commits at
                # the final checkpoint, which completes once the tasks after it have finished
                # too: so after its end went down. (It returned without committing: a
                # statement set at parallelism 2 left its files in progress, rows lost.)
                self._await_final(self.checkpoints)
            self.state = TaskState.FINISHED
        except Cancelled:
            self.state = TaskState.CANCELED
        except BaseException as e:
            self.state = TaskState.FAILED
            self.control.fail(self.vertex.name, e)
        finally:
            self.cpu_s = time.thread_time() - started
            try:
                self.chain.close()
            except Exception as e:
                if self.state is TaskState.FINISHED:
                    self.state = TaskState.FAILED
                    self.control.fail(self.vertex.name, e)
            if self.state is TaskState.FINISHED and not self.writers:
                self._report_end()

    def _report_end(self) -> None:
        """A last task (a sink), closed, tells the job it is done, behind its last rows: once
        every one has, the job is (a LIMIT may leave unbounded sources running)."""
        if self.results is None:
            return
        with contextlib.suppress(Cancelled):  # (the job was cancelled meanwhile)
            self.results.put((0, Kind.END, self.vertex.name), self.output_metrics)

    # -- checkpoints (runtime/native/barriers.py) -------------------------------------------
    def _snapshot(self, checkpoint: int) -> None:
        """Snapshot the chain, acknowledge to the coordinator, send the barrier on."""
        from sqlengine.runtime.checkpoint.snapshot import snapshot_task

        cp = self.checkpoints
        assert cp is not None
        name = self.state_name
        entry = cp.storage.write_state(checkpoint, name, snapshot_task(self.chain, checkpoint))
        cp.ack("ack", checkpoint, name, entry)
        self._broadcast(Kind.BARRIER, checkpoint)

    @property
    def state_name(self) -> str:
        return f"{self.vertex.vertex_id}-{self.vertex.subtask}"

    def _final_checkpoint(self) -> None:
        """A finished task's last state: it stands for the task in every later checkpoint
        (Flink's checkpoints after tasks finished). A sink then waits for the job's final
        checkpoint, which the coordinator completes once every sink has finished, and
        commits."""
        from sqlengine.runtime.checkpoint.snapshot import snapshot_task

        cp = self.checkpoints
        assert cp is not None
        name = self.state_name
        state = self.restored_finished if self.restored_finished is not None else \
            snapshot_task(self.chain, FINAL, finished=True)
        cp.ack("finished", FINAL, name, cp.storage.write_finished(name, state))
        if self.writers or self.restored_finished is not None:
            return
        self._await_final(cp)

    def _await_final(self, cp: TaskCheckpoints) -> None:
        while cp.completed.value < FINAL:
            if self.control.cancelled.is_set():
                raise Cancelled
            time.sleep(0.01)
        self._flush_due()  # (commits)

    def _await_final_checkpoint(self, head: object) -> None:
        """A source whose reader acknowledges what completed checkpoints cover (a broker's
        durable consumer, an MQTT session) hears of the job's final checkpoint too: after
        its end went down (the sinks finish, then the checkpoint completes), it waits for it,
        so that the last rows read are acknowledged (Flink's tasks wait for the final
        checkpoint before they close)."""
        cp = self.checkpoints
        cursor = getattr(head, "cursor", None)
        if cp is None or cursor is None or not getattr(cursor, "on_complete", None):
            return
        while cp.completed.value < FINAL:
            if self.control.cancelled.is_set():
                return
            time.sleep(0.01)
        self._flush_due()  # (notifies the operators: the reader acknowledges)

    def _inject_barrier(self) -> None:
        cp = self.checkpoints
        if cp is None or cp.trigger.value <= cp.last_injected:
            return
        cp.last_injected = cp.trigger.value
        self._snapshot(cp.last_injected)

    def _run_source(self) -> None:
        driver = SourceDriver(self.chain, self.options)
        marker_every = _latency_interval(self.options)
        next_marker = time.monotonic()
        while True:
            if self.control.cancelled.is_set():
                raise Cancelled
            more = driver.poll()
            self._flush_due()
            self._drain_collect()
            if not more or self.chain.finish_if_done():
                return
            self._inject_barrier()
            if marker_every and time.monotonic() >= next_marker:
                next_marker = time.monotonic() + marker_every
                self._broadcast(Kind.LATENCY, (self.vertex.vertex_id, time.monotonic()))

    def _run_inputs(self) -> None:
        processor = StreamInputProcessor(self.chain, on_latency=self._on_latency,
                                         after_spilled_batch=self._drain_collect)
        cp = self.checkpoints
        if cp is None:
            while not processor.finished:
                processor.process_input(self.gate, self._flush_due)
                self._flush_due()
                self._drain_collect()
            return
        aligner = BarrierAligner(len(self.chain.channels), cp.exactly_once)
        while not processor.finished:
            item = aligner.next_released() or self.gate.get(self._flush_due)
            channel, kind, payload = item
            if kind is Kind.BARRIER:
                aligned = aligner.on_barrier(channel, payload)
                if aligned is not None:
                    self._snapshot(aligned)
                    aligner.finish()
                continue
            if aligner.holds(channel):
                aligner.hold(item)
                continue
            processor.process(channel, kind, payload)
            if kind is Kind.END:
                aligned = aligner.on_end(channel)
                if aligned is not None and not processor.finished:
                    self._snapshot(aligned)
                    aligner.finish()
            self._flush_due()
            self._drain_collect()

    def _on_latency(self, payload: tuple[str, float]) -> None:
        source, emitted = payload
        self.latency[source] = (time.monotonic() - emitted) * 1000.0
        self._broadcast(Kind.LATENCY, payload)


def _latency_interval(options: dict[str, str]) -> float:
    from sqlengine.options import parse_duration

    key = "metrics.latency.interval"
    text = options.get(key, "0")
    return parse_duration(text, key) / 1000.0 if text not in ("0", "") else 0.0
