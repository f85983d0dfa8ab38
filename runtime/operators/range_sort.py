"""ORDER BY at parallelism > 1 (batch mode), as Flink's RangePartitionRewriter: each subtask
samples its rows' sort keys (reservoir sampling), one subtask turns the samples into p - 1
boundaries, every row gets the number of its key range, rows travel to the subtask of their
range, each subtask sorts its range, and the ranges are concatenated in order.

Sort keys are compared as the sort does: per key a "NULL" flag (placing NULLs first or last)
then the value (ascending or descending), so ranges follow the ORDER BY exactly.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.elements import data_part
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.sort import order_columns

PART = "$part"


def key_table(batch: pa.RecordBatch, keys: tuple[SortKey, ...]) -> tuple[pa.Table,
                                                                        list[tuple[str, str]]]:
    """The sort keys of ``batch`` as columns, with the sort order over them."""
    cols: dict[str, pa.Array] = {}
    order: list[tuple[str, str]] = []
    for i, k in enumerate(keys):
        columns, sort_order = order_columns(i, evaluate(k.expr, batch), k)
        cols.update(columns)
        order += sort_order
    return pa.table(cols), order


class RangeSampleOperator(Operator):
    """A reservoir sample (Algorithm R, vectorised per batch) of the sort keys."""

    name = "RangeSample"
    state_fields = ("rng", "sample", "seen")

    def __init__(self, keys: tuple[SortKey, ...], size: int, seed: int = 7) -> None:
        self.keys = keys
        self.size = size
        self.rng = np.random.default_rng(seed)
        self.seen = 0
        self.sample: pa.Table | None = None

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        n = data.num_rows
        if n == 0:
            return ()
        table, _ = key_table(data, self.keys)
        positions = np.arange(self.seen, self.seen + n)
        self.seen += n
        if self.sample is None or self.sample.num_rows < self.size:
            room = self.size - (0 if self.sample is None else self.sample.num_rows)
            head = table.slice(0, room)
            self.sample = head if self.sample is None else pa.concat_tables([self.sample,
                                                                             head])
            table = table.slice(room)
            positions = positions[room:]
        if table.num_rows and self.sample is not None:
            # Row at position i replaces a random slot with probability size / (i + 1).
            slots = (self.rng.random(len(positions)) * (positions + 1)).astype(np.int64)
            take = slots < self.size
            if take.any():
                current = self.sample.combine_chunks()
                chosen = np.nonzero(take)[0]
                # (a later row wins a slot it shares with an earlier one, as in sequence)
                source = np.full(current.num_rows, -1)
                source[slots[chosen]] = chosen
                keep = source < 0
                self.sample = pa.concat_tables([current.filter(pa.array(keep)),
                                                table.take(pa.array(source[~keep]))])
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if self.sample is None or self.sample.num_rows == 0:
            return ()
        return self.sample.combine_chunks().to_batches()


class RangeBoundariesOperator(Operator):
    """All subtasks' samples in, p - 1 boundaries out (the quantiles of the sorted sample)."""

    name = "RangeBoundaries"
    state_fields = ("samples",)

    def __init__(self, keys: tuple[SortKey, ...], parallelism: int) -> None:
        self.keys = keys
        self.parallelism = parallelism
        self.samples: list[pa.RecordBatch] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.samples.append(data_part(batch))
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if not self.samples:
            return ()
        sample = pa.Table.from_batches(self.samples)
        order = []
        for i, k in enumerate(self.keys):
            order.append((f"n{i}", "ascending" if k.nulls_first else "descending"))
            if f"x{i}" in sample.column_names:  # (a DOUBLE's NaN first in DESC)
                order.append((f"x{i}", "descending"))
            order.append((f"v{i}", "ascending" if k.ascending else "descending"))
        ranked = sample.take(pc.sort_indices(sample, sort_keys=order))
        n = ranked.num_rows
        picks = [min(n - 1, (n * j) // self.parallelism) for j in range(1, self.parallelism)]
        return ranked.take(pa.array(picks, pa.int64())).combine_chunks().to_batches()


class RangeAssignOperator(Operator):
    """Rows (input 0) get the number of their key range once the boundaries (input 1) are in;
    rows that come before are held (batch mode: the sample has read the whole input by
    then)."""

    name = "RangeAssign"
    state_fields = ("boundaries", "ready", "waiting")

    holds_until_end = True  # (see Operator.holds_until_end)

    def __init__(self, keys: tuple[SortKey, ...], schema: pa.Schema) -> None:
        self.keys = keys
        self.schema = schema
        self.boundaries: list[pa.RecordBatch] = []
        self.ready: pa.Table | None = None
        self.waiting: list[pa.RecordBatch] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if input_index == 1:
            self.boundaries.append(data_part(batch))
            return ()
        if self.ready is None:
            self.waiting.append(data_part(batch))
            return ()
        return self._assign(data_part(batch))

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if input_index != 1:
            return ()
        self.ready = pa.Table.from_batches(self.boundaries) if self.boundaries else \
            pa.table({})
        out: list[pa.RecordBatch] = []
        for b in self.waiting:
            out += self._assign(b)
        self.waiting = []
        return out

    def _assign(self, data: pa.RecordBatch) -> list[pa.RecordBatch]:
        if data.num_rows == 0:
            return []
        bounds = self.ready
        if bounds is None or bounds.num_rows == 0:
            part = np.zeros(data.num_rows, dtype=np.int32)
        else:
            rows, order = key_table(data, self.keys)
            # Boundaries before rows on ties: a row equal to a boundary goes after it.
            marker = "$row"
            both = pa.concat_tables([
                bounds.cast(rows.schema).append_column(
                    marker, pa.array(np.zeros(bounds.num_rows, dtype=np.int8))),
                rows.append_column(marker, pa.array(np.ones(rows.num_rows, dtype=np.int8)))])
            idx = pc.sort_indices(both, sort_keys=[*order, (marker, "ascending")]).to_numpy()
            is_row = both.column(marker).to_numpy()[idx].astype(bool)
            ahead = np.cumsum(~is_row)
            part = np.empty(rows.num_rows, dtype=np.int32)
            part[idx[is_row] - bounds.num_rows] = ahead[is_row]
        return [pa.RecordBatch.from_arrays([*data.columns, pa.array(part)],
                                           names=[*data.schema.names, PART])]


class OrderedConcatOperator(Operator):
    """The sorted ranges, one per input channel, emitted in channel (range) order; the range
    number column is dropped."""

    name = "OrderedConcat"
    state_fields = ("ended", "held", "next")

    holds_until_end = True  # (see Operator.holds_until_end)

    def __init__(self, width: int) -> None:
        self.width = width
        self.next = 0
        self.held: dict[int, list[pa.RecordBatch]] = {}
        self.ended: set[int] = set()

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch).select(list(range(self.width)))
        if input_index == self.next:
            return (data,)
        self.held.setdefault(input_index, []).append(data)
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.ended.add(input_index)
        out: list[pa.RecordBatch] = []
        while self.next in self.ended:
            self.next += 1
            out += self.held.pop(self.next, [])
        return out
