"""push_down_filters: move filter conjuncts as close to the scans as they can go."""

from __future__ import annotations

from dataclasses import replace

from sqlengine import types as T
from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import (
    Call,
    ColumnRef,
    Expr,
    conjunction,
    conjuncts,
    disjuncts,
    factored_conjuncts,
    is_volatile,
    remap_columns,
    substitute,
)
from sqlengine.plan.join_keys import split_condition
from sqlengine.plan.nodes import (
    Aggregate,
    Filter,
    Join,
    LogicalPlan,
    Project,
    Rank,
    Scan,
    Union,
    Unnest,
    WindowTVF,
)
from sqlengine.plan.tree import Transformed, filtered


class PushDownFilters(OptimizerRule):
    """Push each conjunct of a Filter below projections, aggregates (grouping keys only),
    UNNESTs (the row's own columns), unions and joins (the side it reads; never the
    null-padded side of a LEFT JOIN), and into the Scan, which applies it while reading.

    A conjunct calling a volatile function (RAND(), a non-deterministic Python function), or
    reading one through the projection below, stays where it is, as in Calcite: evaluated
    somewhere else it would draw other values than the rows it filters show (``WHERE r <
    0.5`` over ``RAND() AS r``), or draw them more than once (a scan may judge its filters on
    a partition's or a dictionary's values before the rows).

    Example:
        >>> from tests.plans import plan_of, show
        >>> plan = plan_of("SELECT a FROM (SELECT a, b FROM t) WHERE b = 'x'")
        >>> print(show(PushDownFilters().apply(plan, RuleContext()).data))
        Project: a
          Project: a, b
            Scan: t, filters=[(b = 'x')]
    """

    name = "push_down_filters"
    apply_order = ApplyOrder.TOP_DOWN

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        if isinstance(node, Join) and node.condition is not None:
            pushed = _push_join_condition(node)
            if pushed is not None:
                return Transformed.yes(pushed)
        if not isinstance(node, Filter):
            return Transformed.no(node)
        child = node.input
        parts = factored_conjuncts(node.predicate)
        if isinstance(child, Filter):
            return Transformed.yes(filtered(child.input, conjuncts(child.predicate) + parts))
        fixed = [p for p in parts if _volatile(p)]
        below = child.exprs if isinstance(child, Project) else \
            child.keys if isinstance(child, Aggregate) else None
        if below is not None:  # (what the conjunct would read once moved below)
            fixed += [p for p in parts if p not in fixed and p.columns()
                      and max(p.columns()) < len(below) and _volatile(substitute(p, below))]
        if not fixed:
            return self._push(node, child, parts, ctx)
        movable = [p for p in parts if p not in fixed]
        if not movable:
            return Transformed.no(node)
        pushed = self._push(Filter(child, conjunction(movable)), child, movable, ctx)
        if not pushed.changed:
            return Transformed.no(node)
        return Transformed.yes(filtered(pushed.data, fixed))

    def _push(self, node: Filter, child: LogicalPlan, parts: list[Expr], ctx: RuleContext
              ) -> Transformed[LogicalPlan]:
        """``node`` (a Filter of ``parts`` over ``child``) with what can go below ``child``
        moved there."""
        match child:
            case Scan():
                # CURRENT_WATERMARK needs the row watermark, which exists after the scan;
                # with 'python.udf.on-error' = 'skip' a Python call stays in a Filter (the
                # operator that drops the rows it fails on).
                skip = str(ctx.options.get("python.udf.on-error", "")).lower() == "skip"
                down = [p for p in parts if not _reads_watermark(p)
                        and not (skip and _calls_python(p))]
                if not down:
                    return Transformed.no(node)
                keep = [p for p in parts if p not in down]
                scan = replace(child, filters=child.filters + tuple(
                    _to_table_columns(p, child) for p in down))
                return Transformed.yes(filtered(scan, keep))
            case Project():
                inner = [substitute(p, child.exprs) for p in parts]
                return Transformed.yes(replace(child, input=filtered(child.input, inner)))
            case Union():
                return Transformed.yes(Union(tuple(Filter(i, node.predicate)
                                                   for i in child.inputs)))
            case Aggregate():
                n_keys = len(child.keys)
                down = [p for p in parts if p.columns() and max(p.columns()) < n_keys]
                if not down:
                    return Transformed.no(node)
                keep = [p for p in parts if p not in down]
                below = filtered(child.input, [substitute(p, child.keys) for p in down])
                return Transformed.yes(filtered(replace(child, input=below), keep))
            case Join():
                return _push_into_join(node, child, parts)
            case Rank():
                # Only conditions on the partition keys may pass below a ranking.
                width = len(child.input.schema)
                part = {p.index for p in child.partition if isinstance(p, ColumnRef)}
                down = [p for p in parts if p.columns() and p.columns() <= part]
                if not down:
                    return Transformed.no(node)
                keep = [p for p in parts if p not in down]
                del width
                new_rank = replace(child, input=filtered(child.input, down))
                return Transformed.yes(filtered(new_rank, keep))
            case Unnest():
                # Conditions on the input's own columns (not the unnested one) go below: a
                # row they drop is not unnested (Flink's correlate: no element of it is made).
                width = len(child.input.schema) - 1
                down = [p for p in parts if p.columns() and max(p.columns()) < width]
                if not down:
                    return Transformed.no(node)
                keep = [p for p in parts if p not in down]
                return Transformed.yes(filtered(replace(child, input=filtered(child.input,
                                                                               down)), keep))
            case WindowTVF():
                width = len(child.input.schema)
                down = [p for p in parts if p.columns() and max(p.columns()) < width]
                if child.kind == "session":
                    # A row filtered out still places its session (Flink's SESSION TVF
                    # forms them from every row): only a condition on the PARTITION BY
                    # columns, which keeps or drops a partition whole, goes below.
                    down = [p for p in down if p.columns() <= set(child.partition_keys)]
                if not down:
                    return Transformed.no(node)
                keep = [p for p in parts if p not in down]
                new_tvf = replace(child, input=filtered(child.input, down))
                return Transformed.yes(filtered(new_tvf, keep))
            case _:
                return Transformed.no(node)


