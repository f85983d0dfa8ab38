"""The allocator settings of the ``sqlengine`` command's process (sqlengine/allocator.py),
seen from inside a job: a Python function run by ``sqlengine run`` measures the minor page
faults of ten rounds of allocating, touching and freeing 12 MB in 100 kB blocks (glibc's
default trim threshold, 128 kB until it adapts, hands such memory back to the kernel each
round), and reports how Arrow's allocator was asked to commit its arenas."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = '''
import ctypes, os, resource

def probe(x: int) -> str:
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    libc.memset.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t]
    def cycle():
        blocks = [libc.malloc(100_000) for _ in range(120)]
        for b in blocks:
            libc.memset(b, 1, 100_000)
        for b in reversed(blocks):
            libc.free(b)
    cycle()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(10):
        cycle()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    return f"faults={faults} eager={os.environ.get('MIMALLOC_ARENA_EAGER_COMMIT')}"
'''


def _run(tmp_path: Path, **env: str) -> tuple[int, str]:
    (tmp_path / "alloc_probe.py").write_text(PROBE)
    script = tmp_path / "probe.sql"
    script.write_text("CREATE FUNCTION probe AS 'alloc_probe.probe' LANGUAGE PYTHON;\n"
                      "SELECT probe(1) AS p;\n")
    base = {k: v for k, v in os.environ.items()
            if k not in ("GLIBC_TUNABLES", "MIMALLOC_ARENA_EAGER_COMMIT")}
    done = subprocess.run([sys.executable, "-m", "sqlengine", "run", str(script)],
                          env={**base, "PYTHONPATH": str(tmp_path), **env},
                          capture_output=True, text=True, timeout=120)
    found = re.search(r"faults=(\d+) eager=(\w+)", done.stdout)
    assert found, done.stdout + done.stderr
    return int(found.group(1)), found.group(2)


def _glibc() -> bool:
    try:
        os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        return False
    return True


@pytest.mark.skipif(not _glibc(), reason="the thresholds are glibc's")
def test_the_command_keeps_freed_memory_for_reuse(tmp_path: Path) -> None:
    faults, eager = _run(tmp_path)
    assert faults < 300  # (3,000 pages a round if trimmed)
    assert eager == "0"


def test_a_users_own_settings_are_left_alone(tmp_path: Path) -> None:
    faults, eager = _run(tmp_path, GLIBC_TUNABLES="glibc.malloc.trim_threshold=131072",
                         MIMALLOC_ARENA_EAGER_COMMIT="2")
    assert eager == "2"
    if _glibc():  # (their trim threshold applies: the memory goes back each round)
        assert faults > 10_000
