"""The layout of mergeable partial aggregates: which partial columns each aggregate keeps
and their types. Written once here; the optimizer's two-phase aggregation plans the local
phase's output with it, and runtime/operators/partials.py computes and merges by it.

A Python aggregate function (functions_python.udaf) of the class kind with a ``merge``
method splits too: its partial column p<j> holds each group's accumulator, pickled (binary:
it crosses the exchange between worker processes as Arrow IPC), which the global phase
merges into the group's accumulator with the function's ``merge``."""

from __future__ import annotations

import pickle

import pyarrow as pa

from sqlengine import functions_python
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.nodes import Field

# Aggregates whose partial results merge (a two-phase aggregation can split them).
MERGEABLE = ("count_star", "count", "sum", "avg", "min", "max")
# Those whose partials take an updating input's retractions as negative rows (a window
# aggregate over a changelog; runtime/operators/partials.py)
SIGNED = ("count_star", "count", "sum", "avg")

# The type of a Python aggregate's partial column: one pickled accumulator per group (NULL
# where the group had no row for it, e.g. a FILTER left them all out).
ACCUMULATOR = pa.binary()


def sum_type(t: pa.DataType) -> pa.DataType:
    """The type partial sums are kept in."""
    if pa.types.is_decimal(t):
        return pa.decimal128(38, t.scale)
    if pa.types.is_floating(t):
        return pa.float64()
    return pa.int64()


def partial_sum_type(t: pa.DataType) -> pa.DataType:
    """The type a window aggregate's partial sums (s<j>) are kept in: :func:`sum_type`,
    but 76 digits for a DECIMAL of more than 18, whose sum can pass 38 digits (Arrow's
    DECIMAL(38) sum would wrap; a SUM past them is NULL, as in Flink)."""
    if pa.types.is_decimal(t) and t.precision > 18:
        return pa.decimal256(76, t.scale)
    return sum_type(t)


def partial_columns(aggs: tuple[AggCall, ...]) -> list[tuple[str, str]]:
    """(partial column, Arrow aggregation that combines it) for every aggregate, in order:
    c<j> counts rows (COUNT(*)), n<j> counts non-null values, s<j> sums (SUM and AVG keep
    s<j> and n<j>), m<j> is a MIN or MAX. DISTINCT COUNT / SUM / AVG keep no partial columns
    (their distinct values are kept apart), nor do Python aggregates (no Arrow aggregation
    combines them: see :func:`partial_names`)."""
    columns: list[tuple[str, str]] = []
    for j, a in enumerate(aggs):
        if (a.distinct and a.func in ("count", "sum", "avg")) or _is_python(a):
            continue
        if a.func == "count_star":
            columns.append((f"c{j}", "sum"))
        elif a.func == "count":
            columns.append((f"n{j}", "sum"))
        elif a.func in ("sum", "avg"):
            columns += [(f"s{j}", "sum"), (f"n{j}", "sum")]
        else:
            columns.append((f"m{j}", _ARROW.get(a.func, a.func)))
    return columns


# Aggregates whose Arrow hash aggregation has another name (FIRST_VALUE / LAST_VALUE: the
# first / last non-NULL value in arrival order; the input order is kept, no threads).
_ARROW = {"first_value": "first", "last_value": "last"}


def _is_python(a: AggCall) -> bool:
    return functions_python.is_python(a.func)


def partial_names(aggs: tuple[AggCall, ...]) -> list[str]:
    """The partial columns of a two-phase aggregation after its keys, in order: each
    aggregate's (:func:`partial_columns`; p<j> for a Python aggregate)."""
    by_agg: dict[int, list[str]] = {}
    for column, _ in partial_columns(aggs):
        by_agg.setdefault(int(column[1:]), []).append(column)
    return [name for j, a in enumerate(aggs)
            for name in ([f"p{j}"] if _is_python(a) else by_agg.get(j, []))]


def python_blocker(a: AggCall) -> str | None:
    """Why a Python aggregate call cannot be split into a local and a global phase (None:
    it can: a class aggregate with ``merge`` whose accumulators pickle)."""
    if not _is_python(a):
        return None
    name = functions_python.display_name(a.func)
    what = f"the Python aggregate function {name}"
    if a.distinct:
        return f"{what} is called with DISTINCT (its distinct rows are kept apart)"
    function = functions_python.registered(a.func)
    if function is None:
        return f"{what} is not registered in this process"
    if function.kind != "aggregate":
        kind = "pandas" if function.kind == "pandas_agg" else "arrow"
        return (f"{what} is a vectorised ({kind}) aggregate: it is called once on each "
                "group's rows, which do not merge into a smaller partial")
    if not function.can("merge"):
        return f"{what} has no merge() method"
    try:  # (the global phase receives its accumulators pickled)
        acc = function.fn.create_accumulator()
    except Exception as e:  # (the user's code: it fails again, with its traceback, at run)
        return f"{what}'s create_accumulator() failed: {type(e).__name__}: {e}"
    try:
        pickle.dumps(acc, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # (what the accumulator holds)
        return (f"{what}'s accumulator cannot be pickled to cross the exchange: "
                f"{type(e).__name__}: {e}")
    return None


def with_row_count(aggs: tuple[AggCall, ...]) -> tuple[AggCall, ...]:
    """``aggs`` and a COUNT(*) after them: the partial rows of a two-phase window aggregation
    carry, as c<len(aggs)>, the rows each stands for (a late partial row counts them as
    dropped, as a late row counts one)."""
    return (*aggs, AggCall("count_star", (), pa.int64()))


def partial_fields(keys: tuple[Expr, ...], aggs: tuple[AggCall, ...]) -> list[Field] | None:
    """The partial rows of a local pre-aggregation: the keys k0.., then each aggregate's
    partial columns (None when an aggregate's partial results do not merge)."""
    if any(a.distinct or (a.func not in MERGEABLE and not _is_python(a)) for a in aggs) or \
            any(python_blocker(a) is not None for a in aggs):
        return None
    fields = [Field(f"k{i}", k.dtype) for i, k in enumerate(keys)]
    for column in partial_names(aggs):
        if column[0] in ("c", "n"):
            fields.append(Field(column, pa.int64()))
            continue
        if column[0] == "p":
            fields.append(Field(column, ACCUMULATOR))
            continue
        arg = aggs[int(column[1:])].args[0].dtype  # (SUM, AVG, MIN and MAX have one)
        fields.append(Field(column, partial_sum_type(arg) if column[0] == "s" else arg))
    return fields
