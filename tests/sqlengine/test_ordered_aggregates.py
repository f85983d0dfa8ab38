"""FIRST_VALUE, LAST_VALUE (the first / last non-NULL value in arrival order) and
LISTAGG(s [, sep]) (the non-NULL values joined in arrival order, ',' by default) in GROUP BY,
in batch and streaming mode at parallelism 1 and 2, with and without keys, FIRST / LAST
also in window aggregations; refused where they are not supported yet."""

from __future__ import annotations

import random

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _data(n: int, seed: int) -> list[tuple[int, str | None, int | None]]:
    rng = random.Random(seed)
    return [(rng.randint(1, 5), rng.choice(["a", "b", "cc", None]),
             rng.choice([None, rng.randint(-9, 9)])) for _ in range(n)]


def _values(rows: list[tuple[int, str | None, int | None]]) -> str:
    def lit(v: object, t: str) -> str:
        return f"CAST(NULL AS {t})" if v is None else (f"'{v}'" if isinstance(v, str)
                                                       else str(v))
    return ", ".join(f"({k}, {lit(s, 'STRING')}, {lit(n, 'INT')})" for k, s, n in rows)


@pytest.mark.parametrize("opts", [{"execution.runtime-mode": "batch"},
                                  {"execution.runtime-mode": "batch",
                                   "parallelism.default": "2"},
                                  {"execution.runtime-mode": "streaming"}],
                         ids=["batch", "batch-p2", "streaming"])
def test_against_the_rows_in_order(opts: dict[str, str]) -> None:
    rows = _data(300, 3)
    s = sqlengine.connect(opts)
    got = s.sql(f"SELECT k, FIRST_VALUE(s) AS fs, LAST_VALUE(s) AS ls, FIRST_VALUE(n) AS fn, "
                f"LAST_VALUE(n) AS ln, LISTAGG(s) AS la, LISTAGG(s, '|') AS lb "
                f"FROM (VALUES {_values(rows)}) AS t(k, s, n) GROUP BY k").collect().to_pylist()
    want = {}
    for k in {r[0] for r in rows}:
        strs = [r[1] for r in rows if r[0] == k and r[1] is not None]
        nums = [r[2] for r in rows if r[0] == k and r[2] is not None]
        want[k] = {"k": k, "fs": strs[0] if strs else None, "ls": strs[-1] if strs else None,
                   "fn": nums[0] if nums else None, "ln": nums[-1] if nums else None,
                   "la": ",".join(strs) if strs else None,
                   "lb": "|".join(strs) if strs else None}
    assert {r["k"]: r for r in got} == want
    total = s.sql(f"SELECT LISTAGG(s) AS l, FIRST_VALUE(n) AS f FROM (VALUES "
                  f"{_values(rows[:20])}) AS t(k, s, n)").collect().to_pylist()
    strs = [r[1] for r in rows[:20] if r[1] is not None]
    nums = [r[2] for r in rows[:20] if r[2] is not None]
    assert total == [{"l": ",".join(strs), "f": nums[0]}]


def test_first_and_last_in_a_window_aggregation() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE e (v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
              "'connector' = 'datagen', 'number-of-rows' = '50', 'fields.v.kind' = "
              "'sequence', 'fields.v.start' = '1', 'fields.v.end' = '50')")
    got = s.sql("SELECT FIRST_VALUE(v) AS f, LAST_VALUE(v) AS l, COUNT(*) AS c FROM "
                "TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' DAY)) "
                "GROUP BY window_start, window_end").collect().to_pylist()
    assert sum(r["c"] for r in got) == 50
    assert min(r["f"] for r in got) == 1 and max(r["l"] for r in got) == 50


