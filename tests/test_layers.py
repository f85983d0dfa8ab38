"""The layering contracts cover the whole ground: a new module in sqlengine/ must be listed in
.importlinter's ground contract (CI runs the contracts themselves with .ci/lint-imports)."""

from __future__ import annotations

import configparser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOORS = {"api", "query", "job", "dbapi"}


def _contract(name: str) -> dict[str, list[str]]:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    section = config[f"importlinter:contract:{name}"]
    return {key: section[key].split() for key in section}


def test_every_ground_module_is_in_the_ground_contract() -> None:
    ground = set()
    for path in (ROOT / "sqlengine").iterdir():
        if path.suffix == ".py" and path.stem not in DOORS | {"__init__", "__main__"}:
            ground.add(f"sqlengine.{path.stem}")
        elif path.is_dir() and (path / "__init__.py").exists():
            ground.add(f"sqlengine.{path.name}")
    assert sorted(ground) == sorted(_contract("ground")["source_modules"])


def test_the_ground_may_import_no_upper_layer() -> None:
    forbidden = set(_contract("ground")["forbidden_modules"])
    assert forbidden == {"sqlengine.optimizer", "sqlengine.runtime", "sqlengine.shell",
                         *(f"sqlengine.{d}" for d in DOORS)}


def test_import_sqlengine_loads_no_engine() -> None:
    """The door is loaded on first use: importing the package or its errors stays light."""
    import subprocess
    import sys

    code = ("import sys, sqlengine; from sqlengine.errors import ParseError; "
            "print(sorted(m for m in sys.modules if m.startswith(('sqlengine.optimizer', "
            "'sqlengine.runtime', 'sqlengine.api', 'pyspark'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    code = "import sqlengine; print(sqlengine.connect().sql('SELECT 2 AS x').collect()['x'])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert "2" in out
