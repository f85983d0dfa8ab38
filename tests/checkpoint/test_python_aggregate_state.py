"""A Python aggregate's accumulators (objects of the user's classes) go through a checkpoint
and back: a job failed at its sixth snapshot restarts from its last checkpoint and gives the
uninterrupted run's sums. State files are read back admitting only the classes operators'
state holds (a forged one ran os.system, tests/checkpoint/test_storage.py), the accumulator
classes of the registered Python functions' packages among them."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine import failpoints


class Accumulator:
    def __init__(self) -> None:
        self.total = 0
        self.count = 0


@sqlengine.udaf(result_type="BIGINT")
class TotalOf:
    def create_accumulator(self) -> Accumulator:
        return Accumulator()

    def accumulate(self, acc: Accumulator, v: int | None) -> None:
        if v is not None:
            acc.total += v
            acc.count += 1

    def get_value(self, acc: Accumulator) -> int:
        return acc.total


def _sums(tmp_path: Path, failing: bool) -> dict[int, int]:
    s = sqlengine.connect({
        "execution.runtime-mode": "streaming", "execution.checkpointing.interval": "1 ms",
        "execution.checkpointing.dir": str(tmp_path / ("ck-failing" if failing else "ck")),
        "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "2",
        "restart-strategy.fixed-delay.delay": "10 ms"})
    s.create_function("total_of", TotalOf)
    s.execute(f"CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'src.csv'}', 'format' = 'csv')")
    # (the failpoint fails the job unless it restarts from its last checkpoint)
    rows = s.sql("SELECT k, total_of(v) AS t FROM src GROUP BY k").collect().to_pylist()
    return {r["k"]: r["t"] for r in rows}


def test_accumulators_of_the_users_classes_restore(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlengine.connectors.text_blocks as tb

    monkeypatch.setattr(tb, "BLOCK_BYTES", 4096)  # (many batches: many checkpoints)
    (tmp_path / "src.csv").write_text("".join(f"{i % 7},{i}\n" for i in range(20_000)))
    monkeypatch.delenv(failpoints.ENV, raising=False)
    failpoints.reset()
    expected = _sums(tmp_path, failing=False)
    assert expected == {k: sum(range(k, 20_000, 7)) for k in range(7)}
    monkeypatch.setenv(failpoints.ENV, "snapshot@6")
    failpoints.reset()
    try:
        assert _sums(tmp_path, failing=True) == expected
    finally:
        monkeypatch.delenv(failpoints.ENV)
        failpoints.reset()
