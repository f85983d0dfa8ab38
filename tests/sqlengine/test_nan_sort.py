"""NaN orders above every number, as in Flink 2.3 (Java's Double.compareTo): last in ascending
order, first in descending order (Arrow puts it last both ways: ORDER BY d DESC gave inf, 2, 1,
NaN where PyFlink gives NaN, inf, 2, 1); NULLs where NULLS FIRST / LAST put them."""

from __future__ import annotations

import math

import pytest

import sqlengine

VIEW = ("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, CAST(1.0 AS DOUBLE)), "
        "(2, CAST('NaN' AS DOUBLE)), (3, CAST(2.0 AS DOUBLE)), (4, CAST('Infinity' AS DOUBLE)), "
        "(5, CAST(NULL AS DOUBLE))) AS v(id, d)")


def _ids(sql: str, mode: str = "batch", parallelism: str = "1") -> list[object]:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.execute(VIEW)
    return [r["id"] for r in s.sql(sql).collect().to_pylist()]


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize(("order", "expected"), [
    ("d DESC", [2, 4, 3, 1, 5]),  # (Flink: DESC puts NULLs last)
    ("d DESC NULLS FIRST", [5, 2, 4, 3, 1]),
    ("d", [5, 1, 3, 4, 2]),  # (Flink: ASC puts NULLs first)
    ("d ASC NULLS LAST", [1, 3, 4, 2, 5]),
])
def test_order_by(order: str, expected: list[int], parallelism: str) -> None:
    assert _ids(f"SELECT id FROM t ORDER BY {order}", parallelism=parallelism) == expected


def test_limit_and_ranks() -> None:
    assert _ids("SELECT id FROM t ORDER BY d DESC LIMIT 2") == [2, 4]
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    got = {r["id"]: r["r"] for r in s.sql(
        "SELECT id, RANK() OVER (ORDER BY d DESC) AS r FROM t").collect().to_pylist()}
    assert got == {2: 1, 4: 2, 3: 3, 1: 4, 5: 5}
    top = s.sql("SELECT id, d FROM (SELECT id, d, ROW_NUMBER() OVER (ORDER BY d DESC) AS rn "
                "FROM t) WHERE rn = 1").collect().to_pylist()
    assert top[0]["id"] == 2 and math.isnan(top[0]["d"])
