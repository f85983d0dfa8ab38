"""The broker of a partitioned iteration: how the subtasks of an Iterate vertex hand each
other the rows a round derived (Flink's iteration head and tail meet through a broker in one
slot; here the feedback edge also crosses subtasks, as the step's output is routed by key).

The parallel runtime (runtime/native/parallel.py) makes one inbox per subtask of each
partitioned Iterate vertex before it starts the tasks (a multiprocessing queue in 'process'
task mode: the subtasks are in different worker processes; an in-process queue in 'thread'
mode), and gives each subtask's IterateOperator a broker over them.

Batch mode runs aligned supersteps (bulk-synchronous, as Flink's bulk iterations): in round
r every subtask runs the step on its working rows, sends every other subtask the rows routed
to it (with how many working rows it had), and waits for the round-r message of every other
subtask; a round whose working rows were none on every subtask is the fixpoint, which every
subtask sees at the same round. Streaming mode is not aligned: rows go to their subtask as
they are derived and are taken when it next polls (a processing-time tick, or while its
inputs have ended); the loop is quiescent when every subtask's inputs have ended and every
message sent has been processed (counters under a lock: a message is counted sent before it
goes, processed only after what it derived was sent).

Every wait polls the job's cancellation: a subtask that failed (the round limit, an error in
its step) fails the job, and the others stop within a poll interval rather than hang.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any

import pyarrow as pa

from sqlengine.runtime.native.network import Cancelled

_POLL = 0.02


class IterationBroker:
    """One subtask's side of the broker of a partitioned iteration."""

    def __init__(self, inboxes: list[Any], counters: Any, lock: Any, cancelled: Any,
                 subtask: int) -> None:
        self.inboxes = inboxes  # one per subtask
        self.parallelism = len(inboxes)
        self.counters = counters  # per subtask: inputs ended, messages sent, processed
        self.lock = lock
        self.cancelled = cancelled
        self.subtask = subtask
        self._early: list[tuple[int, int, Any, int]] = []  # messages of a later round

    # -- batch: aligned supersteps ----------------------------------------------------------
    def exchange(self, round_no: int, parts: list[pa.Table | None], count: int
                 ) -> tuple[list[pa.Table], int]:
        """Send ``parts[j]`` to subtask j (this round's rows routed to it) with ``count``
        (this subtask's working rows this round); wait for every subtask's message of this
        round. Returns the rows routed here and the working rows of every subtask summed."""
        me = self.subtask
        for j, part in enumerate(parts):
            if j != me:
                self.inboxes[j].put((round_no, me, part, count))
        got: dict[int, tuple[Any, int]] = {me: (parts[me], count)}
        while len(got) < self.parallelism:
            _, sender, part, n = self._take(round_no)
            got[sender] = (part, n)
        rows = [p for p, _ in got.values() if p is not None and p.num_rows]
        return rows, sum(n for _, n in got.values())

    def _take(self, round_no: int) -> tuple[int, int, Any, int]:
        for i, msg in enumerate(self._early):
            if msg[0] == round_no:
                return self._early.pop(i)
        while True:
            msg = self._get()
            if msg is None:
                continue
            if msg[0] == round_no:
                return msg
            self._early.append(msg)  # (a subtask already in the next round)

    def _get(self) -> tuple[int, int, Any, int] | None:
        if self.cancelled.is_set():
            raise Cancelled
        try:
            return self.inboxes[self.subtask].get(timeout=_POLL)
        except queue.Empty:
            return None

    # -- streaming: unaligned, with a quiescence check --------------------------------------
    def send(self, depth: int, parts: list[pa.Table | None]) -> None:
        """Rows derived here (at round ``depth``) to the other subtasks they are routed to."""
        me = self.subtask
        for j, part in enumerate(parts):
            if j != me and part is not None and part.num_rows:
                with self.lock:
                    self.counters[3 * me + 1] += 1
                self.inboxes[j].put((depth, me, part, 0))

    def poll(self) -> list[tuple[int, pa.Table]]:
        """The messages waiting here now (depth, rows); each must be ``processed()``."""
        out = []
        while True:
            try:
                depth, _, part, _ = self.inboxes[self.subtask].get_nowait()
            except queue.Empty:
                return out
            out.append((depth, part))

    def processed(self, n: int = 1) -> None:
        with self.lock:
            self.counters[3 * self.subtask + 2] += n

    def end(self) -> None:
        with self.lock:
            self.counters[3 * self.subtask] = 1

    def quiescent(self) -> bool:
        """Every subtask's inputs ended and every message sent was processed."""
        with self.lock:
            c = list(self.counters[:3 * self.parallelism])
        ended = all(c[3 * i] for i in range(self.parallelism))
        sent = sum(c[3 * i + 1] for i in range(self.parallelism))
        done = sum(c[3 * i + 2] for i in range(self.parallelism))
        return ended and sent == done

    def wait(self) -> None:
        """A short wait for messages (polling the job's cancellation)."""
        if self.cancelled.is_set():
            raise Cancelled
        time.sleep(_POLL / 4)


def make_inboxes(parallelism: int, ctx: Any) -> tuple[list[Any], Any, Any]:
    """The inboxes, counters and lock of one partitioned iteration (``ctx``: a
    multiprocessing context, made before the worker processes fork; None: threads)."""
    if ctx is None:
        return ([queue.Queue() for _ in range(parallelism)], [0] * (3 * parallelism),
                threading.Lock())
    return ([ctx.Queue() for _ in range(parallelism)],
            ctx.Array("q", 3 * parallelism, lock=False), ctx.Lock())
