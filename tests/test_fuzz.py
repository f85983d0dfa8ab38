"""A seeded slice of the grammar-based fuzzer (tests/fuzz.py; bench/fuzz.py runs 20,000):
every statement gives rows or a located SqlEngineError that is not a bug report, within 10 s."""

from __future__ import annotations

import pytest

from tests.fuzz import run


@pytest.mark.parametrize("seed", [11, 12])
def test_no_statement_crashes_hangs_or_reports_a_bug(seed: int) -> None:
    tally = run(seed, 500)
    assert tally.crashes == []
    assert tally.bugs == []
    assert tally.hangs == []
    assert tally.rows > 0 and sum(tally.errors.values()) > 0  # (both kinds went through)
