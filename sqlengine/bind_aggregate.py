"""Bind GROUP BY, HAVING and aggregate calls: the select list over an Aggregate node, with
group window auxiliaries (TUMBLE_START ...) and hidden ORDER BY expressions."""

from __future__ import annotations

import decimal
from collections.abc import Callable

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import (
    ClauseBinder,
    Relation,
    no_aggregates,
    require_boolean,
    scope_of,
    sort_key,
    unique_names,
)
from sqlengine.bind_expr import Scope, coerce
from sqlengine.bind_grouping import (
    GROUPING_ID,
    expand,
    grand_total_per_set,
    group_id_call,
    grouping_call,
    grouping_sets,
    has_grouping_sets,
)
from sqlengine.bind_ordered import ordered_aggregate, ordered_parts
from sqlengine.bind_reduce import (
    BIVARIATE,
    argument_error,
    is_bivariate,
    is_reducible,
    reduce_aggregate,
)
from sqlengine.bind_select import SelectItem, by_alias
from sqlengine.bind_udaf import PythonAgg, udaf_call
from sqlengine.bind_windows import GroupItem, group_window_aux, group_window_kind
from sqlengine.dialect import Flink
from sqlengine.errors import BindError, NotSupportedError, SqlEngineError
from sqlengine.plan.expressions import AggCall, Call, Case, Cast, ColumnRef, Expr, Literal
from sqlengine.plan.nodes import Aggregate, Filter, LogicalPlan, Project, SortKey
from sqlengine.plan.subquery import OuterRef

_AGGREGATES = ("count", "sum", "min", "max", "avg", "first_value", "last_value", "listagg",
               "array_agg", "json_arrayagg", "json_objectagg", "percentile")
# sqlglot's keys of the aggregates whose SQL names differ
_NAMES = {"firstvalue": "first_value", "lastvalue": "last_value", "groupconcat": "listagg",
          "arrayagg": "array_agg", "jsonarrayagg": "json_arrayagg",
          "jsonobjectagg": "json_objectagg"}


