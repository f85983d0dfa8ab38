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


def test_split_index_splits_a_batch_column_once_per_separator(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SPLIT_INDEX(url, '/', 3), (url, '/', 4), ... of one batch split its column once (each
    reads the column anew: another Python object over the same buffers); another separator or
    column splits again. Values against Python's str.split."""
    import pyarrow.compute as pc

    from sqlengine.runtime import kernels

    splits: list[int] = []
    split_pattern = pc.split_pattern

    def counted(values, *args, **kwargs):  # type: ignore[no-untyped-def]
        splits.append(len(values))
        return split_pattern(values, *args, **kwargs)

    monkeypatch.setattr(kernels.pc, "split_pattern", counted)
    urls = ["https://h/a/b/c/item", None, "x/y", "", "/lead/", "p/q/r/s/t/u/v"] * 5
    other = ["1/2/3/4/5"] * len(urls)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"url": urls, "other": other}))
    rows = s.sql("SELECT SPLIT_INDEX(url, '/', 3) AS a, SPLIT_INDEX(url, '/', 4) AS b, "
                 "SPLIT_INDEX(url, '/', 9) AS c, SPLIT_INDEX(other, '/', 2) AS d, "
                 "SPLIT_INDEX(url, 'b', 0) AS e FROM t").collect().to_pylist()

    def pick(text: str | None, sep: str, i: int) -> str | None:
        # (an empty string has no part at all in Flink 2.3: SPLIT_INDEX('', ',', 0) is NULL)
        parts = None if not text else text.split(sep)
        return parts[i] if parts is not None and i < len(parts) else None

    assert rows == [{"a": pick(u, "/", 3), "b": pick(u, "/", 4), "c": pick(u, "/", 9),
                     "d": pick(o, "/", 2), "e": pick(u, "b", 0)} for u, o in zip(urls, other)]
    assert splits == [len(urls)] * 3  # (url at '/', other at '/', url at 'b')
