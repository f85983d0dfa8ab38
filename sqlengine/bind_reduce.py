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
    elif pa.types.is_floating(t) and not distinct:
        value = _split_variance(x, q, s, count, sample, filt, add)
    else:
        value = _double_variance(q, s, n, sample)
    if root:
        value = Call("power", (value, Literal(0.5, T.DOUBLE)), T.DOUBLE)
    out = T.avg_type(t if t != T.NULL else T.DOUBLE)
    return value if out == T.DOUBLE else Cast(value, out)


def _split_variance(x: Expr, q: Expr, s: Expr, count: Expr, sample: bool,
                    filt: Expr | None, add: Callable[[AggCall], Expr]) -> Expr:
    """A DOUBLE's variance from x = h + l, h its nearest integer (exact sums) and l the rest
    (|l| <= 0.5, DOUBLE sums of l, l * l and h * l): n * VAR = (n * SUM(h*h) - SUM(h)^2) / n
    + 2 * (SUM(h*l) - SUM(h) * SUM(l) / n) + (SUM(l*l) - SUM(l)^2 / n), where the DOUBLE sums
    of x and x * x cancel (1000000001, 1000000002, 1000000003 gave 0, not 0.667); the DOUBLE
    sums stand in where a value has no such h (NaN, infinite, 2^50 or more)."""
    dec = pa.decimal128(38, 0)
    h = Call("integral_part", (x,), pa.decimal128(19, 0))
    hd = Cast(h, T.DOUBLE)
    lo = Call("subtract", (x, hd), T.DOUBLE)
    sq = Call("exact_square", (h,), dec)
    parts = [add(AggCall("sum", (sq,), dec, False, filt)),
             add(AggCall("sum", (h,), dec, False, filt)),
             add(AggCall("count", (sq,), T.BIGINT, False, filt)),
             add(AggCall("sum", (Call("multiply", (hd, lo), T.DOUBLE),), T.DOUBLE, False, filt)),
             add(AggCall("sum", (lo,), T.DOUBLE, False, filt)),
             add(AggCall("sum", (Call("multiply", (lo, lo), T.DOUBLE),), T.DOUBLE, False,
                         filt))]
    return Call("split_variance", (*parts, q, s, count, Literal(sample, T.BOOLEAN)), T.DOUBLE)


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

