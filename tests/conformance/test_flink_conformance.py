"""sqlengine against Flink 2.3 on the built-in functions (issue 19), family by family.

The calls are in calls.py; Flink's answers in flink_expected.json (from generate_flink.py, run
under PyFlink 2.3). A call passes when sqlengine gives Flink's value and Flink's type (after
compare.normalise_type), or when both raise an error (sqlengine: a SqlEngineError). The calls
that do not pass yet are listed in known_failures.py with a reason: a family's test fails on a
mismatch not listed there (a regression) and on a listed call that passes now (so that the list
stays exact). ``python -m tests.conformance.report`` prints the per-family percentages.
"""

from __future__ import annotations

import pytest

from .calls import FAMILIES, all_calls
from .known_failures import KNOWN_FAILURES
from .runner import load_expected, outcomes


def test_expected_answers_cover_every_call() -> None:
    ids = {c.id for c in all_calls()}
    expected = set(load_expected())
    assert ids - expected == set(), "calls without Flink's answer: run generate_flink.py"
    assert expected - ids == set(), "answers for calls no longer in calls.py: regenerate"
    assert set(KNOWN_FAILURES) <= ids, f"unknown ids in known_failures: {set(KNOWN_FAILURES) - ids}"


@pytest.mark.parametrize("family", FAMILIES)
def test_family_matches_flink(family: str) -> None:
    results = [r for r in outcomes() if r.call.family == family]
    assert results
    regressions = [r for r in results if not r.passed and r.call.id not in KNOWN_FAILURES]
    fixed = [r for r in results if r.passed and r.call.id in KNOWN_FAILURES]
    msg = []
    if regressions:
        msg.append(f"{len(regressions)} call(s) no longer give Flink's answer:")
        msg += [f"  {r.call.id}: {r.reason}: {r.detail}" for r in regressions]
    if fixed:
        msg.append(f"{len(fixed)} call(s) pass now; remove them from known_failures.py:")
        msg += [f"  {r.call.id!r}" for r in fixed]
    assert not msg, "\n".join(msg)
