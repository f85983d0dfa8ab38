"""Checkpointed jobs end to end: a windowed aggregation from csv into a csv sink, failed at
each step of the checkpoint protocol (failpoints) and restored; the committed output equals an
uninterrupted run's, line for line (none lost, none doubled)."""

from __future__ import annotations

import collections
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import sqlengine
from sqlengine import failpoints
from sqlengine.errors import CheckpointError, SqlEngineError

DDL = """
CREATE TABLE ev (k BIGINT, v BIGINT, ts TIMESTAMP(3),
                 WATERMARK FOR ts AS ts - INTERVAL '2' SECOND)
WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv');
CREATE TABLE out_t (k BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, mx BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
"""
INSERT = """INSERT INTO out_t
SELECT k, window_start, window_end, COUNT(*), MAX(v)
FROM TABLE(TUMBLE(TABLE ev, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY k, window_start, window_end"""


# (15,000 rows read in blocks of 8 KiB: as many blocks, so as many batches and checkpoints
# for the failpoints to count, as 30,000 rows in blocks of 16 KiB, with half the rows)
EVENT_ROWS = 15_000
BLOCK_BYTES = 8 << 10


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(11)
    path = tmp_path_factory.mktemp("ev") / "ev.csv"
    lines = []
    t = 1_700_000_000_000
    for i in range(EVENT_ROWS):
        t += rng.randint(0, 40)
        jitter = rng.randint(0, 1500)  # (out of order, within the watermark's 2 s mostly)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime((t - jitter) // 1000))
        lines.append(f"{rng.randint(1, 50)},{i},{stamp}.{(t - jitter) % 1000:03d}\n")
    path.write_text("".join(lines))
    return path


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlengine.connectors.text_blocks as tb

    monkeypatch.setattr(tb, "BLOCK_BYTES", BLOCK_BYTES)  # (many batches: many checkpoints)
    monkeypatch.delenv(failpoints.ENV, raising=False)
    failpoints.reset()


def _run(src: Path, out: Path, checkpoints: Path | None = None, restore: bool = False,
         **options: str) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **options})
    if checkpoints is not None:
        s.set("execution.checkpointing.interval", "1 ms")  # (after every batch)
        s.set("execution.checkpointing.dir", str(checkpoints))
    if restore:
        assert checkpoints is not None
        s.restore_from(str(checkpoints))
    s.execute(DDL.format(src=src, out=out))
    s.execute(INSERT)
    return s


def _lines(out: Path) -> collections.Counter[str]:
    lines: collections.Counter[str] = collections.Counter()
    for f in out.glob("part-*"):
        lines.update(f.read_text().splitlines())
    return lines


@pytest.fixture(scope="module")
def reference(events: Path, tmp_path_factory: pytest.TempPathFactory
              ) -> collections.Counter[str]:
    out = tmp_path_factory.mktemp("ref") / "out"
    _run(events, out)
    lines = _lines(out)
    assert sum(lines.values()) > 1000
    return lines


def test_checkpointing_does_not_change_the_result(events: Path, reference: collections.Counter,
                                                  tmp_path: Path) -> None:
    _run(events, tmp_path / "out", tmp_path / "ck")
    assert _lines(tmp_path / "out") == reference
    assert not [f for f in (tmp_path / "out").iterdir() if f.name.startswith(".")]
    assert len(list((tmp_path / "ck").glob("*/chk-*"))) == 1  # (num-retained 1)


@pytest.mark.parametrize("points", ["snapshot@1", "snapshot@7", "metadata@5", "commit@4",
                                    "snapshot@9,restore@2"])
def test_a_failure_at_each_step_leaves_a_consistent_last_checkpoint(
        events: Path, reference: collections.Counter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, points: str) -> None:
    out, ck = tmp_path / "out", tmp_path / "ck"
    monkeypatch.setenv(failpoints.ENV, points)
    failures = 0
    for _attempt in range(4):
        try:
            _run(events, out, ck, restore=True)
            break
        except SqlEngineError as e:
            assert "failpoint" in e.message
            failures += 1
    assert failures == points.count(",") + 1
    assert _lines(out) == reference
    # (what the failed attempts left uncommitted is gone, whether or not they had completed a
    # checkpoint)
    assert not [f.name for f in out.iterdir() if f.name.startswith(".")]


