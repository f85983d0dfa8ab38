"""TemporalJoinOperator: Flink's event-time temporal join (``FOR SYSTEM_TIME AS OF l.time``).

Right rows are versions of their key. A left row waits until the watermark (the smaller of
both inputs') reaches its time, so that every version up to that time has arrived; then it
meets the version of its key with the greatest time at or before its own (a later arrival
with an equal time replaces an earlier one), and the residual condition is checked on that
pair: an INNER join drops the row when there is no version or the check fails, a LEFT join
pads it with NULLs. After each watermark, a key keeps only the versions after the watermark
and the last one at or before it. Left rows are never late: one behind the watermark waits
for the next watermark (as Flink's operator does). At the end of both inputs (batch mode) every
waiting row is joined.

The versioned side may be a changelog (a CDC source with its PRIMARY KEY), as in Flink: an
insert or update-after is a version at its row's time, an update-before is dropped (Flink's
DropUpdateBefore), and a delete is a version marking the key absent from its row's time (a
left row whose version is one joins nothing).

Over a versioned view (``monotonic``: each key's last row by event time, read from the rows it
deduplicates) a row older than its key's newest so far, in arrival order, is no version: Flink's
deduplication keeping the last row by event time drops it, so it never reaches the join.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import (
    DELETE,
    UPDATE_BEFORE,
    Watermark,
    data_part,
    has_rowkind,
    millis,
    with_meta,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import NotRescalable, Operator
from sqlengine.runtime.operators.rank import dense_ids

_SEQ = "$seq"
_POS = "$pos"
_END = np.iinfo(np.int64).max


class TemporalJoinOperator(Operator):
    name = "TemporalJoin"
    state_fields = ("ended", "next_seq", "version_deleted", "version_seq", "versions", "waiting",
                    "watermark")

    def __init__(self, kind: str, left_keys: tuple[Expr, ...], right_keys: tuple[Expr, ...],
                 condition: Expr | None, left_schema: pa.Schema, right_schema: pa.Schema,
                 schema: pa.Schema, left_time: int, right_time: int,
                 monotonic: bool = False) -> None:
        self.monotonic = monotonic
        self.kind = kind
        self.key_exprs = (left_keys, right_keys)
        self.condition = condition
        self.schemas = (left_schema, right_schema)
        self.schema = schema
        self.times = (left_time, right_time)
        self.waiting: pa.Table = left_schema.empty_table()
        self.versions: pa.Table = right_schema.empty_table()
        self.version_seq = np.zeros(0, dtype=np.int64)  # arrival order of each version
        self.version_deleted = np.zeros(0, dtype=bool)  # a delete: the key absent from then
        self.next_seq = 0
        self.watermark = np.iinfo(np.int64).min
        self.ended = [False, False]

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the waiting rows
        and the versions whose join key it now owns (version numbers keep their order within
        a key, whose versions all came from one old subtask)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        if not self.key_exprs[0]:
            raise NotRescalable(self.name)
        from sqlengine.runtime.state.key_groups import owned

        def mine(table: pa.Table, side: int) -> np.ndarray:
            if table.num_rows == 0:
                return np.zeros(0, dtype=bool)
            rows = table.combine_chunks().to_batches()[0]
            return owned([evaluate(k, rows) for k in self.key_exprs[side]], subtask,
                         parallelism)

        waiting, versions, seqs, deleted = [], [], [], []
        for s in states:
            w: pa.Table = s["waiting"]  # type: ignore[assignment]
            waiting.append(w.filter(pa.array(mine(w, 0))))
            v: pa.Table = s["versions"]  # type: ignore[assignment]
            keep = mine(v, 1)
            versions.append(v.filter(pa.array(keep)))
            seqs.append(np.asarray(s["version_seq"])[keep])
            gone = s.get("version_deleted")
            deleted.append(np.asarray(gone)[keep] if gone is not None and len(gone) == len(keep)
                           else np.zeros(int(keep.sum()), dtype=bool))
        self.waiting = pa.concat_tables([self.schemas[0].empty_table(), *waiting])
        self.versions = pa.concat_tables([self.schemas[1].empty_table(), *versions])
        self.version_seq = np.concatenate([np.zeros(0, dtype=np.int64), *seqs])
        self.version_deleted = np.concatenate([np.zeros(0, dtype=bool), *deleted])
        self.next_seq = max(int(s["next_seq"]) for s in states)  # type: ignore[call-overload]
        self.watermark = min(int(s["watermark"]) for s in states)  # type: ignore[call-overload]
        self.ended = [False, False]  # (the inputs end again when the restored sources do)

    # -- input -------------------------------------------------------------------------------
    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = pa.Table.from_batches([data_part(batch)])
        times = data.column(self.times[input_index])
        if input_index == 1:
            # (a version without a time is never valid; an update-before is dropped)
            ok = pc.is_valid(times).to_numpy(zero_copy_only=False)
            kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False) \
                if has_rowkind(batch) else np.zeros(batch.num_rows, dtype=np.int8)
            ok = ok & (kinds != UPDATE_BEFORE)
            if self.monotonic and ok.any():
                ok &= ~self._behind(data, ok)
            data = data.filter(pa.array(ok))
            self.version_deleted = np.concatenate([self._deleted(), (kinds == DELETE)[ok]])
            self.versions = pa.concat_tables([self.versions, data.cast(self.schemas[1])])
            seq = np.arange(self.next_seq, self.next_seq + data.num_rows, dtype=np.int64)
            self.next_seq += data.num_rows
            self.version_seq = np.concatenate([self.version_seq, seq])
            return ()
        self.waiting = pa.concat_tables([self.waiting, data.cast(self.schemas[0])])
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        if wm.timestamp <= self.watermark:
            return ()
        before, self.watermark = self.watermark, wm.timestamp
        out = self._emit(self.watermark, before)
        self._clean(self.watermark)
        return out

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.ended[input_index] = True
        if not all(self.ended):
            return ()
        return self._emit(_END, _END)

    # -- joining -----------------------------------------------------------------------------
    def _emit(self, upto: int, stamp: int) -> list[pa.RecordBatch]:
        """Join the waiting rows up to ``upto``. They leave stamped with the watermark before
        the one that fired them (``stamp``), as Flink's timers emit before forwarding it: an
        operator by the left row's time after the join does not take them for late rows."""
        left = self.waiting
        if left.num_rows == 0:
            return []
        lt = millis(left.column(self.times[0]))
        valid_time = ~np.isnan(lt) if lt.dtype.kind == "f" else np.ones(len(lt), dtype=bool)
        lt = np.where(valid_time, lt, 0).astype(np.int64)
        ready = valid_time & (lt <= upto) if upto != _END else np.ones(len(lt), dtype=bool)
        if not ready.any():
            return []
        rows = left.filter(pa.array(ready))
        self.waiting = left.filter(pa.array(~ready))
        order = np.argsort(lt[ready], kind="stable")  # Flink emits in time order
        rows = rows.take(pa.array(order))
        rt = lt[ready][order]
        version = self._versions_at(rows, rt, valid_time[ready][order])
        matched = version >= 0
        right = self.versions.take(pa.array(np.where(matched, version, 0))) \
            if self.versions.num_rows else None
        cols = [c.combine_chunks() for c in rows.columns]
        if right is None:
            rcols = [pa.nulls(rows.num_rows, f.type) for f in self.schemas[1]]
        else:
            rcols = [pc.if_else(pa.array(matched), c.combine_chunks(),
                                pa.nulls(rows.num_rows, c.type)) for c in right.columns]
        joined = pa.RecordBatch.from_arrays(cols + rcols, schema=self.schema)
        keep = matched
        if self.condition is not None and matched.any():
            ok = np.asarray(pc.fill_null(evaluate(self.condition, joined), False)
                            .to_numpy(zero_copy_only=False))
            keep = matched & ok
        if self.kind == "left":
            if not keep.all():
                nulls = [pa.nulls(rows.num_rows, f.type) for f in self.schemas[1]]
                padded = [pc.if_else(pa.array(keep), joined.column(len(cols) + i), nulls[i])
                          for i in range(len(rcols))]
                joined = pa.RecordBatch.from_arrays(cols + padded, schema=self.schema)
        else:
            joined = joined.filter(pa.array(keep))
        if joined.num_rows == 0:
            return []
        return [with_meta(joined, np.full(joined.num_rows, stamp, dtype=np.int64))]

    def _versions_at(self, rows: pa.Table, times: np.ndarray, timed: np.ndarray) -> np.ndarray:
        """For each left row, the position of its version (-1: none)."""
        out = np.full(rows.num_rows, -1, dtype=np.int64)
        if self.versions.num_rows == 0 or rows.num_rows == 0:
            return out
        left = self._keys(rows, 0)
        right = self._keys(self.versions, 1)
        names = [c for c in left.column_names if c != _POS]
        for n in names:
            left = left.filter(pc.is_valid(left[n]))
            right = right.filter(pc.is_valid(right[n]))
        pairs = left.join(right, keys=names, join_type="inner", right_suffix="_r",
                          use_threads=False)
        if pairs.num_rows == 0:
            return out
        li = pairs[_POS].to_numpy()
        ri = pairs[_POS + "_r"].to_numpy()
        vt = millis(self.versions.column(self.times[1]))[ri].astype(np.int64)
        ok = (vt <= times[li]) & timed[li]
        li, ri, vt = li[ok], ri[ok], vt[ok]
        if not len(li):
            return out
        # Per left row the greatest (version time, arrival): the last of each group.
        order = np.lexsort((self.version_seq[ri], vt, li))
        li, ri = li[order], ri[order]
        last = np.append(li[1:] != li[:-1], True)
        out[li[last]] = np.where(self._deleted()[ri[last]], -1, ri[last])
        return out

    def _behind(self, data: pa.Table, ok: np.ndarray) -> np.ndarray:
        """Per row of a versions batch whether its time is below the newest time its key had
        before it (the versions kept, then the batch's earlier rows): such a row is no
        version of a versioned view."""
        vt = millis(data.column(self.times[1]))
        vt = np.where(ok, np.nan_to_num(vt) if vt.dtype.kind == "f" else vt, 0).astype(np.int64)
        keys = self._keys(data, 1)
        names = [c for c in keys.column_names if c != _POS]
        kept = self._keys(self.versions, 1)
        kept = kept.append_column("$t", pa.array(
            millis(self.versions.column(self.times[1])).astype(np.int64)))
        # (one id per key: the kept versions' keys and the batch's, NULL keys equal)
        both = pa.concat_tables([kept.select(names), keys.select(names)]).combine_chunks()
        key_id = dense_ids([both[n].combine_chunks() for n in names], both.num_rows)
        newest = np.full(int(key_id.max()) + 1, np.iinfo(np.int64).min)
        if kept.num_rows:
            np.maximum.at(newest, key_id[: kept.num_rows], kept["$t"].to_numpy())
        rows = key_id[kept.num_rows:]
        # The running newest per key, in arrival order: ranks of the times, offset per key so
        # one cumulative maximum runs over all keys at once.
        order = np.lexsort((np.arange(len(rows)), rows))
        t_sorted = np.where(ok, vt, np.iinfo(np.int64).min)[order]
        values = np.unique(np.concatenate([t_sorted, newest]))
        rank = np.searchsorted(values, t_sorted)
        start = np.searchsorted(values, newest)[rows[order]]
        span = len(values) + 1
        base = rows[order].astype(np.int64) * span
        running = np.maximum.accumulate(base + np.maximum(rank, start)) - base
        before = np.concatenate([[-1], running[:-1]])
        first = np.r_[True, rows[order][1:] != rows[order][:-1]]
        prior = np.where(first, start, np.maximum(before, start))
        behind = np.zeros(len(rows), dtype=bool)
        behind[order] = rank < prior
        return behind & ok

    def _deleted(self) -> np.ndarray:
        """Per version whether it is a delete (all False for a state from before deletes)."""
        if len(self.version_deleted) != len(self.version_seq):
            self.version_deleted = np.zeros(len(self.version_seq), dtype=bool)
        return self.version_deleted

    def _keys(self, table: pa.Table, side: int) -> pa.Table:
        batch = table.combine_chunks().to_batches()[0] if table.num_rows else \
            pa.RecordBatch.from_pylist([], schema=table.schema)
        cols = {f"k{i}": evaluate(k, batch) for i, k in enumerate(self.key_exprs[side])}
        cols[_POS] = pa.array(np.arange(batch.num_rows, dtype=np.int64))
        return pa.table(cols)

    def _clean(self, watermark: int) -> None:
        """Keep per key the versions after the watermark and the last one at or before it."""
        v = self.versions
        if v.num_rows < 2:
            return
        vt = millis(v.column(self.times[1])).astype(np.int64)
        keys = self._keys(v, 1)
        names = [c for c in keys.column_names if c != _POS]
        old = vt <= watermark
        if not old.any():
            return
        keys = keys.append_column("$t", pa.array(vt)).append_column(
            _SEQ, pa.array(self.version_seq))
        past = keys.filter(pa.array(old))
        # The newest old version of each key: the greatest (time, arrival).
        order = np.lexsort((past[_SEQ].to_numpy(), past["$t"].to_numpy()))
        past = past.take(pa.array(order))
        newest = past.group_by(names, use_threads=False).aggregate([(_POS, "last")])
        keep = ~old
        keep[newest[f"{_POS}_last"].to_numpy()] = True
        self.versions = v.filter(pa.array(keep))
        self.version_deleted = self._deleted()[keep]
        self.version_seq = self.version_seq[keep]

    def state_summary(self) -> Mapping[str, object]:
        return {"waiting_rows": self.waiting.num_rows, "versions": self.versions.num_rows}
