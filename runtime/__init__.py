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
    metrics and counts once it ran; ``cancel()`` stops it from another thread."""

    def __init__(self, graph: JobGraph, executor: Any) -> None:
        self.graph = graph
        self.executor = executor
        self.result: JobResult | None = None
        self.cancelled = False

    def run(self) -> Iterator[pa.RecordBatch]:
        try:
            yield from self.executor.run()
        finally:
            self.result = self.executor.result

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
}


def _refuse_native_options(options: dict[str, str]) -> None:
    """Options of the native runtime (memory budget, task mode, network buffers, spill
    directories) do not reach Spark: refuse them rather than ignore them."""
    from sqlengine.errors import PlanError

    for key, instead in _NATIVE_ONLY.items():
        if options.get(key):
            what = "sets the native runtime's memory budget" if "managed" in key else \
                "is the native runtime's"
            raise PlanError(f"option {key!r} {what}; on Spark it would be ignored: use "
                            f"{instead}")


def _on_spark(options: dict[str, str]) -> bool:
    return options.get("execution.target", "native") == "spark"


def _spark_job(graph: JobGraph, options: dict[str, str], tables: dict[str, object]) -> Any:
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
    executor: Any
    if any(v.parallelism > 1 for v in graph.vertices):
        from sqlengine.runtime.native.parallel import ParallelExecutor

        executor = ParallelExecutor(graph, options, tables)
    else:  # one subtask per vertex: the single-threaded push executor
        from sqlengine.runtime.native.executor import Executor

        executor = Executor(graph, options, tables)
    executor.on_progress = on_progress
    return JobExecution(graph, executor)


def explain(graph: JobGraph, options: dict[str, str], tables: dict[str, object]
            ) -> str | None:
    """The runtime's own plan of a job, where it has one (Spark's), for EXPLAIN."""
    if not _on_spark(options):
        return None
    return str(_spark_job(graph, dict(options), tables).explain())