def test_a_restored_run_of_a_finished_job_writes_nothing_again(
        events: Path, reference: collections.Counter, tmp_path: Path) -> None:
    out, ck = tmp_path / "out", tmp_path / "ck"
    _run(events, out, ck, restore=True)
    _run(events, out, ck, restore=True)
    assert _lines(out) == reference


@pytest.mark.parametrize("forged", [5, {"operators": 5}, {"x": [1]}])
def test_a_state_file_of_another_shape_is_an_error_naming_the_checkpoint(
        events: Path, tmp_path: Path, forged: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # (a file of the right checksum holding other values: "unexpected TypeError: 'int'
    # object is not subscriptable (this is a bug in sqlengine)")
    import pickle
    import zlib

    out, ck = tmp_path / "out", tmp_path / "ck"
    monkeypatch.setenv(failpoints.ENV, "snapshot@12")  # (a job stopped halfway)
    with pytest.raises(SqlEngineError, match="failpoint"):
        _run(events, out, ck)
    monkeypatch.delenv(failpoints.ENV)
    failpoints.reset()
    path = next(ck.glob("*/chk-*"))
    meta = json.loads((path / "_metadata").read_text())
    name, entry = next(iter(meta["subtasks"].items()))
    data = pickle.dumps(forged)
    (path / entry["file"]).write_bytes(data)
    entry.update(size=len(data), crc32=zlib.crc32(data))
    (path / "_metadata").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=f"checkpoint '{path}': the state of vertex "
                                              f"{name.split('-')[0]} is not a task's state"):
        _run(events, tmp_path / "out2", ck, restore=True)


