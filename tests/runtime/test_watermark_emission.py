"""emitted_before against Flink's rule followed row by row: a row sees the last watermark
emitted before it, and a watermark is emitted after a row once the running maximum of the
WATERMARK expression has grown by more than the interval since the last one emitted."""

from __future__ import annotations

import numpy as np
import pytest

from sqlengine.runtime.watermark_emission import emitted_before

MIN = int(np.iinfo(np.int64).min)


def _row_by_row(marks: list[int], emitted: int, interval: int) -> list[int]:
    out, running, last = [], emitted, emitted
    for m in marks:
        out.append(last)
        running = max(running, m)
        if running > last + interval:
            last = running
    return out


@pytest.mark.parametrize("interval", [0, 1, 7, 200, 5_000])
@pytest.mark.parametrize("emitted", [MIN, 1_000, 60_000])
@pytest.mark.parametrize("seed", range(4))
def test_matches_the_rule_row_by_row(interval: int, emitted: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3_000))
    # Mostly rising times with disorder, so that emissions are few for a long interval and
    # many (past the one-search-per-emission budget) for a short one.
    marks = (np.cumsum(rng.integers(0, 20, n)) + rng.integers(-300, 300, n)).astype(np.int64)
    got = emitted_before(marks, emitted, interval)
    assert got.tolist() == _row_by_row(marks.tolist(), emitted, interval)


def test_an_empty_batch() -> None:
    assert len(emitted_before(np.empty(0, np.int64), MIN, 200)) == 0
