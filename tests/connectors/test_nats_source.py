"""The nats source against the real NATS server (JetStream): startup by timestamp and by stream
sequence, the csv, raw and debezium-json formats (one record per message), bad messages named
by subject and stream sequence or skipped and counted with '<format>.ignore-parse-errors', a
durable consumer that keeps the committed position (acknowledged as checkpoints complete), and
the sink's csv and raw formats read back. The stream holds a second subject, so the subject's
stream sequences are not consecutive."""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors.base import ReadStats, SourceCursor, SourceRead
from sqlengine.errors import SqlEngineError
from tests.connectors import test_nats as nats_tests

server = nats_tests.server
URL = "nats://127.0.0.1:4222"


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def stream(server: None) -> Iterator[tuple[str, str, str]]:
    """A stream of the subjects sqlengine.<name>.>: (name, the subject read, another
    subject)."""
    import nats

    name = "T" + uuid.uuid4().hex[:10]
    subject, other = f"sqlengine.{name}.a", f"sqlengine.{name}.b"

    async def make() -> None:
        nc = await nats.connect(URL)
        await nc.jetstream().add_stream(name=name, subjects=[f"sqlengine.{name}.>"])
        await nc.close()

    async def drop() -> None:
        nc = await nats.connect(URL)
        await nc.jetstream().delete_stream(name)
        await nc.close()

    _run(make())
    yield name, subject, other
    _run(drop())


def _publish(pairs: list[tuple[str, bytes]]) -> list[int]:
    """Publish (subject, payload) pairs in order; their stream sequences."""
    import nats

    async def go() -> list[int]:
        nc = await nats.connect(URL)
        js = nc.jetstream()
        seqs = [(await js.publish(s, p)).seq for s, p in pairs]
        await nc.close()
        return seqs

    return _run(go())


def _mixed(subject: str, other: str, payloads: list[bytes]) -> list[int]:
    """Each payload on ``subject``, a message on ``other`` before every second one; the
    payloads' stream sequences."""
    pairs: list[tuple[str, bytes]] = []
    mine: list[int] = []
    for i, p in enumerate(payloads):
        if i % 2 == 0:
            pairs.append((other, b"{}"))
        mine.append(len(pairs))
        pairs.append((subject, p))
    seqs = _publish(pairs)
    return [seqs[i] for i in mine]


def _session(name: str, subject: str, columns: str, extra: str = "",
             mode: str = "batch") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'scan.bounded.mode' = 'latest-offset'"
              f"{extra})")
    return s


def _ids(s: sqlengine.Session, sql: str = "SELECT id FROM t") -> list[int]:
    return s.sql(sql).collect().column(0).to_pylist()


# -- where a read starts -----------------------------------------------------------------------

def test_startup_by_timestamp_and_by_sequence(stream: tuple[str, str, str]) -> None:
    name, subject, other = stream
    first = _mixed(subject, other, [json.dumps({"id": i}).encode() for i in range(10)])
    time.sleep(0.3)
    at = int(time.time() * 1000)
    time.sleep(0.3)
    second = _mixed(subject, other, [json.dumps({"id": i}).encode() for i in range(10, 20)])
    cols = "id INT"
    ts = ", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = "
    assert _ids(_session(name, subject, cols, ts + f"'{at}'")) == list(range(10, 20))
    assert _ids(_session(name, subject, cols, ts + "'0'")) == list(range(20))
    assert _ids(_session(name, subject, cols, ts + f"'{at + 3_600_000}'")) == []
    seq = ", 'scan.startup.mode' = 'sequence', 'scan.startup.specific-offset' = "
    # (inclusive: the message at that sequence is read first)
    assert _ids(_session(name, subject, cols, seq + f"'{first[7]}'")) == list(range(7, 20))
    # (a sequence of the other subject, published just before id 6: from id 6 on)
    assert first[6] - 1 != first[5]
    assert _ids(_session(name, subject, cols, seq + f"'{first[6] - 1}'")) == list(range(6, 20))
    assert _ids(_session(name, subject, cols, seq + f"'{second[-1]}'")) == [19]
    assert _ids(_session(name, subject, cols, seq + f"'{second[-1] + 1}'")) == []

    # A checkpoint taken before the first message of a timestamp start resumes there.
    schema = pa.schema([("id", pa.int32())])
    options = {"subject": subject, "stream": name, "scan.startup.mode": "timestamp",
               "scan.startup.timestamp-millis": str(at), "scan.bounded.mode": "latest-offset"}
    from sqlengine.connectors.nats_source import NatsReader

    cursor = SourceCursor()
    batches = NatsReader(SourceRead("t", options, schema, ReadStats(), cursor=cursor)).batches()
    got = next(b for b in batches if b is not None).column(0).to_pylist()
    batches.close()
    assert got == list(range(10, 20))
    assert cursor.position == {f"nats:{name}:{subject}": (second[-1], second[-1])}


