"""The nats source under checkpoints, against the real NATS server (JetStream) and the real
PostgreSQL: a restored reader resumes at the message after the last one it turned into rows
(bounded and 'latest' reads keep their bounds), a checkpointing job writes to the nats sink,
and a checkpointed GROUP BY from a stream upserted into PostgreSQL through the jdbc
sink, its ``sqlengine run --restore`` process group SIGKILLed five times at random moments,
ends with the table equal to the same query's batch result (no message lost or counted
twice)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors.base import ReadStats, SourceCursor, SourceRead
from tests.connectors import test_jdbc_postgres as jdbc_tests
from tests.connectors import test_nats as nats_tests
from tests.connectors.test_jdbc_postgres import URL, _sql
from tests.connectors.test_nats import _publish

# The fixtures of the nats and jdbc tests: the servers (started if stopped), a fresh
# JetStream stream, a PostgreSQL connection.
server, stream, pg = nats_tests.server, nats_tests.stream, jdbc_tests.pg

SCHEMA = pa.schema([("id", pa.int64())])


def _reader(name: str, subject: str, cursor: SourceCursor, **extra: str
            ) -> Iterator[pa.RecordBatch | None]:
    from sqlengine.connectors.nats_source import NatsReader

    options = {"subject": subject, "stream": name, **extra}
    return NatsReader(SourceRead("t", options, SCHEMA, ReadStats(), cursor=cursor)).batches()


def _next(batches: Iterator[pa.RecordBatch | None]) -> list[int]:
    """The ids of the next batch of rows (past the polls that found no message)."""
    deadline = time.monotonic() + 60
    while (b := next(batches)) is None:
        assert time.monotonic() < deadline
    return b.column(0).to_pylist()


def _ids(batches: Iterator[pa.RecordBatch | None], limit: int | None = None) -> list[int]:
    """The ids read (to the end, or until ``limit`` of them)."""
    got: list[int] = []
    deadline = time.monotonic() + 60
    for b in batches:
        assert time.monotonic() < deadline
        if b is not None:
            got.extend(b.column(0).to_pylist())
        if limit is not None and len(got) >= limit:
            break
    return got


def test_a_restored_reader_resumes_at_the_next_message(stream: tuple[str, str],
                                                        monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    import sqlengine.connectors.nats_source as nats_connector

    monkeypatch.setattr(nats_connector, "_FETCH", 7)  # (many batches)
    name, subject = stream
    _publish(subject, [json.dumps({"id": i}).encode() for i in range(1, 101)])
    bounded = {"scan.bounded.mode": "latest-offset"}
    for cut in (1, 2, 7, 14, 15):
        cursor = SourceCursor()
        batches = _reader(name, subject, cursor, **bounded)
        first: list[int] = []
        for _ in range(cut):  # (a snapshot is taken before the next batch is asked for)
            first.extend(_next(batches))
        snapshot = dict(cursor.position)
        batches.close()
        n = len(first)
        assert first == list(range(1, n + 1))
        assert snapshot == {f"nats:{name}:{subject}": (n, 100)}  # (the stream sequence)
        rest = _ids(_reader(name, subject, SourceCursor(snapshot), **bounded))
        assert rest[:1] == ([n + 1] if n < 100 else [])
        assert first + rest == list(range(1, 101)), cut

    # The bound of a bounded read is the stream's last sequence when the job first started:
    # messages published after it are not read by the restored job either.
    cursor = SourceCursor()
    batches = _reader(name, subject, cursor, **bounded)
    n = len(_next(batches))
    snapshot = dict(cursor.position)
    batches.close()
    _publish(subject, [json.dumps({"id": i}).encode() for i in range(101, 111)])
    assert _ids(_reader(name, subject, SourceCursor(snapshot), **bounded)) == \
        list(range(n + 1, 101))

    # 'latest': the position is the stream's end when the job started, so what is published
    # between the snapshot and the restore is read (not skipped as older than the restore).
    cursor = SourceCursor()
    batches = _reader(name, subject, cursor, **{"scan.startup.mode": "latest"})
    assert next(batches) is None  # (nothing new yet)
    snapshot = dict(cursor.position)
    batches.close()
    assert snapshot == {f"nats:{name}:{subject}": (110, None)}
    _publish(subject, [json.dumps({"id": i}).encode() for i in range(111, 116)])
    assert _ids(_reader(name, subject, SourceCursor(snapshot),
                        **{"scan.startup.mode": "latest"}), limit=5) == list(range(111, 116))


def test_checkpointing_jobs_take_the_source_and_the_sink(stream: tuple[str, str],
                                                         tmp_path: Path) -> None:
    name, subject = stream
    _publish(subject, [json.dumps({"id": i}).encode() for i in range(1, 51)])
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "execution.checkpointing.interval": "100 ms",
                           "execution.checkpointing.dir": str(tmp_path / "ck")})
    s.execute(f"CREATE TABLE src (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'scan.bounded.mode' = 'latest-offset')")
    assert s.sql("SELECT SUM(id) AS total FROM src").collect().to_pylist()[-1] == \
        {"total": 1275}
    s.execute(f"CREATE TABLE out (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}')")
    # (exactly-once: test_nats_sink.py)
    s.execute("INSERT INTO out SELECT id + 100 FROM src")
    b = sqlengine.connect({"execution.runtime-mode": "batch"})
    b.execute(f"CREATE TABLE src (id BIGINT) WITH ('connector' = 'nats', 'subject' = "
              f"'{subject}', 'stream' = '{name}', 'scan.bounded.mode' = 'latest-offset')")
    assert b.sql("SELECT id FROM src").collect().column(0).to_pylist() == \
        list(range(1, 51)) + list(range(101, 151))


# -- chaos: kill -9 the job five times, restore it each time, compare with the batch result --

EVENTS = 4000
KILLS = 5
WINDOW = (0.3, 1.5)  # seconds after a run's first checkpoint
# The job in the subprocess reads 20 messages per fetch and takes 50 ms more over each batch:
# 200 batches, at least 10 s, so that five kills (each at most 1.5 s after the run's first
# checkpoint) land before the end whatever the machine's speed.
PRELUDE = ("import sys, time; from sqlengine.shell.cli import main; "
           "import sqlengine.connectors.nats_source as n; n._FETCH = 20; b = n.NatsReader._batch; "
           "n.NatsReader._batch = lambda self, m: (time.sleep(0.05), b(self, m))[1]; "
           "sys.exit(main())")

DDL = """
CREATE TABLE ev (k STRING, v BIGINT) WITH ('connector' = 'nats', 'subject' = '{subject}',
    'stream' = '{stream}', 'scan.bounded.mode' = 'latest-offset');
