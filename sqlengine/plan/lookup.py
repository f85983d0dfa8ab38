"""The logical node of a lookup join: ``JOIN dim FOR SYSTEM_TIME AS OF left.proctime`` on a
table whose connector looks rows up by key (Flink's processing-time temporal join, its
LookupJoin): each left row meets the rows of ``dim`` with its key values as they are when
the row is processed, read from the external system (through a cache, as the table's
``lookup.*`` options say), never as a stream."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlengine.errors import PlanError
from sqlengine.plan.expressions import Expr
from sqlengine.plan.nodes import LogicalPlan, Schema, SourceSpec


@dataclass(frozen=True, slots=True)
class LookupJoin(LogicalPlan):
    """``left`` joined with the rows of ``source`` whose ``key_columns`` (positions in
    ``table_schema``) equal ``left_keys``; ``kind`` inner or left; ``condition`` over (left ++
    table) checked on each pair (a left row whose pairs all fail it is unmatched)."""

    left: LogicalPlan
    source: SourceSpec
    table_schema: Schema
    kind: str
    left_keys: tuple[Expr, ...]
    key_columns: tuple[int, ...]
    condition: Expr | None
    # A LOOKUP hint's retry of keys the table does not hold: (fixed delay ms, attempts)
    retry: tuple[int, int] | None = None
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("inner", "left"):
            raise PlanError(f"a lookup join is INNER or LEFT, not {self.kind!r}")
        right = tuple(replace(f, rowtime=False, proctime=False,
                              nullable=f.nullable or self.kind == "left")
                      for f in self.table_schema.fields)
        object.__setattr__(self, "schema", Schema(self.left.schema.fields + right))

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.left,)

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, left=children[0])

    def explain_label(self) -> str:
        names = self.table_schema.names()
        on = ", ".join(f"{k.sql()} = {self.source.table}.{names[i]}"
                       for k, i in zip(self.left_keys, self.key_columns))
        text = f"LookupJoin: {self.kind}, table={self.source.table}, on=[{on}]"
        if self.condition is not None:
            text += f", filter={self.condition.sql()}"
        if self.retry is not None:
            text += f", retry=lookup_miss(fixed_delay={self.retry[0]} ms, max={self.retry[1]})"
        return text
