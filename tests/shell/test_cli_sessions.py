"""``sqlengine run a.sql b.sql``: each file in a session of its own; a failure stops its file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sqlengine.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _table(tmp_path: Path, name: str, rows: str) -> str:
    data = tmp_path / f"{name}.csv"
    data.write_text(rows)
    return (f"CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', "
            f"'path' = '{data}', 'format' = 'csv');\n")


def test_each_file_reads_its_own_table(tmp_path: Path) -> None:
    a = tmp_path / "a.sql"
    a.write_text(_table(tmp_path, "a", "a,1\nb,2\n") + "SELECT k, v FROM t;\n")
    b = tmp_path / "b.sql"
    b.write_text(_table(tmp_path, "b", "x,10\n") + "SELECT k, v FROM t;\n")
    result = CliRunner().invoke(main, ["run", str(a), str(b), "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    # b.sql's CREATE TABLE t succeeds (no "already exists") and its SELECT reads b.csv.
    assert result.stdout == "k,v\na,1\nb,2\nk,v\nx,10\n"
    assert "already exists" not in result.stderr


def test_a_table_of_one_file_is_unknown_in_the_next(tmp_path: Path) -> None:
    a = tmp_path / "a.sql"
    a.write_text(_table(tmp_path, "a", "a,1\n"))
    b = tmp_path / "b.sql"
    b.write_text("SELECT k FROM t;\n")
    result = CliRunner().invoke(main, ["run", str(a), str(b), "--format", "csv"])
    assert result.exit_code == 1
    assert f"{b}:1:15: unknown table 't'" in result.stderr


def test_options_set_in_one_file_do_not_reach_the_next(tmp_path: Path) -> None:
    a = tmp_path / "a.sql"
    a.write_text("SET 'execution.runtime-mode' = 'batch';\nSET;\n")
    b = tmp_path / "b.sql"
    b.write_text("SET;\n")
    result = CliRunner().invoke(main, ["run", str(a), str(b), "--format", "csv", "-D",
                                       "parallelism.default=2"])
    assert result.exit_code == 0, result.stderr
    first, second = result.stdout.split("key,value\n")[1:]
    assert "execution.runtime-mode,batch" in first and "parallelism.default,2" in first
    # -D applies to every file; SET only to its own.
    assert "execution.runtime-mode,streaming" in second and "parallelism.default,2" in second


def test_a_failure_stops_its_file_with_its_place_and_the_next_file_runs(tmp_path: Path
                                                                       ) -> None:
    a = tmp_path / "a.sql"
    a.write_text(_table(tmp_path, "a", "a,1\n") +
                 "CREATE TABLE t (k STRING) WITH ('connector' = 'datagen');\n"
                 "SELECT 'not reached' AS s;\n")
    b = tmp_path / "b.sql"
    b.write_text("SELECT 'b runs' AS s;\n")
    result = CliRunner().invoke(main, ["run", str(a), str(b), "--format", "csv"])
    assert result.exit_code == 1
    assert result.stdout == "s\nb runs\n"
    lines = result.stderr.splitlines()
    # (at the name the message quotes; it pointed at CREATE)
    at = lines.index(f"{a}:2:14: table or view 't' already exists")
    assert lines[at + 1] == "  CREATE TABLE t (k STRING) WITH ('connector' = 'datagen');"
    assert lines[at + 2] == "               ^"
    assert lines[at + 3] == f"{a}: the 1 statement after it did not run (--continue-on-error " \
        "runs them)"
    assert f"2 files, 1 stopped by an error: {a}:2" in result.stderr


def test_continue_on_error_runs_the_rest_of_the_file(tmp_path: Path) -> None:
    a = tmp_path / "a.sql"
    a.write_text("SELECT nope;\nSELECT 'after' AS s;\n")
    stop = CliRunner().invoke(main, ["run", str(a), "--format", "csv"])
    assert stop.exit_code == 1 and stop.stdout == ""
    go_on = CliRunner().invoke(main, ["run", str(a), "--format", "csv",
                                      "--continue-on-error"])
    assert go_on.exit_code == 1 and go_on.stdout == "s\nafter\n"
    assert f"2 statements, 1 failed: {a}:1" in go_on.stderr


def test_a_job_that_fails_while_running_is_located_at_its_statement(tmp_path: Path) -> None:
    a = tmp_path / "a.sql"
    a.write_text("SELECT 1 AS one;\n  SELECT CAST('x' AS INT) AS bad;\nSELECT 2 AS two;\n")
    result = CliRunner().invoke(main, ["run", str(a), "--format", "csv"])
    assert result.exit_code == 1 and result.stdout == "one\n1\n"
    assert f"{a}:2:3: cannot CAST 'x' to INT" in result.stderr
    assert "\n    SELECT CAST('x' AS INT) AS bad;\n    ^^^^^^\n" in result.stderr


def test_sessions_per_file_through_the_console_script(tmp_path: Path) -> None:
    a = tmp_path / "a.sql"
    a.write_text(_table(tmp_path, "a", "a,1\n") + "SELECT COUNT(*) AS n FROM t;\n")
    b = tmp_path / "b.sql"
    b.write_text(_table(tmp_path, "b", "x,1\ny,2\nz,3\n") + "SELECT COUNT(*) AS n FROM t;\n")
    proc = subprocess.run([sys.executable, "-m", "sqlengine.shell.cli", "run", str(a), str(b),
                           "--format", "csv"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "n\n1\nn\n3\n"
