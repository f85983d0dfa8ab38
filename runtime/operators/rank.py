"""Top-N and deduplication: ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) with a limit.

TopNOperator keeps, per partition, only the current first N rows; each batch re-ranks the
touched partitions' kept rows together with the new ones in one vectorised sort and emits the
difference (-D for rows that fell out, +I for rows that came in, -U/+U for rows whose number
changed when the number is read; a Top-1 replaces its row with -U/+U). Over an updating input
(a GROUP BY's changelog: Flink's RetractableTopNFunction) it keeps every live row of a touched
partition, as Flink does, since a retracted top row lets a lower one in: a retraction (-U/-D)
takes out the earliest live equal row, one that is not held is ignored, and an update comes
back as a new arrival (behind rows of equal keys). WindowTopNOperator
ranks a window's rows once, when the watermark closes the window, and emits insert-only rows.

Ties, as Flink 2.3 breaks them (checked with PyFlink): rows with equal ORDER BY keys rank in
arrival order (the earlier row first), except in deduplication keeping the last row
(ROW_NUMBER = 1 ordered by a time attribute DESC, also per window), where the later row
wins; deduplication by processing time goes by arrival alone. Keeping the first row by event
time is deduplicate.py's FirstRowOperator.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import cast_array
from sqlengine.errors import NotSupportedError
from sqlengine.plan.expressions import Expr
from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.elements import (
    DELETE,
    INSERT,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    Watermark,
    data_part,
    has_rowkind,
    signs,
    with_meta,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Clock, NotRescalable, Operator
from sqlengine.runtime.operators.count_walk import walk_counts
from sqlengine.runtime.operators.key_index import python_keys
from sqlengine.runtime.operators.partition_ttl import (
    KeepsPartitionTtl,
    PartitionTtl,
    compact,
    fit,
    worth_compacting,
)
from sqlengine.runtime.operators.sort import order_columns, sort_columns
from sqlengine.runtime.timers import TimerService
from sqlengine.runtime.value_codes import value_codes
from sqlengine.runtime.windows import fire_times

PID, SEQ, RN = "$pid", "$seq", "$rn"


def dense_ids(columns: list[pa.Array], n: int) -> np.ndarray:
    """One integer per distinct combination of values (NULL is a value), in first-seen order
    is not promised; equal combinations get equal ids."""
    if not columns:
        return np.zeros(n, dtype=np.int64)
    codes = []
    for col in columns:
        if T.is_nested(col.type):  # (ROW / ARRAY / MAP: whole values; NULL code -1 -> 0)
            codes.append(value_codes(col) + 1)
            continue
        enc = pc.dictionary_encode(col, null_encoding="encode")
        codes.append(enc.indices.to_numpy(zero_copy_only=False).astype(np.int64))
    if len(codes) == 1:
        return codes[0]
    # Mixed radix: one integer per combination, then made dense by a hash (no row sort).
    combined = codes[0]
    for code in codes[1:]:
        card = int(code.max()) + 1 if len(code) else 1
        top = int(combined.max()) if len(combined) else 0
        if top >= (1 << 62) // card:
            combined = _dense(combined)
            top = int(combined.max()) if len(combined) else 0
            if top >= (1 << 62) // card:  # (cannot happen with fewer than 2**31 rows)
                _, inverse = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
                return inverse.reshape(-1).astype(np.int64)
        combined = combined * card + code
    return _dense(combined)


def _dense(values: np.ndarray) -> np.ndarray:
    enc = pc.dictionary_encode(pa.array(values))
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)


def row_numbers(pids: np.ndarray, order: list[tuple[pa.Array, SortKey]], seq: np.ndarray,
                latest_first: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Sort rows by (partition, ORDER BY keys, arrival) and number them within partitions;
    rows of equal keys in arrival order, or the latest first with ``latest_first``.
    Returns the sorting permutation and the row number of each sorted row."""
    cols: dict[str, pa.Array] = {PID: pa.array(pids)}
    keys: list[tuple[str, str]] = [(PID, "ascending")]
    for i, (values, k) in enumerate(order):
        columns, sort_order = order_columns(i, values, k)
        cols.update(columns)
        keys += sort_order
    cols[SEQ] = pa.array(seq)
    keys.append((SEQ, "descending" if latest_first else "ascending"))
    perm = pc.sort_indices(pa.table(cols), sort_keys=keys).to_numpy()
    sorted_pids = pids[perm]
    n = len(perm)
    starts = np.flatnonzero(np.r_[True, sorted_pids[1:] != sorted_pids[:-1]]) if n else \
        np.zeros(0, dtype=np.int64)
    first = np.repeat(starts, np.diff(np.r_[starts, n]))
    return perm, np.arange(n) - first + 1


