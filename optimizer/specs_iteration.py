"""Operator specs of a recursive query's iteration (``sqlengine.plan.iteration``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlengine.optimizer.specs import OperatorSpec
from sqlengine.plan import nodes as N

# Rounds an iteration may take before it fails ('table.exec.iteration.max-rounds'): a query
# that never reaches a fixpoint stops with this named, never hangs.
MAX_ROUNDS = 100_000


@dataclass(frozen=True, slots=True, kw_only=True)
class IterateSpec(OperatorSpec):
    """Gathers the base rows (its input), then runs ``step`` (the optimized logical plan of
    the step, whose working table is its IterationSource) round after round, each round's
    new rows fed back from the step's output (the IterationSink) to its head through a
    broker, until a round adds none. Head, step and tail run in this operator's task (one
    co-location group: the broker is in memory)."""

    type_name: ClassVar[str] = "iterate"

    name: str
    distinct: bool
    step: N.LogicalPlan
    max_rounds: int = MAX_ROUNDS
    # Streaming mode: the step's other tables are the iteration's inputs 1.. (StepInput
    # leaves), fed to a streaming step job as they arrive; each input batch (base rows or
    # new rows of a step table) runs rounds until they add nothing.
    streaming: bool = False
    # Partitioned (parallelism > 1): the iteration's working rows are routed by these of
    # its columns (the recursive table's side of the step's equi-join), its input 1 (the
    # join's static side) by ``static_keys``: each subtask runs the step on its share, the
    # rows a round derives go to the subtask of their key (runtime/native/iteration_broker).
    # Empty: the whole loop runs in one task (``single_reason`` says why, at parallelism > 1).
    partition: tuple[int, ...] = ()
    static_keys: tuple[str, ...] = ()  # (the static side's join keys, for EXPLAIN)
    single_reason: str = ""
    # One task: a LIMIT straight above (through projections) reads at most this
    # many rows, so the loop ends once it has found them (any such rows are the LIMIT's
    # answer): ``WITH RECURSIVE t ... SELECT * FROM t LIMIT 5`` ends, as in PostgreSQL and
    # DuckDB, though the recursion alone never would. None: it runs to its fixpoint.
    enough_rows: int | None = None

    def label(self) -> str:
        kind = "UNION" if self.distinct else "UNION ALL"
        text = f"Iterate({self.name}, {kind}, IterationSource -> step -> IterationSink"
        if self.partition:
            cols = ", ".join(self.schema.fields[i].name for i in self.partition)
            text += f", partitioned by [{cols}] co-located with input 1 by " \
                    f"[{', '.join(self.static_keys)}]"
        elif self.single_reason:
            text += ", in one task"
        if self.enough_rows is not None:
            text += f", ends at {self.enough_rows} rows found (the LIMIT above)"
        return text + ")"


@dataclass(frozen=True, slots=True, kw_only=True)
class IterationSourceSpec(OperatorSpec):
    """The iteration's head: emits each round's new rows, as the broker hands them over."""

    type_name: ClassVar[str] = "iteration_source"

    name: str
    index: int = 0  # 0: the recursive table's new rows; i > 0: the iteration's input i

    def label(self) -> str:
        if self.index:
            return f"IterationInput({self.name}, input {self.index})"
        return f"IterationSource({self.name})"
