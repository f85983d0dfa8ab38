"""Non-windowed Top-N and updating GROUP BY on Structured Streaming: arbitrary stateful
operators (``applyInPandasWithState``) keeping each key's exact state across micro-batches
and emitting a changelog, as the native runtime's Rank and GroupAggregate operators do.

Spark's own operators cannot: it ranks no stream, and its streaming aggregations emit updates
(complete / update mode) that it joins with nothing and feeds into no other aggregation. Here
every stateful operator of ours runs in append mode, its rows carrying their kind in the
``$row_kind`` column (the native runtime's, runtime/elements.py: +I, -U, +U, -D) through
filters and projections to the next operator (a GROUP BY of a changelog retracts what a -U /
-D row takes back) and to the driver, which applies the changelog (runtime/changelog.py).

- Top-N (ROW_NUMBER() OVER (PARTITION BY k ORDER BY ...) <= N, over an insert-only input):
  each key keeps its top N rows (no other row can come back), each with its arrival number
  (of equal ORDER BY values the earlier row ranks first, as the native operator ranks them);
  a micro-batch that changes a key's top N retracts the rows (and row numbers) that left it
  and inserts those that came.
- GROUP BY: each key keeps its row count and one accumulator per aggregate: COUNT, SUM, AVG
  (a sum and a count, finished by the native runtime's own arithmetic), MIN / MAX (a multiset
  of the values, so that a retraction can take the extreme back), a Python aggregate function's
  own accumulator (runtime/operators/python_aggregate.py, as the native GroupAggregateOperator
  keeps it: accumulate / retract per row, get_value for the result; a vectorised one's is the
  key's rows; with DISTINCT, beside it the count of each distinct argument row). A changed
  result is emitted as -U old, +U new (+I for a new key, -D when a key's rows are all
  retracted).
"""

from __future__ import annotations

import pickle
import time
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine.errors import NotSupportedError
from sqlengine.runtime.elements import DELETE, INSERT, ROWKIND, UPDATE_AFTER, UPDATE_BEFORE
from sqlengine.runtime.spark.stateful_join import apply_stateful

if TYPE_CHECKING:
    from sqlengine.optimizer.specs import GlobalAggregateSpec, GroupAggregateSpec
    from sqlengine.optimizer.specs_windows import (
        SessionAggregateSpec,
        TopNSpec,
        WindowAggregateSpec,
    )
    from sqlengine.runtime.spark.streaming import SparkStreamingJob

KIND = ROWKIND
_RETRACTING = (UPDATE_BEFORE, DELETE)
_STATE = "blob BINARY"
# The aggregates a key's state can keep exactly, with retractions.
_FUNCS = ("count_star", "count", "sum", "avg", "min", "max")


# Keys go to this many buckets, each one call of the stateful function with the state of its
# keys (a call per key would cost Spark a pandas frame and a state row per key).
_BUCKETS = 64


def _bucketed(df: Any, keys: list[str]) -> Any:
    """``df`` with the bucket of its ``keys`` (column BUCKET, to group by), its integer
    columns made exact for pandas (see :func:`_exact`)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ByteType, IntegerType, LongType, ShortType

    bucket = F.pmod(F.hash(*keys), F.lit(_BUCKETS)) if keys else F.lit(0)
    # Spark hands a pandas function an integer column holding a NULL as float64, rounding
    # values beyond 2**53: such a column goes as its values with 0 for NULL (int64 in pandas)
    # and a flag column of its NULLs, put back together by _exact.
    integral = [f.name for f in df.schema.fields if f.nullable and
                isinstance(f.dataType, LongType | IntegerType | ShortType | ByteType)]
    if integral:
        df = df.select(*[F.coalesce(F.col(c), F.lit(0).cast(df.schema[c].dataType)).alias(c)
                         if c in integral else F.col(c) for c in df.columns],
                       *[F.col(c).isNull().alias(_NULLS + c) for c in integral])
    return df.withColumn(BUCKET, bucket)


# (a name the RocksDB state store's Avro key schema takes: transformWithStateInPandas)
BUCKET = "_sqlengine_bucket"


_NULLS = "$nulls:"


def _batch(parts: list[Any]) -> Any:
    """A call's frames as one, its integer columns exact (_exact)."""
    import pandas as pd

    return _exact(parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True))


