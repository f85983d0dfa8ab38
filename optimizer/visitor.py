"""Visitors over plan DAGs (Flink's Visitor/Visitable: pre_visit, post_visit) and folds."""

from __future__ import annotations

from typing import Generic, Protocol, TypeVar

from sqlengine.plan.nodes import LogicalPlan

T = TypeVar("T")


class Visitor(Protocol):
    """Flink's optimizer visitor: ``pre_visit`` returns False to skip a node's inputs."""

    def pre_visit(self, node: LogicalPlan) -> bool: ...

    def post_visit(self, node: LogicalPlan) -> None: ...


def accept(plan: LogicalPlan, visitor: Visitor, _seen: set[int] | None = None) -> None:
    """Walk the DAG depth-first, visiting a node shared by several parents only once."""
    seen = _seen if _seen is not None else set()
    key = id(plan)
    if key in seen:
        return
    seen.add(key)
    if visitor.pre_visit(plan):
        for child in plan.children():
            accept(child, visitor, seen)
    visitor.post_visit(plan)


class PlanVisitor(Generic[T]):
    """A bottom-up fold: ``visit`` combines a node with its children's results (memoized)."""

    def __init__(self) -> None:
        self._memo: dict[int, T] = {}

    def fold(self, plan: LogicalPlan) -> T:
        key = id(plan)
        if key not in self._memo:
            kids = tuple(self.fold(c) for c in plan.children())
            self._memo[key] = self.visit(plan, kids)
        return self._memo[key]

    def visit(self, node: LogicalPlan, children: tuple[T, ...]) -> T:
        raise NotImplementedError
