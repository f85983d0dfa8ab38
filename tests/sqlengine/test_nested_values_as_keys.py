"""ROW and ARRAY values as elements looked up, as partition keys, and in NULLIF: Arrow's
hash and compare kernels take no nested types, and these failed with its messages ("Function
'equal' has no kernel matching input types (list<...>, list<...>)", "'dictionary_encode' has
no kernel ..."). They compare whole values now (runtime/value_codes.py). Expected values:
PyFlink 2.3 on the same rows. MIN / MAX of such values, which Flink has no plan for, are
refused by name."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import NotSupportedError

VIEW = ("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, ARRAY[1, 2], ROW(1, 'a')), "
        "(2, ARRAY[1], ROW(2, 'b')), (3, ARRAY[1, 2], ROW(1, 'a'))) AS t(k, arr, r)")


@pytest.fixture(params=[("batch", 1), ("streaming", 1), ("batch", 2)],
                ids=["batch", "streaming", "batch-2"])
def s(request: pytest.FixtureRequest) -> sqlengine.Session:
    mode, parallelism = request.param
    session = sqlengine.connect({"execution.runtime-mode": mode,
                                 "parallelism.default": str(parallelism)})
    session.execute(VIEW)
    return session


def _rows(s: sqlengine.Session, sql: str) -> list[tuple[object, ...]]:
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def test_elements_found_and_removed(s: sqlengine.Session) -> None:
    assert _rows(s, "SELECT k, ARRAY_CONTAINS(ARRAY[ARRAY[1, 2], ARRAY[3]], arr), "
                    "ARRAY_POSITION(ARRAY[ARRAY[1], ARRAY[1, 2]], arr), "
                    "ARRAY_CONTAINS(ARRAY[ROW(1, 'a')], r) FROM v") == [
        (1, True, 2, True), (2, False, 1, False), (3, True, 2, True)]
    assert _rows(s, "SELECT ARRAY_REMOVE(ARRAY[ARRAY[1, 2], ARRAY[3]], ARRAY[3]), "
                    "ARRAY_DISTINCT(ARRAY[ARRAY[1], ARRAY[1], ARRAY[2]]), "
                    "ARRAY_UNION(ARRAY[ARRAY[1]], ARRAY[ARRAY[1], ARRAY[2]]), "
                    "ARRAY_INTERSECT(ARRAY[ARRAY[1]], ARRAY[ARRAY[1], ARRAY[2]]), "
                    "ARRAY_EXCEPT(ARRAY[ARRAY[1], ARRAY[3]], ARRAY[ARRAY[1]])") == [
        ([[1, 2]], [[1], [2]], [[1], [2]], [[1]], [[3]])]


def test_nullif(s: sqlengine.Session) -> None:
    got = _rows(s, "SELECT k, NULLIF(arr, ARRAY[1]), NULLIF(r, ROW(1, 'a')) FROM v")
    assert [(k, a, None if r is None else tuple(r.values())) for k, a, r in got] == [
        (1, [1, 2], None), (2, None, (2, "b")), (3, [1, 2], None)]


def test_partitioned_by_an_array_or_a_row(s: sqlengine.Session) -> None:
    assert _rows(s, "SELECT k, ROW_NUMBER() OVER (PARTITION BY arr ORDER BY k) FROM v") == [
        (1, 1), (2, 1), (3, 2)]
    assert _rows(s, "SELECT k, SUM(k) OVER (PARTITION BY arr), COUNT(*) OVER (PARTITION BY r "
                    "ORDER BY k) FROM v") == [(1, 4, 1), (2, 2, 1), (3, 4, 2)]


def test_min_and_max_of_nested_values_are_refused(s: sqlengine.Session) -> None:
    for sql in ("SELECT MIN(arr) FROM v", "SELECT MAX(r) FROM v",
                "SELECT MAX(r) OVER (ORDER BY k) FROM v"):
        with pytest.raises(NotSupportedError, match=r"(MIN|MAX) of (ARRAY|ROW)<.*> values is "
                                                    r"not supported"):
            s.sql(sql).collect()


ARRAYS = ("SELECT * FROM (VALUES (1, ARRAY[2]), (2, ARRAY[1, 2]), (3, ARRAY[1]), "
          "(4, ARRAY_REMOVE(ARRAY[1], 1)), (5, CAST(NULL AS ARRAY<INT>)), "
          "(6, ARRAY[CAST(NULL AS INT)]), (7, ARRAY[1, CAST(NULL AS INT)]), (8, ARRAY[10]), "
          "(9, ARRAY[-1, 5])) AS t(k, arr)")


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize(("order", "expected"), [
    # element by element, a shorter array first where it starts the other, a NULL element
    # below every value, a NULL array first (ascending)
    ("arr", [5, 4, 6, 9, 3, 7, 2, 1, 8]),
    ("arr DESC", [8, 1, 2, 7, 3, 9, 6, 4, 5]),
    ("arr NULLS LAST", [4, 6, 9, 3, 7, 2, 1, 8, 5]),
])
def test_order_by_an_array(parallelism: str, order: str, expected: list[int]) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": parallelism})
    got = s.sql(f"SELECT k FROM ({ARRAYS}) ORDER BY {order}, k").collect().to_pylist()
    assert [r["k"] for r in got] == expected


def test_order_by_arrays_of_strings_and_rows_holding_arrays() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = s.sql("SELECT k FROM (VALUES (1, ARRAY['b']), (2, ARRAY['a', 'b']), (3, ARRAY['ab']), "
                "(4, ARRAY['a'])) AS t(k, arr) ORDER BY arr, k").collect().to_pylist()
    assert [r["k"] for r in got] == [4, 2, 3, 1]
    got = s.sql("SELECT k FROM (VALUES (1, ROW(1, ARRAY[2])), (2, ROW(1, ARRAY[1, 5])), "
                "(3, ROW(0, ARRAY[9]))) AS t(k, r) ORDER BY r, k LIMIT 2").collect().to_pylist()
    assert [r["k"] for r in got] == [3, 2]