def _exact(batch: Any) -> Any:
    """``batch`` with each integer column _bucketed split put back: Python ints and None
    (object dtype, which pandas keeps exact and Spark converts back exactly)."""
    flags = [c for c in batch.columns if c.startswith(_NULLS)]
    if not flags:
        return batch
    batch = batch.copy()
    for flag in flags:
        name = flag[len(_NULLS):]
        values = batch[name].to_numpy().astype(object)
        values[batch[flag].to_numpy(dtype=bool)] = None
        batch[name] = values
        if batch[name].dtype != object:
            batch[name] = batch[name].astype(object)
    return batch.drop(columns=flags)


def _frame(batch: pa.RecordBatch, columns: list[str]) -> Any:
    """A batch of our operator's rows as the pandas frame Spark takes back (columns renamed;
    integers exact beside NULLs; times as datetime64[us])."""
    table = pa.Table.from_batches([batch]).rename_columns(columns)
    frame = table.to_pandas(integer_object_nulls=True)
    for f in table.schema:
        if pa.types.is_timestamp(f.type):
            frame[f.name] = frame[f.name].astype("datetime64[us]")
    return frame


def _keys(batch: Any, names: list[str]) -> list[tuple[Any, ...]]:
    """Each row's key (NULL as None, so that equal keys are equal dict keys)."""
    if not names:
        return [()] * len(batch)
    return [tuple(None if _null(v) else v for v in k)
            for k in zip(*(batch[n].tolist() for n in names))]


def top_n(job: SparkStreamingJob, op: TopNSpec, df: Any) -> Any:
    """ROW_NUMBER() <= N per key over an insert-only stream (see the module's note)."""
    from pyspark.sql.types import ByteType, LongType, StructField, StructType

    if op.keep:
        msg = (f"{op.label()}: a deduplication keeps, of rows with equal times, the first or "
               "the last to arrive, an order Spark does not keep between the rows of a "
               "micro-batch; it has no Spark Structured Streaming translation yet; use "
               "'execution.runtime-mode' = 'batch' or the native runtime")
        raise NotSupportedError(msg)
    if KIND in df.columns:
        msg = f"{op.label()} over an updating input has no Spark Structured Streaming translation"
        raise NotSupportedError(msg)
    parts = [job._expr(e) for e in op.partition]
    orders = [job._expr(k.expr) for k in op.order]
    if any(c is None for c in parts + orders):
        msg = (f"{op.label()}: a PARTITION BY or ORDER BY expression Spark evaluates "
               "differently has no Structured Streaming translation yet")
        raise NotSupportedError(msg)
    data = list(df.columns)
    # (copies of an event time without its watermark metadata: a stream has one event time)
    from pyspark.sql import functions as F

    keyed = df.select(*[F.col(c).alias(c, metadata={}) for c in data],
                      *[c.alias(f"$k{i}", metadata={}) for i, c in enumerate(parts)],
                      *[c.alias(f"$o{i}", metadata={}) for i, c in enumerate(orders)])
    order = [(len(data) + i, k.ascending, k.nulls_first) for i, k in enumerate(op.order)]
    limit, ranked = op.limit, op.output_rank
    width = len(data)
    # (its rows are changes, not an event-time stream: no watermark metadata)
    fields = [StructField(f.name, f.dataType, f.nullable) for f in df.schema.fields]
    if ranked:
        fields.append(StructField(f"c{width}", LongType()))
    out_schema = StructType([*fields, StructField(KIND, ByteType())])

    columns = [*data, *[f"$o{i}" for i in range(len(orders))]]
    key_columns = [f"$k{i}" for i in range(len(parts))]

    def update(bucket: tuple[Any, ...], frames: Iterator[Any], state: Any) -> Iterator[Any]:
        # (Python tuples per key, not pandas operations: keys are many and small)
        import pandas as pd

        parts_ = list(frames)
        batch = _batch(parts_)
        keys_state: dict[tuple[Any, ...], tuple[list[Any], int]] = \
            pickle.loads(state.get[0]) if state.exists else {}
        arrived: dict[tuple[Any, ...], list[Any]] = {}
        for k, r in zip(_keys(batch, key_columns),
                        zip(*(batch[c].tolist() for c in columns))):
            arrived.setdefault(k, []).append(r)
        changes: list[tuple[int, Any, int]] = []
        for k, rows in arrived.items():
            old, seq = keys_state.get(k, ([], 0))
            entries = old + [(seq + i, r) for i, r in enumerate(rows)]
            seq += len(rows)
            # Stable sorts, the last ORDER BY key first, over the arrival order.
            for at, ascending, nulls_first in reversed(order):
                nulls = [e for e in entries if _null(e[1][at])]
                values = [e for e in entries if not _null(e[1][at])]
                values.sort(key=lambda e, at=at: e[1][at], reverse=not ascending)
                entries = nulls + values if nulls_first else values + nulls
            top = entries[:limit] if limit is not None else entries
            after = {(e[0], r) for r, e in enumerate(top, 1)}
            before = {(e[0], r) for r, e in enumerate(old, 1)}
            changes += [(r, e[1], DELETE) for r, e in enumerate(old, 1)
                        if (e[0], r) not in after]
            changes += [(r, e[1], INSERT) for r, e in enumerate(top, 1)
                        if (e[0], r) not in before]
            keys_state[k] = (top, seq)
        state.update((pickle.dumps(keys_state),))
        if not changes:
            return
        out = {c: _series([ch[1][i] for ch in changes], batch[c].dtype)
               for i, c in enumerate(data)}
        if ranked:
            out[f"c{width}"] = pd.Series([ch[0] for ch in changes], dtype="int64")
        out[KIND] = pd.Series([ch[2] for ch in changes], dtype="int8")
        yield pd.DataFrame(out)

    return apply_stateful(job, _bucketed(keyed, key_columns), update, out_schema)