def partition_ids(partition: tuple[Expr, ...], data: pa.RecordBatch,
                  index: dict[tuple, int]) -> np.ndarray:
    """Each row's partition id, stable across batches: ``index`` maps the partition-key
    values to ids (one dict lookup per distinct key of the batch)."""
    cols = [evaluate(p, data) for p in partition]
    local = dense_ids(cols, data.num_rows)
    uniq, first = np.unique(local, return_index=True)
    keys = list(zip(*[python_keys(c.take(pa.array(first))) for c in cols])) if cols \
        else [()] * len(uniq)
    mapped = np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)
    lookup = np.zeros(int(uniq.max()) + 1 if len(uniq) else 0, dtype=np.int64)
    lookup[uniq] = mapped
    return lookup[local]


def rescale_partitions(partition: tuple[Expr, ...], old_ids: list[dict[tuple, int]],
                       subtask: int, parallelism: int
                       ) -> tuple[dict[tuple, int], list[np.ndarray]]:
    """A rescaled restore of partition ids (``partition_ids``' index) from every old subtask:
    the new index of the partitions this subtask now owns (by key group, as the exchange
    routes their keys) and, per old subtask, old id -> new id (-1: not this subtask's)."""
    from sqlengine.runtime.state.key_groups import owned  # (state imports this module)

    new: dict[tuple, int] = {}
    maps: list[np.ndarray] = []
    for ids in old_ids:
        if not ids:
            maps.append(np.zeros(0, dtype=np.int64))
            continue
        keys = list(ids)
        cols = [pa.array([k[i] for k in keys], type=p.dtype) for i, p in enumerate(partition)]
        mine = owned(cols, subtask, parallelism) if cols else np.full(len(keys), subtask == 0)
        mapping = np.full(max(ids.values()) + 1, -1, dtype=np.int64)
        for key, ok in zip(keys, mine.tolist()):  # (once per key, at restore only)
            if ok:
                mapping[ids[key]] = new.setdefault(key, len(new))
        maps.append(mapping)
    return new, maps


def remap_rows(table: pa.Table | None, mapping: np.ndarray) -> pa.Table | None:
    """The rows of ``table`` whose partition ($pid) maps to this subtask, with new ids."""
    if table is None or table.num_rows == 0:
        return None
    pids = mapping[table[PID].to_numpy()] if len(mapping) else \
        np.full(table.num_rows, -1, dtype=np.int64)
    keep = pids >= 0
    kept = table.filter(pa.array(keep))
    return kept.set_column(kept.schema.get_field_index(PID), PID, pa.array(pids[keep]))


