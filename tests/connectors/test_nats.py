"""The nats connector against the real NATS server with JetStream (127.0.0.1:4222, started if
it has stopped): a bounded read up to the stream's last sequence, an unbounded read ended by
LIMIT, a sink whose messages read back, bad messages named by sequence, and refusals."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 4222), timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def server() -> None:
    nats = pytest.importorskip("nats")
    del nats
    if not _up():
        binary = shutil.which("nats-server")
        if binary is None:
            pytest.fail("nats-server is not installed on this machine")
        subprocess.Popen([binary, "-a", "127.0.0.1", "-p", "4222", "-js", "-sd",
                          "/var/lib/nats-server"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
        for _ in range(50):
            if _up():
                break
            time.sleep(0.2)


def _run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


@pytest.fixture
def stream(server: None) -> Iterator[tuple[str, str]]:
    import nats

    name = "T" + uuid.uuid4().hex[:10]
    subject = f"sqlengine.{name}"

    async def make() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222")
        await nc.jetstream().add_stream(name=name, subjects=[subject])
        await nc.close()

    async def drop() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222")
        await nc.jetstream().delete_stream(name)
        await nc.close()

    _run(make())
    yield name, subject
    _run(drop())


def _publish(subject: str, payloads: list[bytes]) -> None:
    import nats

    async def go() -> None:
        nc = await nats.connect("nats://127.0.0.1:4222")
        js = nc.jetstream()
        for p in payloads:
            await js.publish(subject, p)
        await nc.close()

    _run(go())


def _table(s: sqlengine.Session, name: str, subject: str, extra: str = "") -> None:
    s.execute(f"CREATE TABLE o (id INT, item STRING, price DOUBLE) WITH ('connector' = "
              f"'nats', 'subject' = '{subject}', 'stream' = '{name}'{extra})")


def test_bounded_read_and_sink(stream: tuple[str, str]) -> None:
    name, subject = stream
    rows = [{"id": i, "item": f"x{i}", "price": i * 1.5} for i in range(1, 2501)]
    _publish(subject, [json.dumps(r).encode() for r in rows])
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    _table(s, name, subject, ", 'scan.bounded.mode' = 'latest-offset'")
    got = s.sql("SELECT id, item, price FROM o").collect().to_pylist()
    assert got == rows  # (in stream order)
    s.execute(f"CREATE TABLE out (id INT, item STRING, price DOUBLE) WITH ("
              f"'connector' = 'nats', 'subject' = '{subject}')")
    s.execute("INSERT INTO out SELECT id + 10000, item, price FROM o WHERE id <= 3")
    ids = s.sql("SELECT id FROM o").collect().column(0).to_pylist()
    assert ids[-3:] == [10001, 10002, 10003] and len(ids) == 2503


def test_unbounded_read_ends_with_limit(stream: tuple[str, str]) -> None:
    name, subject = stream
    _publish(subject, [json.dumps({"id": i, "item": "y", "price": 1.0}).encode()
                       for i in range(10)])
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    _table(s, name, subject)
    got = s.sql("SELECT id FROM o LIMIT 4").collect().column(0).to_pylist()
    assert sorted(got) == [0, 1, 2, 3]


def test_bad_messages_and_refusals(stream: tuple[str, str]) -> None:
    name, subject = stream
    _publish(subject, [b'{"id": 1, "item": "a", "price": 2.0}', b'{"id": "oops"}'])
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    _table(s, name, subject, ", 'scan.bounded.mode' = 'latest-offset'")
    with pytest.raises(SqlEngineError, match=f"nats {subject}:seq:2"):
        s.sql("SELECT * FROM o").collect()
    for extra, message in [(", 'format' = 'avro'", "format"),
                           (", 'scan.startup.mode' = 'timestamp'",
                            "'scan.startup.mode' = 'timestamp' needs option "
                            "'scan.startup.timestamp-millis'"),
                           (", 'scan.startup.specific-offsets' = 'partition:0,offset:4'",
                            "'scan.startup.specific-offsets' is not implemented .a stream "
                            "has one sequence")]:
        with pytest.raises(SqlEngineError, match=message):
            s.execute(f"CREATE TABLE b (id INT) WITH ('connector' = 'nats', "
                      f"'subject' = '{subject}', 'stream' = '{name}'{extra})")
    s.execute(f"CREATE TABLE gone (id INT) WITH ('connector' = 'nats', 'subject' = 'x', "
              f"'stream' = 'NO_SUCH_STREAM_{name}', 'scan.bounded.mode' = 'latest-offset')")
    with pytest.raises(SqlEngineError, match="NO_SUCH_STREAM"):
        s.sql("SELECT * FROM gone").collect()
    # (a subject outside the stream's failed with the server's "consumer filter subject is
    # not a valid subset of the interest subjects", naming no table nor option)
    for durable in ("", ", 'durable' = 'd1'"):
        s.execute(f"CREATE TEMPORARY TABLE elsewhere (id INT) WITH ('connector' = 'nats', "
                  f"'subject' = 'other.{name}', 'stream' = '{name}', "
                  f"'scan.bounded.mode' = 'latest-offset'{durable})")
        with pytest.raises(SqlEngineError, match=rf"table 'elsewhere': option 'subject' = "
                           rf"'other.{name}' is not among the subjects of JetStream stream "
                           rf"'{name}': '{subject}'"):
            s.sql("SELECT * FROM elsewhere").collect()
        s.execute("DROP TEMPORARY TABLE elsewhere")
    with pytest.raises(SqlEngineError, match=r"updating|insert-only|update changes"):
        s2 = sqlengine.connect({"execution.runtime-mode": "streaming"})
        _table(s2, name, subject, ", 'scan.bounded.mode' = 'latest-offset'")
        s2.execute(f"CREATE TABLE sink (n BIGINT) WITH ('connector' = 'nats', "
                   f"'subject' = '{subject}')")
        s2.execute("INSERT INTO sink SELECT COUNT(*) FROM o")


def test_a_server_that_is_down_is_one_error_without_tracebacks(
        caplog: pytest.LogCaptureFixture) -> None:
    """The NATS client's default error callback logged three Python tracebacks
    (ConnectionRefusedError), which `sqlengine run` showed on stderr before our error; now
    the error alone is shown."""
    pytest.importorskip("nats")
    with socket.socket() as probe:  # (a port nothing listens on)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t (v STRING) WITH ('connector' = 'nats', 'servers' = "
              f"'nats://127.0.0.1:{port}', 'subject' = 'x.y', 'stream' = 's', "
              "'format' = 'json', 'scan.bounded.mode' = 'latest-offset')")
    with pytest.raises(SqlEngineError, match=f"cannot connect to NATS at 'nats://127.0.0.1:{port}'"):
        s.sql("SELECT * FROM t").collect()
    assert not [r for r in caplog.records if r.exc_info or "Traceback" in r.getMessage()]


@pytest.mark.parametrize(("subject", "pattern", "within"), [
    ("a.b", "a.>", True), ("a.b.c", "a.>", True), ("a.*", "a.>", True), ("a.>", "a.>", True),
    ("a", "a.>", False), (">", "a.>", False), ("b.c", "a.>", False),
    ("a.b", "a.*", True), ("a.*", "a.*", True), ("a.>", "a.*", False), ("a.b.c", "a.*", False),
    ("a", "a", True), ("a", "b", False), ("*", "a", False), ("x.y", ">", True),
    ("a.b", "*.b", True), ("a.c", "*.b", False)])
def test_a_subject_within_a_streams_subject(subject: str, pattern: str, within: bool) -> None:
    from sqlengine.connectors.nats_client import subject_within

    assert subject_within(subject, pattern) is within


def test_a_sink_checks_its_stream_and_subject_before_publishing(stream: tuple[str, str]
                                                                ) -> None:
    """A 'stream' that does not exist, or does not take the subject, is named at once (the
    publish was never acknowledged: a 60 s wait, naming neither); a wildcard subject is
    refused (a message was stored under the subject 'x.*' itself). Found by a probe."""
    name, subject = stream
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE nostream (a INT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}_none')")
    started = time.monotonic()
    with pytest.raises(SqlEngineError, match=f"JetStream stream '{name}_none'"):
        s.execute("INSERT INTO nostream VALUES (1)")
    assert time.monotonic() - started < 30  # (was 60 s; the answer comes at once)
    s.execute(f"CREATE TABLE other (a INT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}x', 'stream' = '{name}')")
    with pytest.raises(SqlEngineError, match=f"'{subject}x' is not among the subjects"):
        s.execute("INSERT INTO other VALUES (1)")
    for wild in (f"{subject}.*", f"{subject}.>", "*"):
        s.execute(f"CREATE TABLE w (a INT) WITH ('connector' = 'nats', 'subject' = '{wild}')")
        with pytest.raises(SqlEngineError, match="holds a wildcard"):
            s.execute("INSERT INTO w VALUES (1)")
        s.execute("DROP TABLE w")


def test_comment_messages_are_skipped_with_allow_comments(stream: tuple[str, str]) -> None:
    """'csv.allow-comments': a message of '#' lines is no row (it was a bad message: 'a csv
    message must hold one row, this one holds 0')."""
    name, subject = stream
    _publish(subject, [b"1,a", b"# a comment", b"#two\n#lines", b"2,b"])
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE c (id INT, s STRING) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'format' = 'csv', "
              "'csv.allow-comments' = 'true', 'scan.bounded.mode' = 'latest-offset')")
    q = s.sql("SELECT id, s FROM c")
    assert q.collect().to_pylist() == [{"id": 1, "s": "a"}, {"id": 2, "s": "b"}]
    assert q.skipped_rows == 0


