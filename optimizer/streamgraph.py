"""Physical plan -> StreamGraph: one StreamNode per operator, StreamEdges with partitioners."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from sqlengine import connectors
from sqlengine.errors import NotSupportedError
from sqlengine.optimizer.physical import Partitioning, PhysicalNode
from sqlengine.optimizer.specs import OperatorSpec, TableScanSpec, TableSinkSpec, ValuesSpec
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


class _Edge(Protocol):
    source: Any
    target: Any


E = TypeVar("E", bound=_Edge)


def edge_index(edges: tuple[E, ...]) -> tuple[dict[Any, list[E]], dict[Any, list[E]]]:
    """Each vertex's in-edges and out-edges, in the edges' order (of a StreamGraph or a
    JobGraph: a union of n inputs asks for them once per vertex)."""
    ins: dict[Any, list[E]] = {}
    outs: dict[Any, list[E]] = {}
    for e in edges:
        ins.setdefault(e.target, []).append(e)
        outs.setdefault(e.source, []).append(e)
    return ins, outs


@dataclass(frozen=True, slots=True)
class StreamGraph:
    nodes: tuple[StreamNode, ...]  # topological order: every node after its inputs
    edges: tuple[StreamEdge, ...]
    # (each node's in- and out-edges, found once: a union of n inputs asked per node)
    _ins: dict[int, list[StreamEdge]] = field(init=False, repr=False, compare=False)
    _outs: dict[int, list[StreamEdge]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ins, outs = edge_index(self.edges)
        object.__setattr__(self, "_ins", ins)
        object.__setattr__(self, "_outs", outs)

    def node(self, node_id: int) -> StreamNode:
        return self.nodes[node_id - 1]

    def in_edges(self, node_id: int) -> list[StreamEdge]:
        return list(self._ins.get(node_id, ()))

    def out_edges(self, node_id: int) -> list[StreamEdge]:
        return list(self._outs.get(node_id, ()))


def operator_parallelism(op: OperatorSpec, inputs: list[tuple[StreamNode, Partitioning]],
                         default: int) -> int:
    """A source takes 'scan.parallelism' (else the default); VALUES, sinks and every operator
    behind a SINGLE (global) exchange run once; an operator fed only FORWARD by parallelism-1
    operators stays at 1 (what follows a global sort keeps its order); the rest take the
    default ('parallelism.default')."""
    if isinstance(op, TableScanSpec):
        return _source_parallelism(op, default)
    if isinstance(op, TableSinkSpec):
        return _sink_parallelism(op, inputs, default)
    if isinstance(op, ValuesSpec):
        return 1
    if any(part is Partitioning.SINGLE for _, part in inputs):
        return 1
    if inputs and all(part is Partitioning.FORWARD and node.parallelism == 1
                      for node, part in inputs):
        return 1
    return default


def _source_parallelism(op: TableScanSpec, default: int) -> int:
    connector = connectors.find(op.source.connector)
    if connector is not None and not connector.parallel_source:
        return 1  # e.g. a socket: one connection, a non-parallel source, as Flink's
    given = op.source.option("scan.parallelism")
    par = int(given) if given else default  # (at least 1: OptionSpec "positive")
    if connector is not None and par > 1:
        shares = connector.source_shares(op.source, op.event_time or op.source.changelog)
        if shares is not None:
            par = min(par, shares)
    return par


def _sink_parallelism(op: TableSinkSpec, inputs: list[tuple[StreamNode, Partitioning]],
                      default: int) -> int:
    """A sink whose connector writes in parallel (filesystem, blackhole) takes
    'sink.parallelism' when the table gives it (its input then rebalanced to it, as in
    Flink), else the default, except behind a SINGLE exchange or fed FORWARD by
    parallelism-1 operators (an ordered result is written in order by one subtask); other
    sinks run once."""
    target = op.target
    options = dict(target.options)
    given = options.get("sink.parallelism")
    connector = connectors.find(target.connector)
    parallel = connector is not None and connector.parallel_sink(options)
    if given is not None and int(given) > 1 and not parallel:
        msg = (f"table {target.table!r}: option 'sink.parallelism' = '{given}': the "
               f"{target.connector!r} sink of this table runs with one subtask")
        raise NotSupportedError(msg)
    if parallel and given is not None:
        return int(given)
    if not parallel or any(part is Partitioning.SINGLE for _, part in inputs) or \
            (inputs and all(part is Partitioning.FORWARD and node.parallelism == 1
                            for node, part in inputs)):
        return 1
    return max(1, int(given)) if given else default


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
        par = operator_parallelism(
            p.op, [(nodes[i - 1], ex.partitioning) for i, (_, ex) in zip(input_ids, p.inputs)],
            parallelism)
        node = StreamNode(len(nodes) + 1, p.op, par)
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
