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
from sqlengine.bind_ordered import ordered_parts
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


# The standard's two-argument statistics (SQL:2003; DuckDB and PostgreSQL have them, Flink not),
# of the pairs whose values are both not NULL: sqlglot's key -> the function's name.
BIVARIATE = {"corr": "CORR", "covarpop": "COVAR_POP", "covarsamp": "COVAR_SAMP",
             "regrslope": "REGR_SLOPE", "regrintercept": "REGR_INTERCEPT",
             "regrcount": "REGR_COUNT", "regrr2": "REGR_R2", "regravgx": "REGR_AVGX",
             "regravgy": "REGR_AVGY", "regrsxx": "REGR_SXX", "regrsyy": "REGR_SYY",
             "regrsxy": "REGR_SXY"}
# BOOL_AND / EVERY and BOOL_OR (FALSE < TRUE), ANY_VALUE (a value that is not NULL: the least,
# the same at any parallelism and on Spark; of a nested value, the first): sqlglot's key ->
# (the aggregate computing it, the function's name).
ALIASES = {"logicaland": ("min", "BOOL_AND"), "logicalor": ("max", "BOOL_OR"),
           "anyvalue": ("first_value", "ANY_VALUE")}


def is_reducible(node: exp.Expression) -> bool:
    if ordered_parts(node) is not None:  # (sqlengine/bind_ordered.py)
        return True
    if isinstance(node, exp.FirstValue | exp.LastValue):  # (DISTINCT: distinct_first_last)
        return isinstance(node.this, exp.Distinct)
    return isinstance(node, exp.AggFunc) and (node.key in VARIANCES or node.key in BIVARIATE
                                              or node.key in ALIASES)


def is_bivariate(node: exp.Expression) -> bool:
    return node.key in BIVARIATE


def argument_error(node: exp.Expression, args: list[Expr]) -> str | None:
    """Why the bound ``args`` do not fit the reducible aggregate ``node``, if they do not."""
    if isinstance(node, exp.FirstValue | exp.LastValue):
        return None
    if node.key in ALIASES:
        name = ALIASES[node.key][1]
        if node.key != "anyvalue" and args[0].dtype not in (T.BOOLEAN, T.NULL):
            return f"{name} takes a BOOLEAN, got {T.type_name(args[0].dtype)}"
        return None
    name = BIVARIATE.get(node.key, node.sql_name())
    for a in args:
        if not (T.is_numeric(a.dtype) or a.dtype == T.NULL):
            return f"{name} takes numbers, got {T.type_name(a.dtype)}"
    return None


def reduce_aggregate(node: exp.Expression, args: list[Expr], distinct: bool,
                     filt: Expr | None, add: Callable[[AggCall], Expr]) -> Expr:
    """The expression of the reducible aggregate ``node`` of the bound ``args`` (checked by
    argument_error) over the aggregate calls it adds."""
    if node.key in ALIASES:
        func = ALIASES[node.key][0]
        if func == "first_value" and (T.is_numeric(args[0].dtype) or T.is_string(
                args[0].dtype) or T.is_temporal(args[0].dtype) or args[0].dtype == T.BOOLEAN):
            func = "min"
        arg = args[0] if args[0].dtype != T.NULL or func == "first_value" else \
            Cast(args[0], T.BOOLEAN)
        return add(AggCall(func, (arg,), arg.dtype, distinct, filt))
    if node.key in BIVARIATE:
        return reduce_bivariate(node.key, args[0], args[1], filt, add)
    if isinstance(node, exp.FirstValue | exp.LastValue):
        return distinct_first_last(isinstance(node, exp.FirstValue), args[0], filt, add)
    arg = args[0] if args[0].dtype != T.NULL else Cast(args[0], T.DOUBLE)
    return reduce_variance(node, arg, distinct, filt, add)


def distinct_first_last(first: bool, x: Expr, filt: Expr | None,
                        add: Callable[[AggCall], Expr]) -> Expr:
    """FIRST_VALUE / LAST_VALUE(DISTINCT x): the first / last of the group's distinct non-NULL
    values in the order they came (from none, as Flink's distinct view feeds its function:
    a value retracted to none and coming again goes last), i.e. an end of ARRAY_AGG(DISTINCT
    x) FILTER (WHERE x IS NOT NULL), which every aggregate operator runs, retractions too."""
    t = T.STRING if x.dtype == T.NULL else x.dtype
    arg = x if x.dtype == t else Cast(x, t)
    present = Call("is_not_null", (arg,), T.BOOLEAN)
    keep = present if filt is None else Call("and", (filt, present), T.BOOLEAN)
    values = add(AggCall("array_agg", (arg,), T.array_of(t), True, keep))
    index: Expr = Literal(1, T.INT) if first else \
        Call("cardinality", (values,), T.INT)
    return Call("element_at", (values, index), t)


