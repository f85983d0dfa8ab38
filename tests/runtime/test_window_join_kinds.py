"""Window joins of every kind, as Flink's: INNER, LEFT, RIGHT, FULL, and IN / EXISTS / NOT
EXISTS / NOT IN correlated on the windows (semi and anti window joins). On main only INNER
and LEFT ran as window joins; the others ran as regular streaming joins, which keep every row
for ever and never drop a late one (a semi join matched a row that had come after its window
closed). Without late rows each equals batch mode (regular joins), as PyFlink 2.3 does on
the same data at parallelism 1 and 2.
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

import sqlengine

W = "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND))"
L = f"(SELECT * FROM {W} WHERE id < 100)"
R = f"(SELECT * FROM {W} WHERE id >= 100)"
ON = "l.k = r.k AND l.window_start = r.window_start AND l.window_end = r.window_end"
CASES = {
    "inner": f"SELECT l.id, r.id FROM {L} l JOIN {R} r ON {ON}",
    "left": f"SELECT l.id, r.id FROM {L} l LEFT JOIN {R} r ON {ON}",
    "right": f"SELECT l.id, r.id FROM {L} l RIGHT JOIN {R} r ON {ON}",
    "full": f"SELECT l.id, r.id FROM {L} l FULL JOIN {R} r ON {ON}",
    "semi": f"SELECT l.id FROM {L} l WHERE EXISTS (SELECT * FROM {R} r WHERE {ON})",
    "anti": f"SELECT l.id FROM {L} l WHERE NOT EXISTS (SELECT * FROM {R} r WHERE {ON})",
    "in": f"SELECT l.id FROM {L} l WHERE l.k IN (SELECT r.k FROM {R} r WHERE "
          "l.window_start = r.window_start AND l.window_end = r.window_end)",
}
KIND = {"in": "semi", "right": "left"}  # (a RIGHT join runs as a LEFT one, inputs swapped)


def _session(tmp_path: Path, mode: str, rows: list[tuple[int, int, int]], delay: int,
             parallelism: int = 1) -> sqlengine.Session:
    base = dt.datetime(2024, 1, 1, 10)
    (tmp_path / "t.csv").write_text("".join(
        f"{i},{k},{(base + dt.timedelta(seconds=s)).strftime('%Y-%m-%d %H:%M:%S')}\n"
        for i, k, s in rows))
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    s.execute(f"CREATE TABLE t (id INT, k INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '{delay}' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 't.csv'}', 'format' = 'csv')")
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("name", sorted(CASES))
def test_window_joins_equal_batch_without_late_rows(tmp_path: Path, name: str,
                                                     parallelism: int) -> None:
    r = random.Random(3)
    rows, t = [], 0
    for i in range(80):  # (ids below 100 on the left, from 100 on the right)
        t += r.randint(0, 3)
        rows.append((i if r.random() < 0.5 else 100 + i, r.randint(1, 4), t))
    sql = CASES[name]
    streaming = _session(tmp_path, "streaming", rows, 3600, parallelism)
    assert f"WindowJoin({KIND.get(name, name)})" in streaming.sql(sql).explain()
    want = _rows(_session(tmp_path, "batch", rows, 3600), sql)
    assert want  # (the data has matches and non-matches of every kind)
    assert _rows(streaming, sql) == want


def test_a_row_after_its_window_closed_matches_nothing(tmp_path: Path) -> None:
    """Row 101 arrives after the watermark closed its window [10:00:00, 10:00:05): dropped,
    so row 1 has no match in its window (batch mode, without lateness, matches them)."""
    rows = [(1, 1, 1), (2, 1, 6), (101, 1, 2), (102, 1, 7)]
    streaming = _session(tmp_path, "streaming", rows, 0)
    assert _rows(streaming, CASES["semi"]) == [(2,)]
    assert _rows(streaming, CASES["anti"]) == [(1,)]
    assert _rows(streaming, CASES["in"]) == [(2,)]
    batch = _session(tmp_path, "batch", rows, 0)
    assert _rows(batch, CASES["semi"]) == [(1,), (2,)]
    assert _rows(batch, CASES["anti"]) == []
