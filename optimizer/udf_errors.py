"""'python.udf.on-error': where a Python function's failing rows can be skipped.

With 'skip', the operators that evaluate projections and filters (Filter, Project) drop a row a
Python scalar or table function fails on and count it (runtime/operators/stateless.py). A call
evaluated by any other operator (a join's condition, an aggregate's argument, a source's
computed column, an iteration's step, ...) cannot drop its row there, and the Spark runtime
does not implement the option: such a query is refused before it runs, naming the function and
the operator, rather than failing on the first bad row or skipping nothing."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from sqlengine.errors import NotSupportedError
from sqlengine.functions_python import display_name, is_aggregate
from sqlengine.optimizer.physical import PhysicalNode
from sqlengine.optimizer.specs import FilterSpec, ProjectSpec
from sqlengine.plan.expressions import Call, Expr

ON_ERROR_KEY = "python.udf.on-error"


def check_on_error(root: PhysicalNode, options: dict[str, str]) -> None:
    """Refuse a plan that 'skip' cannot keep its word for (see the module's text).

    Raises:
        NotSupportedError: naming the option, the function and the operator (or Spark).
    """
    if str(options.get(ON_ERROR_KEY, "fail")).lower() != "skip":
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
