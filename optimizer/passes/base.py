"""What a physical pass is (a named visitor over the physical DAG) and what it may consult."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlengine.optimizer.costs import CostModel
from sqlengine.optimizer.estimates import Estimator
from sqlengine.optimizer.physical import PhysicalNode


@dataclass
class PassContext:
    """The session options a pass reads, the estimator and cost model it compares
    alternatives with, and the notes it leaves for EXPLAIN VERBOSE."""

    options: dict[str, str]
    estimator: Estimator
    notes: list[tuple[str, str]] = field(default_factory=list)  # (pass name, what it chose)

    @property
    def mode(self) -> str:
        return self.options.get("execution.runtime-mode", "streaming").lower()

    @property
    def streaming(self) -> bool:
        return self.mode == "streaming"

    @property
    def parallelism(self) -> int:
        return int(self.options.get("parallelism.default", "1"))

    @property
    def costs(self) -> CostModel:
        return CostModel.for_options(self.options)

    def flag(self, key: str, default: bool = True) -> bool:
        """A boolean option ('true' / 'false')."""
        return self.options.get(key, "true" if default else "false").strip().lower() != "false"

    def note(self, pass_name: str, what: str) -> None:
        if (pass_name, what) not in self.notes:
            self.notes.append((pass_name, what))


class PhysicalPass:
    """A rewrite of the physical DAG. ``name`` is its module's name, the heading of its step
    in EXPLAIN VERBOSE and the key that turns it off in 'table.optimizer.disabled-rules';
    ``switch`` is the option of its own that turns it off, if it has one. Every pass but
    graph creation is off when 'table.optimizer.enabled' is 'false'."""

    name: str = ""
    switch: str | None = None

    def enabled(self, ctx: PassContext) -> bool:
        disabled = {r.strip() for r in ctx.options.get("table.optimizer.disabled-rules",
                                                       "").split(",") if r.strip()}
        return ctx.flag("table.optimizer.enabled") and self.name not in disabled and \
            (self.switch is None or ctx.flag(self.switch))

    def apply(self, root: PhysicalNode, ctx: PassContext) -> PhysicalNode:
        raise NotImplementedError