@pytest.mark.parametrize(("extra", "message"), [
    (", 'scan.startup.mode' = 'sequence'", "needs option 'scan.startup.specific-offset'"),
    (", 'scan.startup.specific-offset' = '3'", "only read with 'scan.startup.mode' = "
                                               "'sequence' .here 'earliest'.: it would be "
                                               "ignored"),
    (", 'scan.startup.mode' = 'sequence', 'scan.startup.specific-offset' = '0'",
     "a stream sequence, 1 to"),
    (", 'scan.startup.mode' = 'timestamp', 'scan.startup.timestamp-millis' = 'noon'",
     "'scan.startup.timestamp-millis' must be an integer"),
    (", 'csv.field-delimiter' = ';'", "an option of the csv format; this table's format is "
                                      "'json'"),
    (", 'durable' = 'a.b'", "option 'durable' must be a JetStream consumer name"),
    (", 'properties.group.id' = 'g'", "use 'durable'"),
    (", 'format' = 'raw'", "the raw format reads and writes a single column; this table has 2"),
])
def test_refusals(stream: tuple[str, str, str], extra: str, message: str) -> None:
    name, subject, _ = stream
    with pytest.raises(SqlEngineError, match=message):
        _session(name, subject, "id INT, s STRING", extra)


# -- formats -------------------------------------------------------------------------------------

def test_csv_raw_and_debezium_json(stream: tuple[str, str, str]) -> None:
    name, subject, other = stream
    _mixed(subject, other, [b'1,"a, b",2.5', b'2,"two\nlines",', b'3,"say ""hi""",-1',
                            b"4,,7"])
    s = _session(name, subject, "id INT, s STRING, x DOUBLE", ", 'format' = 'csv'")
    assert s.sql("SELECT * FROM t").collect().to_pylist() == [
        {"id": 1, "s": "a, b", "x": 2.5}, {"id": 2, "s": "two\nlines", "x": None},
        {"id": 3, "s": 'say "hi"', "x": -1.0}, {"id": 4, "s": "", "x": 7.0}]

    # raw: a message is the value, line breaks and all
    s = _session(name, subject, "v STRING", ", 'format' = 'raw'")
    assert s.sql("SELECT v FROM t").collect().column(0).to_pylist() == [
        '1,"a, b",2.5', '2,"two\nlines",', '3,"say ""hi""",-1', "4,,7"]
    raw = [b"plain", b"with\nline break", b"", "naïve".encode(), b"\xff\xfe"]
    _publish([(other, v) for v in raw])
    s = _session(name, other, "v BYTES", ", 'format' = 'raw'")
    assert s.sql("SELECT v FROM t").collect().column(0).to_pylist()[-5:] == raw
    s = _session(name, other, "v STRING", ", 'format' = 'raw'")
    with pytest.raises(SqlEngineError, match=f"nats {other}:seq:[0-9]+: the message is not "
                                             "valid UTF-8 .byte 1.; declare the column BYTES"):
        s.sql("SELECT v FROM t").collect()


