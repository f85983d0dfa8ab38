"""Test helpers (not tests): run a queries/ script and collect its query results."""

from __future__ import annotations

from pathlib import Path

import sqlengine
from sqlengine.errors import SqlEngineError

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "queries").glob("*.sql"))


def clean_outputs(text: str) -> None:
    """A script whose first line is ``-- clean: /tmp/<dir>`` writes there: removed first, so
    every run starts from nothing."""
    first = text.splitlines()[0] if text else ""
    if first.startswith("-- clean:"):
        import shutil

        target = Path(first.removeprefix("-- clean:").strip())
        assert target.parts[:2] == ("/", "tmp"), target
        shutil.rmtree(target, ignore_errors=True)


def _private_outputs(text: str) -> str:
    """The script with its ``-- clean:`` directory made this process's own (two test runs on
    one machine, say CI's and a developer's, would otherwise write into each other's)."""
    first = text.splitlines()[0] if text else ""
    if not first.startswith("-- clean:"):
        return text
    import os

    target = first.removeprefix("-- clean:").strip()
    return text.replace(target, f"{target}-{os.getpid()}")


def scenario_results(path: Path, options: dict[str, str]) -> list[object]:
    """Each query's rows (sorted unless it has an ORDER BY), then the error type if the
    script stops on one."""
    s = sqlengine.connect(options)
    out: list[object] = []
    text = _private_outputs(path.read_text())
    clean_outputs(text)
    try:
        for r in s.iter_execute(text):
            if r.table is not None:
                stmt = text[r.statement_offset:].split(";", 1)[0].upper()
                data = [tuple(x.values()) for x in r.table.to_pylist()]
                out.append(data if "ORDER BY" in stmt else sorted(data, key=str))
    except SqlEngineError as e:
        out.append(("error", type(e).__name__))
    finally:
        if text != path.read_text():
            clean_outputs(text)  # (this process's own directory: not left behind)
    return out
