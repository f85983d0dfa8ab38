"""Python aggregates over NaN: every NaN is one value to DISTINCT and to a retraction, as in
SQL's own aggregates (Python's == never matches NaN: each NaN counted as another DISTINCT
value, and a retracted row holding NaN was never taken out of a pandas / arrow aggregate)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine

NAN = float("nan")


class PyCount:
    def create_accumulator(self) -> list[int]:
        return [0]

    def accumulate(self, acc: list[int], v: object) -> None:
        if v is not None:
            acc[0] += 1

    def retract(self, acc: list[int], v: object) -> None:
        if v is not None:
            acc[0] -= 1

    def merge(self, acc: list[int], others: list[list[int]]) -> None:
        for o in others:
            acc[0] += o[0]

    def get_value(self, acc: list[int]) -> int:
        return acc[0]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("window", [False, True])
def test_distinct_takes_every_nan_as_one_value(mode: str, window: bool) -> None:
    t = pa.table({"k": [1] * 6, "x": [NAN, NAN, NAN, 1.0, 1.0, None],
                  "ts": [dt.datetime(2024, 1, 1, 0, 0, i) for i in range(6)]})
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.create_function("pycount", sqlengine.udaf(PyCount, result_type="BIGINT"))
    if mode == "streaming":
        s.register("t", t, rowtime="ts", watermark="ts")
    else:
        s.register("t", t)
    source = "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))" if window else "t"
    keys = "k, window_start, window_end" if window else "k"
    got = s.sql(f"SELECT pycount(DISTINCT x) AS py, COUNT(DISTINCT x) AS c FROM {source} "
                f"GROUP BY {keys}").collect().to_pylist()
    assert got == [{"py": 2, "c": 2}]


@pytest.mark.parametrize("kind", ["pandas", "arrow"])
def test_a_retracted_nan_row_is_taken_out(kind: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.create_function("n", sqlengine.udaf(lambda x: len(x), result_type="BIGINT", kind=kind))
    # Per key the last x: k = 1 goes NaN -> 1.0 -> NaN -> 2.0, each update retracting the
    # previous x; one batch per row, so each update reaches the outer aggregate.
    rows = [(2, 5.0), (1, NAN), (1, 1.0), (1, NAN), (1, 2.0)]
    s.register("t", iter([pa.record_batch({"k": [k], "x": [x]}) for k, x in rows]))
    got = s.sql("SELECT n(x) AS p, COUNT(x) AS c FROM (SELECT k, LAST_VALUE(x) AS x FROM t "
                "GROUP BY k)").collect().to_pylist()
    assert got == [{"p": 2, "c": 2}]
