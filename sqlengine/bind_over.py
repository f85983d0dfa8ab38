"""Bind window functions written with OVER (...): aggregates over a rowtime-ordered frame
(OverAggregate) and ROW_NUMBER() for Top-N and deduplication (Rank)."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from sqlengine.bind_common import ClauseBinder, Relation, sort_key
from sqlengine.bind_expr import Scope, ScopeColumn
from sqlengine.bind_windows import interval_ms
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.plan.nodes import OverAggregate, Rank


def _window_spec(x: exp.Window) -> tuple[object, ...]:
    return (tuple(x.args.get("partition_by") or []), x.args.get("order"), x.args.get("spec"))


class OverBinder(ClauseBinder):
    """The OVER (...) window functions of one SELECT list; afterwards the select items read
    their results as columns (through the expression binder's intercept)."""

    def over(self, rel: Relation, windows: list[exp.Window]) -> Relation:
        """Aggregates OVER a rowtime-ordered frame, as an OverAggregate node."""
        w = windows[0]
        if any(_window_spec(x) != _window_spec(w) for x in windows[1:]):
            raise self.error(NotSupportedError, "OVER aggregates in one SELECT must share one "
                             "window definition", windows[1])
        order = w.args.get("order")
        if order is None or len(order.expressions) != 1 or order.expressions[0].args.get("desc"):
            raise self.error(BindError, "OVER aggregates need ORDER BY a time attribute, "
                             "ascending", w)
        time_col = self.exprs.bind(order.expressions[0].this, rel.scope)
        if not isinstance(time_col, ColumnRef) or not rel.scope.columns[time_col.index].rowtime:
            raise self.error(BindError, "OVER aggregates must be ordered by a rowtime "
                             "attribute (declare a WATERMARK FOR it)", order.expressions[0])
        spec = w.args.get("spec")
        frame, preceding = "range", None
        if spec is not None:
            frame = str(spec.args.get("kind") or "RANGE").lower()
            end = str(spec.args.get("end") or "CURRENT ROW").upper()
            if end != "CURRENT ROW" or str(spec.args.get("start_side") or "PRECEDING").upper() \
                    != "PRECEDING":
                raise self.error(NotSupportedError, "OVER frames must end at CURRENT ROW and "
                                 "start in the past", w)
            start = spec.args.get("start")
            if isinstance(start, exp.Interval):
                if frame != "range":
                    raise self.error(BindError, "an INTERVAL bound needs a RANGE frame", start)
                preceding = interval_ms(start, self.exprs)
            elif isinstance(start, exp.Literal) and not start.is_string:
                if frame != "rows":
                    raise self.error(BindError, "a row-count bound needs a ROWS frame", start)
                preceding = int(str(start.this))
            elif str(start).upper() != "UNBOUNDED":
                raise self.error(NotSupportedError, f"unsupported frame start {start}", w)
        partition = tuple(self.exprs.bind(p, rel.scope) for p in w.args.get("partition_by")
                          or [])
        aggs = tuple(self.binder.aggregates.agg_call(x.this, rel.scope) for x in windows)
        for a, x in zip(aggs, windows):
            if a.distinct:
                raise self.error(NotSupportedError, "DISTINCT in OVER aggregates is not "
                                 "supported yet", x)
        names = tuple(f"$over{i}" for i in range(len(aggs)))
        plan = OverAggregate(rel.plan, partition, time_col.index, frame, preceding, aggs,
                             names)
        width = len(rel.scope.columns)
        scope = Scope((*rel.scope.columns, *(ScopeColumn(None, n, a.type)
                                            for n, a in zip(names, aggs))))
        previous = self.exprs.intercept

        def intercept(n: exp.Expression) -> Expr | None:
            for i, x in enumerate(windows):
                if n is x or n == x:
                    return ColumnRef(width + i, names[i], aggs[i].type)
            return previous(n) if previous is not None else None

        self.exprs.intercept = intercept
        return Relation(plan, scope)

    def rank(self, rel: Relation, windows: list[exp.Window]) -> Relation:
        """ROW_NUMBER() OVER (...) as a Rank node; the select item then reads its column."""
        w = windows[0]
        if any(other != w for other in windows[1:]):
            raise self.error(NotSupportedError, "only one window function per SELECT is "
                             "supported yet", windows[1])
        if not isinstance(w.this, exp.RowNumber):
            raise self.error(NotSupportedError, f"{w.this.sql()} OVER (...) is not supported "
                             "yet (ROW_NUMBER is)", w)
        if w.args.get("spec") is not None:
            raise self.error(NotSupportedError, "window frames are not supported yet", w)
        order = w.args.get("order")
        if order is None:
            raise self.error(BindError, "ROW_NUMBER() needs an ORDER BY in its OVER clause", w)
        partition = tuple(self.exprs.bind(p, rel.scope) for p in w.args.get("partition_by")
                          or [])
        keys = tuple(sort_key(o, self.exprs.bind(o.this, rel.scope))
                     for o in order.expressions)
        plan = Rank(rel.plan, partition, keys, "$rank")
        idx = len(rel.scope.columns)
        scope = Scope((*rel.scope.columns, ScopeColumn(None, "$rank", pa.int64())))
        previous = self.exprs.intercept

        def intercept(n: exp.Expression) -> Expr | None:
            if n == w:
                return ColumnRef(idx, "$rank", pa.int64())
            return previous(n) if previous is not None else None

        self.exprs.intercept = intercept
        return Relation(plan, scope)
