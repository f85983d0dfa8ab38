"""The shell in a real terminal, as a person types: tmux runs ``sqlengine`` in a 120x40 pane,
``send-keys`` types (literal text, then Enter; Ctrl-C, Ctrl-D) and ``capture-pane`` reads
what the screen shows. Every wait polls the pane until the expected text is there (bounded,
generous: the machine may be busy); no fixed sleep decides a check."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from wcwidth import wcswidth, wcwidth

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(
    TMUX is None, reason="tmux is not installed: these checks drive the shell in a real "
    "terminal through tmux (apt-get install tmux)")

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # seconds, at most, for anything to appear
POLL = 0.2

ORDERS = ("CREATE TABLE orders (order_id BIGINT, customer INT, amount INT) WITH ("
          "'connector' = 'datagen', 'number-of-rows' = '6', 'rows-per-second' = '0', "
          "'seed' = '1', 'fields.customer.min' = '1', 'fields.customer.max' = '2', "
          "'fields.amount.min' = '1', 'fields.amount.max' = '9');")
# endless: no number-of-rows (a streaming query on it runs until cancelled)
ENDLESS = ("CREATE TABLE g (k STRING, v INT) WITH ('connector' = 'datagen', "
           "'rows-per-second' = '20', 'fields.k.length' = '10', 'fields.v.min' = '1', "
           "'fields.v.max' = '9');")


class Pane:
    """``sqlengine`` in a tmux pane of its own tmux server (nothing shared with a person's
    tmux), in a fresh directory with HOME there (no history or configuration of theirs)."""

    def __init__(self, home: Path) -> None:
        self.server = f"sqlengine-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.target = "shell"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TMUX", "SQLENGINE"))}
        env.update({"HOME": str(home), "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
                    "TERM": "xterm-256color"})
        self.env = env
        # The shell's exit status is printed after it (tmux's pane_dead_status is sometimes
        # left empty for a pane that has died); remain-on-exit keeps the pane to read it.
        shell = shlex.join([sys.executable, "-m", "sqlengine.shell.cli"])
        script = shell + '; echo "[shell exited: $?]"'
        command = "sh -c " + shlex.quote(script)
        self.tmux("start-server", ";", "set-option", "-g", "remain-on-exit", "on", ";",
                  "set-option", "-g", "history-limit", "5000", ";",
                  "new-session", "-d", "-x", "120", "-y", "40", "-s", self.target,
                  "-c", str(home), command)

    def tmux(self, *args: str) -> str:
        done = subprocess.run([TMUX or "tmux", "-u", "-L", self.server, *args],
                              capture_output=True, text=True, env=self.env, timeout=WAIT,
                              check=False)
        if done.returncode != 0:
            msg = f"tmux {' '.join(args)}: {done.stderr.strip()}"
            raise AssertionError(msg)
        return done.stdout

    def type(self, text: str) -> None:
        """Type ``text`` literally (no Enter). tmux reads an argument ending in ';' as its
        own command separator, so that ';' goes escaped."""
        self.tmux("send-keys", "-t", self.target, "-l",
                  text[:-1] + "\\;" if text.endswith(";") else text)

    def key(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.target, *keys)

    def line(self, text: str) -> None:
        """Type a line and press Enter."""
        self.type(text)
        self.key("Enter")

    def screen(self) -> str:
        """The pane's text, with what has scrolled off the top."""
        return self.tmux("capture-pane", "-p", "-t", self.target, "-S", "-")

    def wait_for(self, pattern: str, after: int = 0, count: int = 1) -> str:
        """Poll the pane until ``pattern`` shows ``count`` times (after the first ``after``
        characters of the screen); returns the screen."""
        deadline = time.monotonic() + WAIT
        while True:
            text = self.screen()
            if len(re.findall(pattern, text[after:], re.M)) >= count:
                return text
            if time.monotonic() > deadline:
                msg = f"{pattern!r} not on screen within {WAIT:.0f} s:\n{text[-3000:]}"
                raise AssertionError(msg)
            time.sleep(POLL)

    def prompt(self) -> str:
        """Wait for an empty prompt on the last line in use (the shell is reading)."""
        return self.wait_for(r"^sqlengine>\s*\Z")

    def mark(self) -> int:
        """Where the screen's last line in use (the prompt) starts: what comes from here on
        is new."""
        text = self.screen().rstrip()
        return text.rfind("\n") + 1

    def run(self, statement: str, done: str) -> str:
        """Type a statement, Enter, and wait for ``done`` after it and the next prompt;
        returns the part of the screen from the statement's prompt on."""
        before = self.mark()
        self.line(statement)
        self.wait_for(done, after=before)
        text = self.prompt()
        return text[before:]

    def status(self) -> tuple[bool, int | None]:
        """Whether the shell's process has ended, and its exit status (None while it runs)."""
        found = re.search(r"^\[shell exited: (\d+)\]$", self.screen(), re.M)
        return (True, int(found.group(1))) if found else (False, None)

    def wait_exit(self) -> int:
        """Wait for the shell's process to end; its exit status."""
        deadline = time.monotonic() + WAIT
        while True:
            dead, code = self.status()
            if dead and code is not None:
                return code
            if time.monotonic() > deadline:
                msg = f"the shell did not exit within {WAIT:.0f} s:\n{self.screen()[-2000:]}"
                raise AssertionError(msg)
            time.sleep(POLL)

    def close(self) -> None:
        subprocess.run([TMUX or "tmux", "-L", self.server, "kill-server"],
                       capture_output=True, env=self.env, timeout=WAIT, check=False)


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    p = Pane(tmp_path)
    try:
        p.wait_for(r"sqlengine shell\. Type help")
        p.prompt()
        yield p
    finally:
        p.close()