"""
QUERY = "SELECT k, COUNT(*) AS n, SUM(v) AS total, MAX(v) AS top FROM ev GROUP BY k"


def _checkpoints(ck: Path) -> set[Path]:
    return set(ck.glob("*/chk-*/_metadata"))


def _chaos(script: Path, ck: Path, rng: random.Random) -> tuple[int, int, int]:
    """Run ``script`` with --restore, SIGKILLing its process group KILLS times (each 0.3-1.5 s
    after a run's first completed checkpoint), until a run ends by itself; (kills, runs,
    runs restored from a checkpoint)."""
    argv = [sys.executable, "-c", PRELUDE, "run", str(script), "--restore", str(ck)]
    kills = runs = restored = 0
    while True:
        runs += 1
        before = _checkpoints(ck)
        restored += bool(before)
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, start_new_session=True)
        try:
            if kills < KILLS:
                deadline = time.monotonic() + 60
                while not _checkpoints(ck) - before and p.poll() is None:
                    assert time.monotonic() < deadline, "no checkpoint completed in 60 s"
                    time.sleep(0.01)
                try:
                    p.wait(timeout=rng.uniform(*WINDOW))
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
                    kills += 1
                    continue
            out, _ = p.communicate(timeout=300)
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        assert p.returncode == 0, out
        return kills, runs, restored


def test_killed_and_restored_job_upserts_exactly_the_batch_result(
        stream: tuple[str, str], pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    name, subject = stream
    rng = random.Random(23)
    events = [{"k": f"k{rng.randrange(37)}", "v": rng.randrange(-500, 10_000)}
              for _ in range(EVENTS)]
    _publish(subject, [json.dumps(e).encode() for e in events])
    target = f"agg_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {target} (k TEXT PRIMARY KEY, n BIGINT, total BIGINT, top BIGINT)")
    try:
        ck = tmp_path / "ck"
        script = tmp_path / "job.sql"
        script.write_text(
            "SET 'execution.runtime-mode' = 'streaming';\n"
            "SET 'execution.checkpointing.interval' = '150 ms';\n"
            f"SET 'execution.checkpointing.dir' = '{ck}';\n"
            + DDL.format(subject=subject, stream=name)
            + f"CREATE TABLE agg (k STRING, n BIGINT, total BIGINT, top BIGINT, PRIMARY KEY (k) "
              f"NOT ENFORCED) WITH ('connector' = 'jdbc', 'url' = '{URL}', 'table-name' = "
              f"'{target}', 'username' = 'root');\n"
            f"INSERT INTO agg {QUERY};\n")
        kills, runs, restored = _chaos(script, ck, rng)

        got = {r[0]: tuple(int(x) for x in r[1:])
               for r in _sql(pg, f"SELECT k, n, total, top FROM {target}")}
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {target}")

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(DDL.format(subject=subject, stream=name))
    want = {r["k"]: (r["n"], r["total"], r["top"]) for r in s.sql(QUERY).collect().to_pylist()}
    lost = sum(max(0, n - got.get(k, (0,))[0]) for k, (n, _, _) in want.items())
    duplicated = sum(max(0, n - want.get(k, (0,))[0]) for k, (n, _, _) in got.items())
    print(f"\nnats -> PostgreSQL chaos: {EVENTS} messages, {kills} kills, {runs} runs "
          f"({restored} restored from a checkpoint), {len(got)} rows; lost {lost}, "
          f"duplicated {duplicated}")
    assert kills == KILLS and restored >= KILLS
    assert sum(n for n, _, _ in want.values()) == EVENTS
    assert (lost, duplicated) == (0, 0)
    assert got == want


PIPELINE_DDL = """
CREATE TABLE ev (k STRING, v BIGINT, ts TIMESTAMP(3),
    WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'nats',
    'subject' = '{subject}', 'stream' = '{stream}', 'scan.bounded.mode' = 'latest-offset');
