"""reorder_joins: a tree of inner joins joined again in the order of least estimated cost.

The tree is flattened into its inputs and conditions (Calcite's MultiJoin); optimizer/
join_order.py builds the join graph (equalities in classes, so ``a = b AND b = c`` also offers
``a = c``) and finds the cheapest bushy tree by dynamic programming over the inputs'
estimates (optimizer/estimates.py: parquet statistics, registered tables, connector settings).
The tree is rebuilt only when the cheapest one is cheaper than the tree as written; a final
projection restores the column order.

``table.optimizer.join-reorder-enabled`` (Flink's option) switches the cost-based order; here it
is on by default in batch mode, where estimates come from the data, and off by default in
streaming mode (unbounded inputs have no row counts to compare), where only a join that no
condition connects is moved after the joins that conditions connect (no avoidable cross
product), FROM order otherwise.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sqlengine import types as T
from sqlengine.errors import PlanError
from sqlengine.optimizer.estimates import Estimator
from sqlengine.optimizer.join_order import (
    OTHER_SELECTIVITY,
    JoinGraph,
    Tree,
    best_order,
    bits_of,
    leaves,
)
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
from sqlengine.plan.nodes import Field, Filter, Join, LogicalPlan, Project, Scan
from sqlengine.plan.tree import Transformed, walk

OPTION = "table.optimizer.join-reorder-enabled"


@dataclass(frozen=True, slots=True)
class _Input:
    plan: LogicalPlan
    offset: int  # its first column in the flattened row

    @property
    def columns(self) -> range:
        return range(self.offset, self.offset + len(self.plan.schema))


class ReorderJoins(OptimizerRule):
    """Inner join trees -> joined in the order of least estimated cost.

    Example (streaming, where only an avoidable cross product moves):
        >>> from tests.plans import plan_of, show
        >>> from sqlengine.optimizer.rules.push_down_filters import PushDownFilters
        >>> plan = PushDownFilters().apply(plan_of(
        ...     "SELECT * FROM t, t AS t2, u WHERE t.a = u.a AND t2.a = u.a"),
        ...     RuleContext()).data
        >>> print(show(ReorderJoins().apply(plan, RuleContext()).data))
        Project: a, b, c, d, a AS a0, b AS b0, c AS c0, d AS d0, a AS a1, e
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
        estimator = Estimator(ctx.tables) if by_cost(ctx.options) else None
        return _rewrite(node, estimator, ctx.notes)


def by_cost(options: dict[str, str]) -> bool:
    """Whether joins are ordered by cost (the option, by default on in batch mode only)."""
    batch = options.get("execution.runtime-mode", "streaming").lower() == "batch"
    value = options.get(OPTION, "true" if batch else "false").strip().lower()
    if value not in ("true", "false"):
        msg = f"option {OPTION!r} must be 'true' or 'false', got {options[OPTION]!r}"
        raise PlanError(msg)
    return value == "true"


def _rewrite(node: LogicalPlan, estimator: Estimator | None, notes: list[str]
             ) -> Transformed[LogicalPlan]:
    """The plan with each maximal inner-join tree reordered (its inputs first)."""
    if not _reorderable(node):
        kids = node.children()
        results = [_rewrite(k, estimator, notes) for k in kids]
        if any(r.changed for r in results):
            return Transformed.yes(node.with_children(tuple(r.data for r in results)))
        return Transformed.no(node)
    inputs: list[_Input] = []
    conds: list[Expr] = []
    _flatten(node, 0, inputs, conds)
    results = [_rewrite(i.plan, estimator, notes) for i in inputs]
    if any(r.changed for r in results):
        node = _with_inputs(node, iter(r.data for r in results))
        inputs = [_Input(r.data, i.offset) for r, i in zip(results, inputs)]
    changed = any(r.changed for r in results)
    if len(inputs) < 3:
        return Transformed(node, changed)
    if estimator is not None:
        graph, classes, plain = _graph(inputs, conds, estimator)
        best = best_order(graph)
        written = _shape(node, [0])
        if graph.cost(best) >= graph.cost(written) * (1 - 1e-9):
            return Transformed(node, changed)
        names = [_label(i.plan) for i in inputs]
        notes.append(f"as written: {_text(written, names)}  (cost {graph.cost(written):.3g})")
        notes.append(f"chosen:     {_text(best, names)}  (cost {graph.cost(best):.3g})")
        return Transformed.yes(_build(node, inputs, best, plain, classes))
    if not _avoidable_cross_product(node, inputs, conds):
        return Transformed(node, changed)
    order = _connected_order(inputs, conds)
    tree: Tree = order[0]
    for i in order[1:]:
        tree = (tree, i)
    return Transformed.yes(_build(node, inputs, tree, conds, []))


