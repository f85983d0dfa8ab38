"""StreamGraph -> JobGraph chaining (Flink's conditions) and the visitor framework."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from sqlengine.optimizer.analysis import unbounded_sources
from sqlengine.optimizer.chaining import build_job_graph, is_chainable
from sqlengine.optimizer.physical import Partitioning
from sqlengine.optimizer.specs import ChainStrategy, OperatorSpec
from sqlengine.optimizer.streamgraph import StreamEdge, StreamGraph, StreamNode
from sqlengine.optimizer.visitor import PlanVisitor, accept
from sqlengine.plan.nodes import Field, LogicalPlan, Schema
from tests.plans import plan_of

S = Schema((Field("a", pa.int32()),))


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedSpec(OperatorSpec):
    """A stand-in operator that is only its name (chaining looks at strategies and edges)."""

    name: str

    def label(self) -> str:
        return self.name


def op(kind: str, strategy: ChainStrategy = ChainStrategy.ALWAYS) -> OperatorSpec:
    return NamedSpec(schema=S, name=kind, chain_strategy=strategy)


def graph(nodes: list[StreamNode], edges: list[StreamEdge]) -> StreamGraph:
    return StreamGraph(tuple(nodes), tuple(edges))


def test_forward_edges_with_equal_parallelism_chain() -> None:
    g = graph([StreamNode(1, op("source", ChainStrategy.HEAD), 1), StreamNode(2, op("filter"), 1),
               StreamNode(3, op("project"), 1)],
              [StreamEdge(1, 2, Partitioning.FORWARD), StreamEdge(2, 3, Partitioning.FORWARD)])
    job = build_job_graph(g)
    assert [len(v.chain) for v in job.vertices] == [3]


def test_each_condition_breaks_the_chain() -> None:
    src = StreamNode(1, op("source", ChainStrategy.HEAD), 2)
    cases = {
        "hash edge": (StreamNode(2, op("agg"), 2), Partitioning.HASH, True),
        "parallelism differs": (StreamNode(2, op("filter"), 1), Partitioning.FORWARD, True),
        "downstream is HEAD": (StreamNode(2, op("x", ChainStrategy.HEAD), 2),
                               Partitioning.FORWARD, True),
        "downstream is NEVER": (StreamNode(2, op("x", ChainStrategy.NEVER), 2),
                                Partitioning.FORWARD, True),
        "other slot sharing group": (StreamNode(2, op("filter"), 2, "other"),
                                     Partitioning.FORWARD, True),
        "chaining disabled": (StreamNode(2, op("filter"), 2), Partitioning.FORWARD, False),
    }
    for name, (down, part, enabled) in cases.items():
        g = graph([src, down], [StreamEdge(1, 2, part)])
        assert not is_chainable(g.edges[0], g, chaining_enabled=enabled), name
        assert len(build_job_graph(g, enabled).vertices) == 2, name
    upstream_never = graph([StreamNode(1, op("source", ChainStrategy.NEVER), 1),
                            StreamNode(2, op("filter"), 1)],
                           [StreamEdge(1, 2, Partitioning.FORWARD)])
    assert not is_chainable(upstream_never.edges[0], upstream_never)


def test_two_inputs_never_chain_into_the_join() -> None:
    g = graph([StreamNode(1, op("source", ChainStrategy.HEAD), 1),
               StreamNode(2, op("source", ChainStrategy.HEAD), 1),
               StreamNode(3, op("join"), 1), StreamNode(4, op("project"), 1)],
              [StreamEdge(1, 3, Partitioning.FORWARD),
               StreamEdge(2, 3, Partitioning.FORWARD, (), 1),
               StreamEdge(3, 4, Partitioning.FORWARD)])
    job = build_job_graph(g)
    assert [[o.label() for o in v.chain] for v in job.vertices] == [["source"], ["source"],
                                                                ["join", "project"]]
    assert [(e.source, e.target, e.input_index) for e in job.edges] == [
        ("v1", "v3", 0), ("v2", "v3", 1)]


def test_visitor_visits_pre_and_post_order_once() -> None:
    plan = plan_of("SELECT t.a FROM t JOIN u ON t.a = u.a WHERE t.a > 1")
    events: list[str] = []

    class Trace:
        def pre_visit(self, node: LogicalPlan) -> bool:
            events.append("pre " + node.explain_label().split(":")[0])
            return True

        def post_visit(self, node: LogicalPlan) -> None:
            events.append("post " + node.explain_label().split(":")[0])

    accept(plan, Trace())
    assert events == ["pre Project", "pre Filter", "pre Join", "pre Scan", "post Scan",
                      "pre Scan", "post Scan", "post Join", "post Filter", "post Project"]


def test_plan_visitor_folds_bottom_up() -> None:
    class CountNodes(PlanVisitor[int]):
        def visit(self, node: LogicalPlan, children: tuple[int, ...]) -> int:
            return 1 + sum(children)

    assert CountNodes().fold(plan_of("SELECT a FROM t UNION ALL SELECT a FROM u")) == 5


def test_unbounded_sources() -> None:
    assert unbounded_sources(plan_of("SELECT a FROM t")) == []
