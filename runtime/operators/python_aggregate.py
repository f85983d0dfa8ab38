"""Python aggregate functions (sqlengine.functions_python.udaf) inside the aggregating
operators: GROUP BY (GroupAggregateOperator), window and session aggregations (Partials) and
OVER frames (OverAggregateOperator).

The operators group rows with Arrow first (a hash aggregation of row positions, or the sorted
frames of OVER); here a group's rows arrive as one contiguous range of the argument arrays,
converted to Python values once per batch. An AggregateFunction object's ``accumulate`` /
``retract`` run once per row (the API's contract); a vectorised (pandas / arrow) aggregate is
called once per group with the group's slices. A vectorised aggregate's accumulator is the
group's rows (Arrow record batches; retracted rows kept apart and taken out when the value is
asked for), so it retracts and merges whatever the function is.

Errors in the user's code name the function, the call's line:column in the SQL text and the
failing input row, and keep the user's own traceback.
"""

from __future__ import annotations

import pickle
import traceback
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError, NotSupportedError
from sqlengine.functions_python import (
    UserFunction,
    display_name,
    python_arguments,
    registered,
)
from sqlengine.opaque_type import python_values
from sqlengine.plan.expressions import AggCall
from sqlengine.plan.partials import ACCUMULATOR


def is_python(call: AggCall) -> bool:
    return call.func.startswith("py:")


class Rows:
    """A vectorised aggregate's accumulator: its group's argument rows."""

    __slots__ = ("added", "retracted")

    def __init__(self) -> None:
        self.added: list[pa.RecordBatch] = []
        self.retracted: list[pa.RecordBatch] = []

    def __getstate__(self) -> tuple[list[pa.RecordBatch], list[pa.RecordBatch]]:
        return self.added, self.retracted

    def __setstate__(self, state: tuple[list[pa.RecordBatch], list[pa.RecordBatch]]) -> None:
        self.added, self.retracted = state


