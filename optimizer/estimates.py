"""Estimates per plan node (Flink's optimizer: "ids and estimates"): rows, row width in bytes,
and per column the number of distinct values and the min / max, from source statistics
(registered Arrow tables, parquet metadata, file sizes, datagen / Nexmark settings) carried up
through selectivity rules for filters, joins and aggregates (Calcite's defaults where nothing
better is known)."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace
from typing import SupportsFloat

from sqlengine import connectors
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import Call, ColumnRef, Expr, Literal
from sqlengine.statistics import UNKNOWN_ROWS, ColumnStats, Estimate, schema_width, type_width

__all__ = ["UNKNOWN_ROWS", "ColumnStats", "Estimate", "Estimator", "type_width"]


class Estimator:
    """``estimate(plan)`` for any logical node (memoised per node)."""

    def __init__(self, tables: dict[str, object] | None = None) -> None:
        self.tables = tables or {}
        # id -> (the node, its estimate): holding the node keeps its id from being reused by
        # another node while the memo lives (a rule's rewritten trees drop old nodes)
        self._memo: dict[int, tuple[N.LogicalPlan, Estimate]] = {}

    def estimate(self, plan: N.LogicalPlan) -> Estimate:
        key = id(plan)
        hit = self._memo.get(key)
        if hit is None or hit[0] is not plan:
            hit = (plan, self._estimate(plan))
            self._memo[key] = hit
        return hit[1]

    # -- nodes ------------------------------------------------------------------------------
    def _estimate(self, plan: N.LogicalPlan) -> Estimate:
        match plan:
            case N.Scan():
                base = self._source(plan)
                cols = base.columns
                est = base
                for f in plan.filters:
                    est = _scale(est, self.selectivity(f, est))
                if plan.projection is not None:
                    cols = tuple(est.columns[i] for i in plan.projection)
                    width = sum(type_width(plan.table_schema.fields[i].type)
                                if base.width == 0 else base.width * _share(plan, i)
                                for i in plan.projection)
                    est = Estimate(est.rows, max(width, 1.0), cols)
                return est
            case N.Values():
                return Estimate(float(len(plan.rows)), schema_width(plan.schema),
                                tuple(ColumnStats() for _ in plan.schema.fields))
            case N.Filter():
                inner = self.estimate(plan.input)
                return _scale(inner, self.selectivity(plan.predicate, inner))
            case N.Project():
                inner = self.estimate(plan.input)
                cols = tuple(inner.columns[e.index] if isinstance(e, ColumnRef)
                             else ColumnStats() for e in plan.exprs)
                width = sum(inner.width / max(len(inner.columns), 1)
                            if isinstance(e, ColumnRef) else type_width(e.dtype)
                            for e in plan.exprs)
                return Estimate(inner.rows, max(width, 1.0), cols)
            case N.Aggregate():
                inner = self.estimate(plan.input)
                groups = 1.0
                for k in plan.keys:
                    ndv = inner.columns[k.index].ndv if isinstance(k, ColumnRef) else None
                    groups *= ndv if ndv else max(inner.rows * 0.1, 1.0)
                rows = min(groups, inner.rows) if plan.keys else 1.0
                cols = tuple(inner.columns[k.index] if isinstance(k, ColumnRef)
                             else ColumnStats() for k in plan.keys)
                cols += tuple(ColumnStats() for _ in plan.schema.fields[len(plan.keys):])
                return Estimate(max(rows, 1.0), schema_width(plan.schema), cols)
            case N.Join():
                left, right = self.estimate(plan.left), self.estimate(plan.right)
                rows = left.rows * right.rows
                if plan.left_keys:
                    lk, rk = plan.left_keys[0], plan.right_keys[0]
                    ndvs = [s.columns[k.index].ndv for s, k in ((left, lk), (right, rk))
                            if isinstance(k, ColumnRef)]
                    known = [n for n in ndvs if n]
                    rows = rows / max(known) if known else max(left.rows, right.rows)
                if plan.condition is not None:
                    rows *= 0.5
                if plan.kind == "left":
                    rows = max(rows, left.rows)
                return Estimate(max(rows, 1.0), left.width + right.width,
                                left.columns + right.columns)
            case N.Union():
                parts = [self.estimate(i) for i in plan.inputs]
                rows = sum(p.rows for p in parts)
                width = sum(p.bytes for p in parts) / max(rows, 1.0)
                return Estimate(rows, width, tuple(ColumnStats() for _ in plan.schema.fields))
            case N.Limit():
                inner = self.estimate(plan.input)
                fetch = plan.fetch if plan.fetch is not None else inner.rows
                return replace(inner, rows=min(inner.rows, float(fetch)))
            case N.WindowTVF():
                inner = self.estimate(plan.input)
                copies = 1.0
                if plan.kind in ("hop", "cumulate") and plan.slide:
                    copies = plan.size / plan.slide
                return Estimate(inner.rows * copies, inner.width + 24,
                                inner.columns + (ColumnStats(),) * 3)
            case _:
                kids = plan.children()
                if not kids:
                    return Estimate(UNKNOWN_ROWS, schema_width(plan.schema),
                                    tuple(ColumnStats() for _ in plan.schema.fields))
                inner = self.estimate(kids[0])
                n = len(plan.schema.fields)
                cols = (inner.columns + tuple(ColumnStats() for _ in range(n)))[:n]
                return Estimate(inner.rows, schema_width(plan.schema), cols)

    # -- selectivity ------------------------------------------------------------------------
    def selectivity(self, e: Expr, est: Estimate) -> float:
        """Calcite's guesses, refined by distinct counts and min/max where known."""
        if isinstance(e, Call):
            name = e.name
            if name == "and":
                return math.prod(self.selectivity(a, est) for a in e.args)
            if name == "or":
                s = 0.0
                for a in e.args:
                    x = self.selectivity(a, est)
                    s = s + x - s * x
                return s
            if name == "not":
                return 1.0 - self.selectivity(e.args[0], est)
            col = e.args[0] if e.args and isinstance(e.args[0], ColumnRef) else None
            stats = est.columns[col.index] if col is not None and \
                col.index < len(est.columns) else ColumnStats()
            lit = e.args[1] if len(e.args) > 1 and isinstance(e.args[1], Literal) else None
            if name == "eq":
                return 1.0 / stats.ndv if stats.ndv else 0.15
            if name == "ne":
                return 1.0 - (1.0 / stats.ndv if stats.ndv else 0.15)
            if name in ("lt", "le", "gt", "ge"):
                return _range_fraction(name, stats, lit)
            if name == "is_null":
                return stats.null_fraction or 0.1
            if name == "is_not_null":
                return 1.0 - stats.null_fraction if stats.null_fraction else 0.9
            if name in ("like", "similar"):
                return 0.25
        return 0.25

    # -- sources ----------------------------------------------------------------------------
    def _source(self, scan: N.Scan) -> Estimate:
        """The connector's statistics for the table (unknown when it has none)."""
        src = scan.source
        schema = scan.table_schema
        data = self.tables.get(src.table.lower())
        connector = connectors.find(src.connector)
        # (the columns the query reads: only theirs are worth sampling for distinct values)
        read = None
        if scan.projection is not None:
            used = set(scan.projection).union(*(f.columns() for f in scan.filters))
            read = frozenset(schema.fields[i].name for i in used)
        found = connector.statistics(src, schema, data, read) if connector is not None \
            else None
        if found is not None:
            return found
        unknown = tuple(ColumnStats() for _ in schema.fields)
        return Estimate(UNKNOWN_ROWS, schema_width(schema), unknown)


