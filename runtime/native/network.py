"""What travels between subtasks: bounded input gates and the writers that fill them.

Each subtask reads one InputGate, a bounded queue shared by all its input channels; an item is
``(channel, kind, payload)``. A producer blocks while the gate is full, so a slow consumer
slows its producers (backpressure) instead of growing memory; the time a producer spends
blocked is counted. Every wait wakes up regularly to notice a cancelled job, so no thread
stays blocked once the job is over.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

import pyarrow as pa

from sqlengine.runtime.native.partitioner import Partitioner

_POLL = 0.05  # seconds between checks for cancellation while waiting


class Kind(Enum):
    BATCH = 0
    WATERMARK = 1
    IDLE = 2
    END = 3  # the channel has no more data
    LATENCY = 4  # a latency marker: (source vertex, emitted at, monotonic seconds)
    SPILLED = 5  # a blocking exchange's result for the channel: Arrow IPC files to read
    BARRIER = 6  # a checkpoint barrier: its checkpoint id


class Cancelled(Exception):
    """The job was cancelled (or failed elsewhere): the task leaves its loop."""


class JobControl:
    """Shared by the tasks of one job: cancellation and the first failure (the root cause).

    ``event`` may be a multiprocessing Event (tasks in several processes); ``report`` then
    carries a failure to the process that owns the job."""

    def __init__(self, event: Any = None,
                 report: Callable[[str, BaseException], None] | None = None) -> None:
        self.cancelled = event if event is not None else threading.Event()
        self._lock = threading.Lock()
        self.failure: tuple[str, BaseException] | None = None
        self.report = report

    def fail(self, where: str, error: BaseException) -> None:
        with self._lock:
            first = self.failure is None
            if first:
                self.failure = (where, error)
        if first and self.report is not None:
            self.report(where, error)
        self.cancelled.set()

    def cancel(self) -> None:
        self.cancelled.set()


@dataclass
class ChannelMetrics:
    """A producer subtask's output counters."""

    records_out: int = 0
    bytes_out: int = 0
    blocked_s: float = 0.0  # time spent waiting for room downstream (backpressure)


def _put_waiting(target: Any, item: Any, control: JobControl,
                 metrics: ChannelMetrics | None) -> None:
    """Put into a bounded queue, waiting while it is full (backpressure, counted as time
    blocked) but never past a cancel."""
    started = time.monotonic()
    try:
        while True:
            if control.cancelled.is_set():
                raise Cancelled
            try:
                target.put(item, timeout=_POLL)
                return
            except queue.Full:
                continue
    finally:
        if metrics is not None:
            metrics.blocked_s += time.monotonic() - started


class InputGate:
    def __init__(self, capacity: int, control: JobControl) -> None:
        self.queue: queue.Queue[tuple[int, Kind, Any]] = queue.Queue(maxsize=capacity)
        self.control = control

    def put(self, item: tuple[int, Kind, Any], metrics: ChannelMetrics | None = None) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            _put_waiting(self.queue, item, self.control, metrics)

    def get(self, on_wait: Callable[[], None] | None = None) -> tuple[int, Kind, Any]:
        """The next item; ``on_wait`` runs whenever nothing arrived for a poll interval."""
        try:
            return self.queue.get_nowait()
        except queue.Empty:
            pass
        while True:
            if self.control.cancelled.is_set():
                raise Cancelled
            try:
                return self.queue.get(timeout=_POLL)
            except queue.Empty:
                if on_wait is not None:
                    on_wait()


def encode_batch(batch: pa.RecordBatch) -> pa.Buffer:
    """Arrow IPC bytes of a batch (only the rows of a slice, unlike pickling it)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, batch.schema) as writer:
        writer.write_batch(batch)
    return sink.getvalue()


def decode_batch(data: Any) -> pa.RecordBatch:
    return pa.ipc.open_stream(data).read_next_batch()


class RemoteGate:
    """A consumer subtask's inbox in another process: items go as Arrow IPC through a bounded
    multiprocessing queue (so a slow consumer still blocks its producers); a ``Receiver``
    thread in the consumer's process moves them into its InputGate."""

    def __init__(self, inbox: Any, control: JobControl) -> None:
        self.inbox = inbox
        self.control = control

    def put(self, item: tuple[int, Kind, Any], metrics: ChannelMetrics | None = None) -> None:
        channel, kind, payload = item
        if kind is Kind.BATCH:
            payload = encode_batch(payload).to_pybytes()
        _put_waiting(self.inbox, (channel, kind, payload), self.control, metrics)


class Receiver:
    """Moves a subtask's remote items from its inbox into its gate, until every remote channel
    has ended (or the job is cancelled)."""

    def __init__(self, inbox: Any, gate: InputGate, remote_channels: int,
                 control: JobControl) -> None:
        self.inbox = inbox
        self.gate = gate
        self.remaining = remote_channels
        self.control = control
        self.thread = threading.Thread(target=self._run, daemon=True, name="sqlengine receiver")

    def _run(self) -> None:
        try:
            while self.remaining > 0:
                if self.control.cancelled.is_set():
                    return
                try:
                    channel, kind, payload = self.inbox.get(timeout=_POLL)
                except queue.Empty:
                    continue
                if kind is Kind.BATCH:
                    payload = decode_batch(payload)
                elif kind is Kind.END:
                    self.remaining -= 1
                self.gate.put((channel, kind, payload))
        except Cancelled:
            return
        except BaseException as e:
            self.control.fail("receiver", e)


class _Pending:
    """What a writer holds back for one channel: rows, and the watermark that follows them."""

    __slots__ = ("batches", "rows", "since", "watermark")

    def __init__(self) -> None:
        self.batches: list[pa.RecordBatch] = []
        self.rows = 0
        self.since = 0.0
        self.watermark: int | None = None


