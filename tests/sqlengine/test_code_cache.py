"""The compiled dataclass code kept between runs (sqlengine/code_cache.py)."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sqlengine import code_cache


def _run(code: str, cache: Path) -> str:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


_COUNT_COMPILES = """
import sqlengine
from sqlengine import code_cache
calls = []
real = compile
def counting(*a, **k):
    calls.append(a[0])
    return real(*a, **k)
code_cache.compile = counting
import sqlengine.plan.nodes, sqlengine.optimizer.specs
print(len(calls))
"""


def test_a_second_process_compiles_no_dataclass_method(tmp_path: Path) -> None:
    first = int(_run(_COUNT_COMPILES, tmp_path))
    assert first > 100  # (the plan's and specs' methods, compiled and kept at exit)
    files = list((tmp_path / "sqlengine").glob("dataclass-code-*.marshal"))
    assert len(files) == 1
    assert int(_run(_COUNT_COMPILES, tmp_path)) == 0


def test_an_unreadable_cache_file_is_ignored_and_rewritten(tmp_path: Path) -> None:
    _run("import sqlengine.plan.nodes", tmp_path)
    (path,) = (tmp_path / "sqlengine").glob("dataclass-code-*.marshal")
    path.write_bytes(b"\x00garbage" * 10)
    assert int(_run(_COUNT_COMPILES, tmp_path)) > 100
    assert int(_run(_COUNT_COMPILES, tmp_path)) == 0
    path.write_bytes(b"")  # (an empty file: the same)
    assert int(_run(_COUNT_COMPILES, tmp_path)) > 100


def _define():  # type: ignore[no-untyped-def]
    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: tuple[int, ...] = ()
        tags: list[str] = dataclasses.field(default_factory=list, compare=False)

    @dataclasses.dataclass(frozen=True, kw_only=True, order=True)
    class Named:
        name: str
        rank: int = 0

    return Point, Named


def test_classes_built_from_kept_code_behave_as_compiled_ones() -> None:
    code_cache.uninstall()
    try:
        plain_point, plain_named = _define()
    finally:
        code_cache.install(None)
    for _ in range(2):  # (the first compiles and keeps, the second takes the kept code)
        point, named = _define()
        p = point(1, (2, 3))
        assert p == point(1, (2, 3), ["other"]) and p != point(2)
        assert hash(p) == hash(point(1, (2, 3)))
        assert repr(p) == repr(plain_point(1, (2, 3)))
        assert point(5).tags == [] and point(5).tags is not point(5).tags
        with pytest.raises(dataclasses.FrozenInstanceError):
            p.x = 2  # type: ignore[misc]
        with pytest.raises(TypeError):
            named("a")  # type: ignore[misc]  # (keyword-only)
        assert named(name="a", rank=2) > named(name="a", rank=1)
        assert point.__init__.__annotations__ == plain_point.__init__.__annotations__
        assert named.__init__.__annotations__ == plain_named.__init__.__annotations__
