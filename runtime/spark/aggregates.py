"""Aggregate calls as Spark columns (Flink's results: integer AVG truncates, SUM keeps its
type), and where each aggregate's argument and FILTER condition are prepared."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from sqlengine.errors import NotSupportedError
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.runtime.spark.expressions import spark_type


def agg_column(call: AggCall, arg: str | None, flag: str | None, out: pa.DataType,
               over: Any = None) -> Any:
    """``call`` over the prepared column ``arg`` (rows where column ``flag`` holds, if any);
    with ``over`` (a window spec) each aggregate runs over that window, before any cast."""
    from pyspark.sql import functions as F

    def w(c: Any) -> Any:
        return c if over is None else c.over(over)

    t = spark_type(out)
    if call.func == "count_star":
        return w(F.count(F.lit(1)) if flag is None else F.count(F.when(F.col(flag), 1)))
    if not arg:
        msg = f"{call.sql()} has no argument"
        raise NotSupportedError(msg)
    value = F.col(arg)
    if flag is not None:
        value = F.when(F.col(flag), value)
    if call.distinct and call.func in ("count", "sum", "avg"):
        if over is not None:
            msg = f"{call.sql()} over a window has no Spark translation (Spark has no " \
                  "DISTINCT window aggregates)"
            raise NotSupportedError(msg)
        if call.func == "count":
            return F.countDistinct(value)
        total = F.sum_distinct(value)
        if call.func == "sum":
            return total.cast(t)
        n = F.countDistinct(value)
        return avg_column(total, n, out)
    if call.func == "count":
        return w(F.count(value))
    if call.func == "sum":
        return w(F.sum(value)).cast(t)
    if call.func == "min":
        return w(F.min(value)).cast(t)
    if call.func == "max":
        return w(F.max(value)).cast(t)
    if call.func != "avg":
        msg = f"the aggregate {call.func.upper()} has no Spark translation yet"
        raise NotSupportedError(msg)
    return avg_column(w(F.sum(value)), w(F.count(value)), out)


def agg_inputs(aggs: tuple[AggCall, ...], exprs: list[Expr]
               ) -> tuple[list[Expr], list[tuple[int | None, int | None]]]:
    """``exprs`` plus each aggregate's argument and FILTER condition, and where they are."""
    exprs = list(exprs)
    slots: list[tuple[int | None, int | None]] = []
    for a in aggs:
        arg = flag = None
        if a.args:
            exprs.append(a.args[0])
            arg = len(exprs) - 1
        if a.filter is not None:
            exprs.append(a.filter)
            flag = len(exprs) - 1
        slots.append((arg, flag))
    return exprs, slots


def avg_column(total: Any, count: Any, out: pa.DataType) -> Any:
    from pyspark.sql import functions as F

    t = spark_type(out)
    if pa.types.is_integer(out):  # Flink: AVG of an integer column truncates
        return F.when(count > 0, (total.cast("long") / count).cast("long")).cast(t)
    return F.when(count > 0, total / count).cast(t)
