"""SortOperator and LimitOperator: ORDER BY / LIMIT over a bounded input."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.changelog import apply_changelog
from sqlengine.runtime.elements import data_part, has_rowkind
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator

_OUT_CHUNK = 65536


def _chunks(table: pa.Table) -> list[pa.RecordBatch]:
    return [b for b in table.combine_chunks().to_batches(max_chunksize=_OUT_CHUNK) if b.num_rows]


class SortOperator(Operator):
    """Buffers its (possibly updating) input, applies the changelog, sorts at end of input."""

    name = "Sort"

    def __init__(self, keys: tuple[SortKey, ...], fetch: int | None, offset: int,
                 schema: pa.Schema) -> None:
        self.keys = keys
        self.fetch = fetch
        self.offset = offset
        self.schema = schema
        self.batches: list[pa.RecordBatch] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.batches.append(batch)
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        table = apply_changelog(self.batches, self.schema)
        self.batches = []
        if table.num_rows == 0:
            return ()
        batch = table.combine_chunks().to_batches()[0]
        columns: dict[str, pa.Array] = {}
        sort_keys: list[tuple[str, str]] = []
        for i, k in enumerate(self.keys):
            values = evaluate(k.expr, batch)
            # Per-key NULL placement: sort first by "is valid" (false sorts first).
            columns[f"n{i}"] = pc.is_valid(values)
            columns[f"v{i}"] = values
            sort_keys.append((f"n{i}", "ascending" if k.nulls_first else "descending"))
            sort_keys.append((f"v{i}", "ascending" if k.ascending else "descending"))
        order = pc.sort_indices(pa.table(columns), sort_keys=sort_keys)
        end = None if self.fetch is None else self.offset + self.fetch
        order = order[self.offset:end]
        return _chunks(table.take(order))


class LimitOperator(Operator):
    """LIMIT/OFFSET: passes rows through as they come (insert-only input), or applies the
    changelog at end of input first (updating input). Over insert-only input it is ``done``
    once OFFSET + LIMIT rows have passed, so an unbounded input need not end."""

    name = "Limit"

    def __init__(self, fetch: int | None, offset: int, schema: pa.Schema,
                 input_updating: bool) -> None:
        self.fetch = fetch
        self.offset = offset
        self.schema = schema
        self.input_updating = input_updating
        self.seen = 0
        self.batches: list[pa.RecordBatch] = []
        self.done = fetch == 0  # (LIMIT 0 needs no input at all)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if self.input_updating or has_rowkind(batch):
            self.batches.append(batch)
            return ()
        start = max(self.offset - self.seen, 0)
        stop = batch.num_rows if self.fetch is None else \
            min(batch.num_rows, self.offset + self.fetch - self.seen)
        self.seen += batch.num_rows
        if self.fetch is not None and self.seen >= self.offset + self.fetch:
            self.done = True  # (insert-only input: nothing later can change the result)
        if stop <= start:
            return ()
        return (data_part(batch).slice(start, stop - start),)

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if not self.batches:
            return ()
        table = apply_changelog(self.batches, self.schema)
        end = None if self.fetch is None else self.offset + self.fetch
        return _chunks(table.slice(self.offset, None if end is None else end - self.offset))

    def snapshot_state(self) -> Mapping[str, object]:
        return {"seen": self.seen}