def columns(line: str, chars: str) -> list[int]:
    """The terminal columns of the border characters of a table line (wide characters count
    twice)."""
    out, col = [], 0
    for ch in line:
        if ch in chars:
            out.append(col)
        col += max(wcwidth(ch), 0)
    return out


def table_lines(text: str) -> list[str]:
    return [x.rstrip() for x in text.splitlines() if re.match(r"[+|]", x)]


def test_a_statement_over_several_lines(pane: Pane) -> None:
    pane.run(ORDERS, r"\[INFO\] Execute statement succeeded")
    before = pane.mark()
    pane.line("SELECT customer,")
    pane.wait_for(r"^\s+>$", after=before)  # Enter before the ';': a continuation line
    pane.line("  SUM(amount) AS total")
    pane.line("FROM orders")
    pane.line("GROUP BY customer;")
    pane.wait_for(r"Received a total of \d+ rows", after=before)
    text = pane.prompt()[before:]
    assert re.search(r"^sqlengine> SELECT customer,\n\s+>   SUM\(amount\) AS total\n"
                     r"\s+> FROM orders\n\s+> GROUP BY customer;$", text, re.M), text
    assert re.search(r"^\|\s+op\s+\|\s+customer\s+\|\s+total\s+\|$", text, re.M), text
    assert "[ERROR]" not in text


def test_wide_characters_keep_the_table_borders_in_line(pane: Pane) -> None:
    text = pane.run("SELECT * FROM (VALUES ('日本語', 1), ('🚀 go', 22), ('plain', 333), "
                    "('中文字符串', 4444)) AS t(name, n);", r"Received a total of 4 rows")
    # typed through the terminal, the wide characters came back as typed
    assert "('日本語', 1), ('🚀 go', 22)" in text
    lines = table_lines(text)
    assert any("日本語" in x for x in lines) and any("🚀 go" in x for x in lines)
    assert any("中文字符串" in x for x in lines)
    widths = {wcswidth(x) for x in lines}
    assert len(widths) == 1, "\n".join(f"{wcswidth(x):3} {x}" for x in lines)
    rules = {tuple(columns(x, "+")) for x in lines if x.startswith("+")}
    cells = {tuple(columns(x, "|")) for x in lines if x.startswith("|")}
    assert len(rules) == 1 and cells == rules, "\n".join(lines)  # every '|' under a '+'


def test_an_error_puts_its_caret_under_the_column(pane: Pane) -> None:
    pane.run(ORDERS, r"succeeded")
    text = pane.run("SELECT customer, nope FROM orders;", r"\[ERROR\]")
    assert "[ERROR] 1:18: unknown column 'nope'" in text
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  SELECT customer, nope"))
    caret = lines[at + 1]
    assert caret.strip() == "^^^^"
    assert caret.index("^") == lines[at].index("nope")  # under the unknown column
    # the shell goes on
    assert "Received a total of 1 row" in pane.run("SELECT 1 + 1 AS two;", r"Received a total")


def test_the_caret_counts_wide_characters_twice(pane: Pane) -> None:
    pane.run(ORDERS, r"succeeded")
    text = pane.run("SELECT '日本語' AS s, nope FROM orders;", r"\[ERROR\]")
    lines = text.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("  SELECT '日本語'"))
    source, caret = lines[at], lines[at + 1]
    assert wcswidth(caret[: caret.index("^")]) == wcswidth(source[: source.index("nope")])


