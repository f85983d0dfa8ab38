"""Bind a sqlglot query AST into a logical plan: names, types, aggregates, joins, sorting."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn, coerce, literal
from sqlengine.errors import BindError, NotSupportedError, PlanError
from sqlengine.parser import node_span, parse_query
from sqlengine.plan.expressions import (
    AggCall,
    Call,
    ColumnRef,
    Expr,
    Literal,
    conjunction,
    conjuncts,
)
from sqlengine.plan.nodes import (
    Aggregate,
    Field,
    Filter,
    Join,
    Limit,
    LogicalPlan,
    Project,
    Scan,
    Schema,
    Sort,
    SortKey,
    SourceSpec,
    Union,
    Values,
)

if TYPE_CHECKING:
    from sqlengine.catalog import Catalog
    from sqlengine.statements import QueryText

_MAX_VIEW_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Relation:
    """A bound FROM item or query: its plan and the scope it exposes."""

    plan: LogicalPlan
    scope: Scope


def bind_query(tree: exp.Expression, catalog: Catalog, query: QueryText, script: str,
               params: dict[str, object] | None = None,
               positional: list[object] | None = None) -> LogicalPlan:
    """Bind a parsed query to a logical plan.

    Raises:
        BindError: unknown names, type errors (with span).
        NotSupportedError: valid SQL that sqlengine does not run yet.
    """
    binder = Binder(catalog, query, script, params, positional, depth=0)
    return binder.query(tree, ctes={}).plan


class Binder:
    def __init__(self, catalog: Catalog, query: QueryText, script: str,
                 params: dict[str, object] | None, positional: list[object] | None,
                 depth: int) -> None:
        self.catalog = catalog
        self.query_text = query
        self.script = script
        self.depth = depth
        self.exprs = ExprBinder(query, script, params, positional)

    def error(self, cls: type, msg: str, node: exp.Expression) -> Exception:
        return cls(msg, span=node_span(node, self.query_text, self.script), sql=self.script)

    # -- queries ---------------------------------------------------------------------------
    def query(self, node: exp.Expression, ctes: dict[str, Relation]) -> Relation:
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            if with_.args.get("recursive"):
                raise self.error(NotSupportedError, "WITH RECURSIVE is not supported yet", node)
            ctes = dict(ctes)
            for cte in with_.expressions:
                rel = self.query(cte.this, ctes)
                name = cte.alias
                cols = [c.name for c in (cte.args["alias"].columns or [])] \
                    if cte.args.get("alias") else []
                ctes[name.lower()] = self._rename(rel, name, cols, cte)
        if isinstance(node, exp.Select):
            return self.select(node, ctes)
        if isinstance(node, exp.Union):
            return self.union(node, ctes)
        if isinstance(node, exp.Subquery):
            inner = self.query(node.this, ctes)
            return self._order_limit(node, inner, ctes)
        if isinstance(node, exp.Values):
            return self.values(node)
        if isinstance(node, exp.Intersect | exp.Except):
            raise self.error(NotSupportedError, f"{node.key.upper()} is not supported yet", node)
        raise self.error(NotSupportedError, f"unsupported query {node.key.upper()}", node)

    def union(self, node: exp.Union, ctes: dict[str, Relation]) -> Relation:
        left = self.query(node.this, ctes)
        right = self.query(node.expression, ctes)
        lf, rf = left.plan.schema.fields, right.plan.schema.fields
        if len(lf) != len(rf):
            raise self.error(BindError, f"UNION inputs have {len(lf)} and {len(rf)} columns",
                             node)
        types = []
        for a, b in zip(lf, rf):
            try:
                types.append(T.common_type([a.type, b.type], f"UNION column {a.name!r}"))
            except BindError as e:
                raise self.error(BindError, e.message, node) from None
        inputs = []
        for rel in (left, right):
            plan = rel.plan
            if [f.type for f in plan.schema.fields] != types:
                exprs = tuple(coerce(ColumnRef(i, f.name, f.type), t)
                              for i, (f, t) in enumerate(zip(plan.schema.fields, types)))
                plan = Project(plan, exprs, tuple(f.name for f in lf))
            inputs.append(plan)
        plan: LogicalPlan = Union(tuple(inputs))
        if node.args.get("distinct"):
            plan = _distinct(plan)
        rel = Relation(plan, _scope_of(plan, None))
        return self._order_limit(node, rel, ctes)

    def values(self, node: exp.Values) -> Relation:
        from sqlengine.optimizer.rules.fold_constants import fold_expr

        rows = []
        for tup in node.expressions:
            rows.append([fold_expr(self.exprs.bind(e, Scope(()))) for e in tup.expressions])
        if not rows:
            raise self.error(BindError, "VALUES needs at least one row", node)
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise self.error(BindError, "VALUES rows have different lengths", node)
        types = [T.common_type([r[i].dtype for r in rows], "VALUES column") for i in range(width)]
        types = [T.INT if t == T.NULL else t for t in types]
        for r in rows:
            for e in r:
                if not isinstance(e, Literal):
                    raise self.error(NotSupportedError, "VALUES holds constants only", node)
        names = [f"EXPR${i}" for i in range(width)]
        alias = node.args.get("alias")
        if alias is not None and alias.columns:
            names = [c.name for c in alias.columns]
        schema = Schema(tuple(Field(n, t) for n, t in zip(names, types)))
        values_rows = tuple(tuple(_cast_value(e, t) for e, t in zip(r, types)) for r in rows)
        plan = Values(values_rows, schema)
        return Relation(plan, _scope_of(plan, alias.name if alias is not None else None))

    # -- SELECT ----------------------------------------------------------------------------
    def select(self, node: exp.Select, ctes: dict[str, Relation]) -> Relation:
        from_ = node.args.get("from_") or node.args.get("from")
        if from_ is not None:
            rel = self.from_item(from_.this, ctes)
            for join in node.args.get("joins") or []:
                rel = self.join(rel, join, ctes)
        else:
            if node.args.get("joins"):
                raise self.error(BindError, "JOIN without FROM", node)
            rel = Relation(Values(((),), Schema(())), Scope(()))

        where = node.args.get("where")
        if where is not None:
            _no_aggregates(self, where.this, "WHERE")
            pred = self.exprs.bind(where.this, rel.scope)
            _require_boolean(self, pred, where.this, "WHERE")
            rel = Relation(Filter(rel.plan, coerce(pred, T.BOOLEAN)), rel.scope)

        items = self._expand_stars(node.expressions, rel.scope, node)
        group = node.args.get("group")
        having = node.args.get("having")
        order = node.args.get("order")
        has_aggs = any(_has_aggregate(e) for e, _ in items) or (
            having is not None and _has_aggregate(having.this))
        windows = [n for e, _ in items for n in e.walk() if isinstance(n, exp.Window)]
        if windows:
            if group is not None or has_aggs:
                raise self.error(NotSupportedError, "window functions together with GROUP BY "
                                 "are not supported yet; aggregate in a subquery first",
                                 windows[0])
            if isinstance(windows[0].this, exp.AggFunc):
                rel = self._over(rel, windows)
            else:
                rel = self._rank(rel, windows)
        if group is not None or has_aggs:
            return self._aggregate_select(node, rel, items, group, having, order, ctes)
        if having is not None:
            raise self.error(BindError, "HAVING needs GROUP BY or an aggregate", having)

        try:
            exprs = [self.exprs.bind(e, rel.scope) for e, _ in items]
        finally:
            self.exprs.intercept = None
        names = _unique_names([n for _, n in items])
        return self._finish_select(node, rel, exprs, names, [e for e, _ in items], order)

    def _over(self, rel: Relation, windows: list[exp.Window]) -> Relation:
        """Aggregates OVER a rowtime-ordered frame, as an OverAggregate node."""
        from sqlengine.bind_expr import interval_literal
        from sqlengine.plan.nodes import OverAggregate

        w = windows[0]

        def spec_of(x: exp.Window) -> tuple:
            return (tuple(x.args.get("partition_by") or []), x.args.get("order"),
                    x.args.get("spec"))

        if any(spec_of(x) != spec_of(w) for x in windows[1:]):
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
                preceding = int(interval_literal(start, self.exprs).value.total_seconds()
                                * 1000)
            elif isinstance(start, exp.Literal) and not start.is_string:
                if frame != "rows":
                    raise self.error(BindError, "a row-count bound needs a ROWS frame", start)
                preceding = int(str(start.this))
            elif str(start).upper() != "UNBOUNDED":
                raise self.error(NotSupportedError, f"unsupported frame start {start}", w)
        partition = tuple(self.exprs.bind(p, rel.scope) for p in w.args.get("partition_by")
                          or [])
        aggs = tuple(self._agg_call(x.this, rel.scope) for x in windows)
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

    def _rank(self, rel: Relation, windows: list[exp.Window]) -> Relation:
        """ROW_NUMBER() OVER (...) as a Rank node; the select item then reads its column."""
        from sqlengine.plan.nodes import Rank

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
        keys = tuple(_sort_key(o, self.exprs.bind(o.this, rel.scope))  # type: ignore[arg-type]
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

    def _finish_select(self, node: exp.Select, rel: Relation, exprs: list[Expr],
                       names: list[str], item_nodes: list[exp.Expression],
                       order: exp.Order | None) -> Relation:
        # ORDER BY may name output aliases, output positions, or input expressions; the
        # latter ride along as hidden columns that a final projection removes.
        keys: list[SortKey] = []
        hidden: list[Expr] = []
        if order is not None:
            for o in order.expressions:
                idx = self._order_target(o.this, names, item_nodes)
                if idx is None:
                    if node.args.get("distinct"):
                        raise self.error(BindError, "ORDER BY expressions must appear in the "
                                         "SELECT DISTINCT list", o)
                    e = self.exprs.bind(o.this, rel.scope)
                    idx = len(exprs) + len(hidden)
                    hidden.append(e)
                ty = (exprs + hidden)[idx].dtype
                keys.append(_sort_key(o, ColumnRef(idx, _hidden_name(names, idx), ty)))
        all_names = [_hidden_name(names, i) for i in range(len(exprs) + len(hidden))]
        plan: LogicalPlan = Project(rel.plan, tuple(exprs + hidden), tuple(all_names))
        if node.args.get("distinct"):
            plan = _distinct(plan)
        plan = self._apply_sort_limit(node, plan, keys)
        if hidden:
            plan = Project(plan, tuple(ColumnRef(i, n, f.type) for i, (n, f) in
                                       enumerate(zip(names, plan.schema.fields))), tuple(names))
        return Relation(plan, _scope_of(plan, None, rel.scope, exprs))

    def _order_target(self, node: exp.Expression, names: list[str],
                      items: list[exp.Expression]) -> int | None:
        if isinstance(node, exp.Literal) and not node.is_string:
            pos = int(str(node.this))
            if not 1 <= pos <= len(names):
                raise self.error(BindError, f"ORDER BY position {pos} is not in the select "
                                 "list", node)
            return pos - 1
        if isinstance(node, exp.Column) and not node.table:
            hits = [i for i, n in enumerate(names) if n.lower() == node.name.lower()]
            if len(hits) == 1:
                return hits[0]
        for i, item in enumerate(items):
            if item == node:
                return i
        return None

    def _apply_sort_limit(self, node: exp.Expression, plan: LogicalPlan,
                          keys: list[SortKey]) -> LogicalPlan:
        fetch, offset = self._limit_offset(node)
        if keys:
            return Sort(plan, tuple(keys), fetch, offset)
        if fetch is not None or offset:
            return Limit(plan, fetch, offset)
        return plan

    def _limit_offset(self, node: exp.Expression) -> tuple[int | None, int]:
        fetch = offset = None
        limit = node.args.get("limit")
        if limit is not None:
            fetch = self._const_int(limit.expression if limit.expression is not None
                                    else limit.this, "LIMIT")
        off = node.args.get("offset")
        if off is not None:
            offset = self._const_int(off.expression if off.expression is not None
                                     else off.this, "OFFSET")
        return fetch, offset or 0

    def _const_int(self, node: exp.Expression, what: str) -> int:
        e = self.exprs.bind(node, Scope(()))
        if not isinstance(e, Literal) or not isinstance(e.value, int) or e.value < 0:
            raise self.error(BindError, f"{what} must be a non-negative integer constant", node)
        return e.value

    def _order_limit(self, node: exp.Expression, rel: Relation,
                     ctes: dict[str, Relation]) -> Relation:
        order = node.args.get("order")
        keys = []
        if order is not None:
            names = rel.plan.schema.names()
            for o in order.expressions:
                idx = self._order_target(o.this, names, [])
                if idx is None:
                    e = self.exprs.bind(o.this, rel.scope)
                    if not isinstance(e, ColumnRef):
                        raise self.error(NotSupportedError, "ORDER BY of a set operation takes "
                                         "output columns", o)
                    idx = e.index
                f = rel.plan.schema.fields[idx]
                keys.append(_sort_key(o, ColumnRef(idx, f.name, f.type)))
        plan = self._apply_sort_limit(node, rel.plan, keys)
        return Relation(plan, rel.scope) if plan is not rel.plan else rel

    def _expand_stars(self, items: list[exp.Expression], scope: Scope,
                      node: exp.Expression) -> list[tuple[exp.Expression, str]]:
        out: list[tuple[exp.Expression, str]] = []
        for i, item in enumerate(items):
            star_table = None
            if isinstance(item, exp.Star):
                star_table = ""
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
                star_table = item.table
            if star_table is not None:
                if star_table and star_table.lower() not in scope.qualifiers():
                    raise self.error(BindError, f"unknown table or alias {star_table!r}", item)
                for c in scope.columns:
                    if c.name.startswith("$") or (c.using_duplicate and not star_table):
                        continue
                    if not star_table or (c.qualifier or "").lower() == star_table.lower():
                        col = exp.Column(this=exp.to_identifier(c.name, quoted=True),
                                         table=exp.to_identifier(c.qualifier, quoted=True)
                                         if c.qualifier else None)
                        out.append((col, c.name))
                continue
            name = item.alias_or_name if isinstance(item, exp.Alias | exp.Column) else ""
            if isinstance(item, exp.Alias):
                name = item.alias
            out.append((item.this if isinstance(item, exp.Alias) else item,
                        name or f"EXPR${i}"))
        if not out:
            raise self.error(BindError, "SELECT list is empty", node)
        return out

    # -- GROUP BY --------------------------------------------------------------------------
    def _aggregate_select(self, node: exp.Select, rel: Relation,
                          items: list[tuple[exp.Expression, str]], group: exp.Group | None,
                          having: exp.Having | None, order: exp.Order | None,
                          ctes: dict[str, Relation]) -> Relation:
        group_nodes = list(group.expressions) if group is not None else []
        for g in group_nodes:
            _no_aggregates(self, g, "GROUP BY")
        legacy = [g for g in group_nodes if _group_window_kind(g) is not None]
        window_aux: dict[str, int] = {}
        if legacy:
            rel, group_nodes, window_aux = self._group_window(rel, group_nodes, legacy)
        keys = [self.exprs.bind(g, rel.scope) if not isinstance(g, int)
                else ColumnRef(g, rel.scope.columns[g].name, rel.scope.columns[g].type)
                for g in group_nodes]
        key_names = []
        for g, k in zip(group_nodes, keys):
            key_names.append(k.name if isinstance(k, ColumnRef) else g.sql())
        key_names = _unique_names(key_names)
        aggs: list[AggCall] = []
        agg_nodes: list[exp.Expression] = []
        n_keys = len(keys)

        def intercept(n: exp.Expression) -> Expr | None:
            aux = _group_window_aux(n)
            if aux is not None and window_aux:
                pos = window_aux[aux]
                ref = ColumnRef(pos, key_names[pos], keys[pos].dtype)
                if aux == "rowtime":  # TUMBLE_ROWTIME: the window's last millisecond
                    one_ms = Literal(dt.timedelta(milliseconds=1), pa.duration("ms"))
                    return Call("subtract", (ref, one_ms), ref.dtype)
                return ref
            for i, g in enumerate(group_nodes):
                if not isinstance(g, int) and n == g:
                    return ColumnRef(i, key_names[i], keys[i].dtype)
            if isinstance(n, exp.Column):
                # A bare column equal to a grouped column (possibly written differently).
                e = self._bind_plain(n, rel.scope)
                for i, k in enumerate(keys):
                    if e == k:
                        return ColumnRef(i, key_names[i], k.dtype)
                raise self.error(BindError, f"column {n.sql()!r} must appear in GROUP BY or "
                                 "be used in an aggregate function", n)
            base = n.this if isinstance(n, exp.Filter) else n
            if isinstance(base, exp.AggFunc):
                for j, an in enumerate(agg_nodes):
                    if an == n:
                        return ColumnRef(n_keys + j, f"$agg{j}", aggs[j].type)
                call = self._agg_call(n, rel.scope)
                aggs.append(call)
                agg_nodes.append(n)
                j = len(aggs) - 1
                return ColumnRef(n_keys + j, f"$agg{j}", call.type)
            return None

        self.exprs.intercept = intercept
        try:
            exprs = [self.exprs.bind(e, Scope(())) for e, _ in items]
            having_expr = None
            if having is not None:
                having_expr = self.exprs.bind(having.this, Scope(()))
                _require_boolean(self, having_expr, having.this, "HAVING")
            order_exprs: list[Expr | None] = []
            names = _unique_names([n for _, n in items])
            if order is not None:
                for o in order.expressions:
                    if self._order_target(o.this, names, [e for e, _ in items]) is None:
                        order_exprs.append(self.exprs.bind(o.this, Scope(())))
                    else:
                        order_exprs.append(None)
        finally:
            self.exprs.intercept = None

        agg_names = [f"$agg{j}" for j in range(len(aggs))]
        plan: LogicalPlan = Aggregate(rel.plan, tuple(keys), tuple(key_names), tuple(aggs),
                                      tuple(agg_names))
        if having_expr is not None:
            plan = Filter(plan, coerce(having_expr, T.BOOLEAN))
        agg_scope = _scope_of(plan, None)
        # Columns of the aggregate output stay visible to ORDER BY by their key names.
        keys_rel = Relation(plan, agg_scope)
        extra = [e for e in order_exprs if e is not None]
        if extra:
            # Hidden ORDER BY expressions over the aggregate output.
            all_exprs = exprs + extra
            hidden_names = names + [f"$h{i}" for i in range(len(extra))]
            proj = Project(plan, tuple(all_exprs), tuple(hidden_names))
            sort_keys = []
            it = iter(range(len(exprs), len(all_exprs)))
            for o, oe in zip(order.expressions, order_exprs):  # type: ignore[union-attr]
                if oe is None:
                    idx = self._order_target(o.this, names, [e for e, _ in items])
                else:
                    idx = next(it)
                f = proj.schema.fields[idx]  # type: ignore[index]
                sort_keys.append(_sort_key(o, ColumnRef(idx, f.name, f.type)))  # type: ignore[arg-type]
            out: LogicalPlan = proj
            if node.args.get("distinct"):
                raise self.error(BindError, "ORDER BY expressions must appear in the SELECT "
                                 "DISTINCT list", order)  # type: ignore[arg-type]
            out = self._apply_sort_limit(node, out, sort_keys)
            out = Project(out, tuple(ColumnRef(i, n, e.dtype) for i, (n, e) in
                                     enumerate(zip(names, exprs))), tuple(names))
            return Relation(out, _scope_of(out, None))
        return self._finish_select(node, keys_rel, exprs, names, [e for e, _ in items], order)

    def _group_window(self, rel: Relation, group_nodes: list, legacy: list
                      ) -> tuple[Relation, list, dict[str, int]]:
        """``GROUP BY TUMBLE(ts, size)`` (and HOP, SESSION): the legacy group windows, as a
        window TVF whose window_start and window_end become grouping keys."""
        from sqlengine.bind_expr import interval_literal
        from sqlengine.plan.nodes import WindowTVF

        if len(legacy) > 1:
            raise self.error(BindError, "only one group window per GROUP BY", legacy[1])
        g = legacy[0]
        kind = _group_window_kind(g)
        args = list(g.expressions)
        want = {"tumble": 2, "hop": 3, "session": 2}[kind]  # type: ignore[index]
        if len(args) != want or not isinstance(args[0], exp.Column):
            raise self.error(BindError, f"{kind.upper()}(time_attr, "  # type: ignore[union-attr]
                             f"{'slide, size' if kind == 'hop' else 'interval'}) expected", g)
        idx = rel.scope.resolve(args[0].name, args[0].table or None)
        if idx is None or not rel.scope.columns[idx].rowtime:
            raise self.error(BindError, f"{args[0].sql()!r} is not a time attribute: group "
                             "windows need a rowtime column (declare a WATERMARK FOR it)",
                             args[0])
        ms = []
        for a in args[1:]:
            if not isinstance(a, exp.Interval):
                raise self.error(BindError, f"{kind.upper()} expects INTERVAL arguments", a)  # type: ignore[union-attr]
            ms.append(int(interval_literal(a, self.exprs).value.total_seconds() * 1000))
        if kind == "hop":
            slide, size = ms
            if size % slide:
                raise self.error(BindError, "HOP size must be a multiple of its slide", g)
        else:
            slide, size = 0, ms[0]
        others = []
        for o in group_nodes:
            if o is g:
                continue
            b = self.exprs.bind(o, rel.scope)
            if isinstance(b, ColumnRef):
                others.append(b.index)
        tvf = WindowTVF(rel.plan, kind, idx, size, slide, 0,  # type: ignore[arg-type]
                        tuple(others) if kind == "session" else ())
        width = len(rel.scope.columns)
        scope = Scope((*rel.scope.columns, ScopeColumn(None, "window_start", pa.timestamp("ms")),
                       ScopeColumn(None, "window_end", pa.timestamp("ms")),
                       ScopeColumn(None, "window_time", pa.timestamp("ms"), True)))
        pos = group_nodes.index(g)
        new_nodes = [*group_nodes[:pos], width, width + 1, *group_nodes[pos + 1:]]
        aux = {"start": pos, "end": pos + 1, "rowtime": pos + 1}
        return Relation(tvf, scope), new_nodes, aux

    def _bind_plain(self, n: exp.Expression, scope: Scope) -> Expr:
        saved, self.exprs.intercept = self.exprs.intercept, None
        try:
            return self.exprs.bind(n, scope)
        finally:
            self.exprs.intercept = saved

    def _agg_call(self, node: exp.Expression, scope: Scope) -> AggCall:
        filt = None
        if isinstance(node, exp.Filter):
            cond = node.expression.this if isinstance(node.expression, exp.Where) \
                else node.expression
            filt = coerce(self._bind_plain(cond, scope), T.BOOLEAN)
            node = node.this
        func = node.key.lower()
        if func not in ("count", "sum", "min", "max", "avg"):
            raise self.error(NotSupportedError, f"aggregate function {func.upper()} is not "
                             "supported yet", node)
        arg = node.this
        distinct = False
        if isinstance(arg, exp.Distinct):
            distinct = True
            if len(arg.expressions) != 1:
                raise self.error(NotSupportedError, f"{func.upper()}(DISTINCT ...) takes one "
                                 "argument", node)
            arg = arg.expressions[0]
        if func == "count" and (arg is None or isinstance(arg, exp.Star)):
            return AggCall("count_star", (), T.BIGINT, False, filt)
        _no_aggregates(self, arg, "an aggregate argument")
        bound = self._bind_plain(arg, scope)
        t = bound.dtype
        if func == "count":
            return AggCall("count", (bound,), T.BIGINT, distinct, filt)
        if func in ("sum", "avg"):
            if t == T.NULL:
                bound, t = coerce(bound, T.INT), T.INT
            if not T.is_numeric(t):
                raise self.error(BindError, f"{func.upper()} needs a numeric argument, got "
                                 f"{T.type_name(t)}", node)
            out = T.sum_type(t) if func == "sum" else T.avg_type(t)
            return AggCall(func, (bound,), out, distinct, filt)
        return AggCall(func, (bound,), t, distinct, filt)

    # -- FROM ------------------------------------------------------------------------------
    def from_item(self, node: exp.Expression, ctes: dict[str, Relation]) -> Relation:
        if isinstance(node, exp.Table):
            if isinstance(node.this, exp.Anonymous | exp.Func):
                return self.window_tvf(node, ctes)
            name = ".".join(p.name for p in node.parts)
            alias = node.alias or node.name
            key = node.name.lower()
            if not node.args.get("db") and key in ctes:
                rel = ctes[key]
                return Relation(rel.plan, _requalify(rel.scope, alias))
            return self.table(name, alias, node)
        if isinstance(node, exp.Subquery):
            rel = self.query(node.this, ctes)
            rel = self._order_limit(node, rel, ctes)
            alias = node.alias or None
            cols = [c.name for c in node.args["alias"].columns] \
                if node.args.get("alias") is not None and node.args["alias"].columns else []
            return self._rename(rel, alias, cols, node)
        if isinstance(node, exp.Values):
            return self.values(node)
        raise self.error(NotSupportedError, f"unsupported FROM item {node.sql()!r}", node)

    def window_tvf(self, node: exp.Table, ctes: dict[str, Relation]) -> Relation:
        """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`` and HOP, CUMULATE, SESSION."""
        from sqlengine.bind_expr import interval_literal
        from sqlengine.dialect import TableArg
        from sqlengine.plan.nodes import WindowTVF

        outer = node.this
        name = (outer.name if isinstance(outer, exp.Anonymous) else outer.sql_name()).upper()
        args = list(outer.expressions) if isinstance(outer, exp.Anonymous) else []
        if name != "TABLE" or len(args) != 1 or not isinstance(args[0], exp.Anonymous):
            raise self.error(NotSupportedError, "table functions other than the window "
                             "functions TUMBLE, HOP, CUMULATE and SESSION are not supported",
                             node)
        call = args[0]
        kind = str(call.this).lower()
        wants = {"tumble": (3, 4), "hop": (4, 5), "cumulate": (4, 5), "session": (3, 3)}
        if kind not in wants:
            raise self.error(NotSupportedError, f"unknown window function {kind.upper()}",
                             call)
        params = list(call.expressions)
        lo, hi = wants[kind]
        if not lo <= len(params) <= hi:
            raise self.error(BindError, f"{kind.upper()} takes {lo} to {hi} arguments "
                             f"(TABLE t, DESCRIPTOR(col), ...), got {len(params)}", call)
        data, desc = params[0], params[1]
        if not isinstance(data, TableArg):
            raise self.error(BindError, f"the first argument of {kind.upper()} must be "
                             "TABLE <name>", data)
        table_node = data.this
        tname = table_node.name
        if tname.lower() in ctes and not table_node.args.get("db"):
            rel = ctes[tname.lower()]
            rel = Relation(rel.plan, _requalify(rel.scope, tname))
        else:
            rel = self.table(".".join(p.name for p in table_node.parts), tname, table_node)
        if not (isinstance(desc, exp.Anonymous) and str(desc.this).upper() == "DESCRIPTOR"
                and len(desc.expressions) == 1):
            raise self.error(BindError, f"the second argument of {kind.upper()} must be "
                             "DESCRIPTOR(<time column>)", desc)
        col = desc.expressions[0]
        idx = rel.scope.resolve(col.name, None)
        if idx is None:
            raise self.error(BindError, f"unknown column {col.name!r} in DESCRIPTOR", col)
        proctime = rel.scope.columns[idx].proctime
        if not rel.scope.columns[idx].rowtime and not proctime:
            raise self.error(BindError, f"column {col.name!r} is not a time attribute: window "
                             "functions need a rowtime column (declare a WATERMARK FOR it) "
                             "or PROCTIME()", col)
        if proctime and kind == "session":
            raise self.error(NotSupportedError, "SESSION windows on processing time are not "
                             "supported yet", desc)
        intervals = []
        for p in params[2:]:
            if not isinstance(p, exp.Interval):
                raise self.error(BindError, f"{kind.upper()} expects INTERVAL arguments", p)
            intervals.append(int(interval_literal(p, self.exprs).value.total_seconds() * 1000))
        n_sizes = 2 if kind in ("hop", "cumulate") else 1
        for ms, p in zip(intervals[:n_sizes], params[2:]):
            if ms <= 0:
                raise self.error(BindError, "window sizes must be positive", p)
        partition: tuple[int, ...] = ()
        if data.args.get("partition_by"):
            if kind != "session":
                raise self.error(BindError, "PARTITION BY is only for SESSION windows", data)
            keys = []
            for c in data.args["partition_by"]:
                k = rel.scope.resolve(c.name, None)
                if k is None:
                    raise self.error(BindError, f"unknown column {c.name!r}", c)
                keys.append(k)
            partition = tuple(keys)
        if kind == "tumble":
            size, slide, offset = intervals[0], 0, intervals[1] if len(intervals) > 1 else 0
        elif kind == "session":
            size, slide, offset = intervals[0], 0, 0
        else:
            slide, size = intervals[0], intervals[1]
            offset = intervals[2] if len(intervals) > 2 else 0
            if size % slide:
                what = "slide" if kind == "hop" else "step"
                raise self.error(BindError, f"{kind.upper()} size must be a multiple of its "
                                 f"{what}", call)
        plan = WindowTVF(rel.plan, kind, idx, size, slide, offset, partition, proctime)
        alias = node.alias or None
        scope = Scope(tuple(
            replace(c, qualifier=alias or c.qualifier) for c in rel.scope.columns) + tuple(
            ScopeColumn(alias, f.name, f.type, f.rowtime)
            for f in plan.schema.fields[len(rel.scope.columns):]))
        return Relation(plan, scope)

    def table(self, name: str, alias: str, node: exp.Expression) -> Relation:
        view = self.catalog.view(name)
        if view is not None:
            if self.depth >= _MAX_VIEW_DEPTH:
                raise self.error(PlanError, f"view {name!r} refers to itself", node)
            sub = Binder(self.catalog, view.query, view.script, None, None, self.depth + 1)
            tree = parse_query(view.query, view.script)
            rel = sub.query(tree, {})
            return self._rename(rel, alias, list(view.columns), node)
        table = self.catalog.table(name)
        if table is None:
            near = [n for n in self.catalog.names() if n.lower().startswith(name.lower()[:3])]
            hint = f"; known tables: {', '.join(near[:5])}" if near else ""
            raise self.error(BindError, f"unknown table {name!r}{hint}", node)
        from sqlengine.connectors import is_bounded

        watermark = None
        if table.watermark is not None:
            from sqlengine.bind_expr import ExprBinder

            col, node_wm = table.watermark
            table_scope = _scope_of(Scan(SourceSpec(table.name, "", (), True), table.schema),
                                    None)
            wm_expr = ExprBinder(self.query_text, self.script, None, None).bind(node_wm,
                                                                                 table_scope)
            watermark = (table_scope.resolve(col, None), wm_expr)
        spec = SourceSpec(table.name, table.connector, table.options, is_bounded(table),
                          watermark)  # type: ignore[arg-type]
        plan: LogicalPlan = Scan(spec, table.schema)
        if table.computed:
            plan = _computed_columns(self, table, plan)
        return Relation(plan, _scope_of(plan, alias))

    def _rename(self, rel: Relation, alias: str | None, cols: list[str],
                node: exp.Expression) -> Relation:
        plan = rel.plan
        if cols:
            if len(cols) != len(plan.schema):
                raise self.error(BindError, f"{len(cols)} column names given for "
                                 f"{len(plan.schema)} columns", node)
            plan = Project(plan, tuple(ColumnRef(i, f.name, f.type) for i, f in
                                       enumerate(plan.schema.fields)), tuple(cols))
        return Relation(plan, _scope_of(plan, alias))

    def join(self, left: Relation, join: exp.Join, ctes: dict[str, Relation]) -> Relation:
        right = self.from_item(join.this, ctes)
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        if kind == "CROSS" or (join.args.get("on") is None and not join.args.get("using")):
            raise self.error(NotSupportedError, "joins need an ON condition with an equality "
                             "(cross joins are not supported yet)", join)
        if side == "FULL":
            raise self.error(NotSupportedError, "FULL OUTER JOIN is not supported yet", join)
        if kind in ("SEMI", "ANTI"):
            raise self.error(NotSupportedError, f"{kind} JOIN is not supported yet", join)
        swapped = side == "RIGHT"
        if swapped:
            left, right = right, left
        scope = Scope(left.scope.columns + right.scope.columns)
        n_left = len(left.scope.columns)
        if join.args.get("using"):
            parts = []
            for ident in join.args["using"]:
                name = ident.name
                li, ri = left.scope.resolve(name, None), right.scope.resolve(name, None)
                if li is None or ri is None:
                    raise self.error(BindError, f"USING column {name!r} is not on both sides",
                                     ident)
                lc, rc = left.scope.columns[li], right.scope.columns[ri]
                parts.append((ColumnRef(li, lc.name, lc.type),
                               ColumnRef(n_left + ri, rc.name, rc.type)))
            cond_parts = [_eq(a, b) for a, b in parts]
            dup = {b.index - n_left for _, b in parts}
            right = Relation(right.plan, Scope(tuple(
                replace(c, using_duplicate=True) if i in dup else c
                for i, c in enumerate(right.scope.columns))))
            scope = Scope(left.scope.columns + right.scope.columns)
        else:
            on = self.exprs.bind(join.args["on"], scope)
            _require_boolean(self, on, join.args["on"], "ON")
            cond_parts = conjuncts(on)
        lkeys: list[Expr] = []
        rkeys: list[Expr] = []
        residual: list[Expr] = []
        for c in cond_parts:
            pair = _equi_pair(c, n_left)
            if pair is None:
                residual.append(c)
                continue
            a, b = pair
            common = T.common_type([a.dtype, b.dtype], "join keys")
            lkeys.append(coerce(a, common))
            rkeys.append(coerce(_shift(b, -n_left), common))
        if not lkeys:
            raise self.error(NotSupportedError, "joins need at least one equality between the "
                             "two sides in ON", join)
        cond = conjunction(residual)
        plan: LogicalPlan = Join(left.plan, right.plan, "left" if side in ("LEFT", "RIGHT")
                                 else "inner", tuple(lkeys), tuple(rkeys), cond)
        out_scope = scope
        if swapped:
            # Restore the written column order: the (original) left side first.
            n_right = len(right.scope.columns)
            order = list(range(n_left, n_left + n_right)) + list(range(n_left))
            fields = plan.schema.fields
            plan = Project(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type)
                                       for i in order), tuple(fields[i].name for i in order))
            out_scope = Scope(tuple(scope.columns[i] for i in order))
        return Relation(plan, out_scope)


# -- helpers -----------------------------------------------------------------------------
_GROUP_WINDOWS = ("tumble", "hop", "session")


def _func_name(n: exp.Expression) -> str | None:
    if isinstance(n, exp.Anonymous):
        return str(n.this).lower()
    return None


def _group_window_kind(n: object) -> str | None:
    name = _func_name(n) if isinstance(n, exp.Expression) else None
    return name if name in _GROUP_WINDOWS else None


def _group_window_aux(n: exp.Expression) -> str | None:
    """'start', 'end' or 'rowtime' for TUMBLE_START(...), HOP_END(...), SESSION_ROWTIME(...)."""
    name = _func_name(n)
    if name is None or "_" not in name:
        return None
    kind, _, part = name.partition("_")
    if kind in _GROUP_WINDOWS and part in ("start", "end", "rowtime"):
        return part
    return None


def _hidden_name(names: list[str], idx: int) -> str:
    return names[idx] if idx < len(names) else f"$h{idx}"


def _eq(a: Expr, b: Expr) -> Expr:
    from sqlengine.plan.expressions import Call

    return Call("eq", (a, b), T.BOOLEAN)


def _equi_pair(c: Expr, n_left: int) -> tuple[Expr, Expr] | None:
    from sqlengine.plan.expressions import Call

    if not (isinstance(c, Call) and c.name == "eq"):
        return None
    a, b = c.args
    ca, cb = a.columns(), b.columns()
    if not ca or not cb:
        return None
    if max(ca) < n_left <= min(cb):
        return a, b
    if max(cb) < n_left <= min(ca):
        return b, a
    return None


def _shift(e: Expr, by: int) -> Expr:
    from sqlengine.plan.expressions import remap_columns

    return remap_columns(e, {i: i + by for i in e.columns()})


def _sort_key(o: exp.Ordered, ref: ColumnRef) -> SortKey:
    desc = bool(o.args.get("desc"))
    nulls_first = o.args.get("nulls_first")
    if nulls_first is None:
        nulls_first = not desc  # Flink: NULLs are smallest (first ascending, last descending)
    return SortKey(ref, not desc, bool(nulls_first))


def _distinct(plan: LogicalPlan) -> LogicalPlan:
    fields = plan.schema.fields
    keys = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields))
    return Aggregate(plan, keys, tuple(f.name for f in fields), (), ())


def _scope_of(plan: LogicalPlan, alias: str | None, source: Scope | None = None,
              exprs: list[Expr] | None = None) -> Scope:
    cols = []
    for i, f in enumerate(plan.schema.fields):
        rowtime, proctime = f.rowtime, f.proctime
        if source is not None and exprs is not None and i < len(exprs):
            e = exprs[i]
            rowtime = isinstance(e, ColumnRef) and source.columns[e.index].rowtime
            proctime = proctime or (isinstance(e, ColumnRef) and
                                    source.columns[e.index].proctime)
        cols.append(ScopeColumn(alias, f.name, f.type, rowtime, proctime))
    return Scope(tuple(cols))


def _requalify(scope: Scope, alias: str) -> Scope:
    return Scope(tuple(replace(c, qualifier=alias) for c in scope.columns))


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for n in names:
        key = n.lower()
        if key in seen:
            seen[key] += 1
            out.append(f"{n}{seen[key] - 1}")
        else:
            seen[key] = 1
            out.append(n)
    return out


def _has_aggregate(node: exp.Expression) -> bool:
    # Aggregates inside OVER (...) are window aggregates, not GROUP BY ones.
    pruned = node.walk(prune=lambda n: isinstance(n, exp.Window | exp.Subquery))
    return any(isinstance(n, exp.AggFunc) for n in pruned
               if not isinstance(n, exp.Window | exp.Subquery))


def _no_aggregates(binder: Binder, node: exp.Expression, where: str) -> None:
    for n in node.walk():
        if isinstance(n, exp.AggFunc):
            raise binder.error(BindError, f"aggregate functions are not allowed in {where}", n)


def _require_boolean(binder: Binder, e: Expr, node: exp.Expression, where: str) -> None:
    if e.dtype not in (T.BOOLEAN, T.NULL):
        raise binder.error(BindError, f"{where} condition must be BOOLEAN, got "
                           f"{T.type_name(e.dtype)}", node)


def _cast_value(e: Expr, t: pa.DataType) -> object:
    assert isinstance(e, Literal)
    if e.value is None or e.dtype == t:
        return e.value
    return pa.array([e.value], e.dtype).cast(t)[0].as_py()


def _computed_columns(binder: Binder, table: object, plan: LogicalPlan) -> LogicalPlan:
    from sqlengine.bind_expr import ExprBinder

    scope = _scope_of(plan, None)
    fields = plan.schema.fields
    exprs: list[Expr] = [ColumnRef(i, f.name, f.type) for i, f in enumerate(fields)]
    names = [f.name for f in fields]
    for name, node in table.computed:  # type: ignore[attr-defined]
        eb = ExprBinder(binder.query_text, binder.script, None, None)
        exprs.append(eb.bind(node, scope))
        names.append(name)
    return Project(plan, tuple(exprs), tuple(names))


__all__ = ["Binder", "Relation", "bind_query", "literal"]
