"""Bind a SELECT block: FROM and WHERE, the projection with its stars, DISTINCT, and
ORDER BY / LIMIT / OFFSET (of a SELECT and of a set operation). GROUP BY and HAVING are
bound by bind_aggregate.py, OVER (...) by bind_over.py."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import (
    ClauseBinder,
    Relation,
    distinct,
    has_aggregate,
    hidden_name,
    no_aggregates,
    require_boolean,
    scope_of,
    sort_key,
    unique_names,
    unread_clause,
)
from sqlengine.bind_expr import Scope, coerce
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import ColumnRef, Expr, Literal
from sqlengine.plan.nodes import Filter, Limit, LogicalPlan, Project, Schema, Sort, SortKey, Values

# A select item: its expression and its output name.
SelectItem = tuple[exp.Expression, str]


# The SELECT clauses binding reads (sqlglot's argument names); any other is refused.
_BOUND_CLAUSES = frozenset({"expressions", "from_", "from", "joins", "where", "group", "having",
                            "order", "limit", "offset", "distinct", "windows", "with_", "with",
                            "hint", "match", "qualify"})
_SET_CLAUSES = frozenset({"this", "expression", "distinct", "order", "limit", "offset",
                          "with_", "with"})
_CLAUSE_WORDS = {"locks": "FOR UPDATE / FOR SHARE", "distribute": "DISTRIBUTE BY",
                 "cluster": "CLUSTER BY", "sort": "SORT BY", "into": "SELECT ... INTO",
                 "prewhere": "PREWHERE", "connect": "CONNECT BY", "kind": "SELECT AS ...",
                 "pivots": "PIVOT / UNPIVOT", "laterals": "LATERAL VIEW",
                 "sample": "USING SAMPLE (write TABLESAMPLE after the table)",
                 "settings": "SETTINGS", "format": "FORMAT", "options": "OPTION (...)",
                 "operation_modifiers": "a SELECT modifier"}


def by_alias(node: exp.Expression, names: list[str],
             items: list[exp.Expression]) -> exp.Expression:
    """An ORDER BY expression with each bare name of one SELECT alias replaced by that item's
    expression: in ``SELECT id AS x FROM t ORDER BY x * -1`` the alias wins over t's own x, as
    in Flink (Calcite) and the SQL standard. Names inside a subquery or an OVER window (its
    arguments and its PARTITION BY / ORDER BY, which read the input) stay as they are."""
    lowered = [n.lower() for n in names]
    if not items or not any(isinstance(c, exp.Column) and not c.table and
                            c.name.lower() in lowered for c in node.walk()):
        return node
    out = node.copy()
    for col in list(out.find_all(exp.Column)):
        name = col.name.lower()
        if col.table or lowered.count(name) != 1 or \
                col.find_ancestor(exp.Select, exp.Window) is not None:
            continue
        replacement = exp.Paren(this=items[lowered.index(name)].copy())
        if col is out:
            return replacement
        col.replace(replacement)
    return out


class SelectBinder(ClauseBinder):
    """A SELECT block and the ORDER BY / LIMIT around queries."""

    def select(self, node: exp.Select, ctes: dict[str, Relation]) -> Relation:
        """A SELECT block, with the STATE_TTL and LOOKUP hints it carries
        (bind_state_ttl.py, bind_lookup_hint.py)."""
        from sqlengine import hints
        from sqlengine.bind_join_hint import JoinHintBlock
        from sqlengine.bind_lookup_hint import LookupBlock
        from sqlengine.bind_state_ttl import TtlBlock

        block = TtlBlock(node.meta.get(hints.TTL_KEY), self.binder.script)
        lookups = LookupBlock(node.meta.get(hints.LOOKUP_KEY, []), self.binder.script)
        joins = JoinHintBlock(node.meta.get(hints.JOIN_KEY, []), self.binder.script)
        self.binder.ttl_blocks.append(block)
        self.binder.lookup_blocks.append(lookups)
        self.binder.join_hint_blocks.append(joins)
        try:
            rel = self._select(node, ctes)
        finally:
            self.binder.ttl_blocks.pop()
            self.binder.lookup_blocks.pop()
            self.binder.join_hint_blocks.pop()
        block.check()
        lookups.check()
        joins.check()
        return rel

    def _select(self, node: exp.Select, ctes: dict[str, Relation]) -> Relation:
        from sqlengine.bind_over import resolve_named_windows

        self._refuse_clauses(node)
        if node.args.get("qualify") is not None:
            return self._qualify(node, ctes)
        node = self._with_rollup(self._group_by_all(node))
        node = resolve_named_windows(self, node)
        from_ = node.args.get("from_") or node.args.get("from")
        relations = self.binder.relations
        self.binder.subqueries.ctes = ctes
        if from_ is not None:
            rel = relations.from_item(from_.this, ctes)
            match = node.args.get("match")
            if match is not None:
                if node.args.get("joins"):
                    raise self.error(NotSupportedError, "MATCH_RECOGNIZE over a join: put "
                                     "the join in a subquery or view", match)
                from sqlengine.bind_match import MatchBinder

                rel = MatchBinder(self.binder).bind(rel, match)
            for join in node.args.get("joins") or []:
                rel = relations.join(rel, join, ctes)
        else:
            if node.args.get("joins"):
                raise self.error(BindError, "JOIN without FROM", node)
            if node.args.get("match") is not None:
                raise self.error(BindError, "MATCH_RECOGNIZE without FROM", node)
            rel = Relation(Values(((),), Schema(())), Scope(()))

        self.binder.subqueries.ctes = ctes  # (FROM's own subqueries may have changed it)
        where = node.args.get("where")
        if where is not None:
            no_aggregates(self.binder, where.this, "WHERE")
            pred = self.exprs.bind(where.this, rel.scope)
            require_boolean(self.binder, pred, where.this, "WHERE")
            rel = Relation(Filter(rel.plan, coerce(pred, T.BOOLEAN)), rel.scope)

        items = self.expand_stars(node.expressions, rel.scope, node)
        group = node.args.get("group")
        having = node.args.get("having")
        order = node.args.get("order")
        has_aggs = any(has_aggregate(e) for e, _ in items) or (
            having is not None and has_aggregate(having.this))
        windows = [n for e, _ in items for n in e.walk() if isinstance(n, exp.Window)]
        if order is not None and group is None and not has_aggs:
            # (ORDER BY ROW_NUMBER() OVER (...): computed with the select list's windows)
            windows += [n for o in order.expressions for n in o.walk()
                        if isinstance(n, exp.Window)]
        if windows:
            if group is not None or has_aggs:  # (grouped in a subquery, the windows over it)
                from sqlengine.bind_windows_over_groups import refuse_nested, split

                refuse_nested(self, windows)
                return self.binder.relations.query(split(node, items), ctes)
            rel = self.binder.over.windows(rel, windows)
        if group is not None or has_aggs:
            return self.binder.aggregates.aggregate_select(node, rel, items, group, having,
                                                           order)
        if having is not None:
            raise self.error(BindError, "HAVING needs GROUP BY or an aggregate", having)

        try:
            exprs = [self.exprs.bind(e, rel.scope) for e, _ in items]
            names = unique_names([n for _, n in items])
            # (ORDER BY binds while the window columns are intercepted: it may name an alias
            # of one, ORDER BY rn * -1)
            return self.finish_select(node, rel, exprs, names, [e for e, _ in items], order)
        finally:
            self.exprs.intercept = None

    def _qualify(self, node: exp.Select, ctes: dict[str, Relation]) -> Relation:
        """``QUALIFY cond`` (Flink's, Snowflake's): the rows of the SELECT for which ``cond``
        holds, after its window functions and before DISTINCT / ORDER BY / LIMIT. The window
        functions (and input columns) the condition names ride along the select list as
        hidden columns; the condition filters over them, by the select's aliases too (so
        ``ROW_NUMBER() ... = 1`` is the same plan as the filter in an outer query, a Top-N)."""
        qualify = node.args["qualify"]
        outside = qualify.this.copy()
        for w in list(outside.find_all(exp.Window)):
            w.replace(exp.null())
        if has_aggregate(outside):
            raise self.error(NotSupportedError, "QUALIFY takes window functions and the "
                             "SELECT's columns: filter on an aggregate with HAVING", qualify)
        inner = node.copy()
        for arg in ("qualify", "order", "limit", "offset", "distinct"):
            inner.set(arg, None)
        outputs = {(e.alias_or_name or "").lower() for e in node.expressions}
        hidden: list[exp.Expression] = []

        def ride(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Window) or (
                    isinstance(n, exp.Column) and (n.table or n.name.lower() not in outputs)
                    and not isinstance(n.this, exp.Star)):
                name = f"__qualify{len(hidden)}"
                hidden.append(exp.alias_(n.copy(), name, quoted=True))
                return exp.column(name, quoted=True)
            return n

        cond = qualify.this.copy().transform(ride)
        inner.set("expressions", [*inner.expressions, *hidden])
        rel = self.select(inner, ctes)
        pred = self.exprs.bind(cond, rel.scope)
        require_boolean(self.binder, pred, qualify.this, "QUALIFY")
        plan: LogicalPlan = Filter(rel.plan, coerce(pred, T.BOOLEAN))
        fields = plan.schema.fields[:len(plan.schema.fields) - len(hidden)]
        refs = [ColumnRef(i, f.name, f.type) for i, f in enumerate(fields)]
        plan = Project(plan, tuple(refs), tuple(f.name for f in fields))
        if node.args.get("distinct"):
            plan = distinct(plan)
        out = Relation(plan, scope_of(plan, None, rel.scope, list(refs)))
        return self.order_limit(node, out, "a QUALIFY query")

    def _group_by_all(self, node: exp.Select) -> exp.Select:
        """``GROUP BY ALL`` (DuckDB's, Spark's): grouped by every SELECT item that holds no
        aggregate (none: one group of all rows)."""
        group = node.args.get("group")
        if group is None or not group.args.get("all") or group.expressions:
            return node  # (GROUP BY ALL a: the standard's quantifier, GROUP BY a, as Calcite)
        items = node.expressions
        if any(
                isinstance(i, exp.Star) or (isinstance(i, exp.Column) and
                                            isinstance(i.this, exp.Star))
                or any(isinstance(n, exp.Window) for n in i.walk()) for i in items):
            raise self.error(NotSupportedError, "GROUP BY ALL over a star or a window "
                             "function is not supported: name the grouping columns", group)
        keys = [(i.this if isinstance(i, exp.Alias) else i).copy() for i in items
                if not has_aggregate(i)]
        node = node.copy()
        node.set("group", exp.Group(expressions=keys) if keys else None)
        return node

    def _with_rollup(self, node: exp.Select) -> exp.Select:
        """MySQL's ``GROUP BY a, b WITH ROLLUP`` (``WITH CUBE``) as ``GROUP BY ROLLUP (a, b)``
        (``CUBE (a, b)``)."""
        group = node.args.get("group")
        if group is None:
            return node
        found = [(arg, kind) for arg, kind in (("rollup", exp.Rollup), ("cube", exp.Cube))
                 if any(not e.expressions for e in group.args.get(arg) or [])]
        if not found:
            return node
        if len(found) > 1 or not group.expressions or any(
                isinstance(e, exp.Rollup | exp.Cube | exp.GroupingSets)
                for e in group.expressions):
            raise self.error(NotSupportedError, "WITH ROLLUP / WITH CUBE goes after plain "
                             "grouping columns only", group)
        arg, kind = found[0]
        node = node.copy()
        group = node.args["group"]
        group.set("expressions", [kind(expressions=list(group.expressions))])
        group.set(arg, None)
        return node

    def refuse_set_clauses(self, node: exp.SetOperation) -> None:
        """A UNION / INTERSECT / EXCEPT's clauses binding does not read, refused by name (BY
        NAME and CORRESPONDING match columns by name: positionally they gave wrong rows)."""
        if node.args.get("by_name"):
            raise self.error(NotSupportedError, f"{node.key.upper()} BY NAME / CORRESPONDING "
                             "is not supported: list the columns in the same order on both "
                             "sides", node)
        self._refuse_clauses(node, _SET_CLAUSES)

    def _refuse_clauses(self, node: exp.Query, bound: frozenset[str] | None = None) -> None:
        """Every clause of a SELECT that binding does not read is refused by name (other
        engines' SQL that the parser knows: ignoring QUALIFY or DISTINCT ON gave rows)."""
        for o in (node.args.get("order") or exp.Order()).expressions:
            if o.args.get("with_fill") is not None:
                raise self.error(NotSupportedError, "ORDER BY ... WITH FILL is not supported",
                                 o)
        group = node.args.get("group")
        if group is not None and group.args.get("totals"):
            raise self.error(NotSupportedError, "WITH TOTALS is not supported", group)
        unread = unread_clause(node, bound or _BOUND_CLAUSES, _CLAUSE_WORDS)
        if unread is not None:
            raise self.error(NotSupportedError, f"{unread[0]} is not supported", unread[1])
        distinct = node.args.get("distinct")  # (a set operation's is a flag)
        if isinstance(distinct, exp.Distinct) and distinct.args.get("on") is not None:
            raise self.error(NotSupportedError, "DISTINCT ON is not supported: rank the rows "
                             "(ROW_NUMBER() OVER (PARTITION BY ...) = 1 in an outer query)",
                             distinct)

    def finish_select(self, node: exp.Select, rel: Relation, exprs: list[Expr],
                      names: list[str], item_nodes: list[exp.Expression],
                      order: exp.Order | None) -> Relation:
        # ORDER BY may name output aliases, output positions, or input expressions; the
        # latter ride along as hidden columns that a final projection removes.
        keys: list[SortKey] = []
        hidden: list[Expr] = []
        late: list[exp.Ordered] = []  # (DISTINCT: expressions over its output columns)
        if order is not None:
            for o in order.expressions:
                idx = self.order_target(o.this, names, item_nodes)
                if idx is None:
                    if node.args.get("distinct"):
                        late.append(o)
                        continue
                    e = self.exprs.bind(by_alias(o.this, names, item_nodes), rel.scope)
                    idx = len(exprs) + len(hidden)
                    hidden.append(e)
                ty = (exprs + hidden)[idx].dtype
                keys.append(sort_key(self, o, ColumnRef(idx, hidden_name(names, idx), ty)))
        all_names = [hidden_name(names, i) for i in range(len(exprs) + len(hidden))]
        plan: LogicalPlan = Project(rel.plan, tuple(exprs + hidden), tuple(all_names))
        if node.args.get("distinct"):
            plan = distinct(plan)
            if late:
                plan, keys = self._distinct_order(plan, order, names, item_nodes)
        plan = self.apply_sort_limit(node, plan, keys)
        if hidden or late:
            plan = Project(plan, tuple(ColumnRef(i, n, f.type) for i, (n, f) in
                                       enumerate(zip(names, plan.schema.fields))), tuple(names))
        return Relation(plan, scope_of(plan, None, rel.scope, exprs))

    def _distinct_order(self, plan: LogicalPlan, order: exp.Order, names: list[str],
                        item_nodes: list[exp.Expression]) -> tuple[LogicalPlan, list[SortKey]]:
        """SELECT DISTINCT's ORDER BY expressions, computed over its output columns (``SELECT
        DISTINCT id AS y ... ORDER BY y * -1``); one that reads any other column is refused."""
        out_scope = scope_of(plan, None)
        refs: list[Expr] = [ColumnRef(i, n, f.type)
                            for i, (n, f) in enumerate(zip(names, plan.schema.fields))]
        keys: list[SortKey] = []
        for o in order.expressions:
            idx = self.order_target(o.this, names, item_nodes)
            if idx is None:
                try:
                    e = self.exprs.bind(o.this, out_scope)
                except BindError:
                    raise self.error(BindError, "ORDER BY expressions must appear in the "
                                     "SELECT DISTINCT list", o) from None
                idx = len(refs)
                refs.append(e)
            keys.append(sort_key(self, o, ColumnRef(idx, hidden_name(names, idx), refs[idx].dtype)))
        all_names = [hidden_name(names, i) for i in range(len(refs))]
        return Project(plan, tuple(refs), tuple(all_names)), keys

    def order_target(self, node: exp.Expression, names: list[str],
                     items: list[exp.Expression]) -> int | None:
        """The output column an ORDER BY item names (alias, position or select item)."""
        if isinstance(node, exp.Literal) and not node.is_string:
            if not str(node.this).isdigit():
                raise self.error(BindError, f"ORDER BY {node.this}: a position in the select "
                                 "list is a whole number", node)
            pos = int(str(node.this))
            if not 1 <= pos <= len(names):
                raise self.error(BindError, f"ORDER BY position {pos} is not in the select "
                                 "list", node)
            return pos - 1
        if isinstance(node, exp.Column) and not node.table:
            named = sum((i.meta.get("item_name") or "").lower() == node.name.lower() for i in items)
            if named > 1:  # (as in Flink; the first was taken without a word)
                raise self.error(BindError, f"ORDER BY {node.name}: column {node.name!r} is "
                                 f"ambiguous ({named} select items are named so)", node)
            hits = [i for i, n in enumerate(names) if n.lower() == node.name.lower()]
            if len(hits) == 1:
                return hits[0]
        for i, item in enumerate(items):
            if item == node:
                return i
        return None

    def apply_sort_limit(self, node: exp.Expression, plan: LogicalPlan,
                         keys: list[SortKey]) -> LogicalPlan:
        fetch, offset = self._limit_offset(node)
        if keys:
            return Sort(plan, tuple(keys), fetch, offset,
                        outermost=node is self.binder.outermost)
        if fetch is not None or offset:
            return Limit(plan, fetch, offset)
        return plan

    def _limit_offset(self, node: exp.Expression) -> tuple[int | None, int]:
        fetch = offset = None
        limit = node.args.get("limit")
        if isinstance(limit, exp.Fetch | exp.Limit):  # (FETCH FIRST | NEXT [n] ROW[S] ONLY)
            options = limit.args.get("limit_options")
            for flag, words in (("with_ties", "WITH TIES"), ("percent", "PERCENT")):
                if options is not None and options.args.get(flag):
                    what, plain = ("FETCH", "FETCH FIRST n ROWS ONLY") \
                        if isinstance(limit, exp.Fetch) else ("LIMIT", "LIMIT n")
                    raise self.error(NotSupportedError, f"{what} ... {words} is not "
                                     f"supported: {plain} is", limit)
        if isinstance(limit, exp.Limit) and limit.expressions:
            raise self.error(NotSupportedError, "LIMIT ... BY is not supported (a Top-N per "
                             "key is ROW_NUMBER() OVER (PARTITION BY ...) <= n)", limit)
        if isinstance(limit, exp.Fetch):
            count = limit.args.get("count")
            fetch = 1 if count is None else self._const_int(count, "FETCH FIRST")
        elif limit is not None:
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

    def order_limit(self, node: exp.Expression, rel: Relation,
                    what: str = "a set operation") -> Relation:
        """ORDER BY / LIMIT / OFFSET written after a set operation or a parenthesised query
        (or a QUALIFY)."""
        order = node.args.get("order")
        keys = []
        if order is not None:
            names = rel.plan.schema.names()
            for o in order.expressions:
                idx = self.order_target(o.this, names, [])
                if idx is None:
                    e = self.exprs.bind(o.this, rel.scope)
                    if not isinstance(e, ColumnRef):
                        raise self.error(NotSupportedError, f"ORDER BY of {what} takes "
                                         "output columns", o)
                    idx = e.index
                f = rel.plan.schema.fields[idx]
                keys.append(sort_key(self, o, ColumnRef(idx, f.name, f.type)))
        plan = self.apply_sort_limit(node, rel.plan, keys)
        return Relation(plan, rel.scope) if plan is not rel.plan else rel

    def expand_stars(self, items: list[exp.Expression], scope: Scope,
                     node: exp.Expression) -> list[SelectItem]:
        out: list[SelectItem] = []
        for i, item in enumerate(items):
            star_table = None
            if isinstance(item, exp.Star):
                star_table = ""
            elif isinstance(item, exp.Column) and isinstance(item.this, exp.Star):
                star_table = item.table
            if star_table is not None:
                if star_table and star_table.lower() not in scope.qualifiers():
                    fields = self._row_fields(item, scope)
                    if fields is None:
                        raise self.error(BindError, f"unknown table or alias {star_table!r}",
                                         item)
                    out.extend(fields)
                    continue
                excluded = self._star_exclusions(item if isinstance(item, exp.Star)
                                                 else item.this)
                met: set[str] = set()
                for c in scope.columns:
                    if c.name.startswith("$") or (c.using_duplicate and not star_table):
                        continue
                    if not star_table or (c.qualifier or "").lower() == star_table.lower():
                        if c.name.lower() in excluded:
                            met.add(c.name.lower())
                            continue
                        col = exp.Column(this=exp.to_identifier(c.name, quoted=True),
                                         table=exp.to_identifier(c.qualifier, quoted=True)
                                         if c.qualifier else None)
                        out.append((col, c.name))
                unknown = [k for k in excluded if k not in met]
                if unknown:
                    raise self.error(BindError, f"EXCLUDE names {unknown[0]!r}, which the star "
                                     "does not select", excluded[unknown[0]])
                continue
            name = item.alias if isinstance(item, exp.Alias) else ""
            value = item.this if isinstance(item, exp.Alias) else item
            while isinstance(value, exp.Paren):  # ((a): the column a, named a, as Calcite)
                value = value.this
            if not name and isinstance(value, exp.Column):
                name = value.alias_or_name
            value.meta["item_name"] = name  # (for ORDER BY: two items of one name)
            out.append((value, name or f"EXPR${i}"))
        if not out:
            raise self.error(BindError, "SELECT list is empty", node)
        return out

    def _row_fields(self, item: exp.Column, scope: Scope) -> list[SelectItem] | None:
        """``r.*`` / ``t.r.*`` of a ROW column r: each of its fields (Flink's composite type
        expansion); None when r is no such column."""
        name = item.table
        qualifier = item.args["db"].name if item.args.get("db") is not None else None
        if qualifier and qualifier.lower() not in scope.qualifiers():
            return None
        try:
            idx = scope.resolve(name, qualifier)
        except BindError as e:
            raise self.error(BindError, e.message, item) from None
        if idx is None or not pa.types.is_struct(scope.columns[idx].type):
            return None
        if item.this.args.get("except_"):
            raise self.error(NotSupportedError, "EXCLUDE of a ROW column's fields is not "
                             "supported", item)
        row = exp.to_identifier(name, quoted=True)
        table = exp.to_identifier(qualifier, quoted=True) if qualifier else None
        return [(exp.Dot(this=exp.Column(this=row, table=table),
                         expression=exp.to_identifier(f.name, quoted=True)), f.name)
                for f in scope.columns[idx].type]

    def _star_exclusions(self, star: exp.Star) -> dict[str, exp.Expression]:
        """``* EXCLUDE (a, b)`` (DuckDB's, Snowflake's; ``EXCEPT`` in BigQuery's): the columns
        left out, by lower-case name. REPLACE, RENAME and ILIKE are refused by name."""
        for arg, words in (("replace", "REPLACE"), ("rename", "RENAME"), ("ilike", "ILIKE")):
            if star.args.get(arg):
                raise self.error(NotSupportedError, f"SELECT * {words} (...) is not supported: "
                                 "name the columns", star)
        return {e.name.lower(): e for e in star.args.get("except_") or []}
