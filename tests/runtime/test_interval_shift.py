"""A DATE or TIMESTAMP plus or minus a literal day-time interval (one number for all rows)
gives what the per-row path gives: each timestamp unit, signs, intervals of a fraction of the
unit (truncated toward zero for seconds and days), NULLs, instants before 1970."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.runtime import intervals

LITERALS = [dt.timedelta(seconds=4), dt.timedelta(milliseconds=1500),
            dt.timedelta(milliseconds=-2500), dt.timedelta(days=3, milliseconds=7),
            dt.timedelta(milliseconds=999), dt.timedelta(hours=36), dt.timedelta(hours=-12),
            dt.timedelta(0)]


def _timestamps(unit: str) -> pa.Array:
    rng = np.random.default_rng(5)
    top = 10**12 // (1000 if unit == "s" else 1)
    ticks = np.concatenate([rng.integers(-top, top, 40), [0, -1, 1]]).astype(np.int64)
    return pa.concat_arrays([pa.array(ticks).cast(pa.timestamp(unit)),
                             pa.nulls(1, pa.timestamp(unit))])


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("literal", LITERALS, ids=str)
@pytest.mark.parametrize("column", ["s", "ms", "us", "ns", "date"])
def test_a_literal_interval_moves_like_the_per_row_path(column: str, literal: dt.timedelta,
                                                        sign: int) -> None:
    a = pa.array([0, 1, -5, -1, 19000, None], pa.date32()) if column == "date" else \
        _timestamps(column)
    per_row = pa.repeat(pa.scalar(literal, pa.duration("ms")), len(a))
    assert intervals.shift(a, per_row, literal, sign) == intervals.shift(a, per_row, None, sign)
