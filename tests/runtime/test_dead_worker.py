"""A worker process killed by a signal fails the job with its slot, its subtasks and the signal
named, and every other process ends; on main the job hung forever at 0 % CPU."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

import sqlengine
from sqlengine.errors import ExecutionError


@pytest.mark.slow
def test_a_killed_worker_fails_the_job() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming", "parallelism.default": "2",
                           "execution.native.task-mode": "process"})
    s.execute("CREATE TABLE g (k INT, v STRING) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '2000')")
    rows = s.sql("SELECT k, COUNT(*) AS c FROM g GROUP BY k").stream()
    next(rows)  # the job runs
    workers = [p for p in multiprocessing.active_children() if p.name.startswith("sqlengine")]
    assert workers
    outcome: dict[str, object] = {}

    def drain() -> None:
        try:
            for _ in rows:
                pass
            outcome["ended"] = "without an error"
        except ExecutionError as e:
            outcome["error"] = e

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    started = time.monotonic()
    os.kill(workers[0].pid, signal.SIGKILL)
    reader.join(60)  # noticed within a poll interval; 60 s is headroom for a busy machine
    assert not reader.is_alive(), "the job hung after its worker was killed"
    error = outcome.get("error")
    assert isinstance(error, ExecutionError), outcome
    assert "killed by signal SIGKILL" in error.message and "slot" in error.message
    assert time.monotonic() - started < 60
    time.sleep(0.5)
    assert not [p for p in multiprocessing.active_children()
                if p.name.startswith("sqlengine") and p.is_alive()]
