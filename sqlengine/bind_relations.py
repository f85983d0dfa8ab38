"""Bind what produces relations: queries with their CTEs, UNION, VALUES, FROM items (tables,
views, subqueries) and joins."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import bind_recursive, bind_set_ops, connectors, hints
from sqlengine import types as T
from sqlengine.bind_common import (
    ClauseBinder,
    Relation,
    requalify,
    require_boolean,
    scope_of,
    unread_clause,
)
from sqlengine.bind_computed import computed_columns, source_watermark
from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn, coerce
from sqlengine.bind_hints import no_hint, with_hint
from sqlengine.bind_join_conditions import drop_marks, mark_sides
from sqlengine.bind_lateral import is_lateral_subquery, lateral_join
from sqlengine.bind_sample import sampled
from sqlengine.bind_temporal import temporal_join
from sqlengine.bind_using import natural_columns, using_columns, using_parts
from sqlengine.bind_views import as_created
from sqlengine.connectors import is_bounded
from sqlengine.dialect import Flink
from sqlengine.errors import BindError, NotSupportedError, PlanError
from sqlengine.parser import parse_query
from sqlengine.plan.expressions import (
    Call,
    ColumnRef,
    Expr,
    Literal,
    conjunction,
    conjuncts,
    is_constant,
)
from sqlengine.plan.join_keys import split_condition
from sqlengine.plan.nodes import (
    Field,
    Filter,
    Join,
    LogicalPlan,
    Project,
    Scan,
    Schema,
    SourceSpec,
    Unnest,
    Values,
    unnest_fields,
)
from sqlengine.plan.subquery import has_subquery

if TYPE_CHECKING:
    pass

_MAX_VIEW_DEPTH = 32
# The JOIN clauses binding reads (sqlglot's argument names); any other is refused.
_JOIN_CLAUSES = frozenset({"this", "on", "using", "side", "kind", "hint", "method"})
# The clauses of a table in FROM binding reads; other dialects' are refused by name.
_TABLE_CLAUSES = frozenset({"this", "db", "catalog", "alias", "sample", "version"})
_TABLE_WORDS = {"pivots": "PIVOT / UNPIVOT", "when": "AT / BEFORE (time travel)",
                "changes": "CHANGES", "hints": "WITH (table hints)"}


class RelationBinder(ClauseBinder):
    """Queries, set operations, VALUES, FROM items and joins."""

    def query(self, node: exp.Expression, ctes: dict[str, Relation]) -> Relation:
        with_ = node.args.get("with_") or node.args.get("with")
        if with_ is not None:
            ctes = dict(ctes)
            items = bind_recursive.in_dependency_order(self, with_.expressions) \
                if with_.args.get("recursive") else with_.expressions
            for cte in items:
                name = cte.alias
                cols = [c.name for c in (cte.args["alias"].columns or [])] \
                    if cte.args.get("alias") else []
                if with_.args.get("recursive") and bind_recursive.reads_itself(cte):
                    ctes[name.lower()] = bind_recursive.recursive_cte(self, cte, cols, ctes)
                    continue
                ctes[name.lower()] = self.rename(self.query(cte.this, ctes), name, cols, cte)
        if isinstance(node, exp.Select):
            return self.binder.selects.select(node, ctes)
        if isinstance(node, exp.Union):
            return bind_set_ops.union(self, node, ctes)
        if isinstance(node, exp.Subquery):
            inner = self.query(node.this, ctes)
            return self.binder.selects.order_limit(node, inner)
        if isinstance(node, exp.Values):  # (with its ORDER BY / LIMIT / OFFSET)
            return self.binder.selects.order_limit(node, self.values(node), "VALUES")
        if isinstance(node, exp.Intersect | exp.Except):
            return bind_set_ops.intersect_except(self, node, ctes)
        raise self.error(NotSupportedError, f"unsupported query {node.key.upper()}", node)

    def values(self, node: exp.Values) -> Relation:
        """VALUES rows as bound constant expressions; the optimizer folds them to literals."""
        rows = []
        for tup in node.expressions:
            rows.append([self.exprs.bind(e, Scope(())) for e in tup.expressions])
        if not rows:
            raise self.error(BindError, "VALUES needs at least one row", node)
        width = len(rows[0])
        if any(len(r) != width for r in rows):
            raise self.error(BindError, "VALUES rows have different lengths", node)
        types = [T.column_common_type([r[i].dtype for r in rows], "VALUES column")
                 for i in range(width)]
        types = [T.INT if t == T.NULL else t for t in types]
        for r in rows:
            for e in r:
                if not is_constant(e):
                    raise self.error(NotSupportedError, "VALUES holds constants only", node)
        names = [f"EXPR${i}" for i in range(width)]
        alias = node.args.get("alias")
        if alias is not None and alias.columns:
            names = [c.name for c in alias.columns]
            if len(names) != width:  # (zip cut the longer list without a word)
                raise self.error(BindError, f"{len(names)} column names given for {width} "
                                 "columns", alias)
        schema = Schema(tuple(Field(n, t) for n, t in zip(names, types, strict=True)))
        values_rows = tuple(tuple(_as_type(e, t) for e, t in zip(r, types)) for r in rows)
        plan = Values(values_rows, schema)
        return Relation(plan, scope_of(plan, alias.name if alias is not None else None))

    # -- FROM ------------------------------------------------------------------------------
    def from_item(self, node: exp.Expression, ctes: dict[str, Relation]) -> Relation:
        rel = self._from_item(node, ctes)
        sample = node.args.get("sample")  # (TABLESAMPLE: bind_sample.py)
        return rel if sample is None else Relation(sampled(rel.plan, sample, self.error),
                                                   rel.scope)

    def _from_item(self, node: exp.Expression, ctes: dict[str, Relation]) -> Relation:
        if isinstance(node, exp.Table):
            if node.args.get("version") is not None:
                raise self.error(NotSupportedError, "FOR SYSTEM_TIME AS OF belongs to the "
                                 "right side of a JOIN (a temporal join)",
                                 node.args["version"])
            extra = unread_clause(node, _TABLE_CLAUSES, _TABLE_WORDS)
            if extra is not None:
                raise self.error(NotSupportedError, f"{extra[0]} after table "
                                 f"{node.name!r} is not supported", node)
            if isinstance(node.this, exp.Anonymous | exp.Func):
                return self.binder.windows.window_tvf(node, ctes)
            name = ".".join(p.name for p in node.parts)
            alias = node.alias or node.name
            key = node.name.lower()
            # ``t AS x (c1, c2, ...)`` names every column anew (they were kept, without a word)
            given = node.args["alias"].columns if node.args.get("alias") is not None else None
            if not node.args.get("db") and key in ctes:
                no_hint(node, "a WITH query", self.binder.script)
                rel = ctes[key]
                if given:
                    return self.rename(rel, alias, [c.name for c in given], node)
                return Relation(rel.plan, requalify(rel.scope, alias))
            rel = self.table(name, alias, node)
            return self.rename(rel, alias, [c.name for c in given], node) if given else rel
        if isinstance(node, exp.Subquery) and isinstance(node.this, exp.Table | exp.Subquery):
            return self._parenthesised(node, ctes)
        if isinstance(node, exp.Subquery):
            rel = self.query(node.this, ctes)
            rel = self.binder.selects.order_limit(node, rel)
            sub_alias = node.alias or None
            cols = [c.name for c in node.args["alias"].columns] \
                if node.args.get("alias") is not None and node.args["alias"].columns else []
            return self.rename(rel, sub_alias, cols, node)
        if isinstance(node, exp.Values):
            return self.values(node)
        if isinstance(node, exp.Unnest):
            one = Values(((),), Schema(()))
            return self.unnest(Relation(one, Scope(())), node, outer=False)
        raise self.error(NotSupportedError, "unsupported FROM item "
                         f"{node.sql(dialect=Flink)!r}", node)

    def _parenthesised(self, node: exp.Subquery, ctes: dict[str, Relation]) -> Relation:
        """A parenthesised join, ``(a JOIN b ON ...) JOIN c`` or ``a LEFT JOIN (b JOIN c ON
        ...) ON ...``: its tables keep their own names, as in a FROM list."""
        if node.alias:
            raise self.error(NotSupportedError, "a parenthesised join takes no alias; name "
                             "it in a subquery: (SELECT ... FROM a JOIN b ...) AS x", node)
        inner = node.this.copy()
        joins = inner.args.get("joins") or []
        inner.set("joins", None)
        rel = self.from_item(inner, ctes)
        for join in joins:
            rel = self.join(rel, join, ctes)
        return rel

    def table(self, name: str, alias: str, node: exp.Expression) -> Relation:
        view = self.binder.catalog.view(name)
        if view is not None:
            no_hint(node, "a view", self.binder.script)
            if self.binder.depth >= _MAX_VIEW_DEPTH:
                raise self.error(PlanError, f"view {name!r} refers to itself", node)
            sub = self.binder.nested(view.query, view.script)
            try:
                plan = as_created(view, sub.query(parse_query(view.query, view.script),
                                                  {}).plan)
            except BindError as e:
                if e.span is not None:
                    raise
                raise self.error(BindError, e.message, node) from None
            return self.rename(Relation(plan, scope_of(plan, None)), alias,
                               list(view.columns), node)
        table = self.binder.catalog.table(name)
        if table is None:
            names = self.binder.catalog.names()
            near = [n for n in names if n.lower().startswith(name.lower()[:3])]
            hint = f"; known tables: {', '.join(near[:5])}" if near else ""
            raise self.error(BindError, f"unknown table {name!r}{hint}", node)
        if not connectors.is_source_connector(table.connector):
            raise self.error(PlanError, f"table {name!r}: connector {table.connector!r} "
                             "cannot be read (it only writes)", node)
        detached = self._detached()
        watermark, rowtime_expr = source_watermark(table, detached)
        hint = node.meta.get(hints.META_KEY) if isinstance(node, exp.Table) else None
        if hint is not None:
            table = with_hint(table, hint, self.binder.catalog, self.binder.script)
        spec = SourceSpec(table.name, table.connector, table.options, is_bounded(table),
                          watermark, connectors.is_changelog(table), rowtime_expr)
        plan: LogicalPlan = Scan(spec, table.schema)
        if table.computed:
            plan = computed_columns(table, plan, detached, rowtime_expr is not None)
        return Relation(plan, scope_of(plan, alias))

    def _detached(self) -> ExprBinder:
        """An expression binder for table definitions (no parameters, no intercepts)."""
        return ExprBinder(self.binder.query_text, self.binder.script, None, None)

    def rename(self, rel: Relation, alias: str | None, cols: list[str],
               node: exp.Expression) -> Relation:
        plan = rel.plan
        if cols:
            if len(cols) != len(plan.schema):
                raise self.error(BindError, f"{len(cols)} column names given for "
                                 f"{len(plan.schema)} columns", node)
            plan = Project(plan, tuple(ColumnRef(i, f.name, f.type) for i, f in
                                       enumerate(plan.schema.fields)), tuple(cols))
        return Relation(plan, scope_of(plan, alias))

    # -- UNNEST ----------------------------------------------------------------------------
    def unnest_join(self, left: Relation, join: exp.Join) -> Relation:
        """``CROSS JOIN UNNEST(a)``, ``, UNNEST(a)`` and ``LEFT JOIN UNNEST(a) ON TRUE``: the
        array is read from the left row (a lateral reference)."""
        side = (join.args.get("side") or "").upper()
        on = join.args.get("on")
        if join.args.get("using") or (side and side != "LEFT"):
            raise self.error(NotSupportedError, "UNNEST joins as CROSS JOIN, a comma or "
                             "LEFT JOIN ... ON TRUE", join)
        if on is not None and not (isinstance(on, exp.Boolean) and on.this is True):
            raise self.error(NotSupportedError, "a join with UNNEST takes ON TRUE only (filter "
                             "the unnested rows in WHERE)", on)
        if side == "LEFT" and on is None:
            raise self.error(BindError, "LEFT JOIN needs an ON or USING condition", join)
        return self.unnest(left, join.this, outer=side == "LEFT")

    def unnest(self, left: Relation, node: exp.Unnest | exp.Lateral, outer: bool) -> Relation:
        if isinstance(node, exp.Lateral):
            value, at = self._table_function(node, left)
        else:
            args = list(node.expressions)
            if len(args) != 1:
                raise self.error(NotSupportedError, "UNNEST takes one ARRAY or MAP (unnest "
                                 "several with one UNNEST each)", node)
            value, at = self.exprs.bind(args[0], left.scope), args[0]
        t = value.dtype
        if T.is_multiset(t):  # (each element as many times as it counts, as Flink)
            value = Call("multiset_elements", (value,), T.array_of(t.key_type))
            t = value.dtype
        if not (pa.types.is_list(t) or pa.types.is_map(t)):
            raise self.error(BindError, f"UNNEST needs an ARRAY or a MAP, got "
                             f"{T.type_name(t)}", at)
        made = unnest_fields(t)
        alias = node.args.get("alias")
        offset = node.args.get("offset") if isinstance(node, exp.Unnest) else None
        ordinality = offset is not None and offset is not False
        names = [f.name for f in made]
        given = [c.name for c in alias.columns] if alias is not None and alias.columns else []
        if isinstance(offset, exp.Identifier):
            given.append(offset.name)
        if ordinality:
            names.append("ORDINALITY")
        if given:
            if len(given) != len(names):
                raise self.error(BindError, f"UNNEST makes {len(names)} columns, "
                                 f"{len(given)} named", alias or node)
            names = given
        fields = left.plan.schema.fields
        project = Project(left.plan, (*(ColumnRef(i, f.name, f.type) for i, f in
                                        enumerate(fields)), value),
                          (*(f.name for f in fields), "$unnest"))
        plan = Unnest(project, tuple(names), ordinality, outer)
        qualifier = alias.name if alias is not None and alias.name else None
        new = tuple(ScopeColumn(qualifier, f.name, f.type)
                    for f in plan.schema.fields[len(fields):])
        return Relation(plan, Scope(left.scope.columns + new))

    def _table_function(self, node: exp.Lateral, left: Relation) -> tuple[Expr, exp.Expression]:
        """LATERAL TABLE(f(args)): the call of a Python table function over the left row."""
        inner = node.this.expressions[0] if node.this.expressions else None
        if not isinstance(inner, exp.Anonymous | exp.Func):
            raise self.error(BindError, "LATERAL TABLE takes a table function call", node)
        name = str(inner.this) if isinstance(inner, exp.Anonymous) else inner.sql_name()
        key = self.binder.catalog.functions.get(name.lower())
        from sqlengine.functions_python import registered

        function = registered(key) if key is not None else None
        if function is None or function.kind != "table":
            raise self.error(BindError, f"{name.upper()} is not a table function (declare one "
                             "with @sqlengine.udtf and create_function)", inner)
        args = [self.exprs.bind(a, left.scope) for a in inner.expressions]
        return Call(key, tuple(args), function.result_type), inner

    # -- JOIN ------------------------------------------------------------------------------
    def join(self, left: Relation, join: exp.Join, ctes: dict[str, Relation]) -> Relation:
        if isinstance(join.this, exp.Table) and join.this.args.get("version") is not None:
            return temporal_join(self, left, join, ctes)
        if isinstance(join.this, exp.Unnest):
            return self.unnest_join(left, join)
        if isinstance(join.this, exp.Lateral) and isinstance(join.this.this, exp.Anonymous) \
                and str(join.this.this.this).upper() == "TABLE":
            return self.unnest_join(left, join)
        if is_lateral_subquery(join):
            return lateral_join(self, left, join)
        right = self.from_item(join.this, ctes)
        side = (join.args.get("side") or "").upper()
        kind = (join.args.get("kind") or "").upper()
        method = (join.args.get("method") or "").upper()
        if method and method != "NATURAL":
            raise self.error(NotSupportedError, f"{method} JOIN is not supported; name the "
                             "columns with USING (...) or ON", join)
        extra = unread_clause(join, _JOIN_CLAUSES)
        if extra is not None or kind not in ("", "INNER", "OUTER", "CROSS", "SEMI", "ANTI",
                                             "LATERAL", "STRAIGHT_JOIN"):
            what = kind if extra is None else extra[0]
            raise self.error(NotSupportedError, f"{what} in a JOIN is not supported", join)
        if kind in ("SEMI", "ANTI"):
            raise self.error(NotSupportedError, f"{kind} JOIN is not SQL that Flink accepts; "
                             "write EXISTS / NOT EXISTS (or IN / NOT IN)", join)
        if kind in ("LATERAL",) or isinstance(join.this, exp.Lateral):
            raise self.error(NotSupportedError, "LATERAL joins are not supported yet", join)
        on_node = join.args.get("on")
        using_names: list[tuple[str, exp.Expression]] = [
            (ident.name, ident) for ident in join.args.get("using") or []]
        if method == "NATURAL":
            if on_node is not None or using_names or kind == "CROSS":
                raise self.error(BindError, "a NATURAL JOIN takes no ON or USING condition",
                                 join)
            # (USING the columns of equal names, in the left side's order; none: a cross
            # join, as the SQL standard and Calcite have it)
            using_names = [(name, join) for name in natural_columns(left.scope, right.scope)]
            on_node = None if using_names else exp.true()
        if kind == "CROSS" and (on_node is not None or using_names):
            raise self.error(BindError, "CROSS JOIN takes no ON or USING condition", join)
        if on_node is None and not using_names and (side or (
                join.meta.get("keyword") and kind in ("", "INNER", "OUTER"))):
            raise self.error(BindError, f"{side or kind or 'a'} JOIN needs an ON or USING "
                             "condition (CROSS JOIN joins every pair)", join)
        swapped = side == "RIGHT"
        if swapped:
            left, right = right, left
        scope = Scope(left.scope.columns + right.scope.columns)
        n_left = len(left.scope.columns)
        using: list[tuple[ColumnRef, ColumnRef]] = []
        if using_names:
            using, left, right = using_parts(self, left, right, using_names)
            cond_parts: list[Expr] = [Call("eq", (a, b), T.BOOLEAN) for a, b in using]
            scope = Scope(left.scope.columns + right.scope.columns)
        elif on_node is not None:
            on = self.exprs.bind(on_node, scope)
            require_boolean(self.binder, on, on_node, "ON")
            cond_parts = conjuncts(on)
        else:  # a comma or CROSS JOIN: WHERE's conditions are moved in by the optimizer
            cond_parts = []
        # Subqueries in ON: an inner join's are a filter over the join; an outer join's are
        # columns of the side they read, computed before it (bind_join_conditions.py).
        above = [c for c in cond_parts if has_subquery(c)] if not side else []
        marked = None
        if side and any(has_subquery(c) for c in cond_parts):
            marked = mark_sides(cond_parts, left, right, n_left, side,
                                lambda m: self.error(NotSupportedError, m, on_node))
            left, right, cond_parts = marked.left, marked.right, marked.conditions
            n_left = marked.n_left
        cond_parts = [c for c in cond_parts if not has_subquery(c)]
        try:
            lkeys, rkeys, residual = split_condition(cond_parts, n_left)
        except BindError as e:
            raise self.error(BindError, e.message, on_node or join) from None
        cond = conjunction(residual)
        join_kind = {"LEFT": "left", "RIGHT": "left", "FULL": "full"}.get(side, "inner")
        block = self.binder.ttl_block()  # (a STATE_TTL hint naming either input)
        ttls = (None, None) if block is None else \
            (block.for_input(left.scope), block.for_input(right.scope))
        hinted = self.binder.join_hint_blocks  # (a join hint naming either input)
        strategy = hinted[-1].for_join(left.scope, right.scope, join_kind, bool(lkeys)) \
            if hinted else None
        plan: LogicalPlan = Join(left.plan, right.plan, join_kind, tuple(lkeys), tuple(rkeys),
                                 cond, ttls, strategy)
        if marked is not None:  # drop the computed ON columns again
            n_left -= marked.left_marks
            plan = drop_marks(plan, marked)
        if above:
            plan = Filter(plan, conjunction(above) or Literal(True, T.BOOLEAN))
        out_scope = scope
        position = list(range(len(scope.columns)))  # (each column's place in the output)
        if swapped:
            # Restore the written column order: the (original) left side first.
            n_right = len(right.scope.columns)
            order = list(range(n_left, n_left + n_right)) + list(range(n_left))
            fields = plan.schema.fields
            plan = Project(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type)
                                       for i in order), tuple(fields[i].name for i in order))
            out_scope = Scope(tuple(scope.columns[i] for i in order))
            position = [order.index(i) for i in range(len(order))]
        if using:
            return using_columns(plan, out_scope, using, position, side)
        return Relation(plan, out_scope)

def _as_type(e: Expr, t: pa.DataType) -> Expr:
    """A VALUES cell as its column's type: a literal converted now (as Arrow casts it), any
    other constant wrapped in a CAST for the optimizer to fold."""
    if not isinstance(e, Literal):
        return coerce(e, t)
    if e.value is None or e.dtype == t:
        return Literal(e.value, t)
    return Literal(pa.array([e.value], e.dtype).cast(t)[0].as_py(), t)

