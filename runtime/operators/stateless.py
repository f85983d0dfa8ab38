"""Stateless operators: Filter, Project (Calc), Union, Expand, ReplicateRows; each keeps the
row-kind column."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.runtime.elements import INSERT, has_rowkind, meta_columns, with_rowkind
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator


class FilterOperator(Operator):
    name = "Filter"
    state_fields = ()

    def __init__(self, predicate: Expr) -> None:
        self.predicate = predicate

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        mask = evaluate(self.predicate, batch)
        # SQL keeps a row only when the predicate is TRUE (NULL drops it).
        out = batch.filter(pc.fill_null(mask, False))
        return (out,) if out.num_rows else ()


class ProjectOperator(Operator):
    name = "Project"
    state_fields = ()

    def __init__(self, exprs: tuple[Expr, ...], schema: pa.Schema) -> None:
        self.exprs = exprs
        self.schema = schema

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        arrays = []
        for e, f in zip(self.exprs, self.schema):
            a = batch.column(e.index) if isinstance(e, ColumnRef) else evaluate(e, batch)
            if a.type != f.type:
                a = a.cast(f.type)
            arrays.append(a)
        names = list(self.schema.names)
        for name, col in meta_columns(batch):
            arrays.append(col)
            names.append(name)
        return (pa.RecordBatch.from_arrays(arrays, names=names),)


class UnionOperator(Operator):
    """UNION ALL: every input's batches pass through (renamed to the union's schema)."""

    name = "Union"
    state_fields = ()

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


class ReplicateRowsOperator(Operator):
    """Row ``(n, c...)`` -> ``n`` copies of ``(c...)``, its row kind with it."""

    name = "ReplicateRows"
    state_fields = ()

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


class StatementSetOperator(Operator):
    """Where a statement set's sinks meet: they emit nothing, so neither does it."""

    name = "StatementSet"
    state_fields = ()

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return ()


class ExpandOperator(Operator):
    """Each row once per projection (a grouping set each), row kinds kept."""

    name = "Expand"
    state_fields = ()

    def __init__(self, projections: tuple[tuple[Expr, ...], ...], schema: pa.Schema) -> None:
        self.projects = [ProjectOperator(p, schema) for p in projections]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return [out for p in self.projects for out in p.process_batch(batch)]
