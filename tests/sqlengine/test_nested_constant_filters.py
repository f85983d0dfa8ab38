"""A WHERE that compares an ARRAY, ROW or MAP column with a constant of its type: the
optimizer keeps pushed filters in sets, and such a constant (a list / dict) could not be
hashed ("unhashable type: 'list'", an internal error); an IN list of such constants
failed in Arrow ('equal' has no kernel for list). Flink 2.3 gives the matching rows."""

from __future__ import annotations

import pytest

import sqlengine
from tests.json_table import json_table

ROWS = """{"id":1,"a":[1,2,3],"r":{"x":2,"y":"z"},"m":{"a":1}}
{"id":2,"a":[1],"r":{"x":1,"y":"z"},"m":{"b":1}}
"""


@pytest.fixture(scope="module")
def s(tmp_path_factory: pytest.TempPathFactory) -> sqlengine.Session:
    return json_table(tmp_path_factory, "T", "id INT, a ARRAY<INT>, r ROW<x INT, y STRING>, "
                      "m MAP<STRING, INT>", ROWS)


@pytest.mark.parametrize(("where", "ids"), [
    ("a = ARRAY[1, 2, 3]", [1]),
    ("a <> ARRAY[1]", [1]),
    ("ARRAY[1] = a", [2]),
    ("a IN (ARRAY[1], ARRAY[2])", [2]),
    ("a NOT IN (ARRAY[1])", [1]),
    ("r = ROW(2, 'z')", [1]),
    ("r IN (ROW(2, 'z'), ROW(3, 'z'))", [1]),
    ("m = MAP['a', 1]", [1]),
])
def test_where_compares_with_a_nested_constant(s: sqlengine.Session, where: str,
                                               ids: list[int]) -> None:
    got = s.sql(f"SELECT id FROM T WHERE {where}").collect().to_pylist()
    assert sorted(r["id"] for r in got) == ids
