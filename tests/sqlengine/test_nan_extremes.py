"""MIN and MAX of a DOUBLE holding NaN: NaN is above every number, as Flink's MaxWithRetract
(Java's Double.compareTo), DuckDB and PostgreSQL order it, in every aggregate operator. MAX
gave the largest other number in GROUP BY, window-TVF and two-phase aggregates (Arrow's max
skips NaN); MIN OVER a frame gave NaN (numpy's minimum keeps it). DuckDB's answers, at
parallelism 1 and 2 (LocalAggregate / GlobalAggregate), in both modes."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pytest

import sqlengine

duckdb = pytest.importorskip("duckdb")

rng = random.Random(3)
N = 1500
_VALUES = [rng.choice([float("nan"), None]) if rng.random() < 0.05 else rng.uniform(-5, 5)
           for _ in range(N)]
T = pa.table({"k": pa.array([rng.randrange(30) for _ in range(N)], pa.int64()),
              "x": pa.array(_VALUES, pa.float64()),
              "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i)
                              for i in range(N)], pa.timestamp("ms"))})

QUERIES = {
    "group by": "SELECT k, MAX(x) AS mx, MIN(x) AS mn FROM t GROUP BY k",
    "filter": "SELECT k, MAX(x) FILTER (WHERE k % 3 = 0) AS mx FROM t GROUP BY k",
    "whole": "SELECT MAX(x) AS mx, MIN(x) AS mn FROM t",
    "over rows": "SELECT k, ts, MAX(x) OVER w AS mx, MIN(x) OVER w AS mn FROM t WINDOW w AS "
                 "(PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING AND CURRENT ROW)",
    "over range": "SELECT k, ts, MAX(x) OVER w AS mx, MIN(x) OVER w AS mn FROM t WINDOW w AS "
                  "(PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '10' SECOND PRECEDING "
                  "AND CURRENT ROW)",
}
HOP = ("SELECT k, window_start, MAX(x) AS mx, MIN(x) AS mn FROM TABLE(HOP(TABLE t, "
       "DESCRIPTOR(ts), INTERVAL '5' MINUTE, INTERVAL '10' MINUTE)) GROUP BY k, window_start, "
       "window_end")
DUCK_HOP = ("SELECT k, ws, MAX(x), MIN(x) FROM (SELECT k, x, time_bucket(INTERVAL 5 MINUTE, ts) "
            "- o * INTERVAL 5 MINUTE AS ws FROM t, (SELECT unnest([0, 1]) AS o)) GROUP BY k, ws")


def _norm(rows: object) -> list[tuple]:
    return sorted(tuple("NaN" if isinstance(v, float) and v != v else
                        round(v, 9) if isinstance(v, float) else v for v in r)
                  for r in rows)  # type: ignore[attr-defined]


def _ours(sql: str, mode: str, parallelism: str) -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.register("t", T, rowtime="ts")
    return _norm(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def _duck(sql: str) -> list[tuple]:
    con = duckdb.connect()
    con.register("t", T)
    return _norm(con.sql(sql).fetchall())


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize("name", [*QUERIES, "hop"])
def test_nan_is_above_every_number_as_in_duckdb(name: str, mode: str, parallelism: str
                                                ) -> None:
    if name == "hop":
        got, want = _ours(HOP, mode, parallelism), _duck(DUCK_HOP)
    else:
        got, want = _ours(QUERIES[name], mode, parallelism), _duck(QUERIES[name])
    assert got == want
    assert any("NaN" in r for r in want)  # (the data reaches a NaN)
