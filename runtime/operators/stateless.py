"""Stateless operators: Filter, Project (Calc), Union, Expand, ReplicateRows; each keeps the
row-kind column."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import FailedRows
from sqlengine.plan.expressions import Call, Cast, ColumnRef, Expr
from sqlengine.runtime.elements import INSERT, has_rowkind, meta_columns, with_rowkind
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator, OperatorContext

ON_ERROR_KEY = "python.udf.on-error"


class Stateless(Operator):
    """An operator holding nothing between batches: no state to snapshot, none to measure
    against the memory budget (measured after every batch: in a loop of one-row rounds,
    ~10 % of the time went to finding nothing)."""

    state_fields = ()

    def state_bytes(self) -> int:
        return 0


class _Skipping(Stateless):
    """An operator that can drop the rows a Python function call fails on: with
    ``'python.udf.on-error' = 'skip'`` such a row is dropped whole (as Flink's error handling
    drops a record: no NULL stands in for the failed value) and counted in the
    ``udf_rows_skipped`` metric; the other rows of the batch are evaluated again (the
    functions are called twice for them, on this error path only)."""

    skip = False  # (operators built without a task context, as on Spark, fail)
    udf_rows_skipped = 0  # (a metric, not state: it counts from the last start or restore)

    def open(self, ctx: OperatorContext) -> None:
        super().open(ctx)
        self.skip = str(ctx.options.get(ON_ERROR_KEY, "fail")).lower() == "skip"

    def _skipping(self, batch: pa.RecordBatch,
                  fn: Callable[[pa.RecordBatch], tuple[pa.RecordBatch, ...]]
                  ) -> tuple[pa.RecordBatch, ...]:
        if not self.skip:
            return fn(batch)
        from sqlengine.runtime.kernels_python import skipping

        while True:
            try:
                with skipping():
                    return fn(batch)
            except FailedRows as e:
                keep = np.ones(batch.num_rows, dtype=bool)
                keep[e.rows] = False
                self.udf_rows_skipped += batch.num_rows - int(keep.sum())
                batch = batch.filter(pa.array(keep))
                if not batch.num_rows:
                    return ()

    def extra_metrics(self) -> dict[str, int]:
        return {"udf_rows_skipped": self.udf_rows_skipped} if self.udf_rows_skipped else {}


def calls_in(expr: Expr) -> set[Expr]:
    """The calls and casts in ``expr`` (what an evaluation memo holds)."""
    return {x for x in expr.walk() if isinstance(x, Call | Cast)}


class FilterOperator(_Skipping):
    name = "Filter"

    def __init__(self, predicate: Expr) -> None:
        self.predicate = predicate
        # Subexpressions of the predicate that the Project chained after it computes too
        # (see carry_into): their values for the rows kept are handed over, not recomputed.
        self.carry: dict[Expr, Expr] = {}
        self.carried: tuple[pa.RecordBatch, dict[Expr, pa.Array]] | None = None

    def offered_calls(self) -> dict[Expr, Expr]:
        """The calls it computes, each as the operator after it would write it."""
        return {x: x for x in calls_in(self.predicate)}

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return self._skipping(batch, self._filter)

    def _filter(self, batch: pa.RecordBatch) -> tuple[pa.RecordBatch, ...]:
        memo: dict[Expr, pa.Array] | None = {} if self.carry else None
        mask = evaluate(self.predicate, batch, memo)
        # SQL keeps a row only when the predicate is TRUE (NULL drops it).
        keep = pc.fill_null(mask, False) if mask.null_count else mask
        out = batch.filter(keep)
        if memo:
            self.carried = (out, carried_values(self.carry, memo, keep, batch.num_rows))
        return (out,) if out.num_rows else ()


def carried_values(carry: dict[Expr, Expr], memo: dict[Expr, pa.Array], keep: pa.Array,
                   rows: int) -> dict[Expr, pa.Array]:
    """The memo's values of the carried calls, for the rows ``keep`` keeps, keyed as the
    next operator writes them."""
    return {carry[e]: v.filter(keep) for e, v in memo.items()
            if e in carry and len(v) == rows}


class ProjectOperator(_Skipping):
    name = "Project"

    def __init__(self, exprs: tuple[Expr, ...], schema: pa.Schema) -> None:
        self.exprs = exprs
        self.schema = schema
        self.after: Operator | None = None  # (a Filter or Source handing values over)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return self._skipping(batch, self._project)

    def _project(self, batch: pa.RecordBatch) -> tuple[pa.RecordBatch, ...]:
        # The projections share their common parts (and what the Filter before computed).
        carried = self.after.carried if self.after is not None else None  # type: ignore[attr-defined]
        memo = dict(carried[1]) if carried is not None and carried[0] is batch else {}
        arrays = []
        for e, f in zip(self.exprs, self.schema):
            a = batch.column(e.index) if isinstance(e, ColumnRef) else evaluate(e, batch, memo)
            if a.type != f.type:
                a = a.cast(f.type)
            arrays.append(a)
        names = list(self.schema.names)
        for name, col in meta_columns(batch):
            arrays.append(col)
            names.append(name)
        return (pa.RecordBatch.from_arrays(arrays, names=names),)


def carry_into(producer: Operator, project: ProjectOperator) -> None:
    """Chain ``project`` after ``producer`` (a Filter, or a Source applying pushed filters):
    the calls both compute are computed once, by the producer, and handed over for the rows
    it keeps (Flink generates one Calc for a filter and a projection)."""
    try:
        wanted = set().union(*(calls_in(e) for e in project.exprs))
        shared = {own: out for own, out in producer.offered_calls().items()  # type: ignore[attr-defined]
                  if out in wanted}
    except TypeError:  # (a literal value that cannot be hashed: nothing is shared)
        return
    if shared:
        producer.carry = shared  # type: ignore[attr-defined]
        project.after = producer


class UnionOperator(Stateless):
    """UNION ALL: every input's batches pass through (renamed to the union's schema)."""

    name = "Union"

    def __init__(self, schema: pa.Schema, updating: bool) -> None:
        self.schema = schema
        self.updating = updating

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if self.updating and not has_rowkind(batch):
            batch = with_rowkind(batch, INSERT)
        metas = meta_columns(batch)
        names = list(self.schema.names) + [name for name, _ in metas]
        return (pa.RecordBatch.from_arrays(batch.columns, names=names),)


class ReplicateRowsOperator(Stateless):
    """Row ``(n, c...)`` -> ``n`` copies of ``(c...)``, its row kind with it."""

    name = "ReplicateRows"

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        counts = pc.fill_null(batch.column(0), 0).cast(pa.int64()).to_numpy(
            zero_copy_only=False)
        index = np.repeat(np.arange(batch.num_rows), np.maximum(counts, 0))
        if not len(index):
            return ()
        taken = batch.take(pa.array(index))
        arrays = taken.columns[1:]
        names = list(self.schema.names) + [name for name, _ in meta_columns(batch)]
        return (pa.RecordBatch.from_arrays(arrays, names=names),)


class StatementSetOperator(Stateless):
    """Where a statement set's sinks meet: they emit nothing, so neither does it."""

    name = "StatementSet"

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return ()


class ExpandOperator(Stateless):
    """Each row once per projection (a grouping set each), row kinds kept."""

    name = "Expand"

    def __init__(self, projections: tuple[tuple[Expr, ...], ...], schema: pa.Schema) -> None:
        self.projects = [ProjectOperator(p, schema) for p in projections]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return [out for p in self.projects for out in p.process_batch(batch)]