class TopNOperator(KeepsPartitionTtl, Operator):
    """Top-N per partition; with ``keep`` Flink's deduplication keeping the last row
    ("LastRow": of equal times the later row) or, by processing time, the first ("FirstRow")."""

    name = "Rank"
    state_fields = ("buffer", "ids", "seq", "top", "rows")

    @property
    def holds_until_end(self) -> bool:
        return not self.streaming

    def __init__(self, partition: tuple[Expr, ...], order: tuple[SortKey, ...],
                 limit: int | None, schema: pa.Schema, emit: str, output_rank: bool,
                 keep: str = "", time_kind: str = "", retract: bool = False,
                 ttl_ms: int = 0, clock: Clock = time) -> None:
        # 'table.exec.state.ttl': a partition whose kept rows no row changed for the TTL (of
        # an updating input: that no row reached) is forgotten without a word
        # (partition_ttl.py).
        self.ttl = PartitionTtl(ttl_ms / 1000.0, clock) if ttl_ms else None
        self.partition = partition
        # Deduplication by processing time goes by arrival alone (Flink ignores the values).
        self.order = () if keep and time_kind == "PROCTIME" else order
        self.latest_first = keep == "LastRow"
        self.limit = limit
        self.schema = schema  # input columns + the row number
        self.streaming = emit == "changelog"
        self.output_rank = output_rank
        self.ids: dict[tuple, int] = {}
        self.top: pa.Table | None = None  # kept rows: data + $pid + $seq + $rn
        # Over an updating input: every live row (data + $pid + $seq), the top ones too.
        self.retract = retract
        self.rows: pa.Table | None = None
        self.seq = 0
        self.buffer: list[pa.RecordBatch] = []

    def _pids(self, data: pa.RecordBatch) -> np.ndarray:
        return partition_ids(self.partition, data, self.ids)

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes the kept rows of the partitions it now
        owns from every old subtask (sequence numbers stay ordered within a partition)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        if not self.streaming:
            raise NotRescalable(self.name)
        self.ids, maps = rescale_partitions(self.partition, [s["ids"] for s in states],  # type: ignore[misc]
                                            subtask, parallelism)
        parts = [t for s, m in zip(states, maps)
                 if (t := remap_rows(s["top"], m)) is not None]  # type: ignore[arg-type]
        self.top = pa.concat_tables(parts) if parts else None
        live = [t for s, m in zip(states, maps)
                if (t := remap_rows(s.get("rows"), m)) is not None]  # type: ignore[arg-type]
        self.rows = pa.concat_tables(live) if live else None
        self.seq = max(int(s["seq"]) for s in states)  # type: ignore[call-overload]
        self.buffer = []
        if self.ttl is not None:
            for s, m in zip(states, maps):
                if s.get("ttl") is not None:
                    self.ttl.remapped(m, s["ttl"], len(self.ids))  # type: ignore[arg-type]

    def _expire(self) -> None:
        """Forget the partitions whose kept rows are older than the TTL; renumber the
        partition ids once the forgotten ones are many."""
        assert self.ttl is not None
        # (over an updating input a partition's state is all its live rows, the top ones
        # among them)
        kept = [t for t in (self.top, self.rows) if t is not None and t.num_rows]
        if not kept:
            return
        n = len(self.ids)
        live = np.zeros(n, dtype=bool)
        for t in kept:
            live[t[PID].to_numpy()] = True
        old = self.ttl.expired(live)
        if not len(old):
            return
        gone = pa.array(old)
        self.top, self.rows = (None if t is None else t.filter(
            pc.invert(pc.is_in(t[PID], value_set=gone))) for t in (self.top, self.rows))
        live[old] = False
        if worth_compacting(self.ids, int(live.sum())):
            self.ids, mapping = compact(self.ids, live)
            self.ttl.written = fit(self.ttl.written, n, -np.inf)[live]
            self.top, self.rows = (None if t is None else t.set_column(
                t.schema.get_field_index(PID), PID, pa.array(mapping[t[PID].to_numpy()]))
                for t in (self.top, self.rows))

    def _ranked(self, table: pa.Table) -> pa.Table:
        batch = table.combine_chunks().to_batches()[0]
        data = pa.RecordBatch.from_arrays(batch.columns[: len(self.schema) - 1],
                                          schema=pa.schema(list(self.schema)[:-1]))
        order = [(evaluate(k.expr, data), k) for k in self.order]
        perm, rn = row_numbers(table[PID].to_numpy(), order, table[SEQ].to_numpy(),
                               self.latest_first)
        ranked = table.take(pa.array(perm)).append_column(RN, pa.array(rn))
        if self.limit is not None:
            ranked = ranked.filter(pc.less_equal(ranked[RN], self.limit))
        return ranked

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if has_rowkind(batch) and not self.retract:
            msg = "Top-N over an updating input is not supported yet"
            raise NotSupportedError(msg)
        data = data_part(batch)
        if not self.streaming:
            self.buffer.append(data)
            return ()
        if self.ttl is not None:
            self._expire()
        pids = self._pids(data)
        seqs = np.arange(self.seq, self.seq + data.num_rows, dtype=np.int64)
        self.seq += data.num_rows
        new = pa.Table.from_batches([data]).append_column(PID, pa.array(pids)).append_column(
            SEQ, pa.array(seqs))
        touched = pa.array(np.unique(pids))
        if self.retract:
            if self.ttl is not None:  # (every row of a partition writes its state)
                self.ttl.touch(touched.to_numpy())
            return self._changed(new, signs(batch), touched)
        if self.top is not None:
            hit = pc.is_in(self.top[PID], value_set=touched)
            old = self.top.filter(hit)
            rest = self.top.filter(pc.invert(hit))
            candidates = pa.concat_tables([old.drop_columns([RN]), new])
        else:
            old = rest = None
            candidates = new
        ranked = self._ranked(candidates)
        self.top = ranked if rest is None else pa.concat_tables([rest, ranked])
        if self.ttl is not None:  # (the partitions a new row entered: their state written)
            came = pc.greater_equal(ranked[SEQ], int(seqs[0]))
            self.ttl.touch(np.unique(ranked.filter(came)[PID].to_numpy()))
        return self._diff(old, ranked)

    def _changed(self, new: pa.Table, sign: np.ndarray, touched: pa.Array
                 ) -> list[pa.RecordBatch]:
        """A batch of an updating input: the touched partitions' live rows after it, ranked
        again, and the difference of their top rows."""
        held = rest = None
        if self.rows is not None:
            hit = pc.is_in(self.rows[PID], value_set=touched)
            held = self.rows.filter(hit)
            rest = self.rows.filter(pc.invert(hit))
        live = _live_rows(held, new, sign)
        old = top_rest = None
        if self.top is not None:
            hit = pc.is_in(self.top[PID], value_set=touched)
            old, top_rest = self.top.filter(hit), self.top.filter(pc.invert(hit))
        ranked = self._ranked(self._candidates(live, len(touched))) if live.num_rows else \
            live.append_column(RN, pa.array([], pa.int64()))
        self.rows = live if rest is None else pa.concat_tables([rest, live])
        self.top = ranked if top_rest is None else pa.concat_tables([top_rest, ranked])
        return self._diff(old, ranked)

    def _candidates(self, live: pa.Table, partitions: int) -> pa.Table:
        """The rows of ``live`` that can be in the top: of one partition (a Top-N of the
        whole input), the first N by the keys and arrival, selected without a sort."""
        if partitions != 1 or self.limit is None or live.num_rows <= 8 * self.limit:
            return live
        width = len(self.schema) - 1
        data = pa.Table.from_arrays(live.columns[:width], schema=pa.schema(list(self.schema)[:-1]))
        columns, keys = sort_columns(data, self.order,
                                     last=[(SEQ, live[SEQ].combine_chunks())])
        return live.take(pc.select_k_unstable(columns, k=self.limit, sort_keys=keys))

    def _diff(self, old: pa.Table | None, new: pa.Table) -> list[pa.RecordBatch]:
        parts: list[tuple[pa.Table, int]] = []
        came = new if old is None else new.filter(
            pc.invert(pc.is_in(new[SEQ], value_set=old[SEQ])))
        if old is not None and old.num_rows:
            gone = old.filter(pc.invert(pc.is_in(old[SEQ], value_set=new[SEQ])))
            if self.limit == 1 and gone.num_rows:
                # A Top-1 (deduplication) replaces its row: -U the old row, +U the new one.
                replaced = pc.is_in(came[PID], value_set=gone[PID])
                parts.append((gone.filter(pc.is_in(gone[PID], value_set=came[PID])),
                              UPDATE_BEFORE))
                parts.append((came.filter(replaced), UPDATE_AFTER))
                gone = gone.filter(pc.invert(pc.is_in(gone[PID], value_set=came[PID])))
                came = came.filter(pc.invert(replaced))
            parts.append((gone, DELETE))
        if self.output_rank and old is not None and old.num_rows:
            # Rows kept in both, whose number changed: -U the old number, +U the new one.
            _, i_old, i_new = np.intersect1d(old[SEQ].to_numpy(), new[SEQ].to_numpy(),
                                             return_indices=True)
            moved = old[RN].to_numpy()[i_old] != new[RN].to_numpy()[i_new]
            if moved.any():
                parts.append((old.take(pa.array(i_old[moved])), UPDATE_BEFORE))
                parts.append((new.take(pa.array(i_new[moved])), UPDATE_AFTER))
        parts.append((came, INSERT))
        out = []
        for table, kind in parts:
            if table.num_rows == 0:
                continue
            b = self._output(table)
            out.append(with_meta(b, rowkind=np.full(b.num_rows, kind, dtype=np.int8)))
        return out

    def _output(self, table: pa.Table) -> pa.RecordBatch:
        # By position: joined inputs may repeat a column name.
        width = len(self.schema) - 1
        cols = [table.column(i).combine_chunks() for i in range(width)]
        cols.append(table[RN].combine_chunks())
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if self.streaming or not self.buffer:
            return ()
        data = pa.Table.from_batches(self.buffer).combine_chunks()
        self.buffer = []
        batch = data.to_batches()[0] if data.num_rows else None
        if batch is None:
            return ()
        pids = dense_ids([evaluate(p, batch) for p in self.partition], batch.num_rows)
        table = data.append_column(PID, pa.array(pids)).append_column(
            SEQ, pa.array(np.arange(batch.num_rows, dtype=np.int64)))
        ranked = self._ranked(table)
        return [self._output(ranked.slice(i, 65536)) for i in range(0, ranked.num_rows, 65536)]

    def state_summary(self) -> Mapping[str, object]:
        kept = {"kept_rows": 0 if self.top is None else self.top.num_rows}
        if self.retract:
            kept["live_rows"] = 0 if self.rows is None else self.rows.num_rows
        return kept


