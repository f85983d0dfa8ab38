"""WindowFunctionsOperator: window functions over a bounded input, vectorised with numpy.

At end of input the rows are sorted by partition and order keys once; partition and peer
(equal order key) boundaries become index arrays, and every function is array arithmetic over
them: ranks from the boundaries, LAG/LEAD by shifted indices, frame aggregates by prefix sums
(SUM, COUNT, AVG) and a sparse table of order ranks (MIN, MAX: any frame in O(1) per row),
FIRST_VALUE/LAST_VALUE (NULLs skipped, as Flink does) by the nearest valid row. Only RANGE
frames with an offset search per partition.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import WIDE_DECIMALS
from sqlengine.errors import ExecutionError
from sqlengine.plan.expressions import AggCall, Expr, Literal
from sqlengine.plan.nodes import SortKey, WindowCall, WindowFrame
from sqlengine.runtime import decimal_int64
from sqlengine.runtime.changelog import apply_changelog
from sqlengine.runtime.elements import Watermark, data_part, with_meta
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.kernels import kernel_for
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.distinct_frames import frame_distinct, previous_equal
from sqlengine.runtime.operators.sort import order_columns
from sqlengine.runtime.prefix_sums import prefix_sums
from sqlengine.runtime.timers import TimerService
from sqlengine.runtime.value_codes import value_codes
from sqlengine.runtime.windows import fire_times

_OUT_CHUNK = 65536


class WindowFunctionsOperator(Operator):
    name = "WindowFunctions"
    state_fields = ("batches",)

    holds_until_end = True  # (see Operator.holds_until_end)

    def __init__(self, partition: tuple[Expr, ...], order: tuple[SortKey, ...],
                 calls: tuple[WindowCall, ...], schema: pa.Schema, input_schema: pa.Schema,
                 loose: tuple[int, ...] = ()) -> None:
        self.partition = partition
        # (PROCTIME() columns: a retraction carries another time than the row it retracts,
        # which it meets by the other columns; the deleted rows of a changelog source were
        # kept, their retractions meeting nothing)
        self.loose = loose
        self.order = order
        self.calls = calls
        self.schema = schema
        self.input_schema = input_schema
        self.batches: list[pa.RecordBatch] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.batches.append(batch)
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        table = apply_changelog(self.batches, self.input_schema, self.loose)
        self.batches = []
        return self._computed(table)

    def _computed(self, table: pa.Table) -> list[pa.RecordBatch]:
        """``table``'s rows with their window functions' values."""
        if table.num_rows == 0:
            return []
        batch = _sorted(table.combine_chunks().to_batches()[0], self.partition, self.order)
        rows = _Rows(batch, self.partition, self.order)
        width = len(self.input_schema)  # (a relation without columns has a placeholder)
        arrays = list(batch.columns)[:width]
        for call, f in zip(self.calls, list(self.schema)[width:]):
            out = _call(call, batch, rows)
            arrays.append(out if out.type == f.type else out.cast(f.type))
        result = pa.Table.from_arrays(arrays, schema=self.schema)
        return [b for b in result.to_batches(max_chunksize=_OUT_CHUNK) if b.num_rows]


class WindowedFunctionsOperator(WindowFunctionsOperator):
    """Window functions partitioned by a window's bounds (streaming): a window's rows wait
    until the watermark passes its end, then get their values and go on insert-only, as a
    window Top-N's (the window TVF before it dropped the late rows)."""

    state_fields = ("timers",)
    zone: str = ""  # windows of this zone's wall clock (set by the factory)

    holds_until_end = False  # (it fires each window at the watermark)

    def __init__(self, partition: tuple[Expr, ...], order: tuple[SortKey, ...],
                 calls: tuple[WindowCall, ...], schema: pa.Schema, input_schema: pa.Schema,
                 end_index: int) -> None:
        super().__init__(partition, order, calls, schema, input_schema)
        self.end_index = end_index  # the window_end column of the input
        self.timers = TimerService()  # each row waits for its window to fire

    @property
    def watermark(self) -> int:
        return self.timers.watermark

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        ends = data.column(self.end_index).cast(pa.timestamp("ms")).cast(pa.int64())
        self.timers.register_event_time(
            data, fire_times(ends.to_numpy(zero_copy_only=False), self.zone))
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before, due = self.timers.advance_watermark(wm.timestamp)
        if due is None:
            return ()
        return [with_meta(b, np.full(b.num_rows, before, dtype=np.int64))
                for b in self._computed(due)]

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        return ()  # (every window fired at the input's last watermark)

    def state_summary(self) -> dict[str, object]:
        return {"buffered_rows": self.timers.event_time[0].num_rows}


