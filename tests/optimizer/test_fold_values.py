"""fold_constants folds the rows of VALUES; plan.tree.filtered builds the Filters rules add."""

from __future__ import annotations

import decimal

import pyarrow as pa

from sqlengine.optimizer import optimize
from sqlengine.optimizer.rule import RuleContext
from sqlengine.optimizer.rules.fold_constants import FoldConstants
from sqlengine.plan.expressions import Call, ColumnRef, Literal
from sqlengine.plan.nodes import Filter, Project, Values
from sqlengine.plan.tree import filtered, map_expressions
from tests.plans import plan_of, show


def _values(sql: str) -> Values:
    plan = plan_of(sql)
    assert isinstance(plan, Project) and isinstance(plan.input, Values)
    return plan.input


def test_fold_constants_turns_values_cells_into_literals() -> None:
    values = _values("SELECT * FROM (VALUES (1 + 1, 'a' || 'b'), (-3, NULL)) AS v (a, b)")
    out = FoldConstants().apply(values, RuleContext())
    assert out.changed
    assert isinstance(out.data, Values)
    assert out.data.rows == ((Literal(2, pa.int32()), Literal("ab", pa.string())),
                             (Literal(-3, pa.int32()), Literal(None, pa.string())))
    assert out.data.schema == values.schema


def test_folded_cells_have_their_column_type() -> None:
    values = _values("SELECT * FROM (VALUES (-1), (2.5)) AS v (a)")
    folded = FoldConstants().apply(values, RuleContext()).data
    assert isinstance(folded, Values)
    t = pa.decimal128(11, 1)
    assert [row[0] for row in folded.rows] == [Literal(decimal.Decimal("-1.0"), t),
                                               Literal(decimal.Decimal("2.5"), t)]


def test_literal_rows_are_left_as_they_are() -> None:
    values = _values("SELECT * FROM (VALUES (1), (2)) AS v (a)")
    assert not FoldConstants().apply(values, RuleContext()).changed


def test_a_cell_that_fails_to_evaluate_stays_for_the_runtime() -> None:
    values = _values("SELECT * FROM (VALUES (1 / 0)) AS v (a)")
    folded = FoldConstants().apply(values, RuleContext()).data
    assert isinstance(folded, Values) and isinstance(folded.rows[0][0], Call)


def test_the_optimized_values_node_holds_literals_and_explains_as_before() -> None:
    plan = optimize(plan_of("SELECT a FROM (VALUES (1 + 1), (2)) AS v (a)"), {})
    assert show(plan) == "Values: rows=2"
    assert isinstance(plan, Values)
    assert plan.rows == ((Literal(2, pa.int32()),), (Literal(2, pa.int32()),))


def test_map_expressions_reaches_values_cells() -> None:
    values = _values("SELECT * FROM (VALUES (1), (2)) AS v (a)")
    out = map_expressions(values, lambda e: Literal(7, e.dtype))
    assert isinstance(out, Values)
    assert [row[0] for row in out.rows] == [Literal(7, pa.int32())] * 2


def test_filtered() -> None:
    scan = plan_of("SELECT a FROM t")
    assert filtered(scan, []) is scan
    a = ColumnRef(0, "a", pa.int32())
    p = Call("gt", (a, Literal(1, pa.int32())), pa.bool_())
    q = Call("lt", (a, Literal(9, pa.int32())), pa.bool_())
    one = filtered(scan, [p])
    assert isinstance(one, Filter) and one.predicate == p and one.input is scan
    two = filtered(scan, [p, q])
    assert isinstance(two, Filter) and two.predicate == Call("and", (p, q), pa.bool_())
