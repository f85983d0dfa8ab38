"""The one door: ``connect()`` and Session (execute, sql, register, set); queries come back as
Query objects (sqlengine/query.py). The shell, the CLI and applications all come in here; it
plans through the optimizer and runs through ``runtime.execute``.

Example:
    >>> import sqlengine
    >>> s = sqlengine.connect()
    >>> s.sql("SELECT 1 + 1 AS two").collect().to_pydict()
    {'two': [2]}
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from sqlengine import ddl, runtime, safety
from sqlengine import statements as S
from sqlengine.catalog import Catalog
from sqlengine.errors import (
    BindError,
    CheckpointError,
    ConnectorError,
    ExecutionError,
    InterfaceError,
    NotSupportedError,
    ParseError,
    PlanError,
    Span,
    SqlEngineError,
    statement_place,
    unexpected,
)
from sqlengine.functions import callable_names
from sqlengine.job import Job
from sqlengine.optimizer import optimize, plan_job
from sqlengine.optimizer.drawing import FORMATS, combine_svg
from sqlengine.optimizer.explain import explain_plan
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.options import check_key, check_option, local_time_zone
from sqlengine.parser import parse_query, parse_statement, split_script
from sqlengine.plan.nodes import LogicalPlan
from sqlengine.query import Query, Result, collect_sink
from sqlengine.recursion import deep
from sqlengine.registration import memory_table


class Session:
    """A catalog, options, and the statements that change them. ``connect()`` makes one."""

    def __init__(self, options: dict[str, str] | None = None, safe: bool = False,
                 allowed_directories: list[str] | tuple[str, ...] = ()) -> None:
        if allowed_directories and not safe:
            raise ConnectorError("allowed_directories is for safe mode: pass safe=True")
        self.catalog = Catalog(safety.normalized(allowed_directories) if safe else None)
        self.options: dict[str, str] = {"execution.runtime-mode": "streaming"}
        # Called about twice a second while a job runs: (rows read so far, watermark ms).
        self.on_progress: Any = None
        # Called with each job's runtime execution as it is submitted (the web view).
        self.on_submit: list[Callable[[runtime.JobExecution], None]] = []
        self._executions: weakref.WeakSet[runtime.JobExecution] = weakref.WeakSet()
        self._streams: weakref.WeakSet[Iterator[pa.RecordBatch]] = weakref.WeakSet()
        # INSERTs start in the background (the shell, as Flink's SQL client; unless
        # 'table.dml-sync' is 'true'), listed by SHOW JOBS, stopped by STOP JOB.
        self.background_inserts = False
        self.jobs: dict[str, Job] = {}
        for k, v in (options or {}).items():
            self.set(k, v)

    # -- options ---------------------------------------------------------------------------
    # -- PEP 249: the session is a DB-API connection ------------------------------------------
    closed = False

    def cursor(self) -> Any:
        """A PEP 249 cursor (sqlengine.dbapi.Cursor)."""
        from sqlengine.dbapi import Cursor
        from sqlengine.errors import InterfaceError

        if self.closed:
            raise InterfaceError("the connection is closed")
        return Cursor(self)

    def commit(self) -> None:
        """Nothing to do: every statement takes effect when it runs (no transactions)."""

    def rollback(self) -> None:
        raise NotSupportedError("sqlengine has no transactions: nothing can be rolled back")

    def close(self) -> None:
        """Close the connection: background jobs and the queries still running (a
        ``stream()`` being read) are cancelled, cursors stop working."""
        for job in list(getattr(self, "jobs", {}).values()):
            with contextlib.suppress(Exception):
                job.cancel()
        for stream in list(getattr(self, "_streams", ())):
            # (a stream() left open ran on, its worker processes with it; closing it stops
            # them, unless another thread is reading it: then its job is cancelled)
            with contextlib.suppress(Exception):
                stream.close()
        for execution in list(getattr(self, "_executions", ())):
            with contextlib.suppress(Exception):
                execution.cancel()
        self.closed = True

    def _check_open(self) -> None:
        from sqlengine.errors import InterfaceError

        if self.closed:
            raise InterfaceError("the connection is closed")

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def set(self, key: str, value: str) -> None:
        """``SET 'key' = 'value'``: the key must be one the engine implements (any other is
        refused, naming it, rather than ignored) and the value of its kind."""
        if key == "table.sql-dialect" and str(value).strip().lower() == "hive":
            raise PlanError("option 'table.sql-dialect': the Hive dialect is not supported "
                            "(statements are read in Flink's 'default' dialect)")
        value = check_option(key, value)
        allowed = self.catalog.safe_directories
        if allowed is not None and key in safety.DIRECTORY_OPTIONS:
            safety.check_directory_option(key, value, allowed)
        if key == "table.optimizer.disabled-rules":
            _check_rule_names(value)
        self.options[key] = value

    def restore_from(self, directory: str) -> None:
        """Jobs resume from the newest completed checkpoint or savepoint of their query under
        ``directory`` (``sqlengine run --restore DIR``); none there: a fresh start."""
        allowed = self.catalog.safe_directories
        if allowed is not None:
            safety.check_directory_option("execution.state-recovery.path", directory, allowed)
        self.options["$restore-latest"] = directory

    def reset(self, key: str | None = None) -> None:
        """``RESET 'key'`` (the default value again), or ``RESET`` (every option)."""
        if key is None:
            self.options = {"execution.runtime-mode": "streaming"}
            return
        if key not in self.options:
            check_key(key)
        self.options.pop(key, None)
        if key == "execution.runtime-mode":
            self.options[key] = "streaming"

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
        without data, so it stops holding back the watermark of what it feeds. The rowtime
        column is a TIMESTAMP(3), as an event-time attribute is in Flink: finer values (a
        pandas DataFrame's nanoseconds) are cut to the millisecond."""
        self._check_open()
        self.catalog.add_table(memory_table(name, data, bounded=bounded, rowtime=rowtime,
                                            watermark=watermark, idle_timeout=idle_timeout),
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
        self._check_open()
        if not isinstance(script, str):
            raise ParseError(f"execute() takes the SQL text as a str, got "
                             f"{type(script).__name__}")
        if source is not None and not isinstance(source, str):
            # (a dict or list of parameters was taken for the source's name, and ignored)
            raise InterfaceError(f"execute() takes the name of the script's source as its "
                                 f"second argument, got {type(source).__name__}: query "
                                 "parameters go to sql(query, params) or a cursor's "
                                 "execute(query, params)")
        for offset, text in split_script(script):
            yield self.run_statement(text, offset, script, source, collect_queries)

    def run_statement(self, text: str, offset: int, script: str, source: str | None = None,
                      collect_queries: bool = True,
                      params: dict[str, object] | list[object] | None = None) -> Result:
        """Run one statement of ``script`` (starting at ``offset``); errors are located in
        the script (and named by ``source``, a file name). ``params`` fill the ``:name`` or
        ``?`` placeholders of a query or an INSERT (a cursor's parameters)."""
        stmt: S.Statement | None = None
        try:
            try:
                with deep(), local_time_zone(self.options.get("table.local-time-zone")):
                    stmt = parse_statement(text, offset, script)
                    if params is not None and not isinstance(stmt, S.QueryStmt | S.Insert):
                        raise NotSupportedError("parameters apply to queries and INSERT "
                                                "statements only")
                    result = self._run(stmt, script, collect_queries, params)
            except (KeyboardInterrupt, GeneratorExit):
                raise
            except Exception as e:  # no raw exception reaches a user
                if isinstance(e, SqlEngineError):
                    raise
                raise unexpected(e) from e
        except SqlEngineError as e:
            if e.sql is None:
                e.sql = script
                key = stmt.key if isinstance(stmt, S.Set | S.Reset) else None
                if e.span is None and key and f"'{key}'" in text:
                    at = offset + text.find(f"'{key}'") + 1  # (a refused option: its key)
                    e.span = Span.from_offset(script, at, at + len(key))
            if e.span is None and e.sql == script:
                e.span = statement_place(e.message, text, offset, script)
            if source is not None:
                e.source = source
            raise
        result.statement_offset = offset
        return result

    def start(self, statement: str) -> Job:
        """Start an INSERT in the background and return at once (as Flink's client submits a
        job): the Job waits, cancels, or stops with a savepoint."""
        try:
            with deep(), local_time_zone(self.options.get("table.local-time-zone")):
                stmt = parse_statement(statement, 0, statement)
                if not isinstance(stmt, S.Insert):
                    raise NotSupportedError("start() runs an INSERT statement in the "
                                            "background (run queries with sql())")
                execution = self.submit(ddl.bind_insert(self.catalog, stmt, statement))
        except SqlEngineError as e:
            if e.sql is None:
                e.sql = statement
            raise
        except Exception as e:  # no raw exception reaches a user
            raise unexpected(e) from e
        return Job(execution, self._job_name(f"INSERT INTO {stmt.table}"))

    def sql(self, query: str, params: dict[str, object] | list[object] | None = None) -> Query:
        """A query (bound now, run on collect/stream); ``params`` fill ``:name`` or ``?``."""
        self._check_open()
        if not isinstance(query, str):
            raise ParseError(f"sql() takes the query text as a str, got {type(query).__name__}")
        if params is not None and not isinstance(params, dict | list | tuple):
            raise InterfaceError(f"sql() takes its parameters as a dict (for :name) or a list "
                                 f"or tuple (for ?), got {type(params).__name__}")
        try:
            with deep(), local_time_zone(self.options.get("table.local-time-zone")):
                return self._sql(query, params)
        except SqlEngineError:
            raise
        except Exception as e:  # no raw exception reaches a user
            raise unexpected(e) from e

    def _sql(self, query: str, params: dict[str, object] | list[object] | None) -> Query:
        stmts = split_script(query)
        if len(stmts) != 1:
            raise ParseError(f"sql() takes exactly one query, got {len(stmts)} statements")
        offset, text = stmts[0]
        stmt = parse_statement(text, offset, query)
        if isinstance(stmt, S.Explain):  # (running the query instead would be a wrong answer)
            raise ParseError("sql() takes a query, not EXPLAIN: use execute() for the plan's "
                             "text, or sql(query).explain()",
                             span=Span.from_offset(query, offset), sql=query)
        if not isinstance(stmt, S.QueryStmt):
            raise ParseError("sql() takes a query; use execute() for other statements",
                             span=Span.from_offset(query, offset), sql=query)
        named, positional = _split_params(params)
        return Query(self, stmt.query, query, named, positional)

    def _run(self, stmt: S.Statement, script: str, collect_queries: bool,
             params: dict[str, object] | list[object] | None = None) -> Result:
        named, positional = _split_params(params)
        match stmt:
            case S.QueryStmt():
                q = Query(self, stmt.query, script, named, positional)
                if collect_queries:
                    table = q.collect()
                    return Result("rows", table=table, query=q, skipped_rows=q.skipped_rows)
                return Result("rows", query=q)
            case S.Explain():
                return Result("explain", self.explain_statement(stmt, script))
            case S.Insert() if params is not None:
                from sqlengine.binder import bind_query
                from sqlengine.parser import parse_query

                query = bind_query(parse_query(stmt.query, script), self.catalog, stmt.query,
                                   script, named, positional)
                return self._insert(stmt, script, ddl.bind_insert(self.catalog, stmt, script,
                                                                  query))
            case S.Insert():
                return self._insert(stmt, script)
            case S.Set(key=None):
                rows = sorted(self.options.items())
                return Result("rows", table=pa.table({"key": [k for k, _ in rows],
                                                      "value": [v for _, v in rows]}))
            case S.Set(key=str(key)):
                self.set(key, stmt.value or "")
                return Result("ok", f"[INFO] Execute statement succeeded: SET {stmt.key}")
            case S.Reset():
                self.reset(stmt.key)
                return Result("ok", "[INFO] Execute statement succeeded: RESET")
            case S.Show(what="JOBS", source=None, like=None):
                jobs = list(self.jobs.values())
                return Result("rows", table=pa.table({
                    "job id": pa.array([j.id for j in jobs], pa.string()),
                    "job name": pa.array([j.name for j in jobs], pa.string()),
                    "status": pa.array([j.status for j in jobs], pa.string())}))
            case S.StopJob():
                return self._stop_job(stmt)
            case S.Show():
                return self._show(stmt)
            case S.Describe():
                return Result("rows", table=ddl.describe(self.catalog, stmt, script))
            case S.ShowColumns():
                return Result("rows", table=ddl.show_columns(self.catalog, stmt))
            case S.ShowCreate():
                text = ddl.show_create(self.catalog, stmt)
                return Result("rows", table=pa.table({"result": [text]}))
            case S.CreateTable():
                return Result("ok", ddl.create_table(self.catalog, stmt, script))
            case S.CreateTableAs():
                return self._create_table_as(stmt, script)
            case S.ReplaceTableAs():
                return self._replace_table_as(stmt, script)
            case S.FunctionStatement():
                return Result("ok", self._function_statement(stmt))
            case S.CatalogStatement():
                return Result("ok", ddl.catalog_statement(self.catalog, stmt))
            case S.AlterTable():
                return Result("ok", ddl.alter_table(self.catalog, stmt, script))
            case S.AlterView():
                return Result("ok", ddl.alter_view(self.catalog, stmt, script))
            case S.StatementSet():
                return self._statement_set(stmt, script)
            case S.CreateView():
                return Result("ok", ddl.create_view(self.catalog, stmt, script))
            case S.Drop():
                return Result("ok", ddl.drop(self.catalog, stmt, script))
            case _:
                raise NotSupportedError(f"unsupported statement {type(stmt).__name__}")

    def _show(self, stmt: S.Show) -> Result:
        what, cat = stmt.what, self.catalog
        if stmt.source is not None and what not in ("TABLES", "VIEWS", "FUNCTIONS",
                                                    "USER FUNCTIONS", "DATABASES"):
            raise BindError(f"SHOW {what} takes no FROM / IN")
        if stmt.like is not None and (what.startswith("CURRENT") or what == "JOBS"):
            raise BindError(f"SHOW {what} takes no LIKE")
        database = cat.database_key(stmt.source) if stmt.source is not None and \
            what != "DATABASES" else None
        user = sorted(n.upper() for n in cat.functions)
        if what == "TABLES":
            names = cat.names(database)
        elif what == "VIEWS":
            names = cat.view_names(database)
        elif what == "FUNCTIONS":
            names = sorted({*callable_names(), *user})
        elif what == "USER FUNCTIONS":
            names = user
        elif what == "CATALOGS":
            names = cat.catalog_names()
        elif what == "CURRENT CATALOG":
            names = [cat.current_names()[0]]
        elif what == "DATABASES":
            names = cat.database_names(cat.catalog_key(stmt.source)
                                       if stmt.source is not None else None)
        elif what == "CURRENT DATABASE":
            names = [cat.current_names()[1]]
        elif what in ("MODULES", "FULL MODULES"):  # (the one module: the built-ins)
            names = ["core"]
            if what == "FULL MODULES":
                return Result("rows", table=pa.table({
                    "module name": pa.array(names, pa.string()),
                    "used": pa.array([True], pa.bool_())}))
        else:
            raise NotSupportedError(f"SHOW {what} is not supported")
        if stmt.like is not None:
            names = [n for n in names if stmt.like.keeps(n)]
        column = {"TABLES": "table name", "VIEWS": "view name", "FUNCTIONS": "function name",
                  "USER FUNCTIONS": "function name", "CATALOGS": "catalog name",
                  "DATABASES": "database name", "MODULES": "module name",
                  # (as Flink 2.3 names them)
                  "CURRENT CATALOG": "current catalog name",
                  "CURRENT DATABASE": "current database name"}
        return Result("rows", table=pa.table({column.get(what, "name"): pa.array(names,
                                                                                   pa.string())}))

    def _stop_job(self, stmt: S.StopJob) -> Result:
        job = self.jobs.get(stmt.job_id)
        if job is None:
            known = ", ".join(repr(k) for k in self.jobs) or "none"
            raise ExecutionError(f"no job {stmt.job_id!r} (jobs of this session: {known})")
        if stmt.drain:
            raise NotSupportedError("STOP JOB ... WITH DRAIN is not implemented (it would end "
                                    "the event time and fire every window): stop WITH "
                                    "SAVEPOINT and restore instead")
        if not stmt.savepoint:
            job.cancel()
            return Result("ok", f"[INFO] Job {job.id} was stopped.")
        directory = self.options.get("execution.checkpointing.savepoint-dir")
        if not directory:
            raise PlanError("STOP JOB ... WITH SAVEPOINT needs "
                            "'execution.checkpointing.savepoint-dir' (where savepoints go)")
        path = job.stop(savepoint=directory)
        return Result("rows", table=pa.table({"savepoint path": [path]}))

    # -- Python functions ------------------------------------------------------------------
    def create_function(self, name: str, fn: object, result_type: str | None = None, *,
                        kind: str = "row", deterministic: bool = True,
                        replace: bool = False) -> None:
        """Make the Python function ``fn`` callable from SQL as ``name``: a function declared
        with ``@sqlengine.udf(...)``, or any callable with ``result_type`` (a SQL type name)
        and ``kind`` ('row', 'arrow' or 'pandas')."""
        from sqlengine import functions, functions_python

        self._check_open()

        if not isinstance(fn, functions_python.UserFunction):
            if result_type is None:
                raise BindError(f"create_function {name!r}: give result_type, or declare the "
                                "function with @sqlengine.udf(result_type=...)")
            if kind in functions_python.AGGREGATE_KINDS or hasattr(fn, "accumulate"):
                fn = functions_python.udaf(  # (an AggregateFunction object or class)
                    fn, result_type=result_type, deterministic=deterministic, name=name,
                    kind=kind if kind in functions_python.AGGREGATE_KINDS else "aggregate")
            else:
                fn = functions_python.udf(fn, result_type=result_type, kind=kind,  # type: ignore[arg-type]
                                          deterministic=deterministic, name=name)
        elif result_type is not None:
            raise BindError(f"create_function {name!r}: the function declares its result "
                            "type already")
        if functions.is_own_name(name):
            raise BindError(f"create_function {name!r}: a built-in function has that name")
        if name.lower() in self.catalog.functions and not replace:
            raise BindError(f"function {name!r} already exists")
        key = functions_python.register(name, fn)  # type: ignore[arg-type]
        self.catalog.functions[name.lower()] = key
        self.catalog.function_kinds[name.lower()] = "temporary system"

    def drop_function(self, name: str, *, if_exists: bool = False) -> bool:
        if name.lower() not in self.catalog.functions:
            if if_exists:
                return False
            raise BindError(f"function {name!r} does not exist")
        del self.catalog.functions[name.lower()]
        self.catalog.function_kinds.pop(name.lower(), None)
        return True

    def _function_statement(self, stmt: S.FunctionStatement) -> str:
        from sqlengine import functions_python

        if "." in stmt.name:
            raise NotSupportedError(f"function {stmt.name!r}: qualified function names "
                                    "(catalog.database.name) are not supported; a function "
                                    "is named on its own")
        kind = self.catalog.function_kinds.get(stmt.name.lower())
        if not stmt.create:
            if kind is not None and kind != stmt.kind:  # (as Flink: each DROP its own kind)
                raise BindError(f"DROP {stmt.kind.upper()} FUNCTION {stmt.name}: {stmt.name!r}"
                                f" is a {kind} function (drop it with DROP {kind.upper()} "
                                "FUNCTION)")
            self.drop_function(stmt.name, if_exists=stmt.if_exists)
            return "[INFO] Execute statement succeeded."
        functions_python.refuse_language(stmt.language, stmt.name)
        if kind is not None and stmt.if_exists:
            return f"[INFO] Function {stmt.name} already exists, skipped"
        self.create_function(stmt.name, functions_python.load(stmt.path, stmt.name))
        self.catalog.function_kinds[stmt.name.lower()] = stmt.kind
        return "[INFO] Execute statement succeeded."

    def _statement_set(self, stmt: S.StatementSet, script: str) -> Result:
        """The INSERTs of a statement set as one job (all are planned before any runs; equal
        sources are read once)."""
        from sqlengine.plan.nodes import StatementSet

        plan = StatementSet(tuple(ddl.bind_insert(self.catalog, i, script)
                                  for i in stmt.inserts))
        tables = ", ".join(i.table for i in stmt.inserts)
        if self._in_background():
            job = Job(self.submit(plan), self._job_name(f"STATEMENT SET ({tables})"))
            self.jobs[job.id] = job
            return Result("ok", "[INFO] Submitting SQL update statement to the cluster...\n"
                                "[INFO] SQL update statement has been successfully submitted "
                                f"to the cluster:\nJob ID: {job.id}")
        execution = self.submit(plan)
        for _ in execution.run():
            pass
        rows = execution.result.sink_rows if execution.result else {}
        lines = [f"[INFO] Inserted {n} rows into {t}" for t, n in rows.items()]
        return Result("insert", "\n".join(lines) or f"[INFO] Inserted 0 rows into {tables}",
                      sink_rows=rows, **_counters(execution.result))

    def _create_table_as(self, stmt: S.CreateTableAs, script: str) -> Result:
        """CREATE TABLE ... AS query: the table is created with the query's columns, then
        the query is inserted into it; if the INSERT cannot be planned, the table is dropped
        again (nothing half-made stays). With IF NOT EXISTS, a table there already takes the
        query's rows, as in Flink."""
        table, queried = ddl.table_of_query(self.catalog, stmt, script)
        # (by name when the table declares columns: the query's go where the table has them)
        names = queried if stmt.table.columns or stmt.order else ()
        if self.catalog.exists(table.name) and table.if_not_exists:
            # (as Flink: the query's rows go into the table there is, column by column)
            return self._insert(S.Insert(table.name, (), stmt.query, False,
                                         stmt.table.name_offset), script)
        ddl.create_table(self.catalog, table, script)
        insert = S.Insert(table.name, names, stmt.query, False, stmt.table.name_offset)
        try:
            ddl.bind_insert(self.catalog, insert, script)
        except Exception:
            self.catalog.drop("TABLE", table.name, if_exists=True)
            raise
        return self._insert(insert, script)

    def _replace_table_as(self, stmt: S.ReplaceTableAs, script: str) -> Result:
        """[CREATE OR] REPLACE TABLE ... AS query, as Flink's RTAS (not atomic, its
        default): the query is planned against the tables as they are (it may read the
        table it replaces), then the table is dropped, created with the query's columns and
        filled by an INSERT. As Flink's DROP TABLE, dropping leaves a filesystem table's
        files where they are: at the same path the new rows join them. If the INSERT cannot
        be planned, the old table is put back."""
        from sqlengine.binder import bind_query

        ctas = stmt.ctas
        name = ctas.table.name
        offset = ctas.table.name_offset
        span = Span.from_offset(script, offset, offset + len(name))
        if self.catalog.is_temporary(name):
            raise BindError(f"{name!r} is a temporary table or view: REPLACE TABLE replaces a "
                            "permanent table (as in Flink; DROP TEMPORARY TABLE first)",
                            span=span, sql=script)
        old, view = self.catalog.find(name, temporary=False)
        if view is not None:
            raise BindError(f"{name!r} is a view: REPLACE TABLE replaces a table", span=span,
                            sql=script)
        if old is None and not stmt.create:
            raise BindError(f"the table {name!r} to be replaced does not exist (CREATE TABLE "
                            "... AS or CREATE OR REPLACE TABLE ... AS creates it)", span=span,
                            sql=script)
        query = bind_query(parse_query(ctas.query, script), self.catalog, ctas.query, script)
        table, queried = ddl.table_of_query(self.catalog, ctas, script)
        names = queried if ctas.table.columns or ctas.order else ()
        insert = S.Insert(table.name, names, ctas.query, False, offset)
        if old is not None:
            self.catalog.drop("TABLE", name, if_exists=False)
        try:
            ddl.create_table(self.catalog, table, script)
            plan = ddl.bind_insert(self.catalog, insert, script, query)
        except Exception:
            self.catalog.drop("TABLE", name, if_exists=True)
            if old is not None:
                self.catalog.add_table(old)
            raise
        return self._insert(insert, script, plan)

    def _job_name(self, default: str) -> str:
        """A job's name: 'pipeline.name' when set (as Flink names its job), else what the
        statement runs."""
        return self.options.get("pipeline.name") or default

    def _in_background(self) -> bool:
        """Whether an INSERT starts in the background as a Job (SHOW JOBS, STOP JOB) rather
        than run to its end: 'table.dml-sync' = 'false' asks for it (as Flink's client
        submits a job and goes on), and so does the shell unless 'table.dml-sync' is 'true';
        the API and ``sqlengine run`` otherwise run an INSERT to its end."""
        sync = self.options.get("table.dml-sync")
        if sync is not None:
            return sync.lower() != "true"
        return self.background_inserts

    def _insert(self, stmt: S.Insert, script: str, plan: LogicalPlan | None = None
                ) -> Result:
        """``plan``: the INSERT's, bound already."""
        if plan is None:
            plan = ddl.bind_insert(self.catalog, stmt, script)
        if self._in_background():
            execution = self.submit(plan)
            job = Job(execution, self._job_name(f"INSERT INTO {stmt.table}"))
            self.jobs[job.id] = job
            return Result("ok", "[INFO] Submitting SQL update statement to the cluster...\n"
                                "[INFO] SQL update statement has been successfully submitted "
                                f"to the cluster:\nJob ID: {job.id}")
        job = self.submit(plan)
        for _ in job.run():
            pass
        rows = job.result.sink_rows if job.result else {}
        n = sum(rows.values())
        lines = [f"[WARN] the job failed and restarted from its last checkpoint ({i} of "
                 f"{len(job.restarts)}): {failure}" for i, failure in enumerate(job.restarts, 1)]
        message = "\n".join([*lines, f"[INFO] Inserted {n} rows into {stmt.table}"])
        return Result("insert", message, sink_rows=rows, **_counters(job.result))

    # -- planning and running ------------------------------------------------------------
    def explain_statement(self, stmt: S.Explain, script: str, fmt: str = "text") -> str:
        """EXPLAIN's text for a query or INSERT; with ``fmt`` 'dot', 'mermaid' or 'svg', its
        JobGraph drawn instead."""
        if fmt != "text":
            if fmt not in FORMATS:
                raise NotSupportedError(f"unknown explain format {fmt!r} (known: text, "
                                        f"{', '.join(sorted(FORMATS))})")
            return FORMATS[fmt](self.statement_job_graph(stmt, script))
        return self.explain_plan(self._statement_plan(stmt, script, sink=False),
                                 verbose="VERBOSE" in stmt.details,
                                 details=tuple(d.upper() for d in stmt.details))

    def explain_plan(self, plan: LogicalPlan, verbose: bool = False,
                     details: tuple[str, ...] = ()) -> str:
        """EXPLAIN's sections for a bound plan, and the runtime's own plan where it has one
        (Spark's, with 'execution.target' = 'spark')."""
        tables = self.memory_tables()
        text, optimized = explain_plan(plan, self.options, verbose, tables, details)
        own = runtime.explain(self.job_graph(collect_sink(optimized)), self.options, tables)
        return text if own is None else f"{text}\n\n== Spark Plan ==\n{own}"

    def _statement_plan(self, stmt: S.Explain, script: str, sink: bool = True) -> LogicalPlan:
        inner = stmt.statement
        if isinstance(inner, S.Insert):
            return ddl.bind_insert(self.catalog, inner, script)
        if isinstance(inner, S.StatementSet):
            from sqlengine.plan.nodes import StatementSet

            return StatementSet(tuple(ddl.bind_insert(self.catalog, i, script)
                                      for i in inner.inserts))
        plan = Query(self, inner.query, script).logical_plan
        return collect_sink(plan) if sink else plan

    def statement_job_graph(self, stmt: S.Explain, script: str) -> JobGraph:
        """The JobGraph an EXPLAIN-able statement (query or INSERT) would run."""
        return self.job_graph(self._statement_plan(stmt, script))

    def memory_tables(self) -> dict[str, object]:
        """Registered in-memory data by table name (what the runtimes read)."""
        out = {}
        for t in self.catalog.all_tables():
            if t.data is not None:
                out[t.name.lower()] = t.data
        return out

    def job_graph(self, plan: LogicalPlan) -> JobGraph:
        """The JobGraph of a bound plan (ending in a sink), as the options plan it."""
        tables = self.memory_tables()
        graph = plan_job(optimize(plan, self.options, tables=tables), self.options, tables)
        return self._as_restored(plan, graph, tables)

    def _as_restored(self, plan: LogicalPlan, graph: JobGraph,
                     tables: dict[str, object]) -> JobGraph:
        """A job restored from a checkpoint whose aggregations ran in another number of phases
        (taken at parallelism 1, where they run in one, restored at 2, where they would run in
        two; or back) is planned in the checkpoint's phases, so that its state fits: only
        while 'table.optimizer.agg-phase-strategy' is 'AUTO' (a strategy set by the user is
        kept, and the mismatch reported)."""
        key = "table.optimizer.agg-phase-strategy"
        if self.options.get(key, "AUTO").upper() != "AUTO" or not (
                self.options.get("execution.state-recovery.path")
                or self.options.get("$restore-latest")):  # (sqlengine run --restore DIR)
            return graph
        from sqlengine.runtime.checkpoint.config import checkpoint_config
        from sqlengine.runtime.checkpoint.coordinator import find_restore
        from sqlengine.runtime.checkpoint.snapshot import fingerprint

        config = checkpoint_config(self.options)
        try:
            find_restore(config, fingerprint(graph), graph)
            return graph
        except CheckpointError as mismatch:
            for strategy in ("ONE_PHASE", "TWO_PHASE"):
                options = {**self.options, key: strategy}
                other = plan_job(optimize(plan, options, tables=tables), options, tables)
                try:
                    find_restore(config, fingerprint(other), other)
                except CheckpointError:
                    continue
                return other
            raise mismatch

    def submit(self, plan: LogicalPlan) -> runtime.JobExecution:
        """Plan a bound plan (ending in a sink) and hand it to the runtime the options choose;
        it runs when the execution's ``run()`` is iterated."""
        execution = runtime.execute(self.job_graph(plan), self.options,
                                    self.memory_tables(), self.on_progress)
        self._executions.add(execution)  # (close() cancels what still runs)
        for listener in self.on_submit:
            listener(execution)
        return execution


def _check_rule_names(value: str) -> None:
    """'table.optimizer.disabled-rules' names optimizer rules and physical passes; an unknown
    name, or a rule no plan can do without, would be ignored: refused instead."""
    from sqlengine.optimizer import PHYSICAL_PASSES, RULES

    key = "table.optimizer.disabled-rules"
    names = {r.name: r for r in RULES} | {p.name: p for p in PHYSICAL_PASSES}
    for name in (n.strip() for n in value.split(",")):
        if not name:
            continue
        if name not in names:
            known = ", ".join(sorted(n for n, r in names.items()
                                     if not getattr(r, "mandatory", False)))
            raise PlanError(f"option {key!r}: no rule or pass {name!r} (known: {known})")
        if getattr(names[name], "mandatory", False):
            raise PlanError(f"option {key!r}: rule {name!r} cannot be disabled (what it "
                            "rewrites no runtime can run)")


def connect(options: dict[str, str] | None = None, *, safe: bool = False,
            allowed_directories: list[str] | tuple[str, ...] = ()) -> Session:
    """A new session with an empty catalog (options as ``SET`` would give them). With
    ``safe``, tables may only read and write files inside ``allowed_directories`` and may not
    open sockets (sqlengine/safety.py); SQL cannot switch it off."""
    if options is not None and not isinstance(options, dict):
        raise PlanError(f"connect() takes its options as a dict of str to str, got "
                        f"{type(options).__name__}")
    return Session(options, safe=safe, allowed_directories=allowed_directories)


__all__ = ["BindError", "ExecutionError", "Query", "Result", "Session", "combine_svg", "connect"]


def _counters(result: Any) -> dict[str, int]:
    """A finished INSERT job's rows skipped or dropped, for its Result."""
    if result is None:
        return {}
    return {k: int(getattr(result, k, 0) or 0)
            for k in ("skipped_rows", "late_records_dropped", "udf_rows_skipped")}


def _split_params(params: dict[str, object] | list[object] | None
                  ) -> tuple[dict[str, object] | None, list[object] | None]:
    """Parameters as the binder takes them: by name (a dict, for ``:name``) or by place (a
    list or tuple, for ``?``)."""
    named = params if isinstance(params, dict) else None
    return named, list(params) if isinstance(params, list | tuple) else None
