"""The filesystem sink's rolling policy ('sink.rolling-policy.*', rolling_policy.py): part
files roll past 'file-size' at a row (the json files PyFlink 2.3 wrote for the same INSERT in
streaming mode: 14 files of 2070, 2059, 11 x 2052 and 189 bytes, byte for byte), after
'rollover-interval' and 'inactivity-interval'; with checkpoints the rolled files are pending
until the checkpoint commits them. The rows read back are the rows written."""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors.filesystem_commit import CommittingFileWriter
from sqlengine.connectors.filesystem_files import FileWriter
from sqlengine.errors import SqlEngineError


def parts(path: Path) -> list[Path]:
    return sorted((f for f in path.iterdir() if f.name.startswith("part-")),
                  key=lambda f: int(f.name.rsplit("-", 1)[1]))


def test_json_parts_roll_at_the_row_past_the_size_as_flinks(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "d.csv").write_text("".join(f"{i},abcdefghij\n" for i in range(1000)))
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE r1 (a INT, b STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{src}', 'format' = 'csv')")
    out = tmp_path / "out"
    s.execute(f"CREATE TABLE r3 (a INT, b STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{out}', 'format' = 'json', "
              "'sink.rolling-policy.file-size' = '2kb')")
    s.execute("INSERT INTO r3 SELECT a, b FROM r1")
    files = parts(out)
    assert [f.stat().st_size for f in files] == [2070, 2059, *[2052] * 11, 189]
    text = "".join(f.read_text() for f in files)
    assert text == "".join(f'{{"a":{i},"b":"abcdefghij"}}\n' for i in range(1000))
    assert s.sql("SELECT COUNT(*) AS c, SUM(a) AS t FROM r3").collect().to_pylist() == \
        [{"c": 1000, "t": 499500}]


SCHEMA = pa.schema([("a", pa.int64()), ("s", pa.string())])


def batch(start: int, n: int) -> pa.RecordBatch:
    return pa.record_batch([pa.array(range(start, start + n)),
                            pa.array([f"v{i}" for i in range(start, start + n)])],
                           schema=SCHEMA)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_intervals_roll_part_files(tmp_path: Path, fmt: str) -> None:
    for key in ("rollover-interval", "inactivity-interval"):
        out = tmp_path / f"{key}-{fmt}"
        w = FileWriter("t", {"path": str(out), "format": fmt,
                             f"sink.rolling-policy.{key}": "1 ms"}, SCHEMA, overwrite=False)
        for k in range(3):
            w.write(batch(10 * k, 5))
            time.sleep(0.01)
        w.end_input()
        w.close()
        assert [f.name for f in parts(out)] == ["part-0-0", "part-0-1", "part-0-2"]
        s = sqlengine.connect({"execution.runtime-mode": "batch"})
        s.execute(f"CREATE TABLE t (a BIGINT, s STRING) WITH ('connector' = 'filesystem', "
                  f"'path' = '{out}', 'format' = '{fmt}')")
        got = sorted(r["a"] for r in s.sql("SELECT a FROM t").collect().to_pylist())
        assert got == [*range(5), *range(10, 15), *range(20, 25)]


def test_a_failed_job_publishes_none_of_its_rolled_parts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    w = FileWriter("t", {"path": str(out), "format": "csv",
                         "sink.rolling-policy.file-size": "10b"}, SCHEMA, overwrite=False)
    w.write(batch(0, 20))
    w.close()  # (no end_input: the job failed)
    assert list(out.iterdir()) == []


def test_checkpointed_parts_roll_and_wait_for_their_checkpoint(tmp_path: Path) -> None:
    out = tmp_path / "out"
    w = CommittingFileWriter("t", {"path": str(out), "format": "csv",
                                   "sink.rolling-policy.file-size": "40b"}, SCHEMA)
    w.write(batch(0, 20))  # (rolls at the rows past 40 bytes: pending, not yet visible)
    assert parts(out) == [] and len(w.pending) == 2
    w.prepare_commit(1)  # (the part being written completes too)
    w.commit(1)
    files = parts(out)
    # rows '0,v0' .. '8,v8' (45 bytes), '9,v9' .. '15,v15' (47), the rest (28)
    assert [f.stat().st_size for f in files] == [45, 47, 28]
    lines = [line for f in files for line in f.read_text().splitlines()]
    assert lines == [f"{i},v{i}" for i in range(20)]


@pytest.mark.parametrize(("key", "value"), [("file-size", "1xb"), ("file-size", "0"),
                                            ("rollover-interval", "soon")])
def test_bad_values_are_refused_naming_the_option(tmp_path: Path, key: str,
                                                  value: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=f"sink.rolling-policy.{key}"):
        s.execute(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = "
                  f"'{tmp_path}', 'format' = 'csv', 'sink.rolling-policy.{key}' = '{value}')")
