"""Checkpoint storage: metadata written last, corrupt files found, the newest one chosen,
retention; the options' checks; the barrier aligner."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import pickle
import time
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.errors import CheckpointError, PlanError
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.runtime.checkpoint.config import checkpoint_config
from sqlengine.runtime.checkpoint.coordinator import find_restore
from sqlengine.runtime.checkpoint.storage import (
    METADATA,
    CheckpointStorage,
    completed_under,
    load_checkpoint,
)
from sqlengine.runtime.native.barriers import BarrierAligner

_EMPTY = JobGraph((), ())


def _complete(storage: CheckpointStorage, n: int, fingerprint: str = "f") -> Path:
    entry = storage.write_state(n, "v1-0", {"rows": pa.table({"x": [n, n + 1]})})
    return storage.complete(n, {"fingerprint": fingerprint, "subtasks": {"v1-0": entry},
                                "layout": {"v1": {"parallelism": 1, "operators": ["A"]}}})


def test_a_checkpoint_reads_back_what_was_written(tmp_path: Path) -> None:
    storage = CheckpointStorage(tmp_path)
    path = _complete(storage, 1)
    cp = load_checkpoint(path)
    assert cp.id == 1 and not cp.finished
    assert cp.state("v1-0")["rows"].column("x").to_pylist() == [1, 2]


def test_without_metadata_a_checkpoint_is_not_complete(tmp_path: Path) -> None:
    storage = CheckpointStorage(tmp_path)
    storage.write_state(1, "v1-0", {"a": 1})  # (the job died before the metadata)
    with pytest.raises(CheckpointError, match="not a completed checkpoint"):
        load_checkpoint(storage.checkpoint_dir(1))
    assert completed_under(tmp_path) == []


def test_a_truncated_or_altered_state_file_is_an_error_naming_it(tmp_path: Path) -> None:
    storage = CheckpointStorage(tmp_path)
    path = _complete(storage, 1)
    state = path / "v1-0.state"
    data = state.read_bytes()
    state.write_bytes(data[:-5])
    with pytest.raises(CheckpointError, match=r"'v1-0\.state' is corrupt"):
        load_checkpoint(path).state("v1-0")
    state.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(path).state("v1-0")


class _Forged:
    """Pickles as a call of os.system (what a forged state file could hold)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        import os

        return os.system, (f"touch {self.marker}",)


def test_a_forged_state_file_calls_nothing(tmp_path: Path) -> None:
    # A state file whose checksum the forger made match the metadata's ran os.system on
    # restore (state files are pickles); classes outside the state's own are refused now.
    storage = CheckpointStorage(tmp_path / "ck")
    path = _complete(storage, 1)
    marker = tmp_path / "pwned"
    data = pickle.dumps({"rows": _Forged(marker)})
    (path / "v1-0.state").write_bytes(data)
    meta = json.loads((path / METADATA).read_text())
    meta["subtasks"]["v1-0"].update(size=len(data), crc32=zlib.crc32(data))
    (path / METADATA).write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"'v1-0\.state' holds (posix|os)\.system, "
                                              "which no operator's state holds"):
        load_checkpoint(path).state("v1-0")
    assert not marker.exists()


class _Call:
    """Pickles as a call of ``fn(*args)``."""

    def __init__(self, fn: object, *args: object) -> None:
        self.fn, self.args = fn, args

    def __reduce__(self) -> tuple:
        return self.fn, self.args


def _forge(path: Path, value: object) -> None:
    data = pickle.dumps(value, protocol=5)
    (path / "v1-0.state").write_bytes(data)
    meta = json.loads((path / METADATA).read_text())
    meta["subtasks"]["v1-0"].update(size=len(data), crc32=zlib.crc32(data))
    (path / METADATA).write_text(json.dumps(meta))


