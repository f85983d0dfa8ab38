"""Failpoints: faults injected at named places of the checkpoint protocol, for tests.

``SQLENGINE_FAILPOINTS='snapshot@3,commit'`` makes the 3rd pass through the 'snapshot' point,
and the first through 'commit', raise InjectedFailure. Unset (always, outside tests), a point
costs one dictionary lookup.
"""

from __future__ import annotations

import os
from collections import Counter

ENV = "SQLENGINE_FAILPOINTS"
_passes: Counter[str] = Counter()


class InjectedFailure(RuntimeError):
    """The fault a failpoint injects."""


def hit(name: str) -> None:
    """Raise InjectedFailure if the failpoint ``name`` is armed for this pass."""
    spec = os.environ.get(ENV)
    if not spec:
        return
    _passes[name] += 1
    for item in spec.split(","):
        point, _, nth = item.strip().partition("@")
        if point == name and _passes[name] == int(nth or 1):
            raise InjectedFailure(f"failpoint {name!r} (pass {_passes[name]})")


def reset() -> None:
    _passes.clear()
