"""Evaluate bound expressions over Arrow record batches, one kernel call per node per batch."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import cast_array
from sqlengine.errors import DataValueError, ExecutionError, FailedRows
from sqlengine.functions_time import WALL_CLOCK
from sqlengine.plan.expressions import (
    ROWTIME,
    Call,
    Case,
    Cast,
    ColumnRef,
    Expr,
    InList,
    Literal,
    is_volatile,
)
from sqlengine.runtime.elements import MIN_WATERMARK, row_watermarks
from sqlengine.runtime.kernels import kernel_for
from sqlengine.runtime.kernels_math import CONSTANTS
from sqlengine.runtime.kernels_time import CLOCK, wall_clock


def evaluate(expr: Expr, batch: pa.RecordBatch, memo: dict[Expr, pa.Array] | None = None,
             rows: pa.Array | np.ndarray | None = None) -> pa.Array:
    """The value of ``expr`` for every row of ``batch``, as an array of ``expr.dtype``.

    ``rows``: the rows that need the value (a boolean mask; NULL counts as unset, as in a
    filter's conjuncts after the first: a row that an earlier one drops): where evaluating
    over every row fails, it is evaluated over these alone, NULL on the others, so that a
    failure on a row no one needs (``a / b`` where ``b > 0`` dropped it) is not one.

    ``memo``: the values of subexpressions already computed over this same batch (filled as
    they are computed), so that expressions evaluated one after another share their common
    parts (TPC-H q01's ``l_extendedprice * (1 - l_discount)`` in two sums). Calls of volatile
    functions are not shared.

    Raises:
        ExecutionError: a runtime failure (division by zero, a bad CAST), naming the expression.
    """
    try:
        if rows is None:
            out = _eval(expr, batch, batch.num_rows, memo)
        else:
            try:
                out = _eval(expr, batch, batch.num_rows, memo)
            except _FAILURES:
                out = _eval_on(expr, batch, batch.num_rows, _mask(rows), memo)
    except ExecutionError as e:
        msg = f"{e.message} in {expr.sql()}"
        if isinstance(e, FailedRows):  # (the rows a Python function failed on: dropped)
            e.message = msg
            e.args = (msg,)
            raise
        raise (DataValueError if isinstance(e, DataValueError) else ExecutionError)(msg) \
            from None
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        msg = f"cannot evaluate {expr.sql()}: {e}"
        raise ExecutionError(msg) from None
    return out


# The memo's key for the clock reading a batch's clock functions share: CURRENT_TIMESTAMP
# twice in a row is one instant, as Flink reads the clock once per record.
_NOW: Any = object()


def _now(memo: dict[Expr, pa.Array] | None) -> float:
    """The time of the evaluation ``memo`` belongs to (read at its first clock function)."""
    if memo is None:
        return time.time()
    now = memo.get(_NOW)
    if now is None:
        now = memo[_NOW] = time.time()  # type: ignore[assignment]
    return now  # type: ignore[return-value]


def _eval(expr: Expr, batch: pa.RecordBatch, n: int,
          memo: dict[Expr, pa.Array] | None = None) -> pa.Array:
    if memo is not None and isinstance(expr, Call | Cast):
        try:
            hit = memo.get(expr)
        except TypeError:  # (a literal value that cannot be hashed)
            return _eval_one(expr, batch, n, None)
        if hit is not None:
            return hit
        out = _eval_one(expr, batch, n, memo)
        if not any(isinstance(x, Call) and is_volatile(x.name) for x in expr.walk()):
            memo[expr] = out
        return out
    return _eval_one(expr, batch, n, memo)


def _eval_one(expr: Expr, batch: pa.RecordBatch, n: int,
              memo: dict[Expr, pa.Array] | None) -> pa.Array:
    if isinstance(expr, ColumnRef):
        return batch.column(expr.index)
    if isinstance(expr, Literal):
        return literal_array(expr, n)
    if isinstance(expr, Call) and expr.name == ROWTIME:  # (a rowtime mark: its value)
        return _eval(expr.args[0], batch, n, memo)
    if isinstance(expr, Call) and expr.name == "current_watermark":
        return _current_watermark(batch, n, expr.type)
    if isinstance(expr, Call) and expr.name == "proctime":
        if expr.args:  # (the session time zone's wall clock, as Flink shows PROCTIME())
            return wall_clock("localtimestamp", n, str(expr.args[0].value), _now(memo))  # type: ignore[attr-defined]
        now = int(_now(memo) * 1000)  # the wall clock when the batch is processed
        return pa.array(np.full(n, now, dtype=np.int64), pa.timestamp("ms"))
    if isinstance(expr, Call) and expr.name in _RANDOM:
        return _random(expr, batch, n, memo)
    if isinstance(expr, Call) and not expr.args and expr.name in CLOCK:
        return CLOCK[expr.name](n, _now(memo))
    if isinstance(expr, Call) and expr.name in WALL_CLOCK:  # (+ the session time zone)
        return wall_clock(expr.name, n, str(expr.args[0].value), _now(memo))  # type: ignore[attr-defined]
    if isinstance(expr, Call) and expr.name in CONSTANTS:
        return pa.array(np.full(n, CONSTANTS[expr.name]), expr.type)
    if isinstance(expr, Call) and expr.name in _LAZY and len(expr.args) >= 2:
        return _lazy_call(expr, batch, n, memo)
    if isinstance(expr, Call):
        args = [_eval(a, batch, n, memo) for a in expr.args]
        lits = [a.value if isinstance(a, Literal) else None for a in expr.args]
        if expr.name.startswith("py:"):  # (a Python function: told the row count too)
            out = kernel_for(expr.name)(args, lits, expr.type, n)
            return out if out.type == expr.type else out.cast(expr.type)
        out_type = _bare_type(expr.type)
        out = kernel_for(expr.name)([_bare(a) for a in args], lits, out_type)
        if out.type != out_type:
            out = out.cast(out_type)
        return _dressed(out, expr.type)
    if isinstance(expr, Cast):
        return cast_array(_eval(expr.arg, batch, n, memo), expr.type, expr.safe)
    if isinstance(expr, Case):
        return _case(expr, batch, n, memo)
    if isinstance(expr, InList):
        return _in_list(expr, batch, n, memo)
    msg = f"cannot evaluate {type(expr).__name__}"
    raise ExecutionError(msg)


def _bare(a: pa.Array) -> pa.Array:
    """An extension column (BITMAP) as its storage: kernels work on its bytes."""
    return a.storage if isinstance(a.type, pa.ExtensionType) else a


def _bare_type(t: pa.DataType) -> pa.DataType:
    return t.storage_type if isinstance(t, pa.ExtensionType) else t


def _dressed(out: pa.Array, t: pa.DataType) -> pa.Array:
    """A kernel's result (an extension type's storage) as a column of type ``t``."""
    if isinstance(t, pa.ExtensionType) and not isinstance(out.type, pa.ExtensionType):
        return pa.ExtensionArray.from_storage(t, out.cast(t.storage_type))
    return out


_RANDOM = frozenset({"rand", "rand_integer", "uuid"})


def _random(expr: Call, batch: pa.RecordBatch, n: int,
            memo: dict[Expr, pa.Array] | None) -> pa.Array:
    """RAND / RAND_INTEGER / UUID: a call's own generator (see runtime.random_functions)."""
    from sqlengine.runtime import random_functions as R

    if expr.name == "uuid":
        return R.uuids(n)
    seed = None
    if (expr.name == "rand" and expr.args) or (expr.name == "rand_integer" and len(expr.args) == 2):
        first = expr.args[0]
        seed = first.value if isinstance(first, Literal) else None
        if not isinstance(first, Literal):
            msg = f"the seed of {expr.name.upper()} must be a constant"
            raise ExecutionError(msg)
        if seed is None:  # (a NULL seed: NULL, as Flink)
            return pa.nulls(n, expr.type)
    if expr.name == "rand":
        return R.rand(expr, seed, n)
    return R.rand_integer(expr, seed, _eval(expr.args[-1], batch, n, memo), n)


def literal_array(lit: Literal, n: int) -> pa.Array:
    """A literal repeated ``n`` times: a slice of the longest such array built for it so far
    (arrays are immutable; every batch of a query repeats its literals, and a batch narrowed
    by a filter has a length of its own)."""
    try:  # (keyed by the value's text too: 0.0 and -0.0 are equal, not the same literal)
        key = (repr(lit.value), lit)
        got = _LITERALS.get(key)
    except TypeError:  # (a value that cannot be hashed)
        return _repeat(lit, n)
    if got is None or len(got) < n:
        got = _repeat(lit, n)
        if len(_LITERALS) >= 256:  # (a query has fewer; many queries start again)
            _LITERALS.clear()
        _LITERALS[key] = got
    return got if len(got) == n else got.slice(0, n)


_LITERALS: dict[tuple[str, Literal], pa.Array] = {}


def _repeat(lit: Literal, n: int) -> pa.Array:
    if lit.value is None:
        return pa.nulls(n, lit.type)
    return pa.repeat(pa.scalar(lit.value, lit.type), n)


def _case(expr: Case, batch: pa.RecordBatch, n: int,
          memo: dict[Expr, pa.Array] | None = None) -> pa.Array:
    try:  # (every branch over every row: one kernel call each, unless one of them fails)
        conds = [pc.fill_null(_eval(c, batch, n, memo), False) for c, _ in expr.whens]
        values = [_eval(v, batch, n, memo) for _, v in expr.whens]
        default = _eval(expr.default, batch, n, memo) if expr.default is not None else \
            pa.nulls(n, expr.type)
    except _FAILURES:  # (perhaps on rows that do not reach the failing branch)
        return _lazy_case(expr.whens, expr.default, expr.type, batch, n, memo)
    cond_struct = pa.StructArray.from_arrays(conds, names=[f"c{i}" for i in range(len(conds))])
    return _dressed(pc.case_when(cond_struct, *map(_bare, values), _bare(default)), expr.type)


# What evaluating a subexpression raises for the rows it fails on (see evaluate).
_FAILURES = (ExecutionError, pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError)

# Calls whose later arguments are only evaluated for some rows (as Flink's generated code):
# IF's branches, COALESCE's arguments after the first non-NULL one, AND's right side where
# the left is FALSE, OR's where it is TRUE.
_LAZY = frozenset({"if", "coalesce", "and", "or"})


def _lazy_call(expr: Call, batch: pa.RecordBatch, n: int,
               memo: dict[Expr, pa.Array] | None) -> pa.Array:
    """IF / COALESCE / AND / OR: every argument over every row (one kernel call each) unless
    one fails; then each only over the rows that reach it, so a failure on a row that does not
    (``b > 0 AND a / b > 1`` where b = 0) is not one."""
    if expr.name in ("and", "or"):
        return _and_or(expr, batch, n, memo)
    first = _eval(expr.args[0], batch, n, memo)
    try:
        args = [first, *(_eval(a, batch, n, memo) for a in expr.args[1:])]
    except _FAILURES:
        args = None
    if expr.name == "if":
        if args is None:
            whens = ((expr.args[0], expr.args[1]),)
            return _lazy_case(whens, expr.args[2], expr.type, batch, n, memo, (first,))
    elif args is None:  # (COALESCE: an argument only where those before it are NULL)
        args = [first]
        reach = np.asarray(first.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        for a in expr.args[1:]:
            args.append(_eval_on(a, batch, n, reach))
            reach &= np.asarray(args[-1].is_null().to_numpy(zero_copy_only=False), dtype=bool)
    out_type = _bare_type(expr.type)
    out = kernel_for(expr.name)([_bare(a) for a in args], [None] * len(args), out_type)
    return _dressed(out if out.type == out_type else out.cast(out_type), expr.type)


def _and_or(expr: Call, batch: pa.RecordBatch, n: int,
            memo: dict[Expr, pa.Array] | None) -> pa.Array:
    """AND / OR: the right side only where the left one does not decide (AND: the left is not
    FALSE; OR: not TRUE) when it fails over every row; the left side likewise after the right
    one when the left fails (``a / b > 1 AND b > 0``: either order, as a filter's conjuncts)."""
    first, second = expr.args
    try:
        left = _eval(first, batch, n, memo)
    except _FAILURES as failure:
        try:
            right = _eval(second, batch, n, memo)
        except _FAILURES:
            raise failure from None  # (the left side's failure is the one reported)
        args = [_eval_on(first, batch, n, _undecided(expr.name, right)), right]
    else:
        try:
            args = [left, _eval(second, batch, n, memo)]
        except _FAILURES:
            args = [left, _eval_on(second, batch, n, _undecided(expr.name, left))]
    return kernel_for(expr.name)(args, [None, None], expr.type)


def _undecided(name: str, side: pa.Array) -> np.ndarray:
    """The rows where one side of an AND (not FALSE) / an OR (not TRUE) leaves it open."""
    values = np.asarray(side.to_numpy(zero_copy_only=False))  # (None for NULL)
    return np.asarray(values != (name == "or"), dtype=bool)


def _lazy_case(whens: tuple[tuple[Expr, Expr], ...], default: Expr | None,
               out_type: pa.DataType, batch: pa.RecordBatch, n: int,
               memo: dict[Expr, pa.Array] | None,
               known: tuple[pa.Array, ...] = ()) -> pa.Array:
    """CASE evaluated as SQL defines it: each condition over the rows no condition before it
    took, each result over the rows its condition took, the default over the rest (``known``:
    the first conditions' values, already computed over every row)."""
    left = np.ones(n, dtype=bool)  # (the rows no condition has taken yet)
    takes: list[pa.Array] = []
    values: list[pa.Array] = []
    for i, (cond, value) in enumerate(whens):
        c = known[i] if i < len(known) else _eval_on(cond, batch, n, left, memo)
        took = left & np.asarray(pc.fill_null(c, False).to_numpy(zero_copy_only=False),
                                 dtype=bool)
        takes.append(pa.array(took))
        values.append(_eval_on(value, batch, n, took, memo))
        left &= ~took
    rest = _eval_on(default, batch, n, left, memo) if default is not None else \
        pa.nulls(n, out_type)
    values = [v if v.type == out_type else v.cast(out_type) for v in values]
    rest = rest if rest.type == out_type else rest.cast(out_type)
    cond_struct = pa.StructArray.from_arrays(takes, names=[f"c{i}" for i in range(len(takes))])
    return _dressed(pc.case_when(cond_struct, *map(_bare, values), _bare(rest)), out_type)


def _mask(rows: pa.Array | np.ndarray) -> np.ndarray:
    if isinstance(rows, np.ndarray):
        return rows.astype(bool, copy=False)
    return np.asarray(pc.fill_null(rows, False).to_numpy(zero_copy_only=False), dtype=bool)


def _eval_on(expr: Expr, batch: pa.RecordBatch, n: int, rows: np.ndarray,
             memo: dict[Expr, pa.Array] | None = None) -> pa.Array:
    """``expr`` evaluated only over the rows where ``rows`` (a boolean mask) is set: the rows
    are taken out, evaluated, and put back in place; NULL on the others (a column or a
    literal, which cannot fail, is taken whole)."""
    if rows.all() or isinstance(expr, ColumnRef | Literal):
        return _eval(expr, batch, n, memo)
    k = int(np.count_nonzero(rows))
    if not k:
        return pa.nulls(n, expr.dtype)
    selected = pa.array(rows)
    needed = expr.columns()  # (the others stand in as NULLs: a wide row is not copied whole)
    names = batch.schema.names
    sub = pa.RecordBatch.from_arrays(
        [c.filter(selected) if i in needed or names[i].startswith("$") else pa.nulls(k)
         for i, c in enumerate(batch.columns)], names=names)
    try:  # (no memo: its values are over the whole batch)
        part = _eval(expr, sub, k, None)
    except FailedRows as e:  # (the failed rows' positions in the whole batch)
        e.rows = np.flatnonzero(rows)[np.asarray(e.rows, dtype=np.int64)]
        raise
    try:
        return pc.replace_with_mask(pa.nulls(n, part.type), selected, part)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):  # (nested)
        where = np.full(n, -1, dtype=np.int64)
        where[rows] = np.arange(k, dtype=np.int64)
        return part.take(pa.array(where, mask=where < 0))


_FEW = 4  # IN lists of up to this many literal values are tested as comparisons


def _in_list(expr: InList, batch: pa.RecordBatch, n: int,
             memo: dict[Expr, pa.Array] | None = None) -> pa.Array:
    arg = _bare(_eval(expr.arg, batch, n, memo))
    literals = [v for v in expr.values if isinstance(v, Literal)]
    nested = pa.types.is_nested(arg.type)  # (ROW / ARRAY / MAP: compared whole, by "eq")
    if len(literals) == len(expr.values) and not nested:
        present = [v.value for v in literals if v.value is not None]
        has_null = len(present) != len(expr.values)
        if 0 < len(present) <= _FEW:  # (a few comparisons beat hashing the values)
            found = pc.equal(arg, pa.scalar(present[0], arg.type))
            for value in present[1:]:
                found = pc.or_(found, pc.equal(arg, pa.scalar(value, arg.type)))
            found = pc.fill_null(found, False) if arg.null_count else found
        else:
            found = pc.is_in(arg, value_set=pa.array(present, arg.type))
        if not has_null and not arg.null_count:
            return pc.invert(found) if expr.negated else found
    else:
        found = pa.array([False] * n)
        has_null_arr = pa.array([False] * n)
        for v in expr.values:
            other = _bare(_eval(v, batch, n, memo))
            same = kernel_for("eq")([arg, other], [None, None], pa.bool_()) if nested else \
                pc.equal(arg, other)
            found = pc.or_(found, pc.fill_null(same, False))
            has_null_arr = pc.or_(has_null_arr, pc.is_null(other))
        has_null = None
    # SQL three-valued logic: x IN (..., NULL) is NULL when x is not found; NULL IN (...) is NULL.
    unknown = pc.is_null(arg)
    if has_null is None:
        unknown = pc.or_(unknown, pc.and_(pc.invert(found), has_null_arr))
    elif has_null:
        unknown = pc.or_(unknown, pc.invert(found))
    result = pc.invert(found) if expr.negated else found
    return pc.if_else(unknown, pa.nulls(n, pa.bool_()), result)


def _current_watermark(batch: pa.RecordBatch, n: int, out: pa.DataType) -> pa.Array:
    # The watermark before each row (NULL until there is one), from the $wm meta column.
    wm = row_watermarks(batch)
    if wm is None:
        return pa.nulls(n, out)
    return pa.array(wm, out, mask=wm == MIN_WATERMARK)
