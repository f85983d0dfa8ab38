"""The shell's configuration: defaults from shell/sqlenginerc, then the user's file."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path


@dataclass
class ShellConfig:
    history_file: str | None = "~/.sqlengine_history"
    result_mode: str = "tableau"
    timing: bool = True
    style: str = "default"
    options: dict[str, str] = field(default_factory=dict)


def _parse(text: str, cfg: ShellConfig, source: str) -> None:
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if "=" not in line:
            msg = f"{source}:{no}: expected 'key = value', got {raw.strip()!r}"
            raise ValueError(msg)
        key, value = (p.strip() for p in line.split("=", 1))
        if key.startswith("set."):
            cfg.options[key[4:]] = value
        elif key == "history_file":
            cfg.history_file = None if value.lower() == "none" else value
        elif key == "result_mode":
            if value not in ("table", "changelog", "tableau"):
                msg = f"{source}:{no}: result_mode must be table, changelog or tableau"
                raise ValueError(msg)
            cfg.result_mode = value
        elif key == "timing":
            cfg.timing = value.lower() in ("true", "yes", "on", "1")
        elif key == "style":
            cfg.style = value
        else:
            msg = f"{source}:{no}: unknown key {key!r}"
            raise ValueError(msg)


def load_config(path: str | None = None) -> ShellConfig:
    """Defaults, then the file at ``path`` (or $SQLENGINE_CONFIG, or the user's config)."""
    cfg = ShellConfig()
    defaults = resources.files("sqlengine.shell").joinpath("sqlenginerc").read_text()
    _parse(defaults, cfg, "sqlenginerc")
    user = path or os.environ.get("SQLENGINE_CONFIG") or \
        str(Path("~/.config/sqlengine/config").expanduser())
    p = Path(user).expanduser()
    if p.is_file():
        _parse(p.read_text(), cfg, str(p))
    return cfg
