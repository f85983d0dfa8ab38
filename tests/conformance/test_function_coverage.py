"""Coverage of Flink's documented built-in functions (issue 19): function_coverage.py runs a
small example of each through sqlengine. Fails when a function counted as implemented stops
working (a regression) and when one listed in EXPECTED_MISSING works now (remove it: the list
stays exact)."""

from __future__ import annotations

from .flink_functions import FLINK_23_EXTRA, all_documented
from .function_coverage import EXAMPLES, EXPECTED_MISSING, EXPECTED_MISSING_EXTRA, coverage


def test_every_function_has_an_example() -> None:
    names = [name for _, name in all_documented()]
    assert len(names) == len(set(names)), "a name listed twice in FLINK_FUNCTIONS"
    wanted = set(names) | set(FLINK_23_EXTRA)
    assert wanted - set(EXAMPLES) == set(), "functions without an example"
    assert set(EXAMPLES) - wanted == set(), "examples of functions not listed"
    assert set(EXPECTED_MISSING) <= set(names)
    assert set(EXPECTED_MISSING_EXTRA) <= set(FLINK_23_EXTRA)


def _diff(results: tuple, expected: dict[str, str]) -> list[str]:
    msg = []
    broken = [c for c in results if not c.implemented and c.name not in expected]
    fixed = [c for c in results if c.implemented and c.name in expected]
    if broken:
        msg.append(f"{len(broken)} function(s) no longer work:")
        msg += [f"  [{c.family}] {c.name}: {c.reason}" for c in broken]
    if fixed:
        msg.append(f"{len(fixed)} function(s) work now; remove them from the expected-missing list")
        msg += [f"  {c.name!r}" for c in fixed]
    return msg


def test_documented_functions() -> None:
    documented, _ = coverage()
    msg = _diff(documented, EXPECTED_MISSING)
    assert not msg, "\n".join(msg)


def test_flink_23_extra_functions() -> None:
    _, extra = coverage()
    msg = _diff(extra, EXPECTED_MISSING_EXTRA)
    assert not msg, "\n".join(msg)
