"""decorrelate: rewrite every subquery in an expression into joins (Calcite's
SubQueryRemoveRule followed by its decorrelator, DuckDB's flattening of dependent joins).

Each subquery's plan is first decorrelated itself (subqueries nest), then its correlated
conditions, those reading the enclosing row through ``OuterRef``, are pulled up to its top
(``pull_up``): through filters, projections (which then also output the columns the
conditions read), inner joins, aggregates (an equality becomes a grouping key) and UNNESTs of
the enclosing row's values (which unnest the domain of the values they read). What is
left is an uncorrelated plan plus conditions between it and the enclosing row, which become
join keys (equalities) and a residual condition:

- a top-level conjunct ``EXISTS (q)`` / ``x IN (q)`` / ``x op ANY (q)`` of a filter is a
  SEMI join, ``NOT EXISTS (q)`` an ANTI join;
- a scalar subquery is a LEFT join with ``q`` (one row per correlation key: ``q`` is an
  aggregate grouped by the keys, or checked at run time to return at most one row); an
  aggregate's value for an empty group (``COUNT`` is 0) is kept with a match flag;
- EXISTS / IN / ANY anywhere else (under NOT, OR, CASE, in the SELECT list) is a mark: LEFT
  joins with ``q``'s distinct values and its row counts per correlation key, from which SQL's
  three-valued result is computed (``x NOT IN (q)`` is NULL when ``q`` holds a NULL).

The rule runs first and is not optional: no runtime evaluates a subquery.
"""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import NotSupportedError
from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import (
    AggCall,
    Call,
    Case,
    Cast,
    ColumnRef,
    Expr,
    Literal,
    conjunction,
    conjuncts,
    factored_conjuncts,
    remap_columns,
    substitute,
)
from sqlengine.plan.join_keys import not_distinct, null_safe_pair, split_condition
from sqlengine.plan.nodes import (
    Aggregate,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    Project,
    Rank,
    Sort,
    Union,
    Unnest,
)
from sqlengine.plan.subquery import OuterRef, SubqueryExpr, has_subquery, node_expressions
from sqlengine.plan.tree import Transformed, filtered, walk


