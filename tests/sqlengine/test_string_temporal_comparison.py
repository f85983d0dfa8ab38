"""A STRING compared with a DATE, TIME or TIMESTAMP (=, <>, <, >, BETWEEN, IN) is read as that
type, as Flink's implicit cast does: ``WHERE d >= '2024-01-01'`` ran in Flink and was refused
here ("COMPARISON expects comparable arguments"). The answers are PyFlink 2.3's for the same
SQL; a literal is folded into a typed constant (a parquet scan prunes with it); text that is
not a date fails naming it, as CAST does. STRING against numbers stays refused, as in Flink."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _rows(s: sqlengine.Session, sql: str) -> list[tuple[object, ...]]:
    return [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_strings_compared_with_dates_and_timestamps(mode: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    got = _rows(s, "SELECT d, d > '2024-01-01', d = '2024-01-02', "
                   "d BETWEEN '2024-01-01' AND '2024-01-31', d IN ('2024-01-02', '2024-03-01') "
                   "FROM (VALUES (DATE '2024-01-02'), (DATE '2023-12-31')) AS t(d)")
    assert sorted(got) == [(dt.date(2023, 12, 31), False, False, False, False),
                           (dt.date(2024, 1, 2), True, True, True, True)]
    got = _rows(s, "SELECT ts, ts > '2024-01-01 10:00:00', ts = '2024-01-02 00:00:00', "
                   "ts < '2024-01-02' FROM (VALUES (TIMESTAMP '2024-01-02 00:00:00'), "
                   "(TIMESTAMP '2024-01-01 09:00:00')) AS t(ts)")
    assert sorted(got) == [(dt.datetime(2024, 1, 1, 9), False, False, True),
                           (dt.datetime(2024, 1, 2), True, True, False)]
    assert _rows(s, "SELECT '2024-01-01' < DATE '2024-01-02', TIME '10:00:00' > '09:59:59'"
                 ) == [(True, True)]


def test_a_literal_becomes_a_pushed_date(tmp_path: Path) -> None:
    days = [dt.date(2024, 1, i) for i in range(1, 29)]
    pq.write_table(pa.table({"d": days, "v": list(range(28))}), tmp_path / "p.parquet",
                   row_group_size=7)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE p (d DATE, v BIGINT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'p.parquet'}', 'format' = 'parquet')")
    q = s.sql("SELECT SUM(v) AS total FROM p WHERE d >= '2024-01-22'")
    assert "filters=[(d >= DATE '2024-01-22')]" in q.explain()
    assert q.collect().to_pylist() == [{"total": sum(range(21, 28))}]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT d > 'garbage' FROM (VALUES (DATE '2024-01-02')) AS t(d)",
     "cannot CAST 'garbage' to DATE"),
    ("SELECT x = '1' FROM (VALUES (1)) AS t(x)", "comparable arguments"),
])
def test_refused(sql: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        sqlengine.connect().sql(sql).collect()