@pytest.mark.parametrize("kind", ["connect", "output_stream", "memmap", "method"])
def test_a_forged_state_file_calls_no_function_of_the_allowed_modules(tmp_path: Path,
                                                                      kind: str) -> None:
    """Of sqlengine, pyarrow and numpy, whose data classes state holds, a function that
    writes files (or runs SQL) is refused: they were allowed by module, so a forged file
    could truncate a file with pyarrow's output_stream or run any SQL statement."""
    import sqlengine
    from sqlengine.api import Session

    storage = CheckpointStorage(tmp_path / "ck")
    path = _complete(storage, 1)
    marker = tmp_path / "written"
    value = {
        "connect": _Call(sqlengine.connect),
        "output_stream": _Call(pa.output_stream, str(marker)),
        "memmap": _Call(np.memmap, str(marker), np.uint8, "w+", 0, (4,)),
        "method": _Call(Session.execute, None, f"INSERT INTO x VALUES ('{marker}')"),
    }[kind]
    _forge(path, {"rows": value})
    with pytest.raises(CheckpointError, match="which no operator's state holds"):
        load_checkpoint(path).state("v1-0")
    assert not marker.exists()


def test_state_of_numpy_decimals_and_times_reads_back(tmp_path: Path) -> None:
    storage = CheckpointStorage(tmp_path)
    value = {"a": np.arange(3), "d": decimal.Decimal("1.5"), "t": dt.datetime(2024, 1, 1),
             "s": {1, 2}, "b": b"x", "n": None, "f": frozenset({"x"})}
    entry = storage.write_state(1, "v1-0", value)
    path = storage.complete(1, {"fingerprint": "f", "subtasks": {"v1-0": entry},
                                "layout": {"v1": {"parallelism": 1, "operators": ["A"]}}})
    got = load_checkpoint(path).state("v1-0")
    assert got["a"].tolist() == [0, 1, 2] and {k: v for k, v in got.items() if k != "a"} == \
        {k: v for k, v in value.items() if k != "a"}


def test_corrupt_metadata_is_an_error_not_skipped(tmp_path: Path) -> None:
    storage = CheckpointStorage(tmp_path)
    _complete(storage, 1)
    newest = _complete(storage, 2)
    (newest / METADATA).write_text("{not json")
    # (restoring the older one would write again what the newer one had committed)
    with pytest.raises(CheckpointError, match="_metadata file is corrupt"):
        completed_under(tmp_path)


def test_the_newest_completed_checkpoint_of_the_query_is_restored(tmp_path: Path) -> None:
    first = CheckpointStorage(tmp_path)
    _complete(first, 1)
    time.sleep(0.01)
    second = CheckpointStorage(tmp_path)  # (a restarted job: another job directory)
    newest = _complete(second, 4)
    config = checkpoint_config({"$restore-latest": str(tmp_path)})
    found = find_restore(config, "f", _EMPTY)
    assert found is not None and found.path == newest
    with pytest.raises(CheckpointError, match="taken of a different query"):
        find_restore(config, "other", _EMPTY)


def test_restore_latest_from_a_missing_or_empty_directory_starts_fresh(tmp_path: Path) -> None:
    assert find_restore(checkpoint_config({"$restore-latest": str(tmp_path / "no")}), "f",
                        _EMPTY) is None
    assert find_restore(checkpoint_config({"$restore-latest": str(tmp_path)}), "f",
                        _EMPTY) is None


def test_an_exact_recovery_path_must_exist(tmp_path: Path) -> None:
    config = checkpoint_config({"execution.state-recovery.path": str(tmp_path / "chk-9")})
    with pytest.raises(CheckpointError, match="does not exist"):
        find_restore(config, "f", _EMPTY)
    config = checkpoint_config({"execution.state-recovery.path": str(tmp_path)})
    with pytest.raises(CheckpointError, match="has no _metadata"):
        find_restore(config, "f", _EMPTY)


