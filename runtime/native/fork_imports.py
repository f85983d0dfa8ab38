"""A worker process's imports that other threads of its parent had under way at the fork.

A thread of the parent (another query, or the embedding application's own) may be importing
a module when a job forks its worker processes. The worker then holds that module's import
lock for a thread that does not exist in it, and its first import of the module waits for
ever: a parallel query started beside another hung in its worker's lazy import of an
operator's module. The worker drops such locks with the half-made modules, which it then
imports afresh.
"""

from __future__ import annotations

import importlib._bootstrap as bootstrap
import sys
import threading


def forget_imports_of_other_threads() -> None:
    """In a forked child: drop the import locks other threads held, and their modules."""
    locks = getattr(bootstrap, "_module_locks", None)
    if not isinstance(locks, dict):  # (another Python's import machinery: nothing known)
        return
    me = threading.get_ident()
    for name, ref in list(locks.items()):
        lock = ref() if callable(ref) else ref
        owner = getattr(lock, "owner", None)
        if lock is None or owner is None or owner == me or not getattr(lock, "count", 0):
            continue
        locks.pop(name, None)
        sys.modules.pop(name, None)