def _sorted(batch: pa.RecordBatch, partition: tuple[Expr, ...], order: tuple[SortKey, ...]
            ) -> pa.RecordBatch:
    cols: dict[str, pa.Array] = {}
    keys: list[tuple[str, str]] = []
    for i, p in enumerate(partition):
        cols[f"p{i}"] = _partition_key(evaluate(p, batch))
        keys.append((f"p{i}", "ascending"))
    for i, k in enumerate(order):
        columns, sort_order = order_columns(i, evaluate(k.expr, batch), k)
        cols.update(columns)
        keys += sort_order
    if not keys:
        return batch
    return batch.take(pc.sort_indices(pa.table(cols), sort_keys=keys))


def _partition_key(values: pa.Array) -> pa.Array:
    """A partition column as it is sorted and compared: a ROW / ARRAY / MAP by its whole
    value's code (Arrow neither sorts nor compares them); a FLOAT / DOUBLE by its bits, every
    NaN as one, so that partitions are GROUP BY's groups (NaNs were a partition each, as NaN
    <> NaN, and -0.0 shared 0.0's, where GROUP BY keeps them apart)."""
    if T.is_nested(values.type):
        return pa.array(value_codes(values))
    if pa.types.is_floating(values.type):
        return _float_bits(values)
    return values


def _float_bits(values: pa.Array) -> pa.Array:
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    ints = np.int32 if values.type == pa.float32() else np.int64
    floats = np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False))
    bits = floats.view(ints).copy()
    bits[np.isnan(floats)] = np.array([np.nan], floats.dtype).view(ints)[0]
    valid = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False))
    return pa.array(bits, mask=~valid)


def _changes(arrays: list[pa.Array], n: int) -> np.ndarray:
    """True where a row's values differ from the previous row's (NULLs equal), and at 0."""
    out = np.zeros(n, dtype=bool)
    out[0] = True
    if n < 2:
        return out
    for a in arrays:
        valid = np.asarray(pc.is_valid(a).to_numpy(zero_copy_only=False))
        prev, cur = a.slice(0, n - 1), a.slice(1)
        differ = pc.fill_null(pc.not_equal(cur, prev), False)
        if pa.types.is_floating(a.type):  # (NaNs are peers, as they sort together)
            both = pc.fill_null(pc.and_(pc.is_nan(cur), pc.is_nan(prev)), False)
            differ = pc.and_(differ, pc.invert(both))
        out[1:] |= np.asarray(differ.to_numpy(zero_copy_only=False)) | \
            (valid[1:] != valid[:-1])
    return out


