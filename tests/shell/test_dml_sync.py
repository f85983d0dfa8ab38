"""'table.dml-sync' = 'false' outside the shell: an INSERT starts in the background as a job
(as Flink's client submits it and goes on), in the Python API and in ``sqlengine run``, which
waits for such jobs before it returns. It used to be accepted and ignored there: the INSERT
ran to its end, so an unbounded one never let the next statement start."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sqlengine.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "jobs.sql"
    path.write_text(
        "SET 'table.dml-sync' = 'false';\nSET 'execution.runtime-mode' = 'batch';\n"
        "CREATE TABLE src (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '20000', "
        "'fields.a.min' = '0', 'fields.a.max' = '3');\n" + body)
    return path


def test_run_starts_inserts_in_the_background_and_waits_for_them(tmp_path: Path) -> None:
    script = _script(tmp_path, (
        f"CREATE TABLE o1 (a INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}/o1', "
        "'format' = 'csv');\n"
        f"CREATE TABLE o2 (n BIGINT) WITH ('connector' = 'filesystem', "
        f"'path' = '{tmp_path}/o2', 'format' = 'csv');\n"
        "INSERT INTO o1 SELECT a FROM src;\n"
        "INSERT INTO o2 SELECT COUNT(*) FROM src;\n"
        "SHOW JOBS;\n"))
    result = CliRunner().invoke(main, ["run", str(script), "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    # Both were submitted (SHOW JOBS lists them, running or already finished) ...
    listed = result.stdout.splitlines()[1:]
    assert [line.split(",")[1] for line in listed] == ["INSERT INTO o1", "INSERT INTO o2"]
    assert result.stderr.count("successfully submitted to the cluster") == 2
    # ... and each ran to its end before the command returned.
    assert "finished: inserted 20000 rows into o1" in result.stderr
    assert "finished: inserted 1 row into o2" in result.stderr
    rows = [line for f in (tmp_path / "o1").iterdir() if not f.name.startswith(".")
            for line in f.read_text().splitlines()]
    assert len(rows) == 20000 and set(rows) <= {"0", "1", "2", "3"}
    assert [f.read_text() for f in (tmp_path / "o2").iterdir()
            if not f.name.startswith(".")] == ["20000\n"]


def test_a_background_job_that_fails_is_located_at_its_statement(tmp_path: Path) -> None:
    script = _script(tmp_path, (
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT 10 / a FROM src;\n"
        "SELECT 1 AS one;\n"))
    result = CliRunner().invoke(main, ["run", str(script), "--format", "csv"])
    assert result.exit_code == 1
    assert result.stdout == "one\n1\n"  # (the statements after it ran meanwhile)
    assert "the background job" in result.stderr and "(INSERT INTO o) failed" in result.stderr
    assert f"{script}:5:1: division by zero in (10 / a)" in result.stderr


def test_the_api_returns_at_once_from_an_unbounded_insert(tmp_path: Path) -> None:
    program = """
import time
import sqlengine
s = sqlengine.connect()
s.execute("SET 'table.dml-sync' = 'false'")
s.execute("CREATE TABLE src (a INT) WITH ('connector' = 'datagen', 'rows-per-second' = '50')")
s.execute("CREATE TABLE snk (a INT) WITH ('connector' = 'blackhole')")
(submitted,) = s.execute("INSERT INTO snk SELECT a FROM src")
print(submitted.message.splitlines()[-1])
(jobs,) = s.execute("SHOW JOBS")
print(jobs.table.to_pylist())
(job_id,) = s.jobs
time.sleep(0.5)
print(s.execute(f"STOP JOB '{job_id}'")[0].message)
print(s.jobs[job_id].status, s.jobs[job_id].rows.get("snk", 0) > 0 or "none yet")
s.execute("SET 'table.dml-sync' = 'true'")
s.execute("CREATE TABLE few (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '7')")
print(s.execute("INSERT INTO snk SELECT a FROM few")[0].message, len(s.jobs))
"""
    proc = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    job_id = lines[0].removeprefix("Job ID: ")
    assert len(job_id) == 12
    assert lines[1] == str([{"job id": job_id, "job name": "INSERT INTO snk",
                             "status": "RUNNING"}])
    assert lines[2] == f"[INFO] Job {job_id} was stopped."
    assert lines[3].split()[0] == "CANCELED"
    # 'true' runs it to its end again, in the session that set 'false' before.
    assert lines[4] == "[INFO] Inserted 7 rows into snk 1"


def test_pipeline_name_names_the_job(tmp_path: Path) -> None:
    """'pipeline.name' (Flink's job name) names the background job in SHOW JOBS and in run's
    message (it was refused as an unknown option)."""
    script = _script(tmp_path, (
        "SET 'pipeline.name' = 'nightly load';\n"
        "CREATE TABLE o (a INT) WITH ('connector' = 'blackhole');\n"
        "INSERT INTO o SELECT a FROM src;\n"
        "SHOW JOBS;\n"
        "RESET 'pipeline.name';\n"
        "INSERT INTO o SELECT a FROM src;\n"
        "SHOW JOBS;\n"))
    result = CliRunner().invoke(main, ["run", str(script), "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    names = [line.split(",")[1] for line in result.stdout.splitlines() if "," in line
             and not line.startswith("job id")]
    assert names == ["nightly load", "nightly load", "INSERT INTO o"]
    assert "(nightly load) finished: inserted 20000 rows into o" in result.stderr
