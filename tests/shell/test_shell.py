"""The interactive shell, driven for real: prompt-toolkit pipe input for line editing, a
pseudo-terminal for Ctrl-C and the full-screen table mode, and a pipe for stdin scripts."""

from __future__ import annotations

import contextlib
import io
import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyte
import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

import sqlengine
from sqlengine.shell.app import Shell, statement_complete
from sqlengine.shell.completion_engine import CatalogInfo, catalog_info, suggest
from sqlengine.shell.config import ShellConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
ORDERS = ("CREATE TABLE orders (order_id BIGINT, customer INT, amount INT) WITH ("
          "'connector' = 'datagen', 'number-of-rows' = '6', 'rows-per-second' = '0', "
          "'seed' = '1', 'fields.customer.min' = '1', 'fields.customer.max' = '2', "
          "'fields.amount.min' = '1', 'fields.amount.max' = '9')")


def drive(chunks: list[str], *, history: str | None = None, mode: str = "tableau",
          session: sqlengine.Session | None = None) -> str:
    """Type ``chunks`` into a real Shell (a pause between them, as a person would)."""
    s = session or sqlengine.connect()
    s.execute(ORDERS)
    s.set("sql-client.execution.result-mode", mode)
    out = io.StringIO()
    with create_pipe_input() as inp:
        def feed() -> None:
            for chunk in [*chunks, "\x04"]:
                time.sleep(0.25)
                inp.send_text(chunk)

        threading.Thread(target=feed, daemon=True).start()
        Shell(s, ShellConfig(history_file=history, timing=False), out, inp,
              DummyOutput()).run()
    return out.getvalue()


def test_statement_complete() -> None:
    assert not statement_complete("SELECT 1")
    assert statement_complete("SELECT 1;")
    assert not statement_complete("SELECT ';'")
    assert statement_complete("SELECT 1 -- done\n;")
    assert not statement_complete("SELECT 1 /* ; */")
    assert statement_complete("quit")
    assert statement_complete("\\timing")
    # (other shells' ways to ask for help: they waited for a ';' at a continuation prompt)
    assert all(statement_complete(h) for h in ("\\h", "\\?", ".help", "?"))


INFO = CatalogInfo({"orders": ["order_id", "customer", "amount"],
                    "customers": ["id", "name", "city"]}, ["UPPER", "COUNT"],
                   {"filesystem": ["path", "format", "csv.field-delimiter"],
                    "datagen": ["rows-per-second", "number-of-rows"]})


@pytest.mark.parametrize(("before", "after", "want"), [
    ("SELECT o.am", " FROM orders o", ["amount"]),                       # after an alias
    ("SELECT a FROM orders o JOIN customers c ON o.customer = c.", "", ["id", "name", "city"]),
    ("SELECT amount FROM orders WHERE cu", "", ["customer"]),            # in WHERE
    ("SELECT customer, COUNT(*) FROM orders GROUP BY cus", "", ["customer"]),
    ("SELECT * FROM ord", "", ["orders"]),
    ("DESCRIBE cust", "", ["customers"]),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'da", "", ["datagen"]),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'fo", "", ["format"]),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'format' = 'pa", "",
     ["parquet"]),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '5', '", "",
     ["number-of-rows"]),
    ("SET 'execution.run", "", ["execution.runtime-mode"]),
    ("SEL", "", ["SELECT"]),
])
def test_completion_engine(before: str, after: str, want: list[str]) -> None:
    got = [s.text for s in suggest(before, INFO, after)]
    assert got[: len(want)] == want


def test_catalog_info_sees_tables_views_and_options() -> None:
    s = sqlengine.connect()
    s.execute(ORDERS + "; CREATE VIEW big AS SELECT order_id AS id FROM orders")
    info = catalog_info(s)
    assert info.tables["orders"] == ["order_id", "customer", "amount"]
    assert info.tables["big"] == ["id"]
    assert "path" in info.options["filesystem"] and "UPPER" in info.functions


def test_multiline_statement_with_a_completed_column() -> None:
    out = drive(["SELECT customer, SUM(amo", "\t", ") AS total\r", "FROM orders\r",
                 "GROUP BY customer;\r"], mode="changelog")
    # The completed query ran: its changelog rows are there, and no error.
    assert "[ERROR]" not in out
    lines = [x for x in out.splitlines() if re.match(r"[+-][IUD]\[", x)]
    assert lines and all(re.fullmatch(r"[+-][IUD]\[[12], \d+\]", x) for x in lines)


def test_error_shows_a_caret_and_the_shell_goes_on() -> None:
    out = drive(["SELECT nope\rFROM orders;\r", "SELECT 1 + 1 AS two;\r"])
    assert "[ERROR] 1:8: unknown column 'nope'" in out
    assert "  SELECT nope\n         ^^^^" in out
    assert "| 2    |" in out or "|  2  " in out or re.search(r"\|\s+2\s+\|", out)


