"""glibc malloc's thresholds in the processes the engine owns: the ``sqlengine`` command's and
the parallel runtime's workers.

numpy's arrays (and Python's larger objects) come from glibc's malloc. By default it gives the
memory at the top of a heap back to the kernel as soon as 128 KiB of it lie free (the trim
threshold, which follows the mmap threshold as glibc raises that), so a job that makes and
drops batch-sized arrays, batch after batch, has the kernel hand it the same pages again each
time, zeroed on their first touch. Over 10M Nexmark events (a HOP aggregation to a csv sink)
that kernel time was 0.5 s of a 2.8 s ``sqlengine run`` at parallelism 1 and 1.1 s of CPU at
parallelism 2; with free memory kept up to 16 MiB at a heap's top and allocations under 4 MiB
served from the heaps, it is 0.15 s and 0.45 s, with the same peak resident memory.

Arrow's allocator (mimalloc) reserves its arenas with transparent huge pages when it commits
them eagerly (its default on Linux): a worker forked from the command's process then has the
kernel zero a fresh 2 MiB page for each one it touches. Asked to commit on demand instead
(``MIMALLOC_ARENA_EAGER_COMMIT=0``, set before pyarrow loads, so only in the command's
process), the same HOP aggregation at parallelism 2 took 1.70 s instead of 2.00 s (kernel
time 0.55 s instead of 1.18 s); parallelism 1 and TPC-H were unchanged.

A user's own ``GLIBC_TUNABLES`` malloc settings (and ``MIMALLOC_ARENA_EAGER_COMMIT``) are left
alone; so is an embedding application's process (only the workers the runtime forks are tuned
there).
"""

from __future__ import annotations

import os
import sys

TRIM_THRESHOLD = 16 << 20
MMAP_THRESHOLD = 4 << 20
_M_TRIM_THRESHOLD = -1  # (mallopt's parameter numbers, malloc.h)
_M_MMAP_THRESHOLD = -3
_done = False


def tune() -> bool:
    """Set the thresholds in this process (once); whether they are set (glibc only). Before
    pyarrow is loaded, also ask mimalloc to commit its arenas on demand."""
    global _done
    if _done:
        return True
    if "pyarrow" not in sys.modules:
        os.environ.setdefault("MIMALLOC_ARENA_EAGER_COMMIT", "0")
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):  # (not glibc: musl, macOS, Windows)
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    _done = mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1 and \
        mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
    return _done
