"""Keyed state kinds over Arrow tables: ValueState (one row per key), ListState (rows per
key, in arrival order) and MapState (one row per key and user key). Each keeps its rows in one
table with the rows' key group, so a snapshot is one table per key group."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pyarrow as pa

from sqlengine.runtime.native.partitioner import MAX_PARALLELISM
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.state.key_groups import KeyGroupRange, assign_key_groups

KEY_GROUP = "$kg"


class _KeyedRows:
    """Rows with key columns (hashed to a key group), identity columns (what makes a row
    unique, for value and map state) and value columns."""

    def __init__(self, key_schema: pa.Schema, value_schema: pa.Schema,
                 user_key_schema: pa.Schema | None = None,
                 max_parallelism: int = MAX_PARALLELISM) -> None:
        self.key_names = list(key_schema.names)
        self.user_key_names = list(user_key_schema.names) if user_key_schema else []
        fields = [pa.field(KEY_GROUP, pa.int64()), *key_schema,
                  *(user_key_schema or []), *value_schema]
        self.schema = pa.schema(fields)
        self.value_names = list(value_schema.names)
        self.max_parallelism = max_parallelism
        self.table = self.schema.empty_table()

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def _rows(self, keys: pa.Table, values: pa.Table) -> pa.Table:
        kg = assign_key_groups([c.combine_chunks() for c in keys.columns], self.max_parallelism)
        columns = [pa.array(kg), *keys.columns, *values.columns]
        return pa.Table.from_arrays(columns, schema=self.schema)

    def _ids(self, names: list[str], probe: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """Dense ids of the state's rows and of ``probe``'s rows over the named columns."""
        both = pa.concat_tables([self.table.select(names),
                                 probe.select(names).cast(self.table.select(names).schema)])
        ids = dense_ids([c.combine_chunks() for c in both.columns], both.num_rows)
        return ids[: self.table.num_rows], ids[self.table.num_rows:]

    def _member(self, names: list[str], probe: pa.Table) -> np.ndarray:
        """Per state row: is its combination of ``names`` among ``probe``'s rows?"""
        mine, theirs = self._ids(names, probe)
        return np.isin(mine, theirs)

    def _upsert(self, rows: pa.Table, names: list[str]) -> None:
        """Add ``rows``; the last row per combination of ``names`` wins."""
        table = pa.concat_tables([self.table, rows]).combine_chunks()
        ids = dense_ids([table[n].combine_chunks() for n in names], table.num_rows)
        _, last_rev = np.unique(ids[::-1], return_index=True)
        keep = np.sort(table.num_rows - 1 - last_rev)
        self.table = table.take(pa.array(keep))

    def _lookup(self, names: list[str], probe: pa.Table) -> pa.Table:
        """The value columns of the state row matching each probe row (NULLs where none)."""
        mine, theirs = self._ids(names, probe)
        size = int(max(mine.max(initial=-1), theirs.max(initial=-1))) + 1
        where = np.full(size, -1, dtype=np.int64)
        where[mine] = np.arange(len(mine))
        pos = where[theirs]
        return self.table.select(self.value_names).take(pa.array(pos, mask=pos < 0))

    def clear(self, keys: pa.Table) -> None:
        """Drop every row of the given keys."""
        if self.table.num_rows:
            self.table = self.table.filter(pa.array(~self._member(self.key_names, keys)))

    def snapshot(self) -> dict[int, pa.Table]:
        """The state's rows per key group (only the groups holding rows)."""
        kg = self.table[KEY_GROUP].to_numpy()
        data = self.table.drop_columns([KEY_GROUP])
        return {int(g): data.filter(pa.array(kg == g)) for g in np.unique(kg)}

    def restore(self, snapshot: Mapping[int, pa.Table],
                key_groups: KeyGroupRange | None = None) -> None:
        """Replace the state by the snapshot's key groups in ``key_groups`` (all by
        default): restoring a subtask of a rescaled job takes its range of groups."""
        parts = [self.schema.empty_table()]
        for group, rows in sorted(snapshot.items()):
            if key_groups is not None and group not in key_groups:
                continue
            kg = pa.array(np.full(rows.num_rows, group, dtype=np.int64))
            parts.append(rows.add_column(0, KEY_GROUP, kg).cast(self.schema))
        self.table = pa.concat_tables(parts).combine_chunks()


class ValueState(_KeyedRows):
    """One row of values per key."""

    def update(self, keys: pa.Table, values: pa.Table) -> None:
        self._upsert(self._rows(keys, values), self.key_names)

    def get(self, keys: pa.Table) -> pa.Table:
        """Each key's values, aligned with ``keys`` (NULLs for a key without state)."""
        return self._lookup(self.key_names, keys)


class ListState(_KeyedRows):
    """Rows per key, kept in the order they were added."""

    def add(self, keys: pa.Table, values: pa.Table) -> None:
        self.table = pa.concat_tables([self.table, self._rows(keys, values)]).combine_chunks()

    def get(self, keys: pa.Table) -> pa.Table:
        """The rows (key and value columns) of the given keys, in the order added."""
        rows = self.table.filter(pa.array(self._member(self.key_names, keys)))
        return rows.drop_columns([KEY_GROUP])


class MapState(_KeyedRows):
    """One row of values per (key, user key); the key alone picks the key group."""

    def __init__(self, key_schema: pa.Schema, user_key_schema: pa.Schema,
                 value_schema: pa.Schema, max_parallelism: int = MAX_PARALLELISM) -> None:
        super().__init__(key_schema, value_schema, user_key_schema, max_parallelism)

    def _rows(self, keys: pa.Table, values: pa.Table) -> pa.Table:
        # ``keys`` holds the key and the user key columns; the key group is the key's.
        kg = assign_key_groups([keys[n].combine_chunks() for n in self.key_names],
                               self.max_parallelism)
        columns = [pa.array(kg), *keys.columns, *values.columns]
        return pa.Table.from_arrays(columns, schema=self.schema)

    def put(self, keys: pa.Table, values: pa.Table) -> None:
        """``keys``: the key columns then the user key columns."""
        self._upsert(self._rows(keys, values), self.key_names + self.user_key_names)

    def get(self, keys: pa.Table) -> pa.Table:
        """The values of each (key, user key), aligned with ``keys``."""
        return self._lookup(self.key_names + self.user_key_names, keys)

    def entries(self, keys: pa.Table) -> pa.Table:
        """All (key, user key, value) rows of the given keys."""
        rows = self.table.filter(pa.array(self._member(self.key_names, keys)))
        return rows.drop_columns([KEY_GROUP])

    def remove(self, keys: pa.Table) -> None:
        """Drop the given (key, user key) entries."""
        if self.table.num_rows:
            names = self.key_names + self.user_key_names
            self.table = self.table.filter(pa.array(~self._member(names, keys)))
