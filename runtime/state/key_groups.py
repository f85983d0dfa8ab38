"""Flink's KeyGroupRangeAssignment: key -> key group (by the partitioner's vectorised key
hash) and key group -> subtask, so a subtask's state is a contiguous range of key groups and
rescaling moves whole key groups."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from sqlengine.runtime.native.partitioner import MAX_PARALLELISM, hash_rows


@dataclass(frozen=True, slots=True)
class KeyGroupRange:
    """The key groups ``start`` .. ``end`` (both included; empty when end < start)."""

    start: int
    end: int

    def __contains__(self, key_group: object) -> bool:
        return isinstance(key_group, int) and self.start <= key_group <= self.end

    def __len__(self) -> int:
        return max(0, self.end - self.start + 1)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.end + 1))

    def mask(self, key_groups: np.ndarray) -> np.ndarray:
        return (key_groups >= self.start) & (key_groups <= self.end)

    @staticmethod
    def all(max_parallelism: int = MAX_PARALLELISM) -> KeyGroupRange:
        return KeyGroupRange(0, max_parallelism - 1)


def assign_key_groups(keys: list[pa.Array], max_parallelism: int = MAX_PARALLELISM
                      ) -> np.ndarray:
    """The key group of each row's key (the same hash the hash partitioner routes by)."""
    return (hash_rows(keys) % np.uint64(max_parallelism)).astype(np.int64)


def subtask_for_key_group(key_group: int | np.ndarray, parallelism: int,
                          max_parallelism: int = MAX_PARALLELISM) -> int | np.ndarray:
    """Which of ``parallelism`` subtasks owns a key group (as the hash partitioner routes)."""
    return key_group * parallelism // max_parallelism


def owned(keys: list[pa.Array], subtask: int, parallelism: int,
          max_parallelism: int = MAX_PARALLELISM) -> np.ndarray:
    """Per row: does subtask ``subtask`` of ``parallelism`` own the row's key (the subtask
    the hash exchange sends it to)? A rescaled restore keeps the state rows it owns."""
    if not keys or len(keys[0]) == 0:
        return np.zeros(len(keys[0]) if keys else 0, dtype=bool)
    groups = assign_key_groups(keys, max_parallelism)
    return np.asarray(subtask_for_key_group(groups, parallelism, max_parallelism)) == subtask


def key_group_range_for_subtask(index: int, parallelism: int,
                                max_parallelism: int = MAX_PARALLELISM) -> KeyGroupRange:
    """The key groups subtask ``index`` of ``parallelism`` owns."""
    start = (index * max_parallelism + parallelism - 1) // parallelism
    end = ((index + 1) * max_parallelism - 1) // parallelism
    return KeyGroupRange(start, end)
