"""KeyedStateBackend: an operator's named keyed states for one range of key groups, with the
snapshot / restore API that checkpoints drive."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypeVar

import pyarrow as pa

from sqlengine.runtime.native.partitioner import MAX_PARALLELISM
from sqlengine.runtime.state.key_groups import KeyGroupRange
from sqlengine.runtime.state.states import ListState, MapState, ValueState

State: TypeAlias = ValueState | ListState | MapState
S = TypeVar("S", ValueState, ListState, MapState)
Snapshot = dict[str, dict[int, pa.Table]]


class KeyedStateBackend:
    """Flink's keyed state backend (heap, over Arrow tables): states by name, all keyed by
    the same key columns and holding the key groups of ``key_groups``."""

    def __init__(self, key_schema: pa.Schema, key_groups: KeyGroupRange | None = None,
                 max_parallelism: int = MAX_PARALLELISM) -> None:
        self.key_schema = key_schema
        self.max_parallelism = max_parallelism
        self.key_groups = key_groups or KeyGroupRange.all(max_parallelism)
        self.states: dict[str, State] = {}

    def value_state(self, name: str, value_schema: pa.Schema) -> ValueState:
        state = ValueState(self.key_schema, value_schema, max_parallelism=self.max_parallelism)
        return self._register(name, state)

    def list_state(self, name: str, value_schema: pa.Schema) -> ListState:
        state = ListState(self.key_schema, value_schema, max_parallelism=self.max_parallelism)
        return self._register(name, state)

    def map_state(self, name: str, user_key_schema: pa.Schema, value_schema: pa.Schema
                  ) -> MapState:
        state = MapState(self.key_schema, user_key_schema, value_schema, self.max_parallelism)
        return self._register(name, state)

    def _register(self, name: str, state: S) -> S:
        if name in self.states:
            msg = f"keyed state {name!r} is registered twice"
            raise ValueError(msg)
        self.states[name] = state
        return state

    def snapshot(self) -> Snapshot:
        """Per state name: its rows per key group."""
        return {name: state.snapshot() for name, state in self.states.items()}

    def restore(self, snapshots: Mapping[str, Mapping[int, pa.Table]]) -> None:
        """Restore each registered state from its snapshot, keeping only this backend's key
        groups (so a rescaled subtask takes its share of the groups)."""
        for name, state in self.states.items():
            state.restore(snapshots.get(name, {}), self.key_groups)
