"""GroupAggregateOperator: unbounded GROUP BY with retractable accumulators, per batch.

Each batch is pre-aggregated with one Arrow group-by (signed by row kind); the distinct keys
of the batch are mapped to state slots through a dict (one lookup per distinct key, not per
row), and numpy accumulators are updated at those slots in one vectorised step. In streaming
mode the touched groups' changes are emitted as a changelog (+I, -U/+U, -D); in batch mode
the final groups are emitted at end of input.
"""

from __future__ import annotations

import decimal
import itertools
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.errors import NotSupportedError
from sqlengine.opaque_type import storage, typed_array
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.runtime import decimal_int64
from sqlengine.runtime.elements import (
    DELETE,
    INSERT,
    ROWKIND,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    conformed,
    data_part,
    signs,
)
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.intervals import month_intervals, months
from sqlengine.runtime.kernels import kernel_for
from sqlengine.runtime.native.partitioner import hash_rows
from sqlengine.runtime.operators.base import (
    Clock,
    NotCheckpointable,
    NotRescalable,
    Operator,
)
from sqlengine.runtime.operators.count_walk import walk_counts
from sqlengine.runtime.operators.distinct_counts import DistinctCounts
from sqlengine.runtime.operators.key_index import KeyIndex, python_keys
from sqlengine.runtime.operators.list_aggregates import (
    LIST_AGGREGATES,
    keeps_nulls,
    list_result,
)
from sqlengine.runtime.operators.partials import (
    lacks_first_last,
    nan_marks,
    sum_type,
    zero_of,
)
from sqlengine.runtime.operators.python_aggregate import (
    PythonAggregate,
    group_bounds,
    is_python,
    row_key,
)
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.spill import (
    MAX_LEVEL,
    PartitionedSpill,
    SpillDirectory,
    SpillsToDisk,
    aggregate_partitions,
)
from sqlengine.runtime.state.key_groups import owned

_OUT_CHUNK = 65536


def _accumulators(aggs: Sequence[AggCall], retract: bool) -> list[_Accumulator]:
    """An accumulator per call; COUNT/SUM/AVG(DISTINCT x) calls of one argument share one
    DistinctCounts, a count column each (their FILTERs differ)."""
    accs = [_Accumulator(a, retract=retract) for a in aggs]
    for j, acc in enumerate(accs):
        acc.index = j  # (its input columns' suffix: s<j>, ...)
    peers: dict[object, list[_Accumulator]] = {}
    for call, acc in zip(aggs, accs):
        if acc.distinct_counts is not None:
            peers.setdefault((call.args[0], str(acc.arg_type)), []).append(acc)
    for group in peers.values():
        if len(group) > 1:
            shared = DistinctCounts(group[0].arg_type, columns=len(group))
            for column, acc in enumerate(group):
                acc.distinct_counts, acc.distinct_column = shared, column
    return accs


