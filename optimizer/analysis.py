"""Whole-plan analyses as visitors: the unbounded sources a plan reads, and its estimated size."""

from __future__ import annotations

from sqlengine.optimizer.physical import PhysicalNode
from sqlengine.optimizer.specs import TableScanSpec
from sqlengine.optimizer.visitor import accept
from sqlengine.plan.nodes import (
    Filter,
    Limit,
    LogicalPlan,
    Project,
    Scan,
    Union,
    Values,
    WindowTVF,
)
from sqlengine.plan.tree import walk


class UnboundedSources:
    """Collects the tables of unbounded scans (pre_visit / post_visit, as Flink's visitors)."""

    def __init__(self) -> None:
        self.tables: list[str] = []
        self.depth = 0

    def pre_visit(self, node: LogicalPlan) -> bool:
        self.depth += 1
        if isinstance(node, Scan) and not node.source.bounded:
            self.tables.append(node.source.table)
        return True

    def post_visit(self, node: LogicalPlan) -> None:
        self.depth -= 1


def unbounded_sources(plan: LogicalPlan) -> list[str]:
    """Tables read by ``plan`` whose scans never end, in plan order (each once)."""
    visitor = UnboundedSources()
    accept(plan, visitor)
    return list(dict.fromkeys(visitor.tables))


def bounded_result(plan: LogicalPlan) -> bool:
    """Whether the result of ``plan`` ends: its sources do, or it is a LIMIT over an
    insert-only input (scans, projections, filters, unions, window assignment), which finishes
    the job once it has its rows, unbounded sources or not."""
    if is_bounded(plan):
        return True
    node = plan
    while isinstance(node, Project | Filter):
        node = node.input
    if not isinstance(node, Limit) or node.fetch is None:
        return False
    return all(isinstance(n, _INSERT_ONLY) for n in walk(node.input))


_INSERT_ONLY = (Scan, Project, Filter, Union, Values, WindowTVF)


def is_bounded(plan: LogicalPlan) -> bool:
    """Whether every source of ``plan`` ends."""
    return not unbounded_sources(plan)


def unbounded_physical(node: PhysicalNode) -> bool:
    """Whether a physical node reads (through its inputs) a source that never ends."""
    if isinstance(node.op, TableScanSpec):
        return not node.op.bounded
    return any(unbounded_physical(child) for child, _ in node.inputs)
