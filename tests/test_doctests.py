"""The examples in docstrings run as tests (each module that has one is listed by discovery)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import sqlengine


def _modules_with_examples() -> list[str]:
    names = []
    roots = [sqlengine] + [importlib.import_module(f"sqlengine.{n}")
                           for n in ("optimizer", "runtime", "shell")]
    infos = [info for root in roots
             for info in pkgutil.walk_packages(root.__path__, root.__name__ + ".")]
    for info in infos:
        if ".spark" in info.name or info.name.endswith("__main__"):
            continue
        spec = importlib.util.find_spec(info.name)
        origin = spec.origin if spec is not None else None
        if origin and origin.endswith(".py"):
            with open(origin, encoding="utf-8") as f:
                if ">>> " in f.read():
                    names.append(info.name)
    return sorted(set(names))


MODULES = _modules_with_examples()


def test_examples_are_found() -> None:
    assert any(name.startswith("sqlengine.optimizer.rules.") for name in MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
