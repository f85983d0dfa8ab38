"""DATE_FORMAT of a long TIMESTAMP column formats its distinct values at the finest unit the
pattern shows (kernels._format_distinct); the text is Python's strftime of every value,
before 1970 too, with NULLs kept."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa

import sqlengine


def test_date_format_of_a_long_column_matches_python() -> None:
    r = random.Random(1)
    values = [dt.datetime(1960, 1, 1) + dt.timedelta(seconds=r.randint(0, 2 * 10**9),
                                                      milliseconds=r.randint(0, 999))
              for _ in range(5000)] + [None]
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"ts": pa.array(values, pa.timestamp("ms"))}))
    rows = s.sql("SELECT DATE_FORMAT(ts, 'yyyy-MM-dd') AS a, DATE_FORMAT(ts, 'HH:mm') AS b, "
                 "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss') AS c, DATE_FORMAT(ts, 'h a') AS d "
                 "FROM t").collect().to_pylist()
    for v, got in zip(values, rows, strict=True):
        if v is None:
            assert got == {"a": None, "b": None, "c": None, "d": None}
            continue
        assert (got["a"], got["b"], got["c"]) == (
            v.strftime("%Y-%m-%d"), v.strftime("%H:%M"), v.strftime("%Y-%m-%d %H:%M:%S"))
        assert got["d"] == f"{(v.hour % 12) or 12} {'AM' if v.hour < 12 else 'PM'}"
