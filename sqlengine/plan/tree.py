"""Tree helpers over logical plans: Transformed results, bottom-up rewrites, walks."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from sqlengine.plan.expressions import Expr
from sqlengine.plan.nodes import LogicalPlan

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Transformed(Generic[T]):
    """A rewrite's result and whether it changed anything (DataFusion's Transformed)."""

    data: T
    changed: bool

    @staticmethod
    def yes(data: T) -> Transformed[T]:
        return Transformed(data, True)

    @staticmethod
    def no(data: T) -> Transformed[T]:
        return Transformed(data, False)


def transform_up(
    plan: LogicalPlan, fn: Callable[[LogicalPlan], Transformed[LogicalPlan]]
) -> Transformed[LogicalPlan]:
    """Rewrite children first, then the node itself."""
    kids = plan.children()
    changed = False
    if kids:
        results = [transform_up(k, fn) for k in kids]
        if any(r.changed for r in results):
            plan = plan.with_children(tuple(r.data for r in results))
            changed = True
    out = fn(plan)
    return Transformed(out.data, changed or out.changed)


def transform_down(
    plan: LogicalPlan, fn: Callable[[LogicalPlan], Transformed[LogicalPlan]]
) -> Transformed[LogicalPlan]:
    """Rewrite the node first, then its (new) children."""
    out = fn(plan)
    node = out.data
    kids = node.children()
    if not kids:
        return out
    results = [transform_down(k, fn) for k in kids]
    if any(r.changed for r in results):
        return Transformed.yes(node.with_children(tuple(r.data for r in results)))
    return out


def walk(plan: LogicalPlan) -> Iterator[LogicalPlan]:
    """Every node, pre-order."""
    yield plan
    for c in plan.children():
        yield from walk(c)


def filtered(plan: LogicalPlan, parts: list[Expr]) -> LogicalPlan:
    """``plan`` under a Filter on the conjunction of ``parts``; ``plan`` itself for no parts."""
    from sqlengine.plan.expressions import conjunction
    from sqlengine.plan.nodes import Filter

    predicate = conjunction(parts)
    return plan if predicate is None else Filter(plan, predicate)


def map_expressions(plan: LogicalPlan, fn: Callable[[Expr], Expr]) -> LogicalPlan:
    """The node with ``fn`` applied to each expression it holds (not to its children)."""
    from dataclasses import replace as _replace

    from sqlengine.plan import nodes as N
    from sqlengine.plan.expressions import AggCall

    def agg(a: AggCall) -> AggCall:
        return _replace(a, args=tuple(fn(x) for x in a.args),
                        filter=fn(a.filter) if a.filter is not None else None)

    match plan:
        case N.Values():
            return _replace(plan, rows=tuple(tuple(fn(e) for e in row) for row in plan.rows))
        case N.Filter():
            return _replace(plan, predicate=fn(plan.predicate))
        case N.Project():
            return _replace(plan, exprs=tuple(fn(e) for e in plan.exprs))
        case N.Aggregate():
            return _replace(plan, keys=tuple(fn(k) for k in plan.keys),
                            aggs=tuple(agg(a) for a in plan.aggs))
        case N.Join():
            return _replace(plan, left_keys=tuple(fn(k) for k in plan.left_keys),
                            right_keys=tuple(fn(k) for k in plan.right_keys),
                            condition=fn(plan.condition) if plan.condition is not None
                            else None)
        case N.Sort():
            return _replace(plan, keys=tuple(_replace(k, expr=fn(k.expr)) for k in plan.keys))
        case N.Scan():
            return _replace(plan, filters=tuple(fn(f) for f in plan.filters))
        case N.OverAggregate():
            return _replace(plan, partition=tuple(fn(p) for p in plan.partition),
                            aggs=tuple(agg(a) for a in plan.aggs))
        case N.Rank():
            return _replace(plan, partition=tuple(fn(p) for p in plan.partition),
                            order=tuple(_replace(k, expr=fn(k.expr)) for k in plan.order))
        case _:
            return plan
