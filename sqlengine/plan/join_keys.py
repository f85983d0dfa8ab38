"""A join condition split into equality keys and a residual, as the binder, the decorrelation
rule and the filter push-down all need it."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

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


def null_safe_pair(c: Expr) -> tuple[Expr, Expr] | None:
    """``a IS NOT DISTINCT FROM b`` as the binder writes it (``COALESCE(a = b, a IS NULL AND
    b IS NULL)``) -> (a, b), else None."""
    if not (isinstance(c, Call) and c.name == "coalesce" and len(c.args) == 2):
        return None
    eq, both = c.args
    if not (isinstance(eq, Call) and eq.name == "eq" and isinstance(both, Call) and
            both.name == "and" and all(isinstance(x, Call) and x.name == "is_null"
                                       for x in both.args)):
        return None
    a, b = eq.args
    nulls = tuple(x.args[0] for x in both.args)  # type: ignore[attr-defined]
    return (a, b) if nulls in ((a, b), (b, a)) else None


def not_distinct(a: Expr, b: Expr) -> Expr:
    """``a IS NOT DISTINCT FROM b`` as the binder writes it (see null_safe_pair)."""
    both_null = Call("and", (Call("is_null", (a,), T.BOOLEAN),
                             Call("is_null", (b,), T.BOOLEAN)), T.BOOLEAN)
    return Call("coalesce", (Call("eq", (a, b), T.BOOLEAN), both_null), T.BOOLEAN)


# A stand-in for NULL in a null-safe join key (beside the key's IS NULL), by type.
_STAND_INS: list[tuple[Callable[[pa.DataType], bool], object]] = [
    (pa.types.is_integer, 0), (pa.types.is_floating, 0.0), (pa.types.is_decimal, Decimal(0)),
    (pa.types.is_string, ""), (pa.types.is_large_string, ""), (pa.types.is_binary, b""),
    (pa.types.is_large_binary, b""), (pa.types.is_boolean, False),
    (pa.types.is_date, dt.date(1970, 1, 1)), (pa.types.is_timestamp, dt.datetime(1970, 1, 1)),
    (pa.types.is_time, dt.time(0)),
]


def _null_safe_keys(a: Expr, b: Expr, n_left: int
                    ) -> list[tuple[Expr, Expr]] | None:
    """Equi-join key pairs (left side first) of ``a IS NOT DISTINCT FROM b`` with one side
    reading only left columns and the other only right ones: ``COALESCE(x, stand-in)`` and
    ``x IS NULL`` on each side, never NULL, so two NULLs meet in the hash join as Flink's
    join keys that do not filter NULLs."""
    pair = equi_pair(Call("eq", (a, b), T.BOOLEAN), n_left)
    if pair is None:
        return None
    common = T.common_type([pair[0].dtype, pair[1].dtype], "join keys")
    stand_in = next((v for test, v in _STAND_INS if test(common)), None)
    if stand_in is None:
        return None
    default = Literal(stand_in, common)
    left, right = pair
    return [(Call("coalesce", (_as(left, common), default), common),
             Call("coalesce", (_as(right, common), default), common)),
            (Call("is_null", (left,), T.BOOLEAN), Call("is_null", (right,), T.BOOLEAN))]


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
        safe = null_safe_pair(c) if pair is None else None
        keys = _null_safe_keys(*safe, width) if safe is not None else None
        if keys is not None:
            for left_key, right_key in keys:
                keys_l.append(left_key)
                keys_r.append(remap_columns(right_key, {i: i - width
                                                        for i in right_key.columns()}))
            continue
        if pair is None:
            residual.append(c)
            continue
        a, b = pair
        common = T.common_type([a.dtype, b.dtype], "join keys")
        keys_l.append(_as(a, common))
        keys_r.append(_as(remap_columns(b, {i: i - width for i in b.columns()}), common))
    return keys_l, keys_r, residual