class PythonAggregate:
    """One Python aggregate call: accumulators, per-group updates and results."""

    def __init__(self, call: AggCall) -> None:
        self.call = call
        self.key = call.func
        self.name = display_name(call.func)
        function = registered(call.func)
        if function is None:
            msg = (f"the Python aggregate function {self.name} is not available in this "
                   "process")
            raise ExecutionError(msg)
        self.function: UserFunction = function
        self.kind = function.kind
        self.fn = function.fn
        self.out = call.type
        self.names = [f"a{i}" for i in range(len(call.args))]
        self.schema = pa.schema([pa.field(n, a.dtype) for n, a in zip(self.names, call.args)])
        # Over an updating input: a built-in that has accumulators of its own for it (the
        # bitmap aggregates count multiplicities there) makes those.
        self.retracting = False

    # (pickled with an operator's state by its call; the function is found again by key)
    def __getstate__(self) -> tuple[AggCall, bool]:
        return self.call, self.retracting

    def __setstate__(self, state: AggCall | tuple[AggCall, bool]) -> None:
        call, retracting = state if isinstance(state, tuple) else (state, False)
        self.__init__(call)  # type: ignore[misc]
        self.retracting = retracting

    @property
    def label(self) -> str:
        return f"{self.name} (SQL {self.call.where})" if self.call.where else self.name

    def require(self, method: str, why: str) -> None:
        """Refuse, naming the function, when it lacks ``method`` (retract, merge)."""
        if not self.function.can(method):
            msg = (f"the Python aggregate function {self.name} has no {method}() method, "
                   f"which {why}")
            raise NotSupportedError(msg)

    # -- accumulators -----------------------------------------------------------------------
    def _creator(self, retracting: bool) -> Any:
        own = getattr(self.fn, "create_retracting_accumulator", None)
        return own if retracting and own is not None else self.fn.create_accumulator

    def create(self) -> Any:
        if self.kind != "aggregate":
            return Rows()
        try:
            return self._creator(self.retracting)()
        except Exception as e:  # (the user's code)
            raise self._error(e, "create_accumulator", None) from None

    def update(self, state: np.ndarray, slots: np.ndarray, args: Sequence[pa.Array],
               bounds: np.ndarray, signs: np.ndarray | None = None) -> None:
        """Add (retract, where ``signs`` < 0) the rows ``bounds[g]:bounds[g + 1]`` of
        ``args`` to the accumulator ``state[slots[g]]`` of each group g (created if None)."""
        if self.kind == "aggregate" and hasattr(self.fn, "accumulate_arrays"):
            self._accumulate_arrays(state, slots, args, bounds, signs)
            return
        if self.kind == "aggregate":
            self._accumulate(state, slots, args, bounds, signs)
            return
        batch = pa.RecordBatch.from_arrays(list(args), schema=self.schema)
        negative = signs is not None and bool((signs < 0).any())
        for g, slot in enumerate(slots.tolist()):
            acc = state[slot]
            if acc is None:
                acc = state[slot] = Rows()
            lo, hi = int(bounds[g]), int(bounds[g + 1])
            if hi <= lo:
                continue
            part = batch.slice(lo, hi - lo)
            if not negative:
                acc.added.append(part)
                continue
            neg = pa.array(signs[lo:hi] < 0)  # type: ignore[index]
            acc.added.append(part.filter(pc.invert(neg)))
            acc.retracted.append(part.filter(neg))

    def _accumulate_arrays(self, state: np.ndarray, slots: np.ndarray,
                           args: Sequence[pa.Array], bounds: np.ndarray,
                           signs: np.ndarray | None) -> None:
        """A built-in's update: each group's rows of the batch in one call (its argument's
        slice, and the slice of ``signs``)."""
        create, accumulate = self._creator(self.retracting), self.fn.accumulate_arrays
        negative = signs is not None and bool((signs < 0).any())
        try:
            for g, slot in enumerate(slots.tolist()):
                lo, hi = int(bounds[g]), int(bounds[g + 1])
                if hi <= lo:
                    continue
                acc = state[slot]
                if acc is None:
                    acc = state[slot] = create()
                accumulate(acc, args[0].slice(lo, hi - lo),
                           signs[lo:hi] if negative else None)  # type: ignore[index]
        except (TypeError, ValueError) as e:
            raise ExecutionError(f"{self.name}: {e}") from None

    def _accumulate(self, state: np.ndarray, slots: np.ndarray, args: Sequence[pa.Array],
                    bounds: np.ndarray, signs: np.ndarray | None) -> None:
        n = int(bounds[-1]) if len(bounds) else 0
        accumulate = self.fn.accumulate
        retract = getattr(self.fn, "retract", None)
        sign = signs.tolist() if signs is not None and bool((signs < 0).any()) else None
        # One argument, no retractions: its values passed as they are (a call with *row
        # costs about twice as much as the call itself)
        values = python_arguments(args[0]) if len(args) == 1 and sign is None else None
        rows = [] if values is not None else \
            list(zip(*(python_arguments(a) for a in args))) if args else [()] * n
        create = self._creator(self.retracting)
        row: tuple = ()
        value: Any = None
        single = False  # (in the loop over ``values``: a failing row is (value,))
        method = "accumulate"
        try:
            for g, slot in enumerate(slots.tolist()):
                acc = state[slot]
                if acc is None:
                    method = "create_accumulator"
                    acc = create()
                lo, hi = int(bounds[g]), int(bounds[g + 1])
                if values is not None:
                    method, single = "accumulate", True
                    for value in values[lo:hi]:
                        made = accumulate(acc, value)
                        if made is not None:
                            acc = made
                    single = False
                elif sign is None:
                    method = "accumulate"
                    for row in rows[lo:hi]:
                        made = accumulate(acc, *row)
                        if made is not None:
                            acc = made
                else:
                    for i in range(lo, hi):
                        row = rows[i]
                        if sign[i] > 0:
                            method = "accumulate"
                            made = accumulate(acc, *row)
                        else:
                            method = "retract"
                            if retract is None:
                                self.require("retract", "an updating input (with "
                                             "retractions) needs")
                            made = retract(acc, *row)
                        if made is not None:
                            acc = made
                state[slot] = acc
        except Exception as e:  # (the user's code)
            if isinstance(e, NotSupportedError):
                raise
            failed = None if method == "create_accumulator" else (value,) if single else row
            raise self._error(e, method, failed) from None

    def merge(self, acc: Any, others: list[Any]) -> Any:
        if self.kind != "aggregate":
            for o in others:
                acc.added += o.added
                acc.retracted += o.retracted
            return acc
        self.require("merge", "merging accumulators needs")
        try:
            made = self.fn.merge(acc, others)
        except Exception as e:  # (the user's code)
            raise self._error(e, "merge", None) from None
        return acc if made is None else made

    # -- two phases: accumulators as partials ----------------------------------------------
    def dump(self, accs: Sequence[Any], present: np.ndarray) -> pa.Array:
        """The local phase's partial column: each accumulator pickled (NULL where not
        ``present``: its group had no row for this call)."""
        dumps, protocol = pickle.dumps, pickle.HIGHEST_PROTOCOL
        out: list[bytes | None] = [None] * len(accs)
        try:
            for i in np.flatnonzero(present).tolist():
                out[i] = dumps(accs[i], protocol=protocol)
        except Exception as e:  # (what the user's accumulator holds)
            msg = (f"the Python aggregate function {self.label}: its accumulator cannot be "
                   f"pickled for the global phase of a two-phase aggregation "
                   f"({type(e).__name__}: {e}); set 'table.optimizer.agg-phase-strategy' = "
                   "'ONE_PHASE' to aggregate it in one phase")
            raise ExecutionError(msg) from None
        return pa.array(out, ACCUMULATOR)

    def merge_partials(self, state: np.ndarray, slots: np.ndarray, partials: pa.Array,
                       bounds: np.ndarray) -> None:
        """The global phase: merge the pickled accumulators ``partials[bounds[g]:bounds[g +
        1]]`` (NULLs skipped) into the accumulator ``state[slots[g]]`` of each group g (the
        first partial becomes a group's accumulator when it has none yet)."""
        self.require("merge", "the global phase of a two-phase aggregation needs")
        loads = pickle.loads
        try:
            accs = [None if b is None else loads(b) for b in partials.to_pylist()]
        except Exception as e:  # (the user's accumulator class, e.g. not importable here)
            msg = (f"the Python aggregate function {self.label}: a pickled accumulator of the "
                   f"local phase cannot be read in the global phase ({type(e).__name__}: "
                   f"{e}); set 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE' to "
                   "aggregate it in one phase")
            raise ExecutionError(msg) from None
        merge = self.fn.merge
        try:
            for g, slot in enumerate(slots.tolist()):
                parts = [a for a in accs[int(bounds[g]):int(bounds[g + 1])] if a is not None]
                if not parts:
                    continue
                acc = state[slot]
                if acc is None:
                    acc = parts.pop(0)
                if parts:
                    made = merge(acc, parts)
                    acc = acc if made is None else made
                state[slot] = acc
        except Exception as e:  # (the user's code)
            raise self._error(e, "merge", None) from None

    # -- results ----------------------------------------------------------------------------
    def values(self, accs: Sequence[Any]) -> pa.Array:
        """The result of every accumulator (None: a group with no rows yet)."""
        out = []
        for acc in accs:
            out.append(self.value(self.create() if acc is None else acc))
        return self._array(out)

    def value(self, acc: Any) -> Any:
        if self.kind == "aggregate":
            try:
                return self.fn.get_value(acc)
            except Exception as e:  # (the user's code)
                raise self._error(e, "get_value", None) from None
        table = pa.Table.from_batches(acc.added, schema=self.schema)
        if acc.retracted:
            table = _without(table, pa.Table.from_batches(acc.retracted, schema=self.schema))
        return self.call_vectorised(table)

    def call_vectorised(self, rows: pa.Table) -> Any:
        columns = [c.combine_chunks() for c in rows.columns]
        try:
            if self.kind == "pandas_agg":
                return self.fn(*(c.to_pandas() for c in columns))
            return self.fn(*columns)
        except Exception as e:  # (the user's code)
            sample = tuple(c[0].as_py() for c in columns) if rows.num_rows else None
            raise self._error(e, None, sample, rows.num_rows) from None

    def _array(self, values: list[Any]) -> pa.Array:
        values = [v.as_py() if isinstance(v, pa.Scalar) else
                  (v.item() if isinstance(v, np.generic) else v) for v in values]
        try:
            return python_values(values, self.out)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError) as e:
            msg = f"the Python aggregate function {self.label} returned values that are " \
                  f"not {self.out}: {e}"
            raise ExecutionError(msg) from None

    # -- window partials: each group's rows as one list<struct> value -----------------------
    def row_lists(self, args: Sequence[pa.Array], keep: np.ndarray | None) -> pa.Array:
        """Per input row a list of its own argument row (empty where FILTER leaves it out)."""
        n = len(args[0]) if args else (len(keep) if keep is not None else 0)
        struct = self._struct(args, n)
        if keep is None:
            offsets = np.arange(n + 1, dtype=np.int32)
        else:
            offsets = np.r_[0, np.cumsum(keep)].astype(np.int32)
            struct = struct.filter(pa.array(keep))
        return pa.ListArray.from_arrays(pa.array(offsets), struct,
                                        type=self.list_type(struct.type))

    def _struct(self, args: Sequence[pa.Array], n: int) -> pa.StructArray:
        if not args:  # (a call without arguments: one placeholder column)
            return pa.StructArray.from_arrays([pa.nulls(n, pa.int8())], names=["_"])
        return pa.StructArray.from_arrays(list(args), names=self.names)

    @staticmethod
    def list_type(struct: pa.DataType) -> pa.DataType:
        return pa.list_(pa.field("item", struct))

    def values_of_lists(self, lists: pa.Array | pa.ChunkedArray) -> pa.Array:
        """The result of each group from its rows (a list<struct> value per group)."""
        if isinstance(lists, pa.ChunkedArray):
            lists = lists.combine_chunks()
        flat = pc.list_flatten(lists)
        lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
        bounds = np.r_[0, np.cumsum(lengths)].astype(np.int64)
        args = [flat.field(i) for i in range(len(self.names))]
        groups = len(lengths)
        if self.call.distinct:
            args, bounds = _distinct_rows(args, bounds)
        state = np.empty(groups, dtype=object)
        self.update(state, np.arange(groups), args, bounds)
        return self.values(list(state))

    # -- OVER frames ------------------------------------------------------------------------
    def over(self, args: Sequence[pa.Array], keep: np.ndarray | None, lo: np.ndarray,
             hi: np.ndarray, want: np.ndarray, first: np.ndarray) -> pa.Array:
        """Per row i (where ``want``) the value over rows lo[i]..hi[i] (inclusive; rows
        sorted by partition and time, frames moving forward within a partition, whose first
        row is ``first[i]``): an accumulator per partition, rows leaving the frame retracted
        (or, without retract(), the frame accumulated afresh)."""
        n = len(lo)
        out: list[Any] = [None] * n
        if self.kind != "aggregate":
            table = pa.Table.from_arrays(list(args), schema=self.schema) if args else \
                pa.table({"_": pa.nulls(n, pa.int8())})
            for i in np.flatnonzero(want).tolist():
                rows = table.slice(int(lo[i]), int(hi[i]) - int(lo[i]) + 1)
                if keep is not None:
                    rows = rows.filter(pa.array(keep[lo[i]:hi[i] + 1]))
                out[i] = self.call_vectorised(rows.select(self.names))
            return self._array(out)
        rows = list(zip(*(python_arguments(a) for a in args))) if args else [()] * n
        use = keep.tolist() if keep is not None else [True] * n
        fn = self.fn
        retract = getattr(fn, "retract", None)
        # (frames that slide retract rows: a built-in counts multiplicities only then)
        create = self._creator(retract is not None and bool((lo > first).any()))
        acc: Any = None
        cur_lo, cur_hi = 0, -1  # the rows in ``acc``
        row: tuple = ()
        method = "accumulate"
        try:
            for i in range(n):
                a, b = int(lo[i]), int(hi[i])
                if acc is None or first[i] != first[i - 1] or a > cur_hi + 1 or \
                        a < cur_lo or (a > cur_lo and retract is None):
                    method = "create_accumulator"
                    acc, cur_lo, cur_hi = create(), a, a - 1
                if a > cur_lo:  # (rows that left the frame)
                    method = "retract"
                    for j in range(cur_lo, a):
                        if use[j]:
                            row = rows[j]
                            made = retract(acc, *row)  # type: ignore[misc]
                            acc = made if made is not None else acc
                    cur_lo = a
                method = "accumulate"
                for j in range(cur_hi + 1, b + 1):
                    if use[j]:
                        row = rows[j]
                        made = fn.accumulate(acc, *row)
                        acc = made if made is not None else acc
                cur_hi = b
                if want[i]:
                    method, row = "get_value", ()
                    out[i] = fn.get_value(acc)
        except Exception as e:  # (the user's code)
            raise self._error(e, method, row or None) from None
        return self._array(out)

    # -- errors -----------------------------------------------------------------------------
    def _error(self, e: Exception, method: str | None, row: tuple | None,
               group_rows: int | None = None) -> ExecutionError:
        frames = traceback.extract_tb(e.__traceback__)[1:]  # (from the user's code down)
        trace = "".join(traceback.format_list(frames)).rstrip()
        what = f" in {method}()" if method else ""
        if row is not None and group_rows is not None:
            sample = (f" on a group of {group_rows} rows, the first "
                      f"({', '.join(repr(v) for v in row)})")
        elif row is not None:
            sample = f" on the row ({', '.join(repr(v) for v in row)})"
        else:
            sample = ""
        msg = (f"the Python aggregate function {self.label} failed{what}{sample}: "
               f"{type(e).__name__}: {e}\n{trace}")
        return ExecutionError(msg)


