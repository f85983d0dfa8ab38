"""DATE_TRUNC('unit', t), PostgreSQL's, DuckDB's and Spark's (it was "unknown function
DATE_TRUNC"): FLOOR(t TO unit) with weeks from Monday, as those engines (Flink's FLOOR TO WEEK
starts on Sunday); a DATE gives a TIMESTAMP. Against DuckDB."""

from __future__ import annotations

import datetime as dt
import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

duckdb = pytest.importorskip("duckdb")

UNITS = ["year", "quarter", "month", "week", "day", "hour", "minute", "second",
         "millisecond", "decade", "MONTH", "days"]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_match_duckdb(mode: str) -> None:
    r = random.Random(4)
    base = dt.datetime(1969, 12, 1)
    ts = [None if i % 17 == 0 else base + dt.timedelta(seconds=r.randint(0, 3 * 10**8),
                                                       milliseconds=r.randint(0, 999))
          for i in range(300)]
    t = pa.table({"ts": pa.array(ts, pa.timestamp("ms")),
                  "d": pa.array([None if v is None else v.date() for v in ts], pa.date32())})
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", t)
    con = duckdb.connect()
    con.register("t", t)
    calls = [f"DATE_TRUNC('{u}', {c})" for u in UNITS for c in ("ts", "d")]
    sql = f"SELECT ts, {', '.join(calls)} FROM t"
    ours = sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)
    assert ours == sorted(con.sql(sql).fetchall(), key=repr)


def test_a_date_gives_a_timestamp_and_centuries_start_in_01() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = s.sql("SELECT DATE_TRUNC('week', DATE '2024-03-17'), DATE_TRUNC('century', "
                "DATE '2024-03-14')").collect()
    assert got.schema.field(0).type == pa.timestamp("ms")
    # (as PostgreSQL and Flink's FLOOR TO CENTURY; DuckDB says 2000-01-01)
    assert list(got.to_pylist()[0].values()) == [dt.datetime(2024, 3, 11),
                                                  dt.datetime(2001, 1, 1)]


@pytest.mark.parametrize(("sql", "words"), [
    ("SELECT DATE_TRUNC('fortnight', DATE '2024-01-01')",
     "DATE_TRUNC to 'fortnight' is not supported; use one of"),
    ("SELECT DATE_TRUNC('day', 5)", "DATE_TRUNC takes a DATE or a TIMESTAMP, got INT"),
])
def test_refused_with_a_reason(sql: str, words: str) -> None:
    with pytest.raises(SqlEngineError, match="1:") as info:
        sqlengine.connect({}).sql(sql).collect()
    assert words in str(info.value)
