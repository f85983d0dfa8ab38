"""ROW_NUMBER Top-N over an updating input (a GROUP BY's changelog) in streaming mode: over a
bounded input the final rows are numbered at its end, as batch mode and RANK do (it was
refused); over an unbounded one it is refused by name."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import NotSupportedError

_rng = random.Random(5)
T = pa.table({"k": [_rng.randint(1, 30) for _ in range(2000)],
              "g": [_rng.randint(1, 4) for _ in range(2000)],
              "v": [_rng.randint(-50, 100) for _ in range(2000)]})
SQL = ("SELECT * FROM (SELECT k, g, SUM(v) AS sv, ROW_NUMBER() OVER (PARTITION BY g ORDER BY "
       "SUM(v) DESC, k) AS rn FROM t GROUP BY k, g) WHERE rn <= 3")


def rows(mode: str, parallelism: str) -> list[tuple[object, ...]]:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.register("t", T)
    return sorted(tuple(r.values()) for r in s.sql(SQL).collect().to_pylist())


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_top_n_over_a_group_by_in_streaming(parallelism: str) -> None:
    want = {}
    for k, g, v in zip(T["k"].to_pylist(), T["g"].to_pylist(), T["v"].to_pylist()):
        want[(k, g)] = want.get((k, g), 0) + v
    expected = []
    for g in sorted({g for _, g in want}):
        ranked = sorted(((-sv, k) for (k, gg), sv in want.items() if gg == g))[:3]
        expected += [(k, g, -neg, i + 1) for i, (neg, k) in enumerate(ranked)]
    assert rows("streaming", parallelism) == sorted(expected)
    assert rows("batch", parallelism) == sorted(expected)


def test_over_an_unbounded_updating_input_is_refused() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE u (k INT, g INT, v INT) WITH ('connector' = 'datagen', "
              "'fields.k.min' = '1', 'fields.k.max' = '9')")
    with pytest.raises(NotSupportedError, match="updating unbounded input"):
        s.sql(SQL.replace("FROM t", "FROM u")).collect()


@pytest.mark.parametrize(("values", "expected"), [
    # PyFlink 2.3: a updates to 8 after b reached 8, so it ranks behind b
    ("('a', 7), ('b', 8), ('a', 1)", [("b", 8)]),
    ("('b', 8), ('a', 7), ('a', 1)", [("b", 8)]),
    ("('a', 8), ('b', 7), ('b', 1)", [("a", 8)]),
])
def test_ties_rank_the_group_updated_last_behind(values: str,
                                                 expected: list[tuple[object, ...]]) -> None:
    """Equal values rank in the order the groups took them, as Flink's row-at-a-time
    aggregate emits them: a batch's groups leave the aggregate in the order of their last rows
    (they left in the order of their first)."""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    got = s.sql(f"SELECT k, s FROM (SELECT k, s, ROW_NUMBER() OVER (ORDER BY s DESC) AS rn "
                f"FROM (SELECT k, SUM(v) AS s FROM (VALUES {values}) AS t(k, v) GROUP BY k)) "
                "WHERE rn <= 1").collect()
    assert [tuple(r.values()) for r in got.to_pylist()] == expected
