"""Physical passes, each on fixture cases: SQL in, expected JobGraph out
(tests/fixtures/passes/<pass>.slt; --update-golden rewrites them), and each one's switch."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from optimizer import optimize, plan_job
from tests.plans import plan_of
from tests.slt import Case, read_cases, write_cases

FIXTURES = Path(__file__).parent.parent / "fixtures" / "passes"
CASES = [(path.stem, case) for path in sorted(FIXTURES.glob("*.slt"))
         for case in read_cases(path)]


def job_graph(sql: str, options: dict[str, str] | None = None) -> str:
    return plan_job(optimize(plan_of(sql), options), options).explain()


@pytest.mark.parametrize(("name", "case"), CASES, ids=[f"{n}:{c.name}" for n, c in CASES])
def test_pass(name: str, case: Case, update_golden: bool) -> None:
    text = job_graph(case.input)
    if update_golden:
        path = FIXTURES / f"{name}.slt"
        cases = read_cases(path)
        for c in cases:
            if c.name == case.name:
                c.expected = text
        write_cases(path, cases)
        return
    assert text == case.expected


def test_reuse_can_be_switched_off() -> None:
    sql = "SELECT x.a, y.e FROM u AS x JOIN u AS y ON x.a = y.a"
    assert job_graph(sql).count("Source(u)") == 1
    for key in ("table.optimizer.reuse-source-enabled", "table.optimizer.enabled"):
        assert job_graph(sql, {key: "false"}).count("Source(u)") == 2


def test_a_one_shot_stream_read_by_two_branches_is_read_once() -> None:
    def batches():
        yield pa.record_batch({"k": [1, 2, 2], "v": [10, 20, 30]})

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", batches())
    got = s.sql("SELECT x.k, x.v, y.v AS w FROM t AS x JOIN t AS y ON x.k = y.k").collect()
    assert sorted(tuple(r.values()) for r in got.to_pylist()) == [
        (1, 10, 10), (2, 20, 20), (2, 20, 30), (2, 30, 20), (2, 30, 30)]