class Decorrelate(OptimizerRule):
    """Subqueries in filters and projections -> semi, anti and left joins.

    Example:
        >>> from tests.plans import plan_of, show
        >>> plan = plan_of("SELECT b FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.e = t.a)")
        >>> print(show(Decorrelate().apply(plan, RuleContext()).data))
        Project: b
          Join: semi, on=[CAST(a AS BIGINT) = e]
            Scan: t
            Project: 1 AS EXPR$0, e AS $c1
              Scan: u
    """

    name = "decorrelate"
    apply_order = ApplyOrder.BOTTOM_UP
    mandatory = True  # no runtime evaluates a subquery

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        if isinstance(node, Join) and _correlated(node.right):
            return Transformed.yes(_lateral(node))
        exprs = node_expressions(node)
        if not any(has_subquery(e) for e in exprs):
            return Transformed.no(node)
        match node:
            case Filter():
                return Transformed.yes(self._filter(node, ctx))
            case Project():
                return Transformed.yes(self._project(node, ctx))
            case Aggregate():
                return Transformed.yes(self._aggregate(node, ctx))
            case _:
                msg = (f"subqueries are not supported in {type(node).__name__} expressions "
                       "yet (only in WHERE, HAVING, GROUP BY, aggregate arguments and the "
                       "SELECT list)")
                raise NotSupportedError(msg)

    # -- the nodes holding subqueries ------------------------------------------------------
    def _filter(self, node: Filter, ctx: RuleContext) -> LogicalPlan:
        width = len(node.input.schema)
        plan = node.input
        keep: list[Expr] = []
        for part in conjuncts(node.predicate):
            if not has_subquery(part):
                keep.append(part)
                continue
            joined = self._as_semi_anti(plan, part, ctx)
            if joined is not None:
                plan = joined
                continue
            plan, value = self._values(plan, part, ctx)
            keep.append(value)
        out = filtered(plan, keep)
        return _first_columns(out, width)

    def _project(self, node: Project, ctx: RuleContext) -> LogicalPlan:
        plan = node.input
        exprs = []
        for e in node.exprs:
            plan, value = self._values(plan, e, ctx)
            exprs.append(value)
        return Project(plan, tuple(exprs), node.names)

    def _aggregate(self, node: Aggregate, ctx: RuleContext) -> LogicalPlan:
        """Subqueries in GROUP BY keys, aggregate arguments and FILTERs: computed by a
        projection below the aggregate (as Calcite's SqlToRelConverter computes aggregate
        arguments), which the aggregate then reads."""
        fields = node.input.schema.fields
        exprs: list[Expr] = [ColumnRef(i, f.name, f.type) for i, f in enumerate(fields)]
        names = [f.name for f in fields]

        def column(e: Expr) -> Expr:
            if not has_subquery(e):
                return e
            exprs.append(e)
            names.append(f"$s{len(exprs) - 1}")
            return ColumnRef(len(exprs) - 1, names[-1], e.dtype)

        keys = tuple(column(k) for k in node.keys)
        aggs = tuple(replace(a, args=tuple(column(x) for x in a.args),
                             filter=None if a.filter is None else column(a.filter))
                     for a in node.aggs)
        below = self._project(Project(node.input, tuple(exprs), tuple(names)), ctx)
        return replace(node, input=below, keys=keys, aggs=aggs)

    # -- forms -----------------------------------------------------------------------------
    def _as_semi_anti(self, plan: LogicalPlan, part: Expr, ctx: RuleContext
                      ) -> LogicalPlan | None:
        """A conjunct that is a whole EXISTS / IN / ANY (a semi join) or NOT EXISTS (anti)."""
        negated = isinstance(part, Call) and part.name == "not"
        sub = part.args[0] if negated and isinstance(part, Call) else part
        if not isinstance(sub, SubqueryExpr) or sub.kind == "scalar":
            return None
        if has_subquery(sub.operand) if sub.operand is not None else False:
            return None
        row = _row_operand(sub)
        if negated and sub.kind != "exists" and row is None:
            return None  # NOT IN is three-valued: a mark (below)
        inner = self.apply(sub.plan, ctx).data
        if sub.kind == "exists" and _global_aggregate(inner):
            return None  # always one row: EXISTS is TRUE (the mark path folds it)
        right, preds = pull_up(inner, plan)
        width = len(plan.schema)
        conds = [_over_join(p, width) for p in preds]
        if row is not None:
            # (a, b) IN (q): every field equal (a semi join on them); NOT IN keeps the rows
            # no row of q might equal, a field that is NULL on either side matching anything
            # (an anti join: the result is FALSE, not NULL, only when no row might match).
            fields = right.schema.fields
            pairs = [(o, ColumnRef(width + i, fields[i].name, fields[i].type))
                     for i, o in enumerate(row)]
            if negated:
                conds.extend(Call("or", (Call("or", (Call("is_null", (o,), T.BOOLEAN),
                                                     Call("is_null", (v,), T.BOOLEAN)),
                                              T.BOOLEAN), Call("eq", (o, v), T.BOOLEAN)),
                                  T.BOOLEAN) for o, v in pairs)
            else:
                conds.extend(Call("eq", (o, v), T.BOOLEAN) for o, v in pairs)
        elif sub.kind == "any" and sub.operand is not None:
            f = right.schema.fields[0]
            conds.append(Call(sub.op, (sub.operand, ColumnRef(width, f.name, f.type)),
                              T.BOOLEAN))
        keys_l, keys_r, residual = split_condition(conds, width)
        return Join(plan, right, "anti" if negated else "semi", tuple(keys_l), tuple(keys_r),
                    conjunction(residual))

    def _values(self, plan: LogicalPlan, e: Expr, ctx: RuleContext
                ) -> tuple[LogicalPlan, Expr]:
        """Replace each subquery in ``e`` by a column that joins append to ``plan``."""
        if isinstance(e, SubqueryExpr):
            operand = e.operand
            if operand is not None and has_subquery(operand):
                plan, operand = self._values(plan, operand, ctx)
                e = replace(e, operand=operand)
            if e.kind == "scalar":
                return self._scalar(plan, e, ctx)
            return self._mark(plan, e, ctx)
        kids = e.children()
        if not kids or not has_subquery(e):
            return plan, e
        out = []
        for k in kids:
            plan, v = self._values(plan, k, ctx)
            out.append(v)
        return plan, e.with_children(tuple(out))

    def _scalar(self, plan: LogicalPlan, sub: SubqueryExpr, ctx: RuleContext
                ) -> tuple[LogicalPlan, Expr]:
        inner = self.apply(sub.plan, ctx).data
        empty = _empty_group_value(inner)
        width = len(plan.schema)
        # A SELECT list reading the enclosing row ((SELECT MAX(v) - t.x FROM u ...)): the
        # subquery gives the columns it reads, the value is computed over the joined row.
        tops, inner, m = _peel_outer_select(inner)
        top = tops[0] if tops is not None else None
        m = m if tops is not None else 1
        right, preds = pull_up(inner, plan)
        keys_l, keys_r, residual = split_condition([_over_join(p, width) for p in preds],
                                                   width)
        if residual:
            msg = ("a correlated scalar subquery may only compare the enclosing query's "
                   f"columns with '=' (found {residual[0].sql()})")
            raise NotSupportedError(msg)
        if not _unique_on(right, keys_r):
            right = _single_value(right, keys_r, m)
            keys_r = [ColumnRef(i, f.name, f.type)
                      for i, f in enumerate(right.schema.fields[m:len(keys_r) + m], m)]
        # A match flag after the value: a correlated aggregate's empty group has no row.
        flagged = _with_flag(right)
        joined = Join(plan, flagged, "left", tuple(keys_l), tuple(keys_r))
        f = flagged.schema.fields[0]
        value: Expr = ColumnRef(width, f.name, f.type)
        if top is not None:
            # (the subquery's row marker is NULL where it has no row: its value is then the
            # empty aggregate's, or NULL)
            marker = ColumnRef(width + m - 1, "$row", T.BOOLEAN)
            fallback = _cast(_over_join(empty, width), top.dtype) if empty is not None \
                else Literal(None, top.dtype)
            return joined, Case(((Call("is_null", (marker,), T.BOOLEAN), fallback),),
                                _over_join(top, width), top.dtype)
        if keys_l and empty is not None and not (isinstance(empty, Literal)
                                                 and empty.value is None):
            flag = ColumnRef(width + len(flagged.schema) - 1, "$matched", T.BOOLEAN)
            value = Case(((Call("is_null", (flag,), T.BOOLEAN),
                           _cast(_over_join(empty, width), value.dtype)),), value, value.dtype)
        return joined, value

    def _mark(self, plan: LogicalPlan, sub: SubqueryExpr, ctx: RuleContext
              ) -> tuple[LogicalPlan, Expr]:
        """EXISTS / ANY as a BOOLEAN column, by LEFT joins over aggregates of the subquery."""
        if _row_operand(sub) is not None:
            msg = ("(a, b, ...) [NOT] IN (subquery) is supported as a whole WHERE condition "
                   "(a semi or anti join), not under OR / CASE or in the SELECT list")
            raise NotSupportedError(msg)
        inner = self.apply(sub.plan, ctx).data
        if _global_aggregate(inner):
            if sub.kind == "exists":
                return plan, Literal(True, T.BOOLEAN)
            if any(isinstance(x, OuterRef) for n in walk(inner) for e in node_expressions(n)
                   for x in e.walk()):
                msg = ("IN / ANY over a correlated subquery that aggregates without GROUP BY "
                       "is not supported yet")
                raise NotSupportedError(msg)
        right, preds = pull_up(inner, plan)
        width = len(plan.schema)
        keys_l, keys_r, residual = split_condition([_over_join(p, width) for p in preds],
                                                   width)
        if residual:
            right, keys_l, keys_r = _domain_keys(plan, right, keys_l, keys_r, residual)
        if sub.kind == "exists":
            distinct = _distinct(right, keys_r)
            if not keys_r:  # uncorrelated: count the rows
                counted = Aggregate(right, (), (), (AggCall("count_star", (), T.BIGINT),),
                                    ("$count",))
                joined = Join(plan, counted, "left", (), ())
                count = ColumnRef(width, "$count", T.BIGINT)
                return joined, Call("gt", (count, Literal(0, T.BIGINT)), T.BOOLEAN)
            flagged = _with_flag(distinct)
            flag_pos = width + len(flagged.schema) - 1
            joined = Join(plan, flagged, "left", tuple(keys_l),
                          tuple(ColumnRef(i, f.name, f.type) for i, f in
                                enumerate(flagged.schema.fields[:len(keys_r)])))
            flag = ColumnRef(flag_pos, "$matched", T.BOOLEAN)
            return joined, Call("is_not_null", (flag,), T.BOOLEAN)
        return self._any_mark(plan, sub, right, keys_l, keys_r)

    def _any_mark(self, plan: LogicalPlan, sub: SubqueryExpr, right: LogicalPlan,
                  keys_l: list[Expr], keys_r: list[Expr]) -> tuple[LogicalPlan, Expr]:
        """``x op ANY (q)``: TRUE if some value compares TRUE, else NULL if some comparison
        is unknown (x or a value is NULL), else FALSE (also for no values)."""
        assert sub.operand is not None
        width = len(plan.schema)
        f0 = right.schema.fields[0]
        value = ColumnRef(0, f0.name, f0.type)
        n = len(keys_r)
        # Per correlation key: how many rows, how many non-NULL values.
        counts = Aggregate(right, tuple(keys_r), tuple(f"$k{i}" for i in range(n)),
                           (AggCall("count_star", (), T.BIGINT),
                            AggCall("count", (value,), T.BIGINT)), ("$rows", "$values"))
        stats_keys = tuple(ColumnRef(i, f"$k{i}", k.dtype) for i, k in enumerate(keys_r))
        if sub.op == "eq":
            # Equality: the distinct values, joined on (keys, value).
            distinct = _with_flag(_distinct(right, [*keys_r, value]))
            left_keys = (*keys_l, sub.operand)
            right_keys = tuple(ColumnRef(i, f.name, f.type) for i, f in
                               enumerate(distinct.schema.fields[:n + 1]))
            first = Join(plan, distinct, "left", left_keys, right_keys)
            matched: Expr = Call("is_not_null", (ColumnRef(
                width + len(distinct.schema) - 1, "$matched", T.BOOLEAN),), T.BOOLEAN)
        else:
            # Other comparisons: against the minimum or maximum (NULLs aside), per key.
            use_max = sub.op in ("lt", "le")
            agg = AggCall("max" if use_max else "min", (value,), f0.type)
            if sub.op == "ne":
                extremes = Aggregate(right, tuple(keys_r), tuple(f"$k{i}" for i in range(n)),
                                     (AggCall("min", (value,), f0.type),
                                      AggCall("max", (value,), f0.type)), ("$min", "$max"))
            else:
                extremes = Aggregate(right, tuple(keys_r), tuple(f"$k{i}" for i in range(n)),
                                     (agg,), ("$extreme",))
            first = Join(plan, extremes, "left", tuple(keys_l), stats_keys)
            pos = width + n
            if sub.op == "ne":
                lo = ColumnRef(pos, "$min", f0.type)
                hi = ColumnRef(pos + 1, "$max", f0.type)
                matched = Call("or", (Call("ne", (sub.operand, lo), T.BOOLEAN),
                                      Call("ne", (sub.operand, hi), T.BOOLEAN)), T.BOOLEAN)
            else:
                ext = ColumnRef(pos, "$extreme", f0.type)
                matched = Call(sub.op, (sub.operand, ext), T.BOOLEAN)
            matched = Call("is_true", (matched,), T.BOOLEAN)
        base = len(first.schema)
        joined = Join(first, counts, "left", tuple(keys_l), stats_keys)
        rows = ColumnRef(base + n, "$rows", T.BIGINT)
        values = ColumnRef(base + n + 1, "$values", T.BIGINT)
        no_rows = Call("or", (Call("is_null", (rows,), T.BOOLEAN),
                              Call("eq", (rows, Literal(0, T.BIGINT)), T.BOOLEAN)), T.BOOLEAN)
        unknown = Call("or", (Call("is_null", (sub.operand,), T.BOOLEAN),
                              Call("lt", (values, rows), T.BOOLEAN)), T.BOOLEAN)
        mark = Case(((matched, Literal(True, T.BOOLEAN)),
                     (no_rows, Literal(False, T.BOOLEAN)),
                     (unknown, Literal(None, T.BOOLEAN))),
                    Literal(False, T.BOOLEAN), T.BOOLEAN)
        return joined, mark


