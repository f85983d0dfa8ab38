"""Showing a running query in the shell: tableau (rows as they come), changelog (every change
with its kind) and table (a live, scrollable table of the current result, updated in place)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

import pyarrow as pa

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.output import Output
from sqlengine.shell.formatting import NULL_TEXT, _pad, _text, display_width, visible

_MAX_WIDTH = 40


def _cells(batch: pa.RecordBatch) -> list[list[str]]:
    cols = [[visible(v) for v in _text(batch.column(i), NULL_TEXT)]
            for i in range(batch.num_columns)]
    return [list(r) for r in zip(*cols)] if cols else []


def _type_width(t: pa.DataType) -> int:
    """The widest text of a value of ``t`` whose width is bounded (numbers, times), else 0."""
    if pa.types.is_integer(t):
        return len(str(-(1 << (t.bit_width - 1)))) if pa.types.is_signed_integer(t) \
            else len(str((1 << t.bit_width) - 1))
    if pa.types.is_decimal(t):
        return t.precision + 2  # (a sign and a point)
    if pa.types.is_floating(t):
        return 24 if t == pa.float64() else 15  # (-1.7976931348623157E308)
    if pa.types.is_boolean(t):
        return 5
    if pa.types.is_date(t):
        return 10
    if pa.types.is_timestamp(t):
        digits = {"s": 0, "ms": 3, "us": 6, "ns": 9}[t.unit]
        return 19 + (digits + 1 if digits else 0)
    if pa.types.is_time(t):
        return 12
    return 0


def _fit(value: str, width: int, align: str = "<") -> str:
    """``value`` cut to ``width`` terminal columns (with '...') and padded to it; wide
    characters (CJK, emoji) count twice (wcwidth)."""
    if display_width(value) > width:
        cut = ""
        for ch in value:
            if display_width(cut + ch) > width - 3:
                break
            cut += ch
        value = cut + "..."
    return _pad(value, width, align)


def show_tableau(stream: Iterator[pa.RecordBatch], out: TextIO, with_kind: bool) -> int:
    """Print a boxed table whose rows appear as they are produced; returns the row count.
    The row kind column (op) is shown when the result is updating."""
    widths: list[int] | None = None
    names: list[str] = []
    count = 0
    sep = ""
    for batch in stream:
        if not with_kind:
            batch = batch.drop_columns([batch.schema.names[0]])  # (the kinds: op, or op0)
        rows = _cells(batch)
        if widths is None:
            names = [visible(n) for n in batch.schema.names]
            # (at least the widest text of the column's type, as Flink's tableau: the first
            # batch's values set the widths, and a later, longer number was cut to '-1575...')
            widths = [max(_type_width(f.type),
                          min(_MAX_WIDTH, max([display_width(f.name)] +
                                              [display_width(r[i]) for r in rows])))
                      for i, f in enumerate(batch.schema)]
            widths = [max(w, 4) for w in widths]
            sep = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
            out.write(sep + "\n|" + "|".join(f" {_fit(n, w, '^')} " for n, w in
                                             zip(names, widths)) + "|\n" + sep + "\n")
        for r in rows:
            out.write("|" + "|".join(f" {_fit(v, w)} " for v, w in zip(r, widths))
                      + "|\n")
        count += len(rows)
        out.flush()
    if widths is not None:
        out.write(sep + "\n")
    return count


def show_changelog(stream: Iterator[pa.RecordBatch], out: TextIO) -> int:
    """Every change on its own line, Flink's print format: ``+U[a, 3]``."""
    count = 0
    for batch in stream:
        for r in _cells(batch):
            out.write(f"{r[0]}[{', '.join(r[1:])}]\n")
            count += 1
        out.flush()
    return count


