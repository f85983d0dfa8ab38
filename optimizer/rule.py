"""The optimizer rule interface: a named rewrite of a logical plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from sqlengine.plan.nodes import LogicalPlan
from sqlengine.plan.tree import Transformed, transform_down, transform_up


class ApplyOrder(Enum):
    """How the driver applies a node-local rule: children first, parents first, or the rule
    recurses on its own (whole-tree rewrites such as projection pruning)."""

    BOTTOM_UP = "bottom_up"
    TOP_DOWN = "top_down"
    WHOLE_TREE = "whole_tree"


@dataclass
class RuleContext:
    """What a rule may consult: the session options and the registered tables' data (for
    estimates); ``notes`` collects what cost-based rules weighed (for EXPLAIN)."""

    options: dict[str, str] = field(default_factory=dict)
    tables: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


class OptimizerRule:
    """A rewrite; ``name`` is its module's name and the key of its on/off switch."""

    name: str = ""
    apply_order: ApplyOrder = ApplyOrder.BOTTOM_UP
    # A mandatory rule rewrites what no runtime can run (subqueries): it runs even with the
    # optimizer switched off and cannot be disabled by name.
    mandatory: bool = False

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        raise NotImplementedError

    def apply(self, plan: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        """Run the rule over a whole plan in its apply order."""
        if self.apply_order is ApplyOrder.BOTTOM_UP:
            return transform_up(plan, lambda n: self.rewrite(n, ctx))
        if self.apply_order is ApplyOrder.TOP_DOWN:
            return transform_down(plan, lambda n: self.rewrite(n, ctx))
        return self.rewrite(plan, ctx)
