"""The nats sink against the real NATS server (JetStream): exactly-once into a stream in a
checkpointing job. Each epoch's rows are published when its checkpoint completes, with message
ids JetStream deduplicates: a writer killed while publishing and restored publishes the epoch
again and the stream holds each row once (within the duplicate window by the server, past it
by reading back the ids stored); a job SIGKILLed five times and restored leaves each row once
in the target stream."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import ConnectorError
from tests.connectors import test_nats as nats_tests
from tests.connectors.test_nats import _publish
from tests.connectors.test_nats_checkpoint import _chaos

server = nats_tests.server
URL = "nats://127.0.0.1:4222"


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def streams(server: None) -> Iterator[Any]:
    """Makes JetStream streams (name, subject) on demand; deletes them after the test."""
    import nats

    made: list[str] = []

    def make(duplicate_window: float | None = None) -> tuple[str, str]:
        name = "T" + uuid.uuid4().hex[:10]
        subject = f"sqlengine.{name}"

        async def go() -> None:
            nc = await nats.connect(URL)
            extra = {} if duplicate_window is None else {"duplicate_window": duplicate_window}
            await nc.jetstream().add_stream(name=name, subjects=[subject], **extra)
            await nc.close()

        _run(go())
        made.append(name)
        return name, subject

    yield make

    async def drop() -> None:
        nc = await nats.connect(URL)
        for name in made:
            await nc.jetstream().delete_stream(name)
        await nc.close()

    _run(drop())


def _messages(stream: str) -> list[tuple[bytes, str | None]]:
    """Every message of ``stream`` in order: (payload, its Nats-Msg-Id)."""
    import nats
    from nats.js.api import ConsumerConfig

    async def go() -> list[tuple[bytes, str | None]]:
        nc = await nats.connect(URL)
        js = nc.jetstream()
        total = (await js.stream_info(stream)).state.messages
        out: list[tuple[bytes, str | None]] = []
        if total:
            sub = await js.pull_subscribe("", stream=stream,
                                          config=ConsumerConfig(ack_policy="none"))
            deadline = time.monotonic() + 60
            while len(out) < total:
                assert time.monotonic() < deadline
                for m in await sub.fetch(1000, timeout=5):
                    out.append((m.data, (m.headers or {}).get("Nats-Msg-Id")))
        await nc.close()
        return out

    return _run(go())


SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


def _batch(ids: range) -> pa.RecordBatch:
    return pa.record_batch([pa.array(list(ids), pa.int64()),
                            pa.array([f"row '{i}'\n" for i in ids])], schema=SCHEMA)


def _ids(stream: str) -> list[int]:
    return [json.loads(p)["id"] for p, _ in _messages(stream)]


def _writer(subject: str, stream: str | None = None) -> Any:
    from sqlengine.connectors.nats_sink import CommittingNatsWriter

    options = {"subject": subject, **({"stream": stream} if stream else {})}
    return CommittingNatsWriter("out", options, SCHEMA, subtask=0)


def _kill_while_publishing(writer: Any, monkeypatch: pytest.MonkeyPatch, after: int) -> None:
    """``writer.commit`` publishes the first ``after`` messages of its epoch, then its job
    dies (the rest never reaches the server)."""
    import sqlengine.connectors.nats_sink as sink

    real = sink.publish

    def dying(io: Any, where: str, subject: str, stream: str | None, messages: pa.Array,
              ids: list[str] | None = None) -> Any:
        real(io, where, subject, stream, messages.slice(0, after),
             None if ids is None else ids[:after])
        raise RuntimeError("killed")

    monkeypatch.setattr(sink, "publish", dying)


def test_rows_are_published_when_their_checkpoint_completes(streams: Any) -> None:
    name, subject = streams()
    w = _writer(subject, name)
    try:
        w.write(_batch(range(0, 5)))
        w.write(_batch(range(5, 8)))
        assert _messages(name) == []  # (held until the checkpoint completes)
        w.prepare_commit(1)
        w.write(_batch(range(8, 10)))  # (the next epoch)
        w.commit(1)
        got = _messages(name)
        assert [json.loads(p)["id"] for p, _ in got] == list(range(8))
        assert json.loads(got[0][0])["s"] == "row '0'\n"
        assert [mid for _, mid in got] == [f"{w.sink_id}-0-1-{i}" for i in range(8)]
        w.prepare_commit(2)
        w.prepare_commit(3)  # (an epoch without rows)
        w.commit(3)
        assert _ids(name) == list(range(10))
        assert w.pending == [] and w.rows == 10 and w.duplicates == 0
    finally:
        w.close()


def test_a_writer_killed_while_publishing_is_restored_exactly_once(
        streams: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    name, subject = streams()  # (JetStream's default duplicate window: 2 minutes)
    w = _writer(subject)  # (no 'stream': found by its subject when needed)
    w.write(_batch(range(0, 700)))
    w.prepare_commit(4)
    state = w.snapshot()
    w.write(_batch(range(700, 1000)))  # (after the checkpoint: not part of it)
    with monkeypatch.context() as m:
        _kill_while_publishing(w, m, after=300)
        with pytest.raises(RuntimeError, match="killed"):
            w.commit(4)
    w.close()
    assert _ids(name) == list(range(300))

    restored = _writer(subject)
    try:
        restored.restore([state], 0, 1)
        assert restored.sink_id == w.sink_id and restored.rows == 700
        assert restored.duplicates == 300  # (dropped by JetStream: the same ids)
        assert _ids(name) == list(range(700))
        # The replayed rows after the checkpoint (in another order: the ids of the epoch
        # are never reused for other rows) go out with the next checkpoint.
        restored.write(_batch(range(999, 699, -1)))
        restored.prepare_commit(5)
        restored.commit(5)
        assert sorted(_ids(name)) == list(range(1000)) and len(_ids(name)) == 1000
    finally:
        restored.close()


def test_a_restore_past_the_duplicate_window_reads_the_stored_ids(
        streams: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    name, subject = streams(duplicate_window=1.0)
    w = _writer(subject, name)
    w.write(_batch(range(0, 500)))
    w.prepare_commit(1)
    state = w.snapshot()
    with monkeypatch.context() as m:
        _kill_while_publishing(w, m, after=200)
        with pytest.raises(RuntimeError, match="killed"):
            w.commit(1)
    time.sleep(1.5)
    # (the server alone would store them again now: the window has passed)
    from sqlengine.connectors.nats_client import NatsIO
    from sqlengine.connectors.nats_sink import publish

    io = NatsIO("probe", {})
    try:
        again = publish(io, "probe", subject, name, pa.array([b'{"id": -1}']),
                        [f"{w.sink_id}-0-1-0"])
    finally:
        io.close()
    assert (again.stored, again.duplicates) == (1, 0)
    w.close()

    restored = _writer(subject, name)
    try:
        restored.restore([state], 0, 1)
        assert restored.duplicates == 200
        assert _ids(name) == [*range(200), -1, *range(200, 500)]
    finally:
        restored.close()


def test_sink_errors_name_the_subject(streams: Any) -> None:
    from sqlengine.connectors.nats_sink import NatsWriter

    w = NatsWriter("out", {"subject": "sqlengine.nowhere." + uuid.uuid4().hex[:8]}, SCHEMA)
    try:
        with pytest.raises(ConnectorError, match=r"table 'out': publishing to "
                                                 r"'sqlengine\.nowhere\.[0-9a-f]+' failed"):
            w.write(_batch(range(3)))
    finally:
        w.close()
    from sqlengine.connectors.nats_sink import CommittingNatsWriter

    with pytest.raises(ConnectorError, match=r"cannot connect to NATS at .nats://127\.0\.0\.1:1."):
        CommittingNatsWriter("out", {"subject": "x", "servers": "nats://127.0.0.1:1"}, SCHEMA)


# -- chaos: a nats -> nats job SIGKILLed five times and restored ------------------------------

EVENTS = 4000


def test_a_killed_and_restored_job_leaves_each_row_once_in_the_stream(
        streams: Any, tmp_path: Path) -> None:
    src, src_subject = streams()
    out, out_subject = streams()
    rng = random.Random(7)
    _publish(src_subject, [json.dumps({"id": i, "v": rng.randrange(1000)}).encode()
                           for i in range(EVENTS)])
    ck = tmp_path / "ck"
    script = tmp_path / "job.sql"
    script.write_text(
        "SET 'execution.runtime-mode' = 'streaming';\n"
        "SET 'execution.checkpointing.interval' = '150 ms';\n"
        f"SET 'execution.checkpointing.dir' = '{ck}';\n"
        f"CREATE TABLE ev (id BIGINT, v INT) WITH ('connector' = 'nats', 'subject' = "
        f"'{src_subject}', 'stream' = '{src}', 'scan.bounded.mode' = 'latest-offset');\n"
        f"CREATE TABLE out (id BIGINT, w INT) WITH ('connector' = 'nats', 'subject' = "
        f"'{out_subject}', 'stream' = '{out}');\n"
        "INSERT INTO out SELECT id, v * 2 FROM ev;\n")
    kills, runs, restored = _chaos(script, ck, rng)
    got = [json.loads(p) for p, _ in _messages(out)]
    ids = [r["id"] for r in got]
    lost, duplicated = EVENTS - len(set(ids)), len(ids) - len(set(ids))
    print(f"\nnats -> nats chaos: {EVENTS} messages, {kills} kills, {runs} runs ({restored} "
          f"restored); {len(got)} messages in the target stream, lost {lost}, duplicated "
          f"{duplicated}")
    assert kills == 5 and restored >= 5
    assert (lost, duplicated) == (0, 0)
    assert sorted(ids) == list(range(EVENTS))
    want = {i: 2 * json.loads(p)["v"] for p, _ in _messages(src) for i in [json.loads(p)["id"]]}
    assert all(r["w"] == want[r["id"]] for r in got)


def test_the_sql_job_writes_with_ids_and_without(streams: Any, tmp_path: Path) -> None:
    """A checkpointing INSERT publishes with message ids; a plain one without."""
    src, src_subject = streams()
    out, out_subject = streams()
    _publish(src_subject, [json.dumps({"id": i}).encode() for i in range(50)])
    ddl = (f"CREATE TABLE ev (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
           f"'{src_subject}', 'stream' = '{src}', 'scan.bounded.mode' = 'latest-offset')",
           f"CREATE TABLE out (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
           f"'{out_subject}')")
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "execution.checkpointing.interval": "100 ms",
                           "execution.checkpointing.dir": str(tmp_path / "ck")})
    for d in ddl:
        s.execute(d)
    s.execute("INSERT INTO out SELECT id FROM ev")
    got = _messages(out)
    assert [json.loads(p)["id"] for p, _ in got] == list(range(50))
    assert all(mid is not None and mid.split("-")[1] == "0" for _, mid in got)
    assert len({mid for _, mid in got}) == 50
    plain = sqlengine.connect({"execution.runtime-mode": "streaming"})
    for d in ddl:
        plain.execute(d)
    plain.execute("INSERT INTO out SELECT id + 100 FROM ev")
    got = _messages(out)[50:]
    assert [json.loads(p)["id"] for p, _ in got] == list(range(100, 150))
    assert all(mid is None for _, mid in got)
