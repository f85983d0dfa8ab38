"""The binder façade and its clause binders; VALUES rows as bound expressions."""

from __future__ import annotations

import ast
import decimal
from pathlib import Path

import pyarrow as pa
import pytest
from sqlglot import exp

import sqlengine
from sqlengine.bind_aggregate import AggregateBinder
from sqlengine.bind_common import Relation, unique_names
from sqlengine.bind_over import OverBinder
from sqlengine.bind_relations import RelationBinder
from sqlengine.bind_select import SelectBinder
from sqlengine.bind_windows import WindowBinder, group_window_aux, group_window_kind
from sqlengine.binder import Binder
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.parser import parse_query
from sqlengine.plan.expressions import Call, Cast, ColumnRef, Literal, is_constant
from sqlengine.plan.nodes import Filter, Project, Rank, Scan, Values, WindowTVF
from sqlengine.plan.tree import walk
from sqlengine.statements import QueryText
from tests.plans import catalog, plan_of

SQLENGINE = Path(__file__).resolve().parents[2] / "sqlengine"


def _binder(sql: str) -> tuple[Binder, QueryText]:
    q = QueryText(sql, 0)
    return Binder(catalog(), q, sql, None, None, depth=0), q


def test_the_facade_owns_one_binder_per_clause() -> None:
    b, _ = _binder("SELECT 1")
    assert isinstance(b.relations, RelationBinder)
    assert isinstance(b.selects, SelectBinder)
    assert isinstance(b.aggregates, AggregateBinder)
    assert isinstance(b.over, OverBinder)
    assert isinstance(b.windows, WindowBinder)
    for part in (b.relations, b.selects, b.aggregates, b.over, b.windows):
        assert part.binder is b and part.exprs is b.exprs


def test_query_returns_a_relation_with_plan_and_scope() -> None:
    sql = "SELECT a, b FROM t WHERE a > 1"
    b, q = _binder(sql)
    rel = b.query(parse_query(q, sql), {})
    assert isinstance(rel, Relation)
    assert isinstance(rel.plan, Project) and isinstance(rel.plan.input, Filter)
    assert [c.name for c in rel.scope.columns] == ["a", "b"]


def test_nested_binder_for_views_is_one_level_deeper() -> None:
    b, q = _binder("SELECT 1")
    inner = b.nested(q, "SELECT 1")
    assert inner.depth == 1 and inner.catalog is b.catalog


def test_values_rows_hold_expressions_typed_as_their_columns() -> None:
    plan = plan_of("SELECT * FROM (VALUES (1, 'x'), (2.5, NULL)) AS v (a, b)")
    values = plan.input
    assert isinstance(values, Values)
    t = values.schema.fields[0].type
    assert t == pa.decimal128(11, 1)
    (a1, b1), (a2, b2) = values.rows
    # Literals are converted when bound ...
    assert a1 == Literal(decimal.Decimal("1.0"), t) and a2.dtype == t
    assert b1 == Literal("x", pa.string()) and b2 == Literal(None, pa.string())


def test_values_cells_that_are_not_literals_wait_for_the_optimizer() -> None:
    values = plan_of("SELECT * FROM (VALUES (1 + 1), (3000000000 - 1)) AS v (a)").input
    assert isinstance(values, Values)
    first, second = (row[0] for row in values.rows)
    assert isinstance(first, Cast) and first.type == pa.int64()
    assert isinstance(first.arg, Call) and first.arg.name == "add"
    assert isinstance(second, Call) and second.name == "subtract"
    assert all(is_constant(row[0]) for row in values.rows)


def test_values_rejects_what_is_not_constant() -> None:
    with pytest.raises(NotSupportedError, match="VALUES holds constants only"):
        plan_of("SELECT * FROM (VALUES (PROCTIME())) AS v (a)")
    with pytest.raises(BindError, match="VALUES rows have different lengths"):
        plan_of("SELECT * FROM (VALUES (1), (2, 3)) AS v (a)")


def test_select_without_from_reads_one_empty_row() -> None:
    plan = plan_of("SELECT 1")
    assert isinstance(plan, Project) and plan.input == Values(((),), plan.input.schema)


def test_is_constant() -> None:
    one = Literal(1, pa.int32())
    assert is_constant(Call("add", (one, one), pa.int32()))
    assert not is_constant(Call("add", (one, ColumnRef(0, "a", pa.int32())), pa.int32()))
    assert not is_constant(Call("proctime", (), pa.timestamp("ms")))


def test_window_helpers() -> None:
    call = exp.Anonymous(this="TUMBLE", expressions=[])
    assert group_window_kind(call) == "tumble"
    assert group_window_kind(3) is None
    assert group_window_aux(exp.Anonymous(this="HOP_END", expressions=[])) == "end"
    assert group_window_aux(exp.Anonymous(this="FOO_END", expressions=[])) is None
    assert unique_names(["a", "A", "b", "a"]) == ["a", "A0", "b", "a1"]  # (as Calcite)


def test_window_tvf_and_rank_bind_through_their_clause_binders() -> None:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Field, Schema

    cat = catalog()
    ts = pa.timestamp("ms")
    cat.add_table(TableDef("e", Schema((Field("k", pa.int32()), Field("ts", ts, rowtime=True))),
                           (("connector", "datagen"),), watermark=("ts", exp.column("ts"))))
    plan = plan_of("SELECT * FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' SECOND))",
                   cat)
    assert isinstance(plan.input, WindowTVF) and plan.input.size == 1000
    plan = plan_of("SELECT k, rn FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts)"
                   " AS rn FROM e)", cat)
    ranks = [n for n in walk(plan) if isinstance(n, Rank)]
    assert len(ranks) == 1 and isinstance(ranks[0].input, Scan)


BINDER_MODULES = ["binder.py", *sorted(p.name for p in SQLENGINE.glob("bind_*.py"))]


@pytest.mark.parametrize("name", BINDER_MODULES)
def test_binder_modules_stay_small_and_on_the_ground(name: str) -> None:
    source = (SQLENGINE / name).read_text(encoding="utf-8")
    assert len(source.splitlines()) <= 500
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            assert not node.module.startswith(("sqlengine.optimizer", "sqlengine.runtime")), \
                (name, node.module)


@pytest.mark.parametrize(("query", "names"), [
    # PyFlink 2.3's column names for these queries (Calcite's uniquify)
    ("SELECT a, a, a0 FROM (SELECT a, b AS a0 FROM t)", ["a", "a0", "a00"]),
    ("SELECT a, b AS a, a AS a0, a FROM t", ["a", "a0", "a00", "a1"]),
    ("SELECT x.*, y.*, x.a FROM t x, t y", ["a", "b", "a0", "b0", "a1"]),
    ("SELECT a, COUNT(*), a FROM t GROUP BY a", ["a", "EXPR$1", "a0"]),
])
def test_repeated_names_are_made_unique_as_flink_makes_them(query: str,
                                                            names: list[str]) -> None:
    """A name taken already gets the first of 0, 1, ... that is new, as in Flink (they were a,
    a1, a2: a query over a view reading ``a0`` did not find it)."""
    s = sqlengine.connect()
    s.execute("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, 2)) AS v(a, b)")
    assert s.sql(query).collect().column_names == names
    s.execute(f"CREATE TEMPORARY VIEW w AS SELECT * FROM ({query})")
    assert s.sql(f"SELECT {names[1]} FROM w").collect().column_names == [names[1]]
