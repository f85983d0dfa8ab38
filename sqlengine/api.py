"""The one door: Session (connect, execute, sql, register) and Query (collect, stream, explain).

Example:
    >>> import sqlengine
    >>> s = sqlengine.connect()
    >>> s.sql("SELECT 1 + 1 AS two").collect().to_pydict()
    {'two': [2]}
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine import statements as S
from sqlengine.catalog import Catalog, TableDef
from sqlengine.errors import (
    BindError,
    ExecutionError,
    NotSupportedError,
    ParseError,
    PlanError,
    Span,
    SqlEngineError,
)
from sqlengine.parser import parse_query, parse_statement, split_script

if TYPE_CHECKING:
    from sqlengine.optimizer.jobgraph import JobGraph
    from sqlengine.plan.nodes import LogicalPlan

_BOOL_OPTIONS = ("pipeline.operator-chaining", "table.optimizer.enabled")
_ENUM_OPTIONS = {
    "execution.runtime-mode": ("streaming", "batch"),
    "execution.target": ("native", "spark"),
    "sql-client.execution.result-mode": ("table", "changelog", "tableau"),
}
_INT_OPTIONS = ("parallelism.default",)


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


class Session:
    """A catalog, options, and the statements that change them. ``connect()`` makes one."""

    def __init__(self, options: dict[str, str] | None = None) -> None:
        self.catalog = Catalog()
        self.options: dict[str, str] = {"execution.runtime-mode": "streaming"}
        # Called about twice a second while a job runs: (rows read so far, watermark ms).
        self.on_progress: Any = None
        for k, v in (options or {}).items():
            self.set(k, v)

    # -- options ---------------------------------------------------------------------------
    def set(self, key: str, value: str) -> None:
        """``SET 'key' = 'value'``; known keys are checked."""
        value = str(value)
        if key in _ENUM_OPTIONS and value.lower() not in _ENUM_OPTIONS[key]:
            allowed = ", ".join(repr(v) for v in _ENUM_OPTIONS[key])
            raise PlanError(f"option {key!r} must be one of {allowed}, got {value!r}")
        if key in _BOOL_OPTIONS and value.lower() not in ("true", "false"):
            raise PlanError(f"option {key!r} must be 'true' or 'false', got {value!r}")
        if key in _INT_OPTIONS:
            try:
                if int(value) < 1:
                    raise ValueError
            except ValueError:
                raise PlanError(f"option {key!r} must be a positive integer, got "
                                f"{value!r}") from None
        self.options[key] = value.lower() if key in _ENUM_OPTIONS else value

    # -- data ------------------------------------------------------------------------------
    def register(self, name: str, data: Any, *, bounded: bool = True,
                 rowtime: str | None = None, watermark: str | None = None,
                 idle_timeout: str | None = None) -> None:
        """Register in-memory data as a table: a pyarrow Table or RecordBatch, a pandas
        DataFrame, or an iterator of record batches (read once). Pass ``bounded=False`` for an
        iterator that may never end: queries over it then run as unbounded streams.

        ``rowtime`` makes a TIMESTAMP column an event-time attribute, with watermarks from
        ``watermark`` (a SQL expression such as ``"ts - INTERVAL '5' SECOND"``; by default the
        column itself), or from the Watermark elements an iterator yields between its batches
        (as the tests' TestStream does). An iterator may yield None for "no data yet"; with
        ``idle_timeout`` (a duration such as ``'100 ms'``) it is marked idle after that long
        without data, so it stops holding back the watermark of what it feeds."""
        from sqlengine.plan.nodes import Field, Schema
        from sqlengine.runtime.connectors.memory import MemoryData

        if isinstance(data, pa.RecordBatch):
            data = pa.Table.from_batches([data])
        if not isinstance(data, pa.Table) and hasattr(data, "to_records") and \
                hasattr(data, "columns"):
            data = pa.Table.from_pandas(data, preserve_index=False)
        if isinstance(data, pa.Table):
            mem = MemoryData(table=_normalize_table(data))
        elif isinstance(data, pa.RecordBatchReader):
            mem = MemoryData(iterator=iter(data), schema=_normalize_schema(data.schema))
        elif isinstance(data, Iterable) and isinstance(getattr(data, "schema", None),
                                                       pa.Schema):
            mem = MemoryData(iterator=iter(data), schema=_normalize_schema(data.schema))
            mem.explicit_watermarks = True
        elif isinstance(data, Iterable):
            it = iter(data)
            try:
                first = next(it)
            except StopIteration:
                raise PlanError(f"cannot register {name!r}: the iterator is empty, so its "
                                "schema is unknown") from None
            import itertools

            mem = MemoryData(iterator=itertools.chain([first], it),
                             schema=_normalize_schema(first.schema))
        else:
            raise PlanError(f"cannot register {name!r}: expected a pyarrow Table, a pandas "
                            f"DataFrame or an iterator of RecordBatches, got "
                            f"{type(data).__name__}")
        mem.bounded = mem.table is not None or bounded
        fields = [Field(f.name, f.type) for f in mem.schema]
        wm_def = None
        if rowtime is not None:
            from sqlengine.parser import parse_expression
            from sqlengine.statements import QueryText

            names = [f.name for f in fields]
            if rowtime not in names or not pa.types.is_timestamp(fields[names.index(rowtime)]
                                                                 .type):
                raise PlanError(f"cannot register {name!r}: rowtime {rowtime!r} is not a "
                                "TIMESTAMP column")
            i = names.index(rowtime)
            fields[i] = Field(rowtime, pa.timestamp("ms"), True, True)
            text = watermark or f"`{rowtime}`"
            wm_def = (rowtime, parse_expression(QueryText(text, 0), text))
        schema = Schema(tuple(fields))
        options: tuple[tuple[str, str], ...] = (("connector", "memory"),)
        if idle_timeout is not None:
            from sqlengine.options import parse_duration

            parse_duration(idle_timeout, "idle_timeout")
            options += (("scan.watermark.idle-timeout", idle_timeout),)
        self.catalog.add_table(TableDef(name, schema, options, watermark=wm_def, data=mem),
                               replace=True)

    # -- statements ------------------------------------------------------------------------
    def execute(self, script: str, source: str | None = None) -> list[Result]:
        """Run every statement of a script in order; queries are collected.

        Raises:
            SqlEngineError: the first failing statement's error, located in the script.
        """
        return [r for r in self.iter_execute(script, source)]

    def iter_execute(self, script: str, source: str | None = None,
                     collect_queries: bool = True) -> Iterator[Result]:
        """Run statements one by one, yielding each result as soon as it is known."""
        for offset, text in split_script(script):
            yield self.run_statement(text, offset, script, source, collect_queries)

    def run_statement(self, text: str, offset: int, script: str, source: str | None = None,
                      collect_queries: bool = True) -> Result:
        """Run one statement of ``script`` (starting at ``offset``); errors are located in
        the script (and named by ``source``, a file name)."""
        try:
            stmt = parse_statement(text, offset, script)
            result = self._run(stmt, script, collect_queries)
        except SqlEngineError as e:
            if e.sql is None:
                e.sql = script
                if e.span is None:
                    e.span = Span.from_offset(script, offset, offset + len(text.split()[0]))
            if source is not None:
                e.source = source
            raise
        result.statement_offset = offset
        return result

    def sql(self, query: str, params: dict[str, object] | list[object] | None = None) -> Query:
        """A query (bound now, run on collect/stream); ``params`` fill ``:name`` or ``?``."""
        stmts = split_script(query)
        if len(stmts) != 1:
            raise ParseError(f"sql() takes exactly one query, got {len(stmts)} statements")
        offset, text = stmts[0]
        stmt = parse_statement(text, offset, query)
        if isinstance(stmt, S.Explain):
            stmt = stmt.statement
        if not isinstance(stmt, S.QueryStmt):
            raise ParseError("sql() takes a query; use execute() for other statements",
                             span=Span.from_offset(query, offset), sql=query)
        named = params if isinstance(params, dict) else None
        positional = list(params) if isinstance(params, list | tuple) else None
        return Query(self, stmt.query, query, named, positional)

    def _run(self, stmt: S.Statement, script: str, collect_queries: bool) -> Result:
        from sqlengine import ddl

        match stmt:
            case S.QueryStmt():
                q = Query(self, stmt.query, script)
                if collect_queries:
                    table = q.collect()
                    return Result("rows", table=table, query=q, skipped_rows=q.skipped_rows)
                return Result("rows", query=q)
            case S.Explain():
                return Result("explain", self.explain_statement(stmt, script))
            case S.Insert():
                return self._insert(stmt, script)
            case S.Set(key=None):
                rows = sorted(self.options.items())
                return Result("rows", table=pa.table({"key": [k for k, _ in rows],
                                                      "value": [v for _, v in rows]}))
            case S.Set():
                self.set(stmt.key, stmt.value)  # type: ignore[arg-type]
                return Result("ok", f"[INFO] Execute statement succeeded: SET {stmt.key}")
            case S.Reset():
                if stmt.key is None:
                    self.options = {"execution.runtime-mode": "streaming"}
                else:
                    self.options.pop(stmt.key, None)
                    if stmt.key == "execution.runtime-mode":
                        self.options[stmt.key] = "streaming"
                return Result("ok", "[INFO] Execute statement succeeded: RESET")
            case S.Show():
                return self._show(stmt)
            case S.Describe():
                return Result("rows", table=ddl.describe(self.catalog, stmt, script))
            case S.CreateTable():
                return Result("ok", ddl.create_table(self.catalog, stmt, script))
            case S.CreateView():
                return Result("ok", ddl.create_view(self.catalog, stmt, script))
            case S.Drop():
                return Result("ok", ddl.drop(self.catalog, stmt, script))
            case _:
                raise NotSupportedError(f"unsupported statement {type(stmt).__name__}")

    def _show(self, stmt: S.Show) -> Result:
        what = stmt.what
        if what == "TABLES":
            names = self.catalog.names()
        elif what == "VIEWS":
            names = self.catalog.view_names()
        elif what == "FUNCTIONS":
            from sqlengine.functions import AGGREGATES, SIGNATURES

            names = sorted({*(n.upper() for n in SIGNATURES if "_" not in n or n in
                                ("char_length",)), *(a.upper() for a in AGGREGATES)})
        elif what in ("CATALOGS", "CURRENT CATALOG"):
            names = ["default_catalog"]
        elif what in ("DATABASES", "CURRENT DATABASE"):
            names = ["default_database"]
        else:
            raise NotSupportedError(f"SHOW {what} is not supported")
        column = {"TABLES": "table name", "VIEWS": "view name", "FUNCTIONS": "function name"}
        return Result("rows", table=pa.table({column.get(what, "name"): names}))

    def _insert(self, stmt: S.Insert, script: str) -> Result:
        from sqlengine import ddl

        plan = ddl.bind_insert(self.catalog, stmt, script)
        job = JobRun(self, plan)
        for _ in job.run():
            pass
        rows = job.result.sink_rows if job.result else {}
        n = sum(rows.values())
        return Result("insert", f"[INFO] Inserted {n} rows into {stmt.table}",
                      skipped_rows=job.result.skipped_rows if job.result else 0,
                      sink_rows=rows)

    def explain_statement(self, stmt: S.Explain, script: str) -> str:
        return explain_plan(self._statement_plan(stmt, script, sink=False), self.options,
                            verbose="VERBOSE" in stmt.details,
                            details=tuple(d.upper() for d in stmt.details),
                            tables=self.memory_tables())

    def _statement_plan(self, stmt: S.Explain, script: str, sink: bool = True) -> LogicalPlan:
        from sqlengine import ddl
        from sqlengine.plan.nodes import Sink, SinkSpec

        inner = stmt.statement
        if isinstance(inner, S.Insert):
            return ddl.bind_insert(self.catalog, inner, script)
        plan = Query(self, inner.query, script).logical_plan
        return Sink(plan, SinkSpec("collect", "collect", (), plan.schema)) if sink else plan

    def statement_job_graph(self, stmt: S.Explain, script: str) -> JobGraph:
        """The JobGraph an EXPLAIN-able statement (query or INSERT) would run."""
        return self.job_graph(self._statement_plan(stmt, script))

    def memory_tables(self) -> dict[str, object]:
        """Registered in-memory data by table name (what the runtimes read)."""
        out = {}
        for name in self.catalog.table_names():
            t = self.catalog.table(name)
            if t is not None and t.data is not None:
                out[name.lower()] = t.data
        return out

    def job_graph(self, plan: LogicalPlan) -> JobGraph:
        from sqlengine.optimizer import optimize, plan_job

        return plan_job(optimize(plan, self.options), self.options, self.memory_tables())


def explain_plan(plan: LogicalPlan, options: dict[str, str], verbose: bool = False,
                 tables: dict[str, object] | None = None,
                 details: tuple[str, ...] = ()) -> str:
    """EXPLAIN text: the bound plan, the optimized plan, the physical plan (with estimates and
    costs for ESTIMATED_COST, changelog modes for CHANGELOG_MODE) and the JobGraph with its
    chains; JSON_EXECUTION_PLAN adds the JobGraph as JSON."""
    from sqlengine.optimizer import optimize, plan_job, plan_physical
    from sqlengine.optimizer.explain import (
        PassesText,
        job_graph_json,
        physical_plan_text,
        plan_advice,
    )
    from sqlengine.plan.display import display_indent

    steps: list[str] = []

    def observe(rule: Any, p: LogicalPlan) -> None:
        steps.append(f"-- after {rule.name}\n{display_indent(p)}")

    optimized = optimize(plan, options, observer=observe if verbose else None)
    passes: list[str] = []
    physical = plan_physical(optimized, options, tables,
                             PassesText(passes, options) if verbose else None)
    job = plan_job(optimized, options, tables, physical)
    parts = ["== Abstract Syntax Tree ==", display_indent(plan), ""]
    if verbose:
        parts += ["== Optimizer Passes ==", *steps, ""]
        parts += ["== Physical Passes ==", *passes, ""]
    parts += ["== Optimized Logical Plan ==", display_indent(optimized), ""]
    if "ESTIMATED_COST" in details or "CHANGELOG_MODE" in details:
        parts += ["== Optimized Physical Plan ==",
                  physical_plan_text(physical, options, costs="ESTIMATED_COST" in details,
                                     changelog="CHANGELOG_MODE" in details,
                                     blocking=any(e.blocking for e in job.edges)), ""]
    if "PLAN_ADVICE" in details:
        advice = plan_advice(physical, options)
        parts += ["== Plan Advice ==",
                  *(f"advice[{i + 1}]: {a}" if a != "No available advice." else a
                    for i, a in enumerate(advice)), ""]
    parts += ["== Job Graph ==", job.explain()]
    if "JSON_EXECUTION_PLAN" in details:
        parts += ["", "== Physical Execution Plan ==", job_graph_json(job)]
    if options.get("execution.target") == "spark" and tables is not None:
        from sqlengine.optimizer import plan_job as _plan
        from sqlengine.plan.nodes import Sink, SinkSpec
        from sqlengine.runtime.spark.translate import SparkJob

        if not isinstance(optimized, Sink):
            optimized = Sink(optimized, SinkSpec("collect", "collect", (), optimized.schema))
        from sqlengine.runtime.spark.streaming import SparkStreamingJob

        job = SparkJob if options.get("execution.runtime-mode") == "batch" \
            else SparkStreamingJob
        spark_job = job(_plan(optimized, options, tables), options, tables)
        parts += ["", "== Spark Plan ==", spark_job.explain()]
    return "\n".join(parts)


class JobRun:
    """Plan a logical plan into a JobGraph and run it on the native runtime."""

    def __init__(self, session: Session, plan: LogicalPlan) -> None:
        from sqlengine.runtime.native.executor import Executor

        self.graph = session.job_graph(plan)
        tables = {}
        for name in session.catalog.table_names():
            t = session.catalog.table(name)
            if t is not None and t.data is not None:
                tables[name.lower()] = t.data
        if session.options.get("execution.target", "native") == "spark":
            from sqlengine.runtime.spark.streaming import SparkStreamingJob
            from sqlengine.runtime.spark.translate import SparkJob

            batch = session.options.get("execution.runtime-mode") == "batch"
            job = SparkJob if batch else SparkStreamingJob
            self.executor: Any = job(self.graph, dict(session.options), tables)
        else:
            if any(v.parallelism > 1 for v in self.graph.vertices):
                from sqlengine.runtime.native.parallel import ParallelExecutor

                self.executor = ParallelExecutor(self.graph, dict(session.options), tables)
            else:  # one subtask per vertex: the single-threaded push executor
                self.executor = Executor(self.graph, dict(session.options), tables)
            self.executor.on_progress = session.on_progress
        self.result = None
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


class Query:
    """A bound query. ``collect()`` runs it to the end; ``stream()`` yields changelog batches
    as they are produced."""

    def __init__(self, session: Session, text: S.QueryText, script: str,
                 params: dict[str, object] | None = None,
                 positional: list[object] | None = None) -> None:
        from sqlengine.binder import bind_query

        self.session = session
        self.text = text
        self.script = script
        tree = parse_query(text, script)
        self.logical_plan = bind_query(tree, session.catalog, text, script, params, positional)
        self.skipped_rows = 0
        self.late_records_dropped = 0
        self._metrics: dict[str, dict[str, int]] = {}
        self._run: JobRun | None = None

    @property
    def schema(self) -> pa.Schema:
        return self.logical_plan.schema.to_arrow()

    def explain(self) -> str:
        """The plans, as EXPLAIN prints them."""
        return explain_plan(self.logical_plan, self.session.options,
                            tables=self.session.memory_tables())

    def _job(self) -> JobRun:
        from sqlengine.plan.nodes import Sink, SinkSpec

        sink = SinkSpec("collect", "collect", (), self.logical_plan.schema)
        return JobRun(self.session, Sink(self.logical_plan, sink))

    def _finish(self, job: JobRun) -> None:
        if job.result is not None:
            self.skipped_rows = job.result.skipped_rows
            self.late_records_dropped = job.result.late_records_dropped
            self._metrics = job.result.metrics

    def collect(self) -> pa.Table:
        """Run to the end; an updating result is returned with its changelog applied.

        Raises:
            PlanError: the query reads an unbounded source (use ``stream()``).
            ExecutionError: a runtime failure, naming the operator.
        """
        from sqlengine.optimizer.analysis import unbounded_sources
        from sqlengine.runtime.changelog import apply_changelog

        job = self._job()  # plan first: plan-time errors are the more precise ones
        unbounded = unbounded_sources(self.logical_plan)
        if unbounded:
            raise PlanError(f"collect() needs a bounded result, but table {unbounded[0]!r} is "
                            "unbounded; use stream() (or give the source 'number-of-rows')")
        batches = []
        self._run = job
        try:
            batches = list(job.run())
        finally:
            self._finish(job)
        if job.cancelled:
            raise ExecutionError("the query was cancelled")
        return apply_changelog(batches, self.schema)

    def cancel(self) -> None:
        """Cancel the running query (from another thread): ``stream()`` ends, ``collect()``
        raises ExecutionError. Every task of a parallel job stops within a poll interval."""
        if self._run is not None:
            self._run.cancel()

    def to_pandas(self) -> Any:
        """``collect()`` as a pandas DataFrame."""
        return self.collect().to_pandas()

    def stream(self) -> Iterator[pa.RecordBatch]:
        """Yield batches as they are produced, each with a leading ``op`` column holding the
        row kind (+I, -U, +U, -D). Closing the iterator cancels the query."""
        from sqlengine.runtime.elements import ROWKIND, ROWKIND_NAMES, data_part, has_rowkind

        job = self._job()
        self._run = job
        kinds = pa.array(ROWKIND_NAMES)
        try:
            for batch in job.run():
                if has_rowkind(batch):
                    op = kinds.take(batch.column(ROWKIND).cast(pa.int32()))
                else:
                    op = pa.array(["+I"] * batch.num_rows)
                data = data_part(batch)
                yield pa.RecordBatch.from_arrays([op, *data.columns],
                                                 names=["op", *data.schema.names])
        finally:
            self._finish(job)

    def metrics(self) -> dict[str, dict[str, int]]:
        """Records in/out per operator of the last run (``vertex.operator`` keys)."""
        return dict(self._metrics)


def _normalize_schema(schema: pa.Schema) -> pa.Schema:
    from sqlengine.types import is_supported

    fields = []
    for f in schema:
        t = f.type
        if pa.types.is_large_string(t) or getattr(pa.types, "is_string_view",
                                                  lambda _: False)(t):
            t = pa.string()
        elif pa.types.is_dictionary(t):
            t = t.value_type
        elif pa.types.is_timestamp(t) and t.tz is not None:
            t = pa.timestamp(t.unit)
        elif pa.types.is_uint8(t) or pa.types.is_uint16(t):
            t = pa.int32()
        elif pa.types.is_uint32(t) or pa.types.is_uint64(t):
            t = pa.int64()
        elif pa.types.is_float16(t):
            t = pa.float32()
        if not is_supported(t):
            raise NotSupportedError(f"column {f.name!r} has type {t}, which sqlengine does "
                                    "not support yet")
        fields.append(pa.field(f.name, t))
    return pa.schema(fields)


def _normalize_table(table: pa.Table) -> pa.Table:
    schema = _normalize_schema(table.schema)
    return table.cast(schema) if schema != table.schema else table


def connect(options: dict[str, str] | None = None) -> Session:
    """A new session with an empty catalog (options as ``SET`` would give them)."""
    return Session(options)


__all__ = ["BindError", "ExecutionError", "Query", "Result", "Session", "connect"]
