"""Packaging: one import namespace. Every package folder is installed under `sqlengine.`."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["tool"]["setuptools"]


def test_every_package_folder_is_installed_under_sqlengine() -> None:
    config = _config()
    dirs = {name: Path(folder) for name, folder in config["package-dir"].items()}
    dirs.setdefault("sqlengine", Path("sqlengine"))
    found = set()
    for name, folder in dirs.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *rel.parts]))
    assert sorted(found) == sorted(config["packages"])
    assert all(p == "sqlengine" or p.startswith("sqlengine.") for p in config["packages"])
