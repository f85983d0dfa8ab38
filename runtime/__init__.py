"""The runtimes: a JobGraph in, record batches out.

``execute(job_graph, options, tables)`` owns the choice of where a job runs: on Spark when
``'execution.target' = 'spark'`` (batch or Structured Streaming by the runtime mode), else on the
native runtime — the single-threaded push executor when every vertex has one subtask, the
parallel executor (tasks in slots) otherwise. PySpark is imported only for a Spark job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

    from sqlengine.optimizer.jobgraph import JobGraph
    from sqlengine.runtime.native.executor import JobResult


class JobExecution:
    """A submitted job: ``run()`` yields what its collect sink receives; ``result`` has the
    metrics and counts once it ran; ``cancel()`` stops it from another thread.

    Under 'restart-strategy.type' = 'fixed-delay' a failed job is restarted (a new executor,
    restored from the job's last completed checkpoint) up to the configured attempts, after
    the configured delay; ``restarts`` lists the failures it got over."""

    def __init__(self, graph: JobGraph, executor: Any,
                 restart: Callable[[str | None], Any] | None = None) -> None:
        self.graph = graph
        self.executor = executor
        self.result: JobResult | None = None
        self.cancelled = False
        self.restart = restart  # (a new executor restored from the given checkpoint)
        self.restarts: list[str] = []

    def run(self) -> Iterator[pa.RecordBatch]:
        import time

        from sqlengine.errors import SqlEngineError
        from sqlengine.runtime.checkpoint.config import checkpoint_config

        config = checkpoint_config(self.executor.options)
        while True:
            try:
                yield from self.executor.run()
                return
            except SqlEngineError as e:
                if self.cancelled or self.restart is None or \
                        len(self.restarts) >= config.restart_attempts:
                    if self.restarts and not self.cancelled:  # (as Flink: "Recovery is
                        # suppressed by FixedDelayRestartBackoffTimeStrategy(...)")
                        e.message += (f" (the job failed {len(self.restarts) + 1} times: "
                                      f"restarted {len(self.restarts)} times, as "
                                      "'restart-strategy.fixed-delay.attempts' allows, "
                                      "then given up)")
                        e.args = (e.message,)
                    raise
                coordinator = getattr(self.executor, "coordinator", None)
                latest = coordinator.latest if coordinator is not None else None
                self.restarts.append(e.message)
                time.sleep(config.restart_delay_ms / 1000)
                self.executor = self.restart(str(latest) if latest is not None else None)
            finally:
                self.result = self.executor.result

    def stop_with_savepoint(self, directory: str) -> str:
        """Stop after a savepoint under ``directory``; returns its path."""
        stop = getattr(self.executor, "stop_with_savepoint", None)
        if stop is None:
            from sqlengine.errors import NotSupportedError

            raise NotSupportedError("savepoints are taken by the native runtime (on Spark "
                                    "the query's checkpoint location holds its state)")
        path = stop(directory)
        self.cancelled = True
        return str(path)

    def cancel(self) -> None:
        self.cancelled = True
        cancel = getattr(self.executor, "cancel", None)
        if cancel is not None:
            cancel()


# Options only the native runtime reads, and what Spark has instead: on Spark they are refused
# rather than ignored.
_NATIVE_ONLY = {
    "taskmanager.memory.managed.size": "Spark's own ('spark.executor.memory', "
                                       "'spark.memory.fraction')",
    "taskmanager.memory.managed.fraction": "Spark's own ('spark.executor.memory', "
                                           "'spark.memory.fraction')",
    "execution.native.task-mode": "Spark's executors ('spark.master', "
                                  "'spark.executor.cores')",
    "taskmanager.network.memory.buffers-per-channel": "Spark's shuffle settings "
                                                      "('spark.reducer.maxSizeInFlight')",
    "taskmanager.network.memory.floating-buffers-per-gate": "Spark's shuffle settings "
                                                            "('spark.reducer.maxSizeInFlight')",
    "execution.buffer-timeout": "Spark's shuffle settings",
    "execution.exchange.batch-rows": "Spark's shuffle settings",
    "io.tmp.dirs": "Spark's own ('spark.local.dir')",
    "execution.checkpointing.interval": "'execution.checkpoint-location' (Structured "
                                        "Streaming's checkpointLocation; Spark checkpoints "
                                        "every micro-batch)",
    "execution.checkpointing.dir": "'execution.checkpoint-location'",
    "execution.checkpointing.mode": "'execution.checkpoint-location' (Spark's sinks decide "
                                    "their guarantee)",
    "execution.checkpointing.timeout": "'execution.checkpoint-location'",
    "execution.checkpointing.num-retained": "'execution.checkpoint-location'",
    "execution.state-recovery.path": "'execution.checkpoint-location' (a query restarted "
                                     "with it resumes from it)",
    "$restore-latest": "'execution.checkpoint-location' (a query restarted with it resumes "
                       "from it)",
    "restart-strategy.type": "Spark's task retries ('spark.task.maxFailures')",
}


def _refuse_native_options(options: dict[str, str]) -> None:
    """Options of the native runtime (memory budget, task mode, network buffers, spill
    directories) do not reach Spark: refuse them rather than ignore them."""
    from sqlengine.errors import PlanError

    for key, instead in _NATIVE_ONLY.items():
        if options.get(key):
            what = "sets the native runtime's memory budget" if "managed" in key else \
                "is the native runtime's"
            name = "--restore" if key.startswith("$") else repr(key)
            raise PlanError(f"option {name} {what}; on Spark it would be ignored: use "
                            f"{instead}")


def _on_spark(options: dict[str, str]) -> bool:
    return options.get("execution.target", "native") == "spark"


def _refuse_bitmaps(graph: JobGraph) -> None:
    """The BITMAP and VARIANT types run on the native runtime only (Spark has no such type, and its
    Arrow conversion takes no extension type): refused, not sent."""
    import dataclasses

    from sqlengine.errors import NotSupportedError
    from sqlengine.plan.expressions import AggCall, Expr
    from sqlengine.types import contains_opaque

    def holds(value: object, depth: int = 0) -> bool:
        if isinstance(value, Expr):
            return any(contains_opaque(e.dtype) for e in value.walk())
        if isinstance(value, AggCall):  # (the bitmap aggregates are ``py:...:builtin``)
            return contains_opaque(value.type) or value.func.endswith(":builtin") or \
                any(holds(a) for a in value.args)
        if isinstance(value, tuple | list) and depth < 4:
            return any(holds(v, depth + 1) for v in value)
        return False

    def ordered(value: object, depth: int = 0) -> bool:
        if isinstance(value, Expr):
            return any(getattr(e, "name", "") in ("ordered_values", "percentile_disc")
                       for e in value.walk())
        if isinstance(value, tuple | list) and depth < 4:
            return any(ordered(v, depth + 1) for v in value)
        return False

    for v in graph.vertices:
        for spec in v.chain:
            if any(ordered(getattr(spec, f.name)) for f in dataclasses.fields(spec)):
                raise NotSupportedError(f"{spec.label()}: ordered aggregates (ARRAY_AGG / "
                                        "STRING_AGG ... ORDER BY, LISTAGG / PERCENTILE_DISC "
                                        "... WITHIN GROUP) are not supported on the Spark "
                                        "runtime yet; run the query on the native runtime")
            types = [f.type for f in spec.schema.fields]
            if any(contains_opaque(t) for t in types) or any(
                    holds(getattr(spec, f.name)) for f in dataclasses.fields(spec)):
                raise NotSupportedError(f"{spec.label()}: the BITMAP and VARIANT types, "
                                        "their functions and COLLECT are not supported on "
                                        "the Spark runtime; run the query on the native "
                                        "runtime")


def _spark_job(graph: JobGraph, options: dict[str, str], tables: dict[str, object]) -> Any:
    _refuse_bitmaps(graph)  # (before PySpark is imported)
    from sqlengine.runtime.spark.streaming import SparkStreamingJob
    from sqlengine.runtime.spark.translate import SparkJob

    job = SparkJob if options.get("execution.runtime-mode") == "batch" else SparkStreamingJob
    return job(graph, options, tables)


def execute(graph: JobGraph, options: dict[str, str], tables: dict[str, object],
            on_progress: Callable[[int, int], None] | None = None) -> JobExecution:
    """The job's execution on the runtime ``options`` choose (nothing runs before ``run()``).

    ``tables`` holds registered in-memory data by table name; ``on_progress`` is called about
    twice a second on the native runtime with (rows read so far, watermark ms)."""
    options = dict(options)
    if _on_spark(options):
        _refuse_native_options(options)
        return JobExecution(graph, _spark_job(graph, options, tables))

    def native(options: dict[str, str]) -> Any:
        executor: Any
        if any(v.parallelism > 1 for v in graph.vertices):
            from sqlengine.runtime.native.parallel import ParallelExecutor

            executor = ParallelExecutor(graph, options, tables)
        else:  # one subtask per vertex: the single-threaded push executor
            from sqlengine.runtime.native.executor import Executor

            executor = Executor(graph, options, tables)
        executor.on_progress = on_progress
        return executor

    def restart(checkpoint: str | None) -> Any:
        """The job again, from ``checkpoint`` (None: none completed yet, from the start)."""
        again = {k: v for k, v in options.items()
                 if k not in ("$restore-latest", "execution.state-recovery.path")}
        if checkpoint is not None:
            again["execution.state-recovery.path"] = checkpoint
        return native(again)

    from sqlengine.errors import PlanError
    from sqlengine.runtime.checkpoint.config import checkpoint_config

    config = checkpoint_config(options)  # (bad checkpoint options fail before the job runs)
    if config.enabled and options.get("execution.runtime-mode") == "batch":
        raise PlanError("checkpoints are taken in streaming mode ('execution.checkpointing."
                        "interval'): a batch job that fails is run again from the start")
    return JobExecution(graph, native(options), restart if config.restart_attempts else None)


def explain(graph: JobGraph, options: dict[str, str], tables: dict[str, object]
            ) -> str | None:
    """The runtime's own plan of a job, where it has one (Spark's), for EXPLAIN."""
    if not _on_spark(options):
        return None
    return str(_spark_job(graph, dict(options), tables).explain())
