"""The ``sqlengine`` command's first module (the console script and ``python -m sqlengine``).

The cyclic garbage collector is off while the command starts: importing pyarrow, numpy,
sqlglot, lark and the engine allocates ~100,000 objects that live as long as the process, and
collecting them as they come (~160 young and one full collection) costs ~0.09 s of a ~0.7 s
``sqlengine run`` of ``SELECT 1``. The command line turns it back on
(:func:`resume_collection`) once the first job is planned or the first statement is done,
moving what exists by then out of the collector's sight (``gc.freeze``), so that a long job
collects as usual and never walks the start-up's objects again.

It also sets glibc malloc's thresholds for the command's process (sqlengine/allocator.py).
"""

from __future__ import annotations

import gc

_deferred = False


def entry() -> None:
    global _deferred
    if gc.isenabled():
        gc.disable()
        _deferred = True
    from sqlengine import allocator

    allocator.tune()  # (before the imports: their allocations are served the same way)
    from sqlengine.shell.cli import entry as cli_entry

    cli_entry()


def resume_collection() -> None:
    """Turn the collector back on after a start-up :func:`entry` deferred it (else nothing)."""
    global _deferred
    if _deferred:
        _deferred = False
        gc.freeze()
        gc.enable()