def test_the_restart_strategy_restarts_from_the_last_checkpoint(
        events: Path, reference: collections.Counter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENV, "snapshot@6,commit@20")
    out = tmp_path / "out"
    s = _run(events, out, tmp_path / "ck", **{
        "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "10 ms"})
    assert _lines(out) == reference
    del s


def test_a_partitioned_sink_restarts_with_each_row_once_and_commits_its_partitions(
        events: Path, reference: collections.Counter, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A PARTITIONED BY sink takes part in checkpoints: failed while snapshotting and while
    committing, the job restarts and each partition holds its rows once; each partition
    written gets its success file."""
    monkeypatch.setenv(failpoints.ENV, "snapshot@6,commit@20")
    out = tmp_path / "out"
    s = sqlengine.connect({
        "execution.runtime-mode": "streaming", "execution.checkpointing.interval": "1 ms",
        "execution.checkpointing.dir": str(tmp_path / "ck"),
        "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "10 ms"})
    s.execute(DDL.format(src=events, out=tmp_path / "unused").replace(
        "n BIGINT, mx BIGINT)", "n BIGINT, mx BIGINT) PARTITIONED BY (k)").replace(
        f"'path' = '{tmp_path / 'unused'}', 'format' = 'csv'",
        f"'path' = '{out}', 'format' = 'csv', "
        "'sink.partition-commit.policy.kind' = 'success-file'"))
    message = s.execute(INSERT)[-1].message
    assert message.count("the job failed and restarted from its last checkpoint") == 2
    lines: collections.Counter[str] = collections.Counter()
    for f in out.glob("k=*/part-*"):
        lines.update(f"{f.parent.name[2:]},{line}" for line in f.read_text().splitlines())
    assert lines == reference
    assert not list(out.rglob(".part-*"))
    partitions = sorted(d.name for d in out.iterdir())
    assert len(partitions) == 50
    assert sorted(f.parent.name for f in out.glob("k=*/_SUCCESS")) == partitions


def test_an_exhausted_restart_strategy_says_so(events: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The job that fails again after its last restart gave only the last failure, as if
    never retried; Flink says recovery was suppressed by the strategy."""
    monkeypatch.setenv(failpoints.ENV, "snapshot@3,snapshot@5,snapshot@7")
    with pytest.raises(CheckpointError) as info:
        _run(events, tmp_path / "out", tmp_path / "ck", **{
            "restart-strategy.type": "fixed-delay",
            "restart-strategy.fixed-delay.attempts": "2",
            "restart-strategy.fixed-delay.delay": "10 ms"})
    assert "InjectedFailure" in info.value.message
    assert "failed 3 times: restarted 2 times, as 'restart-strategy.fixed-delay.attempts' " \
        "allows, then given up" in info.value.message


def test_without_a_restart_strategy_a_failure_fails_the_job(
        events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(failpoints.ENV, "snapshot@3")
    with pytest.raises(CheckpointError, match=r"checkpoint .* failed: InjectedFailure"):
        _run(events, tmp_path / "out", tmp_path / "ck")


def test_a_corrupt_checkpoint_is_an_error_naming_it(events: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    out, ck = tmp_path / "out", tmp_path / "ck"
    monkeypatch.setenv(failpoints.ENV, "snapshot@8")
    with pytest.raises(SqlEngineError):
        _run(events, out, ck)
    monkeypatch.delenv(failpoints.ENV)
    state = next(ck.glob("*/chk-*/v2-0.state"))
    state.write_bytes(state.read_bytes()[:-3])
    with pytest.raises(CheckpointError) as info:
        _run(events, out, ck, restore=True)
    assert f"checkpoint {str(state.parent)!r}: state file 'v2-0.state' is corrupt" \
        in info.value.message


def _restoring_a_failed_run(events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                            ) -> sqlengine.Session:
    """A session restoring from the checkpoints of a run that failed at its 8th snapshot."""
    ck = tmp_path / "ck"
    monkeypatch.setenv(failpoints.ENV, "snapshot@8")
    with pytest.raises(SqlEngineError):
        _run(events, tmp_path / "out", ck)
    monkeypatch.delenv(failpoints.ENV)
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "execution.checkpointing.interval": "1 s",
                           "execution.checkpointing.dir": str(ck)})
    s.restore_from(str(ck))
    return s


def test_a_checkpoint_of_another_query_is_refused(events: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    s = _restoring_a_failed_run(events, tmp_path, monkeypatch)
    s.execute(DDL.format(src=events, out=tmp_path / "out2"))
    with pytest.raises(CheckpointError, match="taken of a different query: its state layout"):
        s.execute("INSERT INTO out_t SELECT k, ts, ts, v, v FROM ev")


@pytest.mark.parametrize("mode", ["process", "thread"])
def test_parallel_jobs_align_barriers_and_restore(events: Path, reference: collections.Counter,
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  mode: str) -> None:
    out, ck = tmp_path / "out", tmp_path / "ck"
    # (the first commit fails, in the sink's process: a checkpoint completed, whatever the
    # job's speed; a count of snapshots would be per worker process, and a short job could
    # end before reaching it)
    monkeypatch.setenv(failpoints.ENV, "commit@1")
    options = {"parallelism.default": "2", "execution.native.task-mode": mode}
    with pytest.raises(SqlEngineError, match="failpoint"):
        _run(events, out, ck, **options)
    assert list(ck.glob("*/chk-*/_metadata")), "no checkpoint completed before the failure"
    monkeypatch.delenv(failpoints.ENV)
    _run(events, out, ck, restore=True, **options)
    assert _lines(out) == reference


def test_a_killed_sqlengine_run_resumes_with_restore(events: Path,
                                                    reference: collections.Counter,
                                                    tmp_path: Path) -> None:
    """The whole process group SIGKILLed once a checkpoint has completed; ``sqlengine run
    --restore`` then finishes the job: the committed output is the reference's."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    script = tmp_path / "job.sql"
    script.write_text("SET 'execution.runtime-mode' = 'streaming';\n"
                      "SET 'execution.checkpointing.interval' = '200 ms';\n"
                      f"SET 'execution.checkpointing.dir' = '{ck}';\n"
                      "SET 'pipeline.auto-watermark-interval' = '200 ms';\n"
                      + DDL.format(src=events, out=out) + INSERT + ";\n")
    cli = [sys.executable, "-c", "import sys; from sqlengine.shell.cli import main; "
           "import sqlengine.connectors.text_blocks as tb; tb.BLOCK_BYTES = 4096; "
           "sys.exit(main())"]
    p = subprocess.Popen([*cli, "run", str(script), "--restore", str(ck)],
                         start_new_session=True, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not list(ck.glob("*/chk-*/_metadata")) and p.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    else:  # (it ran to the end before a checkpoint was seen)
        assert p.returncode == 0, p.stdout.read() if p.stdout else ""
    done = subprocess.run([*cli, "run", str(script), "--restore", str(ck)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _lines(out) == reference


NEXMARK_DDL = """
CREATE TABLE person (id BIGINT, name STRING, emailAddress STRING, creditCard STRING,
    city STRING, state STRING, dateTime TIMESTAMP(3), extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'nexmark.table' = 'person', 'nexmark.events' = '200000',
      'nexmark.events-per-second' = '5000'{throttle});
CREATE TABLE auction (id BIGINT, itemName STRING, description STRING, initialBid BIGINT,
    reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,
    category BIGINT, extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'nexmark.table' = 'auction', 'nexmark.events' = '200000',
      'nexmark.events-per-second' = '5000'{throttle});
CREATE TABLE auction_v (id BIGINT, itemName STRING, description STRING, initialBid BIGINT,
    reserve BIGINT, dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT,
    category BIGINT, extra STRING, PRIMARY KEY (id) NOT ENFORCED,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'nexmark.table' = 'auction', 'nexmark.events' = '200000',
      'nexmark.events-per-second' = '5000'{throttle});
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    dateTime TIMESTAMP(3), extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'nexmark.events' = '200000',
      'nexmark.events-per-second' = '5000'{throttle});
CREATE TABLE out_t (auction BIGINT, ws TIMESTAMP(3), we TIMESTAMP(3), n BIGINT, mx BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
"""
NEXMARK_INSERT = """INSERT INTO out_t
SELECT auction, window_start, window_end, COUNT(*), MAX(price)
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND))
GROUP BY auction, window_start, window_end"""


@pytest.fixture(scope="module")
def nexmark_reference(tmp_path_factory: pytest.TempPathFactory) -> collections.Counter[str]:
    out = tmp_path_factory.mktemp("nref") / "out"
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(NEXMARK_DDL.format(throttle="", out=out))
    s.execute(NEXMARK_INSERT)
    return _lines(out)


@pytest.mark.parametrize(("before", "after"), [(1, 1), (2, 2), (1, 2), (2, 1)])
def test_stop_with_savepoint_then_restore(nexmark_reference: collections.Counter,
                                          tmp_path: Path, before: int, after: int) -> None:
    out = tmp_path / "out"
    options = {"execution.runtime-mode": "streaming",
               "execution.checkpointing.interval": "200 ms",
               "execution.checkpointing.dir": str(tmp_path / "ck")}
    s = sqlengine.connect({**options, "parallelism.default": str(before)})
    # (slow enough that the job is still running when the savepoint completes, however busy
    # the machine; the restored run reads the rest at full speed)
    s.execute(NEXMARK_DDL.format(throttle=", 'rows-per-second' = '15000'", out=out))
    job = s.start(NEXMARK_INSERT)
    time.sleep(3.0)  # (~45,000 bids, ~9 s of event time: some windows have fired)
    path = job.stop(savepoint=str(tmp_path / "savepoints"))
    assert path is not None and (Path(path) / "_metadata").exists()
    assert job.status == "STOPPED"
    partial = _lines(out)
    assert 0 < sum(partial.values()) < sum(nexmark_reference.values())
    assert not partial - nexmark_reference  # (what it committed is right, none doubled)
    s2 = sqlengine.connect({**options, "parallelism.default": str(after),
                            "execution.state-recovery.path": path})
    s2.execute(NEXMARK_DDL.format(throttle="", out=out))
    s2.execute(NEXMARK_INSERT)
    assert _lines(out) == nexmark_reference


def test_savepoint_while_a_periodic_checkpoint_is_being_triggered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's loop triggers periodic checkpoints while the caller's thread takes the
    savepoint: the two must not interleave (a periodic trigger landing after the savepoint's
    overwrote the sources' trigger, the savepoint's barrier was never sent, and the savepoint
    waited for the job's end and failed). ``due`` here waits, once it has
    decided to trigger, until something else triggers (or 0.3 s)."""
    from sqlengine.runtime.checkpoint.coordinator import CheckpointCoordinator

    due = CheckpointCoordinator.due

    def slow_due(self: CheckpointCoordinator) -> bool:
        answer = due(self)
        deadline = time.monotonic() + 0.3
        while answer and not self.pending and time.monotonic() < deadline:
            time.sleep(0.005)  # (decided to trigger; a savepoint may trigger meanwhile)
        return answer

    monkeypatch.setattr(CheckpointCoordinator, "due", slow_due)
    out = tmp_path / "out"
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "execution.checkpointing.interval": "10 ms",
                           "execution.checkpointing.dir": str(tmp_path / "ck"),
                           "parallelism.default": "2", "execution.native.task-mode": "thread"})
    s.execute(NEXMARK_DDL.format(throttle=", 'rows-per-second' = '5000'", out=out))
    for _ in range(5):
        job = s.start(NEXMARK_INSERT)
        time.sleep(0.3)
        path = job.stop(savepoint=str(tmp_path / "savepoints"))
        assert (Path(path) / "_metadata").exists()