class LiveResult:
    """The current result of a changelog. An update (-U then +U) replaces its row where it
    stands, so the table changes in place; inserts go to the end, deletes close the gap."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, ...]] = []
        self.names: list[str] = []
        self.changes = 0
        self.lock = threading.Lock()
        self._hole: int | None = None  # where the last -U removed a row

    def apply(self, batch: pa.RecordBatch) -> None:
        cells = _cells(batch)
        with self.lock:
            if not self.names:
                self.names = [visible(n) for n in batch.schema.names[1:]]
            for r in cells:
                kind, key = r[0], tuple(r[1:])
                if kind == "+I":
                    self.rows.append(key)
                elif kind == "+U":
                    if self._hole is not None and self._hole <= len(self.rows):
                        self.rows.insert(self._hole, key)
                    else:
                        self.rows.append(key)
                    self._hole = None
                else:
                    try:
                        at = len(self.rows) - 1 - self.rows[::-1].index(key)
                    except ValueError:
                        continue
                    del self.rows[at]
                    self._hole = at if kind == "-U" else None
                self.changes += 1

    def snapshot(self) -> list[tuple[str, ...]]:
        with self.lock:
            return list(self.rows)


def show_table(stream: Iterator[pa.RecordBatch], title: str, app_input: Input | None = None,
               app_output: Output | None = None) -> int:
    """A full-screen live table of the current result; q (or Ctrl-C, Ctrl-D) quits, the arrows and
    PgUp/PgDn scroll. Returns the number of rows when it was closed."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import HSplit, Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    live = LiveResult()
    state = {"status": "RUNNING", "offset": 0, "error": None, "stop": False}
    started = time.monotonic()

    def consume() -> None:
        try:
            for batch in stream:
                if state["stop"]:
                    break
                live.apply(batch)
                app.invalidate()
            state["status"] = "FINISHED" if not state["stop"] else "CANCELED"
        except Exception as e:
            state["status"], state["error"] = "FAILED", str(e).splitlines()[0]
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
            app.invalidate()

    def body() -> str:
        rows = live.snapshot()
        names = live.names or ["(waiting for results)"]
        height = max(1, app.output.get_size().rows - 5)
        off = min(state["offset"], max(0, len(rows) - height))
        shown = rows[off: off + height]
        widths = [min(_MAX_WIDTH, max([display_width(n)] +
                                      [display_width(r[i]) for r in shown]))
                  for i, n in enumerate(names)]
        lines = [" ".join(_fit(n, w) for n, w in zip(names, widths)),
                 " ".join("-" * w for w in widths)]
        lines += [" ".join(_fit(v, w) for v, w in zip(r, widths)) for r in shown]
        return "\n".join(lines)

    def status() -> str:
        rows = len(live.snapshot())
        secs = time.monotonic() - started
        text = (f" {title} | {state['status']} | {rows} rows, {live.changes} changes | "
                f"{secs:.1f} s | Q quit  Up/Down PgUp/PgDn scroll")
        if state["error"]:
            text += f" | {state['error']}"
        return text

    kb = KeyBindings()

    @kb.add("q")
    @kb.add("Q")
    @kb.add("c-c")
    @kb.add("c-d")
    def _quit(event: object) -> None:
        state["stop"] = True
        app.exit()

    @kb.add("down")
    def _down(event: object) -> None:
        state["offset"] += 1

    @kb.add("up")
    def _up(event: object) -> None:
        state["offset"] = max(0, state["offset"] - 1)

    @kb.add("pagedown")
    def _pgdn(event: object) -> None:
        state["offset"] += 10

    @kb.add("pageup")
    def _pgup(event: object) -> None:
        state["offset"] = max(0, state["offset"] - 10)

    layout = Layout(HSplit([
        Window(FormattedTextControl(lambda: [("reverse", status())]), height=1),
        Window(FormattedTextControl(body)),
    ]))
    app: Application = Application(layout=layout, key_bindings=kb, full_screen=True,
                                   refresh_interval=0.5, input=app_input,
                                   output=app_output)
    worker = threading.Thread(target=consume, daemon=True)
    app.pre_run_callables.append(worker.start)
    app.run()
    worker.join(timeout=2)
    return len(live.snapshot())
