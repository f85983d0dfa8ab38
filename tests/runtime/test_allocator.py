"""glibc malloc's thresholds (sqlengine/allocator.py): with them set, memory freed at the top of
a heap is kept for the next batch's arrays instead of going back to the kernel and being
faulted in again, page by page. Measured in a fresh process as the minor page faults of ten
rounds of allocating, touching and freeing 8 MB in 100 kB blocks."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
import ctypes, resource
from sqlengine import allocator
tuned = allocator.tune()
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
def cycle():
    blocks = [libc.malloc(100_000) for _ in range(80)]
    for b in blocks:
        libc.memset(b, 1, 100_000)
    for b in reversed(blocks):
        libc.free(b)
cycle()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    cycle()
print(tuned, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _probe(tunables: str | None) -> tuple[bool, int]:
    env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    return out[0] == "True", int(out[1])


def _glibc() -> bool:
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return False
    return True


@pytest.mark.skipif(not _glibc(), reason="the thresholds are glibc's")
def test_freed_memory_is_kept_for_reuse_instead_of_faulted_in_again() -> None:
    tuned, faults = _probe(None)
    untouched, faults_default = _probe("glibc.malloc.check=0")
    assert tuned and not untouched  # (a user's own malloc tunables are left alone)
    assert faults_default > 5_000  # (glibc's default: trimmed and faulted in each round)
    assert faults < faults_default / 20

