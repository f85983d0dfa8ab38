"""The door's results: Query (collect, stream, explain, cancel, metrics) and Result (the
outcome of one statement)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from sqlengine import runtime
from sqlengine.bind_common import unique_names
from sqlengine.binder import bind_query
from sqlengine.errors import (
    ExecutionError,
    PlanError,
    SqlEngineError,
    statement_place,
    unexpected,
)
from sqlengine.optimizer.analysis import bounded_result, is_bounded, unbounded_sources
from sqlengine.parser import parse_query
from sqlengine.plan.nodes import LogicalPlan, Scan, Sink, SinkSpec
from sqlengine.plan.tree import walk
from sqlengine.recursion import deep
from sqlengine.runtime.changelog import apply_changelog
from sqlengine.runtime.elements import ROWKIND, ROWKIND_NAMES, data_part, has_rowkind
from sqlengine.statements import QueryText

if TYPE_CHECKING:
    from sqlengine.api import Session

_T = TypeVar("_T")


@dataclass
class Result:
    """The outcome of one statement: a message, and rows for queries and SHOW/DESCRIBE."""

    kind: str  # "ok" | "rows" | "explain" | "insert"
    message: str = ""
    table: pa.Table | None = None
    query: Query | None = None
    statement_offset: int = 0
    skipped_rows: int = 0
    sink_rows: dict[str, int] = field(default_factory=dict)
    late_records_dropped: int = 0  # (an INSERT's job: late rows its windows dropped)
    udf_rows_skipped: int = 0  # (an INSERT's job: rows a Python function failed on, 'skip')


def collect_sink(plan: LogicalPlan) -> Sink:
    """The plan with the sink that hands its rows to the caller."""
    if isinstance(plan, Sink):
        return plan
    return Sink(plan, SinkSpec("collect", "collect", (), plan.schema))


class Query:
    """A bound query. ``collect()`` runs it to the end; ``stream()`` yields changelog batches
    as they are produced."""

    def __init__(self, session: Session, text: QueryText, script: str,
                 params: dict[str, object] | None = None,
                 positional: list[object] | None = None) -> None:
        self.session = session
        self.text = text
        self.script = script
        tree = parse_query(text, script)
        self.logical_plan = bind_query(tree, session.catalog, text, script, params, positional)
        # The tables the query was planned on: one dropped, created or registered again since
        # is refused at run time (the plan read the new data as the old columns: an internal
        # IndexError, or Arrow's errors)
        self._tables = {n.source.table: session.catalog.table(n.source.table)
                        for n in walk(self.logical_plan) if isinstance(n, Scan)}
        self.skipped_rows = 0
        self.late_records_dropped = 0
        self.udf_rows_skipped = 0  # (rows a Python function failed on: 'skip' mode)
        self._metrics: dict[str, dict[str, int]] = {}
        self._run: runtime.JobExecution | None = None

    @property
    def schema(self) -> pa.Schema:
        return self.logical_plan.schema.to_arrow()

    @property
    def is_bounded(self) -> bool:
        """Whether the query ends by itself (every source it reads is bounded)."""
        return self._guarded(lambda: is_bounded(self.logical_plan))

    @property
    def has_bounded_result(self) -> bool:
        """Whether collect() can return the result: every source is bounded, or a LIMIT
        ends the query."""
        return self._guarded(lambda: bounded_result(self.logical_plan))

    def explain(self) -> str:
        """The plans, as EXPLAIN prints them."""
        return self._guarded(lambda: self.session.explain_plan(self.logical_plan))

    def _job(self) -> runtime.JobExecution:
        for name, table in self._tables.items():
            if self.session.catalog.table(name) is not table:
                raise PlanError(f"table {name!r} was dropped, created or registered again "
                                "after this query was planned: plan the query again "
                                "(Session.sql)")
        try:
            return self.session.submit(collect_sink(self.logical_plan))
        except SqlEngineError as e:  # (a plan-time refusal: at the name it quotes, if any)
            if e.span is None and e.sql is None:
                e.sql = self.script
                e.span = statement_place(e.message, self.text.sql, self.text.offset,
                                         self.script)
            raise

    def _finish(self, job: runtime.JobExecution) -> None:
        if job.result is not None:
            self.skipped_rows = job.result.skipped_rows
            self.late_records_dropped = job.result.late_records_dropped
            self.udf_rows_skipped = job.result.udf_rows_skipped
            self._metrics = job.result.metrics

    def collect(self) -> pa.Table:
        """Run to the end; an updating result is returned with its changelog applied.

        Raises:
            PlanError: the query reads an unbounded source (use ``stream()``).
            ExecutionError: a runtime failure, naming the operator.
        """
        job = self._guarded(self._job)  # plan first: plan-time errors are more precise
        unbounded = self._guarded(lambda: [] if bounded_result(self.logical_plan) else
                                  unbounded_sources(self.logical_plan))
        if unbounded:
            raise PlanError(f"collect() needs a bounded result, but table {unbounded[0]!r} is "
                            "unbounded; use stream() (or give the source 'number-of-rows')")
        batches = []
        self._run = job
        try:
            batches = self._guarded(lambda: list(job.run()))
        finally:
            self._finish(job)
        if job.cancelled:
            raise ExecutionError("the query was cancelled")
        return apply_changelog(batches, self.schema)

    @staticmethod
    def _guarded(fn: Callable[[], _T]) -> _T:
        """``fn()``, any non-sqlengine exception raised as a sqlengine error."""
        try:
            with deep():
                return fn()
        except SqlEngineError:
            raise
        except Exception as e:  # no raw exception reaches a user
            raise unexpected(e) from e

    @staticmethod
    def _guarded_iter(it: Generator[pa.RecordBatch, None, None]
                      ) -> Generator[pa.RecordBatch, None, None]:
        try:
            while True:
                try:
                    with deep():
                        batch = next(it)
                except StopIteration:
                    return
                except SqlEngineError:
                    raise
                except Exception as e:  # no raw exception reaches a user
                    raise unexpected(e) from e
                yield batch
        finally:
            it.close()

    def cancel(self) -> None:
        """Cancel the running query (from another thread): ``stream()`` ends, ``collect()``
        raises ExecutionError. Every task of a parallel job stops within a poll interval."""
        if self._run is not None:
            self._run.cancel()

    def stop(self, savepoint: str | None = None) -> str | None:
        """Stop the running query (from another thread, or between the batches ``stream()``
        yields); with ``savepoint`` (a directory), after a savepoint there that a later run
        restores from ('execution.state-recovery.path'). Returns the savepoint's path."""
        if self._run is None:
            raise ExecutionError("the query is not running")
        if savepoint is None:
            self._run.cancel()
            return None
        return self._guarded(lambda: self._run.stop_with_savepoint(savepoint))  # type: ignore[union-attr]

    def to_pandas(self) -> Any:
        """``collect()`` as a pandas DataFrame; an integer column holding a NULL is of pandas'
        nullable integer type (Int64 ...), as DuckDB gives one (it was float64, which rounds a
        BIGINT past 2**53)."""
        import pandas as pd

        table = self.collect()
        frame = table.to_pandas()
        nullable = {pa.int8(): pd.Int8Dtype(), pa.int16(): pd.Int16Dtype(),
                    pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype()}
        for i, f in enumerate(table.schema):
            if f.type in nullable and table.column(i).null_count:
                frame.isetitem(i, table.column(i).to_pandas(types_mapper=nullable.get))
        return frame

    def stream(self) -> Iterator[pa.RecordBatch]:
        """Yield batches as they are produced, each with a leading ``op`` column holding the
        row kind (+I, -U, +U, -D); where the result has a column named op, the kinds' column
        is the first of op0, op1, ... it has not (two columns named op lost one of them in
        ``to_pydict()``). Closing the iterator, or the session, cancels the query."""
        stream = self._stream()
        self.session._streams.add(stream)  # (closing the session closes it)
        return stream

    def _stream(self) -> Generator[pa.RecordBatch, None, None]:
        job = self._guarded(self._job)
        self._run = job
        kinds = pa.array(ROWKIND_NAMES)
        runner = self._guarded_iter(job.run())
        try:
            for batch in runner:
                if has_rowkind(batch):
                    op = kinds.take(batch.column(ROWKIND).cast(pa.int32()))
                else:
                    op = pa.array(["+I"] * batch.num_rows)
                data = data_part(batch)
                names = data.schema.names  # (the kinds' name made unique after them)
                yield pa.RecordBatch.from_arrays([op, *data.columns],
                                                 names=[unique_names([*names, "op"])[-1],
                                                        *names])
        finally:
            runner.close()  # (closing cancels the job)
            self._finish(job)

    def metrics(self) -> dict[str, dict[str, int]]:
        """Records in/out per operator of the last run (``vertex.operator`` keys)."""
        return dict(self._metrics)

