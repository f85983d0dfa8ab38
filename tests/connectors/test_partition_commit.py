"""Partition commit of the filesystem sink ('sink.partition-commit.*', partition_commit.py).

What PyFlink 2.3 wrote for the same statements (run here, files listed by hand):
- batch mode, PARTITIONED BY (dt, h), policy 'success-file': an empty '_SUCCESS' in each of
  the three partitions written; without PARTITIONED BY: '_SUCCESS' in the table's directory;
  'sink.partition-commit.success-file.name' = 'DONE': 'DONE' instead;
- streaming mode with checkpoints, the same bounded INSERTs: '_SUCCESS' (or 'DONE') in each
  partition, also with the 'partition-time' trigger and a delay of 1 h (the input ended);
  no success file for the table without PARTITIONED BY (ignored there: refused here);
- without a policy: no success file; 'metastore' refused with the message quoted below.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors.base import PARTITION_KEYS_OPTION, encode_partition_keys
from sqlengine.connectors.filesystem_commit import CommittingPartitionedWriter
from sqlengine.connectors.partition_commit import CommitPolicy, PartitionCommitter
from sqlengine.errors import SqlEngineError

ROWS = "(1, '2024-01-01', '10'), (2, '2024-01-01', '11'), (3, '2024-01-02', '10')"


def files(root: Path) -> list[str]:
    """The table's files, relative, with the part files' names shortened to 'part'."""
    return sorted(f.relative_to(root).parent.joinpath(
        "part" if f.name.startswith("part-") else f.name).as_posix()
        for f in root.rglob("*") if f.is_file())


def table(s: sqlengine.Session, name: str, path: Path, extra: str = "",
          partitioned: str = "PARTITIONED BY (dt, h)") -> None:
    s.execute(f"CREATE TABLE {name} (k INT, dt STRING, h STRING) {partitioned} WITH "
              f"('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv'{extra})")


POLICY = ", 'sink.partition-commit.policy.kind' = 'success-file'"
PT = POLICY + ", 'sink.partition-commit.trigger' = 'partition-time'"


@pytest.mark.parametrize("mode", ["batch", "streaming", "streaming-checkpoints"])
def test_each_partition_written_gets_its_success_file(tmp_path: Path, mode: str) -> None:
    options = {"execution.runtime-mode": mode.split("-")[0]}
    if mode.endswith("checkpoints"):
        options |= {"execution.checkpointing.interval": "100 ms",
                    "execution.checkpointing.dir": str(tmp_path / "cp")}
    s = sqlengine.connect(options)
    table(s, "p1", tmp_path / "p1", POLICY)
    table(s, "p3", tmp_path / "p3", POLICY + ", 'sink.partition-commit.success-file.name' = "
          "'DONE', 'sink.partition-commit.delay' = '1 h', 'sink.partition-commit.trigger' = "
          "'partition-time'", "PARTITIONED BY (dt)")
    table(s, "p4", tmp_path / "p4", partitioned="PARTITIONED BY (dt)")
    for t in ("p1", "p3", "p4"):
        s.execute(f"INSERT INTO {t} VALUES {ROWS}")
    assert files(tmp_path / "p1") == [
        "dt=2024-01-01/h=10/_SUCCESS", "dt=2024-01-01/h=10/part",
        "dt=2024-01-01/h=11/_SUCCESS", "dt=2024-01-01/h=11/part",
        "dt=2024-01-02/h=10/_SUCCESS", "dt=2024-01-02/h=10/part"]
    # (the input ended: committed whatever the trigger)
    assert files(tmp_path / "p3") == ["dt=2024-01-01/DONE", "dt=2024-01-01/part",
                                      "dt=2024-01-02/DONE", "dt=2024-01-02/part"]
    assert files(tmp_path / "p4") == ["dt=2024-01-01/part", "dt=2024-01-02/part"]
    assert (tmp_path / "p1/dt=2024-01-01/h=10/_SUCCESS").read_bytes() == b""
    batch = sqlengine.connect({"execution.runtime-mode": "batch"})
    table(batch, "p1", tmp_path / "p1", POLICY)
    assert sorted(batch.sql("SELECT * FROM p1").collect().to_pylist(),
                  key=lambda r: r["k"]) == [{"k": 1, "dt": "2024-01-01", "h": "10"},
                                            {"k": 2, "dt": "2024-01-01", "h": "11"},
                                            {"k": 3, "dt": "2024-01-02", "h": "10"}]


def test_batch_commits_a_table_without_partitions_in_its_directory(tmp_path: Path) -> None:
    """(Written by one subtask, so that the success file comes after every part.)"""
    s = sqlengine.connect({"execution.runtime-mode": "batch", "parallelism.default": "2"})
    table(s, "p2", tmp_path / "p2", POLICY, partitioned="")
    s.execute(f"INSERT INTO p2 VALUES {ROWS}")
    assert files(tmp_path / "p2") == ["_SUCCESS", "part"]
    assert s.sql("SELECT COUNT(*) AS n FROM p2").collect().to_pylist() == [{"n": 3}]
    s.execute(f"INSERT OVERWRITE p2 SELECT * FROM (VALUES {ROWS}) AS v(k, dt, h) WHERE k = 1")
    assert files(tmp_path / "p2") == ["_SUCCESS", "part"]


@pytest.mark.parametrize(("options", "message"), [
    (POLICY.replace("success-file", "success-file,metastore"),
     "Can not configure a 'metastore' partition commit policy for a file system table. You "
     "can only configure 'metastore' partition commit policy for a hive table."),
    (POLICY.replace("success-file", "custom")
     + ", 'sink.partition-commit.policy.class' = 'a.B'",
     "option 'sink.partition-commit.policy.class' names a Java class"),
    (POLICY.replace("success-file", "done-file"), "unknown partition commit policy 'done-file'"),
    (", 'sink.partition-commit.delay' = '1 h'",
     "option 'sink.partition-commit.delay' acts only with a partition commit policy"),
    (POLICY + ", 'sink.partition-commit.trigger' = 'watermark'",
     "option 'sink.partition-commit.trigger' must be one of 'process-time', 'partition-time'"),
    (PT + ", 'partition.time-extractor.timestamp-pattern' = '$day 00:00:00'",
     "'$day' is not a partition key (the keys: dt, h)"),
    (PT + ", 'partition.time-extractor.timestamp-formatter' = 'yyyyMMdd EEE'",
     "the pattern letter 'E' of 'yyyyMMdd EEE' is not supported"),
    (PT + ", 'partition.time-extractor.kind' = 'custom'",
     "option 'partition.time-extractor.kind': only 'default' is supported"),
    (PT + ", 'sink.partition-commit.watermark-time-zone' = 'Mars/Base'",
     "must be a time zone"),
    (POLICY + ", 'partition.time-extractor.timestamp-pattern' = '$dt'",
     "acts only with 'sink.partition-commit.trigger' = 'partition-time'"),
    (POLICY + ", 'sink.partition-commit.success-file.name' = 'a/b'", "must be a file name"),
])
def test_options_that_cannot_act_are_refused_naming_them(tmp_path: Path, options: str,
                                                         message: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError) as e:
        table(s, "t", tmp_path / "t", options)
    assert message in str(e.value)


def test_streaming_refuses_a_policy_it_would_never_act_on(tmp_path: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    table(s, "plain", tmp_path / "plain", POLICY, partitioned="")
    with pytest.raises(SqlEngineError, match="commits the partitions of a PARTITIONED BY "
                       "table in streaming mode; this table has none"):
        s.execute(f"INSERT INTO plain VALUES {ROWS}")
    table(s, "p", tmp_path / "p", POLICY)
    s.execute("CREATE TABLE gen (k INT, dt STRING, h STRING) WITH ('connector' = 'datagen')")
    with pytest.raises(SqlEngineError, match="no checkpoints and no end, so no partition "
                       "would ever be committed"):
        s.execute("INSERT INTO p SELECT * FROM gen")
    assert not (tmp_path / "plain").exists() or files(tmp_path / "plain") == []


# -- the streaming writer and its trigger --------------------------------------------------------
SCHEMA = pa.schema([("k", pa.int32()), ("dt", pa.string()), ("h", pa.string())])


def writer(root: Path, extra: dict[str, str] | None = None) -> CommittingPartitionedWriter:
    options = {"path": str(root), "format": "csv", PARTITION_KEYS_OPTION:
               encode_partition_keys(("dt", "h")),
               "sink.partition-commit.policy.kind": "success-file", **(extra or {})}
    return CommittingPartitionedWriter("t", options, SCHEMA)


def rows(*values: tuple[int, str, str]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([dict(zip(SCHEMA.names, v, strict=True))
                                       for v in values], schema=SCHEMA)


def visible(root: Path) -> list[str]:
    return [f for f in files(root) if not f.rsplit("/", 1)[-1].startswith(".")]


def test_partitions_commit_with_their_checkpoint_and_a_restore_drops_what_came_after(
        tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.write(rows((1, "2024-01-01", "10"), (2, "2024-01-01", "11")))
    w.prepare_commit(1)
    state = w.snapshot()
    w.write(rows((3, "2024-01-02", "10")))  # (after checkpoint 1)
    assert visible(tmp_path) == []  # (nothing before checkpoint 1 completes)
    w.commit(1)
    assert visible(tmp_path) == ["dt=2024-01-01/h=10/_SUCCESS", "dt=2024-01-01/h=10/part",
                                 "dt=2024-01-01/h=11/_SUCCESS", "dt=2024-01-01/h=11/part"]
    w.close()  # (the job dies: row 3 stays in a hidden file, in a partition of its own)
    again = writer(tmp_path)
    again.restore([state], 0, 1)
    assert not list(tmp_path.rglob(".part-*"))
    assert visible(tmp_path) == ["dt=2024-01-01/h=10/_SUCCESS", "dt=2024-01-01/h=10/part",
                                 "dt=2024-01-01/h=11/_SUCCESS", "dt=2024-01-01/h=11/part"]
    again.write(rows((3, "2024-01-02", "10")))
    again.end_input()
    again.prepare_commit(2)
    again.commit(2)
    assert (tmp_path / "dt=2024-01-02/h=10/_SUCCESS").exists()
    assert sorted(line for f in tmp_path.rglob("part-*") for line in
                  f.read_text().splitlines()) == ["1", "2", "3"]


def test_a_restore_before_the_commit_commits_the_checkpoints_partitions(
        tmp_path: Path) -> None:
    w = writer(tmp_path)
    w.write(rows((1, "2024-01-01", "10")))
    w.prepare_commit(1)
    state = w.snapshot()
    w.close()  # (checkpoint 1 completed, but the process died before its commit)
    again = writer(tmp_path)
    again.restore([state], 0, 1)
    assert visible(tmp_path) == ["dt=2024-01-01/h=10/part"]
    again.prepare_commit(2)
    again.commit(2)  # (the next checkpoint commits the partition)
    assert visible(tmp_path) == ["dt=2024-01-01/h=10/_SUCCESS", "dt=2024-01-01/h=10/part"]


def test_the_partition_time_trigger_waits_for_the_watermark_past_time_and_delay(
        tmp_path: Path) -> None:
    w = writer(tmp_path, {"sink.partition-commit.trigger": "partition-time",
                          "sink.partition-commit.delay": "1 h",
                          "partition.time-extractor.timestamp-pattern": "$dt $h:00:00"})
    w.write(rows((1, "2024-01-01", "10"), (2, "2024-01-01", "11")))
    ten = 1704103200000  # 2024-01-01 10:00:00 UTC
    w.watermark(ten + 3_600_000)  # (not past 10:00 + 1 h)
    w.prepare_commit(1)
    w.commit(1)
    assert not list(tmp_path.rglob("_SUCCESS"))
    w.watermark(ten + 3_600_001)
    w.prepare_commit(2)
    w.commit(2)
    assert [f.parent.name for f in tmp_path.rglob("_SUCCESS")] == ["h=10"]
    w.write(rows((3, "2024-01-01", "10")))  # (written again: committed again)
    (tmp_path / "dt=2024-01-01/h=10/_SUCCESS").unlink()
    w.watermark(ten + 2 * 3_600_001)
    w.prepare_commit(3)
    w.commit(3)
    assert sorted(f.parent.name for f in tmp_path.rglob("_SUCCESS")) == ["h=10", "h=11"]


def test_the_process_time_trigger_waits_for_the_delay(tmp_path: Path) -> None:
    policy = CommitPolicy(delay_ms=60_000)
    c = PartitionCommitter(policy, tmp_path)
    (tmp_path / "a=1").mkdir()
    c.wrote(["a=1"], 1_000)
    c.checkpoint(1, 0)
    assert c.completed(1, 30_000) == []
    c.checkpoint(2, 0)
    assert c.completed(2, 61_001) == ["a=1"]
    assert (tmp_path / "a=1/_SUCCESS").exists()


@pytest.mark.parametrize(("pattern", "formatter", "values", "expected"), [
    (None, None, "dt=2024-01-02", "2024-01-02T00:00:00"),
    (None, None, "dt=2024-1-2 3:04:05", "2024-01-02T03:04:05"),
    ("$dt $h:00:00", None, "dt=2024-01-02/h=7", "2024-01-02T07:00:00"),
    ("$dt", "yyyyMMdd", "dt=20240102", "2024-01-02T00:00:00"),
    ("$dt $h", "yyyyMMdd HH", "dt=20240102/h=23", "2024-01-02T23:00:00"),
    (None, None, "dt=2024-13-01", "2025-01-01T00:00:00"),  # (LENIENT: rolls over)
])
def test_partition_times_as_flinks_default_extractor_reads_them(
        pattern: str | None, formatter: str | None, values: str, expected: str) -> None:
    policy = CommitPolicy(pattern=pattern, formatter=formatter, keys=("dt", "h"))
    ms = policy.partition_ms(values.replace(" ", "%20"))
    assert pa.scalar(ms, pa.timestamp("ms")).as_py().isoformat() == expected


def test_an_unreadable_partition_time_names_the_partition() -> None:
    policy = CommitPolicy(trigger="partition-time", keys=("dt",))
    with pytest.raises(SqlEngineError, match="partition 'dt=yesterday': cannot read the "
                       "partition time 'yesterday'"):
        policy.partition_ms("dt=yesterday")
