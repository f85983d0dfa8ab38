"""What a Python table function's results are taken as: a returned string, or any single
value, is one row (a string was iterated as rows of its characters); a row must have one
value per column (a short row was padded with NULLs, a long one cut, a string's characters
taken as the values, without a word: now an error naming the function and its columns); a
single ARRAY column takes a yielded list as its value."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _session() -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"x": pa.array([1, 2], pa.int32())}))
    return s


def _rows(s: sqlengine.Session, fn: object, types: list[str]) -> list[tuple]:
    s.create_function("f", sqlengine.udtf(fn, result_types=types, name="f"))
    cols = ", ".join(f"c{i}" for i in range(len(types)))
    return [tuple(r.values()) for r in s.sql(
        f"SELECT x, {cols} FROM t, LATERAL TABLE(f(x)) AS u({cols})").collect().to_pylist()]


def test_one_value_returned_is_one_row() -> None:
    assert _rows(_session(), lambda x: "abc", ["STRING"]) == [(1, "abc"), (2, "abc")]
    assert _rows(_session(), lambda x: x * 10, ["INT"]) == [(1, 10), (2, 20)]
    assert _rows(_session(), lambda x: range(x), ["INT"]) == [(1, 0), (2, 0), (2, 1)]


def test_rows_of_the_columns_width() -> None:
    def two(x: int):  # type: ignore[no-untyped-def]
        yield x, "a"
        yield [x, "b"]

    assert _rows(_session(), two, ["INT", "STRING"]) == [
        (1, 1, "a"), (1, 1, "b"), (2, 2, "a"), (2, 2, "b")]

    def arrays(x: int):  # type: ignore[no-untyped-def]
        yield [x, x + 1]
        yield ([x],)

    assert _rows(_session(), arrays, ["ARRAY<INT>"]) == [
        (1, [1, 2]), (1, [1]), (2, [2, 3]), (2, [2])]


@pytest.mark.parametrize(("made", "types", "words"), [
    ([[7, 8]], ["INT"], "made a row of 2 values for its 1 columns"),
    (["ab"], ["STRING", "STRING"], "made a row of 'ab' for its 2 columns"),
    ([(1,)], ["INT", "STRING"], "made a row of 1 value for its 2 columns"),
    ([(1, "a", 3)], ["INT", "STRING"], "made a row of 3 values for its 2 columns"),
])
def test_a_row_of_another_width_is_named(made: list, types: list[str], words: str) -> None:
    with pytest.raises(SqlEngineError, match=words) as e:
        _rows(_session(), lambda x: made, types)
    assert "table function F" in str(e.value)
