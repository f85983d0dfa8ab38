"""Whole-plan analyses as visitors: the unbounded sources a plan reads, and its estimated size."""

from __future__ import annotations

from sqlengine.optimizer.physical import PhysicalNode
from sqlengine.optimizer.specs import TableScanSpec
from sqlengine.optimizer.visitor import accept
from sqlengine.plan.nodes import LogicalPlan, Scan


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


def is_bounded(plan: LogicalPlan) -> bool:
    """Whether every source of ``plan`` ends."""
    return not unbounded_sources(plan)


def unbounded_physical(node: PhysicalNode) -> bool:
    """Whether a physical node reads (through its inputs) a source that never ends."""
    if isinstance(node.op, TableScanSpec):
        return not node.op.bounded
    return any(unbounded_physical(child) for child, _ in node.inputs)