def _domain_keys(plan: LogicalPlan, right: LogicalPlan, keys_l: list[Expr],
                 keys_r: list[Expr], residual: list[Expr]
                 ) -> tuple[LogicalPlan, list[Expr], list[Expr]]:
    """A mark's correlated conditions other than '=' turned into equalities (DuckDB's
    domain): the subquery's rows joined with the distinct values of the enclosing columns
    they read, on those conditions; the values then equal to the enclosing columns. A
    condition must be NULL-rejecting (a comparison), since a NULL value joins no row."""
    bad = next((p for p in residual if not _null_rejecting(p)), None)
    if bad is not None:
        msg = ("EXISTS / IN with a correlated condition other than a comparison is supported "
               f"only as a whole WHERE condition (found {bad.sql()})")
        raise NotSupportedError(msg)
    width, inner_width = len(plan.schema), len(right.schema)
    fields = plan.schema.fields
    cols = sorted({x.index for p in residual for x in p.walk()
                   if isinstance(x, ColumnRef) and x.index < width})
    domain = Aggregate(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in cols),
                       tuple(f"$d{i}" for i in cols), (), ())
    at = {i: inner_width + k for k, i in enumerate(cols)}

    def local(e: Expr) -> Expr:  # (over the enclosing row ++ the subquery's -> ++ domain)
        if isinstance(e, ColumnRef):
            return ColumnRef(at[e.index], f"$d{e.index}", e.type) if e.index < width else \
                ColumnRef(e.index - width, e.name, e.type)
        kids = e.children()
        return e.with_children(tuple(local(k) for k in kids)) if kids else e

    joined = Join(right, domain, "inner", (), (), conjunction([local(p) for p in residual]))
    return (joined, [*keys_l, *(ColumnRef(i, fields[i].name, fields[i].type) for i in cols)],
            [*keys_r, *(ColumnRef(at[i], f"$d{i}", fields[i].type) for i in cols)])


