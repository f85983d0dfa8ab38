"""The interactive SQL shell: prompt-toolkit prompt, statements ending in ';', three result
modes, Ctrl-C to cancel a query, Ctrl-D to leave. With a non-terminal stdin it runs the
statements piped in, in order, and prints plainly."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import sqlengine
from sqlengine.errors import SqlEngineError
from sqlengine.options import local_time_zone
from sqlengine.shell.config import ShellConfig, load_config
from sqlengine.shell.formatting import render_table
from sqlengine.shell.results import show_changelog, show_table, show_tableau
from sqlengine.shell.web_hook import WebHook

if TYPE_CHECKING:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyPressEvent

MAX_SOURCE_DEPTH = 32

HELP = """Statements end with ';' and may span lines. Besides SQL:
  help                 this text
  SOURCE 'file.sql';   run the statements of a file
  SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau';
  \\timing              print how long each statement took (toggle)
  quit, exit, Ctrl-D   leave the shell
Ctrl-C (or Ctrl-D) cancels a running query; Ctrl-C clears the line at the prompt;
Ctrl-R searches history.
"""

_HELP = ("help", "\\h", "\\?", "\\help", ".help", "?")  # (other shells' ways to ask)
_META = (*_HELP, "quit", "exit", "\\q", "\\timing", "\\t")


def statement_complete(text: str) -> bool:
    """Whether Enter should run the buffer: a meta command, or text ending with ';' outside
    quotes and comments."""
    stripped = text.strip()
    if not stripped:
        return False
    if stripped.rstrip(";").strip().lower() in _META:
        return True
    from sqlengine.parser import split_script

    try:
        parts = split_script(stripped)
    except SqlEngineError:  # (a statement set without its END yet, an open comment: more)
        return False
    if not parts:
        return stripped.endswith(";")
    offset, last = parts[-1]
    return stripped[offset + len(last):].strip().startswith(";")


class _QueryKeys:
    """The keys typed at the terminal while a query prints rows (tableau, changelog).

    The terminal then reads key by key instead of line by line (echo and Ctrl-C's signal as
    before), so Ctrl-D stops the query as Ctrl-C does, at once, instead of waiting in the
    terminal's line until the query ends. What else was typed meanwhile is kept
    (``typed``) for the next prompt, as the terminal's line would have kept it."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.typed = ""
        self._raw = b""
        self._saved: list | None = None
        self._wake: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> _QueryKeys:
        import termios

        try:
            self._saved = termios.tcgetattr(self.fd)
        except termios.error:
            return self
        mode = termios.tcgetattr(self.fd)
        mode[3] &= ~termios.ICANON
        mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
        termios.tcsetattr(self.fd, termios.TCSANOW, mode)
        self._wake = os.pipe()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        import select
        import signal

        assert self._wake is not None
        while True:
            ready, _, _ = select.select([self.fd, self._wake[0]], [], [])
            if self._wake[0] in ready:
                return
            try:
                data = os.read(self.fd, 1024)
            except OSError:
                return
            if not data:
                return
            if b"\x04" in data:  # Ctrl-D: stop the query (the main thread's KeyboardInterrupt)
                self._raw += data[: data.index(b"\x04")]
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
                return
            self._raw += data

    def __exit__(self, *exc: object) -> None:
        import termios

        try:
            if self._thread is not None and self._wake is not None:
                os.write(self._wake[1], b".")
                self._thread.join()
                os.close(self._wake[0])
                os.close(self._wake[1])
        finally:  # (a Ctrl-D just as the query ended interrupts the join: still restore)
            if self._saved is not None:
                termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)
            self._keep_typed()

    def _keep_typed(self) -> None:
        text = ""
        for ch in self._raw.decode(errors="ignore"):
            if ch in "\x7f\b":  # (erase, as the terminal's line would have)
                text = text[:-1]
            elif ch == "\r" or ch == "\n":
                text += "\n"
            elif ch >= " " or ch == "\t":
                text += ch
        self.typed = text.rstrip("\n")