def _to_table_columns(p: Expr, scan: Scan) -> Expr:
    # Scan filters are evaluated on the full table row, before its projection.
    if scan.projection is None:
        return p
    return remap_columns(p, {i: scan.projection[i] for i in p.columns()})


def _sides(parts: list[Expr], n_left: int) -> tuple[list[Expr], list[Expr], list[Expr]]:
    left, right, both = [], [], []
    for p in parts:
        cols = p.columns()
        if _volatile(p):  # (evaluated once per joined row, as written)
            both.append(p)
        elif cols and max(cols) < n_left:
            left.append(p)
        elif cols and min(cols) >= n_left:
            right.append(remap_columns(p, {i: i - n_left for i in cols}))
        else:
            both.append(p)
    return left, right, both


def _push_into_join(node: Filter, join: Join, parts: list[Expr]) -> Transformed[LogicalPlan]:
    n_left = len(join.left.schema)
    if join.kind == "full":
        return Transformed.no(node)  # both sides are null-padded: nothing passes
    if join.kind in ("semi", "anti"):
        # The output is the left rows: a filter on them filters the left input.
        new = replace(join, left=filtered(join.left, parts))
        return Transformed.yes(new)
    left, right, both = _sides(parts, n_left)
    if join.kind == "left":
        # Conditions on the null-padded side stay above the join.
        both += [remap_columns(p, {i: i + n_left for i in p.columns()}) for p in right]
        right = []
        if not left:
            return Transformed.no(node)
        new = replace(join, left=filtered(join.left, left), right=filtered(join.right, right))
        return Transformed.yes(filtered(new, both))
    # An inner join: conditions on both sides become its own (equalities its keys). An OR
    # over both sides also implies, per side, the OR of what each branch says about that
    # side alone (TPC-H q7's nation pair): pushed down once, here, with the OR kept.
    for p in both:
        for side, lo, hi in ((left, 0, n_left), (right, n_left, None)):
            implied = implied_by_branches(p, lo, hi)
            if implied is not None:
                side.append(implied if lo == 0 else
                            remap_columns(implied, {i: i - n_left for i in implied.columns()}))
    condition = ([join.condition] if join.condition is not None else []) + both
    new = replace(join, left=filtered(join.left, left), right=filtered(join.right, right),
                  condition=conjunction(condition))
    return Transformed.yes(_with_keys(new))


def implied_by_branches(p: Expr, lo: int, hi: int | None) -> Expr | None:
    """For ``p`` an OR: the OR over its branches of each branch's conjuncts that read only
    columns in [lo, hi) — None unless every branch has one (then nothing is implied)."""
    branches = disjuncts(p)
    if len(branches) < 2:
        return None
    parts = []
    for b in branches:
        mine = [c for c in conjuncts(b) if c.columns() and min(c.columns()) >= lo
                and (hi is None or max(c.columns()) < hi) and not _volatile(c)]
        if not mine:
            return None
        parts.append(conjunction(mine))
    out = parts[0]
    for q in parts[1:]:
        out = Call("or", (out, q), T.BOOLEAN)
    return out


def _push_join_condition(join: Join) -> LogicalPlan | None:
    n_left = len(join.left.schema)
    if join.condition is None or join.kind == "full":
        return None
    left, right, both = _sides(factored_conjuncts(join.condition), n_left)
    if join.kind in ("left", "anti"):
        # In a LEFT (or anti) join's ON, a left-only condition decides matching, not which
        # left rows appear: it stays. A right-only one may filter the right input.
        both = [*left, *both]
        left = []
    new = replace(join, left=filtered(join.left, left), right=filtered(join.right, right),
                  condition=conjunction(both))
    new = _with_keys(new)
    return new if new != join else None


def _with_keys(join: Join) -> Join:
    """The join with the equalities of its condition between the two sides as keys."""
    if join.condition is None:
        return join
    n_left = len(join.left.schema)
    keys_l, keys_r, residual = split_condition(conjuncts(join.condition), n_left)
    if not keys_l:
        return join
    return replace(join, left_keys=join.left_keys + tuple(keys_l),
                   right_keys=join.right_keys + tuple(keys_r), condition=conjunction(residual))


def _volatile(e: Expr) -> bool:
    return any(isinstance(x, Call) and is_volatile(x.name) for x in e.walk())


def _calls_python(e: Expr) -> bool:
    return any(isinstance(x, Call) and x.name.startswith("py:") for x in e.walk())


def _reads_watermark(e: Expr) -> bool:
    from sqlengine.plan.expressions import Call

    return any(isinstance(x, Call) and x.name == "current_watermark" for x in e.walk())
