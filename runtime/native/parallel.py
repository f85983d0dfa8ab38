"""The parallel native runtime: the JobGraph becomes an ExecutionGraph whose subtasks run as
Tasks (one thread each) in task slots.

With 'execution.native.task-mode' = 'process' (the default) there is one slot per parallel
instance, each a forked worker process (Flink's TaskManager slots): slot i runs subtask i of
every vertex with more than i subtasks. Subtasks in one slot exchange batches through bounded
in-process queues; across slots, through bounded multiprocessing queues as Arrow IPC. With
'thread' every subtask is a thread of the calling process (no fork; the GIL limits the
speed-up: see ARCHITECTURE.md for the measurements behind the default).

The caller iterates ``run()``: it yields the collect sink's batches as they come; closing the
iterator (or ``cancel()``) cancels every task within a poll interval. The first task to fail
fails the job: the others are cancelled, every thread and process is joined (killed after a
grace period), and the root cause is raised with its operator and subtask named.
"""

from __future__ import annotations

import collections
import gc
import multiprocessing as mp
import queue
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlengine import allocator, errors
from sqlengine.errors import CheckpointError, ExecutionError, PlanError, SqlEngineError
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.optimizer.specs import OrderedConcatSpec, TableScanSpec, TableSinkSpec
from sqlengine.runtime.memory import account_for
from sqlengine.runtime.native.barriers import FINAL, TaskCheckpoints
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.native.execution_graph import (
    DistributionPattern,
    ExecutionGraph,
    ExecutionVertex,
    build_execution_graph,
)
from sqlengine.runtime.native.executor import (
    JobResult,
    checkpoint_stats,
    late_dropped,
    udf_skipped,
    watermark_lag,
)
from sqlengine.runtime.native.factory import build_chain
from sqlengine.runtime.native.fork_imports import forget_imports_of_other_threads
from sqlengine.runtime.native.network import (
    BlockingWriter,
    Cancelled,
    InputGate,
    JobControl,
    Kind,
    Receiver,
    RecordWriter,
    RemoteGate,
    decode_batch,
)
from sqlengine.runtime.native.partitioner import ForwardPartitioner, partitioner
from sqlengine.runtime.native.task import Task, TaskState
from sqlengine.runtime.operators.source import SourceOperator

_JOIN_TIMEOUT = 5.0  # seconds to wait for the tasks of a cancelled job before killing them
_POLL = 0.05
TASK_MODES = ("process", "thread")


