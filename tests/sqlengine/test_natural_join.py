"""NATURAL JOIN (USING the columns of equal names), parenthesised joins and POSITION(... IN ...
FROM n), which Flink runs and we refused. The expected rows are PyFlink 2.3's on the same
views (batch mode); DuckDB's where Flink refuses the form."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import BindError, NotSupportedError

VIEWS = [
    "CREATE TEMPORARY VIEW a AS SELECT * FROM (VALUES (1, 'x', 10), (2, 'y', 20)) AS v(id, s, n)",
    "CREATE TEMPORARY VIEW b AS SELECT * FROM (VALUES (1, 'x', 5), (2, 'z', 6)) AS v(id, s, m)",
    "CREATE TEMPORARY VIEW c AS SELECT * FROM (VALUES (1, 100), (3, 300)) AS v(id, q)",
]

CASES = [
    ("SELECT * FROM a NATURAL JOIN b", ["id", "s", "n", "m"], [(1, "x", 10, 5)]),
    ("SELECT * FROM a NATURAL LEFT JOIN b", ["id", "s", "n", "m"],
     [(1, "x", 10, 5), (2, "y", 20, None)]),
    ("SELECT a.id, b.m, c.q FROM (a JOIN b ON a.id = b.id) JOIN c ON c.id = a.id",
     ["id", "m", "q"], [(1, 5, 100)]),
    ("SELECT a.id, b.m, c.q FROM a LEFT JOIN (b JOIN c ON b.id = c.id) ON a.id = b.id",
     ["id", "m", "q"], [(1, 5, 100), (2, None, None)]),
    ("SELECT a.id, c.q FROM ((a JOIN b ON a.id = b.id) LEFT JOIN c ON c.id = b.id)",
     ["id", "q"], [(1, 100), (2, None)]),
    ("SELECT id, q FROM (a JOIN b USING (id)) JOIN c USING (id)", ["id", "q"], [(1, 100)]),
    # (DuckDB's: no common column is a cross join; three natural joins in a row)
    ("SELECT a.id, c2.w FROM a NATURAL JOIN (SELECT 7 AS w) AS c2", ["id", "w"],
     [(1, 7), (2, 7)]),
    ("SELECT id, s FROM a NATURAL JOIN b NATURAL JOIN c", ["id", "s"], [(1, "x")]),
    ("SELECT POSITION('a' IN 'banana' FROM 3), POSITION('a' IN 'banana' FROM 7), "
     "POSITION('n' IN 'banana' FROM 1)", ["EXPR$0", "EXPR$1", "EXPR$2"], [(4, 0, 3)]),
]


def _session(mode: str = "batch") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    for v in VIEWS:
        s.execute(v)
    return s


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize(("sql", "names", "expected"), CASES)
def test_as_flink(sql: str, names: list[str], expected: list[tuple[object, ...]],
                  mode: str) -> None:
    got = _session(mode).sql(sql).collect()
    assert got.column_names == names
    rows = [tuple(r.values()) for r in got.to_pylist()]
    assert sorted(rows, key=repr) == sorted(expected, key=repr)


@pytest.mark.parametrize(("sql", "error", "message"), [
    ("SELECT * FROM a NATURAL JOIN b USING (id)", BindError, "NATURAL JOIN takes no ON"),
    ("SELECT x.id FROM (a JOIN b ON a.id = b.id) AS x", NotSupportedError,
     "parenthesised join takes no alias"),
])
def test_refused(sql: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        _session().sql(sql).collect()
