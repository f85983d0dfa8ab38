"""Row comparisons ``(a, b) op (x, y)``: = / <> field by field, < <= > >= in order, three
valued. Expected values as PostgreSQL 15 gives them (checked by hand with psql); Flink 2.3
agrees on = (its <> says TRUE for (2, NULL) <> (2, 2), where the standard says NULL)."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

N = "CAST(NULL AS INT)"


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    return sqlengine.connect({"execution.runtime-mode": "batch"})


@pytest.mark.parametrize(("expr", "value"), [
    ("(1, 2) = (1, 2)", True),
    ("(1, 2) = (1, 3)", False),
    (f"({N}, 3) = (2, 2)", False),
    (f"(2, {N}) = (2, 2)", None),
    (f"(2, {N}) <> (2, 2)", None),
    ("(2, 3) <> (2, 2)", True),
    (f"(2, {N}) < (2, 3)", None),
    (f"(1, {N}) < (2, 3)", True),
    (f"(2, {N}) > (1, 5)", True),
    (f"(3, 4) > (2, {N})", True),
    ("(2, 3) <= (2, 3)", True),
    ("(2, 3) < (2, 3)", False),
    (f"(2, {N}) >= (2, 3)", None),
    ("(1, 'b', 3) > (1, 'a', 9)", True),
    ("(1, 'a', 3) >= (1, 'a', 3)", True),
    ("(1, 2.5) = (1, 2.5)", True),
])
def test_row_comparison(s: sqlengine.Session, expr: str, value: object) -> None:
    assert s.sql(f"SELECT {expr} AS v").collect().to_pylist() == [{"v": value}]


def test_row_comparison_filters_rows(s: sqlengine.Session) -> None:
    s.execute("CREATE TEMPORARY VIEW r AS SELECT * FROM (VALUES (1, 1), (2, 2), "
              f"({N}, 3), (3, 4), (2, {N})) AS v(k, v)")
    got = s.sql("SELECT k, v FROM r WHERE (k, v) <> (1, 1)").collect().to_pylist()
    assert sorted(got, key=repr) == sorted([{"k": 2, "v": 2}, {"k": None, "v": 3},
                                            {"k": 3, "v": 4}, {"k": 2, "v": None}], key=repr)
    got = s.sql("SELECT k, v FROM r WHERE (k, v) >= (2, 2)").collect().to_pylist()
    assert sorted(got, key=repr) == sorted([{"k": 2, "v": 2}, {"k": 3, "v": 4}], key=repr)


@pytest.mark.parametrize(("expr", "message"), [
    ("(1, 2) = (1, 2, 3)", "rows of 2 and 3 values cannot be compared"),
    ("(1, 2) + (1, 2)", "rows cannot be combined with ADD"),
])
def test_row_comparison_refusals(s: sqlengine.Session, expr: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        s.sql(f"SELECT {expr} AS v")
