"""The command line: ``sqlengine run FILE.sql`` and ``sqlengine explain FILE.sql``."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

import sqlengine
from sqlengine.errors import ExecutionError, SqlEngineError
from sqlengine.options import local_time_zone
from sqlengine.shell.formatting import render, render_error
from sqlengine.shell.launch import resume_collection

if TYPE_CHECKING:
    from sqlengine.shell.web_hook import WebHook


def internal_error(e: BaseException, source: str | None = None) -> SqlEngineError:
    """An unexpected exception as a one-line sqlengine error (a bug, reported plainly)."""
    from sqlengine.errors import InternalError

    err = InternalError(f"unexpected {type(e).__name__}: {e}")
    err.source = source
    return err


# Safe mode, as the command line asked for it (sqlengine --safe --allow DIR ...).
_SAFE: dict[str, object] = {"safe": False, "allowed_directories": ()}


def _defer_pandas() -> None:
    """Keep pyarrow from importing pandas (~0.17 s) on the first array it builds from Python
    values, where it only checks whether the values are pandas objects: in this process none
    can be, as nothing has imported pandas. pyarrow's lazy check runs once here while the
    import fails, and remembers "no pandas"; the first call that needs pandas (to_pandas, a
    pandas UDF, a DataFrame read) imports it then, as pyarrow retries on such calls."""
    if "pandas" in sys.modules:
        return
    import pyarrow as pa

    class _NoPandas:
        @staticmethod
        def find_spec(name: str, path: object = None, target: object = None) -> None:
            if name == "pandas":
                raise ImportError("pandas is deferred")

    blocker = _NoPandas()
    sys.meta_path.insert(0, blocker)  # type: ignore[arg-type]
    try:
        pa.array([0])
    finally:
        sys.meta_path.remove(blocker)  # type: ignore[arg-type]


def entry() -> None:
    """The ``sqlengine`` command: run the command line, then leave without the interpreter's
    teardown. Tearing down the modules of pyarrow, numpy and sqlglot costs ~0.07 s, a sixth of
    a ``sqlengine run`` of ``SELECT 1``; by then every sink is closed and every result written.
    The standard streams are flushed and the ``atexit`` functions run (multiprocessing's among
    them); while a thread other than the main one still runs, the exit is the usual one, which
    waits for it."""
    import atexit
    import os
    import threading

    try:
        main()
        status = 0
    except SystemExit as e:
        code = e.code
        if code is None or isinstance(code, int):
            status = code or 0
        else:  # sys.exit("message"): Python prints it and exits with 1
            sys.stderr.write(f"{code}\n")
            status = 1
    if threading.active_count() > 1:
        sys.exit(status)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (| head): nothing more can be written
            status = status or 1
    os._exit(status)


def _session(defines: tuple[str, ...]) -> sqlengine.Session:
    try:
        session = sqlengine.connect(**_SAFE)  # type: ignore[arg-type]
    except SqlEngineError as e:
        raise click.BadParameter(e.message, param_hint="--allow") from None
    # (the start-up is over once a job is planned: shell/launch.py)
    session.on_submit.append(lambda _execution: resume_collection())
    for d in defines:
        if "=" not in d:
            raise click.BadParameter(f"expected key=value, got {d!r}", param_hint="-D")
        key, value = d.split("=", 1)
        try:
            session.set(key.strip(), value.strip())
        except SqlEngineError as e:
            raise click.BadParameter(e.message, param_hint="-D") from None
    return session


def _read(path: str) -> str:
    """A SQL file's text (UTF-8, a byte order mark dropped); a file that is not UTF-8 is an
    error naming the line and column of its first bad byte."""
    from sqlengine.shell.sql_file import SqlFileError, read_sql

    try:
        return read_sql(path)
    except SqlFileError as e:
        if e.unreadable:
            raise click.FileError(path, hint=str(e).removeprefix(f"{path}: ")) from None
        raise click.ClickException(str(e)) from None


@click.group(invoke_without_command=True)
@click.version_option("0.1.0", prog_name="sqlengine")
@click.option("--safe", is_flag=True,
              help="Safe mode: tables read and write files only inside --allow directories; "
                   "no sockets. SQL cannot switch it off.")
@click.option("--allow", "allowed", multiple=True, metavar="DIR",
              help="A directory safe mode allows (repeatable).")
@click.option("-c", "command", default=None, metavar="SQL",
              help="Run these statements, print their results and exit (as duckdb -c).")
@click.option("-f", "script_files", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False),
              help="Run this file's statements and exit (as Flink's sql-client -f; "
                   "repeatable).")
@click.option("-i", "init_files", multiple=True, metavar="FILE",
              type=click.Path(dir_okay=False),
              help="Run this file first (DDL, SET ...), then -c / -f or the shell "
                   "(repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="How -c / -f results are written.")
@click.option("-D", "defines", multiple=True, metavar="KEY=VALUE",
              help="Set an option for -c / -f / -i, as SET 'KEY' = 'VALUE' would.")
@click.pass_context
def main(ctx: click.Context, safe: bool, allowed: tuple[str, ...], command: str | None,
         script_files: tuple[str, ...], init_files: tuple[str, ...], fmt: str,
         defines: tuple[str, ...]) -> None:
    """sqlengine: Flink SQL on a streaming engine in Python. With no command: the shell.

    One-liners: ``sqlengine -c "SELECT 1"``, ``sqlengine -f job.sql``, ``sqlengine -i init.sql``
    (then the shell, or -c / -f in the session the init file prepared)."""
    _defer_pandas()
    if allowed and not safe:
        raise click.BadParameter("--allow is for safe mode: add --safe", param_hint="--allow")
    _SAFE.update(safe=safe, allowed_directories=allowed)
    if ctx.invoked_subcommand is not None:
        if command or script_files or init_files:
            raise click.UsageError("-c, -f and -i come without a command "
                                   f"({ctx.invoked_subcommand!r} was given)")
        return
    if not (command or script_files or init_files):
        if fmt != "table":  # (the shell shows results by 'sql-client.execution.result-mode')
            raise click.UsageError("--format is for -c and -f (the shell shows results by "
                                   "'sql-client.execution.result-mode')")
        ctx.invoke(shell, defines=defines, config_path=None)  # (its -D were dropped)
        return
    session = _session(defines)
    scripts = [(f, _read(f)) for f in init_files]
    scripts += [(f, _read(f)) for f in script_files]
    if command is not None:
        scripts.append(("<-c>", command))
    status = _run_in_session(session, scripts, fmt)
    if status or command is not None or script_files:
        sys.exit(status)
    from sqlengine.shell.app import Shell, run_piped
    from sqlengine.shell.config import load_config

    resume_collection()
    if not sys.stdin.isatty():
        sys.exit(run_piped(sys.stdin, sys.stdout, session))
    sys.exit(Shell(session, load_config(None)).run())


def _run_in_session(session: sqlengine.Session, scripts: list[tuple[str, str]],
                    fmt: str) -> int:
    """Run each (source, text) in one session, as ``run`` does; 1 at the first failure."""
    from sqlengine.parser import split_script

    err = sys.stderr
    writer = _Output(None, fmt)
    web_view = _web_view(err, False, None)  # (-D rest.port=N or a SET 'rest.port' asks)
    try:
        try:
            web_view.watch(session)
        except SqlEngineError as e:
            raise click.BadParameter(e.message, param_hint="-D") from None
        for source, script in scripts:
            try:
                parts = split_script(script)
            except SqlEngineError as e:
                e.source = source
                err.write(render_error(e) + "\n")
                return 1
            for offset, text in parts:
                try:
                    web_view.begin(text)
                    result = session.run_statement(text, offset, script, source,
                                                   collect_queries=False)
                    resume_collection()
                    with local_time_zone(session.options):  # (LTZ values shown in it)
                        _show(result, fmt, err, writer.target(source), None)
                    web_view.end()
                    web_view.follow(session)
                except BrokenPipeError:  # (`| head` has read enough: click exits quietly)
                    raise
                except (SqlEngineError, Exception) as e:
                    if not isinstance(e, SqlEngineError):
                        e = internal_error(e, source)
                    web_view.end(e.message)
                    _locate(e, source, script, offset, text)
                    err.write(render_error(e) + "\n")
                    return 1
    except KeyboardInterrupt:
        err.write("cancelled\n")
        return 130
    finally:
        writer.close()
        web_view.stop()
    return 0


@main.command()
@click.option("-D", "defines", multiple=True, metavar="KEY=VALUE",
              help="Set an option, as SET 'KEY' = 'VALUE' would.")
@click.option("--config", "config_path", default=None, type=click.Path(dir_okay=False),
              help="A shell configuration file, TOML (default: config.toml in the "
                   "platform's config directory, ~/.config/sqlengine on Linux).")
def shell(defines: tuple[str, ...], config_path: str | None) -> None:
    """The interactive SQL shell (statements piped into stdin run in order)."""
    from sqlengine.shell.app import Shell, run_piped
    from sqlengine.shell.config import load_config

    session = _session(defines)
    resume_collection()  # (an interactive session: the start-up is over)
    if not sys.stdin.isatty():
        sys.exit(run_piped(sys.stdin, sys.stdout, session))
    try:
        config = load_config(config_path)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--config") from None
    sys.exit(Shell(session, config).run())


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table",
              show_default=True, help="How query results are written.")
@click.option("-D", "defines", multiple=True, metavar="KEY=VALUE",
              help="Set an option, as SET 'KEY' = 'VALUE' would.")
@click.option("--output", "output", default=None, type=click.Path(file_okay=False),
              help="Write each query's result to a file in this directory "
                   "(<script>-<n>.<format>) instead of stdout.")
@click.option("--continue-on-error", is_flag=True,
              help="Run the remaining statements after a failure; summarise at the end.")
@click.option("--target", type=click.Choice(["native", "spark"]), default=None,
              help="Where jobs run (as SET 'execution.target'); spark needs pyspark.")
@click.option("--progress/--no-progress", default=None,
              help="Show rows, rows/s and the watermark on stderr while a job runs "
                   "(default: when stderr is a terminal).")
@click.option("--restore", "restore", default=None, metavar="DIR",
              help="Resume each job from the newest completed checkpoint or savepoint of its "
                   "query under DIR (none there: a fresh start).")
@click.option("--web", is_flag=True,
              help="Serve a live view of the running jobs (graph, records/s, watermarks, "
                   "backpressure) on http://127.0.0.1:8081/ until the last statement ends.")
@click.option("--web-port", "web_port", type=click.IntRange(0, 65535), default=None,
              metavar="N", help="The web view's port (implies --web; 0: a free port, "
                                "printed on stderr).")
def run(files: tuple[str, ...], fmt: str, defines: tuple[str, ...], output: str | None,
        continue_on_error: bool, target: str | None, progress: bool | None,
        restore: str | None, web: bool, web_port: int | None) -> None:
    """Run every statement of each FILE in order; query results go to stdout.

    Each FILE runs in a session of its own (as Flink's SQL client runs one ``-f`` file): a
    table one file creates is not seen by the next. A failing statement stops its file (the
    other files still run) and the exit status is 1; with --continue-on-error the file's
    remaining statements run too."""
    from sqlengine.parser import split_script

    _session(defines)  # -D is checked once, before any file runs
    err = sys.stderr
    show_progress = err.isatty() if progress is None else progress
    meter = _Progress(err) if show_progress else None
    failures: list[str] = []
    stopped: list[str] = []
    statements = 0
    web_view = _web_view(err, web, web_port)
    writer = _Output(output, fmt)
    opened: list[sqlengine.Session] = []
    if restore is not None and not Path(restore).is_dir():
        # (a first run may name the directory its checkpoints will go to; a typo is said)
        kind = "is not a directory" if Path(restore).exists() else "does not exist"
        if kind == "is not a directory":
            raise click.BadParameter(f"{restore!r} {kind}", param_hint="--restore")
        click.echo(f"note: --restore {restore!r} {kind} (yet): every job starts fresh",
                   err=True)
    try:
        for path in files:
            try:
                script = _read(path)
            except click.ClickException as e:  # (a missing or unreadable file: the other
                err.write(f"Error: {e.format_message()}\n")  # files still run, as documented)
                failures.append(path)
                stopped.append(path)
                continue
            session = _session(defines)
            opened.append(session)
            if target is not None:
                session.set("execution.target", target)
            if restore is not None:
                session.restore_from(restore)
            session.on_progress = meter
            try:
                web_view.watch(session)  # (and -D rest.port=N asks for one)
            except SqlEngineError as e:
                raise click.BadParameter(e.message, param_hint="-D") from None
            parts = list(_split(split_script, script))
            started: dict[str, tuple[int, str]] = {}  # (a background job's statement)
            for done, (offset, text) in enumerate(parts, 1):
                statements += 1
                try:
                    if not isinstance(text, str):  # (the rest of the file cannot split)
                        raise text
                    web_view.begin(text)
                    result = session.run_statement(text, offset, script, path,
                                                   collect_queries=False)
                    started.update({job: (offset, text) for job in session.jobs
                                    if job not in started})
                    resume_collection()
                    with local_time_zone(session.options):  # (LTZ values shown in it)
                        _show(result, fmt, err, writer.target(path), meter)
                    web_view.end()
                    web_view.follow(session)  # (a SET 'rest.port' in the file)
                except BrokenPipeError:  # (`| head` has read enough: click exits quietly)
                    raise
                except (SqlEngineError, Exception) as e:
                    if meter is not None:
                        meter.clear()
                    if not isinstance(e, SqlEngineError):
                        e = internal_error(e, path)
                    web_view.end(e.message)
                    _locate(e, path, script, offset, text if isinstance(text, str) else "")
                    err.write(render_error(e) + "\n")
                    failures.append(f"{path}:{e.span.line if e.span else '?'}")
                    if not continue_on_error:
                        stopped.append(path)
                        if done < len(parts):
                            rest = len(parts) - done
                            err.write(f"{path}: the {rest} statement{'s' if rest > 1 else ''} "
                                      "after it did not run (--continue-on-error runs them)\n")
                        break
            failures += _await_jobs(session, path, script, started, err)
    except KeyboardInterrupt:
        for session in opened:  # (background INSERTs stop with the command)
            for job in list(session.jobs.values()):
                if not job.done:
                    job.cancel()
        err.write("cancelled\n")
        sys.exit(130)
    finally:
        writer.close()
        web_view.stop()
    if continue_on_error:
        err.write(f"{statements} statements, {len(failures)} failed"
                  f"{': ' + ', '.join(failures) if failures else ''}\n")
    elif stopped and len(files) > 1:
        err.write(f"{len(files)} files, {len(stopped)} stopped by an error: "
                  f"{', '.join(failures)}\n")
    sys.exit(1 if failures else 0)


def _await_jobs(session: sqlengine.Session, path: str, script: str,
                started: dict[str, tuple[int, str]], err: TextIO) -> list[str]:
    """The INSERTs a file started in the background ('table.dml-sync' = 'false': Flink's
    client submits them and goes on) run to their end before the command returns, as a
    job outlives Flink's client in its cluster; each one's end is said on stderr. Returns
    the failed ones (the exit status is then 1)."""
    failed = []
    for job in list(session.jobs.values()):
        try:
            job.wait()
        except SqlEngineError as e:
            _locate(e, path, script, *started.get(job.id, (0, "")))
            err.write(f"{path}: the background job {job.id} ({job.name}) failed:\n"
                      f"{render_error(e)}\n")
            failed.append(f"{path}:job {job.id}")
            continue
        rows = ", ".join(f"{n} row{'' if n == 1 else 's'} into {t}"
                         for t, n in job.rows.items()) or "no rows"
        err.write(f"[INFO] Job {job.id} ({job.name}) {job.status.lower()}: inserted {rows}\n")
    return failed


def _split(split: Callable[[str], list[tuple[int, str]]], script: str
           ) -> Iterator[tuple[int, str | SqlEngineError]]:
    """A script's statements, or the error that stops its splitting (an unterminated comment
    or string), reported as a statement's."""
    try:
        parts = split(script)
    except SqlEngineError as e:
        yield 0, e
        return
    yield from parts


