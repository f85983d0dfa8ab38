"""Test helpers (not tests): run a queries/ script and collect its query results."""

from __future__ import annotations

from pathlib import Path

import sqlengine
from sqlengine.errors import SqlEngineError

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "queries").glob("*.sql"))


def scenario_results(path: Path, options: dict[str, str]) -> list[object]:
    """Each query's rows (sorted unless it has an ORDER BY), then the error type if the
    script stops on one."""
    s = sqlengine.connect(options)
    out: list[object] = []
    text = path.read_text()
    try:
        for r in s.iter_execute(text):
            if r.table is not None:
                stmt = text[r.statement_offset:].split(";", 1)[0].upper()
                data = [tuple(x.values()) for x in r.table.to_pylist()]
                out.append(data if "ORDER BY" in stmt else sorted(data, key=str))
    except SqlEngineError as e:
        out.append(("error", type(e).__name__))
    return out
