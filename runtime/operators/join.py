"""JoinOperator: inner and left equi-joins, streaming (updating inputs allowed) or batch.

State is kept per side as distinct rows with a multiplicity, so retractions (-U/-D) cancel
what they retract. Each incoming batch is first reduced to its net change per distinct row
(one Arrow group-by), matched against the other side with one Arrow hash join on the keys
(NULL keys never match) plus the residual ON condition, and the joined change is emitted with
its sign (+I / -D). A LEFT JOIN also keeps, per left row, how many right rows match it: a
left row with no match is emitted null-padded, and that row is retracted (-D) when the first
match arrives, or re-emitted (+I) when the last match goes. With 'table.exec.state.ttl' rows
not written for that long are dropped from state (Flink's idle state retention).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import DELETE, INSERT, data_part, signs, with_rowkind
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator

M, K, T = "$m", "$k", "$t"  # multiplicity, match count (left side), write time


class Clock(Protocol):
    """What the join's state TTL reads the time from (the ``time`` module by default)."""

    def monotonic(self) -> float: ...


class JoinOperator(Operator):
    name = "Join"

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, emit: str, ttl_ms: int = 0,
                 updating: bool | None = None, clock: Clock = time,
                 build_side: int | None = None) -> None:
        self.kind = kind
        self.key_exprs = (left_keys, right_keys)
        self.condition = condition
        self.schemas = (left_schema, right_schema)
        self.schema = schema
        self.streaming = emit == "stream"
        self.updating = (self.streaming and kind == "left") if updating is None else updating
        self.ttl = ttl_ms / 1000.0
        self.clock = clock
        self.state: list[pa.Table | None] = [None, None]
        self.buffers: list[list[pa.RecordBatch]] = [[], []]  # batch mode
        self.ended = [False, False]
        # Batch mode: the side that ended first is the build side (one table); the other
        # side's rows probe it as they come, and are not kept.
        self.built: list[pa.Table | None] = [None, None]
        # The planner's choice (the broadcast or the smaller side): rows of the other side
        # wait for it even if their side ends first. None: whichever ends first.
        self.build_side = build_side
        self.left_matched: np.ndarray | None = None  # LEFT join built on the left side

    # -- matching --------------------------------------------------------------------------
    def _keys(self, table: pa.Table, side: int) -> pa.Table:
        batch = table.select(list(range(len(self.schemas[side])))).combine_chunks()
        rb = batch.to_batches()[0] if batch.num_rows else None
        cols = {}
        for i, k in enumerate(self.key_exprs[side]):
            cols[f"k{i}"] = evaluate(k, rb) if rb is not None else pa.array([], k.dtype)
        cols["$pos"] = pa.array(np.arange(table.num_rows, dtype=np.int64))
        return pa.table(cols)

    def _match(self, left: pa.Table, right: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """Row positions (left, right) of every pair that satisfies the ON condition."""
        if left.num_rows == 0 or right.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        lk, rk = self._keys(left, 0), self._keys(right, 1)
        names = [c for c in lk.column_names if c != "$pos"]
        for n in names:  # SQL equality: NULL keys never match
            lk = lk.filter(pc.is_valid(lk[n]))
            rk = rk.filter(pc.is_valid(rk[n]))
        if lk.num_rows == 0 or rk.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        joined = lk.join(rk, keys=names, join_type="inner", right_suffix="_r",
                         use_threads=False)
        li, ri = joined["$pos"].to_numpy(), joined["$pos_r"].to_numpy()
        if self.condition is not None and len(li):
            rows = self._rows(left.take(pa.array(li)), right.take(pa.array(ri)))
            keep = pc.fill_null(evaluate(self.condition, rows), False)
            mask = keep.to_numpy(zero_copy_only=False)
            li, ri = li[mask], ri[mask]
        order = np.lexsort((ri, li))
        return li[order], ri[order]

    def _rows(self, left: pa.Table, right: pa.Table) -> pa.RecordBatch:
        """Joined rows (left columns then right columns), by position."""
        nl, nr = len(self.schemas[0]), len(self.schemas[1])
        cols = [left.column(i).combine_chunks() for i in range(nl)]
        cols += [right.column(i).combine_chunks() for i in range(nr)]
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def _padded(self, left: pa.Table) -> pa.RecordBatch:
        nulls = pa.table([pa.nulls(left.num_rows, f.type) for f in self.schemas[1]],
                         schema=self.schemas[1])
        return self._rows(left, nulls)

    # -- streaming -------------------------------------------------------------------------
    def _delta(self, batch: pa.RecordBatch, side: int) -> pa.Table:
        """The batch's net change per distinct row, with its multiplicity."""
        data = data_part(batch)
        table = pa.Table.from_batches([data]).append_column(M, pa.array(signs(batch)))
        if not np.any(table[M].to_numpy() < 0):
            return table  # insert-only: no need to net anything out
        names = list(range(data.num_columns))
        cols = [data.schema.field(i).name for i in names]
        renamed = table.rename_columns([f"c{i}" for i in names] + [M])
        grouped = renamed.group_by([f"c{i}" for i in names], use_threads=False).aggregate(
            [(M, "sum")])
        grouped = grouped.filter(pc.not_equal(grouped[f"{M}_sum"], 0))
        out = grouped.select([f"c{i}" for i in names] + [f"{M}_sum"])
        return out.rename_columns([*cols, M]).cast(
            pa.schema([*self.schemas[side], pa.field(M, pa.int64())]))

    def _expire(self) -> None:
        if not self.ttl:
            return
        now = self.clock.monotonic()
        for side, table in enumerate(self.state):
            if table is not None and table.num_rows:
                self.state[side] = table.filter(pc.greater(table[T], now - self.ttl))

    def _store(self, side: int, delta: pa.Table, matches: np.ndarray | None) -> None:
        now = self.clock.monotonic() if self.ttl else 0.0
        delta = delta.append_column(T, pa.array(np.full(delta.num_rows, now)))
        if side == 0:
            delta = delta.append_column(K, pa.array(
                matches if matches is not None else np.zeros(delta.num_rows, np.int64)))
        old = self.state[side]
        table = delta if old is None else pa.concat_tables([old, delta.select(old.column_names)])
        if np.any(delta[M].to_numpy() < 0):
            table = self._compact(table, side)
        self.state[side] = table

    def _compact(self, table: pa.Table, side: int) -> pa.Table:
        width = len(self.schemas[side])
        names = [f"c{i}" for i in range(width)]
        extra = list(table.column_names[width:])
        renamed = table.rename_columns(names + extra)
        aggs = [(M, "sum"), (T, "max")] + ([(K, "max")] if side == 0 else [])
        grouped = renamed.group_by(names, use_threads=False).aggregate(aggs)
        grouped = grouped.filter(pc.greater(grouped[f"{M}_sum"], 0))
        cols = [grouped[n] for n in names] + [grouped[f"{M}_sum"], grouped[f"{T}_max"]]
        if side == 0:
            cols.append(grouped[f"{K}_max"])
        out = pa.Table.from_arrays(cols, names=[*self.schemas[side].names, M, T,
                                                *([K] if side == 0 else [])])
        return out.select(table.column_names)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if not self.streaming:
            if self.built[1 - input_index] is not None:
                return self._probe(pa.Table.from_batches([data_part(batch)]), input_index)
            self.buffers[input_index].append(data_part(batch))
            return ()
        self._expire()
        delta = self._delta(batch, input_index)
        if delta.num_rows == 0:
            return ()
        other = self.state[1 - input_index]
        out: list[pa.RecordBatch] = []
        if input_index == 0:
            matches = np.zeros(delta.num_rows, dtype=np.int64)
            if other is not None and other.num_rows:
                li, ri = self._match(delta, other)
                weight = delta[M].to_numpy()[li] * other[M].to_numpy()[ri]
                out += self._emit(self._rows(delta.take(pa.array(li)),
                                             other.take(pa.array(ri))), weight)
                np.add.at(matches, li, other[M].to_numpy()[ri])
            if self.kind == "left":
                alone = matches == 0
                if alone.any():
                    lonely = delta.filter(pa.array(alone))
                    out += self._emit(self._padded(lonely), lonely[M].to_numpy())
            self._store(0, delta, matches)
        else:
            if other is not None and other.num_rows:
                li, ri = self._match(other, delta)
                weight = other[M].to_numpy()[li] * delta[M].to_numpy()[ri]
                joined = self._emit(self._rows(other.take(pa.array(li)),
                                               delta.take(pa.array(ri))), weight)
                if self.kind == "left" and len(li):
                    before = other[K].to_numpy()
                    after = before.copy()
                    np.add.at(after, li, delta[M].to_numpy()[ri])
                    mult = other[M].to_numpy()
                    first = (before == 0) & (after > 0)
                    last = (before > 0) & (after == 0)
                    if first.any():  # the null-padded row goes before the joined one comes
                        out += self._emit(self._padded(other.filter(pa.array(first))),
                                          -mult[first])
                    out += joined
                    if last.any():
                        out += self._emit(self._padded(other.filter(pa.array(last))),
                                          mult[last])
                    self.state[0] = other.set_column(other.column_names.index(K), K,
                                                     pa.array(after))
                else:
                    out += joined
            self._store(1, delta, None)
        return out

    def _emit(self, rows: pa.RecordBatch, weight: np.ndarray) -> list[pa.RecordBatch]:
        """Each row ``|weight|`` times, as +I when positive and -D when negative."""
        if rows.num_rows == 0:
            return []
        weight = np.asarray(weight, dtype=np.int64)
        idx = np.repeat(np.arange(rows.num_rows), np.abs(weight))
        if len(idx) == 0:
            return []
        expanded = rows.take(pa.array(idx)) if len(idx) != rows.num_rows or \
            np.any(np.abs(weight) != 1) else rows
        kinds = np.where(np.repeat(weight, np.abs(weight)) > 0, INSERT, DELETE).astype(np.int8)
        if not self.updating:
            return [expanded]
        return [with_rowkind(expanded, kinds)]

    # -- batch -----------------------------------------------------------------------------
    def _probe(self, rows: pa.Table, side: int) -> list[pa.RecordBatch]:
        """Batch mode: rows of ``side`` against the other (ended, built) side."""
        build = self.built[1 - side]
        assert build is not None
        if rows.num_rows == 0:
            return []
        out: list[pa.RecordBatch] = []
        left, right = (rows, build) if side == 0 else (build, rows)
        li, ri = self._match(left, right)
        if len(li):
            out.append(self._rows(left.take(pa.array(li)), right.take(pa.array(ri))))
        if self.kind == "left":
            if side == 0:  # the left rows are complete here: pad the unmatched at once
                matched = np.zeros(rows.num_rows, dtype=bool)
                matched[li] = True
                if not matched.all():
                    out.append(self._padded(rows.filter(pa.array(~matched))))
            elif self.left_matched is not None:
                self.left_matched[li] = True
        return out

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.ended[input_index] = True
        if self.streaming:
            return ()
        out: list[pa.RecordBatch] = []
        nothing_built = self.built[0] is None and self.built[1] is None
        if nothing_built and self.build_side in (None, input_index):
            # The build side (the planner's, else the first to end) is complete; what the
            # other side buffered meanwhile probes it now, batch by batch.
            self.built[input_index] = pa.Table.from_batches(self.buffers[input_index],
                                                            self.schemas[input_index])
            self.buffers[input_index] = []
            if input_index == 0 and self.kind == "left":
                self.left_matched = np.zeros(self.built[0].num_rows, dtype=bool)
            other = 1 - input_index
            waiting, self.buffers[other] = self.buffers[other], []
            for b in waiting:
                out += self._probe(pa.Table.from_batches([b]), other)
        if all(self.ended) and self.left_matched is not None:
            # LEFT join built on the left: its rows no right row matched, null-padded.
            left = self.built[0]
            assert left is not None
            if not self.left_matched.all():
                out.append(self._padded(left.filter(pa.array(~self.left_matched))))
            self.left_matched = None
        if all(self.ended):
            self.built = [None, None]
        return out

    def snapshot_state(self) -> Mapping[str, object]:
        sizes = [0 if t is None else int(pc.sum(t[M]).as_py() or 0) for t in self.state]
        return {"left_rows": sizes[0], "right_rows": sizes[1]}

