"""EXPLAIN: the assembly of its sections (explain_plan), the physical plan with estimates, costs
and changelog modes, plan advice, and the JobGraph as JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlengine.optimizer.costs import CostModel
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.optimizer.physical import Partitioning, PhysicalNode
from sqlengine.optimizer.rule import OptimizerRule
from sqlengine.optimizer.specs import (
    GlobalAggregateSpec,
    GroupAggregateSpec,
    JoinSpec,
    LimitSpec,
    SortSpec,
    TableScanSpec,
    TableSinkSpec,
    ValuesSpec,
)
from sqlengine.optimizer.specs_windows import TopNSpec
from sqlengine.plan.display import display_indent
from sqlengine.plan.nodes import LogicalPlan

if TYPE_CHECKING:
    from sqlengine.optimizer.passes.base import PassContext


def physical_plan_text(root: PhysicalNode, options: dict[str, str], costs: bool = True,
                       changelog: bool = False, blocking: bool = False) -> str:
    """The physical DAG, root first, in Flink's tree style; each exchange is a line of its
    own (with its exchange mode when ``blocking``: the job's shuffles write their results
    out before they are read); a node read by several consumers is printed once and then
    referred to by its id."""
    model = CostModel.for_options(options)
    totals = model.total(root)
    ids: dict[int, int] = {}
    consumers: dict[int, int] = {}

    def count(node: PhysicalNode) -> None:
        consumers[id(node)] = consumers.get(id(node), 0) + 1
        if consumers[id(node)] == 1:
            for child, _ in node.inputs:
                count(child)

    count(root)
    lines: list[str] = []

    def label(node: PhysicalNode) -> str:
        text = node.op.label()
        if isinstance(node.op, TableScanSpec):
            text = text[:-1] + node.op.read_detail()
        if changelog:
            text += ", changelogMode=[I,UB,UA,D]" if node.op.updating else \
                ", changelogMode=[I]"
        if costs and node.estimate is not None:
            text += f" [{node.estimate.label()}; cumulative {totals[id(node)].label()}]"
        return text

    def emit(node: PhysicalNode, prefix: str, child_prefix: str) -> None:
        shared = consumers[id(node)] > 1
        if id(node) in ids:
            lines.append(f"{prefix}(reused #{ids[id(node)]}) {node.op.label()}")
            return
        if shared:
            ids[id(node)] = len(ids) + 1
        tag = f"#{ids[id(node)]} " if shared else ""
        lines.append(f"{prefix}{tag}{label(node)}")
        n = len(node.inputs)
        for i, (child, ex) in enumerate(node.inputs):
            last = i == n - 1
            head, tail = ("+- ", "   ") if last else (":- ", ":  ")
            if ex.partitioning is Partitioning.FORWARD:
                emit(child, child_prefix + head, child_prefix + tail)
                continue
            keys = f"({', '.join(k.sql() for k in ex.keys)})" if ex.keys else ""
            ship = f"Exchange({ex.partitioning.value}{keys}" + \
                (", BLOCKING)" if blocking else ")")
            if costs:
                ship += f" [{model.exchange(child, ex).label()}]"
            lines.append(child_prefix + head + ship)
            emit(child, child_prefix + tail + "+- ", child_prefix + tail + "   ")

    emit(root, "", "")
    return "\n".join(lines)


def job_graph_json(job: JobGraph) -> str:
    """The JobGraph for tools: Flink's JSON execution plan shape (nodes with their
    operators and parallelism, each with its predecessors and ship strategy)."""
    nodes = []
    for v in job.vertices:
        nodes.append({
            "id": v.id,
            "type": v.head.type_name,
            "pact": "Data Source" if isinstance(v.head, TableScanSpec | ValuesSpec) else
            "Data Sink" if isinstance(v.tail, TableSinkSpec) else "Operator",
            "contents": " -> ".join(op.label() for op in v.chain),
            "operators": [op.label() for op in v.chain],
            "parallelism": v.parallelism,
            "slot_sharing_group": v.slot_sharing_group,
            "predecessors": [{"id": e.source, "ship_strategy": e.partitioning.value,
                              "keys": [k.sql() for k in e.keys],
                              "exchange": "BLOCKING" if e.blocking else "PIPELINED",
                              "side": "second" if e.input_index else "first"}
                             for e in job.in_edges(v.id)],
        })
    return json.dumps({"nodes": nodes}, indent=2)


def plan_advice(root: PhysicalNode, options: dict[str, str]) -> list[str]:
    """Flink-style PLAN_ADVICE: warnings and hints about the physical plan."""
    from sqlengine.optimizer.analysis import unbounded_physical

    advice: list[str] = []
    streaming = options.get("execution.runtime-mode", "streaming").lower() == "streaming"
    ttl = options.get("table.exec.state.ttl")
    seen: set[int] = set()
    parallelism = int(options.get("parallelism.default", "1"))

    def visit(node: PhysicalNode) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        op = node.op
        unbounded = unbounded_physical(node)
        if streaming and unbounded and isinstance(op, JoinSpec) and not (
                op.ttl and (op.ttl if op.right_ttl is None else op.right_ttl)):
            # (a side without a TTL, the option's or a STATE_TTL hint's)
            advice.append(
                f"[WARNING] {node.op.label()}: a regular join over an unbounded input keeps "
                "every row of both sides for ever; set 'table.exec.state.ttl' if old rows may "
                "be dropped, or use an interval or window join")
        if streaming and unbounded and not ttl and \
                isinstance(op, GroupAggregateSpec | GlobalAggregateSpec):
            advice.append(
                f"[WARNING] {node.op.label()}: a GROUP BY over an unbounded input keeps state "
                "for every key for ever; set 'table.exec.state.ttl' if idle keys may be "
                "forgotten, or use a window aggregation if the keys do not stay few")
        if isinstance(op, SortSpec | LimitSpec | TopNSpec) and parallelism > 1 and any(
                ex.partitioning is Partitioning.SINGLE for _, ex in node.inputs):
            advice.append(f"[ADVICE] {node.op.label()}: runs in one subtask (a global "
                          "order); with a LIMIT the rows before it are cut per subtask first")
        if isinstance(op, JoinSpec) and not streaming and parallelism > 1 and \
                options.get("table.optimizer.join.broadcast-threshold") == "-1":
            advice.append(f"[ADVICE] {node.op.label()}: broadcast joins are switched off "
                          "('table.optimizer.join.broadcast-threshold' = '-1')")
        for child, _ in node.inputs:
            visit(child)

    visit(root)
    return advice or ["No available advice."]


class PassesText:
    """An observer of the physical passes for EXPLAIN VERBOSE: after each pass, what it chose
    and the physical plan it left (or that it left the plan unchanged)."""

    def __init__(self, lines: list[str], options: dict[str, str]) -> None:
        self.lines = lines
        self.options = options
        self.previous: PhysicalNode | None = None
        self.seen_notes = 0

    def __call__(self, name: str, root: PhysicalNode, ctx: PassContext) -> None:
        notes = ctx.notes[self.seen_notes:]
        self.seen_notes += len(notes)
        if root is self.previous:  # (what it weighed, if anything, and kept the plan)
            self.lines.append(f"-- after {name}: unchanged")
            self.lines += [f"   chose: {what}" for _, what in notes]
            return
        self.previous = root
        self.lines.append(f"-- after {name}")
        self.lines += [f"   chose: {what}" for _, what in notes]
        self.lines.append(physical_plan_text(root, self.options, costs=False))


def explain_plan(plan: LogicalPlan, options: dict[str, str], verbose: bool = False,
                 tables: dict[str, object] | None = None,
                 details: tuple[str, ...] = ()) -> tuple[str, LogicalPlan]:
    """EXPLAIN's text: the bound plan, the optimized plan (with each rule's and each physical
    pass's result when ``verbose``), the physical plan (with estimates and costs for
    ESTIMATED_COST, changelog modes for CHANGELOG_MODE), plan advice for PLAN_ADVICE and the
    JobGraph with its chains; JSON_EXECUTION_PLAN adds the JobGraph as JSON. Returns the text
    and the optimized plan (for a runtime that adds a plan of its own)."""
    from sqlengine.optimizer import optimize, plan_job, plan_physical

    steps: list[str] = []

    def observe(rule: OptimizerRule, p: LogicalPlan) -> None:
        steps.append(f"-- after {rule.name}\n{display_indent(p)}")

    notes: list[str] = []
    optimized = optimize(plan, options, observer=observe if verbose else None, tables=tables,
                         notes=notes)
    passes: list[str] = []
    physical = plan_physical(optimized, options, tables,
                             PassesText(passes, options) if verbose else None)
    job = plan_job(optimized, options, tables, physical)
    parts = ["== Abstract Syntax Tree ==", display_indent(plan), ""]
    if verbose:
        parts += ["== Optimizer Passes ==", *steps, ""]
        parts += ["== Physical Passes ==", *passes, ""]
    parts += ["== Optimized Logical Plan ==", display_indent(optimized), ""]
    if "ESTIMATED_COST" in details or "CHANGELOG_MODE" in details:
        parts += ["== Optimized Physical Plan ==",
                  physical_plan_text(physical, options, costs="ESTIMATED_COST" in details,
                                     changelog="CHANGELOG_MODE" in details,
                                     blocking=any(e.blocking for e in job.edges)), ""]
    if "ESTIMATED_COST" in details and notes:
        parts += ["== Join Order ==", *notes, ""]
    if "PLAN_ADVICE" in details:
        advice = plan_advice(physical, options)
        parts += ["== Plan Advice ==",
                  *(f"advice[{i + 1}]: {a}" if a != "No available advice." else a
                    for i, a in enumerate(advice)), ""]
    parts += ["== Job Graph ==", job.explain()]
    if "JSON_EXECUTION_PLAN" in details:
        parts += ["", "== Physical Execution Plan ==", job_graph_json(job)]
    return "\n".join(parts), optimized
