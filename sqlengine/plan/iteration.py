"""The logical nodes of a recursive query (``WITH RECURSIVE``): an iteration.

``WITH RECURSIVE t (cols) AS (base UNION [ALL] step)`` binds to ``Iterate(base, step)``,
where the step reads ``t`` through one ``WorkingTable`` leaf. As in Flink's iterations
(seed 001: a FeedbackTransformation becomes an IterationSource / IterationSink pair joined by
a broker), the step's reference to ``t`` is the iteration's head, the step's output its tail:
each round the head emits the rows the previous round added (semi-naive evaluation), the
tail keeps the new ones (UNION: those not seen before; UNION ALL: every one) and hands them
to the head through the broker, until a round adds none.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlengine.plan.nodes import LogicalPlan, Schema


@dataclass(frozen=True, slots=True)
class WorkingTable(LogicalPlan):
    """The recursive table as the step reads it: each round, the previous round's new rows
    (the iteration's head, Flink's IterationSource)."""

    name: str
    schema: Schema

    def explain_label(self) -> str:
        return f"IterationSource: {self.name} (the previous round's new rows)"


@dataclass(frozen=True, slots=True)
class Iterate(LogicalPlan):
    """A recursive query: ``base``'s rows, then ``step`` over each round's new rows until a
    round adds none (``distinct``: UNION, rows already found are not new; else UNION ALL).
    The step's output goes to the iteration's tail (Flink's IterationSink)."""

    name: str
    base: LogicalPlan
    step: LogicalPlan
    distinct: bool
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", self.base.schema)

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.base, self.step)

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, base=children[0], step=children[1])

    def explain_label(self) -> str:
        kind = "UNION" if self.distinct else "UNION ALL"
        return f"Iterate: {self.name}, {kind} (base, then step to a fixpoint; " \
               f"IterationSink: the step's output)"


def working_tables(plan: LogicalPlan) -> list[WorkingTable]:
    """The WorkingTable leaves under ``plan``."""
    found: list[WorkingTable] = []
    stack = [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, WorkingTable):
            found.append(node)
        stack.extend(node.children())
    return found


@dataclass(frozen=True, slots=True)
class StepInput(LogicalPlan):
    """In streaming mode, a table the step reads besides the recursive one, as it arrives:
    input ``index`` of the iteration (its rows are fed to the step as they come, so that
    each new row meets every row found so far: the iteration is maintained, not re-run)."""

    table: str
    index: int
    schema: Schema

    def explain_label(self) -> str:
        return f"IterationInput: {self.table} (input {self.index} of the iteration)"
