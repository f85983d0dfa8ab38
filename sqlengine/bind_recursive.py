"""``WITH RECURSIVE``: a common table expression that reads itself, bound as an iteration
(``sqlengine.plan.iteration``).

``t (cols) AS (base UNION [ALL] step)``: the terms that do not read ``t`` are the base (its
columns name and type ``t``), the others the step, which reads ``t`` once (linear recursion,
as the SQL standard and PostgreSQL require) through a ``WorkingTable``. What a round-by-round
evaluation cannot keep exact is refused by name: aggregates, ORDER BY / LIMIT, window
functions and Top-N in the step, a step reading ``t`` twice, ``t`` inside a subquery, and
UNION mixed with UNION ALL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import Relation, scope_of
from sqlengine.bind_expr import coerce
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef
from sqlengine.plan.iteration import Iterate, WorkingTable, working_tables
from sqlengine.plan.subquery import has_subquery

if TYPE_CHECKING:
    from sqlengine.bind_relations import RelationBinder

# Nodes a round-by-round step cannot hold: each needs all its input at once.
_WHOLE_INPUT = {N.Aggregate: "an aggregate (GROUP BY)", N.Sort: "ORDER BY", N.Limit: "LIMIT",
                N.Rank: "a Top-N or ROW_NUMBER", N.WindowFunctions: "a window function",
                N.OverAggregate: "an OVER aggregate"}


def reads_itself(cte: exp.CTE) -> bool:
    """Whether the CTE's query reads a table of its own name (without a database)."""
    name = cte.alias.lower()
    return any(t.name.lower() == name and not t.args.get("db")
               for t in cte.this.find_all(exp.Table))


def in_dependency_order(rb: RelationBinder, ctes: list[exp.CTE]) -> list[exp.CTE]:
    """The CTEs of a ``WITH RECURSIVE``, each after those it reads (in a WITH RECURSIVE every
    name is visible to every query, as in PostgreSQL: a query may read one defined after it).
    Mutual recursion (two queries reading each other, directly or not) is refused, as
    PostgreSQL refuses it."""
    names = {c.alias.lower(): c for c in ctes}
    reads: dict[str, list[exp.Table]] = {}
    for cte in ctes:
        own = cte.alias.lower()
        reads[own] = [t for t in cte.this.find_all(exp.Table)
                      if not t.args.get("db") and t.name.lower() in names
                      and t.name.lower() != own]
    ordered: list[exp.CTE] = []
    state: dict[str, int] = {}  # (1: being placed, 2: placed)

    def place(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        state[name] = 1
        for t in reads[name]:
            other = t.name.lower()
            if state.get(other) == 1:
                cycle = [*path[path.index(other):], name, other] if other in path \
                    else [name, other]
                raise rb.error(NotSupportedError, "mutual recursion between WITH queries "
                               f"({' -> '.join(repr(names[n].alias) for n in cycle)}) is not "
                               "supported: write it as one recursive query", t)
            place(other, [*path, name])
        state[name] = 2
        ordered.append(names[name])

    for cte in ctes:
        place(cte.alias.lower(), [])
    return ordered


def _terms(node: exp.Expression, name: str) -> tuple[list[exp.Expression], bool]:
    """The UNION terms of a recursive CTE's query and whether it is UNION (not UNION ALL)."""
    if not isinstance(node, exp.Union):
        raise BindError(f"the recursive query {name!r} must be 'base UNION [ALL] step'")
    distinct = bool(node.args.get("distinct"))
    terms: list[exp.Expression] = []
    stack: list[exp.Expression] = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, exp.Union) and not n.args.get("order") and not n.args.get("limit"):
            if bool(n.args.get("distinct")) != distinct:
                raise NotSupportedError(f"the recursive query {name!r} mixes UNION and UNION "
                                        "ALL")
            stack += [n.expression, n.this]
            continue
        terms.append(n)
    return terms, distinct