class RecordWriter:
    """One producer subtask's output along one edge: its partitioner picks the consumer
    subtask(s) of each batch; watermarks, idleness and the end go to every channel.

    As Flink's network buffers, rows for one channel are collected until ``batch_rows`` of
    them are there or the oldest has waited ``timeout`` seconds (a hash exchange would
    otherwise cut every batch into parallelism-many small ones, and per-batch costs grow). A
    watermark never overtakes the rows before it: while rows are held for a channel, its
    watermark waits behind them (rows carry their own watermark, so holding one back only
    delays firing, by at most the timeout)."""

    def __init__(self, partitioner: Partitioner, targets: list[tuple[Any, int]],
                 metrics: ChannelMetrics, batch_rows: int = 0, timeout: float = 0.0) -> None:
        self.partitioner = partitioner
        self.targets = targets  # per consumer subtask: its gate and our channel there
        self.metrics = metrics
        self.batch_rows = batch_rows
        self.timeout = timeout
        self.pending = [_Pending() for _ in targets]

    def emit(self, batch: pa.RecordBatch) -> None:
        for i, part in self.partitioner.route(batch):
            self.metrics.records_out += part.num_rows
            self.metrics.bytes_out += part.nbytes
            if self.batch_rows <= 1:
                gate, channel = self.targets[i]
                gate.put((channel, Kind.BATCH, part), self.metrics)
                continue
            held = self.pending[i]
            if held.batches and not part.schema.equals(held.batches[0].schema):
                # (batches of two inputs of a union: one carrying row watermarks or row kinds,
                # the other not, go as they are, not combined)
                self._flush(i)
            if not held.batches:
                held.since = time.monotonic()
            held.batches.append(part)
            held.rows += part.num_rows
            if held.rows >= self.batch_rows:
                self._flush(i)

    def _flush(self, i: int) -> None:
        held = self.pending[i]
        gate, channel = self.targets[i]
        if held.batches:
            parts, held.batches, held.rows = held.batches, [], 0
            batch = parts[0] if len(parts) == 1 else \
                pa.Table.from_batches(parts).combine_chunks().to_batches()[0]
            gate.put((channel, Kind.BATCH, batch), self.metrics)
        if held.watermark is not None:
            wm, held.watermark = held.watermark, None
            gate.put((channel, Kind.WATERMARK, wm), self.metrics)

    def flush(self) -> None:
        for i in range(len(self.targets)):
            self._flush(i)

    def flush_due(self, now: float) -> None:
        """Send what has waited longer than the buffer timeout."""
        for i, held in enumerate(self.pending):
            if (held.batches or held.watermark is not None) and now - held.since >= self.timeout:
                self._flush(i)

    def broadcast(self, kind: Kind, payload: Any) -> None:
        if kind is Kind.WATERMARK:
            for i, held in enumerate(self.pending):
                if held.batches:
                    held.watermark = payload  # sent after the rows it follows
                else:
                    gate, channel = self.targets[i]
                    gate.put((channel, kind, payload), self.metrics)
            return
        if kind is not Kind.LATENCY:
            self.flush()
        for gate, channel in self.targets:
            gate.put((channel, kind, payload), self.metrics)


class BlockingWriter:
    """A BLOCKING exchange (batch mode): each channel's rows are written to Arrow IPC files
    under ``spill_dir`` as they come; when the producer ends, each consumer gets its files,
    then the final watermark and the end. Memory stays bounded by one batch; the consumer
    starts on the data only once the whole result exists, as with Flink's blocking results."""

    def __init__(self, partitioner: Partitioner, targets: list[tuple[Any, int]],
                 metrics: ChannelMetrics, spill_dir: str, name: str) -> None:
        self.partitioner = partitioner
        self.targets = targets
        self.metrics = metrics
        self.spill_dir = spill_dir
        self.name = name
        self.writers: list[Any] = [None] * len(targets)
        self.schemas: list[pa.Schema | None] = [None] * len(targets)
        self.paths: list[list[str]] = [[] for _ in targets]
        self.watermark: int | None = None

    def emit(self, batch: pa.RecordBatch) -> None:
        for i, part in self.partitioner.route(batch):
            self.metrics.records_out += part.num_rows
            self.metrics.bytes_out += part.nbytes
            writer = self.writers[i]
            if writer is None or self.schemas[i] != part.schema:
                if writer is not None:
                    writer.close()
                path = f"{self.spill_dir}/{self.name}-{i}-{len(self.paths[i])}.arrow"
                writer = self.writers[i] = pa.ipc.new_stream(path, part.schema)
                self.schemas[i] = part.schema
                self.paths[i].append(path)
            writer.write_batch(part)

    def flush_due(self, now: float) -> None:
        pass

    def broadcast(self, kind: Kind, payload: Any) -> None:
        if kind is Kind.WATERMARK:
            self.watermark = payload  # (batch mode: the final one) goes after the data
            return
        if kind is Kind.IDLE:
            return
        if kind is Kind.END:
            for i, (gate, channel) in enumerate(self.targets):
                if self.writers[i] is not None:
                    self.writers[i].close()
                    self.writers[i] = None
                if self.paths[i]:
                    gate.put((channel, Kind.SPILLED, self.paths[i]), self.metrics)
                if self.watermark is not None:
                    gate.put((channel, Kind.WATERMARK, self.watermark), self.metrics)
        for gate, channel in self.targets:
            gate.put((channel, kind, payload), self.metrics)


def read_spilled(paths: list[str]) -> Iterator[pa.RecordBatch]:
    """The batches of a blocking result's files (each removed once read)."""
    import os

    for path in paths:
        with pa.memory_map(path) as source:
            yield from pa.ipc.open_stream(source)
        os.remove(path)