def _live_rows(held: pa.Table | None, new: pa.Table, sign: np.ndarray) -> pa.Table:
    """The live rows after a batch of changes: ``held`` (data + $pid + $seq) and ``new``'s
    rows added (+1) or taken out (-1) in arrival order. A retraction takes out the earliest
    live row equal to it in every column, as Flink's Top-N does; one of a row not live is
    ignored (Flink's state holds no count below zero)."""
    retracted = sign < 0
    if not retracted.any():
        return new if held is None else pa.concat_tables([held, new.cast(held.schema)])
    width = new.num_columns - 2
    if held is not None and held.num_rows:
        # Only held rows whose first column has a retracted value can be taken out.
        first = new.column(0).filter(pa.array(retracted))
        if not pa.types.is_nested(first.type):
            maybe = pc.fill_null(pc.is_in(held.column(0), value_set=first.combine_chunks(),
                                          skip_nulls=False), False)
            if not pc.all(maybe).as_py():
                return pa.concat_tables([held.filter(pc.invert(maybe)),
                                         _live_rows(held.filter(maybe), new, sign)])
    if held is not None:
        held = held.sort_by([(SEQ, "ascending")])
    events = new if held is None else pa.concat_tables([held, new.cast(held.schema)])
    n_held = 0 if held is None else held.num_rows
    sign = np.concatenate([np.ones(n_held, dtype=np.int64), sign])
    # (ARRAY / MAP / ROW values, which Arrow cannot hash, compare by their text)
    cols = [c.combine_chunks() for c in events.columns[:width]]
    cols = [cast_array(c, pa.string()) if pa.types.is_nested(c.type) else c for c in cols]
    walk = walk_counts(dense_ids(cols, events.num_rows), sign)
    s = sign[walk.order]
    # Each equal row's live count, floored at zero, and whether a retraction took one out.
    live = walk.level - np.minimum(walk.low, 0)
    before = np.where(walk.first_of, 0, np.r_[0, live[:-1]])
    took = (s < 0) & (before > 0)
    # The first k added rows of an equal row are taken out, k its retractions that took one.
    segment = walk.segment
    taken = np.bincount(segment, weights=took, minlength=int(segment[-1]) + 1 if len(s)
                        else 0).astype(np.int64)
    added = s > 0
    nth = np.cumsum(added)
    nth = nth - np.r_[0, nth][np.flatnonzero(walk.first_of)][segment]
    keep = np.zeros(events.num_rows, dtype=bool)
    keep[walk.order] = added & (nth > taken[segment])
    return events.filter(pa.array(keep))