def _lateral(node: Join) -> LogicalPlan:
    """A LATERAL subquery's join (its right side reads the left row: bind_lateral.py) as a
    plain join: the correlated conditions pulled up become its keys and condition. A
    subquery that aggregates without GROUP BY has one row for every left row, no input rows
    included (COUNT 0, other aggregates NULL): a LEFT join whose missing rows take those.
    A SELECT list reading the left row is computed over the joined row."""
    inner = node.right
    width = len(node.left.schema)
    out_fields = inner.schema.fields
    names = tuple(f.name for f in (*node.left.schema.fields, *out_fields))
    empty = _empty_group_values(inner)
    top, inner, n = _peel_outer_select(inner)
    right, preds = pull_up(inner, node.left)
    conds = [_over_join(p, width) for p in preds]
    aggregated = empty is not None
    if not aggregated and top is None and node.condition is not None:
        conds.append(node.condition)
    keys_l, keys_r, residual = split_condition(conds, width)
    if aggregated and residual:
        msg = ("a LATERAL subquery that aggregates may compare the left row's columns only "
               f"with '=' or through its aggregate (found {residual[0].sql()})")
        raise NotSupportedError(msg)
    if top is not None and node.kind == "left" and node.condition is not None and not (
            isinstance(node.condition, Literal) and node.condition.value is True):
        raise NotSupportedError("LEFT JOIN LATERAL ... ON a condition other than TRUE, over a "
                                "subquery whose SELECT list reads the left row, is not "
                                "supported yet")
    flagged = _with_flag(right) if aggregated else right
    kind = "left" if aggregated else node.kind
    joined = Join(node.left, flagged, kind, tuple(keys_l), tuple(keys_r),
                  conjunction(residual))
    fields = joined.schema.fields
    # Where the subquery has no row for a left row (a LEFT join's NULLs): its empty
    # aggregate's values, or NULL.
    missing: Expr = Call("is_null", (ColumnRef(len(fields) - 1, "$matched", T.BOOLEAN),),
                         T.BOOLEAN) if aggregated else \
        Call("is_null", (ColumnRef(width + n - 1, "$row", T.BOOLEAN),), T.BOOLEAN)
    exprs: list[Expr] = [ColumnRef(i, fields[i].name, fields[i].type) for i in range(width)]
    for j, f in enumerate(out_fields):
        value: Expr = _over_join(top[j], width) if top is not None else \
            ColumnRef(width + j, fields[width + j].name, fields[width + j].type)
        fallback = _cast(_over_join(empty[j], width), f.type) if aggregated \
            else Literal(None, f.type)  # type: ignore[index]
        nulls_anyway = isinstance(fallback, Literal) and fallback.value is None
        if top is not None or (aggregated and not nulls_anyway):
            value = Case(((missing, fallback),), value, f.type)
        exprs.append(value)
    out: LogicalPlan = Project(joined, tuple(exprs), names)
    if node.condition is None or (not aggregated and top is None):
        return out
    if node.kind == "inner":
        return Filter(out, node.condition)
    # LEFT JOIN LATERAL (aggregate) ON c: where c is not TRUE the right side is NULL
    kept = Call("is_true", (node.condition,), T.BOOLEAN)
    fields = out.schema.fields
    exprs = [ColumnRef(i, f.name, f.type) if i < width else
             Case(((kept, ColumnRef(i, f.name, f.type)),), Literal(None, f.type), f.type)
             for i, f in enumerate(fields)]
    return Project(out, tuple(exprs), tuple(f.name for f in fields))


def _row_operand(sub: SubqueryExpr) -> tuple[Expr, ...] | None:
    """The fields of ``(a, b, ...) IN (q)``'s left side (q returns as many columns)."""
    op = sub.operand
    if sub.kind == "any" and isinstance(op, Call) and op.name == "row_value" and \
            len(sub.plan.schema) > 1:
        return op.args
    return None