def test_debezium_json_changelog(stream: tuple[str, str, str]) -> None:
    name, subject, other = stream
    events = [
        {"before": None, "after": {"id": 1, "name": "a", "w": 1}, "op": "c"},
        {"before": None, "after": {"id": 2, "name": "b", "w": 2}, "op": "r"},
        {"before": {"id": 1, "name": "a", "w": 1}, "after": {"id": 1, "name": "a", "w": 5},
         "op": "u"},
        {"before": None, "after": {"id": 3, "name": "b", "w": 7}, "op": "c"},
        {"before": {"id": 2, "name": "b", "w": 2}, "after": None, "op": "d"},
    ]
    payloads = [json.dumps(e).encode() for e in events]
    payloads.insert(2, b"")  # (a tombstone: skipped, as Flink skips them)
    _mixed(subject, other, payloads)
    s = _session(name, subject, "id INT, name STRING, w INT",
                 ", 'format' = 'debezium-json'", mode="streaming")
    got = s.sql("SELECT name, COUNT(*) AS n, SUM(w) AS w FROM t GROUP BY name").collect()
    assert sorted((r["name"], r["n"], r["w"]) for r in got.to_pylist()) == \
        [("a", 1, 5), ("b", 1, 7)]
    with pytest.raises(SqlEngineError, match="writing the debezium-json format to nats is not "
                                             "supported"):
        s.execute("INSERT INTO t SELECT 9, 'x', 1")


@pytest.mark.parametrize(("fmt", "columns", "good", "bad", "why", "nulled"), [
    ("json", "id INT, s STRING", [b'{"id": 1, "s": "x"}', b'{"id": 2,\n "s": "y"}'],
     [b'{"id": "one"}', b"{oops", b'{"id": 3,\n"s": "unclosed}', b""],
     "cannot parse|empty message", 1),
    ("csv", "id INT, s STRING", [b"1,x", b'2,"y\nz"'],
     [b"one,x", b'3,"unclosed', b"4,a\n5,b", b"", b'6,"x"y"'],
     "cannot parse|not closed|no row|one row", 1),
    ("debezium-json", "id INT, s STRING",
     [b'{"before": null, "after": {"id": 1, "s": "x"}, "op": "c"}',
      b'{"before": null, "after": {"id": 2, "s": "y"}, "op": "r"}'],
     [b'{"before": null, "after": {"id": 3}, "op": "x"}', b"not json"],
     "unknown Debezium operation|cannot parse", 0),
])
def test_bad_messages_named_or_skipped(stream: tuple[str, str, str], fmt: str, columns: str,
                                       good: list[bytes], bad: list[bytes], why: str,
                                       nulled: int) -> None:
    name, subject, other = stream
    mode = "streaming" if fmt == "debezium-json" else "batch"
    for i, b in enumerate(bad):
        # (each bad message on a subject of its own, after good ones, among other messages)
        alone = f"{subject}.bad{i}"
        seqs = _mixed(alone, other, [*good, b, *good])
        with pytest.raises(SqlEngineError) as info:
            _session(name, alone, columns, f", 'format' = '{fmt}'", mode).sql(
                "SELECT id FROM t").collect()
        assert f"nats {alone}:seq:{seqs[len(good)]}:" in info.value.message, (b, info.value)
        assert re.search(why, info.value.message), info.value.message
        assert f"'{fmt}.ignore-parse-errors'" in info.value.message
    # All of them in one subject, good and bad in turn: the bad ones skipped and counted, but
    # for a value its column cannot hold ("one" as INT): NULL, its row kept, as Flink's
    # formats do under ignore-parse-errors.
    payloads: list[bytes] = []
    for i, b in enumerate(bad):
        payloads += [good[i % len(good)], b]
    _mixed(subject, other, payloads)
    q = _session(name, subject, columns, f", 'format' = '{fmt}', "
                 f"'{fmt}.ignore-parse-errors' = 'true'", mode).sql("SELECT id FROM t")
    got = q.collect().column(0).to_pylist()
    ids = sorted(i for i in got if i is not None)
    assert ids == sorted(json.loads(g)["after"]["id"] if fmt == "debezium-json" else
                         int(g.split(b",")[0]) if fmt == "csv" else json.loads(g)["id"]
                         for g in payloads[0::2])
    assert got.count(None) == nulled
    assert q.skipped_rows == len(bad) - nulled


