"""Runs queries/*.sql end to end and compares every result with queries/<name>.expected.

A first line ``-- fail: <substring>`` makes the scenario an expected-error test; a first line
``-- clean: <directory>`` names a directory (under /tmp) the scenario writes, removed first.
Results are CSV with a header (NULL spelled out); rows are sorted unless the statement has
an ORDER BY.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from sqlengine.shell.formatting import render_csv
from tests.scenarios import clean_outputs

ROOT = Path(__file__).resolve().parent.parent
QUERIES = sorted((ROOT / "queries").glob("*.sql"))


def run_scenario(path: Path) -> str:
    script = path.read_text()
    session = sqlengine.connect()
    blocks = []
    for result in session.iter_execute(script, source=str(path.relative_to(ROOT))):
        if result.kind != "rows" or result.table is None:
            continue
        stmt = script[result.statement_offset:].split(";", 1)[0]
        line = script.count("\n", 0, result.statement_offset) + 1
        lines = render_csv(result.table, null="NULL").splitlines()
        header, rows = lines[:1], lines[1:]
        if "ORDER BY" not in stmt.upper():
            rows = sorted(rows)
        blocks.append("\n".join([f"-- statement at line {line}", *header, *rows]))
    return "\n\n".join(blocks) + "\n"


@pytest.mark.parametrize("path", QUERIES, ids=[p.stem for p in QUERIES])
@pytest.mark.usefixtures("repo_cwd")
def test_query_file(path: Path, update_golden: bool) -> None:
    first = path.read_text().splitlines()[0]
    clean_outputs(path.read_text())
    if first.startswith("-- fail:"):
        expected_error = first.removeprefix("-- fail:").strip()
        with pytest.raises(SqlEngineError) as info:
            run_scenario(path)
        assert expected_error in str(info.value)
        return
    got = run_scenario(path)
    expected = path.with_suffix(".expected")
    if update_golden or not expected.exists():
        expected.write_text(got)
        if not update_golden:
            pytest.fail(f"{expected.name} was missing and has been written; check it by hand")
    assert got == expected.read_text()
