"""The optimizer changes plans, never rows: every queries/ scenario and the generated corpus
give the same rows with 'table.optimizer.enabled' on and off (and at parallelism 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from tests.querygen import make_tables, pairs
from tests.scenarios import scenario_results
from tests.test_differential import _rows

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "queries").glob("*.sql"))
OFF = {"table.optimizer.enabled": "false"}



@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
@pytest.mark.usefixtures("repo_cwd")
def test_scenario_same_rows_with_the_optimizer_off(path: Path, mode: str) -> None:
    on = scenario_results(path, {"execution.runtime-mode": mode})
    assert scenario_results(path, {**OFF, "execution.runtime-mode": mode}) == on
    p2 = {"execution.runtime-mode": mode, "parallelism.default": "2"}
    assert scenario_results(path, p2) == on


PAIRS = pairs(140)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("pair", PAIRS, ids=[f"g{i:03d}" for i in range(len(PAIRS))])
def test_generated_query_same_rows_with_the_optimizer_off(pair, mode: str) -> None:  # type: ignore[no-untyped-def]
    got = {}
    p2 = {"parallelism.default": "2", "execution.native.task-mode": "thread"}
    settings = {"on": {}, "off": OFF, "p2": p2,
                # every eligible GROUP BY in two phases, broadcast joins off / forced on
                "two_phase": {**p2, "table.optimizer.agg-phase-strategy": "TWO_PHASE",
                              "table.optimizer.join.broadcast-threshold": "-1"},
                "broadcast": {**p2, "table.optimizer.join.broadcast-threshold": "1 gb"}}
    for name, options in settings.items():
        s = sqlengine.connect({**options, "execution.runtime-mode": mode})
        for t, data in make_tables().items():
            s.register(t, data)
        # (floats rounded: parallel subtasks add in another order)
        rows = _rows([tuple(r.values()) for r in s.sql(pair.flink).collect().to_pylist()])
        got[name] = rows if pair.ordered else sorted(rows, key=repr)
    for name in settings:
        assert got[name] == got["on"], (name, pair.flink)