def _checked(op: GroupAggregateSpec | GlobalAggregateSpec) -> None:
    for a in op.aggs:
        if a.func.startswith("py:"):  # (any Python aggregate function, DISTINCT too)
            if getattr(op, "input_updating", False):  # (as the native operator refuses it)
                from sqlengine.runtime.operators.python_aggregate import PythonAggregate

                PythonAggregate(a).require("retract", "an updating input (with "
                                           "retractions) needs")
            continue
        if a.func not in _FUNCS or (a.distinct and a.func == "count_star"):
            msg = (f"the aggregate {a.sql()} in a GROUP BY of a join, of a changelog or with "
                   "a Python aggregate function has no Spark Structured Streaming "
                   "translation yet (COUNT, SUM, AVG, MIN, MAX, with or without DISTINCT, "
                   "and Python aggregate functions have)")
            raise NotSupportedError(msg)


def _specs(op: GroupAggregateSpec | GlobalAggregateSpec, exprs: list[Any],
           slots: list[tuple[int | None, int | None]]) -> list[tuple[Any, ...]]:
    """Each aggregate: (function, argument slot, FILTER slot, argument type, result type,
    the call if a Python aggregate function's, whose arguments are the slots from the
    argument slot on). COUNT / SUM / AVG (DISTINCT x) are 'distinct_count'...: their state
    the multiset of the values, as MIN / MAX's."""
    out = op.schema.to_arrow()
    n_keys = len(op.keys)
    return [(f"distinct_{a.func}" if a.distinct and a.func in ("count", "sum", "avg")
             else a.func, s, f, exprs[s].dtype if s is not None else None,
             out.field(n_keys + j).type, a if a.func.startswith("py:") else None)
            for j, (a, (s, f)) in enumerate(zip(op.aggs, slots))]


