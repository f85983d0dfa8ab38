"""'python.udf.on-error': where a Python function's failing rows can be skipped.

With 'skip', the operators that evaluate projections and filters (Filter, Project) drop a row a
Python scalar or table function fails on and count it (runtime/operators/stateless.py). So that
a row can be dropped before it is aggregated, the calls in an aggregation's keys and arguments
(GROUP BY, window aggregations, OVER) are computed by a projection below it
(``split_python_calls``, before the optimizer's rules: Flink's PythonCalcSplitRule does the
same to run them in a Python Calc of their own). A call evaluated by any other operator (a
join's condition or keys, a source's computed column, an iteration's step, ...) cannot drop its
row there, and the Spark runtime does not implement the option: such a query is refused before
it runs, naming the function and the operator, rather than failing on the first bad row or
skipping nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from sqlengine.errors import NotSupportedError
from sqlengine.functions_python import display_name, is_aggregate
from sqlengine.optimizer.physical import PhysicalNode
from sqlengine.optimizer.specs import FilterSpec, ProjectSpec
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import AggCall, Call, ColumnRef, Expr, remap_columns
from sqlengine.plan.tree import Transformed, transform_up

ON_ERROR_KEY = "python.udf.on-error"


def skipping(options: dict[str, str] | None) -> bool:
    return str((options or {}).get(ON_ERROR_KEY, "fail")).lower() == "skip"


def split_python_calls(plan: N.LogicalPlan, options: dict[str, str] | None
                       ) -> N.LogicalPlan:
    """With 'skip': the Python calls in aggregations' keys and arguments (GROUP BY, window
    aggregations, OVER) computed by a projection below them, which can drop a row."""
    if not skipping(options):
        return plan
    return transform_up(plan, _split).data


def _is_call(e: Expr) -> bool:
    return isinstance(e, Call) and e.name.startswith("py:") and not is_aggregate(e.name)


def _passing(plan: N.LogicalPlan, calls: list[Expr]) -> N.LogicalPlan:
    """``plan``'s columns and then the values of ``calls`` (over ``plan``'s columns)."""
    fields = plan.schema.fields
    return N.Project(plan, tuple(ColumnRef(i, f.name, f.type)
                                 for i, f in enumerate(fields)) + tuple(calls),
                     tuple(f.name for f in fields) +
                     tuple(f"$py{i}" for i in range(len(calls))))


def _dropping(plan: N.LogicalPlan, start: int, count: int) -> N.LogicalPlan:
    """``plan`` without its columns ``start`` .. ``start + count - 1``."""
    fields = plan.schema.fields
    keep = [i for i in range(len(fields)) if not start <= i < start + count]
    return N.Project(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in keep),
                     tuple(fields[i].name for i in keep))


def _split_join(node: N.Join) -> Transformed[N.LogicalPlan]:
    """A join's Python calls over one side (in its keys, or in its condition reading that
    side only) computed by a projection on that side; a call reading both sides stays (and
    is refused by ``check_on_error``)."""
    lw, rw = len(node.left.schema.fields), len(node.right.schema.fields)
    left: list[Expr] = []
    right: list[Expr] = []

    def collect(e: Expr, calls: list[Expr]) -> None:
        if _is_call(e):
            if e not in calls:
                calls.append(e)
            return
        for k in e.children():
            collect(k, calls)

    for k in node.left_keys:
        collect(k, left)
    for k in node.right_keys:
        collect(k, right)
    both: list[Expr] = []  # (the condition's calls, each then put on its side)
    if node.condition is not None:
        collect(node.condition, both)
    for c in both:
        cols = c.columns()
        if cols and min(cols) >= lw:
            shifted = remap_columns(c, {i: i - lw for i in cols})
            if shifted not in right:
                right.append(shifted)
        elif (not cols or max(cols) < lw) and c not in left:
            left.append(c)
    if not left and not right:
        return Transformed.no(node)
    lc = len(left)

    def side_key(e: Expr, calls: list[Expr], width: int) -> Expr:
        if _is_call(e) and e in calls:
            return ColumnRef(width + calls.index(e), f"$py{calls.index(e)}", e.dtype)
        kids = e.children()
        return e if not kids else e.with_children(tuple(side_key(k, calls, width)
                                                        for k in kids))

    def condition(e: Expr) -> Expr:
        if _is_call(e):
            cols = e.columns()
            if (not cols or max(cols) < lw) and e in left:
                return ColumnRef(lw + left.index(e), f"$py{left.index(e)}", e.dtype)
            shifted = remap_columns(e, {i: i - lw for i in cols}) if cols and \
                min(cols) >= lw else None
            if shifted is not None and shifted in right:
                j = right.index(shifted)
                return ColumnRef(lw + lc + rw + j, f"$py{j}", e.dtype)
        if isinstance(e, ColumnRef):
            return e if e.index < lw else dataclasses.replace(e, index=e.index + lc)
        kids = e.children()
        return e if not kids else e.with_children(tuple(condition(k) for k in kids))

    joined = dataclasses.replace(
        node, left=_passing(node.left, left) if left else node.left,
        right=_passing(node.right, right) if right else node.right,
        left_keys=tuple(side_key(k, left, lw) for k in node.left_keys),
        right_keys=tuple(side_key(k, right, rw) for k in node.right_keys),
        condition=None if node.condition is None else condition(node.condition))
    out: N.LogicalPlan = joined
    if right and node.kind not in ("semi", "anti"):
        out = _dropping(out, lw + lc + rw, len(right))
    if left:
        out = _dropping(out, lw, lc)
    return Transformed.yes(out)


def _split(node: N.LogicalPlan) -> Transformed[N.LogicalPlan]:
    if isinstance(node, N.Join):
        return _split_join(node)
    if not isinstance(node, N.Aggregate | N.OverAggregate | N.WindowFunctions):
        return Transformed.no(node)
    fields = node.input.schema.fields
    width = len(fields)
    calls: list[Expr] = []

    def lift(e: Expr) -> Expr:
        if _is_call(e):
            if e not in calls:
                calls.append(e)
            i = calls.index(e)
            return ColumnRef(width + i, f"$py{i}", e.dtype)
        kids = e.children()
        return e if not kids else e.with_children(tuple(lift(k) for k in kids))

    def lift_agg(a: AggCall) -> AggCall:
        return dataclasses.replace(a, args=tuple(lift(x) for x in a.args),
                                   filter=None if a.filter is None else lift(a.filter))

    if isinstance(node, N.Aggregate):
        parts: dict[str, object] = {"keys": tuple(lift(k) for k in node.keys),
                                    "aggs": tuple(lift_agg(a) for a in node.aggs)}
    elif isinstance(node, N.OverAggregate):
        parts = {"partition": tuple(lift(k) for k in node.partition),
                 "aggs": tuple(lift_agg(a) for a in node.aggs)}
    else:
        parts = {"partition": tuple(lift(k) for k in node.partition),
                 "order": tuple(dataclasses.replace(k, expr=lift(k.expr)) for k in node.order),
                 "calls": tuple(dataclasses.replace(
                     c, args=tuple(lift(x) for x in c.args),
                     agg=None if c.agg is None else lift_agg(c.agg)) for c in node.calls)}
    if not calls:
        return Transformed.no(node)
    below = _passing(node.input, calls)
    out = dataclasses.replace(node, input=below, **parts)  # type: ignore[arg-type]
    if isinstance(node, N.Aggregate):
        return Transformed.yes(out)
    # (OVER appends its columns to its input's: the calls' columns are dropped after it)
    return Transformed.yes(_dropping(out, width, len(calls)))


def check_on_error(root: PhysicalNode, options: dict[str, str]) -> None:
    """Refuse a plan that 'skip' cannot keep its word for (see the module's text).

    Raises:
        NotSupportedError: naming the option, the function and the operator (or Spark).
    """
    if not skipping(options):
        return
    spark = str(options.get("execution.target", "native")).lower() == "spark"
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.extend(child for child, _ in node.inputs)
        if isinstance(node.op, FilterSpec | ProjectSpec) and not spark:
            continue
        name = next(_python_calls(node.op), None)
        if name is None:
            continue
        if spark:
            msg = (f"'{ON_ERROR_KEY}' = 'skip' is not implemented on Spark (the Python "
                   f"function {name} would fail the job on a bad row): set it to 'fail' or "
                   "run the query natively")
        else:
            msg = (f"'{ON_ERROR_KEY}' = 'skip' drops the rows a Python function fails on "
                   f"where a projection or a filter calls it; here {name} is called by "
                   f"{type(node.op).__name__.removesuffix('Spec')}, which cannot drop a row "
                   f"(set the option to 'fail', or compute the call in a projection)")
        raise NotSupportedError(msg)


def _python_calls(o: object, seen: set[int] | None = None) -> Iterator[str]:
    """The names of the Python scalar and table functions called in ``o`` (an operator spec,
    its expressions, nested plans and containers of these; not aggregate functions)."""
    seen = set() if seen is None else seen
    if id(o) in seen or isinstance(o, str | bytes | int | float | bool | type(None)):
        return
    seen.add(id(o))
    if isinstance(o, Expr):
        for e in o.walk():
            if isinstance(e, Call) and e.name.startswith("py:") and not is_aggregate(e.name):
                yield display_name(e.name)
        return
    if isinstance(o, tuple | list | set | frozenset):
        for x in o:
            yield from _python_calls(x, seen)
        return
    if isinstance(o, dict):
        for x in o.values():
            yield from _python_calls(x, seen)
        return
    if not type(o).__module__.startswith("sqlengine.") or not dataclasses.is_dataclass(o):
        return
    for f in dataclasses.fields(o):
        yield from _python_calls(getattr(o, f.name, None), seen)