class _Rows:
    """Partition and peer boundaries of the sorted rows, as per-row index arrays."""

    def __init__(self, batch: pa.RecordBatch, partition: tuple[Expr, ...],
                 order: tuple[SortKey, ...]) -> None:
        n = batch.num_rows
        self.n = n
        self.idx = np.arange(n)
        parts = [_partition_key(evaluate(p, batch)) for p in partition]
        self.order_values = [evaluate(k.expr, batch) for k in order]
        self.order = order
        new_part = _changes(parts, n)
        new_peer = new_part | _changes(self.order_values, n)
        self.part_start, self.part_end = _bounds(new_part)
        self.peer_start, self.peer_end = _bounds(new_peer)
        self.new_peer = new_peer
        self.starts = np.flatnonzero(new_part)

    @property
    def size(self) -> np.ndarray:
        return self.part_end - self.part_start

    def frame(self, frame: WindowFrame) -> tuple[np.ndarray, np.ndarray]:
        """Each row's frame as inclusive row positions [lo, hi] (empty when lo > hi)."""
        last = self.part_end - 1
        if frame.kind == "rows":
            lo = self.part_start if frame.start is None else \
                np.maximum(self.part_start, self.idx + int(frame.start))
            hi = last if frame.end is None else np.minimum(last, self.idx + int(frame.end))
            return lo, hi
        if frame.kind == "groups":
            return self._groups(frame)
        lo = self._range_bound(frame.start, lower=True)
        hi = self._range_bound(frame.end, lower=False)
        return lo, hi

    def _groups(self, frame: WindowFrame) -> tuple[np.ndarray, np.ndarray]:
        """GROUPS frames: offsets count peer groups (rows of equal ORDER BY values)."""
        group = np.cumsum(self.new_peer) - 1
        group_start = np.flatnonzero(self.new_peer)
        group_last = np.append(group_start[1:], self.n) - 1
        first, last = group[self.part_start], group[self.part_end - 1]
        lo_g = first if frame.start is None else np.maximum(first, group + int(frame.start))
        hi_g = last if frame.end is None else np.minimum(last, group + int(frame.end))
        lo = np.where(lo_g > last, self.part_end, group_start[np.minimum(lo_g, last)])
        hi = np.where(hi_g < first, self.part_start - 1, group_last[np.maximum(hi_g, first)])
        return lo, hi

    def _range_bound(self, offset: float | None, lower: bool) -> np.ndarray:
        if offset is None:
            return self.part_start if lower else self.part_end - 1
        if offset == 0:
            return self.peer_start if lower else self.peer_end - 1
        return self._range_offset(offset, lower)

    def _range_offset(self, offset: float, lower: bool) -> np.ndarray:
        key = self.order[0]
        values = self.order_values[0]
        if T.is_temporal(values.type):
            # (offsets are milliseconds; a TIMESTAMP(4..9) counts by its millisecond, floored)
            if pa.types.is_timestamp(values.type) and values.type.unit in ("us", "ns"):
                values = pc.floor_temporal(values, unit="millisecond")
            raw = values.cast(pa.timestamp("ms")).cast(pa.int64())
        else:
            raw = values.cast(pa.float64()) if pa.types.is_decimal(values.type) else values
        valid = np.asarray(pc.is_valid(raw).to_numpy(zero_copy_only=False))
        u = np.asarray(pc.fill_null(raw, 0).to_numpy(zero_copy_only=False), dtype=np.float64)
        if pa.types.is_decimal(values.type):
            # In units of the scale, exactly (1.1 - 1 is 0.10000000000000009 in floats, past
            # 0.1: the row at 0.1 fell out of 1.1's RANGE 1 PRECEDING)
            unit = 10.0 ** values.type.scale
            u, offset = np.round(u * unit), offset * unit
        if not key.ascending:
            u = -u  # ascending coordinates: PRECEDING is always smaller
        # NULL order values: the frame is the row's peers (the other NULLs).
        out = (self.peer_start if lower else self.peer_end - 1).copy()
        for start, end in zip(self.starts, np.append(self.starts[1:], self.n)):
            ok = np.flatnonzero(valid[start:end]) + start
            if not len(ok):
                continue
            seg = u[ok[0]:ok[-1] + 1]  # the non-NULL rows of a partition are contiguous
            target = u[ok] + offset
            if lower:
                pos = np.searchsorted(seg, target, side="left")
            else:
                pos = np.searchsorted(seg, target, side="right") - 1
            out[ok] = pos + ok[0]
        return out


