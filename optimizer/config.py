"""Optimizer settings read from the session's options."""

from __future__ import annotations

from dataclasses import dataclass

from sqlengine.errors import PlanError

SHUFFLE_MODE = "execution.batch-shuffle-mode"


@dataclass(frozen=True, slots=True)
class OptimizerConfig:
    """``table.optimizer.*`` and ``pipeline.*`` options that shape the plan and the JobGraph."""

    enabled: bool = True
    disabled_rules: frozenset[str] = frozenset()
    chaining_enabled: bool = True
    max_passes: int = 8
    parallelism: int = 1
    batch: bool = False
    # Batch mode's shuffles are blocking by default, as Flink's ('ALL_EXCHANGES_BLOCKING'): a
    # producer's result is complete (spilled to disk) before its consumers read it.
    blocking_shuffles: bool = True

    @property
    def blocking(self) -> bool:
        """Whether the job's shuffles will be blocking (a job that runs one subtask per
        vertex has no shuffles to block)."""
        return self.batch and self.blocking_shuffles and self.parallelism > 1

    @staticmethod
    def from_options(options: dict[str, str]) -> OptimizerConfig:
        rules = options.get("table.optimizer.disabled-rules", "")
        shuffle = options.get(SHUFFLE_MODE, "ALL_EXCHANGES_BLOCKING").upper()
        if shuffle not in ("ALL_EXCHANGES_BLOCKING", "ALL_EXCHANGES_PIPELINED"):
            msg = (f"option {SHUFFLE_MODE!r} must be 'ALL_EXCHANGES_BLOCKING' or "
                   f"'ALL_EXCHANGES_PIPELINED', got {options[SHUFFLE_MODE]!r}")
            raise PlanError(msg)
        return OptimizerConfig(
            enabled=options.get("table.optimizer.enabled", "true").lower() != "false",
            disabled_rules=frozenset(r.strip() for r in rules.split(",") if r.strip()),
            chaining_enabled=options.get("pipeline.operator-chaining", "true").lower()
            != "false",
            parallelism=int(options.get("parallelism.default", "1")),
            batch=options.get("execution.runtime-mode", "streaming").lower() == "batch",
            blocking_shuffles=shuffle == "ALL_EXCHANGES_BLOCKING",
        )
