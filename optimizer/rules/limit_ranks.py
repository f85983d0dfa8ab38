"""limit_ranks: a filter that keeps the first N row numbers turns a ranking into a Top-N."""

from __future__ import annotations

from dataclasses import replace

from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import Call, ColumnRef, Expr, Literal, conjuncts
from sqlengine.plan.nodes import Filter, LogicalPlan, Rank
from sqlengine.plan.tree import Transformed, filtered


class LimitRanks(OptimizerRule):
    """``Filter(rn <= N, Rank)`` becomes ``Rank(limit=N)`` (also ``rn < N`` and ``rn = 1``),
    as Flink recognises Top-N and deduplication.

    Example:
        >>> from tests.plans import plan_of, show
        >>> from sqlengine.optimizer import optimize
        >>> plan = plan_of("SELECT a FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b "
        ...                "ORDER BY c DESC) AS rn FROM t) WHERE rn <= 3")
        >>> print(show(optimize(plan)))  # doctest: +ELLIPSIS
        Project: a
          Rank: ROW_NUMBER() OVER (PARTITION BY b ORDER BY c DESC NULLS LAST) AS $rank, limit=3 ...
            Scan: t, projection=[a, b, c]
    """

    name = "limit_ranks"
    apply_order = ApplyOrder.BOTTOM_UP

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        match node:
            case Filter(input=Rank() as rank):
                width = len(rank.input.schema)
                limits: list[int] = []
                rest: list[Expr] = []
                for c in conjuncts(node.predicate):
                    n = _bound(c, width)
                    if n is not None:
                        limits.append(n)
                    else:
                        rest.append(c)
                if not limits:
                    return Transformed.no(node)
                limit = min(limits + ([rank.limit] if rank.limit is not None else []))
                return Transformed.yes(filtered(replace(rank, limit=max(limit, 0)), rest))
            case _:
                return Transformed.no(node)


def _bound(c: Expr, rank_index: int) -> int | None:
    """N when ``c`` keeps exactly the row numbers 1..N."""
    if not isinstance(c, Call) or c.name not in ("le", "lt", "eq", "ge", "gt"):
        return None
    a, b = c.args
    name = c.name
    if isinstance(a, Literal) and isinstance(b, ColumnRef):
        a, b = b, a
        name = {"le": "ge", "lt": "gt", "ge": "le", "gt": "lt", "eq": "eq"}[name]
    if not (isinstance(a, ColumnRef) and a.index == rank_index and isinstance(b, Literal)
            and isinstance(b.value, int)):
        return None
    if name == "le":
        return b.value
    if name == "lt":
        return b.value - 1
    if name == "eq" and b.value == 1:
        return 1
    return None