def test_over_an_updating_input_the_retracted_values_go() -> None:
    # (refused before; tests/runtime/test_ordered_retract.py compares more with PyFlink)
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    got = s.sql("SELECT k, FIRST_VALUE(c) AS f, LAST_VALUE(c) AS l, LISTAGG(CAST(c AS "
                "STRING)) AS a FROM (SELECT k, COUNT(*) AS c FROM (VALUES (1), (1), (2)) AS "
                "t(k) GROUP BY k) GROUP BY k").collect().to_pylist()
    assert sorted(got, key=lambda r: r["k"]) == [{"k": 1, "f": 2, "l": 2, "a": "2"},
                                                 {"k": 2, "f": 1, "l": 1, "a": "1"}]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT FIRST_VALUE(DISTINCT s) FROM (VALUES ('a')) AS t(s)", "DISTINCT"),
    ("SELECT LISTAGG(n) FROM (VALUES (1)) AS t(n)", "needs a STRING"),
    ("SELECT LISTAGG(s, s) FROM (VALUES ('a')) AS t(s)", "constant STRING"),
])
def test_refused(sql: str, message: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    with pytest.raises(SqlEngineError, match=message):
        s.sql(sql).collect()


@pytest.mark.parametrize("opts", [{"execution.runtime-mode": "batch"},
                                  {"execution.runtime-mode": "batch",
                                   "parallelism.default": "2"},
                                  {"execution.runtime-mode": "streaming"},
                                  {"execution.runtime-mode": "streaming",
                                   "parallelism.default": "2"}],
                         ids=["batch", "batch-p2", "streaming", "streaming-p2"])
def test_first_and_last_of_decimals_and_nested_values(opts: dict[str, str]) -> None:
    """DECIMAL, ARRAY, MAP and ROW values, which Arrow's hash_first_last takes none of (it
    failed: "Function 'hash_first_last' has no kernel matching input types"), in GROUP BY
    and in a window aggregation, against the rows in order."""
    rows = _data(200, 5)
    s = sqlengine.connect(opts)
    s.execute(f"CREATE VIEW v AS SELECT k, CAST(n AS DECIMAL(6, 2)) / 4 AS d, "
              f"CASE WHEN n IS NULL THEN NULL ELSE ARRAY[n, k] END AS a, "
              f"CASE WHEN n IS NULL THEN NULL ELSE MAP[k, n] END AS m, "
              f"CASE WHEN n IS NULL THEN NULL ELSE ROW(n, s) END AS r, "
              f"TIMESTAMP '2024-01-01 00:00:00' + k * INTERVAL '1' HOUR AS ts "
              f"FROM (VALUES {_values(rows)}) AS t(k, s, n)")
    import decimal

    want = {}
    for k in {r[0] for r in rows}:
        nums = [(n, s) for kk, s, n in rows if kk == k and n is not None]
        first, last = (nums[0], nums[-1]) if nums else (None, None)

        def shapes(p: tuple[int, str | None] | None, k: int = k) -> tuple:
            if p is None:
                return (None, None, None, None)
            n, s = p
            return (decimal.Decimal(n) / 4, [n, k], [(k, n)], {"EXPR$0": n, "EXPR$1": s})
        want[k] = (*shapes(first), *shapes(last))
    for sql in ("SELECT k, FIRST_VALUE(d), FIRST_VALUE(a), FIRST_VALUE(m), FIRST_VALUE(r), "
                "LAST_VALUE(d), LAST_VALUE(a), LAST_VALUE(m), LAST_VALUE(r) FROM v GROUP BY k",
                "SELECT k, FIRST_VALUE(d), FIRST_VALUE(a), FIRST_VALUE(m), FIRST_VALUE(r), "
                "LAST_VALUE(d), LAST_VALUE(a), LAST_VALUE(m), LAST_VALUE(r) FROM v "
                "GROUP BY k, TUMBLE(ts, INTERVAL '1' HOUR)"):
        if "TUMBLE" in sql and opts["execution.runtime-mode"] == "streaming":
            continue  # (VALUES has no watermark: a window aggregation needs a rowtime)
        got = {r[0]: tuple(r[1:]) for r in (tuple(d.values()) for d in
                                           s.sql(sql).collect().to_pylist())}
        assert got == want, sql
