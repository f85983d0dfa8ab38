"""The socket source: lines from a TCP peer, reconnection, listen mode, bad rows."""

from __future__ import annotations

import socket
import threading
import time

import pytest

import sqlengine
from sqlengine.errors import ConnectorError, SqlEngineError


def _serve(sessions: list[list[bytes]]) -> int:
    """A server on a free port that, per accepted connection, sends its chunks and closes."""
    server = socket.create_server(("localhost", 0))
    port = server.getsockname()[1]

    def run() -> None:
        with server:
            for chunks in sessions:
                conn, _ = server.accept()
                with conn:
                    for chunk in chunks:
                        conn.sendall(chunk)
                        time.sleep(0.02)

    threading.Thread(target=run, daemon=True).start()
    return port


def _table(port: int, extra: str = "") -> str:
    return (f"CREATE TABLE s (name STRING, n INT) WITH ('connector' = 'socket', "
            f"'port' = '{port}'{extra})")


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    out = []
    for batch in s.sql(sql).stream():
        out.extend(tuple(r.values()) for r in batch.to_pylist())
    return out


@pytest.mark.parametrize("p", ["1", "2"])
def test_lines_split_across_packets_become_rows(p: str) -> None:
    port = _serve([[b"a,1\nb,", b"2\nc,3", b"\n", b"d,4"]])
    s = sqlengine.connect({"parallelism.default": p})
    s.execute(_table(port))
    assert _rows(s, "SELECT name, n * 10 AS m FROM s") == [
        ("+I", "a", 10), ("+I", "b", 20), ("+I", "c", 30), ("+I", "d", 40)]


def test_it_reconnects_after_the_peer_closes_while_retries_are_left() -> None:
    port = _serve([[b"a,1\n"], [b"b,2\n"], [b"never,0\n"]])
    s = sqlengine.connect()
    s.execute(_table(port, ", 'socket.max-retries' = '1', 'socket.retry-delay' = '20 ms'"))
    assert [r[1] for r in _rows(s, "SELECT * FROM s")] == ["a", "b"]


def test_listen_mode_binds_and_reads_a_client() -> None:
    probe = socket.create_server(("localhost", 0))
    port = probe.getsockname()[1]
    probe.close()
    s = sqlengine.connect()
    s.execute(_table(port, ", 'socket.mode' = 'listen', 'format' = 'json'"))

    def client() -> None:
        for _ in range(100):
            try:
                with socket.create_connection(("localhost", port)) as c:
                    c.sendall(b'{"name": "x", "n": 7}\n{"name": "y", "n": 8}\n')
                return
            except OSError:
                time.sleep(0.02)

    threading.Thread(target=client, daemon=True).start()
    assert _rows(s, "SELECT name, n FROM s") == [("+I", "x", 7), ("+I", "y", 8)]


def test_a_bad_row_names_the_socket_and_line() -> None:
    port = _serve([[b"a,1\nb,2\n", b"c,oops\n"]])
    s = sqlengine.connect()
    s.execute(_table(port))
    with pytest.raises(ConnectorError, match=rf"socket localhost:{port}:3: cannot parse row"):
        _rows(s, "SELECT * FROM s")


def test_no_peer_is_a_clear_error() -> None:
    probe = socket.create_server(("localhost", 0))
    port = probe.getsockname()[1]
    probe.close()
    s = sqlengine.connect()
    s.execute(_table(port))
    with pytest.raises(ConnectorError, match=rf"cannot connect to localhost:{port}"):
        _rows(s, "SELECT * FROM s")
    with pytest.raises(ConnectorError, match=r"socket\.max-retries"):
        s.execute(_table(port, ", 'socket.max-retries' = 'x'").replace("TABLE s", "TABLE s2"))
        _rows(s, "SELECT * FROM s2")
    # (a port past 65535 was accepted, and every read failed with "Connection refused")
    with pytest.raises(SqlEngineError, match=r"option 'port' must be a port number \(0 to "
                                             r"65535\), got '99999'"):
        s.execute(_table(99999).replace("TABLE s", "TABLE s3"))
