"""EXPLAIN rendering of logical plans: one ``Name: k=v`` line per node, two-space indent."""

from __future__ import annotations

from sqlengine.plan.nodes import LogicalPlan


def display_indent(plan: LogicalPlan, indent: int = 0) -> str:
    """The plan as indented lines, root first."""
    lines = [" " * indent + plan.explain_label()]
    for child in plan.children():
        lines.append(display_indent(child, indent + 2))
    return "\n".join(lines)