# -- pulling correlated conditions up ------------------------------------------------------
def pull_up(plan: LogicalPlan, outer: LogicalPlan | None = None
            ) -> tuple[LogicalPlan, list[Expr]]:
    """``plan`` without its correlated conditions, and those conditions over its output
    (``ColumnRef``) and the enclosing row (``OuterRef``). New columns that the conditions
    need are appended after the plan's own, so the plan's columns keep their positions.
    ``outer``: the enclosing query's plan (the domain of a comparison below an aggregate)."""
    if not _correlated(plan):
        return plan, []
    match plan:
        case Filter():
            inner, preds = pull_up(plan.input, outer)
            # (an equality with the enclosing row in every branch of an OR is taken out of it:
            # (t.k = o.k AND x) OR (t.k = o.k AND y) correlates as an equality, a key)
            parts = factored_conjuncts(plan.predicate)
            corr = [c for c in parts if _has_outer(c)]
            rest = [c for c in parts if not _has_outer(c)]
            return filtered(inner, rest), preds + corr
        case Project():
            if any(_has_outer(e) for e in plan.exprs):
                raise NotSupportedError("a subquery's SELECT list may not read the enclosing "
                                        "query's columns yet")
            inner, preds = pull_up(plan.input, outer)
            return _project_needed(plan, inner, preds)
        case Aggregate():
            if any(_has_outer(e) for e in node_expressions(plan)):
                raise NotSupportedError("an aggregate in a subquery may not read the "
                                        "enclosing query's columns yet")
            inner, preds = pull_up(plan.input, outer)
            return _aggregate_keys(plan, inner, preds, outer)
        case Join():
            return _pull_join(plan, outer)
        case Sort() if plan.fetch is None and not plan.offset:
            return pull_up(plan.input, outer)  # a subquery's order does not matter
        case Sort():
            return _top_n(plan, outer)
        case Union():
            return _pull_union(plan, outer)
        case Unnest():
            return _pull_unnest(plan, outer)
        case _:
            msg = (f"a correlated subquery through {type(plan).__name__} (LIMIT, UNION, "
                   "windows, ...) is not supported yet")
            raise NotSupportedError(msg)


def _pull_union(plan: Union, outer: LogicalPlan | None) -> tuple[LogicalPlan, list[Expr]]:
    """UNION ALL in a correlated subquery: each input's correlated equalities pulled up, their
    inner sides appended as columns in one order (cast to one type), equal to the enclosing
    columns above the union. Every input must equate the same enclosing expressions."""
    pulled = [pull_up(p, outer) for p in plan.inputs]
    per_input: list[dict[Expr, Expr]] = []
    for _, preds in pulled:
        pairs: dict[Expr, Expr] = {}
        for p in preds:
            split = _inner_outer_equality(p)
            if split is None:
                msg = ("a correlated condition in a UNION's input must be an equality with "
                       f"the enclosing query (found {p.sql()})")
                raise NotSupportedError(msg)
            pairs.setdefault(split[1], split[0])
        per_input.append(pairs)
    outer_sides = list(per_input[0])
    if any(set(pairs) != set(outer_sides) for pairs in per_input[1:]):
        raise NotSupportedError("every input of a UNION in a correlated subquery must compare "
                                "the same enclosing columns")
    types = [T.common_type([pairs[o].dtype for pairs in per_input], "correlation keys")
             for o in outer_sides]
    width = len(plan.schema)
    inputs = []
    for (inner, _), pairs in zip(pulled, per_input, strict=True):
        fields = inner.schema.fields
        own = tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in range(width))
        keys = tuple(_cast(pairs[o], t) for o, t in zip(outer_sides, types, strict=True))
        inputs.append(Project(inner, (*own, *keys), (*(f.name for f in plan.schema.fields),
                                                     *(f"$u{j}" for j in range(len(keys))))))
    union = Union(tuple(inputs))
    preds = [Call("eq", (ColumnRef(width + j, f"$u{j}", t), o), T.BOOLEAN)
             for j, (o, t) in enumerate(zip(outer_sides, types, strict=True))]
    return union, preds


