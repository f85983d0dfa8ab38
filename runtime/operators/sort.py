"""SortOperator and LimitOperator: ORDER BY / LIMIT over a bounded input."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.changelog import apply_changelog
from sqlengine.runtime.elements import data_part, has_rowkind
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import NotCheckpointable, Operator
from sqlengine.runtime.spill import SpillDirectory, read_batches, write_table
from sqlengine.runtime.value_codes import value_ranks

_OUT_CHUNK = 65536
_RUN_CHUNK = 32768  # rows per chunk of a spilled run (one chunk per run in memory)


def _chunks(table: pa.Table) -> list[pa.RecordBatch]:
    return [b for b in table.combine_chunks().to_batches(max_chunksize=_OUT_CHUNK) if b.num_rows]



def order_columns(i: int, values: pa.Array, key: SortKey
                  ) -> tuple[dict[str, pa.Array], list[tuple[str, str]]]:
    """The columns and sort order of ORDER BY key ``i``: first whether the value is NULL
    (its NULLS FIRST / LAST), then, for a floating-point key in descending order, whether it
    is NaN (Flink orders NaN above every number: first in DESC, last in ASC, where Arrow puts
    it last both ways), then the value."""
    if _holds_array(values.type):  # (Arrow sorts no ARRAY: by its rank among the values)
        values = value_ranks(values)
    cols = {f"n{i}": pc.is_valid(values)}
    order = [(f"n{i}", "ascending" if key.nulls_first else "descending")]
    if not key.ascending and pa.types.is_floating(values.type):
        cols[f"x{i}"] = pc.fill_null(pc.is_nan(values), False)
        order.append((f"x{i}", "descending"))
    cols[f"v{i}"] = values
    order.append((f"v{i}", "ascending" if key.ascending else "descending"))
    return cols, order

def _holds_array(t: pa.DataType) -> bool:
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return True
    return pa.types.is_struct(t) and any(_holds_array(f.type) for f in t)


def sort_order(table: pa.Table, keys: tuple[SortKey, ...],
               first: list[tuple[str, pa.Array]] | None = None,
               last: list[tuple[str, pa.Array]] | None = None) -> pa.Array:
    """The stable order of ``table``'s rows by ``keys`` (ORDER BY's), after the ascending
    columns ``first`` and before the ascending columns ``last``."""
    columns, sort_keys = sort_columns(table, keys, first, last)
    return pc.sort_indices(columns, sort_keys=sort_keys)


def sort_columns(table: pa.Table, keys: tuple[SortKey, ...],
                 first: list[tuple[str, pa.Array]] | None = None,
                 last: list[tuple[str, pa.Array]] | None = None
                 ) -> tuple[pa.Table, list[tuple[str, str]]]:
    """What :func:`sort_order` sorts by: the columns (``first``, each key's, ``last``) and
    their sort keys, for a sort or a selection of the first rows (``select_k``)."""
    batch = table.combine_chunks().to_batches()[0] if table.num_rows else \
        pa.RecordBatch.from_pylist([], schema=table.schema)
    columns: dict[str, pa.Array] = dict(first or [])
    sort_keys = [(name, "ascending") for name in columns]
    for i, k in enumerate(keys):
        cols, order = order_columns(i, evaluate(k.expr, batch), k)
        columns.update(cols)
        sort_keys += order
    for name, values in last or []:
        columns[name] = values
        sort_keys.append((name, "ascending"))
    return pa.table(columns), sort_keys


class SortOperator(Operator):
    """Buffers its (possibly updating) input, applies the changelog, sorts at end of input.

    Past the memory budget (batch mode, insert-only input) it sorts what it holds into a run
    on disk; at the end the runs and the rows still held are merged: each round sorts the
    runs' current chunks together and emits every row up to the smallest of the chunks' last
    rows (no run can hold anything smaller), so at most one chunk per run is in memory. With
    a LIMIT a run keeps only its first OFFSET + LIMIT rows (in memory when that is small)."""

    name = "Sort"
    state_fields = ("batches", "held", "updating")

    holds_until_end = True  # (see Operator.holds_until_end)

    def snapshot_state(self) -> dict[str, object]:
        if self.runs or self.spilled_bytes:  # (sorted runs on disk: not in a checkpoint)
            raise NotCheckpointable(self.name)
        return super().snapshot_state()

    def __init__(self, keys: tuple[SortKey, ...], fetch: int | None, offset: int,
                 schema: pa.Schema) -> None:
        self.keys = keys
        self.fetch = fetch
        self.offset = offset
        self.schema = schema
        self.batches: list[pa.RecordBatch] = []
        self.held = 0  # bytes of ``batches``
        self.updating = False  # a batch came with row kinds
        self.directory: SpillDirectory | None = None
        self.runs: list[str] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.batches.append(batch)
        self.held += batch.nbytes
        self.updating = self.updating or has_rowkind(batch)
        return ()

    def state_bytes(self) -> int:
        return self.held

    def _order(self, table: pa.Table) -> pa.Array:
        """The stable sort order of ``table``'s rows by the sort keys."""
        return sort_order(table, self.keys)

    def _sorted_held(self) -> pa.Table:
        """The rows held, sorted (cut to OFFSET + LIMIT rows with a LIMIT)."""
        table = pa.Table.from_batches([data_part(b) for b in self.batches], self.schema)
        self.batches, self.held = [], 0
        order = self._order(table)
        if self.fetch is not None:
            order = order[:self.offset + self.fetch]
        return table.take(order)

    def spill(self, directory: str | None) -> bool:
        if self.updating or not self.batches:
            return False
        before = self.held
        run = self._sorted_held()
        if self.fetch is not None and run.nbytes * 4 <= before:
            # (a LIMIT's first rows, a fraction of what was held: they stay in memory)
            self.batches, self.held = run.to_batches(), run.nbytes
            return True
        if self.directory is None:
            self.directory = SpillDirectory(directory, "sort")
        path = self.directory.new_file()
        write_table(path, run, _RUN_CHUNK)
        self.spilled_bytes += run.nbytes
        self.runs.append(path)
        return True

    def spill_refusal(self) -> str:
        return " (its input is an updating changelog)" if self.updating else ""

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if self.runs:
            return self._merged()
        table = apply_changelog(self.batches, self.schema)
        self.batches, self.held = [], 0
        if table.num_rows == 0:
            return ()
        order = self._order(table)
        end = None if self.fetch is None else self.offset + self.fetch
        order = order[self.offset:end]
        return _chunks(table.take(order))

    def _merged(self) -> Iterator[pa.RecordBatch]:
        """The runs on disk and the rows held, merged, OFFSET and LIMIT applied."""
        runs: list[Iterator[pa.Table]] = [
            (pa.Table.from_batches([b]) for b in read_batches(path)) for path in self.runs]
        self.runs = []
        if self.batches:
            held = self._sorted_held()
            runs.append(iter([held.slice(i, _RUN_CHUNK)
                              for i in range(0, held.num_rows, _RUN_CHUNK)]))
        skip = self.offset
        left = self.fetch
        try:
            for table in _merge_runs(runs, self._order):
                if skip:
                    cut = min(skip, table.num_rows)
                    table, skip = table.slice(cut), skip - cut
                if left is not None:
                    table = table.slice(0, left)
                    left -= table.num_rows
                if table.num_rows:
                    yield from _chunks(table)
                if left == 0:
                    return
        finally:
            self.close()

    def close(self) -> None:
        if self.directory is not None:
            self.directory.close()
            self.directory = None


def _merge_runs(runs: list[Iterator[pa.Table]], order_of: Callable[[pa.Table], pa.Array]
                ) -> Iterator[pa.Table]:
    """Sorted runs (each an iterator of sorted chunks) merged into sorted tables."""
    current: list[pa.Table | None] = [_next_chunk(r) for r in runs]
    while True:
        active = [r for r, c in enumerate(current) if c is not None]
        if not active:
            return
        if len(active) == 1:
            r = active[0]
            chunk = current[r]
            while chunk is not None:
                yield chunk
                chunk = _next_chunk(runs[r])
            return
        chunks = [current[r] for r in active]
        lasts = pa.concat_tables([c.slice(c.num_rows - 1, 1) for c in chunks])
        fence = int(order_of(lasts)[0].as_py())  # the run whose last row is smallest
        combined = pa.concat_tables(chunks)
        order = order_of(combined).to_numpy()
        starts = np.cumsum([0] + [c.num_rows for c in chunks])
        fence_row = starts[fence + 1] - 1
        cut = int(np.nonzero(order == fence_row)[0][0]) + 1
        taken = order[:cut]
        yield combined.take(pa.array(taken))
        # Each run's rows taken are a prefix of its chunk (the sort is stable).
        counts = np.bincount(np.searchsorted(starts, taken, side="right") - 1,
                             minlength=len(chunks))
        for j, r in enumerate(active):
            rest = chunks[j].slice(int(counts[j]))
            current[r] = rest if rest.num_rows else _next_chunk(runs[r])


def _next_chunk(run: Iterator[pa.Table]) -> pa.Table | None:
    for chunk in run:
        if chunk.num_rows:
            return chunk
    return None


class LimitOperator(Operator):
    """LIMIT/OFFSET: passes rows through as they come (insert-only input), or applies the
    changelog at end of input first (updating input). Over insert-only input it is ``done``
    once OFFSET + LIMIT rows have passed, so an unbounded input need not end."""

    name = "Limit"
    state_fields = ("batches", "done", "seen")

    @property
    def holds_until_end(self) -> bool:
        return self.input_updating or bool(self.batches)

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

    def state_summary(self) -> Mapping[str, object]:
        return {"seen": self.seen}
