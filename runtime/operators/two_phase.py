"""Two-phase aggregation (parallelism > 1): a local pre-aggregation chained before the shuffle
turns each batch into one partial row per group, so the exchange carries partials instead of
rows; in batch mode the global aggregation after the shuffle merges the partials of its keys
and finalizes them at the end of input. Both phases are Arrow group-bys (runtime/operators/
partials.py). (Streaming mode's global phase, and batch mode's when a Python aggregate
function's accumulators are to be merged, is a GroupAggregateOperator merging partials.)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import AggCall, ColumnRef, Expr
from sqlengine.plan.partials import partial_names
from sqlengine.runtime.elements import conformed, data_part
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import NotCheckpointable, Operator
from sqlengine.runtime.operators.partials import Partials
from sqlengine.runtime.operators.python_aggregate import PythonAggregate, group_bounds, is_python
from sqlengine.runtime.spill import (
    MAX_LEVEL,
    PartitionedSpill,
    SpillDirectory,
    SpillsToDisk,
    aggregate_partitions,
)


class LocalAggregateOperator(Operator):
    """Each batch pre-aggregated into one partial row per group (the layout of
    sqlengine/plan/partials.py): Arrow's hash aggregation folds the built-in aggregates'
    partials; a Python aggregate function's rows are accumulated into a fresh accumulator per
    group, pickled into its partial column p<j> (merged by the global phase's merge())."""

    name = "LocalAggregate"
    state_fields = ()

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...]) -> None:
        self.aggs = aggs
        self.python = {j: PythonAggregate(a) for j, a in enumerate(aggs) if is_python(a)}
        # The built-in aggregates' partials (numbered among themselves: renamed to their
        # aggregate's number j on the way out)
        builtin = [j for j in range(len(aggs)) if j not in self.python]
        self.partials = Partials(keys, tuple(aggs[j] for j in builtin))
        self.names = [*self.partials.key_names, *partial_names(aggs)]
        self.renamed = {c: f"{c[0]}{builtin[int(c[1:])]}" for c, _ in self.partials.specs}

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        table = pa.table(self.partials.row_columns(data, unscaled=not self.python))
        if not self.python:
            return self.partials.aggregate(table).to_batches()
        # One hash aggregation: the built-in partials and each group's row positions.
        table = table.append_column("$pos", pa.array(np.arange(data.num_rows,
                                                               dtype=np.int64)))
        specs = [*self.partials.specs, ("$pos", "list")]
        grouped = table.group_by(self.partials.key_names, use_threads=False).aggregate(specs)
        out = {k: grouped[k] for k in self.partials.key_names}
        for c, op in self.partials.specs:
            out[self.renamed[c]] = grouped[f"{c}_{op}"]
        flat, bounds = group_bounds(grouped["$pos_list"])
        groups = len(bounds) - 1
        for j, py in self.python.items():
            call = self.aggs[j]
            args = [evaluate(a, data) for a in call.args]
            rows, ends = flat, bounds
            if call.filter is not None:  # (the rows the FILTER keeps, in their groups)
                keep = pc.fill_null(evaluate(call.filter, data), False).to_numpy(
                    zero_copy_only=False)[flat]
                group_of = np.repeat(np.arange(groups), np.diff(bounds))
                rows = flat[keep]
                ends = np.r_[0, np.cumsum(np.bincount(group_of[keep], minlength=groups))]
            state = np.empty(groups, dtype=object)
            taken = pa.array(rows)
            py.update(state, np.arange(groups), [a.take(taken) for a in args], ends)
            out[f"p{j}"] = py.dump(state, np.diff(ends) > 0)
        return pa.table([out[n] for n in self.names], names=self.names).to_batches()


class GlobalAggregateOperator(SpillsToDisk, Operator):
    """Merges the partials of its keys and finalizes them at the end of input. Past the memory
    budget the partials go to partitions on disk by the hash of their keys instead, each
    merged by a GlobalAggregate of its own at the end (one level down, splitting again if
    still too large)."""

    name = "GlobalAggregate"
    state_fields = ("held", "pending")

    holds_until_end = True  # (see Operator.holds_until_end)

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...],
                 partial_schema: pa.Schema, schema: pa.Schema) -> None:
        self._args = (keys, aggs, partial_schema, schema)
        # The partials arrive keyed by position: k0, k1, ... then the partial columns.
        refs = tuple(ColumnRef(i, f"k{i}", partial_schema.field(i).type)
                     for i in range(len(keys)))
        self.n_keys = len(keys)
        self.partial_schema = partial_schema
        self.partials = Partials(refs, aggs)
        self.schema = schema
        self.pending: list[pa.Table] = []
        self.held = 0
        self.spilled: PartitionedSpill | None = None
        self.directory: SpillDirectory | None = None
        self.level = 0

    def snapshot_state(self) -> dict[str, object]:
        """Refused once partials went to disk: what is in memory is not all the state."""
        if self.spilled_bytes or self.spilled is not None:
            raise NotCheckpointable(self.name)
        return super().snapshot_state()

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = conformed(data_part(batch), self.partial_schema)
        if self.spilled is not None:
            self._write(data)
            return ()
        self.pending.append(pa.Table.from_batches([data]))
        self.held += data.nbytes
        if len(self.pending) > 64:
            self.pending = [self.partials.aggregate(pa.concat_tables(self.pending))]
            self.held = self.pending[0].nbytes
        return ()

    def state_bytes(self) -> int:
        return self.held

    def spill_refusal(self) -> str:
        if not self.n_keys:
            return " (an aggregation without GROUP BY has one group)"
        return f" (its rows split {MAX_LEVEL} times by key: one group is too large)"

    def spill(self, directory: str | None) -> bool:
        if not self.n_keys or self.level >= MAX_LEVEL:
            return False
        if self.spilled is None:
            self.directory = SpillDirectory(directory, "aggregate")
            self.spilled = PartitionedSpill(self.directory, self.partial_schema, self.level)
        waiting, self.pending, self.held = self.pending, [], 0
        for table in waiting:
            for batch in table.to_batches():
                self._write(conformed(batch, self.partial_schema))
        return True

    def _write(self, batch: pa.RecordBatch) -> None:
        assert self.spilled is not None
        self.spilled.write(batch, [batch.column(i) for i in range(self.n_keys)])
        self.spilled_bytes += batch.nbytes

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if self.spilled is not None:
            return self._spilled_groups()
        if not self.pending:
            return ()
        merged = self.partials.aggregate(pa.concat_tables(self.pending))
        self.pending, self.held = [], 0
        cols = self.partials.finalize(merged, {}, self.schema)
        return pa.Table.from_arrays(cols, schema=self.schema).to_batches(max_chunksize=65536)

    def _spilled_groups(self) -> Iterator[pa.RecordBatch]:
        spilled = self.spilled
        assert spilled is not None
        spilled.finish()
        try:
            yield from aggregate_partitions(
                self, spilled, self.directory.path if self.directory else None,
                lambda: GlobalAggregateOperator(*self._args))
        finally:
            self.close()