def group_aggregate(job: SparkStreamingJob,
                    op: GroupAggregateSpec | GlobalAggregateSpec | WindowAggregateSpec,
                    df: Any, then: list[tuple[list[Any], Any]] | None = None,
                    expire_at: int | None = None) -> Any:
    """A GROUP BY emitting its changes (see the module's note); with ``then`` (stages:
    filters and projections, then a GROUP BY of the changes before them) all in one stateful
    operator (one applyInPandasWithState, as Spark allows one per query; a chain could now
    be operators of their own, later ones transformWithStateInPandas: stateful_join.py):
    all keys in one bucket, each GROUP BY over the changes of the one before as our own
    kernels compute the operators between.

    ``expire_at``: the key holding a processing-time window's end; a key whose window the
    wall clock has passed leaves the state after its changes (no row read later, its
    PROCTIME() later too, falls in that window)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ByteType, StructField, StructType, _parse_datatype_string

    from sqlengine.runtime.spark import arrow_ops
    from sqlengine.runtime.spark.aggregates import agg_inputs
    from sqlengine.runtime.spark.expressions import ddl

    _checked(op)
    exprs, slots = agg_inputs(op.aggs, list(op.keys))
    prepared, names = job._prepare(df, exprs)
    changelog = KIND in prepared.columns
    n_keys = len(op.keys)
    # (a stream has one event time: the copies are plain values)
    picked = prepared.select(*[F.col(n).alias(n, metadata={}) for n in names],
                             *([KIND] if changelog else []))
    aggs = _specs(op, exprs, slots)
    arg_names = {s: names[s] for _, s, _, _, _, py in aggs if s is not None and py is None}
    flag_names = {f: names[f] for _, _, f, *_ in aggs if f is not None}
    # (a Python aggregate's arguments: Arrow arrays of their own types, as the native kernels
    # hand them over)
    py_args = {s + i: (names[s + i], exprs[s + i].dtype) for _, s, _, _, _, py in aggs
               if py is not None and s is not None for i in range(len(py.args))}
    shipped_aggs = arrow_ops.ship([a for a in op.aggs if a.func.startswith("py:")])
    key_names = names[:n_keys]
    first_out = op.schema.to_arrow()
    # (each next stage: the operators between, the GROUP BY's inputs and aggregates, its
    # key count, the schema of the changes it takes)
    stages = []
    before = first_out
    for between, last in then or []:
        _checked(last)
        exprs2, slots2 = agg_inputs(last.aggs, list(last.keys))
        stages.append((between, exprs2, _specs(last, exprs2, slots2), len(last.keys), before))
        before = last.schema.to_arrow()
    shipped = arrow_ops.ship([x for between, last in then or []
                              for x in (*between, *agg_inputs(last.aggs, list(last.keys))[0],
                                        *last.aggs)])
    second = bool(stages)
    out = (then[-1][1] if then else op).schema.to_arrow()
    spark_out = _parse_datatype_string(ddl(out))
    out_schema = StructType([*spark_out.fields, StructField(KIND, ByteType())])
    columns = [f"c{i}" for i in range(len(out))]

    def update(bucket: tuple[Any, ...], frames: Iterator[Any], state: Any) -> Iterator[Any]:
        import pandas as pd

        parts = list(frames)
        batch = _batch(parts)
        groups, nexts = pickle.loads(state.get[0]) if state.exists else \
            ({}, [{} for _ in stages])
        kinds = batch[KIND].tolist() if changelog else [INSERT] * len(batch)
        values = {s: batch[n].tolist() for s, n in arg_names.items()}
        flags = {f: [v is True or v == 1 for v in batch[n].tolist()]
                 for f, n in flag_names.items()}
        raw = list(zip(*(batch[n].tolist() for n in key_names))) if key_names \
            else [()] * len(batch)
        if shipped_aggs:
            arrow_ops.install(shipped_aggs)
        arrays = {s: pa.Array.from_pandas(batch[n]).cast(t) for s, (n, t) in py_args.items()}
        changes = _changes(groups, aggs, _keys(batch, key_names), raw, values, flags, kinds,
                           arrays)
        if stages and changes:
            arrow_ops.install(shipped)
        for groups_n, stage in zip(nexts, stages):
            if not changes:
                break
            changes = _then(groups_n, stage, changes)
        if expire_at is not None:
            now = time.time_ns()  # (window ends: UTC, the session's time zone)
            for k in [k for k in groups if k[expire_at] is not None and
                      pd.Timestamp(k[expire_at]).value <= now]:
                del groups[k]
        state.update((pickle.dumps((groups, nexts)),))
        if not changes:
            return
        width = len(changes[0][0])
        if second:  # (Python values: Arrow types them)
            frame = pa.table([pa.array([c[0][i] for c in changes] if i < width else
                                       [c[1][i - width] for c in changes], f.type)
                              for i, f in enumerate(out)], names=columns
                             ).to_pandas(integer_object_nulls=True)
        else:
            frame = pd.DataFrame({columns[i]: _series([c[0][i] for c in changes],
                                                      batch[n].dtype)
                                  for i, n in enumerate(key_names)})
            for j in range(len(aggs)):
                frame[columns[n_keys + j]] = pd.Series([c[1][j] for c in changes],
                                                       dtype=object)
        frame[KIND] = pd.Series([c[2] for c in changes], dtype="int8")
        yield frame

    keyed = _bucketed(picked, key_names if then is None else [])
    return apply_stateful(job, keyed, update, out_schema)


def _changes(groups: dict[tuple[Any, ...], Any], aggs: list[tuple[Any, ...]],
             keys: list[tuple[Any, ...]], raw: list[tuple[Any, ...]],
             values: dict[int, list[Any]], flags: dict[int, list[bool]], kinds: list[int],
             arrays: dict[int, pa.Array]) -> list[tuple[tuple[Any, ...], tuple[Any, ...], int]]:
    """The rows (key, kind) into each key's state in ``groups``; the changes of the results:
    (the key as shown, the aggregates, the row kind). A Python aggregate's arguments are in
    ``arrays``."""
    from sqlengine.runtime.operators.python_aggregate import PythonAggregate

    rows_of: dict[tuple[Any, ...], list[int]] = {}
    for i, k in enumerate(keys):
        rows_of.setdefault(k, []).append(i)
    entries = {k: groups.get(k) or (0, [_empty(func, py) for func, *_, py in aggs], None,
                                     raw[at[0]])
               for k, at in rows_of.items()}
    pys = {j: PythonAggregate(spec[5]) for j, spec in enumerate(aggs) if spec[5] is not None}
    for j, py in pys.items():
        _python_update(py, j, aggs[j], entries, rows_of, arrays, flags, kinds)
    changes: list[tuple[tuple[Any, ...], tuple[Any, ...], int]] = []
    for k, at in rows_of.items():
        count, accs, last, shown = entries[k]
        signs = [-1 if kinds[i] in _RETRACTING else 1 for i in at]
        count += sum(signs)
        for j, (func, s, f, dtype, _, py) in enumerate(aggs):
            if py is not None:
                continue
            accs[j] = _accumulate(
                func, accs[j], [values[s][i] for i in at] if s is not None else None,
                [flags[f][i] for i in at] if f is not None else None, signs, dtype)
        measures = tuple(_python_value(pys[j], acc) if j in pys else
                         _result(func, acc, dtype, t)
                         for j, ((func, _, _, dtype, t, _), acc) in enumerate(zip(aggs, accs))
                         ) if count > 0 else None
        groups[k] = (count, accs, measures, shown)
        if measures == last:
            continue
        if last is not None:
            changes.append((shown, last, UPDATE_BEFORE if measures is not None else DELETE))
        if measures is not None:
            changes.append((shown, measures, UPDATE_AFTER if last is not None else INSERT))
    return changes


def _then(groups: dict[tuple[Any, ...], Any], stage: tuple[Any, ...],
          changes: list[tuple[tuple[Any, ...], tuple[Any, ...], int]]
          ) -> list[tuple[tuple[Any, ...], tuple[Any, ...], int]]:
    """A GROUP BY's ``changes`` (rows of the stage's schema) through the filters and
    projections between, our own kernels computing them, into the stage's GROUP BY."""
    import pyarrow.compute as pc

    from sqlengine.optimizer.specs import FilterSpec
    from sqlengine.runtime.evaluate import evaluate
    from sqlengine.runtime.operators.stateless import ProjectOperator

    between, exprs, aggs, n_keys, schema = stage
    width = len(changes[0][0])
    # (a NULL key as Spark handed it over may be NaN: None here)
    batch = pa.RecordBatch.from_arrays(
        [pa.array([None if _null(c[0][i]) else c[0][i] for c in changes] if i < width else
                  [c[1][i - width] for c in changes], f.type) for i, f in enumerate(schema)],
        schema=schema)
    kinds = pa.array([c[2] for c in changes], pa.int8())
    for op in between:
        if isinstance(op, FilterSpec):
            mask = pc.fill_null(evaluate(op.predicate, batch), False)
            batch, kinds = batch.filter(mask), kinds.filter(mask)
        else:
            (batch,) = ProjectOperator(op.exprs, op.schema.to_arrow()).process_batch(batch)
    if not batch.num_rows:
        return []
    (computed,) = ProjectOperator(tuple(exprs), pa.schema(
        [pa.field(f"c{i}", e.dtype) for i, e in enumerate(exprs)])).process_batch(batch)
    cols = [computed.column(i).to_pylist() for i in range(len(exprs))]
    raw = list(zip(*cols[:n_keys])) if n_keys else [()] * batch.num_rows
    keys = [tuple(v for v in k) for k in raw]
    values = {s: cols[s] for _, s, *_ in aggs if s is not None}
    flags = {f: [v is True for v in cols[f]] for _, _, f, *_ in aggs if f is not None}
    arrays = {i: computed.column(i) for i in range(len(exprs))}
    return _changes(groups, aggs, keys, raw, values, flags, kinds.to_pylist(), arrays)


