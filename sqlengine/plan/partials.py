"""The layout of mergeable partial aggregates: which partial columns each aggregate keeps
and their types. Written once here; the optimizer's two-phase aggregation plans the local
phase's output with it, and runtime/operators/partials.py computes and merges by it."""

from __future__ import annotations

import pyarrow as pa

from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.nodes import Field

# Aggregates whose partial results merge (a two-phase aggregation can split them).
MERGEABLE = ("count_star", "count", "sum", "avg", "min", "max")


def sum_type(t: pa.DataType) -> pa.DataType:
    """The type partial sums are kept in."""
    if pa.types.is_decimal(t):
        return pa.decimal128(38, t.scale)
    if pa.types.is_floating(t):
        return pa.float64()
    return pa.int64()


def partial_columns(aggs: tuple[AggCall, ...]) -> list[tuple[str, str]]:
    """(partial column, Arrow aggregation that combines it) for every aggregate, in order:
    c<j> counts rows (COUNT(*)), n<j> counts non-null values, s<j> sums (SUM and AVG keep
    s<j> and n<j>), m<j> is a MIN or MAX. DISTINCT COUNT / SUM / AVG keep no partial columns
    (their distinct values are kept apart)."""
    columns: list[tuple[str, str]] = []
    for j, a in enumerate(aggs):
        if a.distinct and a.func in ("count", "sum", "avg"):
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


def partial_fields(keys: tuple[Expr, ...], aggs: tuple[AggCall, ...]) -> list[Field] | None:
    """The partial rows of a local pre-aggregation: the keys k0.., then each aggregate's
    partial columns (None when an aggregate's partial results do not merge)."""
    if any(a.distinct or a.func not in MERGEABLE for a in aggs):
        return None
    fields = [Field(f"k{i}", k.dtype) for i, k in enumerate(keys)]
    for column, _ in partial_columns(aggs):
        if column[0] in ("c", "n"):
            fields.append(Field(column, pa.int64()))
            continue
        arg = aggs[int(column[1:])].args[0].dtype  # (SUM, AVG, MIN and MAX have one)
        fields.append(Field(column, sum_type(arg) if column[0] == "s" else arg))
    return fields