def test_at_least_once_barriers_lose_nothing(events: Path, reference: collections.Counter,
                                             tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out, ck = tmp_path / "out", tmp_path / "ck"
    options = {"parallelism.default": "2", "execution.native.task-mode": "thread",
               "execution.checkpointing.mode": "AT_LEAST_ONCE"}
    monkeypatch.setenv(failpoints.ENV, "snapshot@10")
    with pytest.raises(SqlEngineError, match="failpoint"):
        _run(events, out, ck, **options)
    monkeypatch.delenv(failpoints.ENV)
    _run(events, out, ck, restore=True, **options)
    got = _lines(out)
    assert not reference - got  # (none lost; a line may come twice under at-least-once)


@pytest.mark.parametrize("key", ["execution.checkpointing.interval",
                                 "restart-strategy.type"])
def test_spark_refuses_the_native_checkpoint_options(tmp_path: Path, key: str) -> None:
    value = {"execution.checkpointing.interval": "1 s",
             "restart-strategy.type": "fixed-delay"}[key]
    s = sqlengine.connect({"execution.runtime-mode": "streaming", "execution.target": "spark",
                           key: value, **({"execution.checkpointing.dir": str(tmp_path)}
                                          if "interval" in key else {})})
    with pytest.raises(SqlEngineError, match=f"option '{key}' is the native runtime's; on "
                                             "Spark it would be ignored: use"):
        s.sql("SELECT 1 AS x").collect()


def test_checkpoints_are_refused_in_batch_mode(tmp_path: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "execution.checkpointing.interval": "1 s",
                           "execution.checkpointing.dir": str(tmp_path)})
    with pytest.raises(SqlEngineError, match="checkpoints are taken in streaming mode"):
        s.sql("SELECT 1 AS x").collect()


