"""Set operations: UNION [ALL] (a chain of UNION ALLs as one n-ary union), INTERSECT and EXCEPT
[ALL | DISTINCT] as Calcite and Flink rewrite them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import Relation, distinct, scope_of
from sqlengine.bind_expr import coerce
from sqlengine.errors import BindError
from sqlengine.plan.expressions import AggCall, Call, Case, ColumnRef, Expr, Literal
from sqlengine.plan.nodes import (
    Aggregate,
    Filter,
    LogicalPlan,
    Project,
    ReplicateRows,
    Union,
)

if TYPE_CHECKING:
    from sqlengine.bind_relations import RelationBinder


def set_inputs(rb: RelationBinder, node: exp.SetOperation, ctes: dict[str, Relation]
               ) -> list[LogicalPlan]:
    """The inputs of a set operation, cast to their common column types. A chain of
    UNION ALLs (``a UNION ALL b UNION ALL c``, which parses as a left-deep tree) is
    taken as one n-ary union: binding and planning it node by node cost time quadratic
    in the number of branches."""
    word = node.key.upper()
    rb.binder.selects.refuse_set_clauses(node)
    branches = [node.expression]
    head: exp.Expression = node.this
    while (isinstance(node, exp.Union) and not node.args.get("distinct")
           and _bare_union_all(head)):
        rb.binder.selects.refuse_set_clauses(head)
        branches.append(head.expression)
        head = head.this
    branches.append(head)
    rels = [rb.query(b, ctes) for b in reversed(branches)]
    lf = rels[0].plan.schema.fields
    for rel in rels[1:]:
        rf = rel.plan.schema.fields
        if len(lf) != len(rf):
            raise rb.error(BindError, f"{word} inputs have {len(lf)} and {len(rf)} "
                             "columns", node)
    types = []
    for i, a in enumerate(lf):
        try:
            types.append(T.column_common_type([r.plan.schema.fields[i].type for r in rels],
                                              f"{word} column {a.name!r}"))
        except BindError as e:
            raise rb.error(BindError, e.message, node) from None
    inputs = []
    for rel in rels:
        input_plan = rel.plan
        if [f.type for f in input_plan.schema.fields] != types:
            exprs = tuple(coerce(ColumnRef(i, f.name, f.type), t)
                          for i, (f, t) in enumerate(zip(input_plan.schema.fields, types)))
            input_plan = Project(input_plan, exprs, tuple(f.name for f in lf))
        inputs.append(input_plan)
    return inputs

def union(rb: RelationBinder, node: exp.Union, ctes: dict[str, Relation]) -> Relation:
    plan: LogicalPlan = Union(tuple(set_inputs(rb, node, ctes)))
    if node.args.get("distinct"):
        plan = distinct(plan)
    rel = Relation(plan, scope_of(plan, None))
    return rb.binder.selects.order_limit(node, rel)

def intersect_except(rb: RelationBinder, node: exp.Intersect | exp.Except,
                     ctes: dict[str, Relation]) -> Relation:
    """INTERSECT / EXCEPT [ALL | DISTINCT] as Calcite and Flink rewrite them: both inputs
    tagged and unioned, counted per distinct row (NULLs equal), then filtered (DISTINCT)
    or replicated min(l, r) / max(l - r, 0) times (ALL)."""
    inputs = set_inputs(rb, node, ctes)
    fields = inputs[0].schema.fields
    width = len(fields)
    names = tuple(f.name for f in fields)
    cols = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields))
    one, zero = Literal(1, T.BIGINT), Literal(0, T.BIGINT)
    tagged = tuple(Project(p, (*cols, one if i == 0 else zero, zero if i == 0 else one),
                           (*names, "$l", "$r")) for i, p in enumerate(inputs))
    union = Union(tagged)
    tags = [ColumnRef(width + i, n, T.BIGINT) for i, n in enumerate(("$l", "$r"))]
    counted = Aggregate(union, cols, names, tuple(AggCall("sum", (t,), T.BIGINT)
                                                  for t in tags), ("$l", "$r"))
    left_n, right_n = (ColumnRef(width + i, n, T.BIGINT) for i, n in
                       enumerate(("$l", "$r")))
    intersect = isinstance(node, exp.Intersect)

    def cmp(name: str, a: Expr, b: Expr) -> Expr:
        return Call(name, (a, b), T.BOOLEAN)

    plan: LogicalPlan
    if node.args.get("distinct", True):
        right_ok = cmp("gt", right_n, zero) if intersect else cmp("eq", right_n, zero)
        kept = Filter(counted, Call("and", (cmp("gt", left_n, zero), right_ok), T.BOOLEAN))
        plan = Project(kept, cols, names)
    else:
        times = Call("least", (left_n, right_n), T.BIGINT) if intersect else Case(
            ((cmp("gt", left_n, right_n), Call("subtract", (left_n, right_n), T.BIGINT)),),
            zero, T.BIGINT)
        counts = Project(counted, (times, *cols), ("$n", *names))
        plan = ReplicateRows(Filter(counts, cmp("gt", ColumnRef(0, "$n", T.BIGINT), zero)))
    rel = Relation(plan, scope_of(plan, None))
    return rb.binder.selects.order_limit(node, rel)


def _bare_union_all(node: exp.Expression) -> bool:
    """A UNION ALL without clauses of its own (no ORDER BY, LIMIT, WITH): the left input of
    a chain of UNION ALLs, which one n-ary union takes whole."""
    return (isinstance(node, exp.Union) and not node.args.get("distinct")
            and all(v is None or k in ("this", "expression", "distinct")
                    for k, v in node.args.items()))