def recursive_cte(rb: RelationBinder, cte: exp.CTE, cols: list[str],
                  ctes: dict[str, Relation]) -> Relation:
    name = cte.alias
    try:
        terms, distinct = _terms(cte.this, name)
    except (BindError, NotSupportedError) as e:
        raise rb.error(type(e), e.message, cte) from None
    probe = exp.CTE(this=None, alias=exp.TableAlias(this=exp.to_identifier(name)))
    base_terms, step_terms = [], []
    for t in terms:
        probe.set("this", t)
        (step_terms if reads_itself(probe) else base_terms).append(t)
    if not base_terms:
        raise rb.error(BindError, f"the recursive query {name!r} has no term that does not "
                       f"read {name!r} (its base)", cte)
    base = rb.rename(_union(rb, base_terms, ctes), name, cols, cte)
    table = WorkingTable(name, base.plan.schema)
    inner = dict(ctes)
    inner[name.lower()] = Relation(table, scope_of(table, name))
    steps = []
    for term in step_terms:
        step = rb.query(term, inner).plan
        _check_step(rb, step, base.plan.schema, name, term)
        steps.append(_typed_as(rb, step, base.plan.schema, name, term))
    step_plan = steps[0] if len(steps) == 1 else N.Union(tuple(steps))
    plan = Iterate(name, base.plan, step_plan, distinct)
    return Relation(plan, scope_of(plan, name))


def _union(rb: RelationBinder, terms: list[exp.Expression], ctes: dict[str, Relation]
           ) -> Relation:
    if len(terms) == 1:
        return rb.query(terms[0], ctes)
    node = terms[0]
    for t in terms[1:]:
        node = exp.Union(this=node, expression=t, distinct=False)
    return rb.query(node, ctes)


def _check_step(rb: RelationBinder, step: N.LogicalPlan, schema: N.Schema, name: str,
                term: exp.Expression) -> None:
    found = working_tables(step)
    if len(found) != 1:
        raise rb.error(NotSupportedError, f"the step of the recursive query {name!r} reads "
                       f"{name!r} {len(found)} times; only linear recursion (one reference) "
                       "is supported", term)
    stack = [step]
    while stack:
        node = stack.pop()
        what = _WHOLE_INPUT.get(type(node))
        if what is not None and working_tables(node):
            raise rb.error(NotSupportedError, f"{what} over {name!r} in the step of a "
                           "recursive query is not supported (each round sees only the "
                           "previous round's rows)", term)
        if any(has_subquery(e) for e in _expressions(node)) or _null_supplying(node):
            raise rb.error(NotSupportedError, f"{name!r} inside a subquery or the outer side "
                           "of an outer join in a recursive step is not supported", term)
        stack.extend(node.children())
    if len(step.schema) != len(schema):
        raise rb.error(BindError, f"the step of the recursive query {name!r} gives "
                       f"{len(step.schema)} columns, its base {len(schema)}", term)


def _null_supplying(node: N.LogicalPlan) -> bool:
    """Whether the working table is on a side of an outer join that gets NULL-padded (a
    round would pad the other side's rows that only a later round matches)."""
    if not isinstance(node, N.Join):
        return False
    padded = {"left": (node.right,), "right": (node.left,),
              "full": (node.left, node.right)}.get(node.kind, ())
    return any(working_tables(side) for side in padded)


def _expressions(node: N.LogicalPlan) -> list[object]:
    out: list[object] = []
    for attr in ("predicate", "condition"):
        value = getattr(node, attr, None)
        if value is not None:
            out.append(value)
    return out


def _widens(got: object, want: object) -> bool:
    """Whether values of type ``got`` fit ``want`` (their common type is ``want``)."""
    try:
        return T.common_type([got, want]) == want  # type: ignore[list-item]
    except BindError:
        return False


def _typed_as(rb: RelationBinder, step: N.LogicalPlan, schema: N.Schema, name: str,
              term: exp.Expression) -> N.LogicalPlan:
    """The step's columns as the base types them (widening only: a narrowing would change
    rows silently)."""
    exprs = []
    for i, (got, want) in enumerate(zip(step.schema.fields, schema.fields)):
        ref = ColumnRef(i, got.name, got.type)
        if got.type != want.type and got.type != T.NULL and not _widens(got.type, want.type):
            raise rb.error(BindError, f"column {want.name!r} of the recursive query {name!r} "
                           f"is {T.type_name(want.type)} in its base but "
                           f"{T.type_name(got.type)} in its step; CAST the base's column to "
                           "the wider type", term)
        exprs.append(coerce(ref, want.type))
    return N.Project(step, tuple(exprs), tuple(schema.names()))
