"""An order by a PROCTIME() column projected over an updating input (an aggregate's result, a
changelog source): each change got its own time there, so a retraction carried another time
than the row it retracts and met nothing (found by a probe against PyFlink 2.3). A change
now meets its row by the other columns (runtime/changelog.py), the row keeping its first
time."""

from __future__ import annotations

import json
from pathlib import Path

import sqlengine


def _files(folder: Path, lines: list[str]) -> Path:
    folder.mkdir()
    for i, line in enumerate(lines):  # (a file each: a batch each, the changes apart)
        (folder / f"{i}.json").write_text(line + "\n")
    return folder


def test_deduplicating_an_aggregate_by_a_projected_proctime_keeps_the_live_count(
        tmp_path: Path) -> None:
    """PyFlink 2.3: [a, 3]; ours kept the first count, retracted since: [a, 1]."""
    src = _files(tmp_path / "src", ['{"k": "a"}'] * 3 + ['{"k": "b"}'])
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE src (k STRING) WITH ('connector' = 'filesystem', 'path' = "
              f"'{src}', 'format' = 'json')")
    got = s.sql("SELECT k, c FROM (SELECT k, c, ROW_NUMBER() OVER (PARTITION BY k ORDER BY pt) "
                "AS rn FROM (SELECT k, COUNT(*) AS c, PROCTIME() AS pt FROM src GROUP BY k)) "
                "WHERE rn = 1").collect().to_pylist()
    assert sorted((r["k"], r["c"]) for r in got) == [("a", 3), ("b", 1)]


def test_a_window_function_over_changes_by_a_projected_proctime_drops_deleted_rows(
        tmp_path: Path) -> None:
    """As with PROCTIME() written in the OVER clause: the rows live at the end (a deleted row
    was kept, its deletion meeting nothing: [a, 5, 5], [a, 2, 7])."""
    events = [{"before": None, "after": {"k": "a", "v": 5}, "op": "c"},
              {"before": {"k": "a", "v": 5}, "after": None, "op": "d"},
              {"before": None, "after": {"k": "a", "v": 2}, "op": "c"}]
    cdc = _files(tmp_path / "cdc", [json.dumps(e) for e in events])
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE cdc (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = "
              f"'{cdc}', 'format' = 'debezium-json')")
    frame = "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"
    projected = s.sql(f"SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY pt {frame}) AS rs "
                      "FROM (SELECT k, v, PROCTIME() AS pt FROM cdc)").collect().to_pylist()
    inline = s.sql(f"SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY PROCTIME() {frame}) "
                   "AS rs FROM cdc").collect().to_pylist()
    assert projected == inline == [{"k": "a", "v": 2, "rs": 2}]
