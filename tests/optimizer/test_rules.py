"""Each rule alone, on fixture cases: SQL in, expected plan out (tests/fixtures/optimizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sqlengine.optimizer import RULES, optimize
from sqlengine.optimizer.rule import RuleContext
from tests.plans import plan_of, show, sized_catalog
from tests.slt import Case, read_cases, update_case

FIXTURES = Path(__file__).parent.parent / "fixtures" / "optimizer"
RULE_BY_NAME = {r.name: r for r in RULES}
# Rules that only see their pattern after others have run: the fixture's "before" plan is the
# bound plan with these applied first.
PREREQUISITES = {"limit_ranks": ("fold_constants", "push_down_filters"),
                 "merge_unions": ("merge_projections",),
                 "reorder_joins": ("push_down_filters",),
                 "push_down_semi_joins": ("decorrelate",),
                 "reduce_aggregate_inputs": ("decorrelate",),
                 "semi_join_extremes": ("decorrelate", "push_down_filters"),
                 "prune_empty": ("fold_constants",)}
# Options a rule's fixtures run under (besides none).
OPTIONS = {"push_down_semi_joins": {"execution.runtime-mode": "batch"},
           "reduce_aggregate_inputs": {"execution.runtime-mode": "batch"},
           "semi_join_extremes": {"execution.runtime-mode": "batch"}}
# Rules that consult the estimates see tables of known size.
SIZED = {"push_down_semi_joins", "reduce_aggregate_inputs"}


def _cases() -> list[tuple[str, Case]]:
    out = []
    for path in sorted(FIXTURES.glob("*.slt")):
        for case in read_cases(path):
            out.append((path.stem, case))
    return out


CASES = _cases()


@pytest.mark.parametrize(("rule", "case"), CASES, ids=[f"{r}:{c.name}" for r, c in CASES])
def test_rule(rule: str, case: Case, update_golden: bool) -> None:
    before = plan_of(case.input, sized_catalog() if rule in SIZED else None)
    ctx = RuleContext(dict(OPTIONS.get(rule, {})))
    for name in PREREQUISITES.get(rule, ()):
        before = RULE_BY_NAME[name].apply(before, ctx).data
    after = RULE_BY_NAME[rule].apply(before, ctx).data
    text = f"-- before\n{show(before)}\n-- after\n{show(after)}"
    if update_golden:
        update_case(FIXTURES / f"{rule}.slt", case.name, text)
        return
    assert text == case.expected
    assert [(f.name, f.type) for f in after.schema.fields] == \
        [(f.name, f.type) for f in before.schema.fields]


def test_every_rule_has_fixtures() -> None:
    assert {r for r, _ in CASES} == set(RULE_BY_NAME)


def test_optimizer_off_leaves_plan_alone() -> None:
    plan = plan_of("SELECT a FROM t WHERE 1 = 1")
    assert optimize(plan, {"table.optimizer.enabled": "false"}) is plan


def test_disabled_rule_is_skipped() -> None:
    plan = plan_of("SELECT a FROM t")
    out = optimize(plan, {"table.optimizer.disabled-rules": "prune_projections"})
    assert "projection=" not in show(out)
    assert "projection=[a]" in show(optimize(plan, {}))
