"""Flink's join hints: ``SELECT /*+ BROADCAST(t1, t3), SHUFFLE_HASH(t2) */ ...`` suggest how
the regular joins of their query block run, as PyFlink 2.3 takes them:

- a join takes the first hint (in order) naming one of its inputs, a table or view by its
  name or alias as the FROM clause gives it (an input that is itself a join has no name),
  whose strategy can run that join: BROADCAST needs an equality and a side that may be
  broadcast (either of an inner join, the right of a LEFT JOIN, none of a FULL one),
  SHUFFLE_HASH and SHUFFLE_MERGE an equality; of one hint's tables the first naming an
  input is the side (broadcast, or built on);
- in batch mode BROADCAST sends that side to every subtask and builds on it, whatever
  'table.optimizer.join.broadcast-threshold' says, and SHUFFLE_HASH hash-partitions both
  sides and builds on it (optimizer/passes/join_strategy.py); SHUFFLE_MERGE (a sort-merge
  join) and NEST_LOOP are refused there by name: the joins here are hash joins;
- in streaming mode they take no effect, as in Flink (a streaming join keeps both sides);
- a name no join input of the block has is refused with Flink's message.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlengine.bind_expr import Scope
from sqlengine.bind_state_ttl import input_name
from sqlengine.errors import BindError, Span
from sqlengine.hints import JoinHint


@dataclass
class JoinHintBlock:
    """The join hints of the query block being bound."""

    hints: list[JoinHint]
    script: str
    used: set[str] = field(default_factory=set)

    def for_join(self, left: Scope, right: Scope, kind: str, equi: bool
                 ) -> tuple[str, int] | None:
        """(strategy, side) of the first hint that names an input of this join and can run
        it; None when none does."""
        names = (input_name(left), input_name(right))
        chosen: tuple[str, int] | None = None
        for hint in self.hints:
            for table, _ in hint.tables:
                if table not in names:
                    continue
                self.used.add(table)
                side = names.index(table)
                if chosen is None and _runs(hint.strategy, side, kind, equi):
                    chosen = (hint.strategy, side)
        return chosen

    def check(self) -> None:
        """Every name the hints give is an input of one of the block's joins."""
        for hint in self.hints:
            for table, off in hint.tables:
                if table not in self.used:
                    raise BindError("The options of following hints cannot match the name of "
                                    f"input tables or views: `{table}` in `{hint.strategy}`",
                                    span=Span.from_offset(self.script, off, off + len(table)),
                                    sql=self.script)


def _runs(strategy: str, side: int, kind: str, equi: bool) -> bool:
    """Whether ``strategy`` with ``side`` named can run a ``kind`` join."""
    if strategy == "NEST_LOOP":
        return True
    if not equi:
        return False
    if strategy == "BROADCAST":
        return kind == "inner" or (kind in ("left", "semi", "anti") and side == 1)
    return True