class AggregateBinder(ClauseBinder):
    """A SELECT with GROUP BY or aggregates, and the aggregate calls themselves."""

    def aggregate_select(self, node: exp.Select, rel: Relation, items: list[SelectItem],
                         group: exp.Group | None, having: exp.Having | None,
                         order: exp.Order | None) -> Relation:
        group_exprs: list[exp.Expression] = list(group.expressions) if group is not None else []
        # (GROUP BY (): the empty grouping set, one group of all rows; beside other keys it
        # adds nothing)
        group_exprs = [g for g in group_exprs
                       if not (isinstance(g, exp.Tuple) and not g.expressions)]
        sets: list[tuple[int, ...]] | None = None
        if has_grouping_sets(group_exprs):
            group_exprs, sets = grouping_sets(  # (GROUP BY DISTINCT: 'all' is False)
                group_exprs, distinct=group is not None and group.args.get("all") is False)
            if not group_exprs and sets == [()]:
                sets = None  # (GROUPING SETS (()): the grand total, a row over no rows too)
        for g in group_exprs:
            no_aggregates(self.binder, g, "GROUP BY")
        legacy = [(g, kind) for g in group_exprs if (kind := group_window_kind(g)) is not None]
        if legacy and sets is not None:
            raise self.error(NotSupportedError, "GROUPING SETS, ROLLUP and CUBE with a group "
                             "window function (TUMBLE/HOP/SESSION in GROUP BY) are not "
                             "supported; use a window table function", legacy[0][0])
        group_nodes: list[GroupItem] = list(group_exprs)
        window_aux: dict[str, int] = {}
        if legacy:
            rel, group_nodes, window_aux = self.binder.windows.group_window(rel, group_nodes,
                                                                            legacy)
        keys = [self.exprs.bind(g, rel.scope) if not isinstance(g, int)
                else ColumnRef(g, rel.scope.columns[g].name, rel.scope.columns[g].type)
                for g in group_nodes]
        key_names = []
        for item, k in zip(group_nodes, keys):
            if isinstance(k, ColumnRef):
                key_names.append(k.name)
            elif not isinstance(item, int):  # (a window column's key is always a ColumnRef)
                key_names.append(item.sql())
        key_names = unique_names(key_names)
        agg_input, agg_keys = rel.plan, list(keys)
        gid: Expr | None = None
        if sets is not None:
            agg_input, refs = expand(rel.plan, keys, key_names, sets)
            agg_keys = list(refs)
            gid = ColumnRef(len(keys), GROUPING_ID, T.BIGINT)  # in the Aggregate's output
            key_names = [*key_names, GROUPING_ID]
        aggs: list[AggCall] = []
        agg_nodes: list[exp.Expression | None] = []  # (None: a call of a reduced one)
        n_keys = len(agg_keys)

        def key_position(n: exp.Expression) -> int:
            for i, g in enumerate(group_nodes):
                if not isinstance(g, int) and n == g:
                    return i
            e = self.bind_plain(n, rel.scope)
            for i, k in enumerate(keys):
                if e == k:
                    return i
            raise self.error(BindError, f"the argument {n.sql()!r} of GROUPING is not a "
                             "grouping expression", n)

        def add_call(call: AggCall) -> Expr:
            """The output column of ``call`` (added unless an equal call is there)."""
            for j, c in enumerate(aggs):
                if c == call and agg_nodes[j] is None:
                    return ColumnRef(n_keys + j, f"$agg{j}", c.type)
            aggs.append(call)
            agg_nodes.append(None)
            j = len(aggs) - 1
            return ColumnRef(n_keys + j, f"$agg{j}", call.type)

        expression_keys = any(not isinstance(k, ColumnRef) for k in keys)
        # (nodes never bound on their own: their contents are another scope's or an
        # aggregate's; and leaves, which the other paths match)
        nested = (exp.AggFunc, exp.Window, exp.Subquery, exp.Select, exp.Exists)
        leaves = (exp.Column, exp.Literal, exp.Star)

        def same_key(n: exp.Expression) -> int | None:
            """The grouped expression ``n`` equals once bound, though written otherwise (a
            column qualified or not, parentheses), as the standard and Flink match them."""
            if not expression_keys or isinstance(n, nested + leaves) or any(
                    isinstance(x, nested) for x in n.walk()):
                return None
            try:
                e = self.bind_plain(n, rel.scope)
            except SqlEngineError:
                return None
            return next((i for i, k in enumerate(keys)
                         if not isinstance(k, ColumnRef) and e == k), None)

        def intercept(n: exp.Expression) -> Expr | None:
            aux = group_window_aux(n)
            if aux is not None and window_aux:
                window, kind = legacy[0]
                if not (str(n.this).lower().startswith(kind + "_") and
                        list(n.expressions) == list(window.expressions)):
                    # (as Flink: the arguments were ignored, any gave this window's bounds)
                    raise self.error(BindError, f"{n.sql(dialect=Flink)} does not match the "
                                     f"group window {window.sql(dialect=Flink)} of GROUP BY",
                                     n)
                pos = window_aux[aux]  # (TUMBLE_ROWTIME: window_time, end - 1 ms)
                return ColumnRef(pos, key_names[pos], keys[pos].dtype)
            for i, g in enumerate(group_nodes):
                if not isinstance(g, int) and n == g:
                    return ColumnRef(i, key_names[i], keys[i].dtype)
            same = same_key(n)
            if same is not None:
                return ColumnRef(same, key_names[same], keys[same].dtype)
            if isinstance(n, exp.Grouping | exp.GroupingId) or (
                    isinstance(n, exp.Anonymous) and str(n.this).lower() == "grouping_id"):
                if not n.expressions:
                    name = "GROUPING" if isinstance(n, exp.Grouping) else "GROUPING_ID"
                    raise self.error(BindError, f"{name}() needs at least one argument, a "
                                     "grouping expression", n)
                positions = [key_position(a) for a in n.expressions]
                return grouping_call(positions, len(keys), gid)
            if isinstance(n, exp.Anonymous) and str(n.this).lower() == "group_id":
                if n.expressions:
                    raise self.error(BindError, "GROUP_ID() takes no arguments", n)
                return group_id_call(len(keys), gid)
            if isinstance(n, exp.Column):
                # A bare column equal to a grouped column (possibly written differently).
                e = self.bind_plain(n, rel.scope)
                for i, k in enumerate(keys):
                    if e == k:
                        return ColumnRef(i, key_names[i], k.dtype)
                if isinstance(e, OuterRef):  # (the enclosing query's: one value per group)
                    return e
                hint = ""
                if group is not None and any(
                        isinstance(g, exp.Literal) and not g.is_string
                        for g in group.expressions):
                    hint = (" (GROUP BY 1 groups by the constant 1, as in Flink, not by the "
                            "first select item: name the column or expression)")
                raise self.error(BindError, f"column {n.sql()!r} must appear in GROUP BY or "
                                 f"be used in an aggregate function{hint}", n)
            base = n.this if isinstance(n, exp.Filter) else n
            if is_reducible(base):
                return self.reduced_call(n, rel.scope, add_call)
            if isinstance(base, exp.AggFunc):
                for j, an in enumerate(agg_nodes):
                    if an == n:
                        return ColumnRef(n_keys + j, f"$agg{j}", aggs[j].type)
                call = self.agg_call(n, rel.scope)
                aggs.append(call)
                agg_nodes.append(n)
                j = len(aggs) - 1
                return ColumnRef(n_keys + j, f"$agg{j}", call.type)
            return None

        selects = self.binder.selects
        item_nodes = [e for e, _ in items]
        self.exprs.intercept = intercept
        self.exprs.intercept_scope = rel.scope
        try:
            exprs = [self.exprs.bind(e, Scope(())) for e in item_nodes]
            having_expr = None
            if having is not None:
                having_expr = self.exprs.bind(having.this, Scope(()))
                require_boolean(self.binder, having_expr, having.this, "HAVING")
            # Per ORDER BY item: the output column it names, or else its expression (bound
            # over the aggregate output) for a hidden column.
            targets: list[int | None] = []
            order_exprs: list[Expr] = []
            names = unique_names([n for _, n in items])
            if order is not None:
                for o in order.expressions:
                    target = selects.order_target(o.this, names, item_nodes)
                    targets.append(target)
                    if target is None:
                        order_exprs.append(self.exprs.bind(
                            by_alias(o.this, names, item_nodes), Scope(())))
        finally:
            self.exprs.intercept = None
            self.exprs.intercept_scope = None

        grand_totals = sets is not None and not keys  # (GROUPING SETS ((), ()): no key)
        if (not agg_keys or grand_totals) and not aggs:
            # (one group of all rows with nothing to compute, SELECT 1 ... GROUP BY (): a
            # COUNT(*) nothing reads keeps its one row, which a row of no columns would lose)
            add_call(AggCall("count_star", (), T.BIGINT))
        agg_names = [f"$agg{j}" for j in range(len(aggs))]
        block = self.binder.ttl_block()  # (a STATE_TTL hint naming the FROM item)
        ttl = None if block is None else block.for_input(rel.scope)
        plan: LogicalPlan
        if grand_totals:
            # Every set is the empty one: the grand total, once per set, and a row over no
            # rows too (as Flink's and DuckDB's), which an Aggregate keyed by $g would lose.
            assert sets is not None
            plan = grand_total_per_set(Aggregate(rel.plan, (), (), tuple(aggs),
                                                 tuple(agg_names), ttl), len(sets))
        else:
            plan = Aggregate(agg_input, tuple(agg_keys), tuple(key_names), tuple(aggs),
                             tuple(agg_names), ttl)
        if having_expr is not None:
            plan = Filter(plan, coerce(having_expr, T.BOOLEAN))
        agg_scope = scope_of(plan, None)
        # Columns of the aggregate output stay visible to ORDER BY by their key names.
        keys_rel = Relation(plan, agg_scope)
        if order_exprs and order is not None:
            # Hidden ORDER BY expressions over the aggregate output.
            all_exprs = exprs + order_exprs
            hidden_names = names + [f"$h{i}" for i in range(len(order_exprs))]
            proj = Project(plan, tuple(all_exprs), tuple(hidden_names))
            sort_keys: list[SortKey] = []
            it = iter(range(len(exprs), len(all_exprs)))
            for o, target in zip(order.expressions, targets):
                idx = target if target is not None else next(it)
                f = proj.schema.fields[idx]
                sort_keys.append(sort_key(self, o, ColumnRef(idx, f.name, f.type)))
            out: LogicalPlan = proj
            if node.args.get("distinct"):
                raise self.error(BindError, "ORDER BY expressions must appear in the SELECT "
                                 "DISTINCT list", order)
            out = selects.apply_sort_limit(node, out, sort_keys)
            out = Project(out, tuple(ColumnRef(i, n, e.dtype) for i, (n, e) in
                                     enumerate(zip(names, exprs))), tuple(names))
            return Relation(out, scope_of(out, None))
        return selects.finish_select(node, keys_rel, exprs, names, item_nodes, order)

    def bind_plain(self, n: exp.Expression, scope: Scope) -> Expr:
        """Bind ``n`` over ``scope`` without the select list's intercepts."""
        saved, self.exprs.intercept = self.exprs.intercept, None
        try:
            return self.exprs.bind(n, scope)
        finally:
            self.exprs.intercept = saved

    def reduced_call(self, node: exp.Expression, scope: Scope,
                     add: Callable[[AggCall], Expr]) -> Expr:
        """A variance or standard deviation: an expression over simpler aggregates
        (sqlengine.bind_reduce)."""
        node, filt = self.split_filter(node, scope)
        ordered = ordered_parts(node)
        if ordered is not None:
            def bind(n: exp.Expression) -> Expr:
                no_aggregates(self.binder, n, "an aggregate argument")
                return self.bind_plain(n, scope)

            return ordered_aggregate(self, node, ordered, bind, filt, add)
        if is_bivariate(node):
            if isinstance(node.this, exp.Distinct):
                raise self.error(NotSupportedError, f"{BIVARIATE[node.key]}(DISTINCT ...) is "
                                 "not supported", node)
            nodes, is_distinct = [node.this, node.expression], False
        else:
            arg, is_distinct = self._distinct(node, node.sql_name())
            nodes = [arg]
        for n in nodes:
            no_aggregates(self.binder, n, "an aggregate argument")
        bound = [self.bind_plain(n, scope) for n in nodes]
        wrong = argument_error(node, bound)
        if wrong is not None:
            raise self.error(BindError, wrong, node)
        return reduce_aggregate(node, bound, is_distinct, filt, add)

    def split_filter(self, node: exp.Expression, scope: Scope
                     ) -> tuple[exp.Expression, Expr | None]:
        """The aggregate call under ``FILTER (WHERE cond)``, and the bound condition."""
        if not isinstance(node, exp.Filter):
            return node, None
        cond = node.expression.this if isinstance(node.expression, exp.Where) \
            else node.expression
        return node.this, coerce(self.bind_plain(cond, scope), T.BOOLEAN)

    def _distinct(self, node: exp.Expression, name: str) -> tuple[exp.Expression, bool]:
        """The call's argument, and whether it was written ``DISTINCT arg``."""
        arg = node.this
        if not isinstance(arg, exp.Distinct):
            return arg, False
        if len(arg.expressions) != 1:
            raise self.error(NotSupportedError, f"{name.upper()}(DISTINCT ...) takes one "
                             "argument", node)
        return arg.expressions[0], True

    def agg_call(self, node: exp.Expression, scope: Scope) -> AggCall:
        node, filt = self.split_filter(node, scope)
        if isinstance(node, PythonAgg):
            return udaf_call(self, node, scope, filt)
        func = _NAMES.get(node.key.lower(), node.key.lower())
        if func not in _AGGREGATES and func != "approxdistinct":
            shown = {"approxdistinct": "APPROX_COUNT_DISTINCT"}.get(
                func, node.sql_name())  # (sqlglot's names for them)
            raise self.error(NotSupportedError, f"aggregate function {shown} is not "
                             "supported yet", node)
        if func == "json_objectagg":
            return json_objectagg(self, node, scope, filt)
        if func == "approxdistinct":  # (exact: a count within any error bound, as Flink's)
            arg, _ = self._distinct(node, "APPROX_COUNT_DISTINCT")
            no_aggregates(self.binder, arg, "an aggregate argument")
            return AggCall("count", (self.bind_plain(arg, scope),), T.BIGINT, True, filt)
        if func == "listagg" and isinstance(node.this, exp.Distinct) and \
                len(node.this.expressions) == 2 and node.args.get("separator") is None:
            # (LISTAGG(DISTINCT x, sep): sqlglot reads the separator into the DISTINCT)
            value, separator = node.this.expressions
            node = node.copy()
            node.set("this", exp.Distinct(expressions=[value.copy()]))
            node.set("separator", separator.copy())
        arg, is_distinct = self._distinct(node, func)
        if func == "count" and (arg is None or isinstance(arg, exp.Star)):
            if is_distinct:  # (it counted every row, the DISTINCT ignored)
                raise self.error(BindError, "COUNT(DISTINCT *) is not SQL (nor Flink's): "
                                 "count distinct rows with SELECT COUNT(*) FROM (SELECT "
                                 "DISTINCT ...), or name the columns", node)
            return AggCall("count_star", (), T.BIGINT, False, filt)
        no_aggregates(self.binder, arg, "an aggregate argument")
        bound = self.bind_plain(arg, scope)
        t = bound.dtype
        if func == "count":
            return AggCall("count", (bound,), T.BIGINT, is_distinct, filt)
        if func == "json_arrayagg" and is_distinct:
            raise self.error(NotSupportedError, f"{func.upper()}(DISTINCT ...) is not "
                             "supported yet", node)
        if func == "percentile":
            return percentile(self, node, bound, is_distinct, filt, scope)
        if func == "array_agg":
            element = T.STRING if t == T.NULL else t
            return AggCall("array_agg", (coerce(bound, element),), T.array_of(element),
                           is_distinct, filt)
        if func == "json_arrayagg":
            null_on_null = str(node.args.get("null_handling") or "").upper() == "NULL ON NULL"
            return AggCall("json_arrayagg", (json_text(bound), Literal(null_on_null, T.BOOLEAN)),
                           T.STRING, False, filt)
        if func == "listagg":
            if not (T.is_string(t) or t == T.NULL):
                raise self.error(BindError, f"LISTAGG needs a STRING argument, got "
                                 f"{T.type_name(t)}", node)
            sep_node = node.args.get("separator")
            sep = self.bind_plain(sep_node, scope) if sep_node is not None else \
                Literal(",", T.STRING)
            if not isinstance(sep, Literal) or not (T.is_string(sep.dtype) or
                                                    sep.dtype == T.NULL):
                raise self.error(NotSupportedError, "the separator of LISTAGG must be a "
                                 "constant STRING", sep_node or node)
            return AggCall("listagg", (coerce(bound, T.STRING), sep), T.STRING, is_distinct,
                           filt)
        if func in ("sum", "avg"):
            if t == T.NULL:
                bound, t = coerce(bound, T.INT), T.INT
            if not T.is_numeric(t):
                raise self.error(BindError, f"{func.upper()} needs a numeric argument, got "
                                 f"{T.type_name(t)}", node)
            out = T.sum_type(t) if func == "sum" else T.avg_type(t)
            return AggCall(func, (bound,), out, is_distinct, filt)
        if func in ("min", "max") and T.is_opaque(t):
            raise self.error(BindError, f"{func.upper()} of a {T.type_name(t)}: it has no "
                             "order (as in Flink)", node)
        if func in ("min", "max") and T.is_nested(t):  # (Flink 2.3 has no plan for it either)
            raise self.error(NotSupportedError, f"{func.upper()} of {T.type_name(t)} values "
                             "is not supported: take it of a field or an element", node)
        return AggCall(func, (bound,), t, is_distinct, filt)