def _share(scan: N.Scan, i: int) -> float:
    widths = [type_width(f.type) for f in scan.table_schema.fields]
    return widths[i] / sum(widths)


def _scale(est: Estimate, fraction: float) -> Estimate:
    fraction = min(max(fraction, 0.0), 1.0)
    rows = max(est.rows * fraction, 1.0)
    cols = tuple(replace(c, ndv=min(c.ndv, rows)) if c.ndv else c for c in est.columns)
    return Estimate(rows, est.width, cols)


def _range_fraction(op: str, stats: ColumnStats, lit: Literal | None) -> float:
    if lit is None:
        return 0.5
    try:
        lo, hi, v = _as_float(stats.min), _as_float(stats.max), _as_float(lit.value)
    except (TypeError, ValueError):
        return 0.5
    if hi <= lo:
        return 0.5
    below = min(max((v - lo) / (hi - lo), 0.0), 1.0)
    return below if op in ("lt", "le") else 1.0 - below


def _as_float(x: object) -> float:
    """``float(x)`` (a date as its day number, a timestamp as its seconds), raising TypeError
    for what has no number (None, strings, ...)."""
    if isinstance(x, dt.datetime):
        return x.timestamp() if x.tzinfo else (x - dt.datetime(1970, 1, 1)).total_seconds()
    if isinstance(x, dt.date):
        return float(x.toordinal() - 719163)
    if isinstance(x, SupportsFloat | str | bytes):
        return float(x)
    raise TypeError(type(x).__name__)