def test_tableau_and_changelog_modes_on_a_streaming_query() -> None:
    sql = "SELECT customer, COUNT(*) AS n FROM orders GROUP BY customer;\r"
    tableau = drive([sql], mode="tableau")
    assert re.search(r"\|\s+op\s+\|\s+customer\s+\|\s+n\s+\|", tableau)
    assert re.search(r"\| \+U\s+\|", tableau) and "Received a total of" in tableau
    changelog = drive([sql], mode="changelog")
    kinds = re.findall(r"^([+-][IUD])\[", changelog, re.M)
    assert kinds[0] == "+I" and "-U" in kinds and "+U" in kinds


def test_history_is_kept_across_two_sessions(tmp_path: Path) -> None:
    hist = str(tmp_path / "history")
    drive(["SELECT 42 AS answer;\r"], history=hist)
    assert "SELECT 42 AS answer;" in Path(hist).read_text()
    out = drive(["\x1b[A", "\r"], history=hist)  # Up arrow recalls it, Enter runs it again
    assert re.search(r"\|\s+42\s+\|", out)


def test_meta_commands(tmp_path: Path) -> None:
    script = tmp_path / "more.sql"
    script.write_text("CREATE VIEW v AS SELECT 7 AS seven;\nSELECT * FROM v;\n")
    out = drive(["help\r", f"SOURCE '{script}';\r", "SHOW TABLES;\r", "\\timing\r",
                 "EXPLAIN SELECT customer FROM orders;\r"])
    assert "SOURCE 'file.sql'" in out and re.search(r"\|\s+7\s+\|", out)
    assert "| orders" in out and "Timing is on." in out and "== Job Graph ==" in out