class Shell:
    """One interactive session. ``input``/``output`` are prompt-toolkit's (tests pass pipes)."""

    def __init__(self, session: sqlengine.Session | None = None,
                 config: ShellConfig | None = None, out: TextIO | None = None,
                 pt_input: object = None, pt_output: object = None) -> None:
        self.config = config or load_config()
        self.session = session or sqlengine.connect()
        # (as Flink's SQL client: an INSERT runs in the background; SHOW JOBS, STOP JOB)
        self.session.background_inserts = True
        for k, v in self.config.options.items():
            self.session.set(k, v)
        if "sql-client.execution.result-mode" not in self.session.options:
            self.session.set("sql-client.execution.result-mode", self.config.result_mode)
        self.out = out or sys.stdout
        self.pt_input = pt_input
        self.pt_output = pt_output
        self.timing = self.config.timing
        self.errors = 0
        self._sourcing = 0  # (SOURCE files being run, one inside the other)
        self.typed_ahead = ""  # typed while a query printed: the next prompt's text
        # The live web view of the session's jobs, while 'rest.port' names a port.
        self.web = WebHook(self._info)

    # -- running statements --------------------------------------------------------------
    def run_text(self, text: str, source: str | None = None) -> bool:
        """Run every statement of ``text`` in order (a failing one does not stop the rest);
        False when the shell should end."""
        from sqlengine.parser import split_script

        try:
            parts = split_script(text)
        except SqlEngineError as e:
            self._error(str(e))
            return True
        if not parts and text.strip():
            parts = [(0, text.strip())]
        for offset, stmt in parts:
            meta = self._meta(stmt)
            if meta == "quit":
                return False
            if meta == "done":
                continue
            self._web_follow()
            self.web.begin(stmt)
            error = None
            try:
                self._show(self.session.run_statement(stmt, offset, text, source,
                                                      collect_queries=False))
            except SqlEngineError as e:
                error = e.message
                self._error(str(e))
            except BrokenPipeError:  # (`| head` has read enough: click exits quietly)
                raise
            except Exception as e:
                error = f"unexpected {type(e).__name__}: {e}"
                self._error(f"{error} (this is a bug in sqlengine)")
            self.web.end(error)
            self._web_follow()
        return True

    def _info(self, message: str) -> None:
        self.out.write(message + "\n")
        self.out.flush()

    def _web_follow(self) -> None:
        """Start, move or stop the web view as 'rest.port' says (SET 'rest.port' = '8081')."""
        try:
            self.web.watch(self.session)
        except SqlEngineError as e:
            self.session.reset("rest.port")  # (not serving: the option says so)
            self._error(str(e))

    def close(self) -> None:
        """The session's web view stops (background jobs end with the process)."""
        self.web.stop()

    def _meta(self, stmt: str) -> str | None:
        """Handle a shell command: "quit", "done", or None for a SQL statement."""
        import re

        command = stmt.strip().rstrip(";").strip()
        low = command.lower()
        if low in ("quit", "exit", "\\q"):
            return "quit"
        if low in _HELP:
            self.out.write(HELP)
            return "done"
        if low in ("\\timing", "\\t"):
            self.timing = not self.timing
            self.out.write(f"Timing is {'on' if self.timing else 'off'}.\n")
            return "done"
        m = re.fullmatch(r"(?is)source\s+'([^']+)'", command)
        if m:
            from sqlengine.shell.sql_file import SqlFileError, read_sql

            path = Path(m.group(1)).expanduser()
            if self._sourcing >= MAX_SOURCE_DEPTH:
                self._error(f"SOURCE {str(path)!r}: files source each other more than "
                            f"{MAX_SOURCE_DEPTH} deep (does a file source itself?)")
                return "done"
            try:
                script = read_sql(path)
            except SqlFileError as e:
                self._error(f"SOURCE {e}")
                return "done"
            self._sourcing += 1
            try:
                return "done" if self.run_text(script, source=str(path)) else "quit"
            finally:
                self._sourcing -= 1
        return None

    def _error(self, message: str) -> None:
        self.errors += 1
        self.out.write(f"[ERROR] {message}\n")
        self.out.flush()

    def _show(self, result: sqlengine.api.Result) -> None:
        with local_time_zone(self.session.options):  # (TIMESTAMP_LTZ values shown in it)
            self._show_result(result)

    def _show_result(self, result: sqlengine.api.Result) -> None:
        started = time.monotonic()
        if result.kind == "rows" and result.query is not None:
            self._query(result.query, started)
        elif result.kind == "rows" and result.table is not None:
            self.out.write(render_table(result.table, ""))  # (DESCRIBE, SHOW: as Flink's)
            n = result.table.num_rows
            self.out.write(f"{n} row{'s' if n != 1 else ''} in set\n")
        elif result.kind == "explain":
            self.out.write(result.message + "\n")
        else:
            self.out.write(result.message + "\n")
            if result.skipped_rows:
                self.out.write(f"[WARNING] skipped {result.skipped_rows} malformed rows\n")
        self.out.flush()

    def _query(self, q: sqlengine.Query, started: float) -> None:
        mode = self.session.options.get("sql-client.execution.result-mode", "tableau")
        updating = self.session.options.get("execution.runtime-mode") != "batch"
        stream = q.stream()
        count = 0
        cancelled = False
        table = mode == "table" and self.pt_input is not False
        # at a terminal, Ctrl-D stops a query that prints its rows (as Ctrl-C does)
        keys = _QueryKeys(sys.stdin.fileno()) if not table and self._at_terminal() else None
        try:
            with keys if keys is not None else contextlib.nullcontext():
                if table:
                    count = show_table(stream, "sqlengine", self.pt_input, self.pt_output)
                elif mode == "changelog":
                    count = show_changelog(stream, self.out)
                else:
                    count = show_tableau(stream, self.out, updating)
        except KeyboardInterrupt:
            cancelled = True
        except SqlEngineError as e:
            self._error(str(e))
            return
        except Exception as e:
            self._error(f"unexpected {type(e).__name__}: {e} (this is a bug in sqlengine)")
            return
        finally:
            stream.close()
            if keys is not None:
                self.typed_ahead = keys.typed
        secs = time.monotonic() - started
        if cancelled:
            self.out.write("[INFO] Query cancelled.\n")
        else:
            timing = f" ({secs:.2f} s)" if self.timing else ""
            self.out.write(f"Received a total of {count} row{'s' if count != 1 else ''}"
                           f"{timing}\n")
        if q.late_records_dropped:
            self.out.write(f"[WARNING] dropped {q.late_records_dropped} late rows\n")
        if q.udf_rows_skipped:
            self.out.write(f"[WARNING] skipped {q.udf_rows_skipped} rows a Python function "
                           "failed on\n")
        if q.skipped_rows:
            self.out.write(f"[WARNING] skipped {q.skipped_rows} malformed rows\n")

    def _at_terminal(self) -> bool:
        """Whether this shell reads a person's terminal (not tests' pipes, not a script)."""
        if self.pt_input is not None:
            return False
        try:
            return sys.stdin.isatty()
        except (AttributeError, ValueError):
            return False

    # -- the prompt -----------------------------------------------------------------------
    def prompt_session(self) -> PromptSession[str]:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.lexers import PygmentsLexer
        from prompt_toolkit.styles import style_from_pygments_cls
        from pygments.styles import get_style_by_name

        from sqlengine.shell.completer import SqlCompleter
        from sqlengine.shell.lexer import FlinkSqlLexer

        kb = KeyBindings()

        @kb.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            buf = event.current_buffer
            if statement_complete(buf.text):
                buf.validate_and_handle()
            else:
                buf.insert_text("\n")

        @kb.add("tab")
        def _tab(event: KeyPressEvent) -> None:
            buf = event.current_buffer
            if buf.complete_state:
                buf.complete_next()
            else:
                buf.start_completion(select_first=True)

        history_file = self.config.history_file
        history = FileHistory(str(Path(history_file).expanduser())) if history_file \
            else InMemoryHistory()
        try:
            style = style_from_pygments_cls(get_style_by_name(self.config.style))
        except Exception:
            style = None
        return PromptSession(
            message="sqlengine> ", multiline=True, key_bindings=kb, history=history,
            lexer=PygmentsLexer(FlinkSqlLexer), completer=SqlCompleter(self.session),
            complete_while_typing=False, enable_history_search=False, style=style,
            prompt_continuation=lambda width, line, soft: "         > ".rjust(width),
            input=self.pt_input, output=self.pt_output)

    def run(self) -> int:
        """The read-eval-print loop; returns the exit code."""
        ps = self.prompt_session()
        self.out.write("sqlengine shell. Type help for help, quit or Ctrl-D to leave.\n")
        while True:
            typed, self.typed_ahead = self.typed_ahead, ""
            try:
                text = ps.prompt(default=typed)
            except KeyboardInterrupt:
                continue
            except EOFError:
                break
            if not text.strip():
                continue
            try:
                if not self.run_text(text):
                    break
            except KeyboardInterrupt:  # (Ctrl-C or Ctrl-D as a query ended: nothing to stop)
                self.out.write("\n")
        self.close()
        self.out.write("Bye.\n")
        return 0


def run_piped(stream: TextIO, out: TextIO, session: sqlengine.Session | None = None) -> int:
    """Statements from a non-terminal stdin, in order, printed plainly (tableau, never the
    full-screen table); 1 if any statement failed."""
    config = load_config()
    shell = Shell(session, config, out, pt_input=False)
    mode = shell.session.options.get("sql-client.execution.result-mode")
    if mode == "table":
        shell.session.set("sql-client.execution.result-mode", "tableau")
    try:
        shell.run_text(stream.read())
    finally:
        shell.close()
    return 1 if shell.errors else 0
