"""INSERT into filesystem tables loses nothing (issue 15's data-loss cases, each failing on main):
a table whose path is a single file is refused as a target (it was truncated to the new rows);
a query reading the table it inserts into sees only the old rows (INSERT INTO o SELECT * FROM o
read its own output); INSERT OVERWRITE removes the old parts only once the new one is complete;
a new part never takes an existing part's name."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import ConnectorError, PlanError


def _session(tmp_path: Path, mode: str = "batch") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE d (k INT, v STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path}/d', 'format' = 'csv')")
    return s


def _count(s: sqlengine.Session) -> int:
    return s.sql("SELECT COUNT(*) AS n FROM d").collect().column(0)[0].as_py()


def test_a_single_file_table_is_not_an_insert_target(tmp_path: Path) -> None:
    f = tmp_path / "f.csv"
    f.write_text("1,a\n2,b\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE f (k INT, v STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{f}', 'format' = 'csv')")
    with pytest.raises(ConnectorError, match="is a file"):
        s.execute("INSERT INTO f VALUES (3, 'c')")
    assert f.read_text() == "1,a\n2,b\n"
    assert s.sql("SELECT COUNT(*) AS n FROM f").collect().column(0)[0].as_py() == 2


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_inserting_a_table_into_itself_reads_the_old_rows(tmp_path: Path, mode: str) -> None:
    s = _session(tmp_path, mode)
    s.execute("INSERT INTO d VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    s.execute("INSERT INTO d SELECT * FROM d")
    assert _count(s) == 6
    assert not [p for p in (tmp_path / "d").iterdir() if p.name.startswith(".")]


def test_overwrite_replaces_the_parts_once_the_new_one_is_complete(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute("INSERT INTO d VALUES (1, 'a'), (2, 'b')")
    s.execute("INSERT INTO d VALUES (3, 'c')")
    s.execute("INSERT OVERWRITE d SELECT * FROM d WHERE k > 1")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM d").collect().to_pylist()) \
        == [(2, "b"), (3, "c")]
    # (the new part after the old parts' names: see test_file_writer)
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["part-0-2"]


def test_overwrite_from_an_unbounded_table_is_refused(tmp_path: Path) -> None:
    # Its old parts would go only when the job ends, which it never does: the table would
    # hold the old rows and the new ones together. From bounded tables, streaming mode too
    # replaces the rows.
    s = _session(tmp_path, "streaming")
    s.execute("INSERT INTO d VALUES (1, 'a'), (2, 'b')")
    s.execute("CREATE TABLE g (k INT, v STRING) WITH ('connector' = 'datagen')")
    with pytest.raises(PlanError, match="INSERT OVERWRITE 'd' reads the unbounded table 'g'"):
        s.execute("INSERT OVERWRITE d SELECT * FROM g")
    with pytest.raises(PlanError, match="unbounded table 'g'"):
        s.execute("INSERT OVERWRITE d SELECT k, v FROM d UNION ALL SELECT k, v FROM g")
    assert _count(s) == 2
    s.execute("INSERT OVERWRITE d VALUES (7, 'x')")
    assert _count(s) == 1


def test_a_new_part_never_replaces_an_existing_one(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute("INSERT INTO d VALUES (1, 'a')")
    s.execute("INSERT INTO d VALUES (2, 'b')")
    (tmp_path / "d" / "part-0-0").unlink()  # a gap in the numbering: part-0-1 remains
    for _ in range(3):
        s.execute("INSERT INTO d VALUES (9, 'z')")
    assert _count(s) == 4
