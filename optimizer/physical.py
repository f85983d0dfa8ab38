"""The physical plan: operators (the operator specs of optimizer/specs.py) joined by exchanges
that carry a ship strategy (Partitioning), as a DAG of PhysicalNodes, and the walks over it
that the physical passes use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TYPE_CHECKING

from sqlengine.optimizer.specs import ChainStrategy, OperatorSpec
from sqlengine.plan.expressions import Expr

if TYPE_CHECKING:
    from sqlengine.optimizer.estimates import Estimate

__all__ = ["FORWARD", "ChainStrategy", "Exchange", "OperatorSpec", "Partitioning", "PhysicalNode",
           "transform_up", "walk"]


class Partitioning(Enum):
    """How records travel along an edge (Flink's StreamPartitioner kinds)."""

    FORWARD = "FORWARD"
    HASH = "HASH"
    REBALANCE = "REBALANCE"
    BROADCAST = "BROADCAST"
    RANGE = "RANGE"
    SINGLE = "GLOBAL"


@dataclass(frozen=True, slots=True)
class Exchange:
    """An input edge of a physical node: how its records are shipped."""

    partitioning: Partitioning
    keys: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class PhysicalNode:
    op: OperatorSpec
    inputs: tuple[tuple[PhysicalNode, Exchange], ...] = field(default=())
    estimate: Estimate | None = field(default=None, compare=False)


FORWARD = Exchange(Partitioning.FORWARD)


def transform_up(root: PhysicalNode, fn: Callable[[PhysicalNode], PhysicalNode]
                 ) -> PhysicalNode:
    """Rewrite the DAG bottom-up: ``fn`` sees each node once, with its inputs already
    rewritten, and returns it or its replacement. A node shared by several consumers stays
    shared (its replacement serves them all); a node nothing changes under is passed on as
    it is, so ``result is root`` means the pass changed nothing."""
    memo: dict[int, PhysicalNode] = {}

    def visit(node: PhysicalNode) -> PhysicalNode:
        if id(node) in memo:
            return memo[id(node)]
        inputs = tuple((visit(child), ex) for child, ex in node.inputs)
        changed = any(new is not old for (new, _), (old, _) in zip(inputs, node.inputs))
        out = fn(replace(node, inputs=inputs) if changed else node)
        memo[id(node)] = out
        return out

    return visit(root)


def walk(root: PhysicalNode) -> Iterator[PhysicalNode]:
    """Every node of the DAG once, inputs before their consumers."""
    seen: set[int] = set()
    stack: list[tuple[PhysicalNode, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child, _ in reversed(node.inputs))