def test_config_file_sets_keys(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('result_mode = "changelog"\ntiming = false\nhistory_file = false\n'
                   '[set]\n"execution.runtime-mode" = "batch"\n"parallelism.default" = 2\n')
    c = load_config(str(cfg))
    assert (c.result_mode, c.timing, c.history_file, c.options) == (
        "changelog", False, None, {"execution.runtime-mode": "batch",
                                   "parallelism.default": "2"})
    cfg.write_text('colour = "blue"\n')
    with pytest.raises(ValueError, match="unknown key 'colour'"):
        load_config(str(cfg))
    cfg.write_text('result_mode = "grid"\n')
    with pytest.raises(ValueError, match="'result_mode' must be one of"):
        load_config(str(cfg))
    cfg.write_text('timing = "off"\n')
    with pytest.raises(ValueError, match="'timing' must be true or false"):
        load_config(str(cfg))
    cfg.write_text('timing = true\nstyle = \n')
    with pytest.raises(ValueError, match=r"config.toml: .*line 2"):
        load_config(str(cfg))


def test_the_user_config_lives_in_the_platform_config_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlengine.shell.config import user_config_path

    monkeypatch.delenv("SQLENGINE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert user_config_path() == tmp_path / "sqlengine" / "config.toml"
    (tmp_path / "sqlengine").mkdir()
    (tmp_path / "sqlengine" / "config.toml").write_text('style = "monokai"\n')
    assert load_config().style == "monokai"
    monkeypatch.setenv("SQLENGINE_CONFIG", str(tmp_path / "other.toml"))
    (tmp_path / "other.toml").write_text("timing = false\n")
    c = load_config()
    assert (c.style, c.timing) == ("default", False)


def test_piped_stdin_runs_statements_in_order() -> None:
    script = ORDERS + ";\nSELECT COUNT(*) AS n FROM orders;\nSELECT nope;\nSHOW TABLES;\n"
    proc = subprocess.run([sys.executable, "-m", "sqlengine.shell.cli"], input=script, text=True,
                          capture_output=True, cwd=ROOT, timeout=60, check=False)
    out = proc.stdout
    assert proc.returncode == 1  # one statement failed
    assert out.index("Execute statement succeeded") < out.index("Received a total") \
        < out.index("[ERROR]") < out.index("table name")



def test_source_of_a_bad_file_is_an_error_and_the_shell_goes_on(tmp_path: Path) -> None:
    # (a file that is not UTF-8 ended the shell with a UnicodeDecodeError traceback, a file
    # sourcing itself with a RecursionError one)
    (tmp_path / "bad8.sql").write_bytes(b"SELECT \xff 1;\n")
    (tmp_path / "self.sql").write_text("SELECT 1;\nSOURCE 'self.sql';\n")
    script = "SOURCE 'bad8.sql';\nSOURCE 'self.sql';\nSOURCE 'nowhere.sql';\nSELECT 5 AS five;\n"
    proc = subprocess.run([sys.executable, "-m", "sqlengine.shell.cli"], input=script,
                          text=True, capture_output=True, cwd=tmp_path, timeout=120,
                          check=False)
    out = proc.stdout + proc.stderr
    assert "Traceback" not in out
    assert "[ERROR] SOURCE bad8.sql:1:8: not UTF-8 text (byte 0xff)" in out
    assert "[ERROR] SOURCE 'self.sql': files source each other more than 32 deep" in out
    assert "[ERROR] SOURCE nowhere.sql: No such file or directory" in out
    assert re.search(r"\|\s+5\s+\|", out)


class Terminal:
    """The shell in a pseudo-terminal, as a person's terminal runs it."""

    def __init__(self, tmp: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child
            os.environ.update({"HOME": str(tmp), "TERM": "xterm", "COLUMNS": "100",
                               "PROMPT_TOOLKIT_NO_CPR": "1",
                               "LINES": "30"})
            os.chdir(ROOT)
            os.execv(sys.executable, [sys.executable, "-m", "sqlengine.shell.cli", "shell"])
        import fcntl
        import struct
        import termios

        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        self.seen = b""
        self.screen = pyte.Screen(100, 30)
        self.stream = pyte.ByteStream(self.screen)

    def expect(self, pattern: str, timeout: float = 20) -> float:
        start = time.monotonic()
        while not re.search(pattern.encode(), self.seen):
            left = timeout - (time.monotonic() - start)
            if left <= 0:
                msg = f"{pattern!r} not seen; got {self.seen[-800:]!r}"
                raise AssertionError(msg)
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.2))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    break
                self.seen += data
                self.stream.feed(data)
        return time.monotonic() - start

    def display(self) -> str:
        """What the screen shows now (the emulated terminal's text)."""
        return "\n".join(self.screen.display)

    def expect_screen(self, pattern: str, timeout: float = 30) -> str:
        start = time.monotonic()
        while not re.search(pattern, self.display()):
            if time.monotonic() - start > timeout:
                msg = f"{pattern!r} not on screen:\n{self.display()}"
                raise AssertionError(msg)
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                data = os.read(self.fd, 65536)
                self.seen += data
                self.stream.feed(data)
        return self.display()

    def send(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.fixture
def terminal(tmp_path: Path):  # type: ignore[no-untyped-def]
    t = Terminal(tmp_path)
    yield t
    t.close()


STREAM = ("CREATE TABLE g (k STRING, v INT) WITH ('connector' = 'datagen', "
          "'rows-per-second' = '50', 'fields.k.length' = '1', 'fields.v.min' = '1', "
          "'fields.v.max' = '9');\r")


@pytest.mark.slow
def test_ctrl_c_cancels_a_long_query_and_the_shell_survives(terminal: Terminal) -> None:
    terminal.expect("sqlengine>")
    terminal.send(STREAM)
    terminal.expect("Execute statement succeeded")
    terminal.send("SELECT k, COUNT(*) AS n FROM g GROUP BY k;\r")
    terminal.expect(r"\| \+I ")
    time.sleep(0.5)
    terminal.send("\x03")
    assert terminal.expect("Query cancelled") < 1.0
    terminal.send("SELECT 'still here' AS s;\r")
    terminal.expect("Received a total of 1 row")
    time.sleep(0.5)  # the prompt is back (and reading keys) before Ctrl-D
    terminal.send("\x04")
    terminal.expect("Bye")


@pytest.mark.slow
def test_table_mode_is_a_live_table(terminal: Terminal) -> None:
    terminal.expect("sqlengine>")
    terminal.send("SET 'sql-client.execution.result-mode' = 'table';\r")
    terminal.expect("succeeded")
    terminal.send("CREATE TABLE b (k STRING, v INT) WITH ('connector' = 'datagen', "
                  "'number-of-rows' = '40', 'rows-per-second' = '20', 'fields.k.length' = "
                  "'1', 'fields.v.min' = '1', 'fields.v.max' = '9');\r")
    terminal.expect("succeeded")
    terminal.send("SELECT MOD(v, 5) AS k, COUNT(*) AS n FROM b GROUP BY MOD(v, 5);\r")
    running = terminal.expect_screen("RUNNING")
    assert "Q quit" in running
    done = terminal.expect_screen("FINISHED")
    rows = re.search(r"(\d+) rows, (\d+) changes", done)
    assert rows is not None
    table = [line for line in done.splitlines()[3:] if line.strip()]
    assert len(table) == int(rows.group(1))  # one screen line per current row
    assert sum(int(line.split()[1]) for line in table) == 40  # counts add up to the rows
    terminal.send("q")
    terminal.expect("Received a total of")


def test_tableau_numbers_are_never_cut() -> None:
    # (the first batch's values set the widths: a later BIGINT showed as '-582701871105990...')
    import pyarrow as pa

    from sqlengine.shell.results import show_tableau

    first = pa.record_batch({"op": ["+I"], "a": pa.array([5], pa.int64()),
                             "d": pa.array([1.5]), "s": ["x"]})
    later = pa.record_batch({"op": ["+I"], "a": pa.array([-5827018711059903333], pa.int64()),
                             "d": pa.array([-1.7976931348623157e308]), "s": ["y" * 60]})
    out = io.StringIO()
    assert show_tableau(iter([first, later]), out, False) == 2
    text = out.getvalue()
    assert "| -5827018711059903333 |" in text and "-1.7976931348623157E308 " in text
    assert "y" * 60 not in text and "..." in text  # (a long string is still cut)
