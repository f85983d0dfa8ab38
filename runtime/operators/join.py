"""JoinOperator: inner, left, full, semi and anti joins, streaming (updating inputs allowed)
or batch; hash joins on the keys, nested loops (bounded in memory) without keys.

State is kept per side as distinct rows with a multiplicity, so retractions (-U/-D) cancel
what they retract. Each incoming batch is first reduced to its net change per distinct row
(one Arrow group-by), matched against the other side with one Arrow hash join on the keys
(NULL keys never match) plus the residual ON condition, and the joined change is emitted with
its sign (+I / -D). Each side whose rows may be output alone keeps, per row, how many rows
of the other side match it (the left side of LEFT, SEMI and ANTI joins, both of FULL): a row
with no match is emitted null-padded (outer joins) or as it is (anti), and retracted (-D)
when the first match arrives, or re-emitted (+I) when the last match goes; a semi join emits
a left row with its first match and retracts it with its last. With 'table.exec.state.ttl'
rows not written for that long are dropped from state (Flink's idle state retention).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError
from sqlengine.opaque_type import storage
from sqlengine.plan.expressions import ColumnRef, Expr, remap_columns
from sqlengine.runtime.elements import (
    DELETE,
    INSERT,
    MAX_WATERMARK,
    Watermark,
    conformed,
    data_part,
    millis,
    rows_only,
    signs,
    with_rowkind,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import (
    Clock,
    NotCheckpointable,
    NotRescalable,
    Operator,
)
from sqlengine.runtime.operators.build_index import BuildIndex, CodedIndex
from sqlengine.runtime.operators.count_walk import walk_counts
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.spill import (
    MAX_LEVEL,
    PARTITIONS,
    PartitionedSpill,
    SpillDirectory,
    SpillsToDisk,
    budget_of,
)
from sqlengine.runtime.state.key_groups import owned

M, K, T = "$m", "$k", "$t"  # multiplicity, match count, write time

# Nested loops evaluate the condition on at most this many pairs at a time, and refuse to
# evaluate more than MAX_PAIRS pairs in one call (a cross product that large is a mistake).
CHUNK_PAIRS = 1 << 21
# Batch mode: probing rows are matched against the built side in chunks of as many rows as it
# has, up to this many (one hash join per chunk, not per input batch: each join hashes the
# whole built side).
PROBE_ROWS = 1 << 20
SMALL_BUILD = 1 << 13
PROBE_BYTES = 64 << 20  # (probing rows waiting are not counted as state: bounded here)
MAX_PAIRS = 1 << 31


class JoinOperator(SpillsToDisk, Operator):
    name = "Join"
    # (not ``grace``: a join that spilled refuses a checkpoint; nor the cache of the built
    # sides' sizes)
    state_fields = ("buffers", "built", "built_keys", "ended", "held", "matched", "pending",
                    "state")

    @property
    def holds_until_end(self) -> bool:
        return not self.streaming

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, emit: str, ttl_ms: int = 0,
                 updating: bool | None = None, clock: Clock = time,
                 build_side: int | None = None, right_ttl_ms: int | None = None) -> None:
        # (what a spilled join's partitions are joined with: the same join)
        self._args = (kind, left_keys, right_keys, condition, left_schema, right_schema,
                      schema, emit, ttl_ms, updating, clock, build_side, right_ttl_ms)
        self.kind = kind
        self.key_exprs = (left_keys, right_keys)
        self.condition = condition
        self.schemas = (left_schema, right_schema)
        self.schema = schema
        self.streaming = emit == "stream"
        if updating is None:
            updating = self.streaming and kind in ("left", "full", "anti")
        self.updating = updating
        # The sides whose rows may be output without a match (their match counts are kept).
        self.tracked = (kind in ("left", "full", "semi", "anti"), kind == "full")
        # Each side's TTL (a STATE_TTL hint may give the right side its own); ``ttl``: any.
        self.ttls = (ttl_ms / 1000.0,
                     (ttl_ms if right_ttl_ms is None else right_ttl_ms) / 1000.0)
        self.ttl = max(self.ttls)
        self.clock = clock
        self.state: list[pa.Table | None] = [None, None]
        self.buffers: list[list[pa.RecordBatch]] = [[], []]  # batch mode
        self.ended = [False, False]
        # Batch mode: the side that ended first is the build side (one table); the other
        # side's rows probe it as they come, and are not kept.
        self.built: list[pa.Table | None] = [None, None]
        self._built_size: dict[int, tuple[pa.Table, int]] = {}
        # The planner's choice (the broadcast or the smaller side): rows of the other side
        # wait for it even if their side ends first. None: whichever ends first.
        self.build_side = build_side
        # Batch mode, per built side that is tracked: which of its rows found a match.
        self.matched: list[np.ndarray | None] = [None, None]
        self.built_keys: list[pa.Table | None] = [None, None]  # the built side's key table
        # Per built side: (the built table, its index or None) — made on its first probe,
        # not part of the state (a restored join makes it again).
        self._indexes: list[tuple[pa.Table, BuildIndex | CodedIndex | None] | None] = [None, None]
        self.pending: list[list[pa.RecordBatch]] = [[], []]  # probing rows not matched yet
        self.held = [0, 0]  # batch mode: bytes of ``buffers``
        # Batch mode past the memory budget (a grace hash join): both sides' rows go to
        # partitions on disk by the hash of their keys, joined a partition at a time at the
        # end; a partition still too large splits again one level down.
        self.grace: tuple[PartitionedSpill, PartitionedSpill] | None = None
        self.directory: SpillDirectory | None = None
        self.level = 0

    # -- matching --------------------------------------------------------------------------
    def _keys(self, table: pa.Table, side: int) -> pa.Table:
        exprs = self.key_exprs[side]
        cols: dict[str, pa.Array | pa.ChunkedArray] = {}
        if all(isinstance(k, ColumnRef) for k in exprs):  # (no copy of the other columns)
            for i, k in enumerate(exprs):
                cols[f"k{i}"] = table.column(k.index)
        else:  # (the columns the keys read, and the keys over just those)
            read = sorted({c for k in exprs for c in k.columns()})
            at = {c: i for i, c in enumerate(read)}
            batch = table.select(read).combine_chunks()
            rb = batch.to_batches()[0] if batch.num_rows else None
            for i, k in enumerate(exprs):
                cols[f"k{i}"] = evaluate(remap_columns(k, at), rb) if rb is not None \
                    else pa.array([], k.dtype)
        cols = {n: equality_key(c) for n, c in cols.items()}
        cols["$pos"] = pa.array(np.arange(table.num_rows, dtype=np.int64))
        return pa.table(cols)

    def _valid_keys(self, table: pa.Table, side: int) -> pa.Table:
        """The key columns and row positions of ``table``'s rows whose keys are all
        non-NULL (SQL equality: NULL keys never match)."""
        keys = self._keys(table, side)
        for n in keys.column_names[:-1]:
            if keys[n].null_count:  # (no copy of the keys when none is NULL)
                keys = keys.filter(pc.is_valid(keys[n]))
        return keys

    def _match(self, left: pa.Table, right: pa.Table, first_only: bool = False
               ) -> tuple[np.ndarray, np.ndarray]:
        """Row positions (left, right) of every pair that satisfies the ON condition; with
        ``first_only`` (a semi or anti join's probing left rows) at least one pair of each
        left row that has any, not all."""
        if left.num_rows == 0 or right.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        if not self.key_exprs[0]:
            return self._nested_loops(left, right)
        for built_side in (0, 1):
            if (left, right)[built_side] is self.built[built_side]:
                index = self._index(built_side)
                if index is not None:
                    probing = self._valid_keys((left, right)[1 - built_side], 1 - built_side)
                    if self.condition is not None:
                        return self._ordered(*self._conditioned_chunks(
                            left, right, index, probing, built_side, first_only),
                            right.num_rows)
                    pi, bi = index.probe(probing)
                    li, ri = (bi, pi) if built_side == 0 else (pi, bi)
                    return self._ordered(li, ri, right.num_rows)
        lk = self.built_keys[0] if left is self.built[0] and self.built_keys[0] is not None \
            else self._valid_keys(left, 0)
        rk = self.built_keys[1] if right is self.built[1] and self.built_keys[1] is not None \
            else self._valid_keys(right, 1)
        names = [c for c in lk.column_names if c != "$pos"]
        if lk.num_rows == 0 or rk.num_rows == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        # Acero hashes its right input: the smaller one.
        if lk.num_rows <= rk.num_rows:
            joined = rk.join(lk, keys=names, join_type="inner", right_suffix="_l",
                             use_threads=True)
            li, ri = joined["$pos_l"].to_numpy(), joined["$pos"].to_numpy()
        else:
            joined = lk.join(rk, keys=names, join_type="inner", right_suffix="_r",
                             use_threads=True)
            li, ri = joined["$pos"].to_numpy(), joined["$pos_r"].to_numpy()
        return self._ordered(*self._conditioned(left, right, li, ri), right.num_rows)

    def _conditioned_chunks(self, left: pa.Table, right: pa.Table,
                            index: BuildIndex | CodedIndex,
                            probing: pa.Table, built_side: int, first_only: bool
                            ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of equal keys that satisfy the residual condition, found for slices of
        the probing rows of at most CHUNK_PAIRS candidate pairs each: a key shared by many
        rows of both sides (10 keys over 40,000 rows, 160 million pairs) no longer
        materialises all its pairs at once. With ``first_only`` each probing row keeps one
        pair."""
        counts = index.counts(probing)
        ends = np.flatnonzero(np.diff(np.cumsum(counts) // CHUNK_PAIRS)) + 1
        lis, ris = [], []
        for lo, hi in zip(np.concatenate(([0], ends)), np.append(ends, len(counts))):
            if hi <= lo:
                continue
            pi, bi = index.probe(probing.slice(int(lo), int(hi - lo)))
            li, ri = (bi, pi) if built_side == 0 else (pi, bi)
            li, ri = self._conditioned(left, right, li, ri)
            if first_only and len(li):
                li, first = np.unique(li, return_index=True)
                ri = ri[first]
            lis.append(li)
            ris.append(ri)
        if not lis:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate(lis), np.concatenate(ris)

    def _index(self, side: int) -> BuildIndex | CodedIndex | None:
        """The index of built side ``side``'s keys (made once; None: its keys need Acero)."""
        built = self.built[side]
        cached = self._indexes[side]
        if cached is None or cached[0] is not built:
            keys = self.built_keys[side]
            index: BuildIndex | CodedIndex | None = None
            if keys is not None and built is not None:
                index = BuildIndex.build(keys)
                if index is None and self.condition is not None:
                    index = CodedIndex.build(keys)  # (pairs found a slice at a time)
            cached = self._indexes[side] = (built, index)  # type: ignore[assignment]
        return cached[1]  # type: ignore[index]

    def _conditioned(self, left: pa.Table, right: pa.Table, li: np.ndarray, ri: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs of equal keys that also satisfy the rest of the ON condition."""
        if self.condition is not None and len(li):
            rows = self._pair_rows(left.take(pa.array(li)), right.take(pa.array(ri)))
            keep = pc.fill_null(evaluate(self.condition, rows), False)
            mask = keep.to_numpy(zero_copy_only=False)
            li, ri = li[mask], ri[mask]
        return li, ri

    @staticmethod
    def _ordered(li: np.ndarray, ri: np.ndarray, right_rows: int
                 ) -> tuple[np.ndarray, np.ndarray]:
        """The pairs in (left, right) order, whatever order they were found in (Acero's
        threads, or a built left side's index): one key per pair, sorted only if it is not
        already."""
        pair = li.astype(np.int64) * right_rows + ri
        if len(pair) > 1 and not (pair[1:] > pair[:-1]).all():
            order = np.argsort(pair)
            return li[order], ri[order]
        return li, ri

    def _nested_loops(self, left: pa.Table, right: pa.Table) -> tuple[np.ndarray, np.ndarray]:
        """Every pair (a cross product) that satisfies the condition, a slice of the left
        rows at a time so that memory stays bounded."""
        nl, nr = left.num_rows, right.num_rows
        if self.condition is None:
            if nl * nr > MAX_PAIRS:
                msg = (f"a join without an equality condition would produce {nl:,} x {nr:,} "
                       "rows; add a join condition")
                raise ExecutionError(msg)
            return np.repeat(np.arange(nl), nr), np.tile(np.arange(nr), nl)
        if nl * nr > MAX_PAIRS:
            msg = (f"a join without an equality condition would compare {nl:,} x {nr:,} "
                   "pairs of rows; add an equality between the two sides")
            raise ExecutionError(msg)
        step = max(1, CHUNK_PAIRS // nr)
        lis, ris = [], []
        for start in range(0, nl, step):
            n = min(step, nl - start)
            li = np.repeat(np.arange(start, start + n), nr)
            ri = np.tile(np.arange(nr), n)
            rows = self._pair_rows(left.take(pa.array(li)), right.take(pa.array(ri)))
            mask = pc.fill_null(evaluate(self.condition, rows), False).to_numpy(
                zero_copy_only=False)
            lis.append(li[mask])
            ris.append(ri[mask])
        return np.concatenate(lis), np.concatenate(ris)

    def _pair_rows(self, left: pa.Table, right: pa.Table) -> pa.RecordBatch:
        """Left columns then right columns, by position (what the condition reads)."""
        nl, nr = len(self.schemas[0]), len(self.schemas[1])
        cols = [left.column(i).combine_chunks() for i in range(nl)]
        cols += [right.column(i).combine_chunks() for i in range(nr)]
        names = [*self.schemas[0].names, *self.schemas[1].names]
        return pa.RecordBatch.from_arrays(cols, names=names)

    def _rows(self, left: pa.Table, right: pa.Table) -> pa.RecordBatch:
        """Output rows: joined (left then right columns), or the left rows alone for semi
        and anti joins."""
        nl, nr = len(self.schemas[0]), len(self.schemas[1])
        if not self.schema.names:
            return rows_only(left.num_rows)
        cols = [left.column(i).combine_chunks() for i in range(nl)]
        if self.kind not in ("semi", "anti"):
            cols += [right.column(i).combine_chunks() for i in range(nr)]
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def _alone(self, rows: pa.Table, side: int) -> pa.RecordBatch:
        """Rows of ``side`` output without a partner: null-padded, or as they are."""
        if self.kind in ("semi", "anti"):
            return self._rows(rows, rows)
        other = self.schemas[1 - side]
        nulls = pa.table([pa.nulls(rows.num_rows, f.type) for f in other], schema=other) \
            if other.names else pa.Table.from_batches([rows_only(rows.num_rows)])
        return self._rows(rows, nulls) if side == 0 else self._rows(nulls, rows)

    def _padded(self, left: pa.Table) -> pa.RecordBatch:
        return self._alone(left, 0)

    # -- streaming -------------------------------------------------------------------------
    def _delta(self, batch: pa.RecordBatch, side: int) -> pa.Table:
        """The batch's net change per distinct row, with its multiplicity."""
        data = data_part(batch)
        table = pa.Table.from_batches([data]).append_column(M, pa.array(signs(batch)))
        if not np.any(table[M].to_numpy() < 0):
            return table  # insert-only: no need to net anything out
        names = list(range(data.num_columns))
        cols = [data.schema.field(i).name for i in names]
        # (netted per distinct row by ids, which take ROW / ARRAY / MAP values too, where
        # Arrow's group_by takes no nested key)
        ids = dense_ids(list(data.columns), data.num_rows)
        distinct, first = np.unique(ids, return_index=True)
        sums = np.bincount(ids, weights=table[M].to_numpy(),
                           minlength=int(distinct[-1]) + 1 if len(distinct) else 0)
        net = pa.array(sums[distinct].astype(np.int64))
        grouped = pa.Table.from_batches([data.take(pa.array(first))]).rename_columns(
            [f"c{i}" for i in names]).append_column(f"{M}_sum", net)
        grouped = self._without_stray_retractions(table, grouped, side)
        grouped = grouped.filter(pc.not_equal(grouped[f"{M}_sum"], 0))
        out = grouped.select([f"c{i}" for i in names] + [f"{M}_sum"])
        return out.rename_columns([*cols, M]).cast(
            pa.schema([*self.schemas[side], pa.field(M, pa.int64())]))

    def _without_stray_retractions(self, table: pa.Table, grouped: pa.Table, side: int
                                   ) -> pa.Table:
        """As Flink's join state: a retraction of a row the state does not hold is not
        kept (the state keeps no count below 0), even when the same row comes again later
        in the batch (a changelog read from its middle: the update of a row never inserted).
        ``grouped`` nets each distinct row of ``table`` (the batch, in arrival order);
        where a row's running count would go below 0 from what the state holds, its net is
        raised by what the state would not have taken."""
        width = table.num_columns - 1
        n = table.num_rows
        ids = dense_ids([table.column(i).combine_chunks() for i in range(width)], n)
        sign = table[M].to_numpy()
        walk = walk_counts(ids, sign)  # (each distinct row's running count from 0)
        order, first_of, low = walk.order, walk.first_of, walk.low
        s = sign[order]
        dips = low < 0
        if not dips.any():
            return grouped
        # (the lowest running count of each distinct row that dips and comes back up: one
        # only retracted is kept from going below 0 by the state's compaction; and what the
        # state holds of those)
        starts = np.flatnonzero(first_of)
        lowest = np.minimum.reduceat(np.where(dips, low, 0), starts)
        dipping = np.flatnonzero((lowest < 0) & (np.add.reduceat(s, starts) > lowest))
        if not len(dipping):
            return grouped
        rows = table.take(pa.array(order[np.flatnonzero(first_of)][dipping]))
        held = self._held_counts(rows, side)
        raise_by = np.maximum(0, -(held + lowest[dipping]))
        # (line the raises up with ``grouped``'s rows: by ids over both tables' columns)
        key = [f"c{i}" for i in range(width)]
        both = [pa.concat_arrays([grouped[k].combine_chunks(),
                                  rows.column(i).combine_chunks().cast(grouped[k].type)])
                for i, k in enumerate(key)]
        gid = dense_ids(both, grouped.num_rows + len(rows))
        extra = np.zeros(int(gid.max()) + 1, dtype=np.int64)
        extra[gid[grouped.num_rows:]] = raise_by
        sums = grouped[f"{M}_sum"].to_numpy() + extra[gid[:grouped.num_rows]]
        return grouped.set_column(grouped.schema.get_field_index(f"{M}_sum"), f"{M}_sum",
                                  pa.array(sums))

    def _held_counts(self, rows: pa.Table, side: int) -> np.ndarray:
        """How many copies of each of ``rows`` (data columns, distinct) the state holds."""
        state = self.state[side]
        width = len(self.schemas[side])
        if state is None or not state.num_rows:
            return np.zeros(rows.num_rows, dtype=np.int64)
        cols = [pa.concat_arrays([rows.column(i).combine_chunks().cast(state.schema.field(i)
                                                                       .type),
                                  state.column(i).combine_chunks()]) for i in range(width)]
        ids = dense_ids(cols, rows.num_rows + state.num_rows)
        held = np.zeros(int(ids.max()) + 1, dtype=np.int64)
        np.add.at(held, ids[rows.num_rows:], state[M].to_numpy())
        return held[ids[:rows.num_rows]]

    def _expire(self) -> None:
        if not self.ttl:
            return
        now = self.clock.monotonic()
        for side, table in enumerate(self.state):
            if table is not None and table.num_rows and self.ttls[side]:
                self.state[side] = table.filter(pc.greater(table[T], now - self.ttls[side]))

    def _store(self, side: int, delta: pa.Table, matches: np.ndarray) -> None:
        # Each row's write time only with a TTL, its match count only on a side whose rows
        # may be output alone (16 bytes a row of state otherwise).
        if self.ttl:
            delta = delta.append_column(T, pa.array(np.full(delta.num_rows,
                                                            self.clock.monotonic())))
        if self.tracked[side]:
            delta = delta.append_column(K, pa.array(matches))
        old = self.state[side]
        # (by position: a join's columns may share a name)
        table = delta if old is None else pa.concat_tables(
            [old, delta.select(list(range(old.num_columns)))])
        if np.any(delta[M].to_numpy() < 0):
            table = self._compact(table, side)
        self.state[side] = table

    def _compact(self, table: pa.Table, side: int) -> pa.Table:
        """The state netted per distinct row (by ids, which take ROW / ARRAY / MAP values
        too, where Arrow's group_by takes no nested key): multiplicities summed, the other
        bookkeeping columns at their largest; rows netted to nothing dropped."""
        width = len(self.schemas[side])
        ids = dense_ids([table.column(i).combine_chunks() for i in range(width)],
                        table.num_rows)
        distinct, first = np.unique(ids, return_index=True)
        size = int(distinct[-1]) + 1 if len(distinct) else 0
        kept = table.take(pa.array(first))
        cols = [kept.column(i) for i in range(width)]
        for c in table.column_names[width:]:
            values = table[c].to_numpy()
            if c == M:
                net = np.bincount(ids, weights=values, minlength=size).astype(np.int64)
            else:
                net = np.full(size, values.min() if len(values) else 0, dtype=values.dtype)
                np.maximum.at(net, ids, values)
            cols.append(pa.array(net[distinct], table.schema.field(c).type))
        # (by position, in the state's order and names: a join's columns may share a name)
        out = pa.Table.from_arrays(cols, names=table.column_names)
        return out.filter(pc.greater(out[M], 0))

    # In an iteration's step (runtime/operators/iterate.py) probing rows are matched as they
    # come: a round ends when its rows have gone through, none may wait for more.
    eager = False

    # State rows that can no longer match anything to come (set by the factory, see JoinSpec
    # .evict): (side, column, offset): rows of ``side`` whose column < watermark + offset.
    evict: tuple[tuple[int, int, int], ...] = ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if self.streaming and wm.timestamp != MAX_WATERMARK.timestamp:
            for side, column, offset in self.evict:
                table = self.state[side]
                if table is None or not table.num_rows:
                    continue
                times = table.column(column).combine_chunks()
                keep = millis(times) >= wm.timestamp + offset
                if times.null_count:  # (a NULL time meets no row: the condition is not TRUE)
                    keep &= times.is_valid().to_numpy(zero_copy_only=False)
                if not keep.all():
                    self.state[side] = table.filter(pa.array(keep))
        return ()

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if not self.streaming:
            if self.grace is not None:
                self._to_partitions(data_part(batch), input_index)
                return ()
            if self.built[1 - input_index] is not None:
                return self._pend(data_part(batch), input_index)
            self.buffers[input_index].append(data_part(batch))
            self.held[input_index] += batch.nbytes
            return ()
        self._expire()
        side, other_side = input_index, 1 - input_index
        delta = self._delta(batch, side)
        if delta.num_rows == 0:
            return ()
        other = self.state[other_side]
        out: list[pa.RecordBatch] = []
        matches = np.zeros(delta.num_rows, dtype=np.int64)
        if other is not None and other.num_rows:
            if side == 0:
                di, oi = self._match(delta, other)
            else:
                oi, di = self._match(other, delta)
            d_mult, o_mult = delta[M].to_numpy(), other[M].to_numpy()
            np.add.at(matches, di, o_mult[oi])
            joined: list[pa.RecordBatch] = []
            if self.kind in ("inner", "left", "full"):
                pairs = (delta.take(pa.array(di)), other.take(pa.array(oi)))
                rows = self._rows(*pairs) if side == 0 else self._rows(*reversed(pairs))
                joined = self._emit(rows, d_mult[di] * o_mult[oi])
            if self.tracked[other_side] and len(oi):
                # The other side's rows whose first match arrives or last match goes.
                before = other[K].to_numpy()
                after = before.copy()
                np.add.at(after, oi, d_mult[di])
                first = (before == 0) & (after > 0)
                last = (before > 0) & (after == 0)
                out += self._flip(other, first, other_side, appears=False)
                out += joined
                out += self._flip(other, last, other_side, appears=True)
                self.state[other_side] = other.set_column(other.column_names.index(K), K,
                                                          pa.array(after))
            else:
                out += joined
        if self.tracked[side]:
            mult = delta[M].to_numpy()
            shown = matches > 0 if self.kind == "semi" else matches == 0
            if shown.any():
                out += self._emit(self._alone(delta.filter(pa.array(shown)), side), mult[shown])
        self._store(side, delta, matches)
        return out

    def _flip(self, table: pa.Table, rows: np.ndarray, side: int, appears: bool
              ) -> list[pa.RecordBatch]:
        """Emit (or retract) the rows of a tracked side that became alone (or matched):
        their padded / anti rows appear when alone, a semi join's rows when matched."""
        if not rows.any():
            return []
        if self.kind == "semi":
            appears = not appears
        mult = table[M].to_numpy()[rows]
        return self._emit(self._alone(table.filter(pa.array(rows)), side),
                          mult if appears else -mult)

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
    def _pend(self, batch: pa.RecordBatch | None, side: int) -> list[pa.RecordBatch]:
        """Collect probing rows; match them a chunk at a time (all of them at ``None``)."""
        if batch is not None and batch.num_rows:
            self.pending[side].append(batch)
        rows = sum(b.num_rows for b in self.pending[side])
        built = self.built[1 - side]
        # A built side with an index (integer-like keys) is probed as rows come. Otherwise each
        # match hashes the built side anew (Acero): probing rows wait until they are as many
        # as its rows (at most PROBE_ROWS), so hashing it costs no more than the probing; a
        # built side of up to a batch's rows is probed as rows come.
        enough = min(PROBE_ROWS, built.num_rows) \
            if built is not None and built.num_rows > SMALL_BUILD and not self.eager and \
            self._index(1 - side) is None else 0
        if not rows or (batch is not None and rows < enough and
                        rows * self._row_bytes(side) < PROBE_BYTES):
            return []
        waiting, self.pending[side] = self.pending[side], []
        return self._probe(_table(waiting, self.schemas[side]).combine_chunks(), side)

    def _row_bytes(self, side: int) -> float:
        """Bytes per row of the first waiting batch (what the waiting rows take, roughly)."""
        first = self.pending[side][0]
        return first.nbytes / max(first.num_rows, 1)

    def _probe(self, rows: pa.Table, side: int) -> list[pa.RecordBatch]:
        """Batch mode: rows of ``side`` against the other (ended, built) side."""
        build = self.built[1 - side]
        assert build is not None
        if rows.num_rows == 0:
            return []
        out: list[pa.RecordBatch] = []
        left, right = (rows, build) if side == 0 else (build, rows)
        # (a semi or anti join's probing left rows: whether each has a match, not all)
        first_only = side == 0 and self.kind in ("semi", "anti")
        li, ri = self._match(left, right, first_only)
        if len(li) and self.kind in ("inner", "left", "full"):
            out.append(self._rows(left.take(pa.array(li)), right.take(pa.array(ri))))
        probe_i, build_i = (li, ri) if side == 0 else (ri, li)
        if self.tracked[side]:  # the probing rows are complete here
            matched = np.zeros(rows.num_rows, dtype=bool)
            matched[probe_i] = True
            shown = matched if self.kind == "semi" else ~matched
            if shown.any():
                out.append(self._alone(rows.filter(pa.array(shown)), side))
        built_matched = self.matched[1 - side]
        if built_matched is not None:
            built_matched[build_i] = True
        return out

    # -- batch, past the memory budget ------------------------------------------------------
    def state_bytes(self) -> int:
        size = sum(t.nbytes for t in self.state if t is not None) + sum(self.held)
        return size + sum(self._built_bytes(side) for side in (0, 1))

    def _built_bytes(self, side: int) -> int:
        """Bytes of a built side (measured once: it does not change, and measuring walks
        every buffer of every chunk)."""
        built = self.built[side]
        if built is None:
            return 0
        known = self._built_size.get(side)
        if known is None or known[0] is not built:
            known = self._built_size[side] = (built, built.nbytes)
        return known[1]

    def spill_refusal(self) -> str:
        if self.streaming:
            return " (a streaming join keeps both sides)"
        if not self.key_exprs[0]:
            return " (a join without an equality condition cannot be split by key)"
        if self.level >= MAX_LEVEL:
            return f" (its rows split {MAX_LEVEL} times by key: one key holds too many rows)"
        return " (its build side is complete and in memory)"

    def spill(self, directory: str | None) -> bool:
        if self.streaming or not self.key_exprs[0] or self.grace is not None or \
                self.level >= MAX_LEVEL or any(b is not None for b in self.built):
            return False
        self.directory = SpillDirectory(directory, "join")
        self.grace = (PartitionedSpill(self.directory, self.schemas[0], self.level),
                      PartitionedSpill(self.directory, self.schemas[1], self.level))
        for side in (0, 1):
            waiting, self.buffers[side] = self.buffers[side], []
            self.held[side] = 0
            for b in waiting:
                self._to_partitions(b, side)
        return True

    def _to_partitions(self, batch: pa.RecordBatch, side: int) -> None:
        assert self.grace is not None
        batch = conformed(batch, self.schemas[side])
        keys = [evaluate(k, batch) for k in self.key_exprs[side]]
        self.grace[side].write(batch, keys)
        self.spilled_bytes += batch.nbytes

    def _grace_join(self) -> Iterator[pa.RecordBatch]:
        """Each partition of the two sides joined by a join of its own."""
        assert self.grace is not None
        for g in self.grace:
            g.finish()
        limit = budget_of(self)
        try:
            for p in range(PARTITIONS):
                sizes = (self.grace[0].bytes[p], self.grace[1].bytes[p])
                if not any(sizes):
                    continue
                sub = JoinOperator(*self._args)
                sub.level = self.level + 1
                if hasattr(self, "ctx"):
                    sub.open(self.ctx)
                build = self.build_side if self.build_side is not None else \
                    int(sizes[1] < sizes[0])
                for side in (build, 1 - build):
                    for batch in self.grace[side].partition(p):
                        yield from sub.process_batch(batch, side)
                        if limit and side == build and sub.state_bytes() > limit:
                            sub.spill(self.directory.path if self.directory else None)
                    yield from sub.end_input(side)
                self.spilled_bytes += sub.spilled_bytes
                sub.close()
        finally:
            self.close()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.ended[input_index] = True
        if self.streaming:
            return ()
        if self.grace is not None:
            return self._grace_join() if all(self.ended) else ()
        out: list[pa.RecordBatch] = []
        nothing_built = self.built[0] is None and self.built[1] is None
        if nothing_built and self.build_side in (None, input_index):
            # The build side (the planner's, else the first to end) is complete; what the
            # other side buffered meanwhile probes it now, batch by batch.
            # (one chunk: taking rows from a table of many chunks concatenates them first,
            # on every probe)
            built = _table(self.buffers[input_index], self.schemas[input_index]) \
                .combine_chunks()
            self.built[input_index] = built
            self.buffers[input_index] = []
            self.held[input_index] = 0
            if self.key_exprs[0]:
                self.built_keys[input_index] = self._valid_keys(built, input_index)
            if self.tracked[input_index]:
                self.matched[input_index] = np.zeros(built.num_rows, dtype=bool)
            other = 1 - input_index
            waiting, self.buffers[other] = self.buffers[other], []
            self.held[other] = 0
            for b in waiting:
                out += self._pend(b, other)
        elif self.built[1 - input_index] is not None:
            out += self._pend(None, input_index)  # the probing side ended: its last rows
        if all(self.ended):
            for side in (0, 1):
                if self.built[1 - side] is not None:
                    out += self._pend(None, side)
            # A tracked built side: its rows that matched (semi) or did not (the others).
            for side in (0, 1):
                matched, table = self.matched[side], self.built[side]
                if matched is None or table is None:
                    continue
                shown = matched if self.kind == "semi" else ~matched
                if shown.any():
                    out.append(self._alone(table.filter(pa.array(shown)), side))
            self.matched = [None, None]
            self.built = [None, None]
            self.built_keys = [None, None]
            self._indexes = [None, None]
        return out

    # -- checkpoints -----------------------------------------------------------------------
    def snapshot_state(self) -> dict[str, object]:
        """Refused once rows went to disk (a grace hash join, batch mode). Each state row's
        write time (the TTL's) is a reading of this process's monotonic clock, meaningless
        in another process: it is kept as the row's age instead."""
        if self.spilled_bytes or self.grace is not None:
            raise NotCheckpointable(self.name)
        state = super().snapshot_state()
        state["state"] = self._shift_times(self.state)
        return state

    def restore_state(self, state: Mapping[str, object]) -> None:
        super().restore_state(state)
        self.state = self._shift_times(self.state)

    def _shift_times(self, tables: list[pa.Table | None]) -> list[pa.Table | None]:
        """The state tables with each write time t replaced by now - t, now being this
        clock's: write times become ages, and ages write times again. (Time that passes
        while the job is down does not count towards the TTL.)"""
        if not self.ttl:
            return list(tables)  # (no TTL: every write time is 0)
        now = pa.scalar(self.clock.monotonic())
        return [None if table is None else
                table.set_column(table.column_names.index(T), T, pc.subtract(now, table[T]))
                for table in tables]

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism (a streaming equi-join) each subtask takes, from every old
        subtask's state, the rows of each side whose join key it now owns (the exchanges
        before it hash each side on its join keys)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        if not self.streaming or not self.key_exprs[0]:
            raise NotRescalable(self.name)
        for side in (0, 1):
            parts = [s["state"][side] for s in states  # type: ignore[index]
                     if s["state"][side] is not None]  # type: ignore[index]
            if not parts:
                self.state[side] = None
                continue
            table = pa.concat_tables(parts)
            keys = self._keys(table, side)
            mine = owned([keys[f"k{i}"].combine_chunks()
                          for i in range(len(self.key_exprs[side]))], subtask, parallelism)
            self.state[side] = table.filter(pa.array(mine))
        self.state = self._shift_times(self.state)  # (snapshots hold ages)
        # (the inputs end again when the restored sources do)

    def state_summary(self) -> Mapping[str, object]:
        sizes = [0 if t is None else int(pc.sum(t[M]).as_py() or 0) for t in self.state]
        return {"left_rows": sizes[0], "right_rows": sizes[1]}



def equality_key(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A join key column as SQL's ``=`` compares it: a floating -0.0 as 0.0 (they are equal;
    Arrow's hash join tells them apart by their bits) and NaN, equal to nothing, as NULL.
    Flink's batch joins do the same; its streaming joins compare the bits. A BITMAP by its
    canonical bytes."""
    if isinstance(column.type, pa.ExtensionType):
        return storage(column)
    if not pa.types.is_floating(column.type):
        return column
    column = pc.add(column, pa.scalar(0.0, column.type))
    if pc.any(pc.is_nan(column)).as_py():
        column = pc.if_else(pc.is_nan(column), pa.scalar(None, column.type), column)
    return column


def _table(batches: list[pa.RecordBatch], schema: pa.Schema) -> pa.Table:
    """The batches as one table of ``schema`` (an input may mark a column NOT NULL that the
    join's declared input leaves nullable, as window columns after a projection)."""
    if not schema.names:  # rows without columns keep their placeholder
        return pa.Table.from_batches([rows_only(sum(b.num_rows for b in batches))])
    return pa.Table.from_batches([conformed(b, schema) for b in batches], schema)