def _python_update(py: Any, j: int, spec: tuple[Any, ...],
                   entries: dict[tuple[Any, ...], Any], rows_of: dict[tuple[Any, ...], list[int]],
                   arrays: dict[int, pa.Array], flags: dict[int, list[bool]], kinds: list[int]
                   ) -> None:
    """A Python aggregate function's rows of the batch, accumulated (retracted) into each
    key's accumulator, the keys in one call of the native kernel (runtime/operators/
    python_aggregate.py), as the native GroupAggregateOperator does: rows FILTER leaves out
    skipped; with DISTINCT a row counts when its first copy comes or its last goes."""
    import numpy as np

    _, s, f, _, _, call = spec
    args = [arrays[s + i] for i in range(len(call.args))] if s is not None else []
    rows = list(zip(*(a.to_pylist() for a in args))) if call.distinct else []
    order: list[int] = []
    bounds = [0]
    state = np.empty(len(rows_of), dtype=object)
    for g, (k, at) in enumerate(rows_of.items()):
        held = entries[k][1][j]
        state[g] = held[0] if call.distinct else held
        for i in at:
            if f is not None and not flags[f][i]:
                continue
            if call.distinct:
                seen = held[1]
                before = seen[rows[i]]
                after = before + (-1 if kinds[i] in _RETRACTING else 1)
                if after > 0:
                    seen[rows[i]] = after
                else:
                    del seen[rows[i]]
                if (before != 0) if after > before else (after != 0):
                    continue
            order.append(i)
        bounds.append(len(order))
    signs = np.array([-1 if kinds[i] in _RETRACTING else 1 for i in order], dtype=np.int64)
    taken = pa.array(order, pa.int64())
    py.update(state, np.arange(len(rows_of)), [a.take(taken) for a in args],
              np.array(bounds, dtype=np.int64), signs)
    for g, k in enumerate(rows_of):
        if call.distinct:
            entries[k][1][j][0] = state[g]
        else:
            entries[k][1][j] = state[g]