def _graph(inputs: list[_Input], conds: list[Expr], estimator: Estimator
           ) -> tuple[JoinGraph, list[set[int]], list[Expr]]:
    """The join graph of the inputs, the equivalence classes (global columns; their
    equalities are rebuilt where the tree needs them) and the other conditions (kept as
    written)."""
    owner = {c: i for i, inp in enumerate(inputs) for c in inp.columns}
    estimates = [estimator.estimate(i.plan) for i in inputs]
    rows = [e.rows for e in estimates]
    parent: dict[int, int] = {}

    def find(c: int) -> int:
        while parent.get(c, c) != c:
            c = parent[c]
        return c

    plain: list[Expr] = []
    key_edges: list[tuple[int, int]] = []
    others: list[frozenset[int]] = []
    for c in conds:
        reads = frozenset(owner[x] for x in c.columns())
        if isinstance(c, Call) and c.name == "eq" and len(reads) == 2:
            a, b = c.args
            if isinstance(a, ColumnRef) and isinstance(b, ColumnRef) and a.dtype == b.dtype:
                ra, rb = find(a.index), find(b.index)
                parent.setdefault(rb, rb)
                if ra != rb:
                    parent[ra] = rb
                continue
            sides = [frozenset(owner[x] for x in arg.columns()) for arg in c.args]
            if all(len(side) == 1 for side in sides) and sides[0] != sides[1]:
                key_edges.append((next(iter(sides[0])), next(iter(sides[1]))))
                plain.append(c)
                continue
        plain.append(c)
        if len(reads) == 1:
            rows[next(iter(reads))] *= OTHER_SELECTIVITY
        elif len(reads) > 1:
            others.append(reads)
    members: dict[int, set[int]] = {}
    for c in parent:
        members.setdefault(find(c), set()).add(c)
    classes = [m for m in members.values() if len(m) > 1]
    ndv_classes = []
    for m in classes:
        per_input: dict[int, float] = {}
        for c in m:
            i = owner[c]
            stats = estimates[i].columns[c - inputs[i].offset]
            ndv = min(stats.ndv or rows[i], rows[i])
            per_input[i] = min(per_input.get(i, ndv), ndv)
        ndv_classes.append(per_input)
    graph = JoinGraph(rows, ndv_classes, key_edges, others)
    return graph, classes, plain


def _label(plan: LogicalPlan) -> str:
    """An input's name in a join order: its table (the first one it scans)."""
    return next((n.source.table for n in walk(plan) if isinstance(n, Scan)),
                type(plan).__name__)


def _text(tree: Tree, names: list[str]) -> str:
    if isinstance(tree, int):
        return names[tree]
    return f"({_text(tree[0], names)} JOIN {_text(tree[1], names)})"


def _shape(node: LogicalPlan, counter: list[int]) -> Tree:
    """The tree as written, over input indexes in column order."""
    if not (isinstance(node, Join) and node.kind == "inner"):
        counter[0] += 1
        return counter[0] - 1
    return (_shape(node.left, counter), _shape(node.right, counter))


