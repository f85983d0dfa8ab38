"""Start-up: wall time of whole processes on a trivial statement, median of N runs each.

    python -m bench.startup [--runs 7]

Rows: ``import sqlengine``; ``sqlengine run`` of a file holding ``SELECT 1;`` (the grammar cache
warm, as after a first run); the same in a process where pandas cannot be imported (the
README's demo install has no pandas; with pandas installed pyarrow imports it on the first
conversion of a Python list, ~0.2 s); and DuckDB's Python client on ``SELECT 1`` as the anchor.
Every process runs with bytecode caching on (``PYTHONDONTWRITEBYTECODE`` removed from the
environment), as in a user's install: without it each run compiles ~130 modules (+0.2 s).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

_NO_PANDAS = """
import sys

class _NoPandas:
    def find_spec(self, name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError(name)

sys.meta_path.insert(0, _NoPandas())
from sqlengine.shell.launch import entry
sys.argv = ["sqlengine", "run", {path!r}]
entry()
"""


_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _median_wall(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=_ENV)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as f:
        f.write("SELECT 1;\n")
        path = f.name
    try:
        py = sys.executable
        cli = [py, "-m", "sqlengine"] if not _script() else [_script()]
        subprocess.run([*cli, "run", path], check=True, capture_output=True,
                       env=_ENV)  # warm the grammar and bytecode caches
        rows = [
            ("import sqlengine", [py, "-c", "import sqlengine"]),
            ("sqlengine run SELECT 1", [*cli, "run", path]),
            ("sqlengine run SELECT 1, no pandas", [py, "-c", _NO_PANDAS.format(path=path)]),
            ("duckdb SELECT 1", [py, "-c", "import duckdb; duckdb.sql('SELECT 1').fetchall()"]),
        ]
        print(f"{'process':<36}{'median wall':>12}")
        for name, argv in rows:
            try:
                seconds = _median_wall(argv, args.runs)
            except subprocess.CalledProcessError:
                print(f"{name:<36}{'failed':>12}")
                continue
            print(f"{name:<36}{seconds:>11.3f}s")
    finally:
        os.unlink(path)


def _script() -> str | None:
    candidate = os.path.join(os.path.dirname(sys.executable), "sqlengine")
    return candidate if os.path.exists(candidate) else None


if __name__ == "__main__":
    main()
