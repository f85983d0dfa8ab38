"""The JobGraph: vertices that each run one operator chain, and the edges between them."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlengine.optimizer.physical import Partitioning
from sqlengine.optimizer.specs import OperatorSpec
from sqlengine.optimizer.streamgraph import edge_index
from sqlengine.plan.expressions import Expr


@dataclass(frozen=True, slots=True)
class JobEdge:
    source: str  # vertex id
    target: str
    partitioning: Partitioning
    keys: tuple[Expr, ...] = ()
    input_index: int = 0
    # Flink's exchange mode: PIPELINED (records flow as produced) or BLOCKING (the producer's
    # whole result is written out before the consumer reads it; batch mode).
    blocking: bool = False

    def label(self) -> str:
        text = self.partitioning.value
        if self.keys:
            text = f"{text}({', '.join(k.sql() for k in self.keys)})"
        return f"{text} [BLOCKING]" if self.blocking else text


@dataclass(frozen=True, slots=True)
class JobVertex:
    id: str  # stable: v1, v2, ... in topological order
    chain: tuple[OperatorSpec, ...]  # head first
    parallelism: int
    stream_nodes: tuple[int, ...] = ()
    # Flink's slot-sharing group: one subtask of every vertex of a group may share a slot, so
    # a group needs as many slots as its widest vertex.
    slot_sharing_group: str = "default"

    @property
    def head(self) -> OperatorSpec:
        return self.chain[0]

    @property
    def tail(self) -> OperatorSpec:
        return self.chain[-1]


@dataclass(frozen=True, slots=True)
class JobGraph:
    vertices: tuple[JobVertex, ...]  # topological order
    edges: tuple[JobEdge, ...]
    # (each vertex's in- and out-edges, found once: a union of n inputs asked per vertex)
    _ins: dict[str, list[JobEdge]] = field(init=False, repr=False, compare=False)
    _outs: dict[str, list[JobEdge]] = field(init=False, repr=False, compare=False)
    _by_id: dict[str, JobVertex] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        ins, outs = edge_index(self.edges)
        for edges in ins.values():
            edges.sort(key=lambda e: e.input_index)
        object.__setattr__(self, "_ins", ins)
        object.__setattr__(self, "_outs", outs)
        object.__setattr__(self, "_by_id", {v.id: v for v in self.vertices})

    def vertex(self, vertex_id: str) -> JobVertex:
        return self._by_id[vertex_id]

    def in_edges(self, vertex_id: str) -> list[JobEdge]:
        return list(self._ins.get(vertex_id, ()))

    def out_edges(self, vertex_id: str) -> list[JobEdge]:
        return list(self._outs.get(vertex_id, ()))

    def origin(self, vertex_id: str) -> str:
        """The vertex whose rows reach ``vertex_id`` through FORWARD edges only (subtask i
        to subtask i, in order): two branches of one source (a self-join's two inputs, each
        with its own filter) have the same origin, and see its rows and watermarks alike."""
        while True:
            ins = self.in_edges(vertex_id)
            if len(ins) != 1 or ins[0].partitioning is not Partitioning.FORWARD:
                return vertex_id
            vertex_id = ins[0].source

    def explain(self) -> str:
        """One line per vertex with its chain, then its outgoing edges."""
        lines = []
        groups = len({v.slot_sharing_group for v in self.vertices}) > 1
        for v in self.vertices:
            chain = " -> ".join(op.label() for op in v.chain)
            group = f", slot-sharing={v.slot_sharing_group}" if groups else ""
            lines.append(f"{v.id} [parallelism={v.parallelism}{group}]: {chain}")
            lines += _iterations(v)
            for e in self.out_edges(v.id):
                lines.append(f"  --{e.label()}--> {e.target}")
        return "\n".join(lines)


def _iterations(v: JobVertex) -> list[str]:
    """The job an iteration's step runs in its vertex's task: its head (IterationSource) and
    tail (IterationSink) co-located there, joined by a broker."""
    from sqlengine.optimizer.specs_iteration import IterateSpec

    lines = []
    for op in v.chain:
        if not isinstance(op, IterateSpec):
            continue
        from sqlengine.optimizer import plan_job
        from sqlengine.plan.nodes import Sink, SinkSpec

        mode = "streaming" if op.streaming else "batch"
        step = plan_job(Sink(op.step, SinkSpec("collect", "collect", (), op.step.schema)),
                        {"execution.runtime-mode": mode})
        lines.append(f"  iteration {op.name} (co-located in {v.id}: IterationSource and "
                     "IterationSink share a broker; each round feeds the sink's new rows back "
                     "to the source)")
        if op.partition and v.parallelism > 1:
            cols = ", ".join(op.schema.fields[i].name for i in op.partition)
            rounds = ("supersteps aligned across the subtasks: a round ends when every "
                      "subtask's step has drained, the fixpoint when no subtask had new rows"
                      ) if not op.streaming else \
                ("rows go round as they are derived; at the end of input the loop ends "
                 "when every subtask's inputs ended and no message is in flight")
            lines.append(f"  partitioned: {v.parallelism} subtasks of {v.id}, each a head and "
                         f"tail pair running the step on its keys; working rows routed by "
                         f"hash({cols}), input 1 by hash({', '.join(op.static_keys)}) "
                         f"(co-located); each round's derived rows go to the subtask of "
                         f"hash({cols}) through the broker"
                         f"{', deduplicated there' if op.distinct else ''}; {rounds}; the "
                         "step's job below runs in each subtask")
        elif op.single_reason:
            lines.append(f"  in one task (not partitioned at parallelism > 1): "
                         f"{op.single_reason}")
        for text in step.explain().replace("Sink(collect)", f"IterationSink({op.name})") \
                .splitlines():
            if text.startswith(" "):  # an edge: its target is a vertex of the step's job
                head, _, target = text.rpartition("--> ")
                lines.append(f"    {head}--> {v.id}.{target}")
            else:
                lines.append(f"    {v.id}.{text}")
    return lines
