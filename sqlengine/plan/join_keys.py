"""A join condition split into equality keys and a residual, as the binder, the decorrelation
rule and the filter push-down all need it."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.plan.expressions import Call, Cast, Expr, Literal, conjuncts, remap_columns


def equi_pair(c: Expr, n_left: int) -> tuple[Expr, Expr] | None:
    """``l = r`` with one side reading only left columns and the other only right ones (the
    left one first), else None."""
    if not (isinstance(c, Call) and c.name == "eq"):
        return None
    a, b = c.args
    if T.is_nested(a.dtype) or T.is_nested(b.dtype):  # (no hash key: Arrow's join takes none; the
        return None                            # equality is a residual condition)
    ca, cb = a.columns(), b.columns()
    if not ca or not cb:
        return None
    if max(ca) < n_left <= min(cb):
        return a, b
    if max(cb) < n_left <= min(ca):
        return b, a
    return None


def _as(e: Expr, t: pa.DataType) -> Expr:
    if e.dtype == t:
        return e
    if isinstance(e, Literal) and e.value is None:
        return Literal(None, t)
    return Cast(e, t)


def split_condition(conds: list[Expr], width: int) -> tuple[list[Expr], list[Expr], list[Expr]]:
    """Join conditions over (left ++ right), ``width`` left columns -> left keys, right keys
    (over the right input), both cast to their common type, and the residual conjuncts.

    Raises:
        BindError: two sides of an equality have no common type.
    """
    keys_l: list[Expr] = []
    keys_r: list[Expr] = []
    residual: list[Expr] = []
    for c in (part for cond in conds for part in conjuncts(cond)):
        pair = equi_pair(c, width)
        if pair is None:
            residual.append(c)
            continue
        a, b = pair
        common = T.common_type([a.dtype, b.dtype], "join keys")
        keys_l.append(_as(a, common))
        keys_r.append(_as(remap_columns(b, {i: i - width for i in b.columns()}), common))
    return keys_l, keys_r, residual