def _python_value(py: Any, acc: Any) -> Any:
    """A Python aggregate's result from its accumulator (DISTINCT: beside its counts)."""
    if py.call.distinct:
        acc = acc[0]
    return py.values([acc])[0].as_py()


def _empty(func: str, py: Any = None) -> Any:
    if py is not None:  # (created by its first row; DISTINCT: with its rows' counts)
        return [None, Counter()] if py.distinct else None
    if func in ("count_star", "count"):
        return 0
    if func in ("sum", "avg"):
        return [0, 0]  # (the sum of the values, how many)
    return Counter()  # min / max, DISTINCT: the multiset of the values


def _series(values: list[Any], dtype: Any) -> Any:
    """``values`` as a pandas column of the type Spark handed them over in (a column of
    earlier batches' values may need another: then plain objects)."""
    import pandas as pd

    try:
        return pd.Series(values, dtype=dtype)
    except (TypeError, ValueError):
        return pd.Series(values, dtype=object)


def _null(v: Any) -> bool:
    import pandas as pd

    return v is None or (not isinstance(v, str | bytes) and bool(pd.isna(v)))


def _accumulate(func: str, acc: Any, values: list[Any] | None, flags: list[bool] | None,
                signs: list[int], dtype: pa.DataType | None) -> Any:
    integral = dtype is not None and pa.types.is_integer(dtype)
    for i, sign in enumerate(signs):
        if flags is not None and not flags[i]:
            continue
        if func == "count_star":
            acc += sign
            continue
        v = values[i]  # type: ignore[index]
        if _null(v):
            continue
        if integral:
            v = int(v)
        if func == "count":
            acc += sign
        elif func in ("sum", "avg"):
            acc[0] += v if sign > 0 else -v
            acc[1] += sign
        else:
            acc[v] += sign
            if acc[v] <= 0:
                del acc[v]
    return acc


