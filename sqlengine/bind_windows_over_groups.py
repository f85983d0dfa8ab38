"""Window functions in a query with GROUP BY or aggregates (``RANK() OVER (ORDER BY SUM(x))``):
SQL evaluates them after grouping, so the query is split in two before binding:

    SELECT <items> FROM ... WHERE ... GROUP BY ... HAVING ... ORDER BY ... LIMIT ...
 -> SELECT <items over $g / $a columns> FROM (
        SELECT <grouping keys> AS $g0.., <aggregate calls> AS $a0..
        FROM ... WHERE ... GROUP BY ... HAVING ...) ORDER BY ... LIMIT ...

Every aggregate call outside a window function's own head (``SUM(SUM(x)) OVER ()`` keeps its
outer SUM as the window function) and every GROUPING() becomes an inner column; grouping keys
become inner columns, and expressions equal to one (or bare columns naming one) read it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine.bind_grouping import grouping_sets, has_grouping_sets
from sqlengine.errors import BindError

if TYPE_CHECKING:
    from sqlengine.bind_select import SelectBinder


def _column(name: str) -> exp.Column:
    return exp.Column(this=exp.Identifier(this=name, quoted=True))


def _heads(node: exp.Expression) -> set[int]:
    """ids of the aggregate calls that are window functions themselves (OVER's head)."""
    return {id(w.this) for w in node.find_all(exp.Window) if isinstance(w.this, exp.AggFunc)}


def refuse_nested(select: SelectBinder, windows: list[exp.Window]) -> None:
    """A window function inside an aggregate's argument is an error (split would nest it in
    a subquery again and again)."""
    for w in windows:
        outer = w.find_ancestor(exp.AggFunc)
        if outer is not None and not isinstance(outer.parent, exp.Window):
            raise select.error(BindError, "a window function (OVER) cannot be an aggregate's "
                               "argument: compute it in a subquery, then aggregate its "
                               "column", w)


def split(node: exp.Select, items: list[tuple[exp.Expression, str]]) -> exp.Select:
    group = node.args.get("group")
    group_exprs = list(group.expressions) if group is not None else []
    keys = grouping_sets(group_exprs)[0] if has_grouping_sets(group_exprs) else group_exprs
    order = node.args.get("order")
    sources = [e for e, _ in items] + ([o.this for o in order.expressions] if order else [])
    aggregates: list[exp.Expression] = []
    for src in sources:
        heads = _heads(src)
        for n in src.find_all(exp.AggFunc, exp.Grouping):
            if id(n) in heads or any(n is a for a in aggregates):
                continue
            # (an aggregate nested in another non-window aggregate is an error the inner
            # query reports; only the outermost is taken)
            if any(isinstance(p, exp.AggFunc) and id(p) not in heads
                   for p in _parents(n, src)):
                continue
            aggregates.append(n)
    key_names = {k.name.lower(): i for i, k in enumerate(keys) if isinstance(k, exp.Column)}

    def rewrite(e: exp.Expression) -> exp.Expression:
        def swap(n: exp.Expression) -> exp.Expression:
            if isinstance(n.parent, exp.Window) and n.parent.this is n:
                return n  # a window function's own head stays (its arguments are rewritten)
            for j, a in enumerate(aggregates):
                if n is a or n == a:
                    return _column(f"$a{j}")
            for i, k in enumerate(keys):
                if n == k:
                    return _column(f"$g{i}")
            if isinstance(n, exp.Column) and n.name.lower() in key_names:
                return _column(f"$g{key_names[n.name.lower()]}")
            return n

        return e.copy().transform(swap, copy=False) if not _is_replaced(e, aggregates, keys) \
            else swap(e)

    inner = node.copy()
    for arg in ("order", "limit", "offset", "distinct"):
        inner.set(arg, None)
    inner.set("expressions", [exp.alias_(k.copy(), f"$g{i}", quoted=True)
                              for i, k in enumerate(keys)] +
              [exp.alias_(a.copy(), f"$a{j}", quoted=True) for j, a in enumerate(aggregates)])
    outer = exp.Select(expressions=[exp.alias_(rewrite(e), name, quoted=True)
                                    for e, name in items])
    outer.set("from", exp.From(this=exp.Subquery(this=inner, alias=exp.TableAlias(
        this=exp.Identifier(this="$grouped", quoted=True)))))
    if order is not None:
        outer.set("order", exp.Order(expressions=[
            o.__class__(**{**o.args, "this": rewrite(o.this)}) for o in order.expressions]))
    for arg in ("limit", "offset", "distinct"):
        if node.args.get(arg) is not None:
            outer.set(arg, node.args[arg].copy())
    return outer


def _parents(n: exp.Expression, root: exp.Expression) -> list[exp.Expression]:
    out = []
    p = n.parent
    while p is not None and p is not root.parent:
        out.append(p)
        p = p.parent
    return out


def _is_replaced(e: exp.Expression, aggregates: list[exp.Expression],
                 keys: list[exp.Expression]) -> bool:
    return any(e is a or e == a for a in aggregates) or any(e == k for k in keys)