def test_a_streamed_query_stops_with_a_savepoint_and_resumes(tmp_path: Path) -> None:
    """q.stop(savepoint=...) between two batches of stream(); the rest of the stream is what
    was produced before the savepoint; a run restored from it yields every other row."""
    options = {"execution.runtime-mode": "streaming",
               "execution.checkpointing.interval": "1 s",
               "execution.checkpointing.dir": str(tmp_path / "ck")}
    ddl = ("CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = "
           "'sequence', 'fields.id.start' = '0', 'fields.id.end' = '99999', "
           "'rows-per-second' = '200000')")
    s = sqlengine.connect(options)
    s.execute(ddl)
    q = s.sql("SELECT id FROM g WHERE id % 3 <> 1")
    seen: list[int] = []
    path = None
    for b in q.stream():
        seen += b.column("id").to_pylist()
        if path is None and len(seen) > 20_000:
            path = q.stop(savepoint=str(tmp_path / "sp"))
    assert path is not None
    s2 = sqlengine.connect({**options, "execution.state-recovery.path": path})
    s2.execute(ddl)
    rest = s2.sql("SELECT id FROM g WHERE id % 3 <> 1").collect().column("id").to_pylist()
    assert len(seen) < 66_666
    assert sorted(seen + rest) == [i for i in range(100_000) if i % 3 != 1]