def json_text(value: Expr) -> Expr:
    """A JSON aggregate's value as its JSON text (the scalar JSON functions' writing; a
    JSON_OBJECT / JSON_ARRAY / JSON_QUERY value nests as JSON, not as a quoted string)."""
    from sqlengine.bind_json import is_json_valued

    raw = "1" if is_json_valued(value) else "0"
    return Call("json_text", (value, Literal(raw, T.STRING)), T.STRING)


def json_objectagg(b: AggregateBinder, node: exp.Expression, scope: Scope,
                   filt: Expr | None) -> AggCall:
    """JSON_OBJECTAGG(KEY k VALUE v [NULL | ABSENT ON NULL]): one argument, the ROW (k, v)."""
    pairs = node.expressions
    if len(pairs) != 1 or not isinstance(pairs[0], exp.JSONKeyValue):
        raise b.error(NotSupportedError, "JSON_OBJECTAGG takes one KEY ... VALUE ... pair",
                      node)
    key = b.bind_plain(pairs[0].this, scope)
    value = b.bind_plain(pairs[0].expression, scope)
    if not T.is_string(key.dtype):
        raise b.error(BindError, f"the KEY of JSON_OBJECTAGG must be a STRING, got "
                      f"{T.type_name(key.dtype)}", pairs[0].this)
    value = json_text(coerce(value, T.STRING) if value.dtype == T.NULL else value)
    pair = Call("row_value", (key, value), pa.struct([pa.field("k", key.dtype),
                                                       pa.field("v", value.dtype)]))
    absent = str(node.args.get("null_handling") or "").upper() == "ABSENT ON NULL"
    return AggCall("json_objectagg", (pair, Literal(not absent, T.BOOLEAN)), T.STRING, False,
                   filt)