# -- a durable consumer --------------------------------------------------------------------------

def _consumer(name: str, durable: str) -> Any:
    import nats

    async def go() -> Any:
        nc = await nats.connect(URL)
        info = await nc.jetstream().consumer_info(name, durable)
        await nc.close()
        return info

    return _run(go())


def _reader(name: str, subject: str, cursor: SourceCursor | None, **extra: str
            ) -> Iterator[pa.RecordBatch | None]:
    from sqlengine.connectors.nats_source import NatsReader

    options = {"subject": subject, "stream": name, "scan.bounded.mode": "latest-offset",
               **extra}
    schema = pa.schema([("id", pa.int64())])
    return NatsReader(SourceRead("t", options, schema, ReadStats(), cursor=cursor)).batches()


def test_a_durable_consumer_keeps_the_committed_position(stream: tuple[str, str, str],
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Any) -> None:
    import sqlengine.connectors.nats_source as source

    monkeypatch.setattr(source, "_FETCH", 10)
    name, subject, other = stream
    seqs = _mixed(subject, other, [json.dumps({"id": i}).encode() for i in range(50)])
    durable = "d" + uuid.uuid4().hex[:6]

    # A checkpointing reader: acknowledgements follow completed checkpoints only.
    cursor = SourceCursor()
    batches = _reader(name, subject, cursor, durable=durable)
    got = [x for _ in range(3) for x in next(b for b in batches if b is not None)
           .column(0).to_pylist()]
    assert got == list(range(30))
    assert _consumer(name, durable).ack_floor.stream_seq == 0  # (nothing completed yet)
    cursor.barrier(1)  # (a checkpoint after 30 rows ...)
    assert cursor.position[f"nats:{name}:{subject}"][0] == seqs[29]
    cursor.completed(1)  # (... completes)
    assert _consumer(name, durable).ack_floor.stream_seq == seqs[29]
    batches.close()

    # A fresh start resumes after the last acknowledged message.
    assert [x for b in _reader(name, subject, None, durable=durable) if b is not None
            for x in b.column(0).to_pylist()] == list(range(30, 50))
    # (without checkpoints each batch is acknowledged once its rows went on)
    assert _consumer(name, durable).ack_floor.stream_seq == seqs[49]
    assert [b for b in _reader(name, subject, None, durable=durable) if b is not None] == []

    # A restore goes by its checkpoint, whatever the durable consumer acknowledged (and
    # sets the durable consumer's position back to it).
    restored = _reader(name, subject, SourceCursor({f"nats:{name}:{subject}":
                                                    (seqs[9], seqs[49])}), durable=durable)
    assert [x for b in restored if b is not None for x in b.column(0).to_pylist()] == \
        list(range(10, 50))

    # A durable consumer of another subject is not taken over.
    with pytest.raises(SqlEngineError, match=f"durable consumer '{durable}' of stream "
                                             f"'{name}' filters subject '{subject}', not "
                                             f"'{other}'"):
        list(_reader(name, other, None, durable=durable))

    # A checkpointing SQL job acknowledges what its last checkpoint covered.
    more = _mixed(subject, other, [json.dumps({"id": i}).encode() for i in range(50, 60)])
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "execution.checkpointing.interval": "50 ms",
                           "execution.checkpointing.dir": str(tmp_path / "ck")})
    s.execute(f"CREATE TABLE t (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'scan.bounded.mode' = 'latest-offset', "
              f"'durable' = '{durable}')")
    # (from the restored reader's checkpoint on: it acknowledged nothing)
    assert sorted(s.sql("SELECT id FROM t").collect().column(0).to_pylist()) == \
        list(range(10, 60))
    assert _consumer(name, durable).ack_floor.stream_seq == more[-1]


