"""UNNEST: each row once per element of its last column (an ARRAY or MAP), that column
replaced by the element's columns (a ROW's fields, a MAP's key and value, else the element),
then the element's 1-based position WITH ORDINALITY. Row kinds and row watermarks go with
the rows they come from. Vectorised over the list's offsets (one take per batch)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.runtime.elements import meta_columns
from sqlengine.runtime.kernels_nested import entries
from sqlengine.runtime.operators.base import Operator


class UnnestOperator(Operator):
    name = "Unnest"
    state_fields = ()

    def __init__(self, schema: pa.Schema, ordinality: bool, outer: bool) -> None:
        self.schema = schema
        self.ordinality = ordinality
        self.outer = outer

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        metas = meta_columns(batch)
        n_data = batch.num_columns - len(metas)
        container = batch.column(n_data - 1)
        parents, positions = entries(container)
        starts = np.cumsum(np.bincount(parents, minlength=batch.num_rows)) - \
            np.bincount(parents, minlength=batch.num_rows)
        ordinal = (np.arange(len(parents)) - starts[parents] + 1).astype(np.int32)
        child = container.values
        if pa.types.is_struct(child.type) and not pa.types.is_map(container.type) and \
                child.null_count:
            # (a NULL element of an ARRAY of ROWs gives no row, as Flink 2.3's UNNEST; a
            # NULL element of another ARRAY gives a row of NULL)
            kept = child.is_valid().to_numpy(zero_copy_only=False)[positions]
            parents, positions, ordinal = parents[kept], positions[kept], ordinal[kept]
        present = np.ones(len(parents), dtype=bool)
        if self.outer:
            # (a row without elements once, its element columns NULL)
            empty = np.flatnonzero(np.bincount(parents, minlength=batch.num_rows) == 0)
            if len(empty):
                order = np.argsort(np.concatenate([parents, empty]), kind="stable")
                parents = np.concatenate([parents, empty])[order]
                positions = np.concatenate([positions, np.zeros(len(empty), np.int64)])[order]
                ordinal = np.concatenate([ordinal, np.zeros(len(empty), np.int32)])[order]
                present = np.concatenate([present, np.zeros(len(empty), bool)])[order]
        if not len(parents):
            return ()
        # (the other columns only: taking the container too copied its whole list once per
        # element, memory growing with the square of a row's elements)
        keep = [i for i in range(batch.num_columns) if i != n_data - 1]
        rows = batch.select(keep).take(pa.array(parents))
        mask = None if present.all() else ~present
        elements = child.take(pa.array(positions, mask=mask)) if len(child) else \
            pa.nulls(len(parents), child.type)
        if pa.types.is_map(container.type):
            made = [pc.struct_field(elements, [0]), pc.struct_field(elements, [1])]
        elif pa.types.is_struct(elements.type):
            made = [pc.struct_field(elements, [i]) for i in range(elements.type.num_fields)]
        else:
            made = [elements]
        if self.ordinality:
            made.append(pa.array(ordinal, pa.int32(), mask=mask))
        data = [*rows.columns[:n_data - 1], *made]
        arrays = [a.cast(f.type) if a.type != f.type else a
                  for a, f in zip(data, self.schema)]
        meta_arrays = rows.columns[n_data - 1:]
        names = list(self.schema.names) + [name for name, _ in metas]
        return (pa.RecordBatch.from_arrays([*arrays, *meta_arrays], names=names),)
