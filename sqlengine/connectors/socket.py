"""The socket source: delimited text lines (csv or json) from a TCP socket.

As Flink's SocketTextStreamFunction (seed 002), it connects to 'hostname':'port' (localhost by
default) and reads until the peer closes the connection; then, while retries are left
('socket.max-retries', -1 for ever; 'socket.retry-delay' between attempts), it connects
again, else the source ends. With 'socket.mode' = 'listen' it binds 'hostname':'port' instead
and reads one client after another. Rows are parsed with the table's format, vectorised per
block of complete lines; a bad row names the socket and the line (counted from the first
line read by this source). The reader never blocks for long: without data it yields None, so
that idleness, timers and cancellation go on.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Generator, Iterator
from typing import ClassVar

import pyarrow as pa

from sqlengine.connectors.base import Connector, OptionSpec, ReadStats, SourceRead
from sqlengine.connectors.csv_format import read_csv
from sqlengine.connectors.json_format import read_json
from sqlengine.errors import ConnectorError
from sqlengine.options import parse_duration

_WAIT = 0.05  # seconds a read waits for data before yielding None


class SocketReader:
    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 stats: ReadStats) -> None:
        self.table = table
        self.options = options
        self.schema = schema
        self.stats = stats
        self.host = options.get("hostname", "localhost")
        self.port = int(options["port"])
        self.format = options.get("format", "csv")
        self.delimiter = bytes([int(options.get("byte-delimiter", "10"))])
        text = options.get("socket.max-retries", "0")
        try:
            self.retries = int(text)
            if self.retries < -1:
                raise ValueError
        except ValueError:
            msg = (f"table {table!r}: option 'socket.max-retries' must be an integer >= -1 "
                   f"(-1: retry for ever), got {text!r}")
            raise ConnectorError(msg) from None
        key = "socket.retry-delay"
        self.delay = parse_duration(options.get(key, "500 ms"), key) / 1000.0
        self.listen = options.get("socket.mode", "connect") == "listen"
        self.where = f"socket {self.host}:{self.port}"
        self.line = 1  # the next line's number
        self._server: socket.socket | None = None

    def batches(self) -> Iterator[pa.RecordBatch | None]:
        attempt = 0
        try:
            while True:
                conn = yield from self._open(attempt)
                if conn is None:
                    return
                with conn:
                    yield from self._read(conn)
                if self.retries != -1 and attempt >= self.retries:
                    return
                attempt += 1
                yield from self._pause()
        finally:
            if self._server is not None:
                self._server.close()

    def _pause(self) -> Iterator[None]:
        until = time.monotonic() + self.delay
        while time.monotonic() < until:
            time.sleep(min(_WAIT, max(0.0, until - time.monotonic())))
            yield None

    def _open(self, attempt: int) -> Generator[None, None, socket.socket | None]:
        if self.listen:
            if self._server is None:
                try:
                    self._server = socket.create_server((self.host, self.port))
                except OSError as e:
                    msg = (f"table {self.table!r}: cannot listen on {self.host}:{self.port} "
                           f"(options 'hostname', 'port'): {e.strerror or e}")
                    raise ConnectorError(msg) from None
            while True:
                ready, _, _ = select.select([self._server], [], [], _WAIT)
                if ready:
                    conn, _ = self._server.accept()
                    return conn
                yield None
        while True:
            try:
                return socket.create_connection((self.host, self.port), timeout=5)
            except OSError as e:
                if self.retries != -1 and attempt >= self.retries:
                    msg = (f"table {self.table!r}: cannot connect to {self.host}:{self.port} "
                           f"(options 'hostname', 'port'): {e.strerror or e}")
                    raise ConnectorError(msg) from None
                attempt += 1
                yield from self._pause()

    def _read(self, conn: socket.socket) -> Iterator[pa.RecordBatch | None]:
        conn.setblocking(False)
        pending = b""
        while True:
            ready, _, _ = select.select([conn], [], [], _WAIT)
            if not ready:
                yield None
                continue
            try:
                chunk = conn.recv(1 << 16)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""  # a reset connection ends like a closed one
            if not chunk:
                break
            pending += chunk
            complete, sep, pending = pending.rpartition(self.delimiter)
            if sep:
                yield from self._parse(complete + sep)
        if pending.strip():
            yield from self._parse(pending + self.delimiter)

    def _parse(self, data: bytes) -> Iterator[pa.RecordBatch]:
        if self.delimiter != b"\n":
            data = data.replace(self.delimiter, b"\n")
        first = self.line
        self.line += data.count(b"\n")
        reader = read_json if self.format == "json" else read_csv
        yield from reader(self.where, self.options, self.schema, self.stats, data, first)


class Socket(Connector):
    name = "socket"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("hostname"),
        OptionSpec("port", "port", required=True),
        OptionSpec("format", "enum", ("csv", "json")),
        OptionSpec("byte-delimiter", "int"),
        OptionSpec("socket.mode", "enum", ("connect", "listen")),
        OptionSpec("socket.max-retries"),  # an integer; -1 retries for ever
        OptionSpec("socket.retry-delay"),
        OptionSpec("csv.field-delimiter", "char"),
        OptionSpec("csv.quote-character", "char"),
        OptionSpec("csv.ignore-parse-errors", "bool"),
        OptionSpec("csv.null-literal"),
        OptionSpec("json.ignore-parse-errors", "bool"),
        OptionSpec("scan.watermark.idle-timeout", "duration"),
    )
    is_source = True
    parallel_source = False  # one connection: a non-parallel source, as Flink's

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        return ("a socket cannot be read again: a restored job would lose the rows read since "
                "its last checkpoint and those sent while it was down (at most once, as "
                "Flink's socket source); read the data from files, or a replayable source")

    def open_source(self, read: SourceRead) -> Iterator[object]:
        if read.split[0] > 0:  # a socket is read once, by the first subtask
            return iter(())
        return SocketReader(read.table, read.options, read.schema, read.stats).batches()


CONNECTOR = Socket()
