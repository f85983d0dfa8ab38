"""Regular, window and interval joins on Spark DataFrames (batch mode).

Every join kind of ours has a Spark join type with the same rows: inner, left (left_outer),
full (full_outer), semi (left_semi: each left row once if some right row matches) and anti
(left_anti: the left rows no right row matches). Our anti join is the plain one (NOT EXISTS):
a left row whose key is NULL matches nothing and is kept, as in Spark's left_anti through the
DataFrame API (Spark's null-aware anti join is planned only for its own NOT IN subqueries;
ours is rewritten by the optimizer into left joins and counts before any runtime sees it).

The keys become equalities (NULL never equals anything, in Spark as in ours) and the residual
condition is ANDed to them, so it decides matches inside the join for every kind (an outer
join pads, an anti join keeps, the rows it rejects). A join without keys is a cross join
(inner, no condition) or a nested-loop join on its condition (Spark's
BroadcastNestedLoopJoin / CartesianProduct). Keys Spark would evaluate differently are computed
by our own kernels into extra columns first. A residual condition Spark would evaluate
differently filters an inner join's pairs (our kernels); the other kinds are then built from
those pairs: the rows of a side that are (semi) or are not (anti, the padded rows of outer
joins) among them.
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING, Any, TypeAlias

import pyarrow as pa

from sqlengine.errors import NotSupportedError
from sqlengine.optimizer.specs import JoinSpec
from sqlengine.optimizer.specs_windows import IntervalJoinSpec, WindowJoinSpec
from sqlengine.plan.expressions import Cast, Expr, remap_columns
from sqlengine.types import MAX_DECIMAL_PRECISION, as_decimal

if TYPE_CHECKING:
    from sqlengine.runtime.spark.translate import SparkJob

Joining: TypeAlias = JoinSpec | WindowJoinSpec | IntervalJoinSpec

# Our join kinds -> Spark's join types.
SPARK_JOIN_TYPES = {"inner": "inner", "left": "left_outer", "full": "full_outer",
                    "semi": "left_semi", "anti": "left_anti"}


def spark_join_type(kind: str) -> str:
    if kind not in SPARK_JOIN_TYPES:
        msg = f"a {kind.upper()} join has no Spark translation"
        raise NotSupportedError(msg)
    return SPARK_JOIN_TYPES[kind]


def join_frames(job: SparkJob, op: Joining, left: Any, right: Any,
                extra: list[Any] | None = None) -> Any:
    """``left`` joined with ``right`` as ``op`` says; columns c0.. of the left input, then (but
    for semi and anti joins) the right input's, renumbered after the left's."""
    from pyspark.sql import functions as F

    how = spark_join_type(op.join_kind)
    n_left, n_right = len(left.columns), len(right.columns)
    right_names = [f"c{i}" for i in range(n_left, n_left + n_right)]
    pairs = [within_spark_digits(a, b) for a, b in zip(op.left_keys, op.right_keys)]
    left_keys, right_keys = [a for a, _ in pairs], [b for _, b in pairs]
    lkeys = [job._expr(k) for k in left_keys]
    rkeys = [job._expr(_shift(k, n_left)) for k in right_keys]
    helpers: list[str] = []
    if any(k is None for k in lkeys + rkeys):
        # Keys Spark evaluates differently: our kernels compute them as columns lk0.., rk0..
        left, lnames = job._prepare(left, left_keys)
        right, rnames = job._prepare(right, right_keys)
        left = left.toDF(*left.columns[:n_left], *[f"lk{i}" for i in range(len(lnames))])
        right = right.toDF(*right_names, *[f"rk{i}" for i in range(len(rnames))])
        lkeys = [F.col(f"lk{i}") for i in range(len(lnames))]
        rkeys = [F.col(f"rk{i}") for i in range(len(rnames))]
        helpers = [f"lk{i}" for i in range(len(lnames))] + [f"rk{i}" for i in range(len(rnames))]
    else:
        right = right.toDF(*right_names)
    # (a floating key: NaN meets nothing, as = says and our native joins do; Spark's = joins
    # NaN to NaN. -0.0 meets 0.0 in both.)
    conds = [(a == b) & ~F.isnan(a) if pa.types.is_floating(k.dtype) else a == b
             for a, b, k in zip(lkeys, rkeys, left_keys)]
    post: Expr | None = None
    if op.condition is not None:
        c = job._expr(op.condition)
        if c is not None:
            conds.append(c)
        else:
            post = op.condition  # filters the pairs after an inner join (our kernels)
    conds += extra or []
    if post is not None and how != "inner":
        pairs = _join(left, right, conds, "inner").drop(*helpers)
        pairs = job._filter(pairs, post)
        return _from_pairs(how, left.drop(*helpers), right.drop(*helpers), pairs)
    joined = _join(left, right, conds, how).drop(*helpers)
    if post is not None:
        joined = job._filter(joined, post)
    return joined


def within_spark_digits(left: Expr, right: Expr) -> tuple[Expr, Expr]:
    """Equality keys compared as a DECIMAL past Spark's 38 digits (the exact comparison type
    of a DECIMAL(38, 2) and a DECIMAL(10, 4) is a DECIMAL(40, 4)), cast to one within them.

    Two equal values fit both sides' integral digits, so DECIMAL(fewer integral digits +
    scale, scale), at most 38 digits, holds every value that can meet one of the other side;
    a value past it is NULL (TRY_CAST) and meets none, as it would have. (A plain anti join's
    NULL key is kept as an unmatched one is; NOT IN never reaches a join key.)"""
    t = left.dtype
    if not (pa.types.is_decimal(t) and t.precision > MAX_DECIMAL_PRECISION):
        return left, right

    def integral(k: Expr) -> int:
        src = k.arg.dtype if isinstance(k, Cast) else k.dtype
        if not (pa.types.is_decimal(src) or pa.types.is_integer(src)):
            return t.precision - t.scale
        d = as_decimal(src)
        return d.precision - d.scale

    digits = min(integral(left), integral(right)) + t.scale
    if digits > MAX_DECIMAL_PRECISION:
        return left, right  # (refused by name when Spark meets the type)
    within = pa.decimal128(max(digits, 1), t.scale)

    def narrowed(k: Expr) -> Expr:
        return Cast(k.arg if isinstance(k, Cast) else k, within, safe=True)

    return narrowed(left), narrowed(right)


def _join(left: Any, right: Any, conds: list[Any], how: str) -> Any:
    from pyspark.sql import functions as F

    if not conds and how == "inner":
        return left.crossJoin(right)
    cond = reduce(lambda x, y: x & y, conds) if conds else F.lit(True)
    return left.join(right, cond, how)


def _from_pairs(how: str, left: Any, right: Any, pairs: Any) -> Any:
    """A semi, anti, left or full join from its matching ``pairs`` (the inner join's rows).

    A row of a side matched if it is among the pairs' rows of that side: compared on every
    column with null-safe equality, so equal duplicate rows share their answer, as they do
    in the join itself (no row ids needed)."""
    from pyspark.sql import functions as F

    def unmatched(side: Any, names: list[str], keep: str) -> Any:
        seen = pairs.select(*names).distinct().toDF(*[f"m{i}" for i in range(len(names))])
        same = [F.col(n).eqNullSafe(F.col(f"m{i}")) for i, n in enumerate(names)]
        return side.join(seen, reduce(lambda x, y: x & y, same), keep)

    if how in ("left_semi", "left_anti"):
        return unmatched(left, left.columns, how)
    lonely = unmatched(left, left.columns, "left_anti")
    out = pairs.unionByName(lonely.select(*left.columns, *_nulls(right)))
    if how == "full_outer":
        alone = unmatched(right, right.columns, "left_anti")
        out = out.unionByName(alone.select(*_nulls(left), *right.columns))
    return out


def _nulls(side: Any) -> list[Any]:
    """NULL columns in place of ``side``'s (its names and types)."""
    from pyspark.sql import functions as F

    return [F.lit(None).cast(f.dataType).alias(f.name) for f in side.schema.fields]


def _shift(e: Expr, by: int) -> Expr:
    """A right-side expression over the joined row (its columns after the left's)."""
    return remap_columns(e, {i: i + by for i in e.columns()})