def test_checkpoints_past_the_timeout_are_given_up(events: Path,
                                                   reference: collections.Counter,
                                                   tmp_path: Path) -> None:
    """With a timeout hardly any checkpoint can meet, they are aborted (their files removed)
    and the job still finishes right, with its final checkpoint."""
    out, ck = tmp_path / "out", tmp_path / "ck"
    _run(events, out, ck, **{"parallelism.default": "2", "execution.native.task-mode": "thread",
                             "execution.checkpointing.timeout": "0 ms",
                             "execution.checkpointing.num-retained": "1000"})
    assert _lines(out) == reference
    done = [d for d in ck.glob("*/chk-*") if (d / "_metadata").exists()]
    assert json.loads((max(done, key=lambda d: int(d.name[4:])) / "_metadata").read_text())[
        "finished"]


RESCALED = {
    "temporal_join": "SELECT B.auction, COUNT(*) AS n, SUM(A.reserve) AS r FROM bid AS B JOIN "
                     "auction_v FOR SYSTEM_TIME AS OF B.dateTime AS A ON B.auction = A.id "
                     "GROUP BY B.auction",
    "match_recognize": "SELECT auction, COUNT(*) AS n, SUM(p2 - p1) AS d FROM bid "
                       "MATCH_RECOGNIZE (PARTITION BY auction ORDER BY dateTime MEASURES "
                       "A.price AS p1, C.price AS p2 ONE ROW PER MATCH AFTER MATCH SKIP PAST "
                       "LAST ROW PATTERN (A B C) DEFINE B AS B.price > A.price, C AS C.price < "
                       "B.price) GROUP BY auction",
    "window_top_n": "SELECT auction, SUM(price) AS s, COUNT(*) AS n FROM (SELECT * FROM ("
                    "SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction, "
                    "window_start, window_end ORDER BY price DESC) AS rn FROM TABLE(TUMBLE("
                    "TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND))) WHERE rn <= 2) "
                    "GROUP BY auction",
    "over_rows": "SELECT auction, SUM(s) AS s, COUNT(*) AS n FROM (SELECT auction, SUM(price) "
                 "OVER (PARTITION BY auction ORDER BY dateTime ROWS BETWEEN 2 PRECEDING AND "
                 "CURRENT ROW) AS s FROM bid) GROUP BY auction",
    # (what does not depend on the order the two subtasks' updates arrive in)
    "ordered_retract": "SELECT m, CARDINALITY(ARRAY_AGG(auction)) AS c, FIRST_VALUE(m) AS f, "
                       "CHAR_LENGTH(LISTAGG(CAST(MOD(auction, 10) AS STRING), '')) AS n "
                       "FROM (SELECT MOD(n, 5) AS m, auction FROM (SELECT auction, COUNT(*) "
                       "AS n FROM bid GROUP BY auction)) GROUP BY m",
    # (a bounded RANGE frame's replayed timers move with their keys; it was refused)
    "over_range": "SELECT auction, SUM(s) AS s, COUNT(*) AS n FROM (SELECT auction, SUM(price) "
                  "OVER (PARTITION BY auction ORDER BY dateTime RANGE BETWEEN INTERVAL '2' "
                  "SECOND PRECEDING AND CURRENT ROW) AS s FROM bid) GROUP BY auction",
    # (the SESSION TVF on its own: its waiting rows move with their keys; it was refused)
    "session_alone": "SELECT bidder, COUNT(*) AS n, MAX(window_end) AS e FROM TABLE(SESSION("
                     "TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '1' "
                     "SECOND)) GROUP BY bidder",
    "over_unbounded": "SELECT auction, SUM(s) AS s, SUM(l) AS l, COUNT(*) AS n FROM (SELECT "
                      "auction, SUM(price) OVER w AS s, LAG(price) OVER w AS l FROM bid WINDOW "
                      "w AS (PARTITION BY auction ORDER BY dateTime)) GROUP BY auction",
    "session": "SELECT bidder, COUNT(*) AS n, MAX(c) AS c FROM (SELECT bidder, window_start, "
               "COUNT(*) AS c FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR("
               "dateTime), INTERVAL '1' SECOND)) GROUP BY bidder, window_start, window_end) "
               "GROUP BY bidder",
    "interval_join": "SELECT A.id, COUNT(*) AS n, MAX(B.price) AS mx FROM auction A, bid B "
                     "WHERE A.id = B.auction AND B.dateTime BETWEEN A.dateTime AND "
                     "A.dateTime + INTERVAL '3' SECOND GROUP BY A.id",
    "window_join": "SELECT P.id, COUNT(*) AS n, MAX(A.reserve) AS r FROM (SELECT * FROM TABLE("
                   "TUMBLE(TABLE person, DESCRIPTOR(dateTime), INTERVAL '2' SECOND))) P JOIN "
                   "(SELECT * FROM TABLE(TUMBLE(TABLE auction, DESCRIPTOR(dateTime), INTERVAL "
                   "'2' SECOND))) A ON P.id = A.seller AND P.window_start = A.window_start AND "
                   "P.window_end = A.window_end GROUP BY P.id",
    "top_1": "SELECT auction, price, rn FROM (SELECT auction, price, ROW_NUMBER() OVER ("
             "PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn = 1",
    "dedup": "SELECT bidder, price, dateTime FROM (SELECT bidder, price, dateTime, ROW_NUMBER() "
             "OVER (PARTITION BY bidder ORDER BY dateTime) AS rn FROM bid) WHERE rn = 1",
    "join": "SELECT P.id, COUNT(*) AS n, MAX(A.reserve) AS r FROM person P JOIN auction A "
            "ON P.id = A.seller GROUP BY P.id",
    "counts": "SELECT auction, COUNT(*) AS n, MAX(price) AS mx, SUM(price) AS s, "
              "COUNT(DISTINCT bidder) AS b FROM bid GROUP BY auction",
    "retracting": "SELECT MOD(bidder, 7) AS b, MAX(mx) AS mx, MIN(mx) AS mn, COUNT(*) AS n "
                  "FROM (SELECT bidder, MAX(price) AS mx FROM bid GROUP BY bidder) "
                  "GROUP BY MOD(bidder, 7)",
}


