"""Conformance summary: per family calls / passing / %, and the known failures by reason.

    python -m tests.conformance.report [--brief]              # the summary (--brief: the
                                                              # reasons without their calls)
    python -m tests.conformance.report --write-known-failures # rewrite known_failures.py
                                                              # from the current state

Rewriting keeps the reason already given for a call that still fails (reasons may be edited
by hand); a new failure gets the category the comparison found.
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

from .calls import FAMILIES
from .known_failures import KNOWN_FAILURES
from .runner import Outcome, outcomes

KNOWN_PATH = Path(__file__).resolve().parent / "known_failures.py"

HEADER = '''"""The conformance calls whose sqlengine answer does not match Flink 2.3's yet, and why.

Keyed by call id (calls.Call.id). test_flink_conformance fails when a call not listed here
mismatches (a regression) and when a listed call now matches (remove it: the list stays exact).
Regenerate with ``python -m tests.conformance.report --write-known-failures``; the comment
after each entry says what differs (or sqlengine's error).
"""
# ruff: noqa: E501

from __future__ import annotations

KNOWN_FAILURES: dict[str, str] = {
'''


def summary(results: tuple[Outcome, ...], brief: bool = False) -> str:
    lines = [f"{'family':<12} {'calls':>6} {'passing':>8} {'%':>7}"]
    total = ok = 0
    for fam in FAMILIES:
        rs = [r for r in results if r.call.family == fam]
        n, p = len(rs), sum(r.passed for r in rs)
        total, ok = total + n, ok + p
        lines.append(f"{fam:<12} {n:>6} {p:>8} {100 * p / max(n, 1):>6.1f}%")
    lines.append(f"{'overall':<12} {total:>6} {ok:>8} {100 * ok / max(total, 1):>6.1f}%")
    failing = [r for r in results if not r.passed]
    lines.append("")
    lines.append(f"known failures by reason ({len(KNOWN_FAILURES)} listed):")
    by_reason: dict[str, list[str]] = defaultdict(list)
    for key, reason in KNOWN_FAILURES.items():
        by_reason[reason].append(key)
    for reason, keys in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"  {len(keys):>4}  {reason}")
        if not brief:
            lines += [f"          {k}" for k in keys]
    listed = set(KNOWN_FAILURES)
    new = [r for r in failing if r.call.id not in listed]
    fixed = [r for r in results if r.passed and r.call.id in listed]
    if new:
        lines.append(f"\nfailing but not in known_failures.py ({len(new)}):")
        lines += [f"  [{r.call.family}] {r.call.id}: {r.reason}: {r.detail}" for r in new]
    if fixed:
        lines.append(f"\npassing now, remove from known_failures.py ({len(fixed)}):")
        lines += [f"  [{r.call.family}] {r.call.id}" for r in fixed]
    return "\n".join(lines)


def write_known_failures(results: tuple[Outcome, ...]) -> None:
    body = [HEADER]
    for fam in FAMILIES:
        failing = [r for r in results if r.call.family == fam and not r.passed]
        if not failing:
            continue
        body.append(f"    # --- {fam} ---\n")
        for r in failing:
            reason = KNOWN_FAILURES.get(r.call.id, r.reason)
            detail = " ".join(r.detail.split())[:150].rstrip()
            body.append(f"    {r.call.id!r}:\n        {reason!r},  # {detail}\n")
    body.append("}\n")
    KNOWN_PATH.write_text("".join(body))
    print(f"wrote {KNOWN_PATH.name}: {sum(not r.passed for r in results)} entries")


def main() -> None:
    results = outcomes()
    if "--write-known-failures" in sys.argv:
        write_known_failures(results)
        return
    print(summary(results, brief="--brief" in sys.argv))
    top = Counter(r.reason for r in results if not r.passed)
    if top:
        print("\ncurrent failures by category:")
        for reason, n in top.most_common():
            print(f"  {n:>4}  {reason}")


if __name__ == "__main__":
    main()