def reduce_bivariate(key: str, y: Expr, x: Expr, filt: Expr | None,
                     add: Callable[[AggCall], Expr]) -> Expr:
    """CORR / COVAR_* / REGR_*(y, x) over the pairs where both are not NULL (a FILTER of
    them), from sums: the co-moments C(a, b) = SUM(a*b) - SUM(a) * SUM(b) / n, each from exact
    integer sums of the values' integral parts and DOUBLE sums of the rest (as a DOUBLE's
    variance, _split_variance: the plain sums cancel for values large against their
    spread), then

        COVAR_POP = C(y, x) / n            COVAR_SAMP = C(y, x) / (n - 1), NULL for n < 2
        CORR = C(y, x) / SQRT(C(x, x) * C(y, y)), NULL where either variance is 0
        REGR_SLOPE = C(y, x) / C(x, x)     REGR_INTERCEPT = AVG(y) - REGR_SLOPE * AVG(x)
        REGR_R2 = CORR^2 (1 where y is constant, NULL where x is)
        REGR_SXX / SYY / SXY = C(x, x) / C(y, y) / C(y, x), REGR_AVGX / AVGY, REGR_COUNT = n

    as DuckDB and PostgreSQL define them."""
    pair: Expr = Call("and", (Call("is_not_null", (y,), T.BOOLEAN),
                              Call("is_not_null", (x,), T.BOOLEAN)), T.BOOLEAN)
    if filt is not None:
        pair = Call("and", (filt, pair), T.BOOLEAN)
    yd = y if y.dtype == T.DOUBLE else Cast(y, T.DOUBLE)
    xd = x if x.dtype == T.DOUBLE else Cast(x, T.DOUBLE)
    count = add(AggCall("count", (xd,), T.BIGINT, False, pair))
    if key == "regrcount":
        return count
    n = Cast(count, T.DOUBLE)

    def total(e: Expr) -> Expr:
        return add(AggCall("sum", (e,), T.DOUBLE, False, pair))

    def div(a: Expr, b: Expr) -> Expr:
        return Call("divide", (a, b), T.DOUBLE)

    if key == "regravgx":
        return div(total(xd), n)
    if key == "regravgy":
        return div(total(yd), n)
    zero = Literal(0.0, T.DOUBLE)

    def comoment(a: Expr, b: Expr) -> Expr:
        dec = pa.decimal128(38, 0)
        ha = Call("integral_part", (a,), pa.decimal128(19, 0))
        hb = ha if b is a else Call("integral_part", (b,), pa.decimal128(19, 0))
        la = Call("subtract", (a, Cast(ha, T.DOUBLE)), T.DOUBLE)
        lb = la if b is a else Call("subtract", (b, Cast(hb, T.DOUBLE)), T.DOUBLE)
        hh = Call("exact_product", (ha, hb), dec)
        parts = [add(AggCall("sum", (hh,), dec, False, pair)),
                 add(AggCall("sum", (ha,), dec, False, pair)),
                 add(AggCall("sum", (hb,), dec, False, pair)),
                 add(AggCall("count", (hh,), T.BIGINT, False, pair)),
                 total(Call("multiply", (Cast(ha, T.DOUBLE), lb), T.DOUBLE)),
                 total(Call("multiply", (la, Cast(hb, T.DOUBLE)), T.DOUBLE)),
                 total(Call("multiply", (la, lb), T.DOUBLE)), total(la), total(lb),
                 total(Call("multiply", (a, b), T.DOUBLE)), total(a), total(b), count]
        return Call("comoment", (*parts, Literal(b is a, T.BOOLEAN)), T.DOUBLE)

    def unless_zero(d: Expr, value: Expr) -> Expr:
        return Case(((Call("ne", (d, zero), T.BOOLEAN), value),), None, T.DOUBLE)

    if key == "covarpop":
        return div(comoment(yd, xd), n)
    if key == "covarsamp":
        one = Literal(1.0, T.DOUBLE)
        return Case(((Call("gt", (n, one), T.BOOLEAN),
                      div(comoment(yd, xd), Call("subtract", (n, one), T.DOUBLE))),),
                    None, T.DOUBLE)
    if key == "regrsxy":
        return comoment(yd, xd)
    cxx = comoment(xd, xd)
    if key == "regrsxx":
        return cxx
    cyy = comoment(yd, yd)
    if key == "regrsyy":
        return cyy
    cxy = comoment(yd, xd)
    slope = unless_zero(cxx, div(cxy, cxx))
    if key == "regrslope":
        return slope
    if key == "regrintercept":
        return Call("subtract", (div(total(yd), n),
                                 Call("multiply", (slope, div(total(xd), n)), T.DOUBLE)),
                    T.DOUBLE)
    both = Call("multiply", (cxx, cyy), T.DOUBLE)
    if key == "corr":
        return unless_zero(both, div(cxy, Call("power", (both, Literal(0.5, T.DOUBLE)),
                                                T.DOUBLE)))
    assert key == "regrr2", key
    return Case(((Call("eq", (cxx, zero), T.BOOLEAN), Literal(None, T.DOUBLE)),
                 (Call("eq", (cyy, zero), T.BOOLEAN), Literal(1.0, T.DOUBLE))),
                div(Call("multiply", (cxy, cxy), T.DOUBLE), both), T.DOUBLE)