def _pull_unnest(plan: Unnest, outer: LogicalPlan | None) -> tuple[LogicalPlan, list[Expr]]:
    """UNNEST of the enclosing row's values (``(SELECT MAX(x) FROM UNNEST(t.arr) AS u(x))``,
    ``LEFT JOIN LATERAL (SELECT ... FROM UNNEST(t.arr) ... WHERE ...) ON TRUE``): the
    enclosing columns it reads are taken from their domain, the distinct values of those
    columns in the enclosing query (keyed by the bytes of a ROW of them: a NULL is a value
    like any other, an ARRAY a hash key), so each domain row unnests its own array; the
    condition: the domain key equal to the enclosing row's. The subquery's own columns keep
    their places, the key after them."""
    source = plan.input
    if outer is None or not isinstance(source, Project) or _correlated(source.input):
        raise NotSupportedError("UNNEST in a correlated subquery may read the enclosing "
                                "query's columns only in its argument")
    cols = sorted({x.index for e in source.exprs for x in e.walk() if isinstance(x, OuterRef)})
    fields = outer.schema.fields
    if not all(T.groupable(fields[i].type) for i in cols):
        bad = next(fields[i] for i in cols if not T.groupable(fields[i].type))
        raise NotSupportedError(f"UNNEST in a correlated subquery reads the enclosing column "
                                f"{bad.name!r} of a type it cannot be keyed by")
    row_type = pa.struct([pa.field(f"$d{i}", fields[i].type) for i in cols])

    def key_of(refs: list[Expr]) -> Expr:
        return Call("key_bytes", (Call("row_value", tuple(refs), row_type),), pa.binary())

    domain = Aggregate(outer, (key_of([ColumnRef(i, fields[i].name, fields[i].type)
                                       for i in cols]),), ("$dk",), (), ())
    dk = ColumnRef(0, "$dk", pa.binary())
    row = Call("key_value", (dk,), row_type)
    values = Project(domain, (dk, *(Call("field", (row, Literal(k, T.INT)), fields[i].type)
                                    for k, i in enumerate(cols))),
                     ("$dk", *(f"$d{i}" for i in cols)))
    base = source.input
    width = len(base.schema)
    crossed = Join(base, values, "inner", (), ())
    at = {i: width + 1 + k for k, i in enumerate(cols)}

    def local(e: Expr) -> Expr:
        if isinstance(e, OuterRef):
            return ColumnRef(at[e.index], f"$d{e.index}", e.type)
        kids = e.children()
        return e.with_children(tuple(local(k) for k in kids)) if kids else e

    # (the domain key first: UNNEST takes its input's last column)
    fed = Project(crossed, (ColumnRef(width, "$dk", pa.binary()),
                            *(local(e) for e in source.exprs)), ("$dk", *source.names))
    unnested = replace(plan, input=fed)
    out = unnested.schema.fields
    n = len(out) - 1
    keyed = Project(unnested, (*(ColumnRef(i, out[i].name, out[i].type)
                                 for i in range(1, n + 1)), ColumnRef(0, "$dk", pa.binary())),
                    (*(out[i].name for i in range(1, n + 1)), "$dk"))
    enclosing = key_of([OuterRef(i, fields[i].name, fields[i].type) for i in cols])
    return keyed, [Call("eq", (ColumnRef(n, "$dk", pa.binary()), enclosing), T.BOOLEAN)]


def _top_n(plan: Sort, outer: LogicalPlan | None) -> tuple[LogicalPlan, list[Expr]]:
    """ORDER BY ... LIMIT n [OFFSET m] in a correlated subquery: its first rows per enclosing
    row, as the first rows of each correlation key (ROW_NUMBER() OVER (PARTITION BY the
    keys ORDER BY ...), Flink's Top-N); a comparison with the enclosing row partitions by
    the domain of the enclosing columns it reads (see _with_domain)."""
    inner, preds = pull_up(plan.input, outer)
    # (IS NOT DISTINCT FROM partitions as =: PARTITION BY puts NULLs together)
    others = [p for p in preds if _inner_outer_equality(p, null_safe=True) is None]
    if others:
        inner, preds = _with_domain(inner, preds, others, outer)
    keys: list[Expr] = []
    for p in preds:
        split = _inner_outer_equality(p, null_safe=True)
        assert split is not None
        if split[0] not in keys:
            keys.append(split[0])
    width = len(inner.schema)
    last = plan.offset + plan.fetch if plan.fetch is not None else None
    ranked = Rank(inner, tuple(keys), plan.keys, "$rn", last)
    rn = ColumnRef(width, "$rn", T.BIGINT)
    kept = [Call("gt", (rn, Literal(plan.offset, T.BIGINT)), T.BOOLEAN)] if plan.offset else []
    if last is not None:
        kept.append(Call("le", (rn, Literal(last, T.BIGINT)), T.BOOLEAN))
    return _first_columns(filtered(ranked, kept), width), preds


def _project_needed(plan: Project, inner: LogicalPlan, preds: list[Expr]
                    ) -> tuple[LogicalPlan, list[Expr]]:
    needed = sorted({i for p in preds for i in p.columns()})
    fields = inner.schema.fields
    n = len(plan.exprs)
    extra = tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in needed)
    mapping = {i: n + k for k, i in enumerate(needed)}
    names = tuple(f"$c{i}" for i in needed)
    return (Project(inner, plan.exprs + extra, plan.names + names),
            [remap_columns(p, mapping) for p in preds])


def _aggregate_keys(plan: Aggregate, inner: LogicalPlan, preds: list[Expr],
                    outer: LogicalPlan | None = None) -> tuple[LogicalPlan, list[Expr]]:
    """Correlated equalities through an aggregate: their inner sides become grouping keys.
    Other comparisons with the enclosing row (``b.k > a.k``) join the aggregate's input with
    the domain, the distinct values of the enclosing columns they read (Calcite's and
    DuckDB's way): each domain value's rows are aggregated apart, and the value is a key
    equal to the enclosing column."""
    # (IS NOT DISTINCT FROM groups as =: GROUP BY puts NULLs together; the key then meets
    # the enclosing value as IS NOT DISTINCT FROM again)
    others = [p for p in preds if _inner_outer_equality(p, null_safe=True) is None]
    if others:
        inner, preds = _with_domain(inner, preds, others, outer)
    new_keys: list[Expr] = []
    pairs: list[tuple[int, Expr, bool]] = []  # (position among new keys, outer side, safe)
    for p in preds:
        split = _inner_outer_equality(p, null_safe=True)
        assert split is not None
        inner_side, outer_side = split
        if inner_side not in new_keys:
            new_keys.append(inner_side)
        pairs.append((new_keys.index(inner_side), outer_side, null_safe_pair(p) is not None))
    nk, na = len(plan.keys), len(plan.aggs)
    names = tuple(f"$g{i}" for i in range(len(new_keys)))
    agg = Aggregate(inner, plan.keys + tuple(new_keys), plan.key_names + names, plan.aggs,
                    plan.agg_names, plan.state_ttl)
    fields = agg.schema.fields
    order = list(range(nk)) + list(range(nk + len(new_keys), nk + len(new_keys) + na)) + \
        list(range(nk, nk + len(new_keys)))
    proj = Project(agg, tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in order),
                   tuple(fields[i].name for i in order))
    out = []
    for k, outer_side, safe in pairs:
        f = proj.schema.fields[nk + na + k]
        key = ColumnRef(nk + na + k, f.name, f.type)
        out.append(not_distinct(key, outer_side) if safe else
                   Call("eq", (key, outer_side), T.BOOLEAN))
    return proj, out


_COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
_ARITHMETIC = ("add", "subtract", "multiply", "divide", "mod", "negate")


def _null_rejecting(p: Expr) -> bool:
    """Whether ``p`` is a comparison of columns, constants and arithmetic over them: never
    TRUE when an enclosing column it reads is NULL (a NULL domain value joins no row)."""
    if not (isinstance(p, Call) and p.name in _COMPARISONS):
        return False
    return all(isinstance(x, ColumnRef | OuterRef | Literal | Cast) or
               (isinstance(x, Call) and x.name in (*_ARITHMETIC, *_COMPARISONS))
               for x in p.walk())


def _with_domain(inner: LogicalPlan, preds: list[Expr], others: list[Expr],
                 outer: LogicalPlan | None) -> tuple[LogicalPlan, list[Expr]]:
    """``inner`` joined with the distinct values of the enclosing columns ``others`` read,
    on ``others``; the conditions: the equalities in ``preds`` and each domain column equal
    to its enclosing column (IS NOT DISTINCT FROM it when a condition may hold for a NULL
    enclosing value: an OR, IS DISTINCT FROM, COALESCE, ...)."""
    if outer is None:
        msg = ("a correlated condition below an aggregate must be an equality with the "
               f"enclosing query here (found {others[0].sql()})")
        raise NotSupportedError(msg)
    null_safe = not all(_null_rejecting(p) for p in others)
    cols = sorted({x.index for p in others for x in p.walk() if isinstance(x, OuterRef)})
    fields = outer.schema.fields
    domain = Aggregate(outer, tuple(ColumnRef(i, fields[i].name, fields[i].type)
                                    for i in cols),
                       tuple(f"$d{i}" for i in cols), (), ())
    width = len(inner.schema)
    at = {i: width + k for k, i in enumerate(cols)}

    def local(e: Expr) -> Expr:
        if isinstance(e, OuterRef):
            return ColumnRef(at[e.index], f"$d{e.index}", e.type)
        kids = e.children()
        return e.with_children(tuple(local(k) for k in kids)) if kids else e

    joined = Join(inner, domain, "inner", (), (), conjunction([local(p) for p in others]))
    keep = [p for p in preds if not any(p is o for o in others)]
    for i in cols:
        value = ColumnRef(at[i], f"$d{i}", fields[i].type)
        enclosing = OuterRef(i, fields[i].name, fields[i].type)
        keep.append(not_distinct(value, enclosing) if null_safe else
                    Call("eq", (value, enclosing), T.BOOLEAN))
    return joined, keep


def _pull_join(plan: Join, outer: LogicalPlan | None) -> tuple[LogicalPlan, list[Expr]]:
    if any(_has_outer(e) for e in node_expressions(plan)):
        raise NotSupportedError("a join condition inside a subquery may not read the "
                                "enclosing query's columns yet")
    left, lp = pull_up(plan.left, outer)
    right, rp = pull_up(plan.right, outer)
    if rp and plan.kind != "inner":
        raise NotSupportedError(f"a correlated condition under the right side of a "
                                f"{plan.kind.upper()} join in a subquery is not supported yet")
    if lp and plan.kind == "full":
        raise NotSupportedError("a correlated condition under a FULL join in a subquery is "
                                "not supported yet")
    nl, nl2 = len(plan.left.schema), len(left.schema)
    nr, nr2 = len(plan.right.schema), len(right.schema)
    shift = nl2 - nl
    cond = plan.condition
    if cond is not None and shift:
        cond = remap_columns(cond, {i: i + shift if i >= nl else i for i in cond.columns()})
    join = replace(plan, left=left, right=right, condition=cond)
    if plan.kind in ("semi", "anti"):
        return join, lp
    # Restore the join's own column order, with the pulled-up columns after it.
    order = list(range(nl)) + list(range(nl2, nl2 + nr)) + list(range(nl, nl2)) + \
        list(range(nl2 + nr, nl2 + nr2))
    fields = join.schema.fields
    proj = Project(join, tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in order),
                   tuple(f"$j{k}" if k >= nl + nr else fields[i].name
                         for k, i in enumerate(order)))
    where = {old: new for new, old in enumerate(order)}
    preds = [remap_columns(p, where) for p in lp]
    preds += [remap_columns(p, {i: where[i + nl2] for i in p.columns()}) for p in rp]
    return proj, preds


# -- helpers -------------------------------------------------------------------------------
def _over_join(p: Expr, width: int) -> Expr:
    """A pulled-up condition over (enclosing row ++ subquery row)."""
    if isinstance(p, OuterRef):
        return ColumnRef(p.index, p.name, p.type)
    if isinstance(p, ColumnRef):
        return replace(p, index=p.index + width)
    kids = p.children()
    if not kids:
        return p
    return p.with_children(tuple(_over_join(k, width) for k in kids))


def _inner_outer_equality(p: Expr, null_safe: bool = False) -> tuple[Expr, Expr] | None:
    """``inner = outer`` (also ``inner IS NOT DISTINCT FROM outer`` when ``null_safe``) with
    one side reading only the subquery's columns, the other only the enclosing row's ->
    (inner side, outer side)."""
    safe = null_safe_pair(p) if null_safe else None
    if safe is not None:
        a, b = safe
    elif isinstance(p, Call) and p.name == "eq":
        a, b = p.args
    else:
        return None
    for inner, outer in ((a, b), (b, a)):
        if inner.columns() and not _has_outer(inner) and _has_outer(outer) \
                and not outer.columns():
            return inner, outer
    return None


