"""A Filter chained before a Project hands over what both compute (as Flink's Calc does), and
a Project's expressions share their common parts (CASE branches and IN lists included): each
counted here by the rows a Python function is called on."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine


def _session(calls: list[int], deterministic: bool = True) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"x": list(range(1000)), "c": ["a", "b", "c", "d"] * 250}))

    @sqlengine.udf(result_type="BIGINT", kind="arrow", deterministic=deterministic)
    def slow(x: pa.Array) -> pa.Array:
        calls.append(len(x))
        import pyarrow.compute as pc

        return pc.multiply(x, 2)

    s.create_function("slow", slow)
    return s


def test_the_filter_computes_a_shared_call_once() -> None:
    calls: list[int] = []
    s = _session(calls)
    rows = s.sql("SELECT x, slow(x) AS y, slow(x) + 1 AS z FROM t WHERE slow(x) > 1500"
                 ).collect().to_pylist()
    assert sorted(r["x"] for r in rows) == list(range(751, 1000))
    assert all(r["y"] == 2 * r["x"] and r["z"] == 2 * r["x"] + 1 for r in rows)
    assert sum(calls) == 1000  # (the filter's rows only: the kept ones are not called again)


def test_case_branches_and_in_lists_share_their_parts() -> None:
    calls: list[int] = []
    s = _session(calls)
    rows = s.sql("SELECT CASE WHEN slow(x) < 10 THEN 'small' WHEN slow(x) < 100 THEN 'mid' "
                 "ELSE CAST(slow(x) AS STRING) END AS k, slow(x) IN (2, 4, 6) AS few FROM t"
                 ).collect().to_pylist()
    assert [r["k"] for r in rows[:3]] == ["small", "small", "small"]
    assert rows[60]["k"] == "120" and rows[2]["few"] and not rows[4]["few"]
    assert sum(calls) == 1000


@pytest.mark.parametrize("where", ["slow(x) > 1500", "x > 750"])
def test_a_non_deterministic_function_runs_for_every_use(where: str) -> None:
    calls: list[int] = []
    s = _session(calls, deterministic=False)
    s.sql(f"SELECT slow(x) AS y, slow(x) AS z FROM t WHERE {where}").collect()
    filtered = 1000 if where.startswith("slow") else 0
    assert sum(calls) == filtered + 2 * 249