def _final(rows: list[tuple]) -> dict[object, tuple]:
    """An upsert changelog (op, key, values...) applied: key -> values."""
    out: dict[object, tuple] = {}
    for op, key, *values in rows:
        if op in ("+I", "+U"):
            out[key] = tuple(values)
        else:
            out.pop(key, None)
    return out


@pytest.fixture(scope="module")
def rescaled_references() -> dict[str, dict[object, tuple]]:
    """Each RESCALED query's final rows from an uninterrupted run (at parallelism 1, the
    Nexmark rows at once), computed once for its two cases (1 -> 2 and 2 -> 1), which
    compare with the same run."""
    return {}


@pytest.mark.parametrize(("before", "after"), [(1, 2), (2, 1)])
@pytest.mark.parametrize("name", sorted(RESCALED))
def test_group_aggregates_restore_at_another_parallelism(
        tmp_path: Path, rescaled_references: dict[str, dict[object, tuple]], name: str,
        before: int, after: int) -> None:
    """A savepoint of a GROUP BY at one parallelism restored at another: every group the
    restored run updates carries on from its restored state (its final values are those of
    an uninterrupted run)."""
    sql = RESCALED[name]
    # (half the other tests' events at half their rate: the throttled run lasts as long, so
    # the savepoint after a second still falls mid-stream, and the unthrottled runs, the
    # reference and the restored one, have half the rows to go through)
    rate = "1500" if name in ("join", "window_join") else "30000"
    slow = NEXMARK_DDL.format(throttle=f", 'rows-per-second' = '{rate}'", out=tmp_path / "o")
    ddl = NEXMARK_DDL.format(throttle="", out=tmp_path / "o")  # (the same rows, at once)
    slow, ddl = (d.replace("'nexmark.events' = '200000'", "'nexmark.events' = '100000'")
                 for d in (slow, ddl))
    if name not in rescaled_references:
        s = sqlengine.connect({"execution.runtime-mode": "streaming"})
        s.execute(ddl)
        rescaled_references[name] = _final([tuple(r.values()) for b in s.sql(sql).stream()
                                            for r in b.to_pylist()])
    reference = rescaled_references[name]
    options = {"execution.runtime-mode": "streaming",
               "execution.checkpointing.interval": "10 s",
               "execution.checkpointing.dir": str(tmp_path / "ck"),
               # (one plan at both parallelisms: above 1 an aggregation of an insert-only
               # input would run in two phases, another state layout)
               "table.optimizer.agg-phase-strategy": "ONE_PHASE"}
    s1 = sqlengine.connect({**options, "parallelism.default": str(before)})
    s1.execute(slow)
    q = s1.sql(sql)
    path = None
    started = time.monotonic()
    short = name in ("join", "window_join")  # (persons and auctions are few: stop soon)
    wait = 0.0 if short else 1.0
    for _ in q.stream():
        if path is None and time.monotonic() - started > wait:
            path = q.stop(savepoint=str(tmp_path / "sp"))
    assert path is not None
    s2 = sqlengine.connect({**options, "parallelism.default": str(after),
                            "execution.state-recovery.path": path})
    s2.execute(ddl)
    rest = _final([tuple(r.values()) for b in s2.sql(sql).stream() for r in b.to_pylist()])
    assert len(rest) >= min(5, len(reference))
    assert {k: reference[k] for k in rest} == rest


