"""ROW_NUMBER() OVER (PARTITION BY ... ORDER BY rowtime) without a filter on it, in streaming
mode, runs as Flink runs it: an OVER aggregate numbering rows as the watermark passes them,
late rows dropped, rows of one time in arrival order. It was numbered at the end of a bounded
input with late rows kept (and refused over an unbounded one). Expected rows: PyFlink 2.3's."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine

ROWS = ("1,a,2024-01-01 00:00:05\n2,a,2024-01-01 00:00:01\n3,a,2024-01-01 00:00:06\n"
        "4,a,2024-01-01 00:00:06\n5,a,2024-01-01 00:00:07\n6,b,2024-01-01 00:00:08\n")


def session(tmp_path: Path, parallelism: str) -> sqlengine.Session:
    path = tmp_path / "r.csv"
    path.write_text(ROWS)
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE r (id INT, k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{path}', "
              "'format' = 'csv')")
    return s


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize(("sql", "expected"), [
    # id 2 (at :01, behind the watermark :04) is late; ids 3 and 4 share a time
    ("SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM r",
     [(1, 1), (3, 2), (4, 3), (5, 4), (6, 1)]),
    ("SELECT id, ROW_NUMBER() OVER (ORDER BY ts) AS rn FROM r",
     [(1, 1), (3, 2), (4, 3), (5, 4), (6, 5)]),
    ("SELECT k, MAX(rn) AS m, COUNT(*) AS c FROM (SELECT k, ROW_NUMBER() OVER (PARTITION BY k "
     "ORDER BY ts) AS rn FROM r) GROUP BY k", [("a", 4, 4), ("b", 1, 1)]),
])
def test_as_pyflink(tmp_path: Path, parallelism: str, sql: str,
                    expected: list[tuple[object, ...]]) -> None:
    got = session(tmp_path, parallelism).sql(sql).collect().to_pylist()
    assert sorted(tuple(r.values()) for r in got) == expected


def test_explain_shows_an_over_aggregate(tmp_path: Path) -> None:
    plan = session(tmp_path, "1").sql(
        "SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM r").explain()
    assert "OverAggregate(PARTITION BY k ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING" in plan
