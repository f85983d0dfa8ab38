"""Bind a sqlglot query AST into a logical plan: names, types, aggregates, joins, sorting.

The ``Binder`` is a façade over one binder per clause, which share its state (the catalog,
the statement's text, the expression binder and its scope intercepts):

- bind_relations.py: queries with their CTEs, UNION, VALUES, FROM items (tables, views,
  subqueries) and joins;
- bind_select.py: the SELECT block, its projection, DISTINCT, ORDER BY / LIMIT;
- bind_aggregate.py: GROUP BY, HAVING and aggregate calls;
- bind_over.py: window functions with OVER (...) (OverAggregate, ROW_NUMBER ranks);
- bind_windows.py: window table functions and legacy group windows;
- bind_subquery.py: subqueries in expressions (scalar, EXISTS, IN, ANY / ALL);
- bind_common.py: the bound Relation and the helpers they share;
- bind_expr.py: scalar expressions over a Scope.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine.bind_aggregate import AggregateBinder
from sqlengine.bind_common import Relation
from sqlengine.bind_expr import ExprBinder, literal
from sqlengine.bind_join_hint import JoinHintBlock
from sqlengine.bind_lookup_hint import LookupBlock
from sqlengine.bind_over import OverBinder
from sqlengine.bind_relations import RelationBinder
from sqlengine.bind_select import SelectBinder
from sqlengine.bind_state_ttl import TtlBlock
from sqlengine.bind_subquery import SubqueryBinder
from sqlengine.bind_udaf import mark_python_aggregates
from sqlengine.bind_windows import WindowBinder
from sqlengine.errors import BindError, SqlEngineError
from sqlengine.parser import node_span
from sqlengine.plan.nodes import LogicalPlan

if TYPE_CHECKING:
    from sqlengine.catalog import Catalog
    from sqlengine.statements import QueryText


def bind_query(tree: exp.Expression, catalog: Catalog, query: QueryText, script: str,
               params: dict[str, object] | None = None,
               positional: list[object] | None = None) -> LogicalPlan:
    """Bind a parsed query to a logical plan.

    Raises:
        BindError: unknown names, type errors (with span).
        NotSupportedError: valid SQL that sqlengine does not run yet.
    """
    binder = Binder(catalog, query, script, params, positional, depth=0)
    binder.outermost = tree
    placeholders = number_placeholders(tree)
    plan = _grouped_by_key_bytes(binder.query(tree, ctes={}).plan)
    _refuse_nested_keys(plan)
    # (parameters no placeholder reads were ignored)
    if positional and placeholders < len(positional):
        raise BindError(f"{len(positional)} parameters given for {placeholders} ? "
                        "placeholders")
    unused = sorted(set(params or {}) - binder.exprs.used_params)
    if unused:
        raise BindError(f"parameter :{unused[0]} is given but the query has no :{unused[0]}")
    return plan


def number_placeholders(tree: exp.Expression) -> int:
    """Number the ``?`` placeholders of ``tree`` in the order of the text (their values'
    places among the parameters); the count. The binder reaches the clauses in its own
    order (FROM, WHERE, then the select list): counted as it went, ``SELECT a + ? FROM t
    WHERE a = ?`` took its values swapped, without a word."""
    found = [(n.meta.get("start", 1 << 62), i, n)
             for i, n in enumerate(tree.walk(bfs=False))
             if isinstance(n, exp.Placeholder) and not n.this]
    for k, (_, _, node) in enumerate(sorted(found, key=lambda x: (x[0], x[1]))):
        node.meta["position"] = k
    return len(found)


def _grouped_by_key_bytes(plan: LogicalPlan) -> LogicalPlan:
    """GROUP BY, DISTINCT and the set operations over a ROW, ARRAY or MAP value group by the
    value's bytes (runtime/key_bytes.py: exact, the same in every batch and process), and the
    value is read back from them above: Arrow's hash aggregation takes no nested key. In
    the query and in the plans of its subqueries."""
    import dataclasses

    import pyarrow as pa

    from sqlengine import types as T
    from sqlengine.plan.expressions import AggCall, Call, ColumnRef, Expr
    from sqlengine.plan.nodes import Aggregate, Project
    from sqlengine.plan.subquery import SubqueryExpr, has_subquery, node_expressions
    from sqlengine.plan.tree import Transformed, map_expressions, transform_up

    def nested(t: pa.DataType) -> bool:
        return (T.is_nested(t) and T.groupable(t)) or T.is_opaque(t)

    def counted(a: AggCall) -> AggCall:  # (COUNT(DISTINCT v): of the value's bytes)
        if a.func == "count" and a.distinct and len(a.args) == 1 and nested(a.args[0].dtype):
            return dataclasses.replace(a, args=(Call("key_bytes", a.args, pa.binary()),))
        return a

    def in_subqueries(e: Expr) -> Expr:
        kids = e.children()
        changed = tuple(in_subqueries(k) for k in kids)
        if any(a is not b for a, b in zip(changed, kids)):
            e = e.with_children(changed)
        if isinstance(e, SubqueryExpr):
            inner = _grouped_by_key_bytes(e.plan)
            if inner is not e.plan:
                e = dataclasses.replace(e, plan=inner)
        return e

    def rewrite(node: LogicalPlan) -> Transformed[LogicalPlan]:
        changed = False
        if any(has_subquery(e) for e in node_expressions(node)):
            node, changed = map_expressions(node, in_subqueries), True
        if not isinstance(node, Aggregate):
            return Transformed(node, changed)
        aggs = tuple(counted(a) for a in node.aggs)
        if not any(nested(k.dtype) for k in node.keys):
            return Transformed(dataclasses.replace(node, aggs=aggs), True) \
                if aggs != node.aggs else Transformed(node, changed)
        keys = tuple(Call("key_bytes", (k,), pa.binary()) if nested(k.dtype) else k
                     for k in node.keys)
        grouped = dataclasses.replace(node, keys=keys, aggs=aggs)
        exprs = tuple(
            Call("key_value", (ColumnRef(i, n, pa.binary()),), k.dtype) if nested(k.dtype)
            else ColumnRef(i, n, k.dtype) for i, (k, n) in enumerate(zip(node.keys,
                                                                        node.key_names)))
        exprs += tuple(ColumnRef(len(keys) + j, n, a.type)
                       for j, (a, n) in enumerate(zip(node.aggs, node.agg_names)))
        return Transformed(Project(grouped, exprs, node.key_names + node.agg_names), True)

    return transform_up(plan, rewrite).data


def _refuse_nested_keys(plan: LogicalPlan) -> None:
    """GROUP BY, DISTINCT, set operations and COUNT(DISTINCT ...) over an ARRAY, MAP or ROW
    value that ``_grouped_by_key_bytes`` left (of element types without key bytes, an
    INTERVAL say) are refused by name (Arrow's hash aggregation has no such keys: they failed
    while running with Arrow's 'Keys of type struct<...>')."""
    from sqlengine import types as T
    from sqlengine.errors import NotSupportedError
    from sqlengine.plan.nodes import Aggregate
    from sqlengine.plan.subquery import subquery_plans
    from sqlengine.plan.tree import walk

    for node in [n for p in (plan, *subquery_plans(plan)) for n in walk(p)]:
        if not isinstance(node, Aggregate):
            continue
        for key in node.keys:
            if T.is_nested(key.dtype):
                msg = (f"grouping by the {T.type_name(key.dtype)} value {key.sql()} (GROUP "
                       "BY, DISTINCT, UNION / INTERSECT / EXCEPT) is not supported for its "
                       "element types: group by its fields or elements")
                raise NotSupportedError(msg)
        for agg in node.aggs:
            # (PERCENTILE's percentages, an ARRAY literal, are not the distinct value)
            values = agg.args[:1] if agg.func == "percentile" else agg.args
            if agg.distinct and any(T.is_nested(a.dtype) for a in values):
                msg = (f"{agg.func.upper()}(DISTINCT ...) of an ARRAY, MAP or ROW value is "
                       "not supported: count its fields or elements")
                raise NotSupportedError(msg)


class Binder:
    """Binds the queries of one statement (a view's query gets a nested Binder)."""

    def __init__(self, catalog: Catalog, query: QueryText, script: str,
                 params: dict[str, object] | None, positional: list[object] | None,
                 depth: int) -> None:
        self.catalog = catalog
        self.query_text = query
        self.script = script
        self.depth = depth
        self.outermost: exp.Expression | None = None  # (the statement's query, whose ORDER BY
        # is its own; bind_query sets it)
        self.exprs = ExprBinder(query, script, params, positional)
        self.exprs.udfs = catalog.functions
        self.exprs.current_names = catalog.current_names()
        self.relations = RelationBinder(self)
        self.selects = SelectBinder(self)
        self.aggregates = AggregateBinder(self)
        self.over = OverBinder(self)
        self.windows = WindowBinder(self)
        self.subqueries = SubqueryBinder(self)
        self.exprs.subqueries = self.subqueries.bind
        self.ttl_blocks: list[TtlBlock] = []  # (the STATE_TTL hints of the SELECTs bound)
        self.lookup_blocks: list[LookupBlock] = []  # (their LOOKUP hints)
        self.join_hint_blocks: list[JoinHintBlock] = []  # (their join hints)

    def ttl_block(self) -> TtlBlock | None:
        """The STATE_TTL hint of the query block being bound."""
        return self.ttl_blocks[-1] if self.ttl_blocks else None

    def error(self, cls: type[SqlEngineError], msg: str, node: exp.Expression) -> SqlEngineError:
        """``cls(msg)`` with the span of ``node`` in the statement's text."""
        return cls(msg, span=node_span(node, self.query_text, self.script), sql=self.script)

    def query(self, node: exp.Expression, ctes: dict[str, Relation]) -> Relation:
        """A query (SELECT, UNION, VALUES, a parenthesised query) with its WITH clause."""
        mark_python_aggregates(node, self.catalog.functions, self.query_text.sql)
        return self.relations.query(node, ctes)

    def nested(self, query: QueryText, script: str) -> Binder:
        """A binder for a view's query, one level deeper (views may not refer to themselves)."""
        return Binder(self.catalog, query, script, None, None, self.depth + 1)


__all__ = ["Binder", "Relation", "bind_query", "literal"]