class _Accumulator:
    """One aggregate's state over all slots; grows with the slot count."""

    # FIRST_VALUE, LAST_VALUE, LISTAGG, ARRAY_AGG over an updating input: each group's values
    # in arrival order (slot -> list); a retraction removes the value's earliest copy, as
    # Flink's *WithRetract functions do. Their DISTINCT forms keep a dict per slot instead
    # (value -> [value, its count], in the order the values came up from none; a list or
    # dict value keyed by its repr). (A class default: older checkpoints lack it.)
    ordered: dict[int, list[object] | dict[object, object]] | None = None

    def __init__(self, call: AggCall, retract: bool = False) -> None:
        self.call = call
        self.func = call.func
        # A Python aggregate (functions_python.udaf): one accumulator object per slot in
        # ``value`` (None until the group's first row), DISTINCT rows counted in ``distinct``.
        self.py = PythonAggregate(call) if is_python(call) else None
        if self.py is not None and retract:
            self.py.require("retract", "an updating input (with retractions) needs")
            self.py.retracting = True
        self.batch_args: list[pa.Array] = []
        self.batch_keep: pa.Array | None = None
        # ARRAY_AGG, JSON_OBJECTAGG and JSON_ARRAYAGG(... NULL ON NULL) gather NULL values
        # too: the hash aggregation gathers the rows' positions (NULL for a row the FILTER
        # leaves out), ``batch_values`` the batch's values they point at.
        self.batch_values: pa.Array | None = None
        self.keeps_nulls = keeps_nulls(call)
        arg_type = call.args[0].dtype if call.args else pa.int64()
        self.arg_type = arg_type
        # FIRST_VALUE / LAST_VALUE of a type Arrow's hash_first_last has no kernel for
        # (DECIMAL, ARRAY, MAP, ROW): the hash aggregation finds the row's position instead,
        # ``batch_values`` gives its value.
        self.by_position = call.func in ("first_value", "last_value") and \
            lacks_first_last(arg_type)
        self.object_values = pa.types.is_decimal(arg_type) or not (
            pa.types.is_integer(arg_type) or pa.types.is_floating(arg_type))
        # SUM/AVG of DECIMAL: exact unscaled integers (value * 10^scale) in an int64 array,
        # turned into Python ints only if a sum outgrows int64 (see add_unscaled).
        self.unscaled = pa.types.is_decimal(arg_type) and self.func in ("sum", "avg") and \
            not call.distinct and pa.types.is_decimal128(sum_type(arg_type))
        self.big = False
        self.count = np.zeros(0, dtype=np.int64)  # signed count of non-null inputs
        # MIN/MAX of numbers and times live in typed numpy arrays (times as int64).
        # MIN/MAX over an updating input keep every value with its multiplicity per group
        # (Flink's MinWithRetract/MaxWithRetract): slot -> value -> count.
        self.multiset: dict[int, dict[object, int]] | None = {} if retract and \
            self.func in ("min", "max") else None
        if retract and self.func in _RETRACTABLE_ORDERED and (
                not call.distinct or self.func in _LISTS):
            self.ordered = {}
            self.by_position = False
        elif retract and self.func in _ORDERED:
            raise NotSupportedError(f"{self.func.upper()} over an updating input (with "
                                    "retractions) is not supported yet")
        self.numeric = self.multiset is None and self.func in ("min", "max") and (
            pa.types.is_integer(arg_type) or pa.types.is_floating(arg_type)
            or pa.types.is_timestamp(arg_type) or pa.types.is_date(arg_type)
            or pa.types.is_duration(arg_type) or arg_type == T.INTERVAL_YEAR_MONTH)
        self.np_type = np.float64 if pa.types.is_floating(arg_type) else np.int64
        if self.func in ("sum", "avg"):
            self.value = self._empty(0)
        elif self.py is not None:
            self.value = np.empty(0, dtype=object)
        elif self.numeric:
            self.value = np.zeros(0, dtype=self.np_type)
        elif self.func in ("min", "max", *_ORDERED):
            self.value = np.empty(0, dtype=object)
        else:
            self.value = None
        # A Python aggregate's DISTINCT rows: (slot, value) -> multiplicity.
        self.distinct: dict[tuple[int, object], int] | None = {} if call.distinct and \
            self.py is not None else None
        # COUNT/SUM/AVG(DISTINCT x): each (slot, value)'s multiplicity, in numpy.
        self.distinct_counts = DistinctCounts(arg_type) if call.distinct and \
            self.py is None and self.func in ("count", "sum", "avg") else None
        # Its column in ``distinct_counts``, shared by the DISTINCT aggregates of one argument
        # (see _accumulators); the first of them updates it for all.
        self.distinct_column = 0
        # The batch's argument before its FILTER (the pairs' values for all the peers).
        self.batch_arg: pa.Array | None = None
        self.index = 0  # (its position among the operator's aggregates)

    @property
    def plain(self) -> bool:
        """Whether its state folds from Arrow's hash aggregation alone (no Python aggregate,
        DISTINCT counts, multiset of an updating input or gathered values per row)."""
        return self.py is None and self.distinct_counts is None and self.multiset is None \
            and self.ordered is None and not self.keeps_nulls and not self.by_position

    def _empty(self, n: int) -> np.ndarray:
        if self.unscaled and not self.big:
            return np.zeros(n, dtype=np.int64)
        if self.object_values:
            out = np.empty(n, dtype=object)
            out[:] = 0
            return out
        return np.zeros(n, dtype=np.float64 if pa.types.is_floating(self.arg_type)
                        else np.int64)

    def grow(self, n: int) -> None:
        extra = n - len(self.count)
        if extra <= 0:
            return
        self.count = np.concatenate([self.count, np.zeros(extra, dtype=np.int64)])
        if self.func in ("sum", "avg"):
            self.value = np.concatenate([self.value, self._empty(extra)])
        elif self.numeric:
            self.value = np.concatenate([self.value, np.zeros(extra, dtype=self.np_type)])
        elif self.func in ("min", "max", *_ORDERED) or self.py is not None:
            self.value = np.concatenate([self.value, np.empty(extra, dtype=object)])

    def add_unscaled(self, slots: np.ndarray, part: pa.Array) -> None:
        """Add a decimal128 column (no nulls), or an int64 column of unscaled values
        (:func:`_unscaled_sum_input`'s sums), to the unscaled sums at ``slots``."""
        values = part.to_numpy() if pa.types.is_int64(part.type) else \
            decimal_int64.unscaled_ints(part)
        if values.dtype == np.int64 and not self.big:
            old = self.value[slots]
            new = old + values
            if not (((old ^ new) & (values ^ new)) < 0).any():  # no int64 overflow
                self.value[slots] = new
                return
        if not self.big:
            self.big = True
            self.value = self.value.astype(object)
        self.value[slots] = self.value[slots] + values.astype(object)

    def adopt(self, old: _Accumulator, old_slots: np.ndarray, new_slots: np.ndarray) -> None:
        """Copy groups ``old_slots`` of another subtask's accumulator (a rescaled restore)
        into ``new_slots`` of this one (grown to hold them)."""
        self.count[new_slots] = old.count[old_slots]
        if old.value is not None:
            if old.big and not self.big:
                self.big = True
                self.value = self.value.astype(object)
            self.value[new_slots] = old.value[old_slots]
        mapping = dict(zip(old_slots.tolist(), new_slots.tolist()))
        if old.multiset is not None and self.multiset is not None:
            for o, n in mapping.items():
                if o in old.multiset:
                    self.multiset[n] = dict(old.multiset[o])
        if old.ordered is not None and self.ordered is not None:
            for o, n in mapping.items():
                if o in old.ordered:
                    kept = old.ordered[o]
                    self.ordered[n] = dict(kept) if isinstance(kept, dict) else list(kept)
        if old.distinct is not None and self.distinct is not None:
            for (o, v), c in old.distinct.items():
                if o in mapping:
                    self.distinct[(mapping[o], v)] = c
        if old.distinct_counts is not None and self.distinct_counts is not None and \
                len(old_slots) and old.distinct_column == 0:  # (once per shared instance)
            slot_map = np.full(int(old_slots.max()) + 1, -1, dtype=np.int64)
            slot_map[old_slots] = new_slots
            self.distinct_counts.adopt(old.distinct_counts, slot_map)

    def reset(self, slots: np.ndarray) -> None:
        self.count[slots] = 0
        if self.distinct_counts is not None and self.distinct_column == 0:
            self.distinct_counts.forget(slots)  # (once per shared instance)
        if self.multiset:  # (a group cleared at 0 rows keeps no values: see _split_at_empty)
            self.value[slots] = None
            for slot in slots.tolist():
                self.multiset.pop(slot, None)
        if self.func in ("sum", "avg"):
            self.value[slots] = 0
        elif self.func in _ORDERED or self.py is not None:
            self.value[slots] = None
            if self.ordered:
                for slot in slots.tolist():
                    self.ordered.pop(slot, None)
            if self.py is not None and self.distinct:
                gone = set(slots.tolist())
                for k in [k for k in self.distinct if k[0] in gone]:
                    del self.distinct[k]

    def clear(self, slots: np.ndarray) -> None:
        """Forget the groups at ``slots`` altogether (their state expired): as new."""
        self.reset(slots)
        if self.numeric:
            self.value[slots] = 0
        elif self.value is not None and self.value.dtype == object and \
                self.func not in ("sum", "avg"):
            self.value[slots] = None

    def result(self, slots: np.ndarray, rows: np.ndarray) -> pa.Array:
        """The aggregate's current value at ``slots``."""
        out_type = self.call.type
        if self.py is not None:
            return self.py.values(self.value[slots])
        count = self.count[slots]
        if self.func in ("count", "count_star"):
            return pa.array(count, pa.int64())
        null = count <= 0
        if self.numeric:
            if out_type == T.INTERVAL_YEAR_MONTH:  # (kept as months)
                return month_intervals(self.value[slots], null)
            raw = pa.array(self.value[slots], mask=null)
            return raw.cast(out_type) if not pa.types.is_date(out_type) else \
                raw.cast(pa.int32()).cast(out_type)
        if self.func in _LISTS:
            return list_result(self.call, self.value[slots], null)
        if self.func in ("min", "max", "first_value", "last_value"):
            return typed_array(self.value[slots], out_type, mask=null)
        total = self.value[slots]
        if self.unscaled:
            sums = decimal_from_unscaled(total, sum_type(self.arg_type), null)
            if self.func == "sum":
                return sums.cast(out_type, safe=False)
            safe_count = np.where(null, 1, count)
            # (an average past the result's digits is NULL, as Flink's)
            scale = sum_type(self.arg_type).scale
            limit = 10 ** (out_type.precision - out_type.scale + scale)
            # (an int64 total, 19 digits with the input's scale, always fits the average's
            # DECIMAL(38, max(6, s)); only a sum grown past int64, Python ints, may not)
            over = np.zeros(len(total), dtype=bool) if total.dtype != object else np.array(
                [abs(int(t)) >= int(c) * limit for t, c in
                 zip(total.tolist(), safe_count.tolist())], dtype=bool)
            if over.any():
                null = null | over
                sums = pc.if_else(pa.array(over), pa.scalar(decimal.Decimal(0), sums.type),
                                  sums)
            counts = pa.array(safe_count, pa.int64()).cast(pa.decimal128(20, 0))
            res = kernel_for("divide")([sums, counts], [None, None], out_type)
            return pc.if_else(pa.array(null), pa.nulls(len(null), out_type), res)
        if self.func == "sum":
            if pa.types.is_decimal(self.arg_type):  # (beyond 38 digits: NULL, as Flink)
                null = null | _overflows(total, sum_type(self.arg_type))
                total = np.where(null, 0, total)
            sums = pa.array(total, sum_type(self.arg_type), mask=null)
            return sums.cast(out_type, safe=False)
        # AVG with Flink's result types: integer AVG truncates, DECIMAL rounds HALF_UP.
        safe_count = np.where(null, 1, count)
        if pa.types.is_integer(out_type):
            t = total.astype(np.int64)
            vals = np.sign(t) * (np.abs(t) // safe_count)  # Java long division truncates
            return pa.array(vals, pa.int64(), mask=null).cast(out_type, safe=False)
        if pa.types.is_decimal(out_type):
            limit = decimal.Decimal(10) ** (out_type.precision - out_type.scale)
            null = null | _overflows(total, sum_type(self.arg_type)) | np.array(
                [v is not None and decimal.Decimal(v).copy_abs() >= c * limit
                 for v, c in zip(total, safe_count.tolist())], dtype=bool)
            total = np.where(null, 0, total)
            sums = pa.array(total, sum_type(self.arg_type))
            counts = pa.array(safe_count, pa.int64()).cast(pa.decimal128(20, 0))
            res = kernel_for("divide")([sums, counts], [None, None], out_type)
            return pc.if_else(pa.array(null), pa.nulls(len(null), out_type), res)
        return pa.array(total.astype(np.float64) / safe_count, pa.float64(),
                        mask=null).cast(out_type)


def _arrow_ordered(t: pa.DataType) -> bool:
    """Whether MIN/MAX values of type ``t``, kept as Python objects (str, bytes, Decimal), are
    compared by Arrow's kernels in the same order Python compares them."""
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
        or pa.types.is_large_binary(t) or pa.types.is_decimal(t)


def _nan_flag(cols: dict[str, pa.Array], specs: list[tuple[str, str]], j: int, func: str,
              values: pa.Array) -> None:
    """MAX of a FLOAT / DOUBLE: a column telling the groups that hold a NaN, which is MAX's
    answer there, NaN above every number as Flink's MaxWithRetract, DuckDB and PostgreSQL
    order it (Arrow's max skips NaN: it gave the largest other value)."""
    if func == "max" and pa.types.is_floating(values.type):
        cols[f"x{j}"] = nan_marks(values)
        specs.append((f"x{j}", "max"))


def _merge_extreme(values: np.ndarray, func: str, part: pa.Array, slots: np.ndarray,
                   has_old: np.ndarray) -> None:
    """Fold a chunk's MIN or MAX per group (``part``, NULL for a group with no value) into
    ``values`` (Python objects per slot) at ``slots``; ``has_old`` says which slots held a
    value before. The comparisons run in Arrow; only the values that win become objects."""
    has_new = part.is_valid().to_numpy(zero_copy_only=False)
    take = has_new & ~has_old
    both = np.flatnonzero(has_new & has_old)
    if len(both):
        old = pa.array(values[slots[both]], part.type)
        cmp = pc.less if func == "min" else pc.greater
        better = cmp(part.take(pa.array(both)), old).to_numpy(zero_copy_only=False)
        take[both[better]] = True
    won = np.flatnonzero(take)
    if len(won):
        values[slots[won]] = part.take(pa.array(won)).to_numpy(zero_copy_only=False)


def _group_by(table: pa.Table, key_names: list[str], specs: list[tuple[str, str]]
              ) -> pa.Table:
    """``table`` grouped by ``key_names`` with ``specs`` folded, each distinct (input array,
    fold) once: aggregates over the same argument (SUM(x) and AVG(x)), and counts of rows that
    all count (the same sign array), share one column of Arrow's hash aggregation."""
    first: dict[tuple[int, str], str] = {}
    unique: list[tuple[str, str]] = []
    alias: list[tuple[str, str]] = []  # (output name, the output name it copies)
    for name, op in specs:
        seen = first.setdefault((_identity(table.column(name)), op), name)
        if seen == name:
            unique.append((name, op))
        else:
            alias.append((f"{name}_{op}", f"{seen}_{op}"))
    grouped = table.group_by(key_names, use_threads=False).aggregate(unique)
    for out, source in alias:
        grouped = grouped.append_column(out, grouped.column(source))
    return grouped


def _identity(column: pa.ChunkedArray) -> tuple[object, ...]:
    """What tells two columns built on the same array apart from others: its buffers'
    addresses (pyarrow gives a new Python object for each access to a chunk)."""
    return tuple((str(c.type), c.offset, len(c),
                  *(b.address if b is not None else 0 for b in c.buffers()))
                 for c in column.chunks)


def _unscaled_sum_input(arg: pa.Array) -> pa.Array | None:
    """SUM's input as int64 unscaled values (value * 10^scale) when a decimal128 ``arg``'s
    values fit and no sum of all of them can pass int64 (Arrow then sums 64-bit integers,
    not 128-bit decimals after a cast to DECIMAL(38, s)); else None."""
    if not pa.types.is_decimal128(arg.type) or len(arg) == 0:
        return None
    filled = arg.fill_null(pa.scalar(decimal.Decimal(0), arg.type)) if arg.null_count else arg
    values = decimal_int64.unscaled64(filled)
    if values is None:
        return None
    top = max(-int(values.min()), int(values.max()))
    if top * len(values) >= 1 << 63:
        return None
    out = pa.array(values, pa.int64())
    if arg.null_count:
        out = pc.if_else(pc.is_valid(arg), out, pa.nulls(len(arg), pa.int64()))
    return out


def _overflows(total: np.ndarray, dtype: pa.DataType) -> np.ndarray:
    """Which exact sums (Python Decimals) pass the digits of ``dtype``."""
    limit = decimal.Decimal(10) ** (dtype.precision - dtype.scale)
    return np.array([v is not None and decimal.Decimal(v).copy_abs() >= limit for v in total],
                    dtype=bool)


def decimal_from_unscaled(total: np.ndarray, dtype: pa.DataType, null: np.ndarray
                          ) -> pa.Array:
    """The decimal128 array of unscaled ``total`` (int64 or Python ints), NULL where ``null``
    and where a sum passes the type's 38 digits (Flink's SUM of a DECIMAL overflows to NULL;
    it wrapped round to a wrong number)."""
    n = len(total)
    if total.dtype == np.int64:
        words = decimal_int64.words_of(total)
    else:
        limit = 10 ** dtype.precision
        over = np.array([abs(int(v)) >= limit for v in total.tolist()], dtype=bool)
        if over.any():
            null = null | over
            total = np.where(over, 0, total)
        words = np.array([w for v in total.tolist() for w in (
            ((int(v) & ((1 << 64) - 1)) ^ (1 << 63)) - (1 << 63),
            int(v) >> 64)], dtype=np.int64)
    out = pa.Array.from_buffers(dtype, n, [None, pa.py_buffer(words.tobytes())])
    if null.any():
        out = pc.if_else(pa.array(~null), out, pa.nulls(n, dtype))
    return out


# Aggregates whose result depends on the rows' order (arrival order, as Flink's), and the
# Arrow hash aggregations that gather them per chunk.
_LISTS = LIST_AGGREGATES
_ORDERED = ("first_value", "last_value", *_LISTS)
_RETRACTABLE_ORDERED = ("first_value", "last_value", "listagg", "array_agg", "json_arrayagg",
                        "json_objectagg", "percentile")
_ARROW_AGG = {"first_value": "first", "last_value": "last", **{f: "list" for f in _LISTS}}

# Batch mode: input rows aggregated at a time (or input bytes, for wide rows).
CHUNK_ROWS = 1 << 18
CHUNK_BYTES = 128 << 20


def _interval_ticks(arg: pa.Array) -> pa.Array:
    """An interval array as int64: a day-time interval's milliseconds, a year-month one's
    months."""
    if arg.type == T.INTERVAL_YEAR_MONTH:
        return pa.array(months(arg), mask=arg.is_null().to_numpy(zero_copy_only=False)
                        if arg.null_count else None)
    return arg.cast(pa.int64())


class GroupAggregateOperator(SpillsToDisk, Operator):
    name = "GroupAggregate"
    # (not ``_key_table``: ``key_chunks`` as one table, a cache; it would store every key
    # twice)
    state_fields = ("accs", "key_bytes", "key_chunks", "pending", "pending_bytes",
                    "pending_rows", "rows", "slots")

    def __init__(self, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...], schema: pa.Schema,
                 emit: str, merge: bool = False, input_updating: bool = False,
                 ttl_ms: int = 0, clock: Clock = time) -> None:
        # ``merge``: the global phase of a two-phase aggregation in streaming mode; the input
        # is a LocalAggregate's partial rows (k0.., then c/n/s/m columns per aggregate, see
        # runtime/operators/partials.py) of an insert-only stream, merged into the state.
        self._args = (keys, aggs, schema, emit, merge, input_updating, ttl_ms)
        # 'table.exec.state.ttl' (streaming): a group no row reached for that long is
        # forgotten, without a word, as Flink's expired state: its next row starts it again
        # (an INSERT). ``touched``: each slot's last row, on ``clock``'s monotonic time (in a
        # checkpoint: its age, as a join's state rows' write times).
        self.ttl = ttl_ms / 1000.0
        self.clock = clock
        self.touched = np.zeros(0, dtype=np.float64)
        self.merge = merge
        self.input_updating = input_updating
        self.keys = keys
        self.aggs = aggs
        self.schema = schema
        self.emit_changelog = emit == "changelog"
        self.slots = KeyIndex([k.dtype for k in keys])
        self.key_chunks: list[pa.RecordBatch] = []
        self._key_table: pa.Table | None = None
        self.rows = np.zeros(0, dtype=np.int64)
        self.accs = _accumulators(aggs, input_updating)
        self.key_schema = pa.schema([schema.field(i) for i in range(len(keys))])
        self.key_bytes = 0  # bytes of ``key_chunks``
        # Batch mode past the memory budget (hybrid hash aggregation): the groups in memory
        # stay there; rows of any other group go to partitions on disk by the hash of their
        # keys, aggregated a partition at a time after the groups in memory are emitted.
        self.spilled: PartitionedSpill | None = None
        self.directory: SpillDirectory | None = None
        self.level = 0
        # Batch mode: input batches not aggregated yet (see process_batch).
        self.pending: list[pa.RecordBatch] = []
        self.pending_rows = self.pending_bytes = 0

    # -- state -----------------------------------------------------------------------------
    def snapshot_state(self) -> dict[str, object]:
        """Refused once groups went to disk (batch mode past the budget): what is in memory
        is not all the state, even after the spilled partitions were emitted."""
        if self.spilled_bytes or self.spilled is not None:
            raise NotCheckpointable(self.name)
        state = super().snapshot_state()
        if self.ttl:  # (ages: a monotonic reading means nothing in another process)
            state["touched"] = self.clock.monotonic() - self.touched
        return state

    def restore_state(self, state: Mapping[str, object]) -> None:
        super().restore_state(state)
        if self.ttl:  # (time that passed while the job was down does not count)
            ages = state.get("touched")
            ages = np.zeros(len(self.rows)) if ages is None else np.asarray(ages, np.float64)
            self.touched = self.clock.monotonic() - ages

    def _grow(self, n: int) -> None:
        if n > len(self.rows):
            cap = max(n, 2 * len(self.rows), 64)
            self.rows = np.concatenate([self.rows, np.zeros(cap - len(self.rows), np.int64)])
            if self.ttl:
                self.touched = np.concatenate([self.touched, np.zeros(cap - len(self.touched))])
            for acc in self.accs:
                acc.grow(cap)

    def _keys_at(self, slots: np.ndarray) -> list[pa.Array]:
        if self._key_table is None:
            self._key_table = pa.Table.from_batches(self.key_chunks, self.key_schema) \
                if self.key_chunks else self.key_schema.empty_table()
        taken = self._key_table.take(pa.array(slots, pa.int64()))
        return [c.combine_chunks() for c in taken.columns]

    def _values_at(self, slots: np.ndarray) -> list[pa.Array]:
        rows = self.rows[slots]
        return self._keys_at(slots) + [acc.result(slots, rows) for acc in self.accs]

    # -- processing ------------------------------------------------------------------------
    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if batch.num_rows == 0:
            return ()
        if self._chunked():
            # Batch mode: input batches are gathered into chunks and aggregated a chunk at a
            # time (one hash aggregation and one key lookup per chunk, not per batch).
            self.pending.append(batch)
            self.pending_rows += batch.num_rows
            self.pending_bytes += batch.nbytes
            if self.pending_rows >= CHUNK_ROWS or self.pending_bytes >= CHUNK_BYTES:
                self._flush()
            return ()
        return self._consume(batch)

    @property
    def holds_until_end(self) -> bool:
        return not self.emit_changelog

    def _chunked(self) -> bool:
        return not (self.emit_changelog or self.merge or self.input_updating) and \
            self.directory is None

    def _flush(self) -> None:
        """Aggregate the gathered input batches (as one batch)."""
        if not self.pending:
            return
        waiting, self.pending = self.pending, []
        self.pending_rows = self.pending_bytes = 0
        if len(waiting) == 1:
            self._consume(waiting[0])
            return
        if not self.merge and all(acc.plain for acc in self.accs):
            # Each batch's group-by inputs, as the chunks of one table (no copy of the rows):
            # one hash aggregation over them all.
            key_names = [f"k{i}" for i in range(len(self.keys))]
            parts = [self._row_inputs(b, key_names) for b in waiting]
            if all(t.schema == parts[0][0].schema for t, _ in parts):
                self._fold(pa.concat_tables([t for t, _ in parts]), parts[0][1], key_names)
                return
        table = pa.Table.from_batches(waiting).combine_chunks()
        for batch in table.to_batches():
            self._consume(batch)

    def _expire(self) -> None:
        """Forget the groups whose last row is older than the TTL."""
        now = self.clock.monotonic()
        stale = np.flatnonzero((self.rows > 0) & (self.touched <= now - self.ttl))
        if len(stale):
            self.rows[stale] = 0
            for acc in self.accs:
                acc.clear(stale)

    def _consume(self, batch: pa.RecordBatch) -> Iterable[pa.RecordBatch]:
        if self.ttl:
            self._expire()
        if self.directory is not None:  # (spilling)
            batch = self._divert(batch)
            if batch.num_rows == 0:
                return ()
        key_names = [f"k{i}" for i in range(len(self.keys))]
        if self.merge:
            table, specs = self._partial_inputs(batch, key_names)
        else:
            if self.input_updating:
                parts = self._split_at_empty(batch)
                if len(parts) > 1:  # (the groups emptied in the batch first: then cleared)
                    return [out for part in parts if part.num_rows
                            for out in self._fold(*self._row_inputs(part, key_names),
                                                  key_names)]
                batch = parts[0]
                if batch.num_rows == 0:
                    return ()
            table, specs = self._row_inputs(batch, key_names)
        return self._fold(table, specs, key_names)

    def _split_at_empty(self, batch: pa.RecordBatch) -> list[pa.RecordBatch]:
        """As Flink's GroupAggFunction: a retraction reaching a group with no rows is
        ignored (no accumulator is made for it), and a group whose row count falls to 0 is
        cleared, whatever its sums hold (a changelog read from its middle, a delete
        delivered twice, an update whose before-image is not what was inserted). Each
        group's row count is followed through the batch in arrival order, kept at zero or
        above: the batch without the ignored retractions, split in two where some group's
        count fell to 0 in it (its rows up to there, folded first: the group is then
        cleared; and all other rows)."""
        sign = signs(batch)
        if not (sign < 0).any():
            return [batch]
        n = batch.num_rows
        if self.keys:
            memo: dict = {}
            cols = [evaluate(k, batch, memo) for k in self.keys]
            ids = dense_ids(cols, n)
            _, first, group = np.unique(ids, return_index=True, return_inverse=True)
            group = group.reshape(-1)
            slots = self.slots.lookup([c.take(pa.array(first)) for c in cols])
        else:
            group = np.zeros(n, dtype=np.int64)
            slots = self.slots.lookup([], 1)
        start = np.where(slots >= 0, self.rows[np.maximum(slots, 0)], 0) \
            if len(self.rows) else np.zeros(len(slots), dtype=np.int64)
        walk = walk_counts(group, sign, start)
        order, first_of, segment = walk.order, walk.first_of, walk.segment
        g, s = group[order], sign[order]
        # (the count kept at zero or above, a reflected walk: level - min(0, its low))
        kept_count = walk.level - np.minimum(walk.low, 0)
        prior = np.empty(n, dtype=np.int64)  # (each row's group count before it)
        prior[1:] = kept_count[:-1]
        prior[first_of] = start[g[first_of]]
        stray = (s < 0) & (prior <= 0)
        # (the last row of each group after which its count is 0; -1 where there is none)
        at = np.where((kept_count == 0) & ~stray, np.arange(n), -1)
        last_empty = np.maximum.reduceat(at, np.flatnonzero(first_of))[segment]
        first_part = np.zeros(n, dtype=bool)
        first_part[order] = (np.arange(n) <= last_empty) & ~stray
        rest = np.zeros(n, dtype=bool)
        rest[order] = (np.arange(n) > last_empty) & ~stray
        if not first_part.any():
            return [batch.filter(pa.array(rest)) if not rest.all() else batch]
        return [batch.filter(pa.array(first_part)), batch.filter(pa.array(rest))]

    def _fold(self, table: pa.Table, specs: list[tuple[str, str]], key_names: list[str]
              ) -> Iterable[pa.RecordBatch]:
        """Fold the group-by inputs of some rows into the groups' state."""
        # (a changelog lists a batch's groups in the order of their last rows, as Flink's
        # row-at-a-time aggregate updates them: a Top-N after it puts the group updated last
        # behind the others of its value)
        last = self.emit_changelog and bool(key_names) and table.num_rows > 1
        if last:
            table = table.append_column("$last", pa.array(np.arange(table.num_rows)))
            specs = [*specs, ("$last", "max")]
        if key_names or not any(op == "list" for _, op in specs):
            grouped = _group_by(table, key_names, specs)
        else:  # (Arrow's "list" is a hash aggregation only: one constant key for it)
            table = table.append_column("$all", pa.array(np.zeros(table.num_rows, np.int8)))
            grouped = table.group_by(["$all"], use_threads=False).aggregate(specs) \
                .drop_columns(["$all"])
        slots = self._assign_slots(grouped, key_names)
        if self.ttl:
            self.touched[slots] = self.clock.monotonic()
        before = self._snapshot(slots) if self.emit_changelog else None
        self._update(grouped, slots)
        row_slots: np.ndarray | None = None  # (each row's slot, if a DISTINCT needs it)
        for j, acc in enumerate(self.accs):
            if acc.py is not None and self.merge:
                self._merge_python(j, acc, grouped, slots, table)
            elif acc.py is not None:
                self._update_python(acc, grouped, slots, table)
            elif acc.distinct_counts is not None and acc.distinct_column == 0:
                if row_slots is None:
                    row_slots = self._slots_of(table, key_names) if key_names else \
                        np.zeros(table.num_rows, dtype=np.int64)
                self._update_distinct([a for a in self.accs  # (in column order)
                                       if a.distinct_counts is acc.distinct_counts],
                                      table, row_slots)
            elif acc.multiset is not None:
                self._update_extreme(j, acc, table, key_names)
            elif acc.ordered is not None:
                self._update_ordered_retract(j, acc, table, key_names)
        gone = slots[self.rows[slots] <= 0]
        if len(gone):
            self.rows[gone] = 0
            for acc in self.accs:
                acc.reset(gone)
        if not self.emit_changelog or before is None:
            return ()
        touched = np.argsort(np.argsort(grouped["$last_max"].to_numpy(), kind="stable"),
                             kind="stable") if last else None
        return self._changelog(slots, before, touched)

    def _row_inputs(self, batch: pa.RecordBatch, key_names: list[str]
                    ) -> tuple[pa.Table, list[tuple[str, str]]]:
        """Per input row: its keys, its sign and each aggregate's input (filters applied),
        and how a group-by folds them."""
        sign = pa.array(signs(batch))
        cols: dict[str, pa.Array] = {}
        memo: dict = {}  # (common subexpressions of keys, filters and arguments: once)
        widened: dict[int, tuple[pa.Array, pa.Array]] = {}
        for name, k in zip(key_names, self.keys):
            cols[name] = evaluate(k, batch, memo)
        cols["$rows"] = sign
        specs: list[tuple[str, str]] = [("$rows", "sum")]
        zero = pa.array(np.zeros(batch.num_rows, np.int64))
        negative = pc.less(sign, 0) if pc.any(pc.less(sign, 0)).as_py() else None
        for j, (call, acc) in enumerate(zip(self.aggs, self.accs)):
            keep = None
            if call.filter is not None:
                keep = pc.fill_null(evaluate(call.filter, batch, memo), False)
            if call.func == "count_star":
                cols[f"c{j}"] = sign if keep is None else pc.if_else(keep, sign, zero)
                specs.append((f"c{j}", "sum"))
                continue
            if acc.py is not None:  # (its rows' positions, grouped: see _update_python)
                acc.batch_args = [evaluate(a, batch, memo) for a in call.args]
                acc.batch_keep = keep
                if "$pos" not in cols:
                    cols["$pos"] = pa.array(np.arange(batch.num_rows, dtype=np.int64))
                    cols["$sign"] = sign
                    specs.append(("$pos", "list"))
                continue
            if call.func in ("sum", "avg") and acc.unscaled and acc.distinct is None and \
                    acc.multiset is None and not acc.keeps_nulls and \
                    pa.types.is_decimal128(call.args[0].dtype):
                # A decimal argument without NULLs summed as int64 unscaled values, its
                # + - * done in int64 too (no decimal128 arrays built and read back).
                wide = decimal_int64.summable(call.args[0], batch, memo, evaluate)
                if wide is not None:
                    cols[f"n{j}"] = sign if keep is None else pc.if_else(keep, sign, zero)
                    specs.append((f"n{j}", "sum"))
                    signed = pc.if_else(negative, pc.negate(wide), wide) \
                        if negative is not None else wide
                    cols[f"v{j}"] = signed if keep is None else \
                        pc.if_else(keep, signed, pa.nulls(len(wide), pa.int64()))
                    specs.append((f"v{j}", "sum"))
                    continue
            arg = storage(evaluate(call.args[0], batch, memo))  # (a BITMAP's / VARIANT's)
            every = keep is None and arg.null_count == 0  # (every row counts: no masking)
            valid = pc.is_valid(arg) if keep is None else pc.and_(pc.is_valid(arg), keep)
            if acc.ordered is not None:  # (its values row by row: _update_ordered_retract)
                if acc.keeps_nulls:
                    valid = keep if keep is not None else \
                        pa.array(np.ones(batch.num_rows, dtype=bool))
                cols[f"d{j}"] = arg
                cols[f"s{j}"] = pc.if_else(valid, sign, zero)
                continue
            if acc.by_position:
                acc.batch_values = arg
                arg = pc.if_else(pc.is_valid(arg), pa.array(np.arange(batch.num_rows,
                                                                      dtype=np.int64)),
                                 pa.scalar(None, pa.int64()))
            elif acc.keeps_nulls:
                acc.batch_values = arg
                arg = pa.array(np.arange(batch.num_rows, dtype=np.int64))
                every = keep is None
                valid = keep if keep is not None else \
                    pa.array(np.ones(batch.num_rows, dtype=bool))
            if acc.distinct_counts is not None:
                acc.batch_arg = arg
                cols[f"s{j}"] = sign if every else pc.if_else(valid, sign, zero)
                continue
            if acc.multiset is not None:
                cols[f"d{j}"] = pc.if_else(valid, arg, pa.nulls(len(arg), arg.type))
                cols[f"s{j}"] = pc.if_else(valid, sign, zero)
                continue
            cols[f"n{j}"] = sign if every else pc.if_else(valid, sign, zero)
            specs.append((f"n{j}", "sum"))
            if call.func in ("sum", "avg"):
                hit = widened.get(id(arg))  # (the array is kept with it: ids stay unique)
                if hit is not None and hit[0] is arg:
                    wide = hit[1]
                else:
                    wide = _unscaled_sum_input(arg) if acc.unscaled else None
                    if wide is None:
                        wide = arg.cast(sum_type(arg.type))
                    widened[id(arg)] = (arg, wide)
                signed = pc.if_else(negative, pc.negate(wide), wide) if negative is not None \
                    else wide
                cols[f"v{j}"] = signed if every else \
                    pc.if_else(valid, signed, pa.nulls(len(arg), signed.type))
                specs.append((f"v{j}", "sum"))
            elif call.func in ("min", "max", *_ORDERED):
                if acc.numeric and (pa.types.is_duration(arg.type) or
                                    arg.type == T.INTERVAL_YEAR_MONTH):
                    arg = _interval_ticks(arg)  # (Arrow's min / max have no interval kernel)
                cols[f"v{j}"] = arg if every else \
                    pc.if_else(valid, arg, pa.nulls(len(arg), arg.type))
                specs.append((f"v{j}", _ARROW_AGG.get(call.func, call.func)))
                _nan_flag(cols, specs, j, call.func, cols[f"v{j}"])
        return pa.table(cols), specs

    def _partial_inputs(self, batch: pa.RecordBatch, key_names: list[str]
                        ) -> tuple[pa.Table, list[tuple[str, str]]]:
        """A LocalAggregate's partial rows in the same shape as :meth:`_row_inputs`: each
        partial row is at least one input row of its group ($rows only tells that the group
        exists: the input is insert-only); MIN/MAX count their non-null partials; a Python
        aggregate's pickled accumulators (p<j>) are gathered by their rows' positions, as
        :meth:`_row_inputs` gathers its input rows (see :meth:`_merge_python`)."""
        names = batch.schema.names
        cols: dict[str, pa.Array] = {k: batch.column(i) for i, k in enumerate(key_names)}
        n = batch.num_rows
        cols["$rows"] = pa.array(np.ones(n, dtype=np.int64))
        specs: list[tuple[str, str]] = [("$rows", "sum")]
        at = {name: batch.column(i) for i, name in enumerate(names)}
        for j, call in enumerate(self.aggs):
            if call.func == "count_star":
                cols[f"c{j}"] = at[f"c{j}"]
                specs.append((f"c{j}", "sum"))
            elif call.func == "count":
                cols[f"n{j}"] = at[f"n{j}"]
                specs.append((f"n{j}", "sum"))
            elif call.func in ("sum", "avg"):
                cols[f"n{j}"] = at[f"n{j}"]
                cols[f"v{j}"] = at[f"s{j}"]
                specs += [(f"n{j}", "sum"), (f"v{j}", "sum")]
            elif is_python(call):
                cols[f"p{j}"] = at[f"p{j}"]
                if "$pos" not in cols:
                    cols["$pos"] = pa.array(np.arange(n, dtype=np.int64))
                    specs.append(("$pos", "list"))
            else:
                value = at[f"m{j}"]
                cols[f"n{j}"] = pc.cast(pc.is_valid(value), pa.int64())
                cols[f"v{j}"] = value
                specs += [(f"n{j}", "sum"), (f"v{j}", call.func)]
                _nan_flag(cols, specs, j, call.func, value)
        return pa.table(cols), specs

    def _assign_slots(self, grouped: pa.Table, key_names: list[str]) -> np.ndarray:
        n_before = len(self.slots)
        # One lookup per distinct key of the batch (not per input row).
        slots = self.slots.assign([grouped.column(k) for k in key_names])
        if len(self.slots) > n_before:
            new = np.nonzero(slots >= n_before)[0]
            order = np.argsort(slots[new])
            fresh = grouped.select(key_names).take(pa.array(new[order]))
            fresh = fresh.rename_columns(self.key_schema.names).cast(self.key_schema)
            self.key_chunks.extend(fresh.to_batches())
            self.key_bytes += fresh.nbytes
            self._key_table = None
            self._grow(len(self.slots))
        return slots

    def _update(self, grouped: pa.Table, slots: np.ndarray) -> None:
        self.rows[slots] += grouped.column("$rows_sum").to_numpy()
        for j, (call, acc) in enumerate(zip(self.aggs, self.accs)):
            if call.func == "count_star":
                acc.count[slots] += grouped.column(f"c{j}_sum").to_numpy()
                continue
            if acc.distinct_counts is not None or acc.multiset is not None or \
                    acc.py is not None or acc.ordered is not None:
                continue
            acc.count[slots] += grouped.column(f"n{j}_sum").to_numpy()
            if call.func in ("sum", "avg") and acc.unscaled:
                part = grouped.column(f"v{j}_sum").combine_chunks()
                acc.add_unscaled(slots, pc.fill_null(part, zero_of(part.type)))
            elif call.func in ("sum", "avg"):
                part = grouped.column(f"v{j}_sum")
                part = pc.fill_null(part, zero_of(part.type))
                values = part.to_numpy(zero_copy_only=False) if not acc.object_values \
                    else np.array(part.to_pylist(), dtype=object)
                acc.value[slots] = acc.value[slots] + values
            elif acc.numeric:
                part = grouped.column(f"v{j}_{call.func}").combine_chunks()
                has_new = part.is_valid().to_numpy(zero_copy_only=False)
                if pa.types.is_date(part.type):
                    part = part.cast(pa.int32())
                new = pc.fill_null(part.cast(pa.int64()) if acc.np_type is np.int64 else part,
                                   0).to_numpy(zero_copy_only=False)
                old = acc.value[slots]
                has_old = acc.count[slots] - grouped.column(f"n{j}_sum").to_numpy() > 0
                better = new < old if call.func == "min" else new > old
                take = has_new & (~has_old | better)
                old[take] = new[take]
                if f"x{j}_max" in grouped.column_names:  # (a NaN among them: MAX is NaN)
                    old[grouped.column(f"x{j}_max").to_numpy(zero_copy_only=False) > 0] = \
                        np.nan
                acc.value[slots] = old
            elif call.func in _ORDERED:
                self._update_ordered(acc, call.func, grouped.column(
                    f"v{j}_{_ARROW_AGG[call.func]}"), slots)
            elif call.func in ("min", "max") and _arrow_ordered(acc.arg_type):
                part = grouped.column(f"v{j}_{call.func}").combine_chunks()
                has_old = acc.count[slots] - grouped.column(f"n{j}_sum").to_numpy() > 0
                _merge_extreme(acc.value, call.func, part, slots, has_old)
            elif call.func in ("min", "max"):
                part = grouped.column(f"v{j}_{call.func}")
                new = np.array(part.to_pylist(), dtype=object)
                old = acc.value[slots]
                has_new = np.array([v is not None for v in new], dtype=bool)
                has_old = np.array([v is not None for v in old], dtype=bool)
                better = np.zeros(len(new), dtype=bool)
                both = has_new & has_old
                if both.any():
                    cmp = (new[both] < old[both]) if call.func == "min" else \
                        (new[both] > old[both])
                    better[both] = cmp.astype(bool)
                take_new = has_new & (~has_old | better)
                old[take_new] = new[take_new]
                acc.value[slots] = old

    @staticmethod
    def _update_ordered(acc: _Accumulator, func: str, part: pa.ChunkedArray,
                        slots: np.ndarray) -> None:
        """FIRST_VALUE keeps a group's first non-NULL value, LAST_VALUE its last (in arrival
        order: the chunk's own first / last), LISTAGG and the other list aggregates every
        value in order (see list_result)."""
        new = np.empty(len(slots), dtype=object)
        if acc.by_position:  # the first / last row's position in the batch's values
            values, acc.batch_values = acc.batch_values, None
            new[:] = values.take(part).to_pylist()
        else:
            new[:] = part.to_pylist()
        if acc.keeps_nulls:  # positions into the batch's values
            values, acc.batch_values = acc.batch_values, None
            flat = pc.list_flatten(part)
            taken = values.take(flat.fill_null(0)).to_pylist()
            lengths = pc.list_value_length(part).fill_null(0).to_numpy(zero_copy_only=False)
            starts = np.concatenate([[0], np.cumsum(lengths)])
            valid_pos = flat.is_valid().to_numpy(zero_copy_only=False)
            new[:] = [[taken[k] for k in range(starts[i], starts[i + 1]) if valid_pos[k]]
                      for i in range(len(lengths))]
        old = acc.value[slots]
        if func == "first_value":
            take = np.array([o is None and v is not None for o, v in zip(old, new)], bool)
            old[take] = new[take]
        elif func == "last_value":
            take = np.array([v is not None for v in new], bool)
            old[take] = new[take]
        else:
            for i, values in enumerate(new):
                kept = list(values or ()) if acc.keeps_nulls else \
                    [v for v in (values or ()) if v is not None]
                if kept:
                    old[i] = (old[i] or []) + kept
        acc.value[slots] = old

    @staticmethod
    def _update_python(acc: _Accumulator, grouped: pa.Table, slots: np.ndarray,
                       table: pa.Table) -> None:
        """A Python aggregate: each group's rows (grouped by the hash aggregation of their
        positions) accumulated, or retracted, into the group's accumulator."""
        py = acc.py
        assert py is not None
        flat, bounds = group_bounds(grouped.column("$pos_list"))
        args, acc.batch_args = acc.batch_args, []
        keep, acc.batch_keep = acc.batch_keep, None
        sign = table.column("$sign").to_numpy()[flat]
        if keep is not None or acc.distinct is not None:
            use = np.ones(len(flat), dtype=bool) if keep is None else \
                keep.to_numpy(zero_copy_only=False)[flat]
            group_of = np.repeat(np.arange(len(slots)), np.diff(bounds))
            if acc.distinct is not None:  # (a row counts when its first copy comes or goes)
                rows = [row_key(r) for r in
                        zip(*(a.take(pa.array(flat)).to_pylist() for a in args))]
                seen = acc.distinct
                slot_of = slots[group_of].tolist()
                for i, (row, s) in enumerate(zip(rows, sign.tolist())):
                    if not use[i]:
                        continue
                    k = (slot_of[i], row)
                    before = seen.get(k, 0)
                    after = before + (1 if s > 0 else -1)
                    if after > 0:
                        seen[k] = after
                    else:
                        seen.pop(k, None)
                    use[i] = (before == 0) if s > 0 else (after == 0)
            flat, sign = flat[use], sign[use]
            bounds = np.r_[0, np.cumsum(np.bincount(group_of[use], minlength=len(slots)))]
        taken = pa.array(flat)
        py.update(acc.value, slots, [a.take(taken) for a in args], bounds, sign)

    @staticmethod
    def _merge_python(j: int, acc: _Accumulator, grouped: pa.Table, slots: np.ndarray,
                      table: pa.Table) -> None:
        """The global phase of a two-phase aggregation: each group's pickled partial
        accumulators merged into the group's accumulator (the function's merge())."""
        assert acc.py is not None
        flat, bounds = group_bounds(grouped.column("$pos_list"))
        partials = table.column(f"p{j}").combine_chunks().take(pa.array(flat))
        acc.py.merge_partials(acc.value, slots, partials, bounds)

    def _value_deltas(self, j: int, table: pa.Table, key_names: list[str]
                      ) -> tuple[np.ndarray, list[object], np.ndarray] | None:
        """The batch's distinct (slot, value) pairs of aggregate ``j``'s input, with the
        signed number of rows of each (retractions count negative)."""
        sub = table.select([*key_names, f"d{j}", f"s{j}"]).filter(pc.is_valid(table[f"d{j}"]))
        if sub.num_rows == 0:
            return None
        pairs = sub.group_by([*key_names, f"d{j}"], use_threads=False).aggregate(
            [(f"s{j}", "sum")])
        if not key_names:
            slots = np.zeros(pairs.num_rows, dtype=np.int64)
        else:
            slots = self._slots_of(pairs, key_names)
        values = python_keys(pairs.column(f"d{j}"))
        deltas = pairs.column(f"s{j}_sum").to_numpy(zero_copy_only=False).astype(np.int64)
        return slots, values, deltas

    def _slots_of(self, table: pa.Table, key_names: list[str]) -> np.ndarray:
        """Each row's group slot, looking up each distinct key once (a batch's (group,
        value) pairs repeat a few groups many times; a key of strings is looked up as
        Python values)."""
        cols = [table.column(k).combine_chunks() for k in key_names]
        ids = dense_ids(cols, table.num_rows)
        unique, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        if len(unique) == table.num_rows:
            return self.slots.lookup(cols)
        picked = pa.array(first)
        return self.slots.lookup([c.take(picked) for c in cols])[inverse.reshape(-1)]

    def _update_ordered_retract(self, j: int, acc: _Accumulator, table: pa.Table,
                                key_names: list[str]) -> None:
        """FIRST_VALUE / LAST_VALUE / LISTAGG / ARRAY_AGG over an updating input: each row
        (in arrival order) appends its value to its group's list, or removes the value's
        earliest copy (a retraction); the result is the list's first / last value, or the
        list. One step per counted row of the batch."""
        signs = table.column(f"s{j}").to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(signs != 0)
        if not len(rows):
            return
        sub = table.take(pa.array(rows))
        slots = self._slots_of(sub, key_names) if key_names else \
            np.zeros(len(rows), dtype=np.int64)
        lists = acc.ordered
        assert lists is not None
        values = sub.column(f"d{j}").to_pylist()
        if acc.call.distinct:
            # (LISTAGG(DISTINCT x) ...: each group's distinct values with their counts, in
            # the order they came from none to one, as Flink's distinct view feeds its
            # function: a value retracted to none and coming again goes last)
            for slot, value, sign in zip(slots.tolist(), values, signs[rows].tolist()):
                seen = lists.setdefault(slot, {})
                key = repr(value) if isinstance(value, list | dict) else _same_nan(value, seen)
                if sign > 0:
                    seen.setdefault(key, [value, 0])[1] += 1
                elif key in seen:
                    seen[key][1] -= 1
                    if not seen[key][1]:
                        del seen[key]
        else:
            for slot, value, sign in zip(slots.tolist(), values, signs[rows].tolist()):
                items = lists.setdefault(slot, [])
                if sign > 0:
                    items.append(value)
                else:
                    value = _same_nan(value, items)
                    if value in items:
                        items.remove(value)
        for slot in set(slots.tolist()):
            kept = lists.get(slot) or []
            items = [v for v, _ in kept.values()] if isinstance(kept, dict) else kept
            acc.count[slot] = len(items)
            if not items:
                lists.pop(slot, None)
                acc.value[slot] = None
            elif acc.func == "first_value":
                acc.value[slot] = items[0]
            elif acc.func == "last_value":
                acc.value[slot] = items[-1]
            else:
                acc.value[slot] = list(items)

    def _update_extreme(self, j: int, acc: _Accumulator, table: pa.Table,
                        key_names: list[str]) -> None:
        """MIN/MAX with retraction: the multiset of each touched group changes; the extreme
        is recomputed over a group's values only when its current extreme is retracted."""
        found = self._value_deltas(j, table, key_names)
        if found is None:
            return
        slots, values, deltas = found
        multiset = acc.multiset
        assert multiset is not None
        better = _java_less if acc.func == "min" else (lambda x, y: _java_less(y, x))
        stale: set[int] = set()
        # One step per distinct (group, value) pair of the batch, not per row.
        for slot, value, delta in zip(slots.tolist(), values, deltas.tolist()):
            if delta == 0:
                continue
            group = multiset.setdefault(slot, {})
            value = _same_nan(value, group)
            n = group.get(value, 0) + delta
            if n > 0:
                group[value] = n
            else:
                group.pop(value, None)
            acc.count[slot] += delta
            current = acc.value[slot]
            if n > 0 and (current is None or better(value, current)):
                acc.value[slot] = value
            elif n <= 0 and (current is value or current == value):
                stale.add(slot)
        pick = min if acc.func == "min" else max
        for slot in stale:
            group = multiset.get(slot)
            acc.value[slot] = pick(group, key=_java_order) if group else None
            if not group:
                multiset.pop(slot, None)

    @staticmethod
    def _update_distinct(peers: list[_Accumulator], table: pa.Table,
                         row_slots: np.ndarray) -> None:
        """COUNT/SUM/AVG(DISTINCT x) of one argument: the batch's rows counted into their
        (group, value) pairs (DistinctCounts, a column per aggregate: its FILTER's rows); a
        value counts in its group while a copy of it is there."""
        counts = peers[0].distinct_counts
        values = peers[0].batch_arg
        assert counts is not None and values is not None
        # (NULL values and rows a FILTER leaves out carry sign 0 in that aggregate's column)
        signs = np.column_stack([table.column(f"s{acc.index}").to_numpy() for acc in peers])
        rows = np.flatnonzero(signs.any(axis=1))
        if not len(rows):
            return
        taken = values.take(pa.array(rows)) if len(rows) < len(signs) else values
        if isinstance(taken, pa.ChunkedArray):
            taken = taken.combine_chunks()
        change = counts.update(row_slots[rows], taken, signs[rows])
        for acc in peers:
            acc.batch_arg = None  # (not kept in the state)
        for column, acc in enumerate(peers):
            became, gone = change.became[:, column], change.gone[:, column]
            np.add.at(acc.count, change.slots[became], 1)
            np.add.at(acc.count, change.slots[gone], -1)
            if acc.func in ("sum", "avg") and (became.any() or gone.any()):
                touched = became | gone
                picked = taken.take(pa.array(change.first[touched])).to_pylist()
                typed = np.array(picked, dtype=acc.value.dtype)
                np.add.at(acc.value, change.slots[touched],
                          typed * np.where(became[touched], 1, -1))

    def _snapshot(self, slots: np.ndarray) -> tuple[np.ndarray, list[pa.Array]]:
        exists = self.rows[slots] > 0
        return exists, self._values_at(slots)

    def _changelog(self, slots: np.ndarray, before: tuple[np.ndarray, list[pa.Array]],
                   touched: np.ndarray | None = None) -> Iterable[pa.RecordBatch]:
        """The changes of the groups at ``slots`` since ``before``, in the order ``touched``
        ranks them (else as they are)."""
        existed, old_vals = before
        exists = self.rows[slots] > 0
        new_vals = self._values_at(slots)
        # (with a state TTL a group's unchanged value is sent again, as Flink's
        # GroupAggFunction does: the operators after it keep the row's state alive too)
        changed = np.full(len(slots), bool(self.ttl))
        for o, n in zip(old_vals[len(self.keys):] if not self.ttl else (),
                        new_vals[len(self.keys):]):
            if pa.types.is_nested(o.type):  # (ARRAY_AGG: Arrow compares no lists)
                changed |= np.array([a != b for a, b in zip(o.to_pylist(), n.to_pylist())],
                                    dtype=bool)
                continue
            if o.type == T.INTERVAL_YEAR_MONTH:  # (no Arrow kernel compares these)
                o, n = _interval_ticks(o), _interval_ticks(n)
            if isinstance(o.type, pa.ExtensionType):  # (a BITMAP: by its canonical bytes)
                o, n = o.storage, n.storage
            same = pc.or_kleene(pc.equal(o, n), pc.and_(pc.is_null(o), pc.is_null(n)))
            changed |= ~pc.fill_null(same, False).to_numpy(zero_copy_only=False)
        upd = existed & exists & changed
        ins = ~existed & exists
        dele = existed & ~exists
        # Interleave per group: -U before +U of the same key (as Flink emits them).
        old_rows = np.nonzero(upd | dele)[0]
        new_rows = np.nonzero(upd | ins)[0]
        old_kind = np.where(upd[old_rows], UPDATE_BEFORE, DELETE).astype(np.int8)
        new_kind = np.where(upd[new_rows], UPDATE_AFTER, INSERT).astype(np.int8)
        if len(old_rows) + len(new_rows) == 0:
            return ()
        rank = touched if touched is not None else np.arange(len(slots))
        order_key = np.concatenate([rank[old_rows] * 2, rank[new_rows] * 2 + 1])
        order = np.argsort(order_key, kind="stable")
        arrays = []
        for o, n in zip(old_vals, new_vals):
            both = pa.concat_arrays([o.take(pa.array(old_rows)), n.take(pa.array(new_rows))])
            arrays.append(both.take(pa.array(order)))
        kinds = np.concatenate([old_kind, new_kind])[order]
        arrays = [a.cast(f.type) for a, f in zip(arrays, self.schema)]
        arrays.append(pa.array(kinds, pa.int8()))
        return (pa.RecordBatch.from_arrays(arrays, names=[*self.schema.names, ROWKIND]),)

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if self.emit_changelog:
            return ()
        self._flush()
        if not self.keys and not len(self.slots):
            # A global aggregate over no rows still yields one row (COUNT 0, SUM NULL).
            self.slots.assign([])
            self._grow(1)
            return (self._final_batch(np.array([0], dtype=np.int64)),)
        live = np.nonzero(self.rows[: len(self.slots)] > 0)[0]
        out = tuple(self._final_batch(live[i:i + _OUT_CHUNK])
                    for i in range(0, len(live), _OUT_CHUNK))
        if self.spilled is None:
            return out
        return itertools.chain(out, self._spilled_groups())

    # -- batch, past the memory budget -----------------------------------------------------
    def state_bytes(self) -> int:
        # The index (for a dict, the key's characters once more: Python strings hold their
        # own copy) and the key columns.
        size = self.rows.nbytes + self.slots.nbytes() + self.key_bytes * (
            1 if self.slots.vectorised else 2) + self.pending_bytes
        for acc in self.accs:
            size += acc.count.nbytes
            if acc.value is not None:
                size += acc.value.nbytes * (5 if acc.value.dtype == object else 1)
            if acc.distinct_counts is not None and acc.distinct_column == 0:
                size += acc.distinct_counts.nbytes()
            if acc.multiset is not None:
                size += 200 * len(acc.multiset)
            if acc.ordered:  # (a group's count is its list's length)
                size += 64 * len(acc.ordered) + 40 * int(acc.count.sum())
        return size

    def spill_refusal(self) -> str:
        if self.emit_changelog:
            return " (a streaming aggregation keeps every group)"
        if not self.keys:
            return " (an aggregation without GROUP BY has one group)"
        if self.input_updating:
            return " (its input is an updating changelog)"
        return f" (its rows split {MAX_LEVEL} times by key: one group is too large)"

    def spill(self, directory: str | None) -> bool:
        if self.directory is not None:
            return True  # (already spilling: its groups in memory no longer grow)
        if self.emit_changelog or not self.keys or self.input_updating or \
                self.level >= MAX_LEVEL:
            return False
        self.directory = SpillDirectory(directory, "aggregate")
        self._flush()  # (its rows of groups not in memory go to disk now)
        return True

    def _divert(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        """Write the rows of groups not in memory to their partitions; the rest stay."""
        data = data_part(batch)
        # (partial rows, in batch mode's global phase: their keys first, k0, k1, ...)
        keys = [data.column(i) for i in range(len(self.keys))] if self.merge else \
            [evaluate(k, data) for k in self.keys]
        names = [f"k{i}" for i in range(len(keys))]
        distinct = pa.table(dict(zip(names, keys))).group_by(names, use_threads=False
                                                             ).aggregate([])
        known = self.slots.lookup(list(distinct.columns)) >= 0
        if known.all():
            return data
        if not known.any():
            self._write_spilled(data, keys)
            return data.slice(0, 0)
        hashes = None if self.slots.vectorised else hash_rows(list(distinct.columns))
        if hashes is not None and len(np.unique(hashes)) == len(hashes):
            # The batch's groups have distinct hashes: a row's hash tells its group.
            row_hashes = pa.array(hash_rows(keys))
            out = pc.is_in(row_hashes, value_set=pa.array(hashes[~known])).to_numpy(
                zero_copy_only=False)
        else:  # (a vectorised index, or two groups of the batch share a hash: look up rows)
            out = self.slots.lookup(keys) < 0
        mask = pa.array(out)
        self._write_spilled(data.filter(mask), [k.filter(mask) for k in keys])
        return data.filter(pc.invert(mask))

    def _write_spilled(self, data: pa.RecordBatch, keys: list[pa.Array]) -> None:
        if self.spilled is None:
            assert self.directory is not None
            self.spilled = PartitionedSpill(self.directory, data.schema, self.level)
        self.spilled.write(conformed(data, self.spilled.schema), keys)
        self.spilled_bytes += data.nbytes

    def _spilled_groups(self) -> Iterator[pa.RecordBatch]:
        """The spilled partitions, each aggregated by an aggregation of its own."""
        spilled = self.spilled
        assert spilled is not None
        spilled.finish()
        # (emitted: free them)
        self.slots, self.key_chunks, self._key_table = KeyIndex([k.dtype for k in self.keys]), \
            [], None
        self.rows = np.zeros(0, dtype=np.int64)
        self.accs = _accumulators(self.aggs, self.input_updating)
        try:
            yield from aggregate_partitions(
                self, spilled, self.directory.path if self.directory else None,
                lambda: GroupAggregateOperator(*self._args))
        finally:
            self.close()

    def _final_batch(self, slots: np.ndarray) -> pa.RecordBatch:
        values = self._values_at(slots)
        arrays = [a.cast(f.type) for a, f in zip(values, self.schema)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask's state, the
        groups whose keys it now owns (the exchange before it hashes all the group keys)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        old = GroupAggregateOperator(*self._args, clock=self.clock)
        for state in states:
            if state["pending"]:  # (batch mode's gathered input: not in streaming state)
                raise NotRescalable(self.name)
            old.restore_state(state)
            old._key_table = None
            n = len(old.slots)
            if not n:
                continue
            keys = old._keys_at(np.arange(n))
            live = old.rows[:n] > 0
            mine = owned(keys, subtask, parallelism) if keys else \
                np.full(n, subtask == 0)
            take = np.flatnonzero(live & mine)
            if not len(take):
                continue
            picked = pa.Table.from_arrays([k.take(pa.array(take)) for k in keys],
                                          schema=self.key_schema)
            names = [f"k{i}" for i in range(len(self.keys))]
            slots = self._assign_slots(picked.rename_columns(names), names)
            self.rows[slots] = old.rows[take]
            if self.ttl:
                self.touched[slots] = old.touched[take]
            for acc, before in zip(self.accs, old.accs):
                acc.adopt(before, take, slots)

    def state_summary(self) -> Mapping[str, object]:
        return {"groups": int((self.rows[: len(self.slots)] > 0).sum())}


def _is_nan(v: object) -> bool:
    return isinstance(v, float) and v != v


def _same_nan(value: object, found: Iterable[object]) -> object:
    """``value``, or when it is a NaN the NaN already among ``found`` (a group's values):
    NaN equals no value in Python, so a retracted NaN was never found and stayed (Flink
    compares with Java's Double.equals, under which NaN equals NaN)."""
    if not _is_nan(value):
        return value
    return next((v for v in found if _is_nan(v)), value)


def _java_order(v: object) -> tuple[int, object]:
    """A MIN/MAX value's sort key in Java's Double.compareTo order, which Flink's MIN/MAX
    with retraction use: NaN above every number (Python's < puts it nowhere)."""
    return (1, 0.0) if _is_nan(v) else (0, v)


def _java_less(x: object, y: object) -> bool:
    return not _is_nan(x) and (_is_nan(y) or x < y)  # type: ignore[operator]
