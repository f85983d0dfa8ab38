"""Flink's versioned views: a query keeping each key's last row by event time

    SELECT k, v, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts DESC) AS rn
                          FROM t) WHERE rn = 1

is a versioned table with the primary key k, so the versioned side of an event-time temporal
join. Its versions are the rows of ``t`` themselves: the temporal join keeps each key's
versions by time (a later row of an equal time replacing an earlier one, as the deduplication
keeps it), so the join reads ``t`` (through the view's projections), not the deduplication.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlengine.plan.expressions import Call, ColumnRef, Expr, Literal
from sqlengine.plan.nodes import Filter, LogicalPlan, Project, Rank


@dataclass(frozen=True, slots=True)
class VersionedView:
    plan: LogicalPlan  # the view's columns over every version (the rows it deduplicates)
    keys: tuple[int, ...]  # the view's output columns that are its primary key


def versioned_view(plan: LogicalPlan) -> VersionedView | None:
    """The versioned reading of ``plan`` when it is the last row per key by event time
    (projections over ``rn = 1`` over ROW_NUMBER() ordered by a rowtime DESC), else None."""
    outer: list[Project] = []
    node = plan
    while isinstance(node, Project):
        outer.append(node)
        node = node.input
    if not isinstance(node, Filter):
        return None
    below = node.input
    if not (isinstance(below, Project) and isinstance(below.input, Rank)):
        return None
    rank = below.input
    width = len(rank.input.schema.fields)
    if not _first_only(node.predicate, below, width) or len(rank.order) != 1:
        return None
    order = rank.order[0]
    if order.ascending or not isinstance(order.expr, ColumnRef) or \
            not rank.input.schema.fields[order.expr.index].rowtime or \
            not all(isinstance(p, ColumnRef) for p in rank.partition):
        return None
    # (the row number is 1 on every version read: a literal)
    one = Literal(1, rank.schema.fields[width].type)
    exprs = tuple(_without_rank(e, width, one) for e in below.exprs)
    versions: LogicalPlan = Project(rank.input, exprs, below.names)
    for p in reversed(outer):
        versions = Project(versions, p.exprs, p.names)
    sources = _sources(plan)
    partition = {p.index for p in rank.partition}  # type: ignore[attr-defined]
    keys = tuple(i for i, s in enumerate(sources) if s in partition)
    if {sources[i] for i in keys} != partition:
        return None  # (a key column is not in the view's output)
    return VersionedView(versions, keys)


def _first_only(predicate: Expr, below: Project, width: int) -> bool:
    """Whether ``predicate`` is ``rn = 1`` / ``rn <= 1`` / ``rn < 2`` on the row number."""
    if not (isinstance(predicate, Call) and predicate.name in ("eq", "le", "lt") and
            len(predicate.args) == 2):
        return False
    col, lit = predicate.args
    if not isinstance(col, ColumnRef):
        return False
    value = lit.value if isinstance(lit, Literal) else _literal_of(lit)
    ref = below.exprs[col.index]
    return isinstance(ref, ColumnRef) and ref.index == width and \
        value == (2 if predicate.name == "lt" else 1)


def _literal_of(e: Expr) -> object:
    """The value of a CAST of a literal (``rn = CAST(1 AS BIGINT)``), else None."""
    kids = e.children()
    if len(kids) == 1 and isinstance(kids[0], Literal):
        return kids[0].value
    return None


def _without_rank(e: Expr, width: int, one: Literal) -> Expr:
    if isinstance(e, ColumnRef) and e.index == width:
        return one
    kids = e.children()
    return e.with_children(tuple(_without_rank(k, width, one) for k in kids)) if kids else e


def _sources(plan: LogicalPlan) -> list[int | None]:
    """Per output column of the projections above the filter, the ranked input's column it
    passes on unchanged (None for a computed one)."""
    if isinstance(plan, Project):
        inner = _sources(plan.input)
        return [inner[e.index] if isinstance(e, ColumnRef) else None for e in plan.exprs]
    if isinstance(plan, Filter):
        return _sources(plan.input)
    return list(range(len(plan.schema.fields)))