def percentile(b: AggregateBinder, node: exp.Expression, bound: Expr, is_distinct: bool,
               filt: Expr | None, scope: Scope) -> AggCall:
    """PERCENTILE(value, p [, frequency]): the continuous percentile (linear between the two
    nearest values, as Flink's and PERCENTILE_CONT); p a constant in [0, 1] or an ARRAY of
    them; each value counted ``frequency`` times (a row whose frequency is NULL or not
    positive counts not at all, as in Flink 2.3)."""
    if not (T.is_numeric(bound.dtype) or bound.dtype == T.NULL):
        raise b.error(BindError, f"PERCENTILE needs a numeric value, got "
                      f"{T.type_name(bound.dtype)}", node)
    freq_node = node.args.get("frequency")
    if freq_node is not None and is_distinct:
        raise b.error(NotSupportedError, "PERCENTILE(DISTINCT ...) with a frequency is not "
                      "supported", node)
    if freq_node is not None:
        freq = b.bind_plain(freq_node, scope)
        if not (T.is_integer(freq.dtype) or freq.dtype == T.NULL):
            raise b.error(BindError, "the frequency of PERCENTILE must be an integer, got "
                          f"{T.type_name(freq.dtype)}", freq_node)
        freq = coerce(freq, T.BIGINT)
        value = coerce(bound, T.DOUBLE)
        skip = Call("or", (Call("or", (Call("is_null", (value,), T.BOOLEAN),
                                       Call("is_null", (freq,), T.BOOLEAN)), T.BOOLEAN),
                           Call("le", (freq, Literal(0, T.BIGINT)), T.BOOLEAN)), T.BOOLEAN)
        pair_type = pa.struct([pa.field("v", T.DOUBLE), pa.field("f", T.BIGINT)])
        pair = Call("row_value", (value, freq), pair_type)
        bound = Case(((skip, Literal(None, pair_type)),), pair, pair_type)
    p = b.bind_plain(node.expression, Scope(()))

    def number(e: Expr) -> object:
        e = e.arg if isinstance(e, Cast) else e  # (an ARRAY's elements: cast to one type)
        return e.value if isinstance(e, Literal) else None

    def fraction(e: Expr) -> bool:
        v = number(e)
        return isinstance(v, int | float | decimal.Decimal) and not isinstance(v, bool) \
            and 0 <= v <= 1

    value = bound if freq_node is not None else coerce(bound, T.DOUBLE)
    if isinstance(p, Call) and p.name == "array_value" and p.args and \
            all(fraction(a) for a in p.args):
        # (an ARRAY of percentages: an ARRAY<DOUBLE> of the percentiles, in their order)
        many = tuple(float(number(a)) for a in p.args)  # type: ignore[arg-type]
        out = pa.list_(pa.float64())
        return AggCall("percentile", (value, Literal(many, out)), out, is_distinct, filt)
    if not fraction(p):
        raise b.error(BindError, "the percentage of PERCENTILE must be a constant number "
                      "between 0 and 1, or an ARRAY of them", node.expression)
    return AggCall("percentile", (value, Literal(float(p.value), T.DOUBLE)),  # type: ignore[attr-defined]
                   T.DOUBLE, is_distinct, filt)
