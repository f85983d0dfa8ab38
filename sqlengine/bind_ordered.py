"""Ordered aggregates, the standard's and PostgreSQL's / DuckDB's: ``ARRAY_AGG(x ORDER BY k
...)``, ``LISTAGG(x [, sep]) WITHIN GROUP (ORDER BY k ...)``, ``STRING_AGG(x, sep ORDER BY k
...)`` (Flink's aggregate in arrival order) and ``PERCENTILE_DISC(f) WITHIN GROUP (ORDER BY
x)``, the first value whose position in the order reaches the fraction f of the values. The
group's rows (k..., x) are collected by ARRAY_AGG, so every aggregate operator runs them
(grouped, windowed, OVER, over retractions), and sorted when read (runtime kernel
``ordered_values``: one sort of all groups' rows, ties in arrival order); LISTAGG and
PERCENTILE_DISC skip NULL values. NULLs sort as in ORDER BY: first ascending, last
descending, unless NULLS FIRST / LAST says."""

from __future__ import annotations

import decimal
import fractions
from collections.abc import Callable
from dataclasses import dataclass

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import sort_key
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import AggCall, Call, Cast, ColumnRef, Expr, Literal


@dataclass(frozen=True, slots=True)
class Ordered:
    kind: str  # "array_agg" | "listagg" | "percentile_disc"
    name: str  # as written: ARRAY_AGG, LISTAGG, STRING_AGG or PERCENTILE_DISC
    value: exp.Expression
    separator: exp.Expression | None
    keys: tuple[exp.Ordered, ...]
    distinct: bool


def ordered_parts(node: exp.Expression) -> Ordered | None:
    """The parts of an ordered aggregate ``node`` (under its FILTER), if it is one (for
    PERCENTILE_DISC, ``separator`` is the fraction)."""
    if isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileDisc) and \
            isinstance(node.expression, exp.Order) and len(node.expression.expressions) == 1:
        key = node.expression.expressions[0]
        return Ordered("percentile_disc", "PERCENTILE_DISC", key.this, node.this.this,
                       (key,), False)
    if isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.GroupConcat) and \
            isinstance(node.expression, exp.Order):
        inner, separator = node.this.this, node.this.args.get("separator")
        if isinstance(inner, exp.Distinct) and len(inner.expressions) == 2 and \
                separator is None:  # (LISTAGG(DISTINCT s, sep): sqlglot's two DISTINCT values)
            inner, separator = exp.Distinct(expressions=[inner.expressions[0]]), \
                inner.expressions[1]
        value, distinct = _undistinct(inner)
        return Ordered("listagg", "LISTAGG", value, separator,
                       tuple(node.expression.expressions), distinct)
    if isinstance(node, exp.ArrayAgg | exp.GroupConcat) and isinstance(node.this, exp.Order):
        value, distinct = _undistinct(node.this.this)
        if isinstance(node, exp.ArrayAgg):
            return Ordered("array_agg", "ARRAY_AGG", value, None,
                           tuple(node.this.expressions), distinct)
        return Ordered("listagg", "STRING_AGG", value, node.args.get("separator"),
                       tuple(node.this.expressions), distinct)
    return None


def _undistinct(value: exp.Expression) -> tuple[exp.Expression, bool]:
    if isinstance(value, exp.Distinct) and len(value.expressions) == 1:
        return value.expressions[0], True
    return value, False


def ordered_aggregate(clause: object, node: exp.Expression, parts: Ordered,
                      bind: Callable[[exp.Expression], Expr], filt: Expr | None,
                      add: Callable[[AggCall], Expr]) -> Expr:
    """The ordered aggregate ``node`` over the ARRAY_AGG call it adds; ``bind`` binds an
    argument, ``clause`` (a ClauseBinder) raises errors at their place."""
    error = clause.error  # type: ignore[attr-defined]
    value = bind(parts.value)
    if parts.kind == "listagg":
        if not (T.is_string(value.dtype) or value.dtype == T.NULL):
            raise error(BindError, f"{parts.name} takes a character string, got "
                        f"{T.type_name(value.dtype)}", node)
        if value.dtype != T.STRING:
            value = Cast(value, T.STRING)
    keys = [bind(o.this) for o in parts.keys]
    if parts.distinct and keys != [value]:
        raise error(NotSupportedError, f"{parts.name}(DISTINCT x ORDER BY ...) is supported "
                    "only ordered by x itself", node)
    for o, k in zip(parts.keys, keys):
        if T.is_opaque(k.dtype):
            sort_key(clause, o, k)  # (raises, naming the type)
    order = [sort_key(clause, o, ColumnRef(i, f"k{i}", k.dtype))
             for i, (o, k) in enumerate(zip(parts.keys, keys))]
    row_type = pa.struct([pa.field(f"k{i}", k.dtype) for i, k in enumerate(keys)] +
                         [pa.field("v", value.dtype)])
    row: Expr = Call("row_value", (*keys, value), row_type)
    if parts.distinct:  # (the distinct values themselves, ordered by themselves)
        row, row_type = value, value.dtype
    if parts.kind in ("listagg", "percentile_disc"):  # (NULL values are left out)
        present = Call("is_not_null", (value,), T.BOOLEAN)
        filt = present if filt is None else Call("and", (filt, present), T.BOOLEAN)
    rows = add(AggCall("array_agg", (row,), pa.list_(row_type), parts.distinct, filt))
    values: Expr = Call("ordered_values", (
        rows, Literal(tuple(k.ascending for k in order), pa.list_(pa.bool_())),
        Literal(tuple(k.nulls_first for k in order), pa.list_(pa.bool_()))),
        pa.list_(value.dtype))
    if parts.kind == "array_agg":
        return values
    if parts.kind == "percentile_disc":
        fraction = bind(parts.separator) if parts.separator is not None else None
        share = fraction.value if isinstance(fraction, Literal) else None
        if isinstance(share, bool) or not isinstance(share, int | float | decimal.Decimal) or \
                not 0 <= share <= 1:
            raise error(BindError, "the fraction of PERCENTILE_DISC must be a constant number "
                        "between 0 and 1", parts.separator or node)
        exact = fractions.Fraction(decimal.Decimal(str(share)))
        return Call("percentile_disc", (values, Literal(
            (exact.numerator, exact.denominator), pa.list_(pa.int64()))), value.dtype)
    separator = bind(parts.separator) if parts.separator is not None else \
        Literal(",", T.STRING)
    if not (T.is_string(separator.dtype) or separator.dtype == T.NULL):
        raise error(BindError, f"the separator of {parts.name} must be a character string, "
                    f"got {T.type_name(separator.dtype)}", parts.separator)
    return Call("array_join", (values, separator), T.STRING)
