"""The physical plan: operators (OperatorSpec) joined by exchanges that carry a ship strategy
(Partitioning), as a DAG of PhysicalNodes, and the walks over it that the physical passes use."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from enum import Enum

from sqlengine.plan.expressions import Expr
from sqlengine.plan.nodes import Schema


class Partitioning(Enum):
    """How records travel along an edge (Flink's StreamPartitioner kinds)."""

    FORWARD = "FORWARD"
    HASH = "HASH"
    REBALANCE = "REBALANCE"
    BROADCAST = "BROADCAST"
    RANGE = "RANGE"
    SINGLE = "GLOBAL"


class ChainStrategy(Enum):
    """Flink's ChainingStrategy."""

    ALWAYS = "ALWAYS"
    HEAD = "HEAD"
    NEVER = "NEVER"


@dataclass(frozen=True, slots=True)
class OperatorSpec:
    """What one operator does: data, not a live operator (the runtime builds those)."""

    kind: str  # source, values, filter, project, group_aggregate, join, union, sort, limit, sink
    schema: Schema  # output schema (data columns; a row-kind column rides along if updating)
    updating: bool = False  # whether the output is an updating changelog
    params: tuple[tuple[str, object], ...] = ()
    chain_strategy: ChainStrategy = ChainStrategy.ALWAYS

    def param(self, key: str, default: object = None) -> object:
        return dict(self.params).get(key, default)

    def label(self) -> str:
        """The operator's name in EXPLAIN's Job Graph section."""
        p = dict(self.params)
        match self.kind:
            case "source":
                return f"Source({p['table']})"
            case "values":
                return f"Values(rows={len(p['rows'])})"  # type: ignore[arg-type]
            case "filter":
                return f"Filter({p['predicate'].sql()})"  # type: ignore[attr-defined]
            case "project":
                return f"Project({', '.join(self.schema.names())})"
            case ("group_aggregate" | "window_aggregate" | "session_aggregate" |
                  "local_aggregate" | "global_aggregate"):
                keys = ", ".join(k.sql() for k in p["keys"])  # type: ignore[attr-defined]
                aggs = ", ".join(a.sql() for a in p["aggs"])  # type: ignore[attr-defined]
                name = {"group_aggregate": "GroupAggregate",
                        "window_aggregate": "WindowAggregate",
                        "session_aggregate": "SessionWindowAggregate",
                        "local_aggregate": "LocalAggregate",
                        "global_aggregate": "GlobalAggregate"}[self.kind]
                return f"{name}(keys=[{keys}], aggs=[{aggs}])"
            case "window_assign":
                return f"WindowTableFunction({p['label']})"
            case "top_n" | "window_top_n":
                name = "Rank" if self.kind == "top_n" else "WindowRank"
                return f"{name}({p['label']})"
            case "join":
                build = p.get("build_side")
                side = "" if build is None else f", build={('left', 'right')[build]}"  # type: ignore[index]
                return f"Join({p['join_kind']}{side})"
            case "over_aggregate":
                return f"OverAggregate({p['label']})"
            case "window_join":
                return f"WindowJoin({p['join_kind']})"
            case "interval_join":
                return (f"IntervalJoin({p['join_kind']}, {p['lower']} ms <= left time - right "
                        f"time <= {p['upper']} ms)")
            case "union":
                return "Union"
            case "range_sample" | "range_boundaries" | "range_assign":
                name = {"range_sample": "RangeSample", "range_boundaries": "RangeBoundaries",
                        "range_assign": "RangeAssign"}[self.kind]
                keys = ", ".join(k.sql() for k in p["keys"])  # type: ignore[attr-defined]
                return f"{name}({keys})"
            case "ordered_concat":
                return "OrderedConcat"
            case "sort":
                keys = ", ".join(k.sql() for k in p["keys"])  # type: ignore[attr-defined]
                fetch = f", fetch={p['fetch']}" if p.get("fetch") is not None else ""
                return f"Sort({keys}{fetch})"
            case "limit":
                return f"Limit(fetch={p.get('fetch')}, offset={p.get('offset', 0)})"
            case "sink":
                return f"Sink({p['table']})"
            case _:
                return self.kind


@dataclass(frozen=True, slots=True)
class Exchange:
    """An input edge of a physical node: how its records are shipped."""

    partitioning: Partitioning
    keys: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class PhysicalNode:
    op: OperatorSpec
    inputs: tuple[tuple[PhysicalNode, Exchange], ...] = field(default=())
    estimate: object = field(default=None, compare=False)  # optimizer.estimates.Estimate


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