class ParallelExecutor:
    def __init__(self, graph: JobGraph, options: dict[str, str],
                 tables: dict[str, object] | None = None) -> None:
        self.graph = graph
        self.options = options
        self.tables = tables or {}
        self.execution_graph: ExecutionGraph = build_execution_graph(graph)
        self.result = JobResult()
        self.on_progress: Callable[..., None] | None = None
        key = "execution.native.task-mode"
        self.mode = options.get(key, "process").lower()
        if self.mode not in TASK_MODES:
            msg = f"option {key!r} must be one of {', '.join(TASK_MODES)}, got {self.mode!r}"
            raise PlanError(msg)
        if self.mode == "process" and "fork" not in mp.get_all_start_methods():
            self.mode = "thread"  # (no fork on this platform)
        self.subtasks = [sub for v in self.execution_graph.vertices for sub in v.subtasks]
        # Slots: per slot-sharing group as many as its widest vertex; slot i of a group runs
        # subtask i of each of the group's vertices (one process per slot).
        self.group_slots: dict[str, tuple[int, int]] = {}  # group -> (first slot, width)
        for v in graph.vertices:
            first, width = self.group_slots.get(v.slot_sharing_group, (0, 0))
            self.group_slots[v.slot_sharing_group] = (first, max(width, v.parallelism))
        start = 0
        for group, (_, width) in self.group_slots.items():
            self.group_slots[group] = (start, width)
            start += width
        self.vertex_group = {v.id: v.slot_sharing_group for v in graph.vertices}
        self.slots = start if self.mode == "process" else 1
        self.per_channel = int(options.get("taskmanager.network.memory.buffers-per-channel",
                                           "2"))
        self.floating = int(options.get(
            "taskmanager.network.memory.floating-buffers-per-gate", "8"))
        from sqlengine.options import parse_duration

        self.batch_rows = int(options.get("execution.exchange.batch-rows", "32768"))
        key = "execution.buffer-timeout"
        self.buffer_timeout = parse_duration(options.get(key, "100 ms"), key) / 1000.0
        self._ctx = mp.get_context("fork") if self.mode == "process" else None
        # Results taken off the queue while stop_with_savepoint waits, for run() to yield
        self._held: collections.deque[tuple[int, Kind, Any]] = collections.deque()
        self._results_lock = threading.Lock()  # (one reader at a time keeps their order)
        if self._ctx is not None:
            self.control = JobControl(self._ctx.Event())
            self.results: Any = self._ctx.Queue(self.floating)
            self.reports: Any = self._ctx.Queue()
            self.inboxes = {(s.vertex_id, s.subtask): self._ctx.Queue(self._capacity(s))
                            for s in self.subtasks if self._remote_channels(s)}
            # Per subtask: rows its head produced and its watermark, for progress lines.
            self.progress_board: Any = self._ctx.Array("q", 2 * len(self.subtasks),
                                                       lock=False)
        else:
            self.control = JobControl()
            self.results = InputGate(self.floating, self.control)
            self.reports = queue.Queue()
            self.inboxes = {}
            self.progress_board = [0] * (2 * len(self.subtasks))
        # A partitioned iteration's subtasks hand each other the rows their rounds derive
        # through a broker (runtime/native/iteration_broker.py): its inboxes are made here,
        # before the workers fork.
        from sqlengine.optimizer.specs_iteration import IterateSpec
        from sqlengine.runtime.native.iteration_broker import make_inboxes

        self.iteration_inboxes = {
            v.id: make_inboxes(v.parallelism, self._ctx) for v in graph.vertices
            if v.parallelism > 1 and any(isinstance(op, IterateSpec) and op.partition
                                         for op in v.chain)}
        # Blocking results are spilled here ('io.tmp.dirs', else the system's temp dir); made
        # when the job starts, removed when it stops.
        self.spill_dir = ""
        self._local_tasks: list[Task] = []
        self._workers: list[Any] = []
        self._thread: threading.Thread | None = None
        self._setup_checkpoints()

    # -- checkpoints (runtime/native/barriers.py) -------------------------------------------
    def _setup_checkpoints(self) -> None:
        from sqlengine.runtime.checkpoint.config import wanted

        self.coordinator = None
        if wanted(self.options):
            from sqlengine.runtime.checkpoint.coordinator import CheckpointCoordinator

            coordinator = CheckpointCoordinator(self.graph, self.options)
            coordinator.sink_tokens(self.options)  # (the sinks are opened in the workers)
            self.coordinator = coordinator if coordinator.enabled else None
        shared = self._ctx if self._ctx is not None else mp
        self.cp_trigger = shared.Value("q", 0)
        self.cp_completed = shared.Value("q", 0)
        # The last subtasks, and those whose chains hold a table's sink (a statement set's
        # sinks go on to its last vertex): the final checkpoint waits for all of them, and
        # the job's end for the sinks' commits.
        self.sink_subtasks = {f"{s.vertex_id}-{s.subtask}" for s in self.subtasks
                              if not self.graph.out_edges(s.vertex_id) or any(
                                  isinstance(spec, TableSinkSpec)
                                  for spec in self.graph.vertex(s.vertex_id).chain)}
        self._cp_lock = threading.RLock()
        self._stopping = False
        self._restored: Any = None
        self.committed: dict[str, int] = {}  # sink subtask -> the last checkpoint it committed

    def _ack(self, kind: str, checkpoint: int, subtask: str, entry: dict[str, Any]) -> None:
        self.reports.put(("ack", kind, checkpoint, subtask, entry))

    def _on_ack(self, kind: str, checkpoint: int, subtask: str, entry: dict[str, Any]) -> None:
        coordinator = self.coordinator
        if coordinator is None:
            return
        if kind == "committed":
            self.committed[subtask] = max(self.committed.get(subtask, 0), checkpoint)
            return
        if kind == "finished":
            for n in coordinator.finish(subtask, entry):
                self.cp_completed.value = max(self.cp_completed.value, n)
            if self.sink_subtasks <= coordinator.finished.keys() and \
                    self.cp_completed.value < FINAL:
                coordinator.complete_final()
                self.cp_completed.value = FINAL
            return
        if coordinator.acknowledge(checkpoint, subtask, entry):
            self.cp_completed.value = max(self.cp_completed.value, checkpoint)

    def _checkpoint_tick(self) -> None:
        """Trigger periodic checkpoints, give up on those that timed out."""
        coordinator = self.coordinator
        if coordinator is None or self.control.cancelled.is_set():
            return
        with self._cp_lock:  # (a savepoint triggers from another thread: one at a time)
            self._read_reports_locked()
            if self.cp_completed.value >= FINAL or self._stopping:
                return
            for n in coordinator.expired():
                coordinator.abort(n)
            if coordinator.due():
                self.cp_trigger.value = coordinator.trigger()

    def stop_with_savepoint(self, directory: str) -> str:
        """Trigger a checkpoint now, wait for it, copy it out as a savepoint under
        ``directory``, let the sinks commit it, and stop the job (Flink's
        stop-with-savepoint)."""
        coordinator = self.coordinator
        if coordinator is None:
            raise CheckpointError("a savepoint needs checkpoints on "
                                  "('execution.checkpointing.interval' and '.dir')")
        self._stopping = True  # (no periodic checkpoint now: it could prune the savepoint's)
        with self._cp_lock:
            while coordinator.pending:  # (one at a time: a periodic one may be under way)
                self._hold_results()
                self._read_reports()
                self._check_workers()
                if self.control.cancelled.is_set():
                    break
                time.sleep(0.005)
            n = coordinator.trigger()
            self.cp_trigger.value = n
        while True:
            # (read under the lock: the job's loop completes a checkpoint under it, and pops
            # it from `pending` before its metadata is written and it is in `completed`)
            self._hold_results()
            with self._cp_lock:
                self._read_reports()
                self._check_workers()
                if n not in coordinator.pending:
                    break
            if self.control.cancelled.is_set() or n in coordinator.expired():
                with self._cp_lock:
                    coordinator.abort(n)
                if self.control.failure is not None:  # (name the cause, not only the effect)
                    cause = _root_cause(*self.control.failure)
                    raise CheckpointError("the job failed before the savepoint completed (no "
                                          f"savepoint was taken): {cause}") from cause
                why = "stopped" if self.control.cancelled.is_set() else \
                    f"ran past 'execution.checkpointing.timeout' " \
                    f"({coordinator.config.timeout_ms} ms)"
                raise CheckpointError(f"the job {why} before the savepoint completed: no "
                                      "savepoint was taken")
            time.sleep(0.005)
        assert coordinator.storage is not None
        done = coordinator.storage.checkpoint_dir(n)
        with self._cp_lock:  # (a later checkpoint completing would prune this one meanwhile)
            if done not in coordinator.completed:  # (given up on: the job finished meanwhile)
                raise CheckpointError("the job finished before the savepoint completed: no "
                                      "savepoint was taken")
            path = coordinator.savepoint(done, Path(directory))
        # The sinks commit what it covers (finished ones did at their end), then all stop.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not self.control.cancelled.is_set():
            self._hold_results()
            with self._cp_lock:
                self._read_reports()
            waiting = [s for s in self.sink_subtasks if self.committed.get(s, 0) < n and
                       s not in coordinator.finished]
            if not waiting:
                break
            time.sleep(0.005)
        self.cancel()
        return str(path)

    def _commit_finished(self) -> bool:
        """Restored from the job's final checkpoint: its sinks commit what it covered, and
        nothing is left to run. Returns whether that was the case."""
        coordinator = self.coordinator
        restored = coordinator.restored if coordinator is not None else None
        if restored is None or not restored.finished:
            return False
        from sqlengine.runtime.checkpoint.snapshot import Restored, restore_task

        old = Restored(restored)
        for v in self.graph.vertices:
            if self.graph.out_edges(v.id):
                continue
            for i in range(v.parallelism):
                ops = build_chain(v.chain, self.tables)
                labels = [spec.label().split("(")[0] for spec in v.chain]
                chain = ChainedTask(f"{v.id}[{i + 1}/{v.parallelism}]", ops, labels, 1,
                                    self.options, subtask=(i, v.parallelism))
                chain.nodes = tuple(v.stream_nodes) or chain.nodes
                restore_task(chain, old, i, v.parallelism)
                chain.close()
        return True

    # -- layout -----------------------------------------------------------------------------
    def slot_of(self, sub: ExecutionVertex) -> int:
        if self.slots == 1:
            return 0
        first, width = self.group_slots[self.vertex_group[sub.vertex_id]]
        return first + sub.subtask % width

    def _channels(self, sub: ExecutionVertex) -> tuple[Any, ...]:
        v = self.execution_graph.vertex(sub.vertex_id)
        return v.channels[sub.subtask]

    def _capacity(self, sub: ExecutionVertex) -> int:
        return self.per_channel * max(1, len(self._channels(sub))) + self.floating

    def _remote_channels(self, sub: ExecutionVertex) -> int:
        """How many of the subtask's input channels come from another slot."""
        results = {r.id: r for r in self.execution_graph.results}
        count = 0
        for ch in self._channels(sub):
            producer = ExecutionVertex(results[ch.result_id].edge.source, ch.partition, 0)
            if self.slot_of(producer) != self.slot_of(sub):
                count += 1
        return count

    # -- one slot's tasks -------------------------------------------------------------------
    def _build_slot(self, slot: int) -> tuple[list[Task], list[Receiver]]:
        eg = self.execution_graph
        tasks: dict[tuple[str, int], Task] = {}
        memory = account_for(self.options, self.slots)  # (the slot's share of the budget)
        edge_source = {r.id: self.graph.origin(r.edge.source) for r in eg.results}
        for ejv in eg.vertices:
            jv = ejv.job_vertex
            for sub, channels in zip(ejv.subtasks, ejv.channels):
                if self.slot_of(sub) != slot:
                    continue
                ops = build_chain(jv.chain, self.tables)
                if isinstance(ops[0], SourceOperator):
                    ops[0].split = (sub.subtask, sub.parallelism)
                if jv.id in self.iteration_inboxes:
                    from sqlengine.runtime.native.iteration_broker import IterationBroker

                    inboxes, counters, lock = self.iteration_inboxes[jv.id]
                    for op in ops:
                        if hasattr(op, "broker"):
                            op.broker = IterationBroker(inboxes, counters, lock,
                                                        self.control.cancelled, sub.subtask)
                names = [spec.label().split("(")[0] for spec in jv.chain]
                # (an ordered concatenation reads each channel as an input of its own)
                per_channel = isinstance(jv.head, OrderedConcatSpec) and jv.head.per_channel
                mapping = list(range(len(channels))) if per_channel \
                    else [c.input_index for c in channels]
                chain = ChainedTask(sub.name, ops, names,
                                    max(1, len(self.graph.in_edges(jv.id))), self.options,
                                    mapping or [0], memory, (sub.subtask, sub.parallelism))
                chain.nodes = tuple(jv.stream_nodes) or chain.nodes
                if len(channels) > 1 and not per_channel:
                    chain.set_producers([(edge_source[c.result_id], c.partition)
                                         for c in channels])
                gate = InputGate(self._capacity(sub), self.control)
                results = self.results if self._ctx is None else \
                    RemoteGate(self.results, self.control)
                task = Task(sub, chain, gate, self.control, self.options, results)
                if self.coordinator is not None:
                    self._checkpointed(task, jv)
                task.progress = (self.progress_board, 2 * self.subtasks.index(sub))
                tasks[(jv.id, sub.subtask)] = task
        for result in eg.results:
            for part in result.partitions:
                producer = tasks.get((result.edge.source, part.partition))
                if producer is None:
                    continue
                consumers = sorted(eg.consumers(result, part.partition),
                                   key=lambda c: c[0].subtask)
                targets: list[tuple[Any, int]] = []
                for v, ch in consumers:
                    local = tasks.get((v.vertex_id, v.subtask))
                    if local is not None:
                        targets.append((local.gate, ch))
                    else:
                        inbox = self.inboxes[(v.vertex_id, v.subtask)]
                        targets.append((RemoteGate(inbox, self.control), ch))
                if result.pattern is DistributionPattern.POINTWISE:
                    chooser = ForwardPartitioner(1)
                else:
                    chooser = partitioner(result.edge.partitioning, result.edge.keys,
                                          len(targets), part.partition)
                if result.edge.blocking:
                    producer.writers.append(BlockingWriter(
                        chooser, targets, producer.output_metrics, self.spill_dir,
                        f"{result.id}-{part.partition}"))
                else:
                    producer.writers.append(RecordWriter(
                        chooser, targets, producer.output_metrics, self.batch_rows,
                        self.buffer_timeout))
        receivers = [Receiver(self.inboxes[key], t.gate, self._remote_channels(t.vertex),
                              self.control)
                     for key, t in tasks.items() if key in self.inboxes]
        return list(tasks.values()), receivers

    def _checkpointed(self, task: Task, jv: Any) -> None:
        """The task takes part in checkpoints, restored from the job's checkpoint if any."""
        from sqlengine.runtime.checkpoint.snapshot import (
            Restored,
            check_checkpointable,
            restore_task,
        )

        coordinator = self.coordinator
        assert coordinator is not None and coordinator.storage is not None
        check_checkpointable(task.chain)
        task.checkpoints = TaskCheckpoints(
            coordinator.storage, self.cp_trigger, self.cp_completed, self._ack,
            coordinator.config.exactly_once)
        if coordinator.restored is not None:
            if self._restored is None:  # (one per process: state files read once)
                self._restored = Restored(coordinator.restored)
            own = restore_task(task.chain, self._restored, task.vertex.subtask,
                               task.vertex.parallelism)
            if own is not None and own.get("finished"):
                task.restored_finished = own

    def _run_slot(self, slot: int) -> None:
        """In a worker process: run this slot's tasks to the end, report their metrics."""
        tasks: list[Task] = []
        try:
            tasks, receivers = self._build_slot(slot)
            for r in receivers:
                r.thread.start()
            for t in tasks:
                t.start()
            for t in tasks:
                assert t.thread is not None
                t.thread.join()
        except BaseException as e:
            self.control.fail(f"slot {slot}", e)
        finally:
            self.reports.put(("metrics", _task_metrics(tasks)))
            if self.control.cancelled.is_set():
                # Nobody may read what is still queued: do not wait for it at exit.
                self.results.cancel_join_thread()
                for q in self.inboxes.values():
                    q.cancel_join_thread()
                for inboxes, _, _ in self.iteration_inboxes.values():
                    for q in inboxes:
                        q.cancel_join_thread()

    def _worker_main(self, slot: int) -> None:
        # Returning lets multiprocessing flush this process's queues before it exits.
        forget_imports_of_other_threads()  # (before any import: one may be held for ever)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's to handle
        allocator.tune()  # (the process is ours, also under an embedding application)
        self.control.report = self._report_failure
        self._run_slot(slot)

    def _report_failure(self, where: str, error: BaseException) -> None:
        self.reports.put(("failure", where, _portable(error)))

    # -- running ----------------------------------------------------------------------------
    def cancel(self) -> None:
        self.control.cancel()

    def run(self) -> Iterator[pa.RecordBatch]:
        if self._commit_finished():
            return
        self._start()
        last_progress = time.monotonic()
        # The last subtasks (sinks): the job is done when each has said so (a LIMIT over an
        # unbounded source finishes its sink; the sources nothing needs are then cancelled).
        sinks = sum(1 for s in self.subtasks if not self.graph.out_edges(s.vertex_id))
        try:
            while True:
                self._checkpoint_tick()
                try:
                    _, kind, batch = self._next_result()
                    if kind is Kind.END:
                        sinks -= 1
                        if sinks == 0:
                            break
                        continue
                except queue.Empty:
                    self._read_reports()
                    self._check_workers()
                    if self.control.cancelled.is_set() or self._all_done():
                        if self._results_empty():
                            break
                        continue
                    now = time.monotonic()
                    if self.on_progress is not None and now - last_progress >= 0.5:
                        last_progress = now
                        self.on_progress(*self.progress())
                    continue
                yield decode_batch(batch) if isinstance(batch, bytes) else batch
            self._await_commits()
        finally:
            if not self._all_done():
                for t in self._local_tasks:
                    if t.state in (TaskState.RUNNING, TaskState.DEPLOYING):
                        t.state = TaskState.CANCELING
                self.control.cancel()
            self._stop()
        if self.control.failure is not None:
            raise _root_cause(*self.control.failure)

    def _await_commits(self) -> None:
        """After the last subtasks ended at the final checkpoint: the sinks before them (a
        statement set's) commit it, and the job ends when they have (it cancelled them)."""
        coordinator = self.coordinator
        if coordinator is None:
            return
        deadline = time.monotonic() + _JOIN_TIMEOUT
        while time.monotonic() < deadline and not self.control.cancelled.is_set():
            with self._cp_lock:
                self._read_reports()
            if self.cp_completed.value < FINAL or all(
                    self.committed.get(s, 0) >= FINAL for s in self.sink_subtasks):
                return
            self._check_workers()
            time.sleep(0.005)

    def _start(self) -> None:
        if any(e.blocking for e in self.graph.edges):
            self.spill_dir = tempfile.mkdtemp(prefix="sqlengine-spill-",
                                              dir=self.options.get("io.tmp.dirs") or None)
        if self._ctx is None:
            tasks, _ = self._build_slot(0)
            self._local_tasks = tasks
            for t in tasks:
                t.start()
            return
        # Objects that exist now are left alone by the workers' garbage collector, so that
        # it does not copy every page it would otherwise touch (copy-on-write after fork).
        # (What a caller froze before, the command line's start-up, stays frozen.)
        frozen_before = gc.get_freeze_count()
        gc.freeze()
        try:
            for slot in range(self.slots):
                worker = self._ctx.Process(target=self._worker_main, args=(slot,),
                                           name=f"sqlengine slot {slot}", daemon=True)
                worker.start()
                self._workers.append(worker)
        finally:
            if not frozen_before:
                gc.unfreeze()

    def _hold_results(self) -> None:
        """Take the sinks' results off the queue into ``_held`` (run() yields them first, in
        order): while the caller waits in stop_with_savepoint it reads none, and a sink
        blocked on a full queue would never pass the savepoint's barrier on (the job hung
        until 'execution.checkpointing.timeout')."""
        source = self.results.queue if self._ctx is None else self.results
        with self._results_lock:
            while True:
                try:
                    self._held.append(source.get_nowait())
                except queue.Empty:
                    return

    def _next_result(self) -> tuple[int, Kind, Any]:
        with self._results_lock:
            if self._held:
                return self._held.popleft()
            if self._ctx is None:
                return self.results.queue.get(timeout=_POLL)
            return self.results.get(timeout=_POLL)

    def _results_empty(self) -> bool:
        if self._held:
            return False
        if self._ctx is None:
            return self.results.queue.empty()
        return self.results.empty()

    def _all_done(self) -> bool:
        if self._ctx is None:
            return all(t.thread is not None and not t.thread.is_alive()
                       for t in self._local_tasks)
        return all(w.exitcode is not None for w in self._workers)

    def _check_workers(self) -> None:
        """A worker process that died (killed by a signal, or exiting with an error before it
        could report one) fails the job, naming its slot and the signal; the others are ended
        by the job's stop. Noticed within a poll interval."""
        if self._ctx is None or self.control.failure is not None:
            return
        for slot, w in enumerate(self._workers):
            code = w.exitcode
            if code is None or code == 0:
                continue
            self._read_reports()  # (a failure it did report names the real cause)
            if self.control.failure is not None:
                return
            tasks = ", ".join(s.name for s in self.subtasks if self.slot_of(s) == slot)
            if code < 0:
                try:
                    how = f"was killed by signal {signal.Signals(-code).name}"
                except ValueError:
                    how = f"was killed by signal {-code}"
            else:
                how = f"exited with status {code}"
            msg = f"the worker process of slot {slot} ({tasks}) {how}"
            self.control.fail(f"slot {slot}", ExecutionError(msg))
            return

    def _read_reports(self) -> None:
        with self._cp_lock:
            self._read_reports_locked()

    def _read_reports_locked(self) -> None:
        while True:
            try:
                item = self.reports.get_nowait()
            except queue.Empty:
                return
            if item[0] == "failure":
                self.control.fail(item[1], item[2])
            elif item[0] == "ack":
                self._on_ack(*item[1:])
            else:
                self._merge_metrics(item[1])

    def _stop(self) -> None:
        deadline = time.monotonic() + _JOIN_TIMEOUT
        if self._ctx is None:
            for t in self._local_tasks:
                if t.thread is not None:
                    t.thread.join(max(0.0, deadline - time.monotonic()))
            stuck = [t.vertex.name for t in self._local_tasks
                     if t.thread is not None and t.thread.is_alive()]
            self._merge_metrics(_task_metrics(self._local_tasks))
        else:
            # (What is still on its way to the caller after a cancel is not read: a worker
            # that gave up on it may have left half a message in the pipe.)
            while time.monotonic() < deadline and not self._all_done():
                self._read_reports()
                time.sleep(0.01)
            stuck = [w.name for w in self._workers if w.exitcode is None]
            for w in self._workers:
                if w.exitcode is None:
                    w.kill()
                w.join(1.0)
            if not stuck:  # every report is whole
                self._read_reports()
        if self.spill_dir:
            shutil.rmtree(self.spill_dir, ignore_errors=True)
        if stuck and self.control.failure is None:
            self.control.fail(stuck[0], ExecutionError(
                f"{stuck[0]} did not stop within {_JOIN_TIMEOUT:.0f} s of the cancel"))

    # -- observability ----------------------------------------------------------------------
    def progress(self) -> tuple[int, int, int | None]:
        """Rows the sources have produced, the lowest watermark of the last vertices, and
        how far it trails the sources' (ms)."""
        rows = 0
        ends = []
        sources = []
        for i, sub in enumerate(self.subtasks):
            jv = self.graph.vertex(sub.vertex_id)
            if isinstance(jv.head, TableScanSpec):
                rows += self.progress_board[2 * i]
                sources.append(self.progress_board[2 * i + 1])
            if not self.graph.out_edges(sub.vertex_id):
                ends.append(self.progress_board[2 * i + 1])
        end = min(ends, default=0)
        return rows, end, watermark_lag(sources, end)

    def live_metrics(self) -> dict[str, Any]:
        """The job so far, per vertex (its subtasks summed; the lowest watermark; the most
        backpressured subtask's time blocked on a full output), and the checkpoints completed;
        safe to read from another thread while the job runs (the live web view). Worker
        processes ('process' task mode) post only their head operator's records out and their
        watermark while they run: then that is all there is ("partial")."""
        vertices: dict[str, dict[str, Any]] = {}
        if self._ctx is None:
            for t in list(self._local_tasks):
                v = vertices.setdefault(t.vertex.vertex_id, {
                    "records_in": 0, "records_out": 0, "watermark": None, "idle": True,
                    "late_records_dropped": 0, "udf_rows_skipped": 0, "backpressured_ms": 0,
                    "subtasks": 0})
                v["records_in"] += t.chain.metrics[0].records_in
                v["records_out"] += t.chain.metrics[-1].records_out
                wm = t.chain.watermark
                v["watermark"] = wm if v["watermark"] is None else min(v["watermark"], wm)
                v["idle"] = v["idle"] and t.chain.idle
                v["late_records_dropped"] += late_dropped(t.chain)
                v["udf_rows_skipped"] += udf_skipped(t.chain)
                v["backpressured_ms"] = max(v["backpressured_ms"],
                                            int(t.output_metrics.blocked_s * 1000))
                v["subtasks"] += 1
        else:
            for i, sub in enumerate(self.subtasks):
                v = vertices.setdefault(sub.vertex_id, {"head_records_out": 0,
                                                        "watermark": None, "subtasks": 0,
                                                        "partial": True})
                v["head_records_out"] += self.progress_board[2 * i]
                wm = self.progress_board[2 * i + 1]
                v["watermark"] = wm if v["watermark"] is None else min(v["watermark"], wm)
                v["subtasks"] += 1
        return {"vertices": vertices, "checkpoints": checkpoint_stats(self.coordinator)}

    def task_states(self) -> dict[str, str]:
        return {t.vertex.name: t.state.value for t in self._local_tasks}

    def _merge_metrics(self, slot: dict[str, Any]) -> None:
        r = self.result
        for key, entry in slot["operators"].items():
            mine = r.metrics.setdefault(key, {})
            for k, v in entry.items():
                mine[k] = _merged(k, mine.get(k, 0), v)
        r.metrics.update(slot["tasks"])
        r.late_records_dropped += slot["late"]
        r.udf_rows_skipped += slot["udf_skipped"]
        r.skipped_rows += slot["skipped"]
        r.skipped_at = (r.skipped_at + slot["skipped_at"])[:10]
        for table, rows in slot["sink_rows"].items():
            r.sink_rows[table] = r.sink_rows.get(table, 0) + rows