def _with_inputs(node: LogicalPlan, new: Iterator[LogicalPlan]) -> LogicalPlan:
    """``node``'s inner-join tree with its inputs replaced, in column order."""
    if not (isinstance(node, Join) and node.kind == "inner"):
        return next(new)
    left = _with_inputs(node.left, new)
    right = _with_inputs(node.right, new)
    return node.with_children((left, right))


def _build(node: Join, inputs: list[_Input], tree: Tree, conds: list[Expr],
           classes: list[set[int]]) -> LogicalPlan:
    """The join tree ``tree`` over ``inputs`` with ``conds`` applied at the lowest join that has
    their columns (or on their input) and one equality per class wherever a join has the
    class on both sides; a projection restores ``node``'s columns."""
    owner = {c: i for i, inp in enumerate(inputs) for c in inp.columns}
    reads = [frozenset(owner[x] for x in c.columns()) for c in conds]
    everything = bits_of(tree)

    def within(i: int, s: int) -> bool:
        return bool(reads[i]) and all(s >> k & 1 for k in reads[i])

    def build(t: Tree) -> tuple[LogicalPlan, dict[int, int]]:
        if isinstance(t, int):
            inp = inputs[t]
            positions = {c: k for k, c in enumerate(inp.columns)}
            plan = inp.plan
            local = [remap_columns(c, positions) for i, c in enumerate(conds)
                     if reads[i] == frozenset((t,))]
            for m in classes:  # two columns of one input in a class: equal to each other
                mine = sorted(c for c in m if owner[c] == t)
                local += [_eq(mine[0], c, positions, plan.schema.fields) for c in mine[1:]]
            if local:
                plan = Filter(plan, conjunction(local))
            return plan, positions
        left, lpos = build(t[0])
        right, rpos = build(t[1])
        width = len(left.schema)
        positions = {**lpos, **{c: k + width for c, k in rpos.items()}}
        sl, sr = bits_of(t[0]), bits_of(t[1])
        s = sl | sr
        row = left.schema.fields + right.schema.fields  # (the joined row's fields)
        moved = [remap_columns(c, positions) for i, c in enumerate(conds)
                 if (within(i, s) and not within(i, sl) and not within(i, sr))
                 or (not reads[i] and s == everything)]
        for m in classes:
            lc = sorted(c for c in m if sl >> owner[c] & 1)
            rc = sorted(c for c in m if sr >> owner[c] & 1)
            if lc and rc:
                moved.append(_eq(lc[0], rc[0], positions, row))
        keys_l, keys_r, residual = split_condition(moved, width)
        return Join(left, right, "inner", tuple(keys_l), tuple(keys_r),
                    conjunction(residual)), positions

    plan, positions = build(tree)
    assert sorted(leaves(tree)) == list(range(len(inputs)))
    fields = plan.schema.fields
    total = sum(len(i.plan.schema) for i in inputs)
    exprs = tuple(ColumnRef(positions[c], fields[positions[c]].name, fields[positions[c]].type)
                  for c in range(total))
    return Project(plan, exprs, tuple(f.name for f in node.schema.fields))


def _eq(a: int, b: int, positions: dict[int, int], fields: tuple[Field, ...]) -> Expr:
    """``a = b`` of two flattened columns, at their ``positions`` in a row of ``fields``."""
    pa_, pb = positions[a], positions[b]
    return Call("eq", (ColumnRef(pa_, fields[pa_].name, fields[pa_].type),
                       ColumnRef(pb, fields[pb].name, fields[pb].type)), T.BOOLEAN)


def _reorderable(node: LogicalPlan) -> bool:
    """An inner join whose inputs may move: not one a hint names a side or state TTL of
    (those stay as written, with their inputs, as the hint gave them)."""
    return isinstance(node, Join) and node.kind == "inner" and node.strategy is None and \
        node.state_ttl == (None, None)


def _flatten(node: LogicalPlan, offset: int, inputs: list[_Input], conds: list[Expr]) -> None:
    """Inputs of an inner-join tree (in column order) and its conditions over the row."""
    if not _reorderable(node):
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

