"""GROUP BY's set quantifier, as Calcite (Flink) reads it: GROUP BY DISTINCT drops a grouping
set met again (it was ignored: every row of the repeated set came twice or thrice, without a
word); GROUP BY ALL a is GROUP BY a (it was refused, speaking of a star). The expected rows
are PyFlink 2.3's, run this session; PostgreSQL 15 gives the same."""

from __future__ import annotations

import pytest

import sqlengine

T = "SELECT * FROM (VALUES (1, 20), (2, 10), (1, 5)) AS v(a, b)"


def _rows(sql: str, mode: str) -> list[tuple[object, ...]]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TEMPORARY VIEW t AS {T}")
    rows = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
    return sorted(rows, key=lambda r: tuple((v is None, v) for v in r))


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize(("sql", "want"), [
    ("SELECT a, SUM(b) FROM t GROUP BY DISTINCT ROLLUP(a), CUBE(a)",
     [(1, 25), (2, 10), (None, 35)]),
    ("SELECT a, SUM(b) FROM t GROUP BY ROLLUP(a), CUBE(a)",
     [(1, 25), (1, 25), (1, 25), (2, 10), (2, 10), (2, 10), (None, 35)]),
    ("SELECT a, b, SUM(b) FROM t GROUP BY DISTINCT GROUPING SETS ((a), (a), (b))",
     [(1, None, 25), (2, None, 10), (None, 5, 5), (None, 10, 10), (None, 20, 20)]),
    ("SELECT a, SUM(b) FROM t GROUP BY ALL a", [(1, 25), (2, 10)]),
    ("SELECT a, SUM(b) FROM t GROUP BY DISTINCT a", [(1, 25), (2, 10)]),
])
def test_the_set_quantifier(sql: str, want: list[tuple[object, ...]], mode: str) -> None:
    assert _rows(sql, mode) == want
