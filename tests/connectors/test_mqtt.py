"""The mqtt source against the real Mosquitto broker (127.0.0.1:1883, started if it has
stopped): json, csv and raw messages, a bad message named by topic and place or skipped and
counted, at-least-once through a persistent session (what a completed checkpoint covers is
acknowledged; the rest comes again to the next reader of the client id), and refusals."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors.base import ReadStats, SourceCursor, SourceRead
from sqlengine.errors import SqlEngineError

paho = pytest.importorskip("paho.mqtt.client")


def _up() -> bool:
    try:
        with socket.create_connection(("127.0.0.1", 1883), timeout=2):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def broker() -> None:
    if not _up():
        binary = shutil.which("mosquitto")
        if binary is None:
            pytest.fail("mosquitto is not installed on this machine")
        Path("/run/mosquitto").mkdir(parents=True, exist_ok=True)
        subprocess.run([binary, "-c", "/etc/mosquitto/mosquitto.conf", "-d"],
                       capture_output=True, timeout=30)
        for _ in range(50):
            if _up():
                break
            time.sleep(0.2)


def _client(client_id: str = "", clean: bool = False) -> object:
    from paho.mqtt.enums import CallbackAPIVersion
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=paho.MQTTv5)
    props = Properties(PacketTypes.CONNECT)
    if client_id and not clean:
        props.SessionExpiryInterval = 300
    c.connect("127.0.0.1", 1883, clean_start=clean or not client_id, properties=props)
    c.loop_start()
    return c


def _persistent(tag: str) -> tuple[str, str]:
    """A fresh topic and a client id whose persistent session subscribes to it (so what is
    published from now on is queued for it)."""
    name, client_id = f"sqlengine/{tag}/events", f"sqlengine-test-{tag}"
    c = _client(client_id)
    c.subscribe(name, qos=1)  # type: ignore[attr-defined]
    time.sleep(0.3)
    c.disconnect()  # type: ignore[attr-defined]
    c.loop_stop()  # type: ignore[attr-defined]
    return name, client_id


@pytest.fixture
def topics(broker: None) -> Iterator[object]:
    """Makes (topic, client id) pairs on demand; ends their sessions after the test."""
    made: list[str] = []

    def make() -> tuple[str, str]:
        name, client_id = _persistent(uuid.uuid4().hex[:8])
        made.append(client_id)
        return name, client_id

    yield make
    for client_id in made:  # (the session ends with a clean start)
        end = _client(client_id, clean=True)
        end.disconnect()  # type: ignore[attr-defined]
        end.loop_stop()  # type: ignore[attr-defined]


@pytest.fixture
def topic(topics: object) -> tuple[str, str]:
    return topics()  # type: ignore[operator,no-any-return]


def _publish(name: str, payloads: list[bytes]) -> None:
    c = _client()
    for p in payloads:
        c.publish(name, p, qos=1).wait_for_publish(30)  # type: ignore[attr-defined]
    c.disconnect()  # type: ignore[attr-defined]
    c.loop_stop()  # type: ignore[attr-defined]


def _session(name: str, client_id: str, columns: str, extra: str = "",
             settings: dict[str, str] | None = None) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **(settings or {})})
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'mqtt', 'topic' = '{name}', "
              f"'client-id' = '{client_id}'{extra})")
    return s


def test_formats_and_bad_messages(topics: object) -> None:
    # (a topic and session for each query: a reader closed late by its job would take the
    # session back from the next one, and what it had not acknowledged go to that one)
    name, client_id = topics()  # type: ignore[operator]
    _publish(name, [json.dumps({"id": i, "v": f"x{i}"}).encode() for i in range(5)])
    got = _session(name, client_id, "id INT, v STRING").sql(
        "SELECT id, v FROM t LIMIT 5").collect().to_pylist()
    assert sorted((r["id"], r["v"]) for r in got) == [(i, f"x{i}") for i in range(5)]

    name, client_id = topics()  # type: ignore[operator]
    _publish(name, [b'1,"a, b"', b'2,"two\nlines"', b"3,"])
    got = _session(name, client_id, "id INT, v STRING", ", 'format' = 'csv'").sql(
        "SELECT id, v FROM t LIMIT 3").collect().to_pylist()
    assert sorted((r["id"], r["v"]) for r in got) == [(1, "a, b"), (2, "two\nlines"), (3, "")]

    name, client_id = topics()  # type: ignore[operator]
    _publish(name, [b"plain", b"line\nbreak"])
    got = _session(name, client_id, "v STRING", ", 'format' = 'raw'").sql(
        "SELECT v FROM t LIMIT 2").collect().column(0).to_pylist()
    assert sorted(got) == ["line\nbreak", "plain"]

    name, client_id = topics()  # type: ignore[operator]
    _publish(name, [b'{"id": "one"}', b'{"id": 7}', b'{"id": 8}'])
    with pytest.raises(SqlEngineError, match=f"mqtt {name}:msg:1: cannot parse JSON row"):
        _session(name, client_id, "id INT").sql("SELECT id FROM t LIMIT 3").collect()
    # (the bad message was not acknowledged: it comes again, then its value is NULL, as in
    # Flink's json format under ignore-parse-errors)
    q = _session(name, client_id, "id INT", ", 'json.ignore-parse-errors' = 'true'").sql(
        "SELECT id FROM t LIMIT 3")
    assert sorted(q.collect().column(0).to_pylist(), key=str) == [7, 8, None]
    assert q.skipped_rows == 0


def _reader(name: str, client_id: str, cursor: SourceCursor | None
            ) -> Iterator[pa.RecordBatch | None]:
    from sqlengine.connectors.mqtt_source import MqttReader

    options = {"topic": name, "client-id": client_id}
    schema = pa.schema([("id", pa.int64())])
    return MqttReader(SourceRead("t", options, schema, ReadStats(), cursor=cursor)).batches()


def _take(batches: Iterator[pa.RecordBatch | None], n: int) -> list[int]:
    got: list[int] = []
    deadline = time.monotonic() + 60
    while len(got) < n:
        assert time.monotonic() < deadline, f"{len(got)} of {n} messages in 60 s"
        b = next(batches)
        if b is not None:
            got.extend(b.column(0).to_pylist())
    return got


def test_at_least_once_through_the_session(topic: tuple[str, str]) -> None:
    name, client_id = topic
    ids = iter(range(1000))

    def publish(n: int) -> list[int]:
        chunk = [next(ids) for _ in range(n)]
        _publish(name, [json.dumps({"id": i}).encode() for i in chunk])
        return chunk

    first = publish(10)
    cursor = SourceCursor()
    batches = _reader(name, client_id, cursor)
    assert _take(batches, 10) == first
    cursor.barrier(1)
    cursor.completed(1)  # (acknowledged: never delivered again)
    second = publish(10)
    assert _take(batches, 10) == second
    cursor.barrier(2)  # (a checkpoint that never completes: the job dies)
    batches.close()

    third = publish(5)
    again = _reader(name, client_id, SourceCursor())
    got = _take(again, 15)
    assert sorted(got) == sorted(second + third)  # (none lost; what 2 covered comes again)
    again.close()

    # Without checkpoints each batch is acknowledged once its rows went on.
    plain = _reader(name, client_id, None)
    assert sorted(_take(plain, 15)) == sorted(second + third)
    next(plain)  # (the reader goes on: the last batch is acknowledged)
    plain.close()
    fourth = publish(3)
    rest = _reader(name, client_id, None)
    assert _take(rest, 3) == fourth
    rest.close()


def test_checkpointing_jobs_and_refusals(topic: tuple[str, str], tmp_path: Path) -> None:
    name, client_id = topic
    _publish(name, [json.dumps({"id": i}).encode() for i in range(4)])
    ck = {"execution.checkpointing.interval": "50 ms",
          "execution.checkpointing.dir": str(tmp_path / "ck")}
    s = _session(name, client_id, "id INT", settings=ck)
    assert sorted(s.sql("SELECT id FROM t LIMIT 4").collect().column(0).to_pylist()) == \
        [0, 1, 2, 3]
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **ck})
    for extra, message in [("", "needs 'client-id' in a checkpointing job"),
                           (f", 'client-id' = '{client_id}', 'qos' = '0'",
                            "'qos' = '0' cannot take part in checkpoints")]:
        s.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS x{len(extra)} (id INT) WITH "
                  f"('connector' = 'mqtt', 'topic' = '{name}'{extra})")
        with pytest.raises(SqlEngineError, match=message):
            s.sql(f"SELECT id FROM x{len(extra)} LIMIT 1").collect()
    for extra, message in [(", 'scan.bounded.mode' = 'latest-offset'", "has no end"),
                           (", 'format' = 'debezium-json'", "format"),
                           (", 'servers' = 'localhost'", "tcp://host:port"),
                           (", 'session-expiry' = '60'", "only read with 'client-id'")]:
        with pytest.raises(SqlEngineError, match=message):
            s.execute(f"CREATE TABLE b (id INT) WITH ('connector' = 'mqtt', 'topic' = 'x'"
                      f"{extra})")
    s.execute("CREATE TABLE two (a INT, b INT) WITH ('connector' = 'mqtt', 'topic' = 'x')")
    with pytest.raises(SqlEngineError, match=r"cannot be written|source only|not a sink"):
        s.execute("INSERT INTO two VALUES (1, 2)")
    plain = sqlengine.connect({"execution.runtime-mode": "streaming"})
    plain.execute("CREATE TABLE far (a INT) WITH ('connector' = 'mqtt', 'topic' = 'x', "
                  "'servers' = 'tcp://127.0.0.1:1')")
    with pytest.raises(SqlEngineError, match=r"cannot connect to MQTT at 'tcp://127\.0\.0\.1:1'"):
        plain.sql("SELECT a FROM far LIMIT 1").collect()


@pytest.mark.parametrize(("option", "value"), [
    ("servers", "ssl://127.0.0.1:1883"), ("servers", "ws://127.0.0.1:9001"),
    ("topic", "a/#/b"), ("topic", "sensors/x+"), ("topic", "")])
def test_a_scheme_or_topic_it_cannot_honour_is_refused_at_create(option: str, value: str
                                                                  ) -> None:
    """'ssl://' connected in plain TCP (the scheme was dropped); an invalid topic filter
    failed only once the job ran, with paho's 'Invalid subscription filter'. Both are
    refused at CREATE TABLE naming the option and the value (no broker is reached)."""
    options = {"servers": "tcp://127.0.0.1:1883", "topic": "a/+/c", option: value}
    text = ", ".join(f"'{k}' = '{v}'" for k, v in options.items())
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=re.escape(f"option {option!r}: ") + ".*" +
                       re.escape(repr(value))):
        s.execute(f"CREATE TABLE m (v STRING) WITH ('connector' = 'mqtt', 'format' = 'raw', "
                  f"{text})")
    s.execute("CREATE TABLE ok (v STRING) WITH ('connector' = 'mqtt', 'format' = 'raw', "
              "'servers' = 'mqtt://127.0.0.1:1883', 'topic' = 'a/+/#')")


@pytest.mark.parametrize(("extra", "option"), [
    (", 'password' = 'secret'", "password"),
    (", 'client-id' = '', 'session-expiry' = '600'", "client-id"),
    (", 'client-id' = 'c', 'session-expiry' = '99999999999'", "session-expiry"),
    (", 'servers' = 'tcp://127.0.0.1:99999'", "servers"),
    (", 'json.encode.decimal-as-plain-number' = 'true'", "json.encode.decimal-as-plain-number"),
])
def test_options_that_would_not_act_are_refused_at_create(extra: str, option: str) -> None:
    """A password without a username was not sent; an empty client-id gave no persistent
    session; a session expiry past MQTT's four bytes and a port past 65535 failed only at
    connect; a write option of a source-only connector did nothing. Found by a probe."""
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=re.escape(f"option {option!r}")):
        s.execute(f"CREATE TABLE m (v STRING) WITH ('connector' = 'mqtt', 'topic' = 'a'"
                  f"{extra})")
