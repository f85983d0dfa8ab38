"""``FROM t, LATERAL (subquery) [AS] x [(cols)]`` and ``[CROSS | LEFT] JOIN LATERAL (subquery)
x ON ...``: a subquery that reads the columns of the FROM items before it, as Flink (Calcite)
accepts. Bound as a join whose right side holds the subquery's correlated plan (its references
to the left row are ``OuterRef``); the optimizer's decorrelate rule turns it into a plain join
(optimizer/rules/decorrelate.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine.bind_common import Relation, require_boolean, scope_of
from sqlengine.bind_expr import Scope
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.nodes import Join
from sqlengine.plan.subquery import has_subquery

if TYPE_CHECKING:
    from sqlengine.bind_relations import RelationBinder


def is_lateral_subquery(join: exp.Join) -> bool:
    return isinstance(join.this, exp.Lateral) and isinstance(join.this.this, exp.Subquery)


def lateral_join(binder: RelationBinder, left: Relation, join: exp.Join) -> Relation:
    lateral = join.this
    side = (join.args.get("side") or "").upper()
    kind = (join.args.get("kind") or "").upper()
    if lateral.args.get("ordinality"):
        raise binder.error(NotSupportedError, "WITH ORDINALITY after a LATERAL subquery is "
                           "not supported (it numbers the elements of UNNEST)", lateral)
    if lateral.args.get("cross_apply") is False:  # OUTER APPLY: LEFT JOIN LATERAL ON TRUE
        side = "LEFT"
    if side not in ("", "LEFT") or kind not in ("", "INNER", "CROSS", "OUTER"):
        raise binder.error(NotSupportedError, f"{side or kind} JOIN LATERAL is not "
                           "supported: a LATERAL subquery joins as an INNER, CROSS or LEFT "
                           "join", join)
    if join.args.get("using"):
        raise binder.error(NotSupportedError, "JOIN LATERAL ... USING is not supported; "
                           "write ON", join)
    on_node = join.args.get("on")
    if side == "LEFT" and on_node is None and lateral.args.get("cross_apply") is None:
        raise binder.error(BindError, "LEFT JOIN LATERAL needs an ON condition (ON TRUE)",
                           join)
    if kind == "CROSS" and on_node is not None:
        raise binder.error(BindError, "CROSS JOIN takes no ON or USING condition", join)
    plan = binder.binder.subqueries.plan(lateral.this, left.scope)
    alias = lateral.args.get("alias")
    name = alias.name if alias is not None and alias.name else None
    cols = [c.name for c in alias.columns] if alias is not None and alias.columns else []
    right = binder.rename(Relation(plan, scope_of(plan, None)), name, cols, lateral)
    scope = Scope(left.scope.columns + right.scope.columns)
    cond = None
    if on_node is not None:
        cond = binder.exprs.bind(on_node, scope)
        require_boolean(binder.binder, cond, on_node, "ON")
        if has_subquery(cond):
            raise binder.error(NotSupportedError, "a subquery in the ON condition of a "
                               "LATERAL join is not supported", on_node)
    joined = Join(left.plan, right.plan, "left" if side == "LEFT" else "inner", (), (), cond)
    return Relation(joined, scope)
