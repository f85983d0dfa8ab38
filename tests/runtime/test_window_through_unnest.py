"""A window aggregate or window Top-N over ``TABLE(TUMBLE(...)) CROSS JOIN UNNEST(...)``:
window_start / window_end pass through the UNNEST and stay window columns, as through Flink's
correlate, so the aggregate is a window aggregate (late rows dropped, insert-only). It was
planned as a regular GROUP BY / Top-N that kept the late row. Expected rows: PyFlink 2.3's
in streaming mode (a probe ran the same statements); in batch mode no row is late."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

import sqlengine

# (the row at 0:02 comes after the one at 0:09: behind the watermark 0:07)
ROWS = "1,a,1,2024-01-01 00:00:01\n2,a,1,2024-01-01 00:00:09\n3,a,1,2024-01-01 00:00:02\n"
UNNESTED = ("(SELECT window_start, window_end, id, x FROM TABLE(TUMBLE(TABLE m, DESCRIPTOR(ts), "
            "INTERVAL '5' SECOND)) CROSS JOIN UNNEST(ARRAY[k]) AS t(x))")
T0, T5 = dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 5)


def session(tmp_path: Path, mode: str, parallelism: str) -> sqlengine.Session:
    (tmp_path / "m.csv").write_text(ROWS)
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE m (id INT, k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS "
              f"ts - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 'm.csv'}', 'format' = 'csv')")
    return s


@pytest.mark.parametrize(("mode", "parallelism", "expected"), [
    ("streaming", "1", [(T0, 1), (T5, 1)]), ("streaming", "2", [(T0, 1), (T5, 1)]),
    ("batch", "1", [(T0, 2), (T5, 1)])])
def test_a_window_aggregate_through_unnest(tmp_path: Path, mode: str, parallelism: str,
                                           expected: list[tuple]) -> None:
    s = session(tmp_path, mode, parallelism)
    q = s.sql(f"SELECT window_start, COUNT(*) AS c FROM {UNNESTED} GROUP BY window_start, "
              "window_end")
    assert sorted(tuple(r.values()) for r in q.collect().to_pylist()) == expected
    assert "WindowAggregate(" in q.explain()


@pytest.mark.parametrize(("mode", "expected"), [
    ("streaming", [(T0, 1, 1), (T5, 2, 1)]), ("batch", [(T0, 1, 1), (T0, 3, 2), (T5, 2, 1)])])
def test_a_window_top_n_through_unnest(tmp_path: Path, mode: str,
                                       expected: list[tuple]) -> None:
    s = session(tmp_path, mode, "1")
    q = s.sql(f"SELECT * FROM (SELECT window_start, id, ROW_NUMBER() OVER (PARTITION BY "
              f"window_start, window_end ORDER BY id) AS rn FROM {UNNESTED}) WHERE rn <= 5")
    assert sorted(tuple(r.values()) for r in q.collect().to_pylist()) == expected
    assert "WindowRank(" in q.explain()
