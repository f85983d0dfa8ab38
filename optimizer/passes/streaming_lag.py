"""LAG in streaming mode, as Flink runs it: an OVER aggregate ordered by a rowtime.

Flink's streaming planner computes ``LAG(x [, n [, default]]) OVER (PARTITION BY ... ORDER BY
rowtime)`` (and the OVER aggregates beside it on the same window) in its OVER aggregate
operator, with the default frame RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW: rows at
or behind the watermark are dropped as late, and rows with equal times (peers) are added to
the accumulator together, so every peer reads the row n before the last of them
(LagAggFunction over RowTimeRangeUnboundedPrecedingFunction; checked with PyFlink 2.3). Over
bounded input the WindowFunctions operator would instead sort the whole input at its end,
keeping late rows and numbering peers one by one, as batch mode does.
"""

from __future__ import annotations

from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import AggCall, ColumnRef

_DEFAULT_FRAME = N.WindowFrame("range", None, 0)


def streaming_lag(plan: N.WindowFunctions) -> N.OverAggregate | None:
    """The OverAggregate to run ``plan`` as in streaming mode, or None when it is not LAG
    (with OVER aggregates on the default frame) ordered by a rowtime attribute ascending."""
    if len(plan.order) != 1 or not plan.order[0].ascending:
        return None
    key = plan.order[0].expr
    if not (isinstance(key, ColumnRef) and plan.input.schema.fields[key.index].rowtime):
        return None
    if not any(c.func == "lag" for c in plan.calls):
        return None
    if any(c.func in ("lag", "lead") and len(c.args) > 3 for c in plan.calls):
        return None  # (IGNORE NULLS: over a bounded input, at its end)
    aggs: list[AggCall] = []
    for c in plan.calls:
        if c.func == "lag":
            aggs.append(AggCall("lag", c.args, c.type))
        elif c.frame != _DEFAULT_FRAME:
            return None
        elif c.agg is not None and (not c.agg.distinct or c.agg.func in (
                "count", "sum", "avg", "min", "max")):
            aggs.append(c.agg)
        elif c.func in ("first_value", "last_value"):
            aggs.append(AggCall(c.func, c.args, c.type))
        else:
            return None
    return N.OverAggregate(plan.input, plan.partition, key.index, "range", None, tuple(aggs),
                           plan.names)