class WindowTopNOperator(Operator):
    """ROW_NUMBER over window_start, window_end [, keys]: ranks each window when it fires."""

    name = "WindowRank"
    state_fields = ("seq", "timers")
    zone: str = ""  # windows of this zone's wall clock (set by the factory)

    def __init__(self, partition: tuple[Expr, ...], order: tuple[SortKey, ...],
                 limit: int | None, schema: pa.Schema, end_index: int, keep: str = "") -> None:
        self.partition = partition
        self.order = order
        self.limit = limit
        self.schema = schema
        self.end_index = end_index  # the window_end column of the input
        # Window deduplication keeping the last row: of equal times the later row wins.
        self.latest_first = keep == "LastRow"
        self.timers = TimerService()  # each row waits for its window to fire
        self.seq = 0

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    # What the exchange before it hashes (set by the factory): a rescaled restore's split.
    exchange_keys: tuple[Expr, ...] = ()

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the waiting
        rows whose partition (but the window's bounds) it now owns."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        keys = self.exchange_keys
        if not keys:
            raise NotRescalable(self.name)
        from sqlengine.runtime.state.key_groups import owned

        def mine(rows: pa.RecordBatch) -> np.ndarray:
            return owned([evaluate(k, rows) for k in keys], subtask, parallelism)

        self.timers = TimerService()
        for s in states:
            self.timers.event_time[0].absorb(s["timers"].event_time[0], mine)  # type: ignore[attr-defined]
        self.timers.watermark = min(s["timers"].watermark for s in states)  # type: ignore[attr-defined]
        self.seq = max(int(s["seq"]) for s in states)  # type: ignore[call-overload]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        ends = data.column(self.end_index).cast(pa.timestamp("ms")).cast(pa.int64())
        fire_at = fire_times(ends.to_numpy(zero_copy_only=False), self.zone)
        self.timers.register_event_time(data, fire_at)
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before, due = self.timers.advance_watermark(wm.timestamp)
        if due is None:
            return ()
        done = due.combine_chunks()
        batch = done.to_batches()[0]
        pids = dense_ids([evaluate(p, batch) for p in self.partition], batch.num_rows)
        order = [(evaluate(k.expr, batch), k) for k in self.order]
        perm, rn = row_numbers(pids, order, np.arange(batch.num_rows, dtype=np.int64),
                               self.latest_first)
        ranked = done.take(pa.array(perm)).append_column(RN, pa.array(rn))
        if self.limit is not None:
            ranked = ranked.filter(pc.less_equal(ranked[RN], self.limit))
        ranked = ranked.sort_by([(ranked.column_names[self.end_index], "ascending")])
        cols = [*ranked.columns[: len(self.schema) - 1], ranked[RN]]
        out = pa.Table.from_arrays([c.combine_chunks() for c in cols], schema=self.schema)
        return [with_meta(b, np.full(b.num_rows, before, dtype=np.int64))
                for b in out.to_batches() if b.num_rows]

    def state_summary(self) -> Mapping[str, object]:
        return {"buffered_rows": self.timers.event_time[0].num_rows}