def _web_view(err: TextIO, web: bool, port: int | None) -> WebHook:
    """The live web view of ``run`` (shell/web.py, imported only when asked for)."""
    from sqlengine.shell.web_hook import WebHook

    def say(message: str) -> None:
        err.write(message + "\n")
        err.flush()

    hook = WebHook(say)
    if web or port is not None:
        try:
            hook.serve(8081 if port is None else port)
        except SqlEngineError as e:
            raise click.BadParameter(e.message, param_hint="--web-port" if port is not None
                                     else "--web (port 8081; choose one with --web-port)"
                                     ) from None
    return hook


def _locate(e: SqlEngineError, path: str, script: str, offset: int, text: str) -> None:
    """Name the file, and the statement when the error has no place of its own (a job that
    failed while its rows were being read)."""
    from sqlengine.errors import Span

    e.source = path
    if e.sql is None:
        e.sql = script
    if e.span is None:
        lead = len(text) - len(text.lstrip())
        word = text.split()[0] if text.split() else text
        e.span = Span.from_offset(script, offset + lead, offset + lead + len(word))


class _Progress:
    """A live status line on stderr: rows, rows/s (over the last interval), watermark and how
    far it trails the sources' watermarks."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.shown = False

    def __call__(self, rows: int, watermark: int, lag: int | None = None) -> None:
        import datetime as dt

        now = time.monotonic()
        last_t, last_rows = getattr(self, "_last", (self.started, 0))
        rate = (rows - last_rows) / max(now - last_t, 1e-9)
        self._last = (now, rows)
        wm = "-" if watermark <= -(2**62) or watermark >= 2**62 else \
            (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=watermark)).isoformat(
                sep=" ", timespec="milliseconds")
        behind = "" if lag is None else f"  lag {lag / 1000:,.1f} s"
        self.stream.write(f"\r{rows:,} rows  {rate:,.0f} rows/s  watermark {wm}{behind}"
                          "\x1b[K")
        self.stream.flush()
        self.shown = True

    def erase(self) -> None:
        """The status line wiped (before rows are printed on the same terminal: they were
        printed after it, '16 rows  5 rows/s  watermark -+I,...')."""
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

    def clear(self) -> None:
        self.erase()
        self.started = time.monotonic()
        self._last = (self.started, 0)


class _Output:
    """Where query results go: stdout, or numbered files in a directory."""

    def __init__(self, directory: str | None, fmt: str) -> None:
        self.directory = Path(directory) if directory else None
        self.ext = {"table": "txt", "csv": "csv", "json": "json"}[fmt]
        self.count = 0
        self.files: list[TextIO] = []
        if self.directory is not None:
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise click.BadParameter(f"cannot make directory {directory!r}: "
                                         f"{e.strerror or e}", param_hint="--output") from None

    def target(self, script: str) -> TextIO | Callable[[], TextIO]:
        """stdout, or a function opening the next numbered file (called per query)."""
        directory = self.directory
        if directory is None:
            return sys.stdout

        def open_next() -> TextIO:
            self.count += 1
            path = directory / f"{Path(script).stem}-{self.count}.{self.ext}"
            try:
                f = open(path, "w", encoding="utf-8")  # noqa: SIM115
            except OSError as e:
                raise ExecutionError(f"--output: cannot write the result to {str(path)!r}: "
                                     f"{e.strerror or e}") from None
            self.files.append(f)
            return f

        return open_next

    def close(self) -> None:
        for f in self.files:
            f.close()


def _show(result: sqlengine.api.Result, fmt: str, err: TextIO,
          target: TextIO | Callable[[], TextIO], meter: _Progress | None = None) -> None:
    if result.kind == "rows" and result.query is not None:
        q = result.query
        out = target() if callable(target) else target
        start = time.monotonic()
        if q.is_bounded:
            table = q.collect()
            if meter is not None:
                meter.clear()
            out.write(render(table, fmt))
            out.flush()
            err.write(f"{table.num_rows} row{'s' if table.num_rows != 1 else ''} in set "
                      f"({time.monotonic() - start:.2f} s)\n")
        else:
            # An unbounded query: print the changelog as it arrives, until cancelled.
            header = True
            for batch in q.stream():
                import pyarrow as pa

                if meter is not None:
                    meter.erase()
                out.write(render(pa.Table.from_batches([batch]), fmt if fmt != "table"
                                 else "csv", header))
                out.flush()
                header = False
        if q.skipped_rows:
            err.write(f"warning: skipped {q.skipped_rows} malformed rows\n")
        if q.late_records_dropped:
            err.write(f"warning: dropped {q.late_records_dropped} late rows\n")
        if q.udf_rows_skipped:
            err.write(f"warning: skipped {q.udf_rows_skipped} rows a Python function failed "
                      "on\n")
    elif result.kind == "rows" and result.table is not None:
        out = target() if callable(target) else target
        out.write(render(result.table, fmt, statement=True))
    elif result.kind == "explain":
        sys.stdout.write(result.message + "\n")
    else:
        if meter is not None:
            meter.clear()
        if result.skipped_rows:
            err.write(f"warning: skipped {result.skipped_rows} malformed rows\n")
        if result.late_records_dropped:
            err.write(f"warning: dropped {result.late_records_dropped} late rows\n")
        if result.udf_rows_skipped:
            err.write(f"warning: skipped {result.udf_rows_skipped} rows a Python function "
                      "failed on\n")
        err.write(result.message + "\n")


@main.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("-D", "defines", multiple=True, metavar="KEY=VALUE")
@click.option("--format", "fmt", type=click.Choice(["text", "dot", "mermaid", "svg"]),
              default="text", show_default=True,
              help="text: the plans; dot / mermaid / svg: the JobGraph drawn (svg needs no "
              "other program)")
def explain(file: str, defines: tuple[str, ...], fmt: str) -> None:
    """Print the plans of every query and INSERT in FILE (other statements run)."""
    from sqlengine import statements as S
    from sqlengine.parser import parse_statement, split_script

    session = _session(defines)
    resume_collection()
    script = _read(file)
    drawings: list[str] = []  # (svg: one document for the whole file, written at the end)
    try:
        for offset, text in split_script(script):
            stmt = parse_statement(text, offset, script)
            if isinstance(stmt, S.QueryStmt | S.Insert):
                stmt = S.Explain((), stmt)
            if isinstance(stmt, S.Explain):
                plans = session.explain_statement(stmt, script, fmt)
                if fmt == "svg":
                    drawings.append(plans)
                else:
                    sys.stdout.write(plans + ("\n\n" if fmt == "text" else "\n"))
            else:
                session.run_statement(text, offset, script, file, collect_queries=False)
        if drawings:
            from sqlengine.api import combine_svg

            sys.stdout.write(combine_svg(drawings) + "\n")
    except BrokenPipeError:  # (`| head` has read enough: quietly, as run)
        raise
    except Exception as e:
        if not isinstance(e, SqlEngineError):
            e = internal_error(e, file)
        e.source = file
        if e.sql is None:
            e.sql = script
        sys.stderr.write(render_error(e) + "\n")
        sys.exit(1)


if __name__ == "__main__":
    entry()
