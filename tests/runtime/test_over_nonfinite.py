"""OVER sums and averages of DOUBLEs with an infinity, a NaN or an overflow: each frame's own
values decide, not those of other partitions (they were summed as differences of prefix sums
over all partitions, so one NaN made every later frame NaN). Expected rows: PyFlink 2.3's,
batch mode, for the same queries; the prefix sums against exact sums of random frames."""

from __future__ import annotations

import fractions
import math

import numpy as np
import pytest

import sqlengine
from sqlengine.runtime.prefix_sums import prefix_sums

NAN = "CAST('NaN' AS DOUBLE)"


def rows(mode: str, sql: str) -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def same(got: list[tuple], want: list[tuple]) -> bool:
    return len(got) == len(want) and all(
        len(g) == len(w) and all(a == b or (isinstance(a, float) and isinstance(b, float)
                                            and math.isnan(a) and math.isnan(b))
                                 for a, b in zip(g, w)) for g, w in zip(got, want))


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_a_nan_in_one_partition_stays_there(mode: str) -> None:
    values = f"(VALUES ('a', {NAN}), ('b', 1.0E0), ('b', 2.0E0)) AS x(k, d)"
    assert same(rows(mode, f"SELECT k, SUM(d) OVER (PARTITION BY k) AS s FROM {values}"),
                [("a", math.nan), ("b", 3.0), ("b", 3.0)])
    inf = values.replace(NAN, "CAST('Infinity' AS DOUBLE)")
    assert rows(mode, f"SELECT k, AVG(d) OVER (PARTITION BY k) AS s FROM {inf}") == \
        [("a", math.inf), ("b", 1.5), ("b", 1.5)]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_sliding_frames_leave_a_nan_behind(mode: str) -> None:
    sql = (f"SELECT k, i, SUM(d) OVER (PARTITION BY k ORDER BY i ROWS BETWEEN 1 PRECEDING "
           f"AND CURRENT ROW) AS s FROM (VALUES ('r', 1, {NAN}), ('r', 2, 1.0E0), "
           "('r', 3, 2.0E0), ('s', 1, 5.0E0), ('s', 2, 6.0E0)) AS x(k, i, d)")
    assert same(rows(mode, sql), [("r", 1, math.nan), ("r", 2, math.nan), ("r", 3, 3.0),
                                  ("s", 1, 5.0), ("s", 2, 11.0)])


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_an_overflow_is_the_frames_own(mode: str) -> None:
    sql = ("SELECT k, i, SUM(d) OVER (PARTITION BY k ORDER BY i ROWS BETWEEN 1 PRECEDING "
           "AND CURRENT ROW) AS s FROM (VALUES ('r', 1, 1e308), ('r', 2, 1e308), "
           "('r', 3, -1e308), ('r', 4, 5.0E0), ('t', 1, 5.0E0)) AS x(k, i, d)")
    assert rows(mode, sql) == [("r", 1, 1e308), ("r", 2, math.inf), ("r", 3, 0.0),
                               ("r", 4, -1e308), ("t", 1, 5.0)]


def test_prefix_sums_against_exact_sums_of_random_frames() -> None:
    rng = np.random.default_rng(1)
    pool = [1e308, -1e308, 1.5, -2.0, 1e300, 3.0, np.inf, np.nan, -np.inf, 7e307, 1e20, 0.1]
    checked = 0
    for _ in range(500):
        n = int(rng.integers(1, 30))
        v = rng.choice(pool, n)
        start = rng.integers(0, n, 40)
        stop = np.minimum(n, start + rng.integers(0, n, 40))
        got = prefix_sums(v).between(start, stop)
        scale = np.max(np.abs(v[np.isfinite(v)]), initial=1.0)
        for a, b, g in zip(start, stop, got):
            frame = v[a:b]
            odd = frame[~np.isfinite(frame)]
            if len(odd):  # (NaN, or infinities of both signs, give NaN; else the infinity)
                nan = np.isnan(odd).any() or (np.inf in odd and -np.inf in odd)
                assert math.isnan(g) if nan else g == odd[0]
                continue
            exact = sum(fractions.Fraction(float(x)) for x in frame)
            if abs(exact) < fractions.Fraction(1.7e308) and math.isfinite(g):
                assert abs(float(exact) - g) <= 1e-12 * scale
                checked += 1
    assert checked > 5000
