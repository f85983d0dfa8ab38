"""MATCH_RECOGNIZE as the plan carries it: the pattern, the bound DEFINE and MEASURES
expressions and the navigation values they read (sqlengine/bind_match.py builds it,
runtime/operators/match_recognize.py runs it).

A DEFINE or MEASURES expression is bound over one row made of the input's columns followed by
one column per navigation value (``A.price`` as the last row mapped to A, ``FIRST(A.price, 1)``,
``SUM(B.price)``, ``MATCH_ROWTIME()``...), which the operator computes from the partial match.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from sqlengine.plan.expressions import Expr

UNBOUNDED = -1  # a quantifier's missing upper bound


@dataclass(frozen=True, slots=True)
class PatternVar:
    """One pattern variable with its quantifier: between ``low`` and ``high`` rows
    (``UNBOUNDED``: no upper bound); greedy unless reluctant (``?`` after the quantifier)."""

    name: str
    low: int
    high: int
    greedy: bool = True

    def text(self) -> str:
        q = {(1, 1): "", (0, UNBOUNDED): "*", (1, UNBOUNDED): "+", (0, 1): "?"}.get(
            (self.low, self.high))
        if q is None:
            hi = "" if self.high == UNBOUNDED else str(self.high)
            q = f"{{{self.low}}}" if self.low == self.high else f"{{{self.low}, {hi}}}"
        return self.name + q + ("" if self.greedy or not q else "?")


@dataclass(frozen=True, slots=True)
class Navigation:
    """A value read from the (partial) match: ``kind`` is ``last`` / ``first`` (the row
    ``offset`` from the end / start of the rows mapped to ``var``, None: to any variable) with
    ``expr`` evaluated on it, ``agg`` (``func`` over ``expr`` on those rows) or ``rowtime``
    (the time of the match's last row)."""

    kind: str
    var: str | None
    offset: int
    func: str | None
    expr: Expr | None
    type: pa.DataType

    def sql(self) -> str:
        inner = self.expr.sql() if self.expr is not None else "*"
        where = f"{self.var}." if self.var else ""
        if self.kind == "rowtime":
            return "MATCH_ROWTIME()"
        if self.kind == "agg":
            return f"{(self.func or '').upper()}({where}{inner})"
        return f"{self.kind.upper()}({where}{inner}, {self.offset})"


@dataclass(frozen=True, slots=True)
class Bound:
    """A DEFINE condition or a MEASURES expression: ``expr`` over the input's columns and then
    ``navigations``' values."""

    expr: Expr
    navigations: tuple[Navigation, ...]


@dataclass(frozen=True, slots=True)
class MatchSpec:
    partition: tuple[int, ...]  # input columns
    time_index: int  # the rowtime column ORDER BY names first
    pattern: tuple[PatternVar, ...]
    defines: tuple[tuple[str, Bound], ...]  # variables without a condition match any row
    measures: tuple[tuple[str, Bound], ...]
    skip: str  # past_last_row | next_row | first | last
    skip_var: str | None = None
    within: int | None = None  # ms
    # ORDER BY's keys after the time: (column, descending, nulls first) each, ordering the
    # rows of one time
    then_by: tuple[tuple[int, bool, bool], ...] = ()

    def pattern_text(self) -> str:
        return " ".join(v.text() for v in self.pattern)

    def skip_text(self) -> str:
        return {"past_last_row": "PAST LAST ROW", "next_row": "TO NEXT ROW",
                "first": f"TO FIRST {self.skip_var}",
                "last": f"TO LAST {self.skip_var}"}[self.skip]
