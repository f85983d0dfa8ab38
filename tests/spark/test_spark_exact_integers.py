"""Integers beyond 2**53 beside NULLs through our stateful operators on Structured Streaming
(runtime/spark/stateful.py). Spark hands a pandas function an integer column holding a NULL as
float64, which rounds such values (2**62 + 1 becomes 2**62): the operators' integer columns
reach them as exact values with their NULLs, and leave them so, giving the native runtime's
rows."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pytest

import sqlengine
from tests.nexmark import rows

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

STREAMING = {"execution.target": "spark", "spark.master": "local[2]"}
BIG = 2**62 + 1


def _events(disordered: bool = False) -> pa.Table:
    rng = random.Random(5)
    ts = [dt.datetime(2024, 1, 1) + dt.timedelta(milliseconds=i * 100) for i in range(120)]
    if disordered:  # (every tenth row arrives three rows late: behind the watermark, within
        # its session's gap)
        for i in range(0, len(ts) - 3, 10):
            ts.insert(i + 3, ts.pop(i))
    return pa.table({
        "a": pa.array([rng.randint(0, 3) for _ in ts], pa.int64()),
        "v": pa.array([rng.choice([None, *(BIG + 3 * k for k in range(8))]) for _ in ts],
                      pa.int64()),
        "ts": pa.array(ts, pa.timestamp("ms"))})


QUERIES = {
    # (a GROUP BY over a GROUP BY: our stateful operator; the big values as keys and results)
    "group-by-chain": "SELECT k, COUNT(*) AS n, MAX(c) AS c FROM (SELECT v AS k, a, COUNT(*) "
                      "AS c FROM e GROUP BY v, a) GROUP BY k",
    "top-n": "SELECT a, v, rn FROM (SELECT a, v, ROW_NUMBER() OVER (PARTITION BY a ORDER BY "
             "ts DESC) AS rn FROM e) WHERE rn <= 3",
    # (with rows behind the watermark: the native SessionAggregateOperator inside our
    # stateful operator)
    "session": "SELECT a, window_start, MAX(v) AS mx, MIN(v) AS mn, COUNT(v) AS n FROM TABLE("
               "SESSION(TABLE e PARTITION BY a, DESCRIPTOR(ts), INTERVAL '1' SECOND)) "
               "GROUP BY a, window_start, window_end",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_big_integers_beside_nulls_stay_exact(name: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlengine.runtime.spark import streaming

    # (two micro-batches, so that a second one retracts and late rows meet sessions fired
    # in the first)
    monkeypatch.setattr(streaming, "_MICRO_BATCHES", 2)
    events = _events(disordered=name == "session")
    got, late = {}, {}
    for engine, options in (("spark", STREAMING), ("native", {})):
        s = sqlengine.connect(options)
        s.register("e", events, rowtime="ts")
        q = s.sql(QUERIES[name])
        got[engine] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
        late[engine] = q.late_records_dropped
    assert got["native"] and any(BIG <= x < BIG + 100 for r in got["native"] for x in r
                                 if isinstance(x, int))
    assert got["spark"] == got["native"]
    assert late["spark"] == late["native"]
