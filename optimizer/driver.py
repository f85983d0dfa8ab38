"""The rule driver: passes to a fixed point, a schema check after every rule, an observer."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlengine.errors import InternalError
from sqlengine.optimizer.rule import OptimizerRule, RuleContext
from sqlengine.plan.nodes import LogicalPlan

Observer = Callable[[OptimizerRule, LogicalPlan], None]


class Optimizer:
    """Applies ``rules`` in order, pass after pass, until nothing changes or ``max_passes``."""

    def __init__(self, rules: Sequence[OptimizerRule], max_passes: int = 8,
                 observer: Observer | None = None) -> None:
        self.rules = tuple(rules)
        self.max_passes = max_passes
        self.observer = observer

    def optimize(self, plan: LogicalPlan, ctx: RuleContext | None = None) -> LogicalPlan:
        ctx = ctx or RuleContext()
        disabled = {r.strip() for r in ctx.options.get("table.optimizer.disabled-rules",
                                                       "").split(",") if r.strip()}
        if ctx.options.get("table.optimizer.enabled", "true").lower() == "false":
            for rule in self.rules:
                if rule.mandatory:
                    plan = rule.apply(plan, ctx).data
                    if self.observer is not None:
                        self.observer(rule, plan)
            return plan
        for _ in range(self.max_passes):
            changed = False
            for rule in self.rules:
                if rule.name in disabled and not rule.mandatory:
                    continue
                before = plan.schema
                result = rule.apply(plan, ctx)
                if result.changed:
                    after = result.data.schema
                    if [(f.name, f.type) for f in after.fields] != \
                            [(f.name, f.type) for f in before.fields]:
                        msg = (f"rule {rule.name} changed the plan's schema from "
                               f"[{before.describe()}] to [{after.describe()}]")
                        raise InternalError(msg)
                    plan = result.data
                    changed = True
                if self.observer is not None:
                    self.observer(rule, plan)
            if not changed:
                break
        return plan
