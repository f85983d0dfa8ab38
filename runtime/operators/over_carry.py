"""What an OVER aggregate with UNBOUNDED PRECEDING keeps of the rows it has emitted.

Every frame of such an aggregate starts at its partition's first row, so the rows already
emitted would have to stay for ever (and be summed again at every watermark: quadratic work
and memory growing with the stream). Instead each partition key keeps, as Flink keeps one
accumulator per key, the aggregates' parts over its emitted rows (COUNT; SUM and AVG as a wide
sum and a count, DECIMAL ones too; MIN / MAX; FIRST_VALUE / LAST_VALUE), and only its last n
rows for LAG(x, n).
A frame's value is then its parts over the rows still held combined with the key's carry.

DISTINCT aggregates (COUNT / SUM / AVG / MIN / MAX) have no part: a key keeps, of its emitted
rows, each value's first row (``first_rows``), as Flink's MapView keeps each distinct value
once; those rows are "folded" (the other aggregates' carry holds them already) and count only
for the DISTINCT ones.
Aggregates without a fixed-size part (LISTAGG, ARRAY_AGG, Python aggregates) keep every row,
as before: ``carry_parts`` gives None.
"""

from __future__ import annotations

import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.plan.expressions import AggCall
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.kernels import kernel_for
from sqlengine.runtime.operators.partials import sum_type
from sqlengine.runtime.operators.python_aggregate import is_python
from sqlengine.runtime.operators.rank import dense_ids

_SIMPLE = ("count_star", "count", "first_value", "last_value")


def carry_parts(aggs: tuple[AggCall, ...]) -> tuple[tuple[AggCall, ...], ...] | None:
    """Per aggregate, the aggregates a key's carry holds for it (LAG: none; it keeps its last
    n rows), or None when some aggregate needs every row."""
    out: list[tuple[AggCall, ...]] = []
    for a in aggs:
        if is_python(a):
            return None
        if a.distinct and a.func in ("count", "sum", "avg", "min", "max"):
            out.append(())  # (its values' first rows stay: first_rows)
        elif a.distinct:
            return None
        elif a.func == "lag":
            out.append(())
        elif a.func in _SIMPLE:
            out.append((a,))
        elif a.func in ("min", "max"):
            if not (numeric_or_time(a.type) or pa.types.is_string(a.type)
                    or pa.types.is_large_string(a.type)):
                return None
            out.append((a,))
        elif a.func in ("sum", "avg"):
            arg = a.args[0].dtype
            if not (pa.types.is_integer(arg) or pa.types.is_floating(arg)
                    or pa.types.is_decimal(arg)):
                return None
            total = AggCall("sum", a.args, sum_type(arg), filter=a.filter)
            out.append((total,) if a.func == "sum" else
                       (total, AggCall("count", a.args, T.BIGINT, filter=a.filter)))
        else:
            return None
    return tuple(out)


def first_rows(aggs: tuple[AggCall, ...], data: pa.RecordBatch, pids: np.ndarray
               ) -> np.ndarray:
    """Per row of ``data`` (in order within each partition ``pids``): whether it is the first
    row of its partition counted by some DISTINCT aggregate with its value."""
    n = data.num_rows
    out = np.zeros(n, dtype=bool)
    for a in aggs:
        if not a.distinct:
            continue
        values = evaluate(a.args[0], data)
        valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False))
        if a.filter is not None:
            valid &= np.asarray(pc.fill_null(evaluate(a.filter, data), False)
                                .to_numpy(zero_copy_only=False))
        rows = np.flatnonzero(valid)
        if not len(rows):
            continue
        ids = dense_ids([pa.array(pids[rows]), values.take(pa.array(rows))], len(rows))
        _, first = np.unique(ids, return_index=True)
        out[rows[first]] = True
    return out


def lag_rows(aggs: tuple[AggCall, ...]) -> int:
    """How many of its last rows a key keeps: the largest LAG offset (0 without LAG)."""
    return max((int(a.args[1].value) for a in aggs if a.func == "lag"), default=0)  # type: ignore[attr-defined]