def _bounds(new: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    starts = np.flatnonzero(new)
    ends = np.append(starts[1:], len(new))
    group = np.cumsum(new) - 1
    return starts[group], ends[group]


def _call(call: WindowCall, batch: pa.RecordBatch, rows: _Rows) -> pa.Array:
    f = call.func
    pos = rows.idx - rows.part_start
    if f == "row_number":
        return pa.array(pos + 1, pa.int64())
    rank = rows.peer_start - rows.part_start + 1
    if f == "rank":
        return pa.array(rank, pa.int64())
    if f == "dense_rank":
        peers = np.cumsum(rows.new_peer)
        return pa.array(peers - peers[rows.part_start] + 1, pa.int64())
    size = rows.size
    if f == "percent_rank":
        return pa.array(np.where(size > 1, (rank - 1) / np.maximum(size - 1, 1), 0.0))
    if f == "cume_dist":
        return pa.array((rows.peer_end - rows.part_start) / size)
    if f == "ntile":
        arg = call.args[0]
        assert isinstance(arg, Literal)
        buckets = int(arg.value)  # type: ignore[arg-type]
        q, r = size // buckets, size % buckets
        big = r * (q + 1)
        tile = np.where(pos < big, pos // (q + 1), r + (pos - big) // np.maximum(q, 1)) + 1
        return pa.array(tile, pa.int64())
    if f in ("lag", "lead"):
        return _shifted(call, batch, rows)
    assert call.frame is not None
    lo, hi = rows.frame(call.frame)
    empty = lo > hi
    lo_c, hi_c = np.clip(lo, 0, rows.n - 1), np.clip(hi, 0, rows.n - 1)
    if f in ("first_value", "last_value"):
        return first_last(evaluate(call.args[0], batch), f, lo_c, hi_c, empty, rows.n)
    if call.agg is not None and call.agg.func.startswith("py:"):
        return _python(call.agg, batch, lo_c, hi_c, empty, rows.part_start)
    return aggregate_frames(call, batch, lo_c, hi_c, empty, rows.n)


def _python(agg: AggCall, batch: pa.RecordBatch, lo: np.ndarray, hi: np.ndarray,
            empty: np.ndarray, first: np.ndarray) -> pa.Array:
    """A Python aggregate over each row's frame (NULL over an empty one)."""
    from sqlengine.runtime.operators.python_aggregate import PythonAggregate

    keep = pc.fill_null(evaluate(agg.filter, batch), False).to_numpy(zero_copy_only=False) \
        if agg.filter is not None else None
    return PythonAggregate(agg).over([evaluate(a, batch) for a in agg.args], keep, lo, hi,
                                     ~empty, first)


def _shifted(call: WindowCall, batch: pa.RecordBatch, rows: _Rows) -> pa.Array:
    value_e, offset_e, default_e = call.args[:3]
    assert isinstance(offset_e, Literal)
    offset = int(offset_e.value)  # type: ignore[arg-type]
    values = evaluate(value_e, batch)
    if len(call.args) > 3:  # IGNORE NULLS: counted over the partition's non-NULL values
        valid = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False), dtype=bool)
        at = np.flatnonzero(valid)  # (the rank-th non-NULL value is at[rank - 1])
        upto = np.cumsum(valid)  # (non-NULL values up to each row, itself included)
        before_part = upto[rows.part_start] - valid[rows.part_start]
        through_part = upto[rows.part_end - 1]
        if call.func == "lag":
            rank = upto - valid - offset + 1
            inside = (rank > before_part) & (rank <= upto - valid)
        else:
            rank = upto + offset
            inside = (rank <= through_part) & (rank > upto)
        src = at[np.clip(rank - 1, 0, max(len(at) - 1, 0))] if len(at) else rows.idx
    else:
        src = rows.idx - offset if call.func == "lag" else rows.idx + offset
        inside = (src >= rows.part_start) & (src < rows.part_end)
    taken = values.take(pa.array(np.clip(src, 0, rows.n - 1)))
    default = evaluate(default_e, batch)
    if default.type != taken.type:
        default = default.cast(taken.type)
    return pc.if_else(pa.array(inside), taken, default)


def first_last(values: pa.Array, f: str, lo: np.ndarray, hi: np.ndarray, empty: np.ndarray,
               n: int) -> pa.Array:
    valid = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False))
    idx = np.arange(n)
    if f == "first_value":
        nxt = np.minimum.accumulate(np.where(valid, idx, n)[::-1])[::-1]
        pick = nxt[lo]
        ok = ~empty & (pick <= hi)
    else:
        prv = np.maximum.accumulate(np.where(valid, idx, -1))
        pick = prv[hi]
        ok = ~empty & (pick >= lo)
    taken = values.take(pa.array(np.clip(pick, 0, n - 1)))
    return pc.if_else(pa.array(ok), taken, pa.nulls(n, values.type))


