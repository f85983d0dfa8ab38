"""Sources resume where a checkpoint says (every row once, at any cut); the committing file
sink publishes only what completed checkpoints cover."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest

from sqlengine.connectors.base import ReadStats, SourceCursor, strided_done
from sqlengine.connectors.filesystem_commit import CommittingFileWriter
from sqlengine.connectors.filesystem_files import read_files
from sqlengine.connectors.nexmark import nexmark_batches

SCHEMA = pa.schema([("id", pa.int64()), ("s", pa.string())])


def _resumed(read, cut: int) -> list[int]:  # type: ignore[no-untyped-def]
    """Ids read up to batch ``cut``, then, from a cursor restored there, the rest."""
    cursor = SourceCursor()
    first: list[int] = []
    batches = read(cursor)
    for _ in range(cut):  # (the snapshot is taken before the next batch is asked for)
        first.extend(next(batches).column(0).to_pylist())
    snapshot = dict(cursor.position)
    rest = [x for b in read(SourceCursor(snapshot)) for x in b.column(0).to_pylist()]
    return first + rest


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_files_resume_at_any_batch_without_loss_or_repeat(tmp_path: Path, fmt: str,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    import sqlengine.connectors.text_blocks as tb

    monkeypatch.setattr(tb, "BLOCK_BYTES", 300)  # (many blocks)
    rng = random.Random(3)
    folder = tmp_path / "t"
    folder.mkdir()
    ids = list(range(1000))
    for k in range(3):
        part = ids[k * 333:(k + 1) * 333 + (1 if k == 2 else 0)]
        table = pa.table({"id": part, "s": [f"x\n{rng.randint(0, 9)}" for _ in part]},
                         schema=SCHEMA)
        if fmt == "csv":
            pacsv.write_csv(table, folder / f"f{k}.csv",
                            pacsv.WriteOptions(include_header=False))
        else:
            pq.write_table(table, folder / f"f{k}.parquet", row_group_size=50)
    options = {"path": str(folder), "format": fmt}

    def read(cursor: SourceCursor):  # type: ignore[no-untyped-def]
        return read_files("t", options, SCHEMA, ReadStats(), split=(0, 1), cursor=cursor)

    total = sum(1 for _ in read(SourceCursor()))
    assert total > 10
    for cut in sorted({1, 2, total // 3, total // 2, total - 1, total}):
        assert _resumed(read, cut) == ids, cut


def test_a_rescaled_restore_reads_each_file_once(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    folder.mkdir()
    for k in range(4):
        table = pa.table({"id": list(range(k * 10, k * 10 + 10)), "s": ["a"] * 10},
                         schema=SCHEMA)
        pacsv.write_csv(table, folder / f"f{k}.csv", pacsv.WriteOptions(include_header=False))
    options = {"path": str(folder), "format": "csv"}
    cursor = SourceCursor()
    seen: list[int] = []
    batches = read_files("t", options, SCHEMA, ReadStats(), split=(0, 1), cursor=cursor)
    while len(seen) < 20:
        seen.extend(next(batches).column(0).to_pylist())
    rest = [x for i in range(2) for b in read_files(
        "t", options, SCHEMA, ReadStats(), split=(i, 2), cursor=SourceCursor(cursor.position),
        split_files=False) for x in b.column(0).to_pylist()]
    assert sorted(seen + rest) == list(range(40))


def test_nexmark_chunks_resume_at_another_parallelism() -> None:
    options = {"nexmark.table": "bid", "nexmark.events": "30000"}
    from sqlengine.connectors.nexmark import SCHEMAS

    schema = SCHEMAS["bid"]
    whole = sorted(tuple(r.values()) for b in nexmark_batches("bid", options, schema)
                   for r in b.to_pylist())
    cursor = SourceCursor()
    it = nexmark_batches("bid", options, schema, cursor=cursor)
    first = [tuple(r.values()) for r in next(it).to_pylist()]
    rest = [tuple(r.values()) for i in range(3)
            for b in nexmark_batches("bid", options, schema, split=(i, 3),
                                     cursor=SourceCursor(cursor.position))
            for r in b.to_pylist()]
    assert sorted(first + rest) == whole


class _FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize("after", [1, 2, 3])
def test_throttled_nexmark_resumes_inside_a_chunk(after: int) -> None:
    """Throttled, a chunk goes out in slices of ~0.1 s of rows; a checkpoint between two
    slices resumes at the next row of that chunk, at any parallelism."""
    options = {"nexmark.table": "bid", "nexmark.events": "30000", "rows-per-second": "20000"}
    from sqlengine.connectors.nexmark import SCHEMAS

    schema = SCHEMAS["bid"]
    whole = sorted(tuple(r.values()) for b in nexmark_batches("bid", options, schema)
                   for r in b.to_pylist())
    cursor = SourceCursor()
    clock = _FakeClock()
    it = nexmark_batches("bid", options, schema, clock=clock, split=(0, 2), cursor=cursor)
    first = [next(it) for _ in range(3)]
    assert all(b.num_rows == 1000 for b in first)  # (10,000 rows a second each subtask)
    assert 0.29 < clock.now < 0.31  # (3,000 rows at 10,000 a second)
    position = dict(cursor.position)
    assert any(k.startswith("nexmark-rows:") for k in position)  # (inside chunk 0)
    rest = [tuple(r.values()) for i in range(after)
            for b in nexmark_batches("bid", options, schema, split=(i, after),
                                     cursor=SourceCursor(position))
            for r in b.to_pylist()]
    # (what subtask 1 of 2 never read is read after the restore too)
    got = [tuple(r.values()) for b in first for r in b.to_pylist()] + rest
    assert sorted(got) == whole


def test_strided_units_done_whatever_the_old_parallelism() -> None:
    start = {"memory:0/2": 4, "memory:1/2": 3}  # subtask 0 read 0, 2; subtask 1 read 1
    assert [u for u in range(6) if strided_done(start, "memory", u)] == [0, 1, 2]


def _writer(root: Path, subtask: int = 0) -> CommittingFileWriter:
    return CommittingFileWriter("t", {"path": str(root), "format": "csv"}, SCHEMA, subtask)


def _visible(root: Path) -> list[str]:
    return sorted(line for f in root.glob("part-*") for line in f.read_text().splitlines())


def test_the_sink_publishes_only_what_a_completed_checkpoint_covers(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.write(pa.record_batch([pa.array([1]), pa.array(["a"])], schema=SCHEMA))
    w.prepare_commit(1)
    state = w.snapshot()
    w.write(pa.record_batch([pa.array([2]), pa.array(["b"])], schema=SCHEMA))
    assert _visible(tmp_path) == []  # (nothing before checkpoint 1 completes)
    w.commit(1)
    assert _visible(tmp_path) == ["1,a"]
    w.close()  # (the job dies: row 2 stays in a hidden file)
    assert any(f.name.startswith(".part-") for f in tmp_path.iterdir())
    again = _writer(tmp_path)
    again.restore([state], 0, 1)
    assert not any(f.name.startswith(".part-") for f in tmp_path.iterdir())
    again.write(pa.record_batch([pa.array([2]), pa.array(["b"])], schema=SCHEMA))
    again.end_input()
    again.prepare_commit(2)
    again.commit(2)
    assert _visible(tmp_path) == ["1,a", "2,b"]


def test_a_crash_between_metadata_and_commit_commits_on_restore(tmp_path: Path) -> None:
    w = _writer(tmp_path)
    w.write(pa.record_batch([pa.array([7]), pa.array(["z"])], schema=SCHEMA))
    w.prepare_commit(1)
    state = w.snapshot()
    w.close()  # (checkpoint 1 completed, but the process died before commit)
    assert _visible(tmp_path) == []
    again = _writer(tmp_path)
    again.restore([state], 0, 1)
    assert _visible(tmp_path) == ["7,z"]
    again.restore([state], 0, 1)  # (a second restore from it commits nothing twice)
    assert _visible(tmp_path) == ["7,z"]
