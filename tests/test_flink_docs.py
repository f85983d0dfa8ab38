"""The examples of Flink 2.x's SQL query pages (queries/flink_docs/<page>/<example>.sql, with
their input tables under queries/flink_docs/data/) against the rows Flink 2.3 gives for them
(<example>.expected, from tests/fixtures/flink/gen_flink_docs.py: PyFlink 2.3, streaming at
parallelism 1 with a watermark after every row, and batch where the page runs in batch mode).

Each example runs in every mode its ``-- modes:`` line names; the last statement's final rows
(an updating result materialised) are compared as ``str()`` values, sorted. Where Flink
refuses an example, sqlengine must refuse it too — except where Flink 2.3 fails on a valid
query through a bug of its own: the file says so (``-- expected-by-hand:``) and the expected
rows are the page's, checked by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "queries" / "flink_docs").glob("*/*.sql"))
CASES = [(p, mode) for p in EXAMPLES
         for mode in json.loads(p.with_suffix(".expected").read_text())
         if mode in ("streaming", "batch")]


def _rows(path: Path, mode: str) -> list[list[str]]:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "pipeline.auto-watermark-interval": "0"})
    results = s.execute(path.read_text())
    table = results[-1].table
    assert table is not None, f"{path.name}: the last statement returns no rows"
    return sorted([str(v) for v in r.values()] for r in table.to_pylist())


@pytest.mark.parametrize(("path", "mode"), CASES,
                         ids=[f"{p.parent.name}/{p.stem}-{m}" for p, m in CASES])
def test_as_flink(path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    expected = json.loads(path.with_suffix(".expected").read_text())[mode]
    if isinstance(expected, dict):
        with pytest.raises(SqlEngineError):
            _rows(path, mode)
        return
    assert _rows(path, mode) == expected


def test_every_example_has_flinks_answer() -> None:
    assert EXAMPLES and all(p.with_suffix(".expected").exists() for p in EXAMPLES)
