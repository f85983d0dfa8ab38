"""GROUPING SETS, ROLLUP and CUBE: the grouping sets of a GROUP BY clause, the Expand that
feeds each input row to every set, and GROUPING() / GROUPING_ID() over the set's id.

As in Calcite and Flink: the keys of all sets are the union of their expressions; an Expand
emits each row once per set with the absent keys NULL and a set id ``$g`` whose bit ``i``
(from the left, like GROUPING's arguments) is 1 when key ``i`` is absent; the Aggregate groups
by the keys and ``$g`` (so a NULL key value and an absent key stay apart, and a set listed
twice gives its groups twice).
"""

from __future__ import annotations

import itertools

from sqlglot import exp

from sqlengine import types as T
from sqlengine.plan.expressions import Call, ColumnRef, Expr, Literal
from sqlengine.plan.nodes import Expand, LogicalPlan

GROUPING_ID = "$g"


def has_grouping_sets(group_exprs: list[exp.Expression]) -> bool:
    return any(isinstance(g, exp.GroupingSets | exp.Rollup | exp.Cube) for g in group_exprs)


def _members(node: exp.Expression) -> list[exp.Expression]:
    """The expressions of one grouping set written as ``(a, b)``, ``a`` or ``()``."""
    if isinstance(node, exp.Tuple):
        return list(node.expressions)
    if isinstance(node, exp.Paren):
        return [node.this]
    return [node]


def grouping_sets(group_exprs: list[exp.Expression], distinct: bool = False
                  ) -> tuple[list[exp.Expression], list[tuple[int, ...]]]:
    """The distinct key expressions (first appearance order) and each grouping set as the
    positions of its keys; the sets of several items combine as a cross product. With
    ``distinct`` (GROUP BY DISTINCT) a set met again is dropped, as in Flink and PostgreSQL
    (it was taken, every row of it repeated)."""
    keys: list[exp.Expression] = []

    def index(e: exp.Expression) -> int:
        while isinstance(e, exp.Paren):  # ((a), b) is the set (a, b)
            e = e.this
        for i, k in enumerate(keys):
            if k == e:
                return i
        keys.append(e)
        return len(keys) - 1

    def sets_of(g: exp.Expression) -> list[tuple[int, ...]]:
        if isinstance(g, exp.GroupingSets):
            # (an element may be a ROLLUP, CUBE or GROUPING SETS itself: its sets, listed)
            return [s for e in g.expressions for s in (
                sets_of(e) if isinstance(e, exp.GroupingSets | exp.Rollup | exp.Cube)
                else [tuple(index(m) for m in _members(e))])]
        if isinstance(g, exp.Rollup):
            cols = [tuple(index(e) for e in _members(c)) for c in g.expressions]
            return [tuple(itertools.chain.from_iterable(cols[:n]))
                    for n in range(len(cols), -1, -1)]
        if isinstance(g, exp.Cube):
            cols = [tuple(index(e) for e in _members(c)) for c in g.expressions]
            return [tuple(itertools.chain.from_iterable(cols[i] for i in combo))
                    for n in range(len(cols), -1, -1)
                    for combo in itertools.combinations(range(len(cols)), n)]
        return [(index(g),)]

    per_item = [sets_of(g) for g in group_exprs]
    sets: list[tuple[int, ...]] = []
    for combo in itertools.product(*per_item):
        members = tuple(sorted(set(itertools.chain.from_iterable(combo))))
        if not distinct or members not in sets:
            sets.append(members)
    return keys, sets


def set_id(members: tuple[int, ...], n_keys: int) -> int:
    return sum(1 << (n_keys - 1 - i) for i in range(n_keys) if i not in members)


def expand(plan: LogicalPlan, keys: list[Expr], key_names: list[str],
           sets: list[tuple[int, ...]]) -> tuple[Expand, list[ColumnRef]]:
    """The Expand over ``plan`` (its columns, then the keys, then ``$g``) and the Aggregate's
    keys over it (the key columns and ``$g``)."""
    fields = plan.schema.fields
    width = len(fields)
    own = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields))
    projections = []
    seen: dict[tuple[int, ...], int] = {}
    for members in sets:
        values = tuple(k if i in members else Literal(None, k.dtype) for i, k in enumerate(keys))
        # A set listed twice gives its groups twice (SQL): a repeat gets higher bits, which
        # GROUPING's bit arithmetic ignores.
        repeat = seen.get(members, 0)
        seen[members] = repeat + 1
        gid = set_id(members, len(keys)) + (repeat << len(keys))
        projections.append((*own, *values, Literal(gid, T.BIGINT)))
    names = (*(f.name for f in fields), *(f"$k{i}" for i in range(len(keys))), GROUPING_ID)
    node = Expand(plan, tuple(projections), names)
    refs = [ColumnRef(width + i, n, k.dtype) for i, (n, k) in enumerate(zip(key_names, keys))]
    refs.append(ColumnRef(width + len(keys), GROUPING_ID, T.BIGINT))
    return node, refs


def grand_total_per_set(total: LogicalPlan, n_sets: int) -> Expand:
    """The rows of GROUPING SETS whose sets are all ``()``: the grand total ``total`` (an
    Aggregate without keys) once per set, as ``$g`` then its columns (the Aggregate keyed by
    ``$g`` they stand for). The repeats' ids are those ``expand`` gives."""
    refs = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(total.schema.fields))
    return Expand(total, tuple((Literal(repeat, T.BIGINT), *refs) for repeat in range(n_sets)),
                  (GROUPING_ID, *(f.name for f in total.schema.fields)))


def group_id_call(n_keys: int, gid: Expr | None) -> Expr:
    """GROUP_ID(): which repeat of its grouping set a row's set is (0 for the first listing,
    1 for the second...), as in Calcite and Flink: the set id's bits above the keys'."""
    if gid is None:
        return Literal(0, T.BIGINT)
    return Call("divide", (gid, Literal(1 << n_keys, T.BIGINT)), T.BIGINT)


def grouping_call(positions: list[int], n_keys: int, gid: Expr | None) -> Expr:
    """GROUPING(e1, ..., em) / GROUPING_ID: bit j (from the left) is 1 when e_j is absent
    from the row's grouping set; 0 without grouping sets."""
    if gid is None:
        return Literal(0, T.BIGINT)
    out: Expr | None = None
    for j, i in enumerate(positions):
        shift = Literal(1 << (n_keys - 1 - i), T.BIGINT)
        bit: Expr = Call("mod", (Call("divide", (gid, shift), T.BIGINT), Literal(2, T.BIGINT)),
                         T.BIGINT)
        weight = 1 << (len(positions) - 1 - j)
        if weight != 1:
            bit = Call("multiply", (bit, Literal(weight, T.BIGINT)), T.BIGINT)
        out = bit if out is None else Call("add", (out, bit), T.BIGINT)
    assert out is not None
    return out
