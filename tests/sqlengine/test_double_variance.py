"""VAR_* / STDDEV_* of DOUBLE values far from 0 against their spread. They came from DOUBLE
sums of x and x * x, which cancel: 1000000001, 1000000002, 1000000003 gave 0 where the
variance is 0.667 (PyFlink 2.3 answers 0.6666666666666666, 1.0, 0.816496580927726, 1.0). Each
value is now split into its nearest integer (summed exactly) and the rest. Expected values:
the exact variance of the very doubles (Python fractions): to 1e-9 relative; where the
values share their integer part, the rest's DOUBLE sums still cancel a little (12345.678901
... 12345.678907: 1.7e-6 relative, where the plain DOUBLE sums gave -2.98e-8, below 0)."""

from __future__ import annotations

import math
import random
from fractions import Fraction

import pyarrow as pa
import pytest

import sqlengine


def _exact(xs: list[float], sample: bool) -> float:
    fs = [Fraction(x) for x in xs]
    mean = sum(fs) / len(fs)
    return float(sum((f - mean) ** 2 for f in fs) / (len(fs) - (1 if sample else 0)))


GROUPS = {
    1: [1000000001.0, 1000000002.0, 1000000003.0],
    2: [100000000001.1, 100000000002.2, 100000000003.3, 100000000004.4],
    3: [1e15, 1e15 + 2, 1e15 + 4],
    4: [12345.678901, 12345.678902, 12345.678904, 12345.678907],
    5: [-7.25e8 + r for r in (lambda g: [g.random() for _ in range(200)])(random.Random(5))],
    8: [-7.25e8 + 0.6229] * 50,  # (one value: the variance is 0)
    6: [0.1, 0.2, float("nan")],  # (NaN: the plain DOUBLE sums, NaN)
    7: [3.5],
}


def _table() -> pa.Table:
    rows = [(k, x) for k, xs in GROUPS.items() for x in xs]
    return pa.table({"k": pa.array([r[0] for r in rows], pa.int32()),
                     "x": pa.array([r[1] for r in rows], pa.float64()),
                     "ts": pa.array([i * 1000 for i in range(len(rows))], pa.timestamp("ms"))})


def _close(got: float | None, want: float | None, rel: float = 1e-9, near: float = 0.0
           ) -> bool:
    if want is None or got is None:
        return got is want
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=rel, abs_tol=near)


@pytest.mark.parametrize(("mode", "parallelism"), [("batch", "1"), ("streaming", "1"),
                                                   ("batch", "2"), ("streaming", "2")])
def test_grouped(mode: str, parallelism: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.register("t", _table())
    got = {r["k"]: r for r in s.sql(
        "SELECT k, VAR_POP(x) AS vp, VAR_SAMP(x) AS vs, STDDEV_POP(x) AS sp, "
        "STDDEV_SAMP(x) AS ss FROM t GROUP BY k").collect().to_pylist()}
    for k, xs in GROUPS.items():
        rel = 1e-5 if k == 4 else 1e-9
        # (the DOUBLE sum of h * l rounds: off by ~1e-15 of the values' size at most; 50
        # equal values of -7.25e8 + 0.6229 give 0, where the plain DOUBLE sums gave 245.76)
        near = 1e-15 * max(abs(x) for x in xs if not math.isnan(x))
        vp = _exact(xs, False) if not any(map(math.isnan, xs)) else math.nan
        vs = None if len(xs) == 1 else (_exact(xs, True) if not any(map(math.isnan, xs))
                                        else math.nan)
        assert _close(got[k]["vp"], vp, rel, near), (k, got[k])
        assert _close(got[k]["vs"], vs, rel, near), (k, got[k])
        if vp > near or math.isnan(vp):
            root = max(rel, near / vp) if vp > 0 else rel  # (sqrt halves the relative error)
            assert _close(got[k]["sp"], math.sqrt(vp), root), (k, got[k])
            assert _close(got[k]["ss"], None if vs is None else math.sqrt(vs), root), \
                (k, got[k])


def test_pyflinks_answer() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = s.sql("SELECT VAR_POP(x), VAR_SAMP(x), STDDEV_POP(x), STDDEV_SAMP(x) FROM (VALUES "
                "(1000000001.0e0), (1000000002.0e0), (1000000003.0e0)) AS t(x)").collect()
    assert list(got.to_pylist()[0].values()) == [0.6666666666666666, 1.0, 0.816496580927726,
                                                 1.0]


def test_in_a_window_and_over_rows() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", _table())
    got = s.sql("SELECT k, VAR_POP(x) AS v FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
                "INTERVAL '1' HOUR)) WHERE k = 1 GROUP BY k, window_start, window_end"
                ).collect().to_pylist()
    assert _close(got[0]["v"], _exact(GROUPS[1], False))
    got = s.sql("SELECT x, VAR_SAMP(x) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN "
                "UNBOUNDED PRECEDING AND CURRENT ROW) AS v FROM t WHERE k = 4 ORDER BY ts"
                ).collect().to_pylist()
    xs = GROUPS[4]
    assert [r["v"] for r in got][1:] == pytest.approx(
        [_exact(xs[:i], True) for i in range(2, len(xs) + 1)], rel=1e-5)
