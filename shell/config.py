"""The shell's configuration: defaults from shell/config.toml, then the user's TOML file
(``--config``, $SQLENGINE_CONFIG, or config.toml in the platform's config directory)."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

MODES = ("table", "changelog", "tableau")


@dataclass
class ShellConfig:
    history_file: str | None = "~/.sqlengine_history"
    result_mode: str = "tableau"
    timing: bool = True
    style: str = "default"
    options: dict[str, str] = field(default_factory=dict)


def user_config_path() -> Path:
    """Where the user's configuration file is looked for (SQLENGINE_CONFIG wins)."""
    given = os.environ.get("SQLENGINE_CONFIG")
    if given:
        return Path(given).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("sqlengine")) / "config.toml"


def _apply(data: dict[str, object], cfg: ShellConfig, source: str) -> None:
    def bad(key: str, want: str) -> ValueError:
        return ValueError(f"{source}: {key!r} must be {want}, got {data[key]!r}")

    for key, value in data.items():
        if key == "history_file":
            if value is False:
                cfg.history_file = None
            elif isinstance(value, str):
                cfg.history_file = value
            else:
                raise bad(key, "a path or false")
        elif key == "result_mode":
            if value not in MODES:
                raise bad(key, "one of " + ", ".join(f'"{m}"' for m in MODES))
            cfg.result_mode = str(value)
        elif key == "timing":
            if not isinstance(value, bool):
                raise bad(key, "true or false")
            cfg.timing = value
        elif key == "style":
            if not isinstance(value, str):
                raise bad(key, "a Pygments style name")
            cfg.style = value
        elif key == "set":
            if not isinstance(value, dict) or not all(
                    isinstance(v, str | int | float | bool) and not isinstance(v, dict)
                    for v in value.values()):
                raise ValueError(f"{source}: [set] holds \"option\" = \"value\" pairs")
            cfg.options.update({k: str(v).lower() if isinstance(v, bool) else str(v)
                                for k, v in value.items()})
        else:
            raise ValueError(f"{source}: unknown key {key!r} (known: history_file, "
                             "result_mode, timing, style, [set])")


def _read(text: str, source: str) -> dict[str, object]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{source}: {e}") from None


def load_config(path: str | None = None) -> ShellConfig:
    """Defaults, then the file at ``path`` (or $SQLENGINE_CONFIG, or the user's config.toml).

    Raises:
        ValueError: naming the file, and the line and column or the key at fault.
    """
    cfg = ShellConfig()
    defaults = resources.files("sqlengine.shell").joinpath("config.toml").read_text()
    _apply(_read(defaults, "config.toml"), cfg, "config.toml")
    p = Path(path).expanduser() if path else user_config_path()
    if p.is_file():
        _apply(_read(p.read_text(encoding="utf-8"), str(p)), cfg, str(p))
    return cfg
