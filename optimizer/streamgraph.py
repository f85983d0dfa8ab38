"""Physical plan -> StreamGraph: one StreamNode per operator, StreamEdges with partitioners."""

from __future__ import annotations

from dataclasses import dataclass

from optimizer.physical import OperatorSpec, Partitioning, PhysicalNode
from sqlengine.plan.expressions import Expr


@dataclass(frozen=True, slots=True)
class StreamNode:
    id: int
    op: OperatorSpec
    parallelism: int
    slot_sharing_group: str = "default"


@dataclass(frozen=True, slots=True)
class StreamEdge:
    source: int
    target: int
    partitioning: Partitioning
    keys: tuple[Expr, ...] = ()
    input_index: int = 0  # which input of the target (0 = left/first)


@dataclass(frozen=True, slots=True)
class StreamGraph:
    nodes: tuple[StreamNode, ...]  # topological order: every node after its inputs
    edges: tuple[StreamEdge, ...]

    def node(self, node_id: int) -> StreamNode:
        return self.nodes[node_id - 1]

    def in_edges(self, node_id: int) -> list[StreamEdge]:
        return [e for e in self.edges if e.target == node_id]

    def out_edges(self, node_id: int) -> list[StreamEdge]:
        return [e for e in self.edges if e.source == node_id]


def build_stream_graph(root: PhysicalNode, parallelism: int = 1) -> StreamGraph:
    """Number operators bottom-up (sources first) and connect them with their exchanges.

    Parallelism 1 operators may still be connected by HASH edges: the partitioner, not the
    parallelism, decides whether two operators can share a chain (as in Flink).
    """
    nodes: list[StreamNode] = []
    edges: list[StreamEdge] = []
    ids: dict[int, int] = {}

    def visit(p: PhysicalNode) -> int:
        if id(p) in ids:
            return ids[id(p)]
        input_ids = [visit(child) for child, _ in p.inputs]
        single = any(ex.partitioning is Partitioning.SINGLE for _, ex in p.inputs)
        node = StreamNode(len(nodes) + 1, p.op, 1 if single else parallelism)
        nodes.append(node)
        ids[id(p)] = node.id
        for idx, ((_, ex), src) in enumerate(zip(p.inputs, input_ids)):
            part = ex.partitioning
            if part is Partitioning.FORWARD and nodes[src - 1].parallelism != node.parallelism:
                part = Partitioning.REBALANCE  # Flink switches forward to rebalance then
            edges.append(StreamEdge(src, node.id, part, ex.keys, idx))
        return node.id

    visit(root)
    return StreamGraph(tuple(nodes), tuple(edges))