def aggregate_frames(call: WindowCall, batch: pa.RecordBatch, lo: np.ndarray,
                     hi: np.ndarray, empty: np.ndarray, n: int) -> pa.Array:
    agg = call.agg
    assert agg is not None
    keep = np.ones(n, dtype=bool)
    if agg.filter is not None:
        keep = np.asarray(pc.fill_null(evaluate(agg.filter, batch), False)
                          .to_numpy(zero_copy_only=False))
    if agg.func == "count_star":
        prefix = np.concatenate([[0], np.cumsum(keep)])
        return pa.array(np.where(empty, 0, prefix[hi + 1] - prefix[lo]), pa.int64())
    values = evaluate(agg.args[0], batch)
    if agg.func == "array_agg":
        return _frame_arrays(values, keep, lo, hi, empty, call.type)
    valid = np.asarray(pc.is_valid(values).to_numpy(zero_copy_only=False)) & keep
    prev = previous_equal(values, valid) if agg.distinct else None
    if prev is not None:  # (each value once per frame: distinct_frames.py)
        count = np.where(empty, 0, frame_distinct(prev, valid.astype(np.int64), lo, hi))
    else:
        counted = np.concatenate([[0], np.cumsum(valid)])
        count = np.where(empty, 0, counted[hi + 1] - counted[lo])
    if agg.func == "count":
        return pa.array(count, pa.int64())
    null = count == 0
    if agg.func in ("min", "max"):
        return _extreme(values, valid, agg.func, lo, hi, null)
    if agg.func == "listagg":
        return _frame_lists(values, valid, lo, hi, null, agg.args[1].value)  # type: ignore[attr-defined]
    total = _frame_sums(values, valid, lo, hi, prev)
    if agg.func == "sum":
        t = T.sum_type(values.type)
        if pa.types.is_integer(t):  # (a TINYINT sum is a TINYINT: wraps, as Java's)
            return pa.array(np.asarray(total, dtype=np.int64), pa.int64(), mask=null) \
                .cast(call.type, safe=False)
        if pa.types.is_decimal(t):  # (a sum past 38 digits is NULL, as Flink's)
            limit = decimal.Decimal(10) ** (t.precision - t.scale)
            null = null | np.array([decimal.Decimal(v).copy_abs() >= limit for v in total],
                                   dtype=bool)
            total = np.where(null, 0, total)
        return pa.array(total, t, mask=null).cast(call.type, safe=False)
    if agg.func != "avg":
        msg = f"{agg.func.upper()} is not a window function"
        raise ExecutionError(msg)
    safe = np.where(null, 1, count)
    if pa.types.is_integer(call.type):
        t = np.asarray(total, dtype=np.int64)
        return pa.array(np.sign(t) * (np.abs(t) // safe), pa.int64(), mask=null) \
            .cast(call.type, safe=False)
    if pa.types.is_decimal(call.type):
        sums = pa.array(total, T.sum_type(values.type))
        res = kernel_for("divide")([sums, pa.array(safe).cast(pa.decimal128(20, 0))],
                                   [None, None], call.type)
        return pc.if_else(pa.array(null), pa.nulls(n, call.type), res)
    return pa.array(np.asarray(total, dtype=np.float64) / safe, mask=null).cast(call.type)


def _frame_arrays(values: pa.Array, keep: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  empty: np.ndarray, out: pa.DataType) -> pa.Array:
    """ARRAY_AGG over each row's frame: the values of its rows (NULLs too, as Flink's), in
    row order; NULL for a frame without rows. One gather for all the frames."""
    kept = np.nonzero(keep)[0]
    start = np.searchsorted(kept, lo, side="left")
    end = np.searchsorted(kept, hi, side="right")
    lengths = np.where(empty, 0, np.maximum(end - start, 0))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    at = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - start, lengths)
    elements = values.take(pa.array(kept[at])).cast(out.value_type)
    return pa.LargeListArray.from_arrays(offsets, elements, mask=pa.array(lengths == 0)) \
        .cast(out)


def _frame_lists(values: pa.Array, valid: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                 null: np.ndarray, sep: object) -> pa.Array:
    """LISTAGG over each row's frame: its non-NULL values joined in row order (a frame that
    only grows, as ``UNBOUNDED PRECEDING .. CURRENT ROW``, extends the previous text)."""
    texts = [v if ok else None for v, ok in zip(values.to_pylist(), valid)]
    out: list[str | None] = []
    prev_lo, prev_hi, prev = -1, -1, ""
    sep_s = "" if sep is None else str(sep)
    for i in range(len(texts)):
        if null[i] or sep is None:
            out.append(None)
            continue
        a, b = int(lo[i]), int(hi[i])
        if a == prev_lo and b >= prev_hi and prev_hi >= a:
            more = [t for t in texts[prev_hi + 1:b + 1] if t is not None]
            cur = sep_s.join([prev, *more]) if prev and more else (prev or sep_s.join(more))
        else:
            cur = sep_s.join(t for t in texts[a:b + 1] if t is not None)
        out.append(cur)
        prev_lo, prev_hi, prev = a, b, cur
    return pa.array(out, pa.string())


def _frame_sums(values: pa.Array, valid: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                prev: np.ndarray | None = None) -> np.ndarray:
    """The sum over each frame of its values (of its distinct values, given ``prev``)."""
    scale = None
    if pa.types.is_decimal(values.type):
        # (exact unscaled integers: Decimal objects add in 28 digits, and cut a
        # DECIMAL(38, 0)'s sum to 92345678901234567890123456790000000000)
        scale = values.type.scale
        raw = decimal_int64.unscaled_ints(values.cast(pa.decimal128(38, scale)))\
            .astype(object)
        raw[~valid] = 0
    else:
        dtype = np.float64 if pa.types.is_floating(values.type) else np.int64
        raw = np.asarray(pc.fill_null(values, 0).to_numpy(zero_copy_only=False), dtype=dtype)
        raw = np.where(valid, raw, 0)
    if prev is not None:
        sums = frame_distinct(prev, raw, lo, hi)
    else:
        sums = prefix_sums(raw).between(lo, hi + 1)
    if scale is None:
        return sums
    return np.array([decimal.Decimal(int(v)).scaleb(-scale, WIDE_DECIMALS) for v in sums],
                    dtype=object)



def _extreme(values: pa.Array, valid: np.ndarray, func: str, lo: np.ndarray, hi: np.ndarray,
             null: np.ndarray) -> pa.Array:
    """MIN / MAX over each frame: dense order codes of the values, then a sparse table."""
    n = len(values)
    codes = np.asarray(pc.rank(values, sort_keys="ascending",
                               tiebreaker="dense").to_numpy(zero_copy_only=False),
                       dtype=np.int64)
    sentinel = n + 2 if func == "min" else -1
    codes = np.where(valid, codes, sentinel)
    pick = np.minimum if func == "min" else np.maximum
    table = [codes]
    width = 1
    while 2 * width <= n:
        prev = table[-1]
        table.append(pick(prev[:-width], prev[width:]))
        width *= 2
    length = np.maximum(hi - lo + 1, 1)
    level = np.floor(np.log2(length)).astype(np.int64)
    best = np.empty(n, dtype=np.int64)
    for k in np.unique(level):
        rows_k = np.flatnonzero(level == k)
        span = 1 << int(k)
        best[rows_k] = pick(table[k][lo[rows_k]], table[k][hi[rows_k] - span + 1])
    # The value of each code: any row holding it.
    by_code = np.zeros(n + 3, dtype=np.int64)
    by_code[codes[valid]] = np.flatnonzero(valid)
    taken = values.take(pa.array(by_code[np.clip(best, 0, n + 2)]))
    return pc.if_else(pa.array(null), pa.nulls(n, values.type), taken)
