"""Keyed state: value / list / map state over Arrow, partitioned by key group."""
from __future__ import annotations

from sqlengine.runtime.state.backend import KeyedStateBackend
from sqlengine.runtime.state.key_groups import (
    KeyGroupRange,
    assign_key_groups,
    key_group_range_for_subtask,
    subtask_for_key_group,
)
from sqlengine.runtime.state.states import ListState, MapState, ValueState

__all__ = ["KeyGroupRange", "KeyedStateBackend", "ListState", "MapState", "ValueState",
           "assign_key_groups", "key_group_range_for_subtask", "subtask_for_key_group"]
