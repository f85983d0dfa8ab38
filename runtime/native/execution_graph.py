"""JobGraph -> ExecutionGraph (Flink's ExecutionGraphBuilder, seed 003).

Each JobVertex becomes an ExecutionJobVertex with one ExecutionVertex per parallel subtask.
Each JobEdge's data set becomes an IntermediateResult with one partition per producing subtask;
a consuming subtask reads it through input channels, connected POINTWISE (FORWARD: subtask i
reads producer i) or ALL_TO_ALL (every other ship strategy: every producer subtask).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from sqlengine.optimizer.jobgraph import JobEdge, JobGraph, JobVertex
from sqlengine.optimizer.physical import Partitioning


class DistributionPattern(Enum):
    POINTWISE = "POINTWISE"
    ALL_TO_ALL = "ALL_TO_ALL"


def pattern_of(edge: JobEdge) -> DistributionPattern:
    return DistributionPattern.POINTWISE if edge.partitioning is Partitioning.FORWARD \
        else DistributionPattern.ALL_TO_ALL


@dataclass(frozen=True, slots=True)
class ExecutionVertex:
    """One parallel subtask of a JobVertex."""

    vertex_id: str
    subtask: int  # 0-based
    parallelism: int

    @property
    def name(self) -> str:
        return f"{self.vertex_id} ({self.subtask + 1}/{self.parallelism})"


@dataclass(frozen=True, slots=True)
class IntermediateResultPartition:
    result_id: str
    partition: int  # the producing subtask


@dataclass(frozen=True, slots=True)
class IntermediateResult:
    """The data set one JobEdge carries, partitioned by producing subtask."""

    id: str
    edge: JobEdge
    pattern: DistributionPattern
    partitions: tuple[IntermediateResultPartition, ...]


@dataclass(frozen=True, slots=True)
class InputChannel:
    """Where a consuming subtask reads from: one partition of one result."""

    result_id: str
    partition: int
    input_index: int  # the head operator's input (0 = left/first)


@dataclass(frozen=True, slots=True)
class ExecutionJobVertex:
    job_vertex: JobVertex
    subtasks: tuple[ExecutionVertex, ...]
    # Per subtask, its input channels in order (the channel index is the position).
    channels: tuple[tuple[InputChannel, ...], ...]

    @property
    def parallelism(self) -> int:
        return len(self.subtasks)


@dataclass(frozen=True, slots=True)
class ExecutionGraph:
    vertices: tuple[ExecutionJobVertex, ...]  # topological order, as the JobGraph's
    results: tuple[IntermediateResult, ...]

    def vertex(self, vertex_id: str) -> ExecutionJobVertex:
        return next(v for v in self.vertices if v.job_vertex.id == vertex_id)

    def produced(self, vertex_id: str) -> list[IntermediateResult]:
        return [r for r in self.results if r.edge.source == vertex_id]

    def consumers(self, result: IntermediateResult, partition: int
                  ) -> list[tuple[ExecutionVertex, int]]:
        """The subtasks reading ``partition`` of ``result``, each with its channel index."""
        target = self.vertex(result.edge.target)
        out = []
        for sub, channels in zip(target.subtasks, target.channels):
            for i, ch in enumerate(channels):
                if ch.result_id == result.id and ch.partition == partition:
                    out.append((sub, i))
        return out

    def explain(self) -> str:
        lines = []
        for v in self.vertices:
            names = ", ".join(s.name for s in v.subtasks)
            lines.append(f"{v.job_vertex.id} x{v.parallelism}: {names}")
        for r in self.results:
            lines.append(f"  {r.id}: {r.edge.source} --{r.edge.label()} "
                         f"[{r.pattern.value}]--> {r.edge.target}")
        return "\n".join(lines)


def build_execution_graph(graph: JobGraph) -> ExecutionGraph:
    results: list[IntermediateResult] = []
    by_edge: dict[int, IntermediateResult] = {}
    for i, edge in enumerate(graph.edges):
        producer = graph.vertex(edge.source)
        consumer = graph.vertex(edge.target)
        pattern = pattern_of(edge)
        if pattern is DistributionPattern.POINTWISE and \
                producer.parallelism != consumer.parallelism:
            pattern = DistributionPattern.ALL_TO_ALL  # (the planner uses REBALANCE then)
        rid = f"r{i + 1}"
        result = IntermediateResult(
            rid, edge, pattern,
            tuple(IntermediateResultPartition(rid, p) for p in range(producer.parallelism)))
        results.append(result)
        by_edge[i] = result
    vertices = []
    for v in graph.vertices:
        subtasks = tuple(ExecutionVertex(v.id, s, v.parallelism) for s in range(v.parallelism))
        ins = [(i, e) for i, e in enumerate(graph.edges) if e.target == v.id]
        ins.sort(key=lambda ie: ie[1].input_index)
        channels = []
        for s in range(v.parallelism):
            mine: list[InputChannel] = []
            for i, e in ins:
                r = by_edge[i]
                parts = [s] if r.pattern is DistributionPattern.POINTWISE \
                    else range(len(r.partitions))
                mine.extend(InputChannel(r.id, p, e.input_index) for p in parts)
            channels.append(tuple(mine))
        vertices.append(ExecutionJobVertex(v, subtasks, tuple(channels)))
    return ExecutionGraph(tuple(vertices), tuple(results))
