"""The live web view (``sqlengine run FILE --web``, ``SET 'rest.port'``): the page, its JSON and
server-sent events read over HTTP from a running Nexmark job, the graph's vertices against
EXPLAIN's JobGraph, the server's end with the job; and the page in headless Chromium (Debian's
chromium package; .ci/run installs it when missing)."""

from __future__ import annotations

import http.client
import json
import os
import queue
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from sqlengine.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "sqlengine.shell.cli"]
WAIT = 120.0  # seconds: ten times what any step takes here (CI may be busy)


def nexmark_q5(tmp_path: Path, events: int, rate: int) -> Path:
    """queries/nexmark/q5.sql over a Nexmark stream of ``events`` events at ``rate`` a second
    (a job of events / rate seconds)."""
    ddl = (ROOT / "queries/nexmark/ddl.sql").read_text().replace(
        "'nexmark.events' = 'NEXMARK_EVENTS'",
        f"'nexmark.events' = '{events}', 'rows-per-second' = '{rate}'")
    path = tmp_path / "q5.sql"
    path.write_text(ddl + "\n" + (ROOT / "queries/nexmark/q5.sql").read_text())
    return path


class Job:
    """``sqlengine run FILE --web-port 0`` as a subprocess; ``url`` once it serves."""

    def __init__(self, script: Path, argv: list[str] | None = None) -> None:
        argv = argv if argv is not None else ["run", str(script), "--web-port", "0"]
        self.proc = subprocess.Popen([*CLI, *argv], cwd=ROOT,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + WAIT
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            m = re.search(r"Web view of running jobs: http://127\.0\.0\.1:(\d+)/", line)
            if m:
                self.port = int(m.group(1))
                return

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line)
            self.lines.put(line)

    def get(self, path: str) -> tuple[int, str, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read().decode()
        conn.close()
        return r.status, r.getheader("Content-Type") or "", body

    def jobs(self) -> list[dict]:
        return json.loads(self.get("/api/jobs")[2])["jobs"]

    def wait_running(self) -> dict:
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            jobs = self.jobs()
            if jobs and jobs[-1]["status"] == "RUNNING" and jobs[-1]["rows_read"] > 0:
                return jobs[-1]
            time.sleep(0.2)
        raise AssertionError("the job did not start reading")

    def events(self) -> Iterator[tuple[str, str]]:
        """(event, data) of the server-sent events, until the stream ends."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT)
        conn.request("GET", "/events")
        r = conn.getresponse()
        assert r.status == 200
        assert r.getheader("Content-Type") == "text/event-stream"
        event, data = "", ""
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = line[6:]
            elif not line and event:
                yield event, data
                event, data = "", ""
        conn.close()

    def finish(self) -> None:
        assert self.proc.wait(timeout=WAIT) == 0, "".join(self.stderr)
        assert "Traceback" not in "".join(self.stderr)
        with socket.socket() as s:  # the port is closed
            assert s.connect_ex(("127.0.0.1", self.port)) != 0

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT)


def explained_vertices(script: Path) -> dict[str, str]:
    out = subprocess.run([*CLI, "explain", str(script)], cwd=ROOT, capture_output=True,
                         text=True, timeout=WAIT, check=True).stdout
    graph = out.split("== Job Graph ==")[1]
    return dict(re.findall(r"^(v\d+) \[parallelism=\d+\]: (.*)$", graph, re.MULTILINE))


def test_run_web_serves_the_running_jobs_graph_and_live_counters(tmp_path: Path) -> None:
    script = nexmark_q5(tmp_path, 60_000, 6_000)  # about 10 s
    job = Job(script)
    try:
        running = job.wait_running()
        # the vertices are EXPLAIN's JobGraph's (the query's collect sink chained at the end)
        live = {v["id"]: v["name"].removesuffix(" -> Sink(collect)")
                for v in running["vertices"]}
        assert live == explained_vertices(script)
        assert {(e["source"], e["target"]) for e in running["edges"]} >= {("v1", "v2")}
        # the page, with the job and its drawing in it
        status, ctype, page = job.get("/")
        assert status == 200 and ctype.startswith("text/html")
        assert "__INITIAL__" not in page and "EventSource" in page and "<svg" in page
        status, ctype, svg = job.get(f"/api/jobs/{running['number']}/graph.svg")
        assert status == 200 and ctype == "image/svg+xml"
        rects = {r.get("id") for r in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}rect")}
        assert rects == set(live)
        assert job.get("/nope")[0] == 404
        # server-sent events: the counters move between two of them, then the end comes
        first: dict | None = None
        moved = ended = False
        for event, data in job.events():
            if event == "end":
                ended = True
                break
            snap = json.loads(data)["jobs"][-1]
            if first is None:
                first = snap
            elif snap["rows_read"] > first["rows_read"] and not moved:
                moved = True
                before = {v["id"]: v["records_in"] for v in first["vertices"]}
                after = {v["id"]: v["records_in"] for v in snap["vertices"]}
                assert after["v2"] > before["v2"]  # (the window aggregate read more rows)
        assert moved and ended
        job.finish()
    finally:
        job.kill()


@pytest.mark.parametrize("flag", ["-f", "-c"])
def test_one_liners_serve_the_web_view_when_rest_port_is_set(tmp_path: Path,
                                                              flag: str) -> None:
    script = nexmark_q5(tmp_path, 30_000, 6_000)  # about 5 s
    port = _free_port()
    job = Job(script, ["-D", f"rest.port={port}", flag,
                       str(script) if flag == "-f" else script.read_text()])
    try:
        assert job.port == port
        running = job.wait_running()
        assert running["vertices"] and running["status"] == "RUNNING"
        job.finish()
    finally:
        job.kill()


def test_a_plain_run_does_not_import_the_web_view(tmp_path: Path) -> None:
    script = tmp_path / "one.sql"
    script.write_text("SELECT 1 AS one;")
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "sqlengine.shell.cli",
                           "run", str(script)], cwd=ROOT, capture_output=True, text=True,
                          timeout=WAIT)
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert "sqlengine.shell.web" not in imported
    assert "http.server" not in imported


def test_a_bad_or_taken_web_port_is_refused_naming_the_option(tmp_path: Path) -> None:
    script = tmp_path / "one.sql"
    script.write_text("SELECT 1 AS one;")
    r = CliRunner().invoke(main, ["run", str(script), "--web-port", "70000"])
    assert r.exit_code == 2 and "Invalid value for '--web-port'" in r.output
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = CliRunner().invoke(main, ["run", str(script), "--web-port", str(port)])
    assert r.exit_code == 2, r.output
    assert "Invalid value for --web-port" in r.output
    assert f"cannot serve the web view on 127.0.0.1:{port}" in r.output
    assert "Traceback" not in r.output
    r = CliRunner().invoke(main, ["run", str(script), "-D", "rest.port=x"])
    assert r.exit_code == 2
    assert "option 'rest.port' must be a port number" in r.output


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_set_rest_port_in_the_shell_starts_moves_and_stops_the_web_view() -> None:
    a, b = _free_port(), _free_port()
    r = CliRunner().invoke(main, ["shell"], input=(
        "SET 'rest.port' = '70000';\n"
        f"SET 'rest.port' = '{a}';\n"
        "SELECT 1 AS one;\n"
        f"SET 'rest.port' = '{b}';\n"
        "RESET 'rest.port';\n"
        f"SET 'rest.port' = '{a}';\n"))
    out = r.output
    assert "option 'rest.port' must be a port number (1 to 65535, or 0 for no web view), " \
           "got '70000'" in out
    assert f"Web view of running jobs: http://127.0.0.1:{a}/" in out
    assert f"Web view of running jobs: http://127.0.0.1:{b}/" in out
    assert out.count("Web view stopped.") == 2  # (RESET, and the end of the shell)
    for port in (a, b):
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0


# -- in a browser ---------------------------------------------------------------------------
def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


def _browser(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    browser = _chromium()
    assert browser is not None
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", f"--user-data-dir={tmp_path / 'profile'}",
                           "--window-size=1280,1100", *args], capture_output=True, text=True,
                          timeout=WAIT)


def png_pixels(path: Path) -> tuple[int, int, list[bytes]]:
    """Width, height and RGB(A) rows of an 8-bit, non-interlaced PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height, channels = 8, b"", 0, 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0
            channels = {2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride, rows, prev = width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) *
                                                          (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) \
                    & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


@pytest.mark.slow
def test_the_page_in_headless_chromium_shows_the_graph_and_moving_counters(
        tmp_path: Path) -> None:
    if _chromium() is None:
        if os.environ.get("SQLENGINE_BROWSER_TESTS") == "required":
            pytest.fail("no chromium: .ci/run installs Debian's chromium package")
        pytest.skip("no chromium (apt-get install chromium; .ci/run installs it and requires "
                    "this test)")
    job = Job(nexmark_q5(tmp_path, 150_000, 6_000))  # about 25 s
    try:
        running = job.wait_running()
        url = f"http://127.0.0.1:{job.port}/"
        dom1 = _browser(["--dump-dom", url], tmp_path).stdout
        rows1 = int(re.search(r'data-rows="(\d+)"', dom1).group(1))  # type: ignore[union-attr]
        # the graph drawn, every vertex painted by the script, its counters in the table
        assert dom1.count("<rect ") >= len(running["vertices"])
        assert len(re.findall(r'<rect id="v\d+"[^>]* fill="hsl\(', dom1)) == \
            len(running["vertices"])
        body = dom1.split("<tbody>")[1].split("</tbody>")[0]
        assert body.count('<td class="id">') == len(running["vertices"])
        deadline = time.monotonic() + WAIT
        while job.jobs()[-1]["rows_read"] <= rows1 and time.monotonic() < deadline:
            time.sleep(0.2)
        dom2 = _browser(["--dump-dom", url], tmp_path).stdout
        rows2 = int(re.search(r'data-rows="(\d+)"', dom2).group(1))  # type: ignore[union-attr]
        assert rows2 > rows1
        shot = tmp_path / "webview.png"
        _browser([f"--screenshot={shot}", url], tmp_path)
        width, height, pixels = png_pixels(shot)
        assert (width, height) == (1280, 1100)
        step = len(pixels[0]) // width
        colours = {row[x:x + 3] for row in pixels[::4] for x in range(0, len(row), 4 * step)}
        assert len(colours) > 50  # not a blank page
        busiest = [c for c in colours if c[0] > 200 and 120 < c[1] < 200 and c[2] < 140]
        assert busiest  # the busiest vertex in orange (hsl(30, 80%, 62%) and near)
        job.kill()
    finally:
        job.kill()
