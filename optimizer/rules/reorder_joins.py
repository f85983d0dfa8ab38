"""reorder_joins: no cross product where the join conditions connect the tables.

``FROM part, supplier, partsupp WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey``
joins in FROM order: part with supplier first, which no condition connects, so it would be a
cross product. This rule flattens a tree of inner joins into its inputs and conditions and
joins them again left-deep, in FROM order except that each next input is the first one a
condition connects to those already joined (a cross product only where none is). A final
projection restores the column order. Cost-based ordering is a later step; this one only
avoids the cross products that the written order would make.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlengine import types as T
from sqlengine.optimizer.rule import ApplyOrder, OptimizerRule, RuleContext
from sqlengine.plan.expressions import (
    Call,
    ColumnRef,
    Expr,
    conjunction,
    conjuncts,
    remap_columns,
)
from sqlengine.plan.join_keys import split_condition
from sqlengine.plan.nodes import Join, LogicalPlan, Project
from sqlengine.plan.tree import Transformed, transform_down


@dataclass(frozen=True, slots=True)
class _Input:
    plan: LogicalPlan
    offset: int  # its first column in the flattened row

    @property
    def columns(self) -> range:
        return range(self.offset, self.offset + len(self.plan.schema))


class ReorderJoins(OptimizerRule):
    """Inner join trees with an avoidable cross product -> joined in connected order.

    Example:
        >>> from tests.plans import plan_of, show
        >>> from sqlengine.optimizer.rules.push_down_filters import PushDownFilters
        >>> plan = PushDownFilters().apply(plan_of(
        ...     "SELECT * FROM t, t AS t2, u WHERE t.a = u.a AND t2.a = u.a"),
        ...     RuleContext()).data
        >>> print(show(ReorderJoins().apply(plan, RuleContext()).data))
        Project: a, b, c, d, a AS a1, b AS b1, c AS c1, d AS d1, a AS a2, e
          Project: a, b, c, d, a, b, c, d, a, e
            Join: inner, on=[a = a]
              Join: inner, on=[a = a]
                Scan: t
                Scan: u
              Scan: t
    """

    name = "reorder_joins"
    apply_order = ApplyOrder.WHOLE_TREE

    def rewrite(self, node: LogicalPlan, ctx: RuleContext) -> Transformed[LogicalPlan]:
        return transform_down(node, _reorder)


def _reorder(node: LogicalPlan) -> Transformed[LogicalPlan]:
    if not (isinstance(node, Join) and node.kind == "inner"):
        return Transformed.no(node)
    inputs: list[_Input] = []
    conds: list[Expr] = []
    _flatten(node, 0, inputs, conds)
    if len(inputs) < 3 or not _avoidable_cross_product(node, inputs, conds):
        return Transformed.no(node)
    order = _connected_order(inputs, conds)
    if order == list(range(len(inputs))):
        return Transformed.no(node)
    # Build left-deep in the new order; positions[old column] = new column.
    positions: dict[int, int] = {}
    plan: LogicalPlan | None = None
    pending = list(conds)
    width = 0
    for i in order:
        inp = inputs[i]
        for k, c in enumerate(inp.columns):
            positions[c] = width + k
        if plan is None:
            plan = inp.plan
            width = len(inp.plan.schema)
            continue
        joined_cols = set(positions)
        ready = [c for c in pending if c.columns() <= joined_cols]
        pending = [c for c in pending if c not in ready]
        moved = [remap_columns(c, positions) for c in ready]
        keys_l, keys_r, residual = split_condition(moved, width)
        plan = Join(plan, inp.plan, "inner", tuple(keys_l), tuple(keys_r),
                    conjunction(residual))
        width += len(inp.plan.schema)
    assert plan is not None and not pending
    fields = plan.schema.fields
    total = sum(len(i.plan.schema) for i in inputs)
    exprs = tuple(ColumnRef(positions[c], fields[positions[c]].name, fields[positions[c]].type)
                  for c in range(total))
    return Transformed.yes(Project(plan, exprs, tuple(f.name for f in node.schema.fields)))


def _flatten(node: LogicalPlan, offset: int, inputs: list[_Input], conds: list[Expr]) -> None:
    """Inputs of an inner-join tree (in column order) and its conditions over the row."""
    if not (isinstance(node, Join) and node.kind == "inner"):
        inputs.append(_Input(node, offset))
        return
    n_left = len(node.left.schema)
    _flatten(node.left, offset, inputs, conds)
    _flatten(node.right, offset + n_left, inputs, conds)
    shift = {i: i + offset for i in range(len(node.schema))}
    for a, b in zip(node.left_keys, node.right_keys):
        b_row = remap_columns(b, {i: i + n_left for i in b.columns()})
        conds.append(remap_columns(Call("eq", (a, b_row), T.BOOLEAN), shift))
    if node.condition is not None:
        conds += [remap_columns(c, shift) for c in conjuncts(node.condition)]


def _avoidable_cross_product(node: Join, inputs: list[_Input], conds: list[Expr]) -> bool:
    """Whether the tree joins two parts no condition connects, while a connected order
    exists (all inputs reachable from the first through conditions)."""
    if not _has_cross_product(node):
        return False
    order = _connected_order(inputs, conds)
    return order != list(range(len(inputs)))


def _has_cross_product(node: LogicalPlan) -> bool:
    if not (isinstance(node, Join) and node.kind == "inner"):
        return False
    return not node.left_keys or _has_cross_product(node.left) or \
        _has_cross_product(node.right)


def _connected_order(inputs: list[_Input], conds: list[Expr]) -> list[int]:
    """FROM order, except that the next input is the first a condition connects."""
    owner = {c: i for i, inp in enumerate(inputs) for c in inp.columns}
    links = [{owner[c] for c in cond.columns()} for cond in conds]
    order = [0]
    joined = {0}
    while len(order) < len(inputs):
        nxt = next((i for i in range(len(inputs)) if i not in joined and any(
            i in link and len(link) > 1 and link - {i} <= joined for link in links)), None)
        if nxt is None:
            nxt = next(i for i in range(len(inputs)) if i not in joined)
        order.append(nxt)
        joined.add(nxt)
    return order

