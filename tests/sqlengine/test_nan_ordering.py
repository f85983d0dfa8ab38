"""NaN in DOUBLE columns as Flink 2.3 handles it (hand-checked with PyFlink on the same csv):
GREATEST of a NaN is NaN (Java's Double.compareTo puts NaN above every number; Arrow's
element-wise max skipped it and gave the number), LEAST the smallest number; ORDER BY puts
NaN last. MIN skips NaN unless a group has nothing else, and MAX is NaN where a group holds
one: NaN above every number, as ORDER BY orders it, as Flink's MAX over an updating input
(MaxWithRetract, Double.compareTo), DuckDB and PostgreSQL give it (Flink's MAX over an
insert-only input compares with >, so its answer depends on the order the rows come in: 1.5
for this file, NaN where the NaN comes first; ours skipped NaN, unlike its own MAX with
retraction and MAX OVER a window)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import sqlengine


def _rows(tmp_path: Path, sql: str, mode: str) -> list[tuple[object, ...]]:
    (tmp_path / "d.csv").write_text("1,1.5\n1,NaN\n1,-2.0\n2,NaN\n3,0.5\n")
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE d (k INT, x DOUBLE) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'd.csv'}', 'format' = 'csv')")
    return [tuple("nan" if isinstance(v, float) and math.isnan(v) else v for v in r.values())
            for r in s.sql(sql).collect().to_pylist()]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_greatest_and_least(tmp_path: Path, mode: str) -> None:
    got = _rows(tmp_path, "SELECT x, GREATEST(x, 1.0), LEAST(x, 1.0), GREATEST(1.0, x, 7.0) "
                "FROM d", mode)
    assert sorted(got, key=repr) == sorted([
        (1.5, 1.5, 1.0, 7.0), ("nan", "nan", 1.0, "nan"), (-2.0, 1.0, -2.0, 7.0),
        ("nan", "nan", 1.0, "nan"), (0.5, 1.0, 0.5, 7.0)], key=repr)


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_min_skips_nan_and_max_is_nan(tmp_path: Path, mode: str) -> None:
    got = _rows(tmp_path, "SELECT k, MIN(x), MAX(x), COUNT(x) FROM d GROUP BY k", mode)
    assert sorted(got) == [(1, -2.0, "nan", 3), (2, "nan", "nan", 1), (3, 0.5, 0.5, 1)]


def test_order_by_puts_nan_last(tmp_path: Path) -> None:
    got = _rows(tmp_path, "SELECT k, x FROM d ORDER BY x", "batch")
    assert got == [(1, -2.0), (3, 0.5), (1, 1.5), (1, "nan"), (2, "nan")] or \
        got == [(1, -2.0), (3, 0.5), (1, 1.5), (2, "nan"), (1, "nan")]
