"""A parallel job forked while another thread of the process imports a module: the worker
imports that module afresh. (It held the module's import lock for a thread that does not
exist in it: its first import of the module waited for ever. A parallelism-2 query started
beside a parallelism-1 one in another thread hung so; found by a probe of the Python API.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import sys, threading, time
    sys.path.insert(0, sys.argv[1])
    import sqlengine

    def importing():
        import slow_module  # (3 s at import: the fork comes while it is under way)

    def imports_it(x):
        import slow_module
        return x + slow_module.ADD

    t = threading.Thread(target=importing, daemon=True)
    t.start()
    time.sleep(0.5)
    s = sqlengine.connect({"parallelism.default": "2"})
    s.create_function("imports_it", imports_it, result_type="BIGINT")
    import pyarrow as pa
    s.register("t", pa.table({"k": [i % 7 for i in range(2000)], "x": list(range(2000))}))
    rows = s.sql("SELECT SUM(s) FROM (SELECT k, SUM(imports_it(x)) AS s FROM t GROUP BY k)"
                 ).collect()
    print(rows.column(0).to_pylist())
""")


def test_a_worker_imports_what_another_thread_was_importing(tmp_path: Path) -> None:
    (tmp_path / "slow_module.py").write_text("import time\ntime.sleep(3)\nADD = 10\n")
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)  # (about 5 s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # (the job's workers too)
        proc.communicate()
        raise AssertionError("the job hung in its worker's import") from None
    assert proc.returncode == 0, err
    assert out.strip() == "[2019000]"  # (sum(range(2000)) + 2000 * 10)