@pytest.mark.parametrize(("option", "value"), [
    ("scan.startup.timestamp-millis", "99999999999999999"),
    ("scan.startup.specific-offset", "99999999999999999999999")])
def test_positions_out_of_range_are_refused_at_create(option: str, value: str) -> None:
    """(A timestamp past year 9999 failed in the reader with Python's 'year ... is out of
    range'; a sequence past 2^64 - 1 with the server's 'invalid JSON'.)"""
    mode = "timestamp" if "timestamp" in option else "sequence"
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=re.escape(f"option {option!r}")):
        s.execute(f"CREATE TABLE t (a INT) WITH ('connector' = 'nats', 'subject' = 'x', "
                  f"'stream' = 'y', 'scan.startup.mode' = '{mode}', '{option}' = '{value}')")


def test_raw_messages_in_a_charset_without_a_one_byte_line_break(stream: tuple[str, str]
                                                                 ) -> None:
    """A message is one value: 'raw.charset' = 'UTF-16LE' reads and writes it (it was refused
    for a file's reason: 'a file's lines cannot be told apart')."""
    name, subject = stream
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE r (v STRING) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'format' = 'raw', 'raw.charset' = "
              "'UTF-16LE', 'scan.bounded.mode' = 'latest-offset')")
    s.execute("INSERT INTO r VALUES ('héllo'), ('a\nb')")
    assert s.sql("SELECT v FROM r").collect().column(0).to_pylist() == ["héllo", "a\nb"]
    with pytest.raises(SqlEngineError, match=r"not INT .*'raw\.endianness'"):
        s.execute(f"CREATE TABLE n (v INT) WITH ('connector' = 'nats', 'subject' = "
                  f"'{subject}', 'format' = 'raw')")