CREATE TABLE regions (k STRING, region STRING) WITH ('connector' = 'jdbc', 'url' = '{url}',
    'table-name' = '{regions}', 'username' = 'root', 'lookup.cache' = 'PARTIAL',
    'lookup.partial-cache.max-rows' = '100');
"""
PIPELINE = ("SELECT w.k, w.window_start, d.region, w.n, w.total FROM (SELECT k, window_start, "
            "COUNT(*) AS n, SUM(v) AS total, PROCTIME() AS pt FROM TABLE(TUMBLE(TABLE ev, "
            "DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY k, window_start, window_end) AS w "
            "JOIN regions FOR SYSTEM_TIME AS OF w.pt AS d ON w.k = d.k")


def test_a_nexmark_style_pipeline_survives_five_kills(
        stream: tuple[str, str], pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Events from NATS, a TUMBLE window aggregation, a lookup join with a PostgreSQL
    dimension table, upserted into PostgreSQL: after 5 SIGKILLs and restores the table equals
    the same query's batch result (0 lost, 0 duplicated)."""
    name, subject = stream
    rng = random.Random(31)
    start = 1_600_000_000_000
    events = [{"k": f"k{rng.randrange(37)}", "v": rng.randrange(-500, 10_000),
               "ts": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((start + i * 50) // 1000))
               + f".{(start + i * 50) % 1000:03d}"} for i in range(EVENTS)]
    _publish(subject, [json.dumps(e).encode() for e in events])
    tag = uuid.uuid4().hex[:8]
    regions, target = f"regions_{tag}", f"win_{tag}"
    _sql(pg, f"CREATE TABLE {regions} (k TEXT PRIMARY KEY, region TEXT)",
         f"INSERT INTO {regions} VALUES " + ", ".join(f"('k{i}', 'r{i % 5}')"
                                                      for i in range(34)),  # (k34..36: none)
         f"CREATE TABLE {target} (k TEXT, window_start TIMESTAMP, region TEXT, n BIGINT, "
         "total BIGINT, PRIMARY KEY (k, window_start))")
    ddl = PIPELINE_DDL.format(subject=subject, stream=name, url=URL, regions=regions)
    try:
        ck = tmp_path / "ck"
        script = tmp_path / "job.sql"
        script.write_text(
            "SET 'execution.runtime-mode' = 'streaming';\n"
            "SET 'execution.checkpointing.interval' = '150 ms';\n"
            f"SET 'execution.checkpointing.dir' = '{ck}';\n" + ddl
            + f"CREATE TABLE out (k STRING, window_start TIMESTAMP(3), region STRING, n BIGINT, "
              f"total BIGINT, PRIMARY KEY (k, window_start) NOT ENFORCED) WITH ('connector' = "
              f"'jdbc', 'url' = '{URL}', 'table-name' = '{target}', 'username' = 'root');\n"
            f"INSERT INTO out {PIPELINE};\n")
        kills, runs, restored = _chaos(script, ck, rng)
        got = sorted((r[0], r[1], r[2], int(r[3]), int(r[4]))
                     for r in _sql(pg, f"SELECT k, window_start, region, n, total FROM {target}"))
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.execute(ddl)
        want = sorted(tuple(r.values()) for r in s.sql(PIPELINE).collect().to_pylist())
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {target}", f"DROP TABLE IF EXISTS {regions}")
    counted = {(r[0], r[1]): r[3] for r in got}
    expected = {(r[0], r[1]): r[3] for r in want}
    lost = sum(max(0, n - counted.get(key, 0)) for key, n in expected.items())
    duplicated = sum(max(0, n - expected.get(key, 0)) for key, n in counted.items())
    print(f"\nnats -> window -> lookup -> PostgreSQL chaos: {EVENTS} messages, {kills} kills, "
          f"{runs} runs ({restored} restored), {len(got)} rows; lost {lost}, duplicated "
          f"{duplicated}")
    assert kills == KILLS and restored >= KILLS
    assert len(want) > 300 and all(r[2] is not None for r in want)
    assert (lost, duplicated) == (0, 0)
    assert got == want
