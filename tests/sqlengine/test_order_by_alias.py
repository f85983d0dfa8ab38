"""An ORDER BY expression that names a SELECT alias reads that item, not an input column of the
same name (Calcite's rule, so Flink's): ``SELECT id AS x FROM t ORDER BY x * -1`` once sorted by
t.x, and ``ORDER BY -sa`` of an aggregate's alias, or ``rn * -1`` of a window's, was refused.
The expected rows are PyFlink 2.3's (batch mode), run on the same data."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import BindError

VIEW = ("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, 30), (2, 10), (3, 20), (1, 50)) "
        "AS v(id, x)")

CASES = [
    ("SELECT id AS x FROM t ORDER BY x * -1", [(3,), (2,), (1,), (1,)]),
    ("SELECT id AS y FROM t ORDER BY y * -1, x", [(3,), (2,), (1,), (1,)]),
    ("SELECT id, SUM(x) AS sa FROM t GROUP BY id ORDER BY -sa", [(1, 80), (3, 20), (2, 10)]),
    ("SELECT id AS x, SUM(x) AS s FROM t GROUP BY id ORDER BY x * -1",
     [(3, 20), (2, 10), (1, 80)]),
    ("SELECT id, SUM(x) AS s FROM t GROUP BY id ORDER BY s + id DESC",
     [(1, 80), (3, 20), (2, 10)]),
    ("SELECT DISTINCT id AS y FROM t ORDER BY y * -1", [(3,), (2,), (1,)]),
    ("SELECT id, x AS id2, ROW_NUMBER() OVER (ORDER BY x) AS rn FROM t ORDER BY rn * -1",
     [(1, 50, 4), (1, 30, 3), (3, 20, 2), (2, 10, 1)]),
    ("SELECT id AS x FROM t ORDER BY CASE WHEN x > 1 THEN 0 ELSE 1 END, x * -1",
     [(3,), (2,), (1,), (1,)]),
    # (a qualified name is the input's column)
    ("SELECT id AS x FROM t ORDER BY t.x * -1", [(1,), (1,), (3,), (2,)]),
]


@pytest.mark.parametrize(("sql", "expected"), CASES)
def test_order_by_expression_reads_the_alias(sql: str, expected: list[tuple[int, ...]]) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    got = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
    assert got == expected


def test_distinct_order_by_another_column_is_refused() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    with pytest.raises(BindError, match="must appear in the SELECT DISTINCT list"):
        s.sql("SELECT DISTINCT id FROM t ORDER BY x + 1").collect()