# Counters of a vertex that are the most any of its subtasks reached, not a sum: an
# iteration's rounds (each subtask runs its own rounds, aligned supersteps in batch mode).
_MAX_COUNTERS = frozenset({"rounds"})


def _merged(name: str, a: int, b: int) -> int:
    return max(a, b) if name in _MAX_COUNTERS else a + b


def _task_metrics(tasks: list[Task]) -> dict[str, Any]:
    """The counters of some tasks, as plain data (it may cross a process boundary)."""
    out: dict[str, Any] = {"operators": {}, "tasks": {}, "late": 0, "udf_skipped": 0,
                           "skipped": 0,
                           "skipped_at": [], "sink_rows": {}}
    for task in tasks:
        vid = task.vertex.vertex_id
        head = task.chain.operators[0]
        if isinstance(head, SourceOperator):
            out["skipped"] += head.stats.skipped
            out["skipped_at"].extend(head.stats.skipped_at)
        for key, counters, sink in task.chain.operator_counters(vid):
            entry = out["operators"].setdefault(key, {})
            for name, value in counters.items():  # (summed over the vertex's subtasks)
                entry[name] = _merged(name, entry.get(name, 0), value)
            out["late"] += counters.get("late_records_dropped", 0)
            out["udf_skipped"] += counters.get("udf_rows_skipped", 0)
            if sink is not None:
                out["sink_rows"][sink[0]] = out["sink_rows"].get(sink[0], 0) + sink[1]
        m = task.output_metrics
        entry = {"records_in": task.chain.metrics[0].records_in,
                 "records_out": m.records_out, "bytes_out": m.bytes_out,
                 "backpressured_ms": int(m.blocked_s * 1000),
                 "cpu_ms": int(task.cpu_s * 1000), "watermark": task.chain.watermark}
        entry.update({f"latency_ms.{src}": int(ms) for src, ms in task.latency.items()})
        out["tasks"][f"{vid}[{task.vertex.subtask + 1}/{task.vertex.parallelism}]"] = entry
    return out


def _portable(error: BaseException) -> tuple[str, str]:
    """An error as (class name, message): it crosses the process boundary as text."""
    if isinstance(error, SqlEngineError):
        return type(error).__name__, error.message
    return "", f"{type(error).__name__}: {error}"


def _root_cause(where: str, error: BaseException | tuple[str, str]) -> SqlEngineError:
    if isinstance(error, tuple):
        cls_name, message = error
        cls = getattr(errors, cls_name, None) if cls_name else None
        if isinstance(cls, type) and issubclass(cls, SqlEngineError):
            err = cls.__new__(cls)
            SqlEngineError.__init__(err, message)
            return err
        return ExecutionError(f"task {where} failed: {message}")
    if isinstance(error, SqlEngineError):
        return error
    if isinstance(error, Cancelled):
        return ExecutionError(f"task {where} was cancelled")
    return ExecutionError(f"task {where} failed: {type(error).__name__}: {error}")
