"""The ``sqlengine`` command's start-up (shell/launch.py): the cyclic garbage collector is off
while the command imports and plans, and back on (with the start-up's objects frozen) once
the first job is planned or the first statement is done."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from sqlengine.shell import cli, launch

ROOT = Path(__file__).resolve().parents[2]


def test_python_m_sqlengine_runs_a_file_and_turns_the_collector_back_on(
        tmp_path: Path) -> None:
    script = tmp_path / "q.sql"
    script.write_text("SELECT 1 AS x UNION ALL SELECT 2;\n")
    proc = subprocess.run([sys.executable, "-m", "sqlengine", "run", str(script), "--format",
                           "csv"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["x", "1", "2"]
    # The console script's entry point, with the collector's state reported at exit.
    probe = ("import atexit, gc, sys\n"
             "atexit.register(lambda: print('collector', gc.isenabled(),"
             " gc.get_freeze_count() > 0, flush=True))\n"
             f"sys.argv = ['sqlengine', 'run', {str(script)!r}]\n"
             "from sqlengine.shell.launch import entry\nentry()\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "collector True True" in proc.stdout, proc.stdout + proc.stderr


def test_the_collector_is_on_while_the_first_job_runs() -> None:
    """A job that runs long must collect as usual: the collector is back on when it starts,
    before its first row (a Python function reports what it sees from inside the job)."""
    seen: list[bool] = []

    def probe(x: int) -> int:
        seen.append(gc.isenabled())
        return x

    was_enabled = gc.isenabled()
    gc.disable()
    launch._deferred = True
    try:
        session = cli._session(())
        session.create_function("probe", probe, "BIGINT")
        rows = session.sql("SELECT probe(x) AS y FROM (VALUES (1), (2)) AS t(x)").collect()
        assert rows["y"].to_pylist() == [1, 2]
        assert seen and all(seen)
        assert gc.isenabled() and not launch._deferred
    finally:
        launch._deferred = False
        gc.unfreeze()
        if was_enabled:
            gc.enable()
        else:
            gc.disable()