_NAN = ("NaN",)  # (one key for every NaN: NaN equals nothing in Python, not even itself)


def row_key(value: object) -> object:
    """A hashable key of a row or value by which equal ones are equal: every NaN the same (a
    retracted NaN row found no equal to take out, and each NaN counted as another DISTINCT
    value), lists and maps as tuples."""
    if isinstance(value, float):
        return _NAN if value != value else value
    if isinstance(value, tuple | list):
        return tuple(row_key(v) for v in value)
    if isinstance(value, dict):
        return ("$map", tuple((row_key(k), row_key(v)) for k, v in value.items()))
    return value


def _without(table: pa.Table, gone: pa.Table) -> pa.Table:
    """``table`` without one row per row of ``gone`` (a retraction takes out an equal row)."""
    left = Counter(row_key(r) for r in zip(*(c.to_pylist() for c in gone.columns)))
    keep = []
    for row in zip(*(c.to_pylist() for c in table.columns)):
        row = row_key(row)
        if left.get(row, 0) > 0:
            left[row] -= 1
            keep.append(False)
        else:
            keep.append(True)
    return table.filter(pa.array(keep, pa.bool_()))


def _distinct_rows(args: list[pa.Array], bounds: np.ndarray
                   ) -> tuple[list[pa.Array], np.ndarray]:
    """Each group's distinct rows (the first of equal ones), with the new group bounds."""
    rows = [row_key(r) for r in zip(*(a.to_pylist() for a in args))]
    keep = np.zeros(len(rows), dtype=bool)
    for g in range(len(bounds) - 1):
        seen: set[tuple] = set()
        for i in range(int(bounds[g]), int(bounds[g + 1])):
            if rows[i] not in seen:
                seen.add(rows[i])
                keep[i] = True
    counts = np.add.reduceat(keep.astype(np.int64), bounds[:-1]) if len(rows) else \
        np.zeros(len(bounds) - 1, np.int64)
    # (reduceat gives a non-empty group's first value for an empty one: zero those)
    counts = np.where(np.diff(bounds) > 0, counts, 0)
    mask = pa.array(keep)
    return [a.filter(mask) for a in args], np.r_[0, np.cumsum(counts)].astype(np.int64)


def group_bounds(positions: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A hash aggregation's list of row positions per group -> (the positions in group
    order, the bounds of each group's range in them)."""
    if isinstance(positions, pa.ChunkedArray):
        positions = positions.combine_chunks()
    lengths = pc.list_value_length(positions).fill_null(0).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(positions).to_numpy(zero_copy_only=False).astype(np.int64)
    return flat, np.r_[0, np.cumsum(lengths)].astype(np.int64)


def merge_lists(lists: pa.Array | pa.ChunkedArray, positions: pa.Array | pa.ChunkedArray,
                list_type: pa.DataType) -> pa.Array:
    """Per group (``positions``: a hash aggregation's list of row positions) the
    concatenation of its rows' lists."""
    if isinstance(lists, pa.ChunkedArray):
        lists = lists.combine_chunks() if lists.num_chunks else pa.array([], list_type)
    flat, bounds = group_bounds(positions)
    taken = lists.take(pa.array(flat))
    lengths = pc.list_value_length(taken).fill_null(0).to_numpy(zero_copy_only=False)
    ends = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    offsets = ends[bounds].astype(np.int32)
    return pa.ListArray.from_arrays(pa.array(offsets), pc.list_flatten(taken), type=list_type)
