"""Aggregate calls as Spark columns (Flink's results: integer AVG truncates, SUM keeps its
type), and where each aggregate's argument and FILTER condition are prepared."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from sqlengine.errors import NotSupportedError
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.runtime.spark.expressions import spark_type


def agg_column(call: AggCall, arg: str | None, flag: str | None, out: pa.DataType,
               over: Any = None, streaming: bool = False) -> Any:
    """``call`` over the prepared column ``arg`` (rows where column ``flag`` holds, if any);
    with ``over`` (a window spec) each aggregate runs over that window, before any cast.
    ``streaming``: in a Structured Streaming aggregation, which has no DISTINCT aggregates
    (a DISTINCT one is computed from the set of the group's values then)."""
    from pyspark.sql import functions as F

    def w(c: Any) -> Any:
        return c if over is None else c.over(over)

    t = spark_type(out)
    if call.func.startswith("py:"):
        if streaming and over is None:
            return python_rows(call, arg, flag)
        return w(python_aggregate(call, arg, flag, out)).cast(t)
    if call.func == "count_star":
        return w(F.count(F.lit(1)) if flag is None else F.count(F.when(F.col(flag), 1)))
    if not arg:
        msg = f"{call.sql()} has no argument"
        raise NotSupportedError(msg)
    value = F.col(arg)
    if flag is not None:
        value = F.when(F.col(flag), value)
    if call.distinct and call.func in ("count", "sum", "avg"):
        if streaming or over is not None:  # (Spark has no DISTINCT window aggregates)
            return distinct_from_set(call.func, value, out, over)
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
        if pa.types.is_decimal(out):
            # (a DECIMAL sum past 38 digits is NULL, as Flink's; Spark's ANSI mode failed
            # with "Overflow in sum of decimals")
            return w(F.try_sum(value)).try_cast(t)
        if pa.types.is_integer(out) and out.bit_width < 64:
            # (Flink's SUM of an INT is an INT, wrapping around as Java's; Spark's sum is a
            # BIGINT, whose cast failed with CAST_OVERFLOW)
            half, whole = 2 ** (out.bit_width - 1), 2 ** out.bit_width
            return (F.pmod(w(F.sum(value)) + F.lit(half), F.lit(whole)) - F.lit(half)).cast(t)
        return w(F.sum(value)).cast(t)
    if call.func == "min":
        return w(F.min(value)).cast(t)
    if call.func == "max":
        return w(F.max(value)).cast(t)
    if call.func != "avg":
        msg = f"the aggregate {call.func.upper()} has no Spark translation yet"
        raise NotSupportedError(msg)
    return avg_column(w(F.sum(value)), w(F.count(value)), out)


def distinct_from_set(func: str, value: Any, out: pa.DataType, over: Any = None) -> Any:
    """COUNT / SUM / AVG (DISTINCT x) from ``collect_set(x)``, the group's (or with ``over``,
    the window frame's) distinct non-NULL values (the state Spark keeps for the group, as the
    native runtime keeps them): Spark's streaming aggregations and its window functions
    refuse DISTINCT aggregates but take collect_set; exact, and NULL for SUM and AVG of no
    values, as SQL says."""
    from pyspark.sql import functions as F

    values = F.collect_set(value)
    if over is not None:
        values = values.over(over)
    n = F.size(values)
    if func == "count":
        return n.cast("long")
    if pa.types.is_decimal(out):
        where = "over a window" if over is not None else "in Structured Streaming"
        msg = (f"{func.upper()}(DISTINCT ...) of a DECIMAL {where} has no Spark translation "
               "yet (Spark has no DISTINCT aggregates there)")
        raise NotSupportedError(msg)
    t = spark_type(out)
    zero = F.lit(0).cast("double" if pa.types.is_floating(out) else "long")
    total = F.when(n > 0, F.aggregate(values, zero, lambda acc, x: acc + x))
    if func == "sum":
        return total.cast(t)
    return avg_column(total, n, out)


def agg_inputs(aggs: tuple[AggCall, ...], exprs: list[Expr]
               ) -> tuple[list[Expr], list[tuple[int | None, int | None]]]:
    """``exprs`` plus each aggregate's argument and FILTER condition, and where they are."""
    exprs = list(exprs)
    slots: list[tuple[int | None, int | None]] = []
    for a in aggs:
        arg = flag = None
        if a.func.startswith("py:"):  # (every argument, one after the other)
            arg = len(exprs) if a.args else None
            exprs.extend(a.args)
        elif a.args:
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


def python_rows(call: AggCall, arg: str | None, flag: str | None) -> Any:
    """A Python aggregate function in a Structured Streaming aggregation (which runs no
    grouped-aggregate pandas UDF): the group's argument rows, collected (a list of structs
    a0, a1, ...; rows FILTER leaves out are not), for the function to run on when the group
    is emitted (streaming._python_values)."""
    from pyspark.sql import functions as F

    if arg is None:
        row = F.struct(F.lit(0).alias("_"))
    else:
        first = int(arg[1:])
        row = F.struct(*[F.col(f"p{first + i}").alias(f"a{i}") for i in range(len(call.args))])
    return F.collect_list(row if flag is None else F.when(F.col(flag), row))


def python_aggregate(call: AggCall, arg: str | None, flag: str | None, out: pa.DataType
                     ) -> Any:
    """A Python aggregate function (functions_python.udaf) as a grouped-aggregate pandas UDF:
    Spark hands it a group's (or a window frame's) argument columns, our accumulator code
    (runtime/operators/python_aggregate.py) makes the value. Its arguments are the prepared
    columns p<i>, p<i+1>, ... from ``arg`` on (agg_inputs puts them one after the other);
    with FILTER the condition's column comes last and rows it leaves out are dropped. The
    function travels pickled with the plan, as scalar functions do (arrow_ops.ship)."""
    from pyspark.sql import functions as F
    from pyspark.sql.functions import PandasUDFType, pandas_udf

    from sqlengine.runtime.spark import arrow_ops

    shipped = arrow_ops.ship(call)
    n = len(call.args)
    if arg is None:
        columns = [F.lit(0)]
    else:
        first = int(arg[1:])
        columns = [F.col(f"p{first + i}") for i in range(n)]
    if flag is not None:
        columns.append(F.col(flag))
    types = [a.dtype for a in call.args]

    def run(*series: Any) -> Any:
        import numpy as np

        from sqlengine.runtime.operators.python_aggregate import PythonAggregate

        arrow_ops.install(shipped)
        py = PythonAggregate(call)
        args = [pa.Array.from_pandas(s).cast(t) for s, t in zip(series, types)]
        rows = len(series[0])
        bounds = np.array([0, rows], dtype=np.int64)
        if flag is not None:
            keep = pa.Array.from_pandas(series[-1]).fill_null(False)
            args = [a.filter(keep) for a in args]
            bounds[1] = len(args[0]) if args else int(np.count_nonzero(keep))
        if call.distinct:
            from sqlengine.runtime.operators.python_aggregate import _distinct_rows

            args, bounds = _distinct_rows(args, bounds)
        state = np.empty(1, dtype=object)
        py.update(state, np.zeros(1, dtype=np.int64), args, bounds)
        return py.values(list(state))[0].as_py()

    import warnings

    with warnings.catch_warnings():  # (PandasUDFType: the form that takes no type hints)
        warnings.simplefilter("ignore", UserWarning)
        udf = pandas_udf(run, spark_type(out), PandasUDFType.GROUPED_AGG)  # type: ignore[call-overload]
    return udf(*columns)
