"""The layering contracts cover the whole ground: a new module in sqlengine/ must be listed in
.importlinter's ground contract (CI runs the contracts themselves with .ci/lint-imports)."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOORS = {"api", "query"}


def _contract(name: str) -> dict[str, list[str]]:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    section = config[f"importlinter:contract:{name}"]
    return {key: section[key].split() for key in section}


def test_every_ground_module_is_in_the_ground_contract() -> None:
    ground = set()
    for path in (ROOT / "sqlengine").iterdir():
        if path.suffix == ".py" and path.stem not in DOORS | {"__init__"}:
            ground.add(f"sqlengine.{path.stem}")
        elif path.is_dir() and (path / "__init__.py").exists():
            ground.add(f"sqlengine.{path.name}")
    assert sorted(ground) == sorted(_contract("ground")["source_modules"])


def test_the_ground_may_import_no_upper_layer() -> None:
    forbidden = set(_contract("ground")["forbidden_modules"])
    assert forbidden == {"sqlengine.optimizer", "sqlengine.runtime", "sqlengine.shell",
                         *(f"sqlengine.{d}" for d in DOORS)}
