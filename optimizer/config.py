"""Optimizer settings read from the session's options."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OptimizerConfig:
    """``table.optimizer.*`` and ``pipeline.*`` options that shape the plan and the JobGraph."""

    enabled: bool = True
    disabled_rules: frozenset[str] = frozenset()
    chaining_enabled: bool = True
    max_passes: int = 8
    parallelism: int = 1

    @staticmethod
    def from_options(options: dict[str, str]) -> OptimizerConfig:
        rules = options.get("table.optimizer.disabled-rules", "")
        return OptimizerConfig(
            enabled=options.get("table.optimizer.enabled", "true").lower() != "false",
            disabled_rules=frozenset(r.strip() for r in rules.split(",") if r.strip()),
            chaining_enabled=options.get("pipeline.operator-chaining", "true").lower()
            != "false",
            parallelism=int(options.get("parallelism.default", "1")),
        )