def test_a_savepoint_completes_while_the_caller_reads_no_results(tmp_path: Path) -> None:
    # The caller stops reading and asks for a savepoint: the sink of a parallel job, blocked
    # on the full results queue, could not pass the savepoint's barrier on, and the job hung
    # until the checkpoint timeout (CI: 611 s, then "no savepoint was taken"). Its results
    # are now taken off the queue meanwhile and come after, in order.
    s = sqlengine.connect({"execution.runtime-mode": "streaming", "parallelism.default": "2",
                           "execution.checkpointing.interval": "1 h",
                           "execution.checkpointing.dir": str(tmp_path / "ck"),
                           "execution.checkpointing.timeout": "60 s"})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '100000', 'fields.k.min' = '0', 'fields.k.max' = '9')")
    q = s.sql("SELECT k, v FROM g WHERE k >= 0")
    it = iter(q.stream())
    first = next(it)
    time.sleep(3)  # (the sinks fill the results queue meanwhile)
    # (before the fix this raised CheckpointError at the 60 s checkpoint timeout)
    path = q.stop(savepoint=str(tmp_path / "sp"))
    assert (Path(path) / "_metadata").is_file()
    rest = [b.num_rows for b in it]
    assert first.num_rows > 0 and sum(rest) > 0


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_a_statement_set_commits_every_row_of_each_sink(tmp_path: Path, parallelism: str
                                                        ) -> None:
    """A statement set in a checkpointing job: each sink commits its last rows at the final
    checkpoint. (At parallelism 2 a sink whose chain goes on to the statement set's last
    vertex returned without committing: 1,000 rows written, none committed, the files left
    in progress, without a word; found by a probe.)"""
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "execution.checkpointing.interval": "1 s",
                           "execution.checkpointing.dir": str(tmp_path / "ck"),
                           "parallelism.default": parallelism})
    s.execute("CREATE TABLE src (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' "
              "= '1000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
              "'fields.id.end' = '1000')")
    for name in ("a", "b"):
        s.execute(f"CREATE TABLE out_{name} (id BIGINT) WITH ('connector' = 'filesystem', "
                  f"'path' = '{tmp_path / name}', 'format' = 'csv')")
    s.execute("EXECUTE STATEMENT SET BEGIN INSERT INTO out_a SELECT id FROM src; "
              "INSERT INTO out_b SELECT id FROM src; END")
    for name in ("a", "b"):
        files = list((tmp_path / name).iterdir())
        assert not [f.name for f in files if f.name.startswith(".")]  # (none in progress)
        ids = sorted(int(x) for f in files for x in f.read_text().split())
        assert ids == list(range(1, 1001))


def test_a_checkpoint_of_columns_of_other_types_is_refused(events: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """The same query over a table whose column changed its type (k BIGINT -> INT): the
    restore is refused naming the checkpoint and the types. (It was restored, and failed at
    the first rows with Arrow's 'Schema at index 1 was different'; found by a probe.)"""
    s = _restoring_a_failed_run(events, tmp_path, monkeypatch)
    s.execute(DDL.replace("(k BIGINT, v BIGINT", "(k INT, v BIGINT").format(
        src=events, out=tmp_path / "out2"))
    with pytest.raises(CheckpointError, match=r"taken of the same query over columns of "
                       r"other types \(rows of int64.* then, int32.* now\)"):
        s.execute(INSERT)
