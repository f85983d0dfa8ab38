"""prune_empty against PyFlink 2.3 in streaming mode: a global aggregate over a filter folded to
FALSE emits its one row, (0, NULL), as Flink's planner folds it (ours emitted nothing); over a
filter empty only at run time both emit nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine


def _rows(tmp_path: Path, mode: str, where: str) -> list[dict]:
    (tmp_path / "t.csv").write_text("1,2\n3,4\n")
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE t (a INT, n INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 't.csv'}', 'format' = 'csv')")
    return [r for b in s.sql(f"SELECT COUNT(*) AS c, SUM(n) AS s FROM t WHERE {where}").stream()
            for r in b.to_pylist()]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_a_folded_empty_input_gives_one_row(tmp_path: Path, mode: str) -> None:
    assert _rows(tmp_path, mode, "1 = 0") == [{"op": "+I", "c": 0, "s": None}] \
        if mode == "streaming" else [{"c": 0, "s": None}]


def test_an_input_empty_at_run_time_gives_none_in_streaming_mode(tmp_path: Path) -> None:
    assert _rows(tmp_path, "streaming", "a > 100") == []
