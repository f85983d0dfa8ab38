"""Test helpers (not tests): a small catalog and one-line plan builders for rule examples."""

from __future__ import annotations

import pyarrow as pa

from sqlengine.binder import bind_query
from sqlengine.catalog import Catalog, TableDef
from sqlengine.parser import parse_query
from sqlengine.plan.display import display_indent
from sqlengine.plan.nodes import Field, LogicalPlan, Schema
from sqlengine.statements import QueryText


def catalog() -> Catalog:
    """t(a INT, b STRING, c DOUBLE, d DECIMAL(10, 2)) and u(a INT, e BIGINT) on files."""
    cat = Catalog()
    opts = (("connector", "filesystem"), ("path", "/nonexistent"), ("format", "csv"))
    cat.add_table(TableDef("t", Schema((Field("a", pa.int32()), Field("b", pa.string()),
                                        Field("c", pa.float64()),
                                        Field("d", pa.decimal128(10, 2)))), opts))
    cat.add_table(TableDef("u", Schema((Field("a", pa.int32()), Field("e", pa.int64()))), opts))
    return cat


def sized_catalog() -> Catalog:
    """:func:`catalog`'s t and u as datagen tables of known size (t: 1,000 rows, u: 100,000),
    for rules that consult the estimates."""
    cat = Catalog()
    base = catalog()
    for name, rows in (("t", 1000), ("u", 100_000)):
        table = base.table(name)
        assert table is not None
        cat.add_table(TableDef(name, table.schema, (("connector", "datagen"),
                                                     ("number-of-rows", str(rows)))))
    return cat


def plan_of(sql: str, cat: Catalog | None = None) -> LogicalPlan:
    """The bound (unoptimized) plan of a query over :func:`catalog`."""
    q = QueryText(sql, 0)
    return bind_query(parse_query(q, sql), cat or catalog(), q, sql)


def show(plan: LogicalPlan) -> str:
    return display_indent(plan)