def _result(func: str, acc: Any, dtype: pa.DataType | None, t: pa.DataType) -> Any:
    from sqlengine.runtime.operators.partials import _sum_or_avg, partial_sum_type

    if func in ("count_star", "count"):
        return acc
    if func == "distinct_count":
        return len(acc)
    if func in ("distinct_sum", "distinct_avg"):  # (over the distinct values)
        func, acc = func.removeprefix("distinct_"), [sum(acc), len(acc)]
    if func in ("sum", "avg"):
        total, n = acc
        typed = pa.array([total if n > 0 else None], partial_sum_type(dtype))  # type: ignore[arg-type]
        return _sum_or_avg(func, typed, pa.array([n], pa.int64()), t)[0].as_py()
    if not acc:
        return None
    return min(acc) if func == "min" else max(acc)


# A watermark this far on is the end-of-input row's (runtime/spark/streaming.py _SENTINEL_MS:
# 9999-01-01, less its source's WATERMARK bound): every real session has ended by it.
_END_OF_INPUT_MS = 253_370_764_800_000 - 10 ** 12


def session_aggregate(job: SparkStreamingJob, op: SessionAggregateSpec, df: Any) -> Any:
    """SESSION windows over rows some of which are behind the watermark, by the native
    runtime's own SessionAggregateOperator (runtime/operators/window.py): keys go to buckets,
    each bucket's operator state kept across micro-batches. Its input rows are the session
    TVF's, each with the watermark its source emitted before it (``$wm``) and its position
    in the source (``$seq``): the operator takes them in that order and judges each against
    its own watermark, as the native runtime does (a row behind the watermark starts a
    session of its own where its key's session has fired, or is dropped and counted as late;
    Spark's session_window would merge it into the fired session).

    A bucket's sessions are fired by the watermark of its rows (the latest row's: every row
    still to come carries a later one) and, at the end of the input, by Spark's: the
    end-of-input row moves Spark's watermark past every real session, and an event-time
    timeout calls each bucket once more. The end-of-input row itself is left out. Late
    rows are counted in the job's late counter."""
    import numpy as np
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout
    from pyspark.sql.types import StructType, _parse_datatype_string

    from sqlengine.runtime.elements import Watermark, data_part, with_meta
    from sqlengine.runtime.native.factory import build_operator
    from sqlengine.runtime.spark import arrow_ops
    from sqlengine.runtime.spark.expressions import ddl
    from sqlengine.runtime.spark.translate import SEQ, WM

    keys = [job._expr(e) for i, e in enumerate(op.keys) if i not in (op.start_pos,
                                                                         op.end_pos,
                                                                         op.time_pos)]
    if any(k is None for k in keys):
        msg = (f"{op.label()}: a PARTITION BY expression Spark evaluates differently has no "
               "Structured Streaming translation yet")
        raise NotSupportedError(msg)
    data = [c for c in df.columns if c not in (WM, SEQ)]
    # (one event time for Spark, which the timeout needs; the other copies plain values)
    timed = [c for c in data if df.schema[c].metadata.get("spark.watermarkDelayMs")
             is not None][:1]
    if not timed:
        msg = (f"{op.label()} over rows behind the watermark: its input keeps no event-time "
               "column, which Spark's event-time timeout (the end of input) needs")
        raise NotSupportedError(msg)
    # (the end-of-input row only moves Spark's watermark, at the source: its year 9999 has
    # no pandas time)
    picked = df.where(F.col(SEQ) < F.lit(np.iinfo(np.int64).max)).select(
        *[F.col(c) if c in timed else F.col(c).alias(c, metadata={}) for c in data],
        WM, SEQ, *[k.alias(f"$k{i}", metadata={}) for i, k in enumerate(keys)])
    out = op.schema.to_arrow()
    spark_out: StructType = _parse_datatype_string(ddl(out))
    columns = [f"c{i}" for i in range(len(out))]
    counter = job.late_counter
    shipped = arrow_ops.ship(op)
    types = _input_types(df, data)

    def update(bucket: tuple[Any, ...], frames: Iterator[Any], state: Any) -> Iterator[Any]:
        import numpy as np

        arrow_ops.install(shipped)
        operator = build_operator(op, {})
        if state.exists:
            operator.restore_state(pickle.loads(state.get[0]))
        before = operator.late_dropped
        emitted: list[pa.RecordBatch] = []
        if state.hasTimedOut:
            frames = iter(())
        parts = [f for f in frames if len(f)]
        if parts:
            batch = _batch(parts)
            batch = batch.sort_values(SEQ, kind="stable")
            arrays = [pa.Array.from_pandas(batch[c]).cast(t, safe=False)
                      for c, t in zip(data, types)]
            wm = batch[WM].to_numpy(dtype=np.int64)
            rows = with_meta(pa.RecordBatch.from_arrays(arrays, names=data), wm)
            emitted += operator.process_batch(rows)
            # (every row still to come carries this watermark or a later one)
            emitted += operator.process_watermark(Watermark(int(wm.max())))
        now = state.getCurrentWatermarkMs()
        if now >= _END_OF_INPUT_MS:
            emitted += operator.process_watermark(Watermark(int(now)))
        if operator.late_dropped > before:
            counter.add(operator.late_dropped - before)
        state.update((pickle.dumps(operator.snapshot_state()),))
        # (called again when Spark's watermark moves: at the latest, at the end of input)
        state.setTimeoutTimestamp(max(now, 0) + 1)
        for b in emitted:
            if b.num_rows:
                yield _frame(data_part(b), columns)

    if job.paths_to_output(job.vertex_id) > 1:
        msg = (f"{op.label()} over rows behind the watermark runs as our own stateful "
               "operator on Spark Structured Streaming (applyInPandasWithState, for its "
               "event-time timers), and this query reads its rows twice, which puts it in "
               "Spark's plan twice: Spark allows one; use the native runtime")
        raise NotSupportedError(msg)
    bucketed = _bucketed(picked, [f"$k{i}" for i in range(len(keys))]).groupBy(BUCKET)
    job.stateful_ops += 1
    job.apply_in_pandas = True
    return bucketed.applyInPandasWithState(update, spark_out, _STATE, "append",
                                           GroupStateTimeout.EventTimeTimeout)


def _input_types(df: Any, data: list[str]) -> list[pa.DataType]:
    """The Arrow types of ``data`` columns of ``df`` as our operators take them (times as
    TIMESTAMP(3))."""
    from pyspark.sql.pandas.types import to_arrow_type

    out = []
    for c in data:
        t = to_arrow_type(df.schema[c].dataType, timezone="UTC")
        out.append(pa.timestamp("ms") if pa.types.is_timestamp(t) else t)
    return out