def decimal_average(total: pa.Array, count: pa.Array, t: pa.DataType) -> pa.Array:
    """AVG of DECIMAL values from their sum and count, as over a frame (window_functions)."""
    n = pc.fill_null(count, 0).to_numpy(zero_copy_only=False)
    empty = n == 0
    res = kernel_for("divide")([total, pa.array(np.where(empty, 1, n)).cast(
        pa.decimal128(20, 0))], [None, None], t)
    return pc.if_else(pa.array(empty), pa.nulls(len(n), t), res)


def numeric_or_time(t: pa.DataType) -> bool:
    """MIN / MAX kept as numbers (numbers, timestamps, dates)."""
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_timestamp(t) \
        or pa.types.is_date(t)


def carry_rows(carry: pa.Table | None, keys: list[pa.Array], n: int) -> np.ndarray:
    """For each of n rows (their partition values ``keys``), its key's row in ``carry``, or
    -1 when the key has none."""
    if carry is None or carry.num_rows == 0:
        return np.full(n, -1, dtype=np.int64)
    m = carry.num_rows
    cols = [pa.concat_arrays([carry.column(f"p{i}").combine_chunks(), k.cast(
        carry.schema.field(f"p{i}").type)]) for i, k in enumerate(keys)]
    ids = dense_ids(cols, m + n)
    where = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    where[ids[:m]] = np.arange(m)
    return where[ids[m:]]


def carried(carry: pa.Table | None, name: str, rows: np.ndarray, t: pa.DataType) -> pa.Array:
    """Column ``name`` of the carry for each row (NULL where its key has no carry)."""
    if carry is None or carry.num_rows == 0:
        return pa.nulls(len(rows), t)
    mask = rows < 0
    picked = carry.column(name).combine_chunks().take(
        pa.array(np.where(mask, 0, rows), mask=mask))
    return picked if picked.type == t else picked.cast(t)


def combine(part: AggCall, old: pa.Array, new: pa.Array) -> pa.Array:
    """A part over earlier rows (``old``, NULL: none) and over later ones (``new``)."""
    if part.func in ("count_star", "count"):
        return pc.add(pc.fill_null(old, 0), pc.fill_null(new, 0))
    if part.func == "sum" and pa.types.is_decimal(new.type):
        t = new.type
        zero = pa.scalar(decimal.Decimal(0), t)
        wide = pa.decimal256(t.precision, t.scale)
        total = pc.add(pc.fill_null(old, zero).cast(wide), pc.fill_null(new, zero).cast(wide))
        both = pc.and_(pc.is_null(old), pc.is_null(new))
        return pc.if_else(both, pa.nulls(len(new), t), total.cast(t))
    if part.func == "sum":
        t = new.type
        o = pc.fill_null(old, pa.scalar(0, t)).to_numpy(zero_copy_only=False)
        w = pc.fill_null(new, pa.scalar(0, t)).to_numpy(zero_copy_only=False)
        mask = np.asarray(pc.and_(pc.is_null(old), pc.is_null(new)).to_numpy(
            zero_copy_only=False))
        with np.errstate(over="ignore"):
            return pa.array(o + w, type=t, mask=mask)  # (integers wrap, as each sum does)
    if part.func == "min":
        return pc.min_element_wise(old, new, skip_nulls=True)
    if part.func == "max":
        top = pc.max_element_wise(old, new, skip_nulls=True)
        if pa.types.is_floating(top.type):  # (a NaN is above every number; Arrow skips it)
            nan = pc.or_(pc.fill_null(pc.is_nan(old), False), pc.fill_null(pc.is_nan(new), False))
            top = pc.if_else(nan, pa.scalar(float("nan"), top.type), top)
        return top
    if part.func == "first_value":
        return pc.coalesce(old, new)
    return pc.coalesce(new, old)  # last_value
