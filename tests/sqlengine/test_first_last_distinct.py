"""FIRST_VALUE / LAST_VALUE(DISTINCT x), which Flink runs (its distinct view feeds the function
each value's first arrival) and which were refused by name: the first / last of a group's
distinct non-NULL values in arrival order, over an updating input too. The expected rows are
PyFlink 2.3's for the same rows (streaming, parallelism 1), read one row at a time."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine

_RNG = random.Random(5)
_ROWS = [(_RNG.choice("ab"), _RNG.choice([None, 1, 2, 3, 4]), _RNG.choice([1, 2, 3]))
         for _ in range(60)]
TABLE = pa.table({"k": [r[0] for r in _ROWS], "v": pa.array([r[1] for r in _ROWS], pa.int32()),
                  "w": pa.array([r[2] for r in _ROWS], pa.int32())})

# (query, PyFlink 2.3's final rows)
CASES = [
    ("SELECT k, FIRST_VALUE(DISTINCT v) AS f, LAST_VALUE(DISTINCT v) AS l, "
     "LAST_VALUE(DISTINCT v) FILTER (WHERE w > 1) AS lf FROM t GROUP BY k",
     [("a", 3, 4, 4), ("b", 2, 1, 3)]),
    # Over an updating input: a value retracted to none and coming again goes last.
    ("SELECT w, FIRST_VALUE(DISTINCT k) AS f, LAST_VALUE(DISTINCT k) AS l FROM "
     "(SELECT k, LAST_VALUE(v) AS lv, MAX(w) AS w FROM t GROUP BY k, v) GROUP BY w",
     [(2, "a", "b"), (3, "b", "a")]),
]


@pytest.mark.parametrize(("sql", "want"), CASES)
def test_as_pyflink_row_by_row(sql: str, want: list[tuple]) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", iter(TABLE.to_batches(max_chunksize=1)))
    got = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=str)
    assert got == want


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("parallelism", [1, 2])
def test_the_same_read_at_once(mode: str, parallelism: int) -> None:
    """Over an append-only input the arrival order is the file's in any batching (the second
    case's order depends on the inner GROUP BY's emission order, so it is not compared)."""
    sql, want = CASES[0]
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    s.register("t", TABLE)
    got = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=str)
    assert got == want


def test_a_group_of_nulls_only_is_null() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"k": [1, 1, 2], "v": pa.array([None, None, "x"], pa.string())}))
    got = s.sql("SELECT k, FIRST_VALUE(DISTINCT v) AS f, LAST_VALUE(DISTINCT v) AS l FROM t "
                "GROUP BY k ORDER BY k").collect().to_pylist()
    assert got == [{"k": 1, "f": None, "l": None}, {"k": 2, "f": "x", "l": "x"}]
