"""Under an address-space limit (``prlimit --as``) the default memory budget keeps a batch
GROUP BY within it by spilling, and a streaming one fails with the budget error, not an
out-of-memory crash; without the budget the same batch job runs out of memory (so the limit is
one the job needs the spill for)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("prlimit") is None, reason="needs prlimit")]

GROUPS = 1_000_000
# 2M rows in 1M groups with long string keys: without the budget the job's address space
# grows some 200 MB past the tiny job's, with the default budget under the limit below some
# 110 MB (3M groups under a 450 MB limit took three times as long for the same margins:
# some 580 MB and 360 MB).
SCRIPT = """\
SET 'execution.runtime-mode' = '{mode}';
{extra}
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'fields.id.kind' = 'sequence',
  'fields.id.start' = '1', 'fields.id.end' = '{rows}', 'rows-per-second' = '1000000000');
SELECT COUNT(*) AS groups_seen, SUM(c) AS rows_seen FROM (
  SELECT CONCAT('a-rather-long-group-key-', CAST(id % {groups} AS STRING)) AS k,
         COUNT(*) AS c
  FROM g GROUP BY CONCAT('a-rather-long-group-key-', CAST(id % {groups} AS STRING)));
"""

# Runs the CLI and reports the process's peak address space (VmPeak) on stderr.
RUNNER = """\
import atexit, sys
def peak():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmPeak:'):
                print('VMPEAK', int(line.split()[1]) * 1024, file=sys.stderr)
atexit.register(peak)
from sqlengine.shell.cli import main
sys.argv = ['sqlengine', 'run', sys.argv[1]]
main()
"""


def _script(tmp_path: Path, name: str, mode: str, rows: int, extra: str = "") -> Path:
    path = tmp_path / name
    path.write_text(SCRIPT.format(mode=mode, rows=rows, groups=rows // 2, extra=extra))
    return path


def _run(path: Path, limit: int | None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", RUNNER, str(path)]
    if limit is not None:
        cmd = ["prlimit", f"--as={limit}", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def _peak(done: subprocess.CompletedProcess[str]) -> int:
    return max(int(line.split()[1]) for line in done.stderr.splitlines()
               if line.startswith("VMPEAK"))


@pytest.fixture(scope="module")
def limit(tmp_path_factory) -> int:
    """The engine's own address space on a tiny job, plus 150 MB for the data."""
    tmp = tmp_path_factory.mktemp("baseline")
    done = _run(_script(tmp, "tiny.sql", "batch", 2000), None)
    assert done.returncode == 0, done.stderr
    return _peak(done) + 150 * 2**20


def test_batch_group_by_spills_within_the_limit(tmp_path, limit):
    done = _run(_script(tmp_path, "batch.sql", "batch", 2 * GROUPS), limit)
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(rf"\|\s+{GROUPS}\s+\|\s+{2 * GROUPS}\s+\|", done.stdout), done.stdout
    assert "Traceback" not in done.stderr


def test_without_the_budget_the_same_job_runs_out_of_memory(tmp_path, limit):
    extra = "SET 'taskmanager.memory.managed.size' = '-1';"
    done = _run(_script(tmp_path, "nobudget.sql", "batch", 2 * GROUPS, extra), limit)
    assert done.returncode != 0
    assert "out of memory" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_streaming_group_by_fails_with_the_budget_error(tmp_path, limit):
    done = _run(_script(tmp_path, "stream.sql", "streaming", 2 * GROUPS), limit)
    assert done.returncode != 0
    out = done.stdout + done.stderr
    assert "beyond the memory budget" in out
    assert "GroupAggregate" in out
    assert "a streaming aggregation keeps every group" in out
    assert "Traceback" not in done.stderr
