"""Which columns of a bound query can never be NULL, for what DESCRIBE shows of a view and
the columns a CREATE TABLE ... AS makes (Flink's NOT NULL: a view over a NOT NULL column
keeps it NOT NULL, as does ``a + 1`` over it, and a literal is NOT NULL).

The plan's own fields do not carry this (a projection's are nullable): it is derived here,
when asked, from the tables' declared NOT NULL columns and primary keys, through what keeps
a value that is not NULL. Where in doubt a column is nullable: NOT NULL is only claimed
where no row can hold a NULL (an aggregate other than COUNT, an outer join's padded side, a
grouping set's absent key, a function that may give NULL are nullable)."""

from __future__ import annotations

from collections.abc import Callable

from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import (
    ROWTIME,
    AggCall,
    Call,
    Case,
    Cast,
    ColumnRef,
    Expr,
    InList,
    Literal,
)

# Calls that give NULL only for a NULL argument (their result is NOT NULL over NOT NULL
# arguments; a division by zero is an error, not a NULL).
_STRICT = frozenset({
    "add", "subtract", "multiply", "divide", "mod", "negate", "eq", "ne", "lt", "le", "gt",
    "ge", "and", "or", "not", "concat_op", "upper", "lower", "abs", "char_length", ROWTIME,
})
# Calls never NULL, whatever their arguments.
_NEVER_NULL = frozenset({"is_null", "is_not_null", "is_true", "is_false", "is_not_true",
                         "is_not_false", "proctime"})

_COUNTS = frozenset({"count", "count_star"})
_KEEPING = frozenset({"sum", "min", "max", "avg", "first_value", "last_value"})
_RANKS = frozenset({"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile"})


def not_null(plan: N.LogicalPlan, keys: Callable[[str], tuple[str, ...]] = lambda t: ()
             ) -> tuple[bool, ...]:
    """For each column of ``plan``: True if it can never be NULL (``keys``: a table's
    PRIMARY KEY columns, NOT NULL as in Flink)."""
    match plan:
        case N.Scan():
            key = {k.lower() for k in keys(plan.source.table)}
            return tuple(not f.nullable or f.name.lower() in key for f in plan.schema.fields)
        case N.Values():
            width = len(plan.schema)
            return tuple(all(_expr(row[i], ()) for row in plan.rows) for i in range(width)) \
                if plan.rows else (False,) * width
        case N.Project():
            given = not_null(plan.input, keys)
            return tuple(_expr(e, given) for e in plan.exprs)
        case N.Filter() | N.Sort() | N.Limit():
            return not_null(plan.input, keys)
        case N.Aggregate():
            given = not_null(plan.input, keys)
            return tuple(_expr(k, given) for k in plan.keys) + tuple(
                _agg(a, given, bool(plan.keys)) for a in plan.aggs)
        case N.Expand():
            given = not_null(plan.input, keys)
            return tuple(all(col) for col in zip(*(
                [_expr(e, given) for e in p] for p in plan.projections)))
        case N.Rank():
            return (*not_null(plan.input, keys), True)
        case N.WindowFunctions():
            return not_null(plan.input, keys) + tuple(
                c.func in _RANKS or (c.agg is not None and c.agg.func in _COUNTS)
                for c in plan.calls)
        case N.OverAggregate():
            return not_null(plan.input, keys) + tuple(a.func in _COUNTS for a in plan.aggs)
        case N.Join():
            left, right = not_null(plan.left, keys), not_null(plan.right, keys)
            if plan.kind in ("semi", "anti"):
                return left
            if plan.kind in ("left", "full"):
                right = (False,) * len(right)
            if plan.kind == "full":
                left = (False,) * len(left)
            return left + right
        case N.Union():
            sides = [not_null(p, keys) for p in plan.inputs]
            return tuple(all(col) for col in zip(*sides))
        case N.WindowTVF():
            return (*not_null(plan.input, keys), True, True, True)
    return tuple(not f.nullable for f in plan.schema.fields)


def _agg(call: AggCall, given: tuple[bool, ...], grouped: bool) -> bool:
    """COUNT is never NULL; in a GROUP BY (each group has a row), an aggregate of values
    never NULL, without a FILTER, is not either (as Flink types them)."""
    if call.func in _COUNTS:
        return True
    return grouped and call.filter is None and call.func in _KEEPING and \
        all(_expr(a, given) for a in call.args)


def _expr(e: Expr, given: tuple[bool, ...]) -> bool:
    match e:
        case ColumnRef():
            return e.index < len(given) and given[e.index]
        case Literal():
            return e.value is not None
        case Cast():
            return not e.safe and _expr(e.arg, given)
        case Call() if e.name in _NEVER_NULL:
            return True
        case Call() if e.name == "coalesce":
            return any(_expr(a, given) for a in e.args)
        case Call() if e.name in _STRICT:
            return all(_expr(a, given) for a in e.args)
        case Case():
            return e.default is not None and _expr(e.default, given) and all(
                _expr(r, given) for _, r in e.whens)
        case InList():
            return _expr(e.arg, given) and all(_expr(v, given) for v in e.values)
    return False