def test_retention_keeps_the_newest_and_drops_incomplete_ones(tmp_path: Path) -> None:
    storage = CheckpointStorage(tmp_path)
    for n in (1, 2):
        _complete(storage, n)
    storage.write_state(3, "v1-0", {})  # (aborted)
    _complete(storage, 4)
    storage.prune(2)
    assert sorted(d.name for d in storage.job_dir.iterdir()) == ["chk-2", "chk-4"]


def test_a_checkpoint_past_its_timeout_is_aborted_and_its_files_removed(tmp_path: Path) -> None:
    from sqlengine.optimizer.jobgraph import JobGraph
    from sqlengine.runtime.checkpoint.coordinator import CheckpointCoordinator

    c = CheckpointCoordinator(JobGraph((), ()), {
        "execution.checkpointing.interval": "1 ms", "execution.checkpointing.dir": str(tmp_path),
        "execution.checkpointing.timeout": "10 s"})
    n = c.trigger()
    c.write_state(n, "v1-0", {"a": 1})
    assert c.expired() == []  # (10 s: however busy the machine, not yet)
    c.pending[n].started -= 11  # (as if 11 s had passed: no sleep racing a busy machine)
    assert c.expired() == [n]
    c.abort(n)
    assert not c.storage.checkpoint_dir(n).exists() and not c.pending  # type: ignore[union-attr]
    assert not c.acknowledge(n, "v1-0", {})  # (a late acknowledgement is ignored)


def test_metadata_is_json_with_the_state_files_checksums(tmp_path: Path) -> None:
    path = _complete(CheckpointStorage(tmp_path), 1)
    meta = json.loads((path / METADATA).read_text())
    assert meta["subtasks"]["v1-0"]["size"] == (path / "v1-0.state").stat().st_size
    assert not list(path.glob(".*tmp"))  # (the temporary name was renamed)


@pytest.mark.parametrize(("options", "message"), [
    ({"execution.checkpointing.interval": "1 s"}, "needs 'execution.checkpointing.dir'"),
    ({"execution.checkpointing.dir": "/tmp/x"}, "'execution.checkpointing.interval' is not"),
    ({"execution.checkpointing.interval": "1 s", "execution.checkpointing.dir": "/tmp/x",
      "execution.checkpointing.mode": "MAYBE"}, "must be one of EXACTLY_ONCE"),
    ({"restart-strategy.fixed-delay.attempts": "3"}, "is not 'fixed-delay'"),
])
def test_inconsistent_options_are_refused_naming_the_key(options: dict[str, str],
                                                          message: str) -> None:
    with pytest.raises(PlanError, match=message):
        checkpoint_config(options)


def test_aligned_barriers_hold_back_a_channel_until_all_arrived() -> None:
    a = BarrierAligner(3, exactly_once=True)
    assert a.on_barrier(0, 1) is None
    assert a.holds(0) and not a.holds(1)
    a.hold((0, "batch", "after"))
    assert a.on_end(2) is None  # (an ended channel counts as aligned)
    assert a.on_barrier(1, 1) == 1
    a.finish()
    assert a.next_released() == (0, "batch", "after") and a.next_released() is None
    assert not a.holds(0)


def test_at_least_once_barriers_hold_nothing_back() -> None:
    a = BarrierAligner(2, exactly_once=False)
    assert a.on_barrier(0, 1) is None
    assert not a.holds(0)
    assert a.on_barrier(1, 1) == 1


def test_a_newer_barrier_gives_up_the_older_alignment() -> None:
    a = BarrierAligner(2, exactly_once=True)
    a.on_barrier(0, 1)
    a.hold((0, "batch", "x"))
    assert a.on_barrier(0, 2) is None  # (checkpoint 1 was given up on: 2 is aligned now)
    assert a.next_released() == (0, "batch", "x")
    assert a.on_barrier(1, 1) is None  # (a stale barrier)
    assert a.on_barrier(1, 2) == 2
