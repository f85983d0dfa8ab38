"""Room for statements as deeply nested as people write them.

Parsing, binding and planning recurse once per level of nesting (parentheses, NOT, CASE,
subqueries, UNION branches), a few dozen Python frames per level, so Python's default limit of
1,000 frames stopped a statement at some 40 levels. ``deep()`` raises the limit to
``FRAMES`` while sqlengine works on a statement and puts the caller's back afterwards; deeper
still, RecursionError becomes a located error (errors.unexpected). Python 3.11 runs calls
between Python functions without growing the C stack, so the thread's stack holds this depth
(measured: 1,000 levels of NOT, CASE and subqueries, 3,000 UNION ALL branches).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

FRAMES = 20_000


@contextmanager
def deep() -> Iterator[None]:
    before = sys.getrecursionlimit()
    if before < FRAMES:
        sys.setrecursionlimit(FRAMES)
    try:
        yield
    finally:
        if before < FRAMES:
            sys.setrecursionlimit(before)
