"""Operator chaining (Flink's StreamingJobGraphGenerator.isChainable) and JobGraph building."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.jobgraph import JobEdge, JobGraph, JobVertex
from sqlengine.optimizer.physical import Partitioning
from sqlengine.optimizer.specs import ChainStrategy
from sqlengine.optimizer.streamgraph import StreamEdge, StreamGraph


def is_chainable(edge: StreamEdge, graph: StreamGraph, chaining_enabled: bool = True) -> bool:
    """Flink's rule: the downstream operator has this one input, the edge is FORWARD, both
    ends have the same parallelism and slot-sharing group, the upstream allows chaining after
    it (ALWAYS or HEAD), the downstream allows chaining before it (ALWAYS), chaining is on."""
    up, down = graph.node(edge.source), graph.node(edge.target)
    return (
        chaining_enabled
        and len(graph.in_edges(down.id)) == 1
        and edge.partitioning is Partitioning.FORWARD
        and up.parallelism == down.parallelism
        and up.slot_sharing_group == down.slot_sharing_group
        and up.op.chain_strategy in (ChainStrategy.ALWAYS, ChainStrategy.HEAD)
        and down.op.chain_strategy is ChainStrategy.ALWAYS
        and len(graph.out_edges(up.id)) == 1
    )


def build_job_graph(graph: StreamGraph, chaining_enabled: bool = True,
                    blocking: bool = False, slot_sharing: str = "ALL") -> JobGraph:
    """Group chainable StreamNodes into JobVertices; the other edges become JobEdges
    (BLOCKING ones when ``blocking``: batch mode's 'execution.batch-shuffle-mode').
    ``slot_sharing``: ALL puts every vertex in one slot-sharing group; PER_REGION gives each
    pipelined region (vertices joined by pipelined edges) a group of its own, as Flink's batch
    jobs: a region's slots are let go when it ends, before the regions that read its
    results run."""
    head_of: dict[int, int] = {}
    chains: dict[int, list[int]] = {}
    for node in graph.nodes:  # topological: inputs come first
        ins = graph.in_edges(node.id)
        if len(ins) == 1 and is_chainable(ins[0], graph, chaining_enabled):
            head = head_of[ins[0].source]
            chains[head].append(node.id)
            head_of[node.id] = head
        else:
            head_of[node.id] = node.id
            chains[node.id] = [node.id]
    vertex_id = {head: f"v{i + 1}" for i, head in enumerate(chains)}
    vertices = tuple(
        JobVertex(vertex_id[head], tuple(graph.node(n).op for n in members),
                  graph.node(head).parallelism, tuple(members))
        for head, members in chains.items()
    )
    edges = tuple(
        JobEdge(vertex_id[head_of[e.source]], vertex_id[head_of[e.target]], e.partitioning,
                e.keys, e.input_index,
                # (a FORWARD edge stays pipelined: nothing is redistributed along it)
                blocking and e.partitioning is not Partitioning.FORWARD)
        for e in graph.edges
        if head_of[e.source] != head_of[e.target]
    )
    if slot_sharing == "PER_REGION":
        vertices = _per_region(vertices, edges)
    return JobGraph(vertices, edges)


def _per_region(vertices: tuple[JobVertex, ...], edges: tuple[JobEdge, ...]
                ) -> tuple[JobVertex, ...]:
    """Pipelined regions (Flink's): the connected parts of the graph by pipelined edges."""
    parent = {v.id: v.id for v in vertices}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        if not e.blocking:
            parent[find(e.source)] = find(e.target)
    names: dict[str, str] = {}
    out = []
    for v in vertices:  # (topological: regions numbered in the order they start)
        root = find(v.id)
        names.setdefault(root, f"region-{len(names) + 1}")
        out.append(replace(v, slot_sharing_group=names[root]))
    return tuple(out)
