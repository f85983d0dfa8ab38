"""Bind window functions written with OVER (...): aggregates over a rowtime-ordered frame
(OverAggregate, streaming and batch), ROW_NUMBER() for Top-N and deduplication (Rank), and
every other window function and frame over bounded input (WindowFunctions)."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import ClauseBinder, Relation, sort_key
from sqlengine.bind_expr import Scope, ScopeColumn, coerce
from sqlengine.bind_ordered import ordered_aggregate, ordered_parts
from sqlengine.bind_reduce import (
    argument_error,
    is_bivariate,
    is_reducible,
    reduce_aggregate,
)
from sqlengine.bind_windows import interval_ms
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import AggCall, ColumnRef, Expr, Literal
from sqlengine.plan.nodes import (
    OverAggregate,
    Rank,
    SortKey,
    WindowCall,
    WindowFrame,
    WindowFunctions,
)

_RANKING = {exp.RowNumber: "row_number", exp.Rank: "rank", exp.DenseRank: "dense_rank",
            exp.PercentRank: "percent_rank", exp.CumeDist: "cume_dist", exp.Ntile: "ntile"}
_OFFSET = {exp.Lag: "lag", exp.Lead: "lead", exp.FirstValue: "first_value",
           exp.LastValue: "last_value"}


def _window_spec(x: exp.Window) -> tuple[object, ...]:
    return (tuple(x.args.get("partition_by") or []), x.args.get("order"), x.args.get("spec"))


def resolve_named_windows(binder: ClauseBinder, node: exp.Select) -> exp.Select:
    """``OVER w`` / ``OVER (w ROWS ...)`` with ``WINDOW w AS (PARTITION BY ... ORDER BY ...)``:
    the definition written into each use (a use's own frame wins)."""
    defs = node.args.get("windows")
    if not defs:
        return node
    named: dict[str, exp.Window] = {}
    for d in defs:
        name = d.this.name.lower() if isinstance(d.this, exp.Identifier) else ""
        if name in named:
            raise binder.error(BindError, f"window {name!r} is defined twice", d)
        named[name] = d
    node = node.copy()
    node.set("windows", None)

    def fill(n: exp.Expression) -> exp.Expression:
        if not isinstance(n, exp.Window) or n.args.get("alias") is None:
            return n
        name = n.args["alias"].name.lower()
        d = named.get(name)
        if d is None:
            raise binder.error(BindError, f"unknown window {name!r} (WINDOW defines "
                               f"{', '.join(sorted(named))})", n)
        if n.args.get("partition_by") or n.args.get("order"):
            raise binder.error(BindError, f"OVER ({name} ...) may add only a frame to the "
                               "named window", n)
        out = n.copy()
        out.set("alias", None)
        out.set("partition_by", [p.copy() for p in d.args.get("partition_by") or []] or None)
        out.set("order", d.args["order"].copy() if d.args.get("order") else None)
        if out.args.get("spec") is None and d.args.get("spec") is not None:
            out.set("spec", d.args["spec"].copy())
        return out

    return node.transform(fill, copy=False)


# Aggregates no window operator computes over a frame (refused by name when bound).
_NOT_OVER_FRAMES = frozenset({"percentile", "json_arrayagg", "json_objectagg"})
# Aggregates over a frame that take DISTINCT (each value once per frame: distinct_frames.py).
_DISTINCT_OVER = frozenset({"count", "sum", "avg", "min", "max"})


def _called(func: str, fn: exp.Expression) -> str:
    """The name of aggregate ``func`` as called (a Python one's as written)."""
    if isinstance(fn, exp.Filter):
        fn = fn.this
    return (fn.name if func.startswith("py:") else func).upper()


def _bounds_in_order(binder: ClauseBinder, spec: exp.WindowSpec, w: exp.Window) -> None:
    """The SQL standard's (and Calcite's, DuckDB's) rule on a frame's two bounds: it cannot
    start at UNBOUNDED FOLLOWING or end at UNBOUNDED PRECEDING, nor end before a CURRENT ROW
    or FOLLOWING start by a PRECEDING (or, after FOLLOWING, a CURRENT ROW) end."""
    def rank(node: object, side: object) -> tuple[str, int]:
        text = str(node.sql() if isinstance(node, exp.Expression) else node or "").upper()
        if text == "CURRENT ROW":
            return "CURRENT ROW", 1
        where = str(side or "PRECEDING").upper()
        name = f"UNBOUNDED {where}" if text == "UNBOUNDED" else where
        return name, 0 if where == "PRECEDING" else 2
    start, s = rank(spec.args.get("start"), spec.args.get("start_side"))
    end, e = (("CURRENT ROW", 1) if spec.args.get("end") is None else
              rank(spec.args.get("end"), spec.args.get("end_side")))
    if start == "UNBOUNDED FOLLOWING" or end == "UNBOUNDED PRECEDING" or e < s:
        raise binder.error(BindError, f"a window frame from {start} cannot end at {end}", w)


class OverBinder(ClauseBinder):
    """The OVER (...) window functions of one SELECT list; afterwards the select items read
    their results as columns (through the expression binder's intercept)."""


    def _partition(self, w: exp.Window, rel: Relation) -> tuple[Expr, ...]:
        """An OVER window's PARTITION BY keys (a BITMAP or VARIANT refused by name)."""
        keys = []
        for p in w.args.get("partition_by") or []:
            key = self.exprs.bind(p, rel.scope)
            if T.is_opaque(key.dtype):
                raise self.error(NotSupportedError, f"PARTITION BY a {T.type_name(key.dtype)} "
                                 "is not supported", p)
            keys.append(key)
        return tuple(keys)

    def _no_opaque_argument(self, w: exp.Window, call: WindowCall) -> None:
        """A window function (LAG, FIRST_VALUE, ...) of a BITMAP or VARIANT is refused by name
        (the bitmap aggregates and COLLECT over a window are not: they take the Python
        aggregates' path)."""
        if call.agg is not None and call.agg.func.startswith("py:"):
            return
        for arg in call.args:
            if T.is_opaque(arg.dtype):
                raise self.error(NotSupportedError, f"{call.func.upper()} of a "
                                 f"{T.type_name(arg.dtype)} over a window (OVER) is not "
                                 "supported", w)

    def windows(self, rel: Relation, windows: list[exp.Window]) -> Relation:
        """The forms streaming mode runs (OverAggregate, ROW_NUMBER's Rank) where they fit,
        else WindowFunctions (bounded input only; the physical pass says so)."""
        for w in windows:
            if w.args.get("alias") is not None:
                raise self.error(BindError, f"unknown window {w.args['alias'].name!r} (no "
                                 "WINDOW clause defines it)", w)
        if all(isinstance(w.this, exp.AggFunc) for w in windows):
            saved = self.exprs.intercept
            try:
                return self.over(rel, windows)
            except (BindError, NotSupportedError):
                self.exprs.intercept = saved
        elif all(w == windows[0] for w in windows) and isinstance(windows[0].this,
                                                                   exp.RowNumber) \
                and windows[0].args.get("spec") is None and windows[0].args.get("order"):
            return self.rank(rel, windows)
        return self.functions(rel, windows)

    def functions(self, rel: Relation, windows: list[exp.Window]) -> Relation:
        """One WindowFunctions node per distinct PARTITION BY / ORDER BY."""
        groups: dict[tuple[object, ...], list[exp.Window]] = {}
        for w in windows:
            key = (tuple(w.args.get("partition_by") or []), w.args.get("order"))
            groups.setdefault(key, [])
            if not any(x is w for x in groups[key]):
                groups[key].append(w)
        plan, scope = rel.plan, rel.scope
        found: list[tuple[exp.Window, Expr]] = []
        for ws in groups.values():
            first = ws[0]
            partition = self._partition(first, rel)
            order_node = first.args.get("order")
            order = tuple(sort_key(self, o, self.exprs.bind(o.this, rel.scope))
                          for o in (order_node.expressions if order_node else []))
            base = len(scope.columns)
            calls: list[WindowCall] = []

            def add(call: WindowCall, base: int = base,
                    calls: list[WindowCall] = calls) -> ColumnRef:
                calls.append(call)
                return ColumnRef(base + len(calls) - 1, f"$w{base + len(calls) - 1}",
                                 call.type)

            for w in ws:
                base = w.this.this if isinstance(w.this, exp.Filter) else w.this
                if is_reducible(base):  # (a variance: from SUM(x * x), SUM(x), COUNT(x))
                    frame = self._frame(w.args.get("spec"), order, w)
                    found.append((w, self._variance(
                        w, rel, lambda a, f=frame: add(WindowCall(a.func, a.args, a.type, f,
                                                                  a)))))
                else:
                    call = self._call(w, rel, order)
                    self._no_opaque_argument(w, call)
                    found.append((w, add(call)))
            names = tuple(f"$w{base + i}" for i in range(len(calls)))
            plan = WindowFunctions(plan, partition, order, tuple(calls), names)
            scope = Scope((*scope.columns, *(ScopeColumn(None, n, c.type)
                                            for n, c in zip(names, calls))))
        previous = self.exprs.intercept

        def intercept(n: exp.Expression) -> Expr | None:
            for w, ref in found:
                if n is w or n == w:
                    return ref
            return previous(n) if previous is not None else None

        self.exprs.intercept = intercept
        return Relation(plan, scope)

    def _variance(self, w: exp.Window, rel: Relation, add: Callable[[AggCall], Expr]) -> Expr:
        """VAR_* / STDDEV_* OVER a window, from the window aggregates ``add`` makes (as a
        GROUP BY's, see bind_reduce; Flink types it as AVG, an INT column's is an INT)."""
        fn, filt = self.binder.aggregates.split_filter(w.this, rel.scope)
        ordered = ordered_parts(fn)
        if ordered is not None:
            if ordered.distinct:
                raise self.error(NotSupportedError, "DISTINCT in a window aggregate is not "
                                 "supported", fn)
            return ordered_aggregate(self, fn, ordered,
                                     lambda n: self.exprs.bind(n, rel.scope), filt, add)
        if isinstance(fn.this, exp.Distinct):
            raise self.error(NotSupportedError, "DISTINCT in a window aggregate is not "
                             "supported", fn)
        nodes = [fn.this, fn.expression] if is_bivariate(fn) else [fn.this]
        args = [self.exprs.bind(n, rel.scope) for n in nodes]
        wrong = argument_error(fn, args)
        if wrong is not None:
            raise self.error(BindError, wrong, fn)
        return reduce_aggregate(fn, args, False, filt, add)

    def _call(self, w: exp.Window, rel: Relation, order: tuple[SortKey, ...]) -> WindowCall:
        fn = w.this
        ignore_nulls = False
        if isinstance(fn, exp.IgnoreNulls | exp.RespectNulls) and isinstance(
                fn.this, exp.Lag | exp.Lead):  # (RESPECT NULLS is LAG / LEAD's own way)
            ignore_nulls = isinstance(fn, exp.IgnoreNulls)
            fn = fn.this
        elif isinstance(fn, exp.Lag | exp.Lead) and isinstance(fn.this, exp.IgnoreNulls |
                                                                   exp.RespectNulls):
            ignore_nulls = isinstance(fn.this, exp.IgnoreNulls)
            fn = fn.copy()
            fn.set("this", fn.this.this)
        if isinstance(fn, exp.IgnoreNulls | exp.RespectNulls):
            raise self.error(NotSupportedError, f"{fn.key.upper().replace('NULLS', ' NULLS')} "
                             "in a window function is not supported (but in LAG and LEAD, and "
                             "IGNORE NULLS in FIRST_VALUE and LAST_VALUE, which always skip "
                             "NULLs, as Flink's)", w)
        spec = w.args.get("spec")
        kind = _RANKING.get(type(fn))
        if kind is not None:
            if spec is not None:
                raise self.error(BindError, f"{kind.upper()} takes no window frame", w)
            if kind != "ntile" and any(v not in (None, [], False) for v in fn.args.values()):
                raise self.error(BindError, f"{kind.upper()}() takes no arguments", fn)
            if not order and kind != "row_number":
                raise self.error(BindError, f"{kind.upper()}() needs an ORDER BY in its OVER "
                                 "clause", w)
            if kind == "ntile":
                n = self.exprs.bind(fn.this, rel.scope)
                if not (isinstance(n, Literal) and isinstance(n.value, int) and n.value > 0):
                    raise self.error(BindError, "NTILE needs a positive integer literal", fn)
                return WindowCall(kind, (n,), T.BIGINT)
            out = T.DOUBLE if kind in ("percent_rank", "cume_dist") else T.BIGINT
            return WindowCall(kind, (), out)
        kind = _OFFSET.get(type(fn))
        if kind in ("lag", "lead"):
            if spec is not None:
                raise self.error(BindError, f"{kind.upper()} takes no window frame", w)
            value = self.exprs.bind(fn.this, rel.scope)
            offset_node, default_node = fn.args.get("offset"), fn.args.get("default")
            offset = self.exprs.bind(offset_node, rel.scope) if offset_node is not None \
                else Literal(1, T.INT)
            if not (isinstance(offset, Literal) and isinstance(offset.value, int)):
                raise self.error(BindError, f"the offset of {kind.upper()} must be an integer "
                                 "literal", offset_node or fn)
            default = self.exprs.bind(default_node, rel.scope) if default_node is not None \
                else Literal(None, value.dtype)
            try:
                default = coerce(default, value.dtype)
            except BindError as e:
                raise self.error(BindError, e.message, default_node or fn) from None
            args = (value, offset, default) + ((Literal(True, T.BOOLEAN),) if ignore_nulls
                                               else ())
            return WindowCall(kind, args, value.dtype)
        frame = self._frame(spec, order, w)
        if kind is not None:  # first_value / last_value
            value = self.exprs.bind(fn.this, rel.scope)
            return WindowCall(kind, (value,), value.dtype, frame)
        if isinstance(fn, exp.AggFunc | exp.Filter):
            agg = self.binder.aggregates.agg_call(fn, rel.scope)
            if agg.distinct and agg.func not in _DISTINCT_OVER:
                raise self.error(NotSupportedError, "DISTINCT in a window aggregate: "
                                 f"{_called(agg.func, fn)}(DISTINCT ...) over a window (OVER) "
                                 "is not supported", fn)
            if agg.func in _NOT_OVER_FRAMES:
                # (they failed while running; Flink refuses the JSON ones too)
                raise self.error(NotSupportedError, f"{agg.func.upper()} over a window (OVER) "
                                 "is not supported: aggregate with GROUP BY and join back",
                                 fn)
            return WindowCall(agg.func, agg.args, agg.type, frame, agg)
        raise self.error(NotSupportedError, f"{fn.sql()} is not a window function", w)

    def _frame(self, spec: exp.WindowSpec | None, order: tuple[SortKey, ...],
               w: exp.Window) -> WindowFrame:
        """The frame, SQL's default when none is written: RANGE BETWEEN UNBOUNDED PRECEDING
        AND CURRENT ROW with ORDER BY, the whole partition without."""
        if spec is None:
            return WindowFrame("range", None, 0) if order else WindowFrame("rows", None, None)
        kind = str(spec.args.get("kind") or "RANGE").lower()
        _bounds_in_order(self, spec, w)
        start = self._bound(spec.args.get("start"), spec.args.get("start_side"), kind, order, w)
        end_node = spec.args.get("end")
        end = 0 if end_node is None else self._bound(end_node, spec.args.get("end_side"),
                                                     kind, order, w)
        if spec.args.get("exclude"):
            raise self.error(NotSupportedError, "EXCLUDE in a window frame is not supported",
                             w)
        return WindowFrame(kind, start, end)

    def _bound(self, node: object, side: object, kind: str, order: tuple[SortKey, ...],
               w: exp.Window) -> int | float | None:
        text = str(node.sql() if isinstance(node, exp.Expression) else node or "").upper()
        if text == "UNBOUNDED":
            return None
        if text == "CURRENT ROW":
            return 0
        sign = -1 if str(side or "PRECEDING").upper() == "PRECEDING" else 1
        if kind == "range" and (len(order) != 1 or not (T.is_numeric(order[0].expr.dtype)
                                                         or T.is_temporal(order[0].expr.dtype))):
            raise self.error(BindError, "a RANGE frame with an offset needs exactly one "
                             "numeric or time ORDER BY key", w)
        if isinstance(node, exp.Interval):
            if kind != "range" or not T.is_temporal(order[0].expr.dtype):
                raise self.error(BindError, "an INTERVAL frame bound needs a RANGE frame "
                                 "ordered by a time", node)
            return sign * interval_ms(node, self.exprs)
        if isinstance(node, exp.Literal) and not node.is_string:
            value = float(node.this) if "." in str(node.this) else int(str(node.this))
            counted = kind in ("rows", "groups")  # (rows, or peer groups)
            if value < 0 or (counted and not isinstance(value, int)):
                raise self.error(BindError, "a frame offset must be a non-negative "
                                 "integer" if counted else "a frame offset must not "
                                 "be negative", node)
            return sign * value  # (in the ORDER BY's direction: runtime's business)
        raise self.error(NotSupportedError, f"unsupported window frame bound {text}", w)

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
            if frame == "groups":
                frame = "range"  # (from UNBOUNDED PRECEDING to the row's peers, as RANGE)
        partition = self._partition(w, rel)
        width = len(rel.scope.columns)
        calls: list[AggCall] = []

        def add(call: AggCall) -> ColumnRef:
            calls.append(call)
            return ColumnRef(width + len(calls) - 1, f"$over{len(calls) - 1}", call.type)

        results: list[Expr] = []
        for x in windows:
            if is_reducible(x.this):  # (a variance: from SUM(x * x), SUM(x), COUNT(x))
                results.append(self._variance(x, rel, add))
                continue
            a = self.binder.aggregates.agg_call(x.this, rel.scope)
            opaque = [e.dtype for e in a.args if T.is_opaque(e.dtype)]
            if opaque and not a.func.startswith("py:"):
                raise self.error(NotSupportedError, f"{_called(a.func, x.this)} of a "
                                 f"{T.type_name(opaque[0])} over a window (OVER) is not "
                                 "supported", x)
            if a.distinct and a.func not in _DISTINCT_OVER:
                raise self.error(NotSupportedError, "DISTINCT in a window aggregate: "
                                 f"{_called(a.func, x.this)}(DISTINCT ...) over a window (OVER) is "
                                 "not supported", x)
            if a.func in _NOT_OVER_FRAMES:
                # (refused by name below, as over bounded input)
                raise self.error(NotSupportedError, f"{a.func.upper()} OVER", x)
            results.append(add(a))
        aggs = tuple(calls)
        names = tuple(f"$over{i}" for i in range(len(aggs)))
        plan = OverAggregate(rel.plan, partition, time_col.index, frame, preceding, aggs,
                             names)
        scope = Scope((*rel.scope.columns, *(ScopeColumn(None, n, a.type)
                                            for n, a in zip(names, aggs))))
        previous = self.exprs.intercept

        def intercept(n: exp.Expression) -> Expr | None:
            for x, result in zip(windows, results):
                if n is x or n == x:
                    return result
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
        if w.this.this is not None:
            raise self.error(BindError, "ROW_NUMBER() takes no arguments", w.this)
        order = w.args.get("order")
        if order is None:
            raise self.error(BindError, "ROW_NUMBER() needs an ORDER BY in its OVER clause", w)
        partition = self._partition(w, rel)
        keys = tuple(sort_key(self, o, self.exprs.bind(o.this, rel.scope))
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