def _has_outer(e: Expr) -> bool:
    return any(isinstance(x, OuterRef) for x in e.walk())


def _correlated(plan: LogicalPlan) -> bool:
    return any(_has_outer(e) for n in walk(plan) for e in node_expressions(n))


def _global_aggregate(plan: LogicalPlan) -> bool:
    """Whether ``plan`` always returns exactly one row (an aggregate without keys)."""
    while isinstance(plan, Project):
        plan = plan.input
    return isinstance(plan, Aggregate) and not plan.keys


def _unique_on(plan: LogicalPlan, keys: list[Expr]) -> bool:
    """Whether ``plan`` returns at most one row per value of ``keys`` (column references)."""
    cols = {k.index for k in keys if isinstance(k, ColumnRef)}
    while True:
        match plan:
            case Project():
                cols = {plan.exprs[i].index for i in cols
                        if isinstance(plan.exprs[i], ColumnRef)}
                plan = plan.input
            case Filter():
                plan = plan.input
            case Aggregate():
                return set(range(len(plan.keys))) <= cols
            case Limit() | Sort() if plan.fetch is not None and plan.fetch <= 1:
                return True
            case _:
                return False


def _single_value(plan: LogicalPlan, keys: list[Expr], m: int = 1) -> LogicalPlan:
    """``plan`` (its value in its first ``m`` columns) reduced to one row per key, failing
    at run time when a key has more than one row (a scalar subquery returned several)."""
    fields = plan.schema.fields[:m]
    aggs = (AggCall("count_star", (), T.BIGINT),
            *(AggCall("min", (ColumnRef(j, f.name, f.type),), f.type)
              for j, f in enumerate(fields)))
    agg = Aggregate(plan, tuple(keys), tuple(f"$k{i}" for i in range(len(keys))), aggs,
                    ("$rows", *(f"$value{j}" for j in range(m))))
    n = len(keys)
    rows = ColumnRef(n, "$rows", T.BIGINT)
    checked = tuple(Call("scalar_subquery_value",
                         (rows, ColumnRef(n + 1 + j, f"$value{j}", f.type)), f.type)
                    for j, f in enumerate(fields))
    key_cols = tuple(ColumnRef(i, f"$k{i}", k.dtype) for i, k in enumerate(keys))
    return Project(agg, (*checked, *key_cols),
                   (*(f"$value{j}" for j in range(m)), *(f"$k{i}" for i in range(n))))


def _peel_outer_select(plan: LogicalPlan) -> tuple[list[Expr] | None, LogicalPlan, int]:
    """A subquery whose SELECT list reads the enclosing row: (its values over the columns
    they read (``ColumnRef`` j: the j-th of them) and the enclosing row (``OuterRef``), the
    subquery giving just those columns and a row marker, TRUE on each of its rows, last;
    how many columns that is). Otherwise (None, ``plan``, its width)."""
    if not (isinstance(plan, Project) and any(_has_outer(e) for e in plan.exprs)):
        return None, plan, len(plan.schema)
    fields = plan.input.schema.fields
    needed = sorted({i for e in plan.exprs for i in e.columns()})
    peeled = Project(plan.input, (*(ColumnRef(i, fields[i].name, fields[i].type)
                                    for i in needed), Literal(True, T.BOOLEAN)),
                     (*(f"$s{i}" for i in needed), "$row"))
    at = {i: k for k, i in enumerate(needed)}
    return [remap_columns(e, at) for e in plan.exprs], peeled, len(needed) + 1


def _with_flag(plan: LogicalPlan) -> LogicalPlan:
    fields = plan.schema.fields
    refs = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields))
    return Project(plan, (*refs, Literal(True, T.BOOLEAN)),
                   (*(f"$c{i}" for i in range(len(fields))), "$matched"))


def _distinct(plan: LogicalPlan, keys: list[Expr]) -> LogicalPlan:
    return Aggregate(plan, tuple(keys), tuple(f"$k{i}" for i in range(len(keys))), (), ())


def _first_columns(plan: LogicalPlan, width: int) -> LogicalPlan:
    fields = plan.schema.fields
    if len(fields) == width:
        return plan
    return Project(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type)
                               for i in range(width)),
                   tuple(fields[i].name for i in range(width)))


def _empty_group_value(plan: LogicalPlan) -> Expr | None:
    """What a scalar subquery over an aggregate without keys returns for no input rows
    (COUNT is 0, other aggregates NULL), as a constant expression; None if it is not such
    an aggregate."""
    values = _empty_group_values(plan)
    return values[0] if values is not None else None


def _empty_group_values(plan: LogicalPlan) -> list[Expr] | None:
    """Each column's value of an aggregate without keys over no input rows (see
    _empty_group_value)."""
    exprs: list[Expr] | None = None
    node = plan
    chain: list[Project] = []
    while isinstance(node, Project):
        chain.append(node)
        node = node.input
    if not isinstance(node, Aggregate) or node.keys:
        return None
    exprs = [Literal(0, T.BIGINT) if a.func in ("count", "count_star") else Literal(None, a.type)
             for a in node.aggs]
    for proj in reversed(chain):
        exprs = [substitute(e, tuple(exprs)) for e in proj.exprs]
    return exprs


def _cast(e: Expr, t: pa.DataType) -> Expr:
    if e.dtype == t:
        return e
    if isinstance(e, Literal) and e.value is None:
        return Literal(None, t)
    return Cast(e, t)
