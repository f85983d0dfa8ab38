"""DISTINCT aggregates of window aggregations group a NULL key like any other key.

The per-group DISTINCT results were lined up with the groups by an Arrow join on the keys,
which matches no NULL: a NULL key's group counted no distinct value (COUNT(DISTINCT x) = 0
beside COUNT(*) > 0). Expected values computed here in Python."""

from __future__ import annotations

import collections
import datetime as dt
import random

import pyarrow as pa
import pytest

import sqlengine


def _data() -> pa.Table:
    rng = random.Random(3)
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=i * 20) for i in range(3000)]
    return pa.table({"k": [rng.choice(["a", "b", None]) for _ in ts],
                     "x": [rng.choice([None, *range(40)]) for _ in ts],
                     "ts": pa.array(ts, pa.timestamp("ms"))})


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize("mode", ["streaming", "batch"])
def test_distinct_aggregates_of_a_null_keys_window_group(mode: str, parallelism: str) -> None:
    data = _data()
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.register("t", data, rowtime="ts", watermark="ts")
    rows = s.sql("SELECT k, window_start, COUNT(DISTINCT x) AS cx, SUM(DISTINCT x) AS sx, "
                 "COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' "
                 "SECOND)) GROUP BY k, window_start, window_end").collect().to_pylist()
    values: dict[tuple[object, dt.datetime], set[int]] = collections.defaultdict(set)
    counts: collections.Counter[tuple[object, dt.datetime]] = collections.Counter()
    for k, x, t in zip(data["k"].to_pylist(), data["x"].to_pylist(), data["ts"].to_pylist(),
                       strict=True):
        start = t.replace(second=t.second // 5 * 5, microsecond=0)
        counts[(k, start)] += 1
        if x is not None:
            values[(k, start)].add(x)
    got = {(r["k"], r["window_start"]): (r["cx"], r["sx"], r["n"]) for r in rows}
    want = {g: (len(values[g]), sum(values[g]) if values[g] else None, n)
            for g, n in counts.items()}
    assert got == want
    assert any(k is None for k, _ in got)  # (the NULL key's groups are there)
