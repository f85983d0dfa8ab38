"""The live web view of running jobs (``sqlengine run FILE --web``, ``SET 'rest.port'`` in the
shell): a page on 127.0.0.1 showing each job's JobGraph, its vertices coloured by backpressure
(or, where the runtime measures none, by their share of the records/s), with records in/out,
records/s, watermark and lag, late rows and checkpoints, updated by server-sent events.

The standard library's threading HTTP server serves it (no ASGI stack to import: the command
line stays fast, and this module is imported only when a port is asked for). A sampler thread
polls the jobs' ``live_metrics()`` twice a second; every open page gets each sample.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import sqlengine
from sqlengine.errors import PlanError
from sqlengine.shell.web_page import PAGE

OPTION = "rest.port"  # Flink's key for the port of its web UI / REST endpoint
SAMPLE_S = 0.5
RATE_WINDOW_S = 5.0  # records/s and backpressure: over this many seconds
_FINITE = 2**62  # watermarks beyond +-this are "none yet" / "end of input"


def port_of(value: str | None) -> int:
    """The port 'rest.port' asks for (0: no web view; the option's value was checked by SET
    in sqlengine/options.py)."""
    text = str(value or "").strip()
    return int(text) if text.isdigit() else 0


def _wm_text(wm: int | None) -> str:
    if wm is None or wm <= -_FINITE:
        return "-"
    if wm >= _FINITE:
        return "end of input"
    return (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=wm)).isoformat(
        sep=" ", timespec="milliseconds")


def _finite(wm: int | None) -> bool:
    return wm is not None and -_FINITE < wm < _FINITE


@dataclass
class _Job:
    number: int
    name: str
    execution: Any  # a runtime JobExecution (through the door's Session.submit)
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    error: str | None = None
    svg: str | None = None
    # (when, vertices' counters) of the samples of the last RATE_WINDOW_S seconds
    history: deque[tuple[float, dict[str, dict[str, Any]]]] = field(default_factory=deque)

    @property
    def status(self) -> str:
        if self.error is not None:
            return "FAILED"
        if self.ended is None and getattr(self.execution, "result", None) is None:
            return "RUNNING"
        return "CANCELED" if getattr(self.execution, "cancelled", False) else "FINISHED"


class JobMonitor:
    """The jobs of the sessions it watches, sampled for the page."""

    def __init__(self) -> None:
        self.jobs: list[_Job] = []
        self.statement = ""  # what the next job is named after (the statement running)
        self.lock = threading.Lock()
        self.snapshot: dict[str, Any] = {"jobs": [], "sequence": 0}
        self.changed = threading.Condition()

    def watch(self, session: sqlengine.Session) -> None:
        """See every job ``session`` submits from now on (queries, INSERTs, background
        INSERTs)."""
        if self.add not in session.on_submit:
            session.on_submit.append(self.add)

    def add(self, execution: Any) -> None:
        name = " ".join(self.statement.split())
        with self.lock:
            self.jobs.append(_Job(len(self.jobs) + 1, name[:200] or "job", execution))

    def statement_done(self, error: str | None = None) -> None:
        """The statement that started the running jobs ended (its jobs with it, unless they
        run in the background)."""
        now = time.monotonic()
        with self.lock:
            for job in self.jobs:
                if job.ended is None and getattr(job.execution, "result", None) is not None:
                    job.ended = now
                    if error is not None:
                        job.error = error

    def svg(self, number: int) -> str | None:
        job = next((j for j in self.jobs if j.number == number), None)
        if job is None:
            return None
        if job.svg is None:
            from sqlengine.api import FORMATS

            job.svg = FORMATS["svg"](job.execution.graph)
        return job.svg

    # -- sampling ---------------------------------------------------------------------------
    def sample(self) -> dict[str, Any]:
        now = time.monotonic()
        with self.lock:
            jobs = [self._sample_job(j, now) for j in self.jobs]
        snap = {"jobs": jobs, "sequence": self.snapshot["sequence"] + 1,
                "time": dt.datetime.now().isoformat(timespec="seconds")}
        with self.changed:
            self.snapshot = snap
            self.changed.notify_all()
        return snap

    def _sample_job(self, job: _Job, now: float) -> dict[str, Any]:
        graph = job.execution.graph
        status = job.status
        if job.ended is None and status != "RUNNING":
            job.ended = now
        live_of = getattr(job.execution.executor, "live_metrics", None)
        live: dict[str, Any] = {"vertices": {}, "checkpoints": None}
        note = ""
        if live_of is None:
            note = ("live metrics come from the native runtime; this job runs on Spark (see "
                    "Spark's own UI)")
        else:
            try:
                live = live_of()
            except Exception as e:  # (a job being torn down: the next sample has it)
                note = f"metrics not readable this time: {type(e).__name__}"
        measured = live["vertices"]
        # rates over the last few seconds (sources read in bursts: a batch at a time)
        while len(job.history) > 1 and now - job.history[1][0] >= RATE_WINDOW_S:
            job.history.popleft()
        prev_t, prev = job.history[0] if job.history else (job.started, {})
        span = max(now - prev_t, 1e-6)
        if measured and status == "RUNNING":
            job.history.append((now, measured))
        sources = [measured.get(v.id, {}).get("watermark") for v in graph.vertices
                   if not graph.in_edges(v.id)]
        top = max((w for w in sources if _finite(w)), default=None)
        vertices = []
        for v in graph.vertices:
            m = measured.get(v.id, {})
            p = prev.get(v.id, {})
            out = m.get("records_out", m.get("head_records_out"))
            wm = m.get("watermark")
            row: dict[str, Any] = {
                "id": v.id, "name": " -> ".join(op.label() for op in v.chain),
                "parallelism": v.parallelism, "records_in": m.get("records_in"),
                "records_out": out, "watermark": wm, "watermark_text": _wm_text(wm),
                "lag_ms": max(0, top - wm) if top is not None and _finite(wm) else None,
                "late_records_dropped": m.get("late_records_dropped"),
                "udf_rows_skipped": m.get("udf_rows_skipped"),
                "idle": m.get("idle"), "partial": bool(m.get("partial"))}
            if status == "RUNNING":
                prev_out = p.get("records_out", p.get("head_records_out", 0))
                row["out_per_s"] = (out - prev_out) / span if out is not None else None
                if m.get("records_in") is not None:
                    row["in_per_s"] = (m["records_in"] - p.get("records_in", 0)) / span
                if m.get("backpressured_ms") is not None:
                    blocked = m["backpressured_ms"] - p.get("backpressured_ms", 0)
                    row["backpressure"] = min(1.0, max(0.0, blocked / (span * 1000)))
            vertices.append(row)
        end = job.ended if job.ended is not None else now
        rows = sum(r["records_out"] or 0 for r in vertices
                   if not graph.in_edges(r["id"]))
        return {"number": job.number, "name": job.name, "status": status,
                "error": job.error, "elapsed_s": round(end - job.started, 1),
                "rows_read": rows, "vertices": vertices,
                "edges": [{"source": e.source, "target": e.target, "label": e.label()}
                          for e in graph.edges],
                "checkpoints": live.get("checkpoints"), "note": note,
                "measures_backpressure": any("backpressure" in r for r in vertices)}


class WebView:
    """The server: ``start(port)`` (0: a free port the system picks), ``stop()``."""

    def __init__(self, monitor: JobMonitor | None = None) -> None:
        self.monitor = monitor or JobMonitor()
        self.server: ThreadingHTTPServer | None = None
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    @property
    def port(self) -> int:
        return self.server.server_address[1] if self.server is not None else 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def start(self, port: int) -> None:
        """Serve on 127.0.0.1:``port``. Raises OSError when the port cannot be had."""
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.server.daemon_threads = True
        self.stopping.clear()
        for target, name in ((self.server.serve_forever, "http"), (self._sample, "sampler")):
            t = threading.Thread(target=target, name=f"sqlengine web {name}", daemon=True)
            t.start()
            self._threads.append(t)

    def latest(self) -> dict[str, Any]:
        snap = self.monitor.snapshot
        return snap if snap["sequence"] else self.monitor.sample()

    def page(self) -> str:
        """The page, with the latest sample and the jobs' drawings in it (so it shows the
        jobs at once, before the first event)."""
        snap = self.latest()
        svgs = {j["number"]: self.monitor.svg(j["number"]) for j in snap["jobs"]}
        initial = json.dumps({"snapshot": snap, "svgs": svgs}).replace("</", "<\\/")
        return PAGE.replace("__INITIAL__", initial)

    def _sample(self) -> None:
        while not self.stopping.wait(SAMPLE_S):
            self.monitor.sample()

    def stop(self, linger: float = 0.0) -> None:
        """A last sample for the open pages, ``linger`` seconds of serving it, then the port
        closes (the pages say the server ended)."""
        if self.server is None:
            return
        self.monitor.sample()
        if linger > 0:
            time.sleep(linger)
        self.stopping.set()
        with self.monitor.changed:
            self.monitor.changed.notify_all()
        self.server.shutdown()
        self.server.server_close()
        for t in self._threads:
            t.join(2.0)
        self._threads.clear()
        self.server = None


def _handler(view: WebView) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "sqlengine"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # (no request log on the terminal the job prints to)

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            if host not in ("127.0.0.1", "localhost", "[::1]"):
                # (a page of another site whose name resolves to 127.0.0.1 reads nothing)
                self._send(403, b"forbidden host\n", "text/plain")
                return
            path = self.path.split("?", 1)[0]
            try:
                if path == "/":
                    self._send(200, view.page().encode(), "text/html; charset=utf-8")
                elif path == "/api/jobs":
                    snap = view.latest()
                    self._send(200, json.dumps(snap).encode(), "application/json")
                elif path.startswith("/api/jobs/") and path.endswith("/graph.svg"):
                    number = path[len("/api/jobs/"):-len("/graph.svg")]
                    svg = view.monitor.svg(int(number)) if number.isdigit() else None
                    if svg is None:
                        self._send(404, b"no such job\n", "text/plain")
                    else:
                        self._send(200, svg.encode(), "image/svg+xml")
                elif path == "/events":
                    self._events()
                else:
                    self._send(404, b"not found\n", "text/plain")
            except (BrokenPipeError, ConnectionResetError):
                pass  # (the page went away)

        def _events(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            monitor = view.monitor
            seen = -1
            while True:
                with monitor.changed:
                    if monitor.snapshot["sequence"] == seen and not view.stopping.is_set():
                        monitor.changed.wait(5.0)
                    snap = monitor.snapshot
                if snap["sequence"] != seen:
                    seen = snap["sequence"]
                    self.wfile.write(f"event: snapshot\ndata: {json.dumps(snap)}\n\n".encode())
                elif not view.stopping.is_set():
                    self.wfile.write(b": keep-alive\n\n")
                if view.stopping.is_set():
                    self.wfile.write(b"event: end\ndata: {}\n\n")
                    self.wfile.flush()
                    return
                self.wfile.flush()

    return Handler


class OptionFollower:
    """Keeps a web view running for the jobs of the sessions it watches: on the port
    ``serve`` is given (``run --web``), or on the one a session's 'rest.port' names (the
    shell; ``run`` with -D rest.port=N or a SET in the file), started, moved or stopped as
    the option changes."""

    def __init__(self, announce: Callable[[str], None]) -> None:
        self.view: WebView | None = None
        self.monitor = JobMonitor()
        self.announce = announce
        self.port = 0  # the port asked for (0 with a view: a free one)
        self.by_option = False

    def serve(self, port: int, what: str = "--web-port") -> None:
        """Serve on ``port`` (0: a free port the system picks; see ``view.url``).

        Raises:
            PlanError: the port cannot be served on (in use, not allowed), naming ``what``.
        """
        self.stop(quiet=True)
        view = WebView(self.monitor)
        try:
            view.start(port)
        except OSError as e:
            where = f"{what}: " if what else ""
            raise PlanError(f"{where}cannot serve the web view on 127.0.0.1:{port}: "
                            f"{e.strerror or e}") from None
        self.view, self.port, self.by_option = view, port, False
        self.announce(f"[INFO] Web view of running jobs: {view.url}")

    def follow(self, session: sqlengine.Session) -> None:
        """Serve as ``session``'s 'rest.port' says, if it says anything new."""
        port = port_of(session.options.get(OPTION))
        if port == 0:
            if self.by_option:
                self.stop()
            return
        self.monitor.watch(session)
        if self.view is not None and (self.port == port or not self.by_option):
            return  # (already serving; a --web port is kept)
        self.serve(port, f"option {OPTION!r}")
        self.by_option = True

    def stop(self, linger: float = 0.0, quiet: bool = False) -> None:
        if self.view is not None:
            self.view.stop(linger)
            self.view = None
            if not quiet:
                self.announce("[INFO] Web view stopped.")
        self.port, self.by_option = 0, False
