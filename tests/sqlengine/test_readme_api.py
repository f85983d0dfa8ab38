"""The README's Python API example runs as written, on the repository's data, and gives
DuckDB's totals. (Its CREATE TABLE missed the file's third column: the example failed with
'Expected 4 columns, got 5'; found by a probe of the Python API.)"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parents[2]


def test_the_python_api_example_runs() -> None:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"### The Python API\n\n```python\n(.*?)```", text, re.S)
    assert block is not None
    code = block.group(1).split('s.register("people"')[0]  # (the rest names placeholders)
    scope: dict[str, object] = {}
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, "README.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    q = scope["q"]
    got = {r["status"]: r["total"] for r in q.collect().to_pylist()}  # type: ignore[attr-defined]
    want = dict(duckdb.sql(
        "SELECT column4, SUM(CAST(column3 AS DECIMAL(10, 2))) FROM "
        f"read_csv('{ROOT}/queries/data/orders.csv', header = false) WHERE column3 > 5 "
        "GROUP BY column4").fetchall())
    assert got == want and len(got) == 3