@pytest.mark.parametrize("mode", ["thread", "process"])
def test_a_parallel_job_acknowledges_its_last_rows_at_the_final_checkpoint(
        stream: tuple[str, str, str], tmp_path: Any, mode: str) -> None:
    """At parallelism 2 the source task ends before the job's final checkpoint completes: it
    waits for it, so a durable consumer acknowledges the job's last rows too (no periodic
    checkpoint completes here: a fresh start would otherwise read them all again)."""
    name, subject, other = stream
    seqs = _mixed(subject, other, [json.dumps({"id": i}).encode() for i in range(40)])
    durable = "d" + uuid.uuid4().hex[:6]
    out = tmp_path / "out"
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": "2", "execution.native.task-mode": mode,
                           "execution.checkpointing.interval": "10 min",
                           "execution.checkpointing.dir": str(tmp_path / "ck")})
    s.execute(f"CREATE TABLE t (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'scan.bounded.mode' = 'latest-offset', "
              f"'durable' = '{durable}')")
    s.execute(f"CREATE TABLE o (k BIGINT, n BIGINT) WITH ('connector' = 'filesystem', "
              f"'path' = '{out}', 'format' = 'csv', 'sink.parallelism' = '2')")
    s.execute("INSERT INTO o SELECT id, id * 2 FROM t")  # (the sink in tasks of its own)
    assert _consumer(name, durable).ack_floor.stream_seq == seqs[-1]
    fresh = sqlengine.connect({"execution.runtime-mode": "streaming"})
    fresh.execute(f"CREATE TABLE t (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
                  f"'{subject}', 'stream' = '{name}', 'scan.bounded.mode' = "
                  f"'latest-offset', 'durable' = '{durable}')")
    assert fresh.sql("SELECT id FROM t").collect().num_rows == 0


def test_sink_formats_read_back(stream: tuple[str, str, str]) -> None:
    name, subject, _ = stream
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE c (id INT, s STRING, x DOUBLE) WITH ('connector' = 'nats', "
              f"'subject' = '{subject}', 'stream' = '{name}', 'format' = 'csv', "
              f"'csv.null-literal' = 'N/A', 'scan.bounded.mode' = 'latest-offset')")
    rows = [(1, "a, b", 1.5), (2, 'q"uote', None), (3, "line\nbreak", 3.0), (4, None, 0.0),
            (5, "", 2.0)]
    values = ", ".join(f"({i}, {'CAST(NULL AS STRING)' if v is None else repr(v)}, "
                       f"{'CAST(NULL AS DOUBLE)' if x is None else x})" for i, v, x in rows)
    s.execute(f"INSERT INTO c VALUES {values}".replace("'line\\nbreak'",
                                                        "'line' || CHR(10) || 'break'"))
    got = s.sql("SELECT * FROM c").collect().to_pylist()
    assert [(r["id"], r["s"], r["x"]) for r in got] == rows
    s.execute(f"CREATE TABLE r (v STRING) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'format' = 'raw', "
              f"'scan.bounded.mode' = 'latest-offset')")
    s.execute("INSERT INTO r VALUES ('x' || CHR(10) || 'y'), ('')")
    assert s.sql("SELECT v FROM r").collect().column(0).to_pylist()[-2:] == ["x\ny", ""]
    with pytest.raises(SqlEngineError, match="the raw format cannot write NULL"):
        s.execute("INSERT INTO r VALUES (CAST(NULL AS STRING))")
