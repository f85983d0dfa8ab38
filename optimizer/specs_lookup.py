"""The operator spec of a lookup join (``sqlengine.plan.lookup``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlengine.optimizer.specs import OperatorSpec
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import Expr


@dataclass(frozen=True, slots=True, kw_only=True)
class LookupJoinSpec(OperatorSpec):
    """Each input batch's distinct key values looked up in the table (through the cache the
    table's ``lookup.*`` options describe), joined with the batch; chained after its input."""

    type_name: ClassVar[str] = "lookup_join"

    join_kind: str
    source: N.SourceSpec
    table_schema: N.Schema
    left_keys: tuple[Expr, ...]
    key_columns: tuple[int, ...]
    condition: Expr | None
    left_width: int
    # (fixed delay ms, attempts): a LOOKUP hint's retry of the keys the table does not hold
    retry: tuple[int, int] | None = None

    def label(self) -> str:
        names = self.table_schema.names()
        on = ", ".join(f"{k.sql()} = {names[i]}" for k, i in zip(self.left_keys,
                                                              self.key_columns))
        cache = dict(self.source.options).get("lookup.cache", "NONE").upper()
        retry = "" if self.retry is None else \
            f", retry=lookup_miss(fixed_delay={self.retry[0]} ms, max={self.retry[1]})"
        return (f"LookupJoin({self.join_kind}, {self.source.table}, on=[{on}], "
                f"cache={cache}{retry})")