def test_show_tables_and_describe(pane: Pane) -> None:
    pane.run(ORDERS, r"succeeded")
    text = pane.run("SHOW TABLES;", r"row in set|rows in set")
    assert re.search(r"^\|\s+orders\s+\|$", text, re.M), text
    text = pane.run("DESCRIBE orders;", r"rows in set")
    for column, kind in (("order_id", "BIGINT"), ("customer", "INT"), ("amount", "INT")):
        assert re.search(rf"^\|\s+{column}\s+\|\s+{kind}\s+\|", text, re.M), text
    lines = table_lines(text)
    assert len({wcswidth(x) for x in lines}) == 1
    assert {tuple(columns(x, "+")) for x in lines if x.startswith("+")} == \
        {tuple(columns(x, "|")) for x in lines if x.startswith("|")}


def rows_of(text: str) -> list[str]:
    return re.findall(r"^\| \+I +\| (\w{10}) +\|", text, re.M)


def test_ctrl_c_cancels_an_endless_query_and_the_shell_answers(pane: Pane) -> None:
    pane.run("SET 'sql-client.execution.result-mode' = 'tableau';", r"succeeded")
    pane.run(ENDLESS, r"succeeded")
    before = pane.mark()
    pane.line("SELECT k, v FROM g;")
    pane.wait_for(r"^\| \+I ", after=before, count=3)  # rows are coming
    pane.key("C-c")
    text = pane.wait_for(r"\[INFO\] Query cancelled\.", after=before)
    pane.prompt()
    assert "Received a total" not in text[before:]
    rows = rows_of(text[before:])
    assert len(rows) == len(set(rows))  # no row twice
    text = pane.run("SELECT 'still here' AS s;", r"Received a total of 1 row")
    assert re.search(r"^\| \+I\s+\| still here \|$", text, re.M), text


def test_ctrl_d_during_a_query_stops_it_and_no_row_shows_twice(pane: Pane) -> None:
    pane.run(ENDLESS, r"succeeded")
    before = pane.mark()
    pane.line("SELECT k, v FROM g;")
    pane.wait_for(r"^\| \+I ", after=before, count=3)
    pane.key("C-d")
    pane.wait_for(r"\[INFO\] Query cancelled\.", after=before)
    text = pane.prompt()
    assert pane.status() == (False, None)  # the query stopped, not the shell
    out = text[before:]
    rows = rows_of(out)
    assert len(rows) >= 3 and len(rows) == len(set(rows)), out
    # the last row printed once, then the cancellation; nothing printed after it
    tail = out[out.index("Query cancelled"):].splitlines()[1:]
    assert [x for x in tail if x.strip()] == ["sqlengine>"], out
    assert out.count(rows[-1]) == 1
    # the stopped query is gone: the screen holds still and the shell answers
    settled = pane.screen()
    assert len(rows_of(settled[before:])) == len(rows)
    text = pane.run("SELECT 'after' AS s;", r"Received a total of 1 row")
    assert re.search(r"^\| \+I\s+\| after\s+\|$", text, re.M), text


def test_ctrl_d_in_table_mode_closes_the_table(pane: Pane) -> None:
    pane.run("SET 'sql-client.execution.result-mode' = 'table';", r"succeeded")
    pane.run(ENDLESS, r"succeeded")
    pane.line("SELECT v, COUNT(*) AS n FROM g GROUP BY v;")
    pane.wait_for(r"sqlengine \| RUNNING \| [1-9]\d* rows")
    pane.key("C-d")
    pane.wait_for(r"Received a total of \d+ rows?")
    pane.prompt()
    assert pane.status() == (False, None)


def test_ctrl_d_at_the_empty_prompt_leaves(pane: Pane) -> None:
    pane.run("SELECT 1 AS one;", r"Received a total of 1 row")
    # A Ctrl-D typed in the instant between the prompt showing and the prompt reading keys
    # reaches a terminal still in line mode, which swallows it (an end of file nobody
    # reads); a person presses it again, and so does the test, once, after 10 s.
    pane.key("C-d")
    deadline = time.monotonic() + 10
    while pane.status()[0] is False and time.monotonic() < deadline:
        time.sleep(POLL)
    if pane.status()[0] is False:
        pane.key("C-d")
    assert pane.wait_exit() == 0
    assert re.search(r"^Bye\.$", pane.screen(), re.M)


def test_quit_leaves_with_status_0(pane: Pane) -> None:
    pane.line("quit")
    assert pane.wait_exit() == 0
