"""Keyed state: key groups, value / list / map state, snapshot and restore (rescaling)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from sqlengine.runtime.native.partitioner import MAX_PARALLELISM, HashPartitioner, key_groups
from sqlengine.runtime.state import (
    KeyedStateBackend,
    KeyGroupRange,
    ListState,
    MapState,
    ValueState,
    assign_key_groups,
    key_group_range_for_subtask,
    subtask_for_key_group,
)

KEY = pa.schema([("k", pa.string())])
VAL = pa.schema([("v", pa.int64())])


def _keys(*ks: str | None) -> pa.Table:
    return pa.table({"k": pa.array(ks, pa.string())})


def _vals(*vs: int) -> pa.Table:
    return pa.table({"v": pa.array(vs, pa.int64())})


@pytest.mark.parametrize("parallelism", [1, 2, 3, 5, 128])
def test_key_group_ranges_cover_all_groups_once(parallelism: int) -> None:
    ranges = [key_group_range_for_subtask(i, parallelism) for i in range(parallelism)]
    covered = [g for r in ranges for g in r]
    assert covered == list(range(MAX_PARALLELISM))
    for i, r in enumerate(ranges):
        assert all(subtask_for_key_group(g, parallelism) == i for g in r)
        assert len(r) in (MAX_PARALLELISM // parallelism, -(-MAX_PARALLELISM // parallelism))


def test_key_groups_agree_with_the_hash_partitioner() -> None:
    col = pa.array([f"key{i}" for i in range(200)])
    groups = assign_key_groups([col])
    assert (groups == key_groups([col])).all()
    assert groups.min() >= 0 and groups.max() < MAX_PARALLELISM
    assert 5 in KeyGroupRange(3, 5) and 6 not in KeyGroupRange(3, 5)
    assert len(KeyGroupRange(4, 3)) == 0
    assert KeyGroupRange(2, 4).mask(np.array([1, 2, 4, 5])).tolist() == [False, True, True, False]
    assert HashPartitioner is not None


def test_value_state_update_get_clear() -> None:
    state = ValueState(KEY, VAL)
    state.update(_keys("a", "b", "a"), _vals(1, 2, 3))
    assert state.num_rows == 2
    assert state.get(_keys("a", "c", "b", None))["v"].to_pylist() == [3, None, 2, None]
    state.update(_keys(None), _vals(9))
    assert state.get(_keys(None))["v"].to_pylist() == [9]  # NULL is a key
    state.clear(_keys("a"))
    assert state.get(_keys("a", "b"))["v"].to_pylist() == [None, 2]


def test_list_state_keeps_arrival_order() -> None:
    state = ListState(KEY, VAL)
    state.add(_keys("a", "b"), _vals(1, 2))
    state.add(_keys("a"), _vals(3))
    rows = state.get(_keys("a"))
    assert rows.to_pydict() == {"k": ["a", "a"], "v": [1, 3]}
    state.clear(_keys("a"))
    assert state.get(_keys("a", "b")).to_pydict() == {"k": ["b"], "v": [2]}


def test_map_state_per_user_key() -> None:
    state = MapState(KEY, pa.schema([("u", pa.int64())]), VAL)
    keys = pa.table({"k": ["a", "a", "b"], "u": pa.array([1, 2, 1], pa.int64())})
    state.put(keys, _vals(10, 20, 30))
    state.put(pa.table({"k": ["a"], "u": pa.array([2], pa.int64())}), _vals(21))
    probe = pa.table({"k": ["a", "a", "b", "b"], "u": pa.array([1, 2, 1, 2], pa.int64())})
    assert state.get(probe)["v"].to_pylist() == [10, 21, 30, None]
    assert sorted(state.entries(_keys("a"))["v"].to_pylist()) == [10, 21]
    state.remove(pa.table({"k": ["a"], "u": pa.array([1], pa.int64())}))
    assert state.entries(_keys("a"))["v"].to_pylist() == [21]
    # All of a key's entries live in the key's group.
    groups = state.snapshot()
    assert set(groups) == {int(g) for g in assign_key_groups([pa.array(["a", "b"])])}


def test_snapshot_restore_round_trip() -> None:
    backend = KeyedStateBackend(KEY)
    values = backend.value_state("count", VAL)
    lists = backend.list_state("rows", VAL)
    keys = [f"k{i}" for i in range(50)]
    values.update(_keys(*keys), _vals(*range(50)))
    lists.add(_keys(*keys, *keys), _vals(*range(100)))
    snap = backend.snapshot()
    assert sum(t.num_rows for t in snap["count"].values()) == 50
    for group, table in snap["count"].items():
        assert (assign_key_groups([table["k"].combine_chunks()]) == group).all()

    restored = KeyedStateBackend(KEY)
    r_values = restored.value_state("count", VAL)
    r_lists = restored.list_state("rows", VAL)
    restored.restore(snap)
    assert r_values.get(_keys(*keys))["v"].to_pylist() == list(range(50))
    assert r_lists.get(_keys("k3"))["v"].to_pylist() == [3, 53]
    assert restored.snapshot()["count"].keys() == snap["count"].keys()
    with pytest.raises(ValueError, match="twice"):
        restored.value_state("count", VAL)


def test_restore_rescaled_takes_own_key_groups() -> None:
    backend = KeyedStateBackend(KEY)
    state = backend.value_state("v", VAL)
    keys = [f"k{i}" for i in range(100)]
    state.update(_keys(*keys), _vals(*range(100)))
    snap = backend.snapshot()
    owned: list[str] = []
    for i in range(3):  # rescale 1 -> 3 subtasks
        sub = KeyedStateBackend(KEY, key_group_range_for_subtask(i, 3))
        sub_state = sub.value_state("v", VAL)
        sub.restore(snap)
        got = sub_state.table["k"].to_pylist()
        groups = assign_key_groups([pa.array(got, pa.string())])
        assert all(g in sub.key_groups for g in groups.tolist())
        owned += got
    assert sorted(owned) == sorted(keys)
