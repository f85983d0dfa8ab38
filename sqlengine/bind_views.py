"""A view as it was made: Flink stores a view's query with its stars expanded, so a star
stands for the columns its tables had then."""

from __future__ import annotations

from sqlengine.catalog import ViewDef
from sqlengine.errors import BindError
from sqlengine.plan.expressions import ColumnRef
from sqlengine.plan.nodes import LogicalPlan, Project


def as_created(view: ViewDef, plan: LogicalPlan) -> LogicalPlan:
    """A view's bound query as it was when the view was made: a star stands for the columns
    it stood for then, so columns a table gained since are left out, by name (the k-th
    column of a name is the k-th one of it now). A column gone since is an error, as in
    Flink."""
    names = plan.schema.names()
    then = list(view.query_columns)
    if not then or names == then:
        return plan
    taken: dict[str, int] = {}
    picks = []
    for name in then:
        k = taken.get(name.lower(), 0)
        taken[name.lower()] = k + 1
        same = [i for i, n in enumerate(names) if n.lower() == name.lower()]
        if k >= len(same):
            raise BindError(f"view {view.name!r}: its query no longer gives column {name!r} "
                            "(a table it reads has changed since the view was made)")
        picks.append(same[k])
    fields = plan.schema.fields
    return Project(plan, tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in picks),
                   tuple(fields[i].name for i in picks))
