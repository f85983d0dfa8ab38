"""ROW and ARRAY values that are not constants compare whole, as Flink 2.3's: a NULL field or
element equals a NULL one, so ``r = r`` is TRUE for a row of NULL fields and a JOIN ON
``r1 = r2`` matches such rows; a NULL value gives NULL. Two ROW constructors still compare
field by field (``ROW(1, NULL) = ROW(1, NULL)`` is NULL). Expected values measured with
PyFlink 2.3 on the same json file."""

from __future__ import annotations

import pytest

import sqlengine
from tests.json_table import json_table

ROWS = """{"id":1,"ar":[null],"r":{"x":null,"y":null},"a":[null]}
{"id":2,"ar":[{"x":null,"y":"q"}],"r":{"x":1,"y":null},"a":[1]}
{"id":3,"ar":[{"x":1,"y":"q"}],"r":{"x":1,"y":"q"},"a":[]}
"""


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> sqlengine.Session:
    return json_table(tmp_path_factory, "A", "id INT, ar ARRAY<ROW<x INT, y STRING>>, "
                      "r ROW<x INT, y STRING>, a ARRAY<INT>", ROWS)


@pytest.mark.parametrize(("expr", "flink"), [
    ("r IS NOT DISTINCT FROM r", [True, True, True]),
    ("r IS DISTINCT FROM r", [False, False, False]),
    ("r = r", [True, True, True]),
    ("r = ROW(1, CAST(NULL AS STRING))", [False, True, False]),
    ("ar = ar", [True, True, True]),
    ("ARRAY[r] = ARRAY[r]", [True, True, True]),
    ("a = a", [True, True, True]),
])
def test_values_compare_whole(s: sqlengine.Session, expr: str, flink: list) -> None:
    got = s.sql(f"SELECT id, {expr} AS v FROM A ORDER BY id").collect().to_pylist()
    assert [r["v"] for r in got] == flink


def test_join_on_rows_with_null_fields(s: sqlengine.Session) -> None:
    got = s.sql("SELECT A1.id AS i, A2.id AS j FROM A A1 JOIN A A2 ON A1.r = A2.r")
    assert sorted((r["i"], r["j"]) for r in got.collect().to_pylist()) == [
        (1, 1), (2, 2), (3, 3)]


def test_null_row_and_constructors(s: sqlengine.Session) -> None:
    got = s.sql("SELECT CAST(NULL AS ROW<x INT, y STRING>) = r AS n, "
                "ROW(1, CAST(NULL AS INT)) = ROW(1, CAST(NULL AS INT)) AS c "
                "FROM A WHERE id = 1").collect().to_pylist()
    assert got == [{"n": None, "c": None}]
