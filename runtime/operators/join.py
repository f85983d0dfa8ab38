"""JoinOperator: inner and left equi-joins, as a streaming join or (batch mode) at end of input.

Matching is one Arrow hash join per incoming batch against the other side's state (key
columns plus row positions), then a vectorised residual-condition filter over the matched
pairs. In streaming mode a LEFT JOIN emits a null-padded row for an unmatched left row and
retracts it (-D) when its first match arrives.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from runtime.elements import DELETE, INSERT, data_part, with_rowkind
from runtime.evaluate import evaluate
from runtime.operators.base import Operator
from sqlengine.plan.expressions import Expr


class _Side:
    """One input's rows so far, with their evaluated join keys."""

    def __init__(self, schema: pa.Schema, n_keys: int) -> None:
        self.schema = schema
        self.key_schema = None
        self.batches: list[pa.RecordBatch] = []
        self.key_batches: list[pa.RecordBatch] = []
        self._rows: pa.Table | None = None
        self._keys: pa.Table | None = None
        self.n_keys = n_keys
        self.size = 0

    def add(self, batch: pa.RecordBatch, keys: pa.RecordBatch) -> None:
        self.batches.append(batch)
        self.key_batches.append(keys)
        self.size += batch.num_rows
        self._rows = self._keys = None

    def rows(self) -> pa.Table:
        if self._rows is None:
            self._rows = pa.Table.from_batches(self.batches, self.schema)
        return self._rows

    def keys(self) -> pa.Table | None:
        if not self.key_batches:
            return None
        if self._keys is None:
            self._keys = pa.Table.from_batches(self.key_batches)
        return self._keys


class JoinOperator(Operator):
    name = "Join"

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, emit: str) -> None:
        self.kind = kind
        self.key_exprs = (left_keys, right_keys)
        self.condition = condition
        self.schema = schema
        self.streaming = emit == "stream"
        self.updating = self.streaming and kind == "left"
        self.sides = (_Side(left_schema, len(left_keys)), _Side(right_schema, len(right_keys)))
        self.match_counts = np.zeros(0, dtype=np.int64)  # per left row (LEFT JOIN)
        self.ended = [False, False]

    def _key_batch(self, batch: pa.RecordBatch, side: int, offset: int) -> pa.RecordBatch:
        arrays = [evaluate(k, batch) for k in self.key_exprs[side]]
        names = [f"k{i}" for i in range(len(arrays))]
        pos = pa.array(np.arange(offset, offset + batch.num_rows, dtype=np.int64))
        return pa.RecordBatch.from_arrays([*arrays, pos], names=[*names, f"$p{side}"])

    def _match(self, left_keys: pa.Table | pa.RecordBatch, right_keys: pa.Table | pa.RecordBatch
               ) -> tuple[np.ndarray, np.ndarray]:
        names = [f"k{i}" for i in range(len(self.key_exprs[0]))]
        lt = pa.table(left_keys) if isinstance(left_keys, pa.RecordBatch) else left_keys
        rt = pa.table(right_keys) if isinstance(right_keys, pa.RecordBatch) else right_keys
        # SQL equality: NULL keys never match.
        for n in names:
            lt = lt.filter(pc.is_valid(lt[n]))
            rt = rt.filter(pc.is_valid(rt[n]))
        if lt.num_rows == 0 or rt.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        joined = lt.join(rt, keys=names, join_type="inner", use_threads=False)
        li = joined["$p0"].to_numpy()
        ri = joined["$p1"].to_numpy()
        order = np.lexsort((ri, li))
        return li[order], ri[order]

    def _pairs(self, li: np.ndarray, ri: np.ndarray, left: pa.Table, right: pa.Table,
               left_offset: int = 0, right_offset: int = 0
               ) -> tuple[np.ndarray, np.ndarray, pa.Table]:
        # ``left``/``right`` hold the rows whose state positions start at the offsets.
        lt = left.take(pa.array(li - left_offset, pa.int64()))
        rt = right.take(pa.array(ri - right_offset, pa.int64()))
        table = pa.Table.from_arrays([*lt.columns, *rt.columns], schema=self.schema)
        if self.condition is not None and table.num_rows:
            batch = table.combine_chunks().to_batches()[0] if table.num_rows else None
            mask = pc.fill_null(evaluate(self.condition, batch), False)  # type: ignore[arg-type]
            keep = mask.to_numpy(zero_copy_only=False)
            return li[keep], ri[keep], table.filter(mask)
        return li, ri, table

    def _padded(self, left_rows: pa.Table) -> pa.Table:
        n = left_rows.num_rows
        right = [pa.nulls(n, f.type) for f in self.sides[1].schema]
        return pa.Table.from_arrays([*left_rows.columns, *right], schema=self.schema)

    # -- streaming -------------------------------------------------------------------------
    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        batch = data_part(batch)  # time attributes end at a regular join
        side = self.sides[input_index]
        keys = self._key_batch(batch, input_index, side.size)
        if not self.streaming:
            side.add(batch, keys)
            return ()
        other = self.sides[1 - input_index]
        out: list[pa.RecordBatch] = []
        other_keys = other.keys()
        one = pa.Table.from_batches([batch])
        if input_index == 0:
            start = side.size
            side.add(batch, keys)
            self.match_counts = np.concatenate(
                [self.match_counts, np.zeros(batch.num_rows, np.int64)])
            if other_keys is not None:
                li, _ri, joined = self._pairs(*self._match(keys, other_keys), one,
                                             other.rows(), left_offset=start)
                np.add.at(self.match_counts, li, 1)
                out += self._emit(joined, INSERT)
            if self.kind == "left":
                unmatched = np.nonzero(self.match_counts[start:] == 0)[0]
                if len(unmatched):
                    out += self._emit(self._padded(one.take(pa.array(unmatched))), INSERT)
        else:
            start = side.size
            side.add(batch, keys)
            left_keys = other.keys()
            if left_keys is not None:
                li, _ri, joined = self._pairs(*self._match(left_keys, keys), other.rows(),
                                             one, right_offset=start)
                if self.kind == "left" and len(li):
                    first = np.unique(li[self.match_counts[li] == 0])
                    if len(first):
                        retract = self._padded(other.rows().take(pa.array(first)))
                        out += self._emit(retract, DELETE)
                    np.add.at(self.match_counts, li, 1)
                out += self._emit(joined, INSERT)
        return out

    def _emit(self, table: pa.Table, kind: int) -> list[pa.RecordBatch]:
        if table.num_rows == 0:
            return []
        batch = table.combine_chunks().to_batches()[0]
        return [with_rowkind(batch, kind) if self.updating else batch]

    # -- batch -----------------------------------------------------------------------------
    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.ended[input_index] = True
        if self.streaming or not all(self.ended):
            return ()
        left, right = self.sides
        if left.size == 0:
            return ()
        lrows = left.rows()
        matched_left = np.zeros(left.size, dtype=bool)
        out: list[pa.RecordBatch] = []
        if right.size:
            li, _ri, joined = self._pairs(*self._match(left.keys(), right.keys()),  # type: ignore[arg-type]
                                         lrows, right.rows())
            matched_left[li] = True
            out += self._emit(joined, INSERT)
        if self.kind == "left":
            missing = np.nonzero(~matched_left)[0]
            if len(missing):
                out += self._emit(self._padded(lrows.take(pa.array(missing))), INSERT)
        return out

    def snapshot_state(self) -> Mapping[str, object]:
        return {"left_rows": self.sides[0].size, "right_rows": self.sides[1].size}
