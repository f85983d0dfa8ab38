"""KeyIndex (runtime/operators/key_index.py) against a dict: the same slot for every key
whether it is held in a dense array, in sorted arrays or in a dict."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.runtime.operators.key_index import KeyIndex


# (a spread of 3M: dense while the keys fit, sorted arrays from the batch that widens it)
@pytest.mark.parametrize(("spread", "dense"), [(100, True), (3_000_000, None),
                                               (10**12, False)])
@pytest.mark.parametrize("seed", range(3))
def test_slots_agree_with_a_dict(spread, dense, seed):
    rng = np.random.default_rng(seed)
    index, expected = KeyIndex([pa.int64()]), {}
    for i in range(25):
        lo = int(rng.integers(-spread, spread))
        values = np.unique(rng.integers(lo, lo + spread // 3 + 2, 3000)).tolist()
        if i % 6 == 0:
            values.append(None)
        batch = pa.array(values, pa.int64())
        slots = index.assign([batch])
        for key, slot in zip(values, slots.tolist()):
            assert expected.setdefault(key, len(expected)) == slot
    assert len(index) == len(expected)
    if dense is not None:
        assert (index.dense is not None) == dense
    probe = [*expected, spread * 7, -spread * 7]
    assert index.lookup([pa.array(probe, pa.int64())]).tolist() == \
        [expected.get(k, -1) for k in probe]


def test_dates_timestamps_strings_and_several_columns():
    days = pa.array([dt.date(2024, 1, d) for d in (1, 2, 3)])
    index = KeyIndex([pa.date32()])
    assert index.vectorised
    assert index.assign([days]).tolist() == [0, 1, 2]
    assert index.lookup([pa.array([dt.date(2024, 1, 3), dt.date(2023, 1, 1)])]).tolist() == \
        [2, -1]
    stamps = KeyIndex([pa.timestamp("ms")])
    ts = pa.array([0, 10**12, None], pa.timestamp("ms"))
    assert stamps.assign([ts]).tolist() == [0, 1, 2]
    assert stamps.lookup([pa.array([None, 10**12], pa.timestamp("ms"))]).tolist() == [2, 1]
    words = KeyIndex([pa.string()])
    assert not words.vectorised
    assert words.assign([pa.array(["a", None])]).tolist() == [0, 1]
    pairs = KeyIndex([pa.int64(), pa.string()])
    assert pairs.assign([pa.array([1, 1]), pa.array(["a", "b"])]).tolist() == [0, 1]
    assert pairs.lookup([pa.array([1, 2]), pa.array(["b", "a"])]).tolist() == [1, -1]
    none = KeyIndex([])
    assert none.lookup([], 1).tolist() == [-1]
    assert none.assign([]).tolist() == [0]
    assert none.lookup([], 2).tolist() == [0, 0]
