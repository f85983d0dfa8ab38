"""Aggregate functions computed from simpler ones (Calcite's AggregateReduceFunctionsRule):
VAR_POP / VAR_SAMP / VARIANCE / STDDEV_POP / STDDEV_SAMP / STDDEV from SUM(x * x), SUM(x) and
COUNT(x), so every aggregate operator (grouped, windowed, two-phase, on Spark) runs them.

    VAR_POP(x)  = (SUM(x*x) - SUM(x)^2 / COUNT(x)) / COUNT(x)
    VAR_SAMP(x) = (SUM(x*x) - SUM(x)^2 / COUNT(x)) / (COUNT(x) - 1), NULL for one value
    STDDEV_*(x) = SQRT(VAR_*(x))

computed in DOUBLE and returned as Flink types them (as AVG: an INT column's is an INT); for an
integer or a short DECIMAL the sums are exact too (runtime/variance.py), as the DOUBLE ones
cancel for values large against their spread.
"""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.plan.expressions import AggCall, Call, Case, Cast, Expr, Literal

# sqlglot's key -> (sample variance?, square root?)
VARIANCES = {"variancepop": (False, False), "variance": (True, False),
             "stddevpop": (False, True), "stddevsamp": (True, True), "stddev": (True, True)}


def reduce_variance(node: exp.Expression, arg: Expr, distinct: bool, filt: Expr | None,
                    add: Callable[[AggCall], Expr]) -> Expr:
    """The expression of a variance / standard deviation ``node`` of the bound ``arg`` over
    the aggregate calls it adds (``add`` returns the output column of a call)."""
    sample, root = VARIANCES[node.key]
    t = arg.dtype
    x = Cast(arg, T.DOUBLE) if t != T.DOUBLE else arg
    square = Call("multiply", (x, x), T.DOUBLE)
    q = add(AggCall("sum", (square,), T.DOUBLE, distinct, filt))
    s = add(AggCall("sum", (x,), T.DOUBLE, distinct, filt))
    count = add(AggCall("count", (x,), T.BIGINT, distinct, filt))
    n = Cast(count, T.DOUBLE)
    scale = _exact_scale(t)
    if scale is not None and not distinct:
        # Integers and short DECIMALs: exact sums beside (runtime/variance.py), which the
        # DOUBLE sums above stand in for only where a value is too large for them.
        exact = Cast(arg, T.as_decimal(t)) if T.is_integer(t) else arg
        sq = Call("exact_square", (exact,), pa.decimal128(38, 2 * scale))
        qe = add(AggCall("sum", (sq,), pa.decimal128(38, 2 * scale), False, filt))
        se = add(AggCall("sum", (exact,), pa.decimal128(38, scale), False, filt))
        ne = add(AggCall("count", (sq,), T.BIGINT, False, filt))
        value: Expr = Call("variance", (qe, se, ne, q, s, count, Literal(sample, T.BOOLEAN)),
                           T.DOUBLE)
    else:
        value = _double_variance(q, s, n, sample)
    if root:
        value = Call("power", (value, Literal(0.5, T.DOUBLE)), T.DOUBLE)
    out = T.avg_type(t if t != T.NULL else T.DOUBLE)
    return value if out == T.DOUBLE else Cast(value, out)


def _exact_scale(t: pa.DataType) -> int | None:
    """The scale of an argument whose variance is exact (an integer, or a DECIMAL of at most
    18 digits), else None."""
    if T.is_integer(t):
        return 0
    if pa.types.is_decimal(t) and t.precision <= 18 and 2 * t.scale <= 38:
        return t.scale
    return None


def _double_variance(q: Expr, s: Expr, n: Expr, sample: bool) -> Expr:
    """(SUM(x*x) - SUM(x)^2 / n) / (n or n - 1) in DOUBLE (NULL for one value, sample)."""
    spread = Call("subtract", (q, Call("divide", (Call("multiply", (s, s), T.DOUBLE), n),
                                       T.DOUBLE)), T.DOUBLE)
    one = Literal(1.0, T.DOUBLE)
    if sample:
        value: Expr = Case(((Call("gt", (n, one), T.BOOLEAN),
                             Call("divide", (spread, Call("subtract", (n, one), T.DOUBLE)),
                                  T.DOUBLE)),), None, T.DOUBLE)
    else:
        value = Call("divide", (spread, n), T.DOUBLE)
    return value


def is_reducible(node: exp.Expression) -> bool:
    return isinstance(node, exp.AggFunc) and node.key in VARIANCES

