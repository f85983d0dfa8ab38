"""Safe mode, for SQL from people you do not trust (DuckDB's ``enable_external_access`` and
``allowed_directories``).

``sqlengine.connect(safe=True, allowed_directories=[...])`` or ``sqlengine --safe --allow DIR``:
then a filesystem table's path must lie inside an allowed directory once every symlink and
``..`` is resolved (no ``/proc``, no URL scheme), the socket connector is refused, and the
files a table reads or writes are checked again as they are opened (a symlink placed inside an
allowed directory cannot lead out of it). A table created in a safe session carries its allowed
directories in a hidden option, so the runtime (other processes too) checks against them. Safe
mode is set when the session is made and cannot be switched off from SQL.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlengine.errors import ConnectorError

DIRS_OPTION = "$safe-directories"  # a table's allowed directories, os.pathsep-joined
REFUSED_CONNECTORS = {"socket": "it opens network connections"}


def normalized(directories: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """The allowed directories as real paths (each must exist and be a directory)."""
    out = []
    for d in directories:
        real = os.path.realpath(os.path.expanduser(d))
        if not os.path.isdir(real):
            msg = f"safe mode: allowed directory {d!r} is not a directory"
            raise ConnectorError(msg)
        out.append(real)
    return tuple(out)


def inside(path: str | Path, allowed: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(real == d or real.startswith(d.rstrip(os.sep) + os.sep) for d in allowed)


def check_path(table: str, path: str, allowed: tuple[str, ...]) -> None:
    """Refuse a table path outside the allowed directories (or a URL)."""
    if "://" in path or path.startswith("file:"):
        msg = (f"table {table!r}: path {path!r} is a URL; safe mode reads and writes local "
               "files in the allowed directories only")
        raise ConnectorError(msg)
    if not allowed or not inside(path, allowed):
        where = ", ".join(allowed) if allowed else "none"
        msg = (f"table {table!r}: path {path!r} ({os.path.realpath(path)}) is outside the "
               f"directories safe mode allows ({where})")
        raise ConnectorError(msg)


def check_file(table: str, f: str | Path, options: dict[str, str]) -> None:
    """At run time: a file a safe session's table opens must still lie inside its directories
    (a symlink in an allowed directory may point anywhere)."""
    dirs = options.get(DIRS_OPTION)
    if dirs is None:
        return
    allowed = tuple(d for d in dirs.split(os.pathsep) if d)
    if not inside(f, allowed):
        msg = (f"table {table!r}: file {str(f)!r} leads to {os.path.realpath(f)}, outside "
               "the directories safe mode allows")
        raise ConnectorError(msg)


# Options naming a directory the engine writes to: in safe mode it must be an allowed one.
DIRECTORY_OPTIONS = ("io.tmp.dirs", "execution.checkpoint-location",
                     "execution.checkpointing.dir", "execution.state-recovery.path")


def check_directory_option(key: str, value: str, allowed: tuple[str, ...]) -> None:
    """Refuse ``SET key = value`` in safe mode when ``value`` lies outside the allowed
    directories (spill files and checkpoints would be written there)."""
    if "://" in value or value.startswith("file:") or not allowed or not inside(value, allowed):
        where = ", ".join(allowed) if allowed else "none"
        msg = (f"option {key!r}: directory {value!r} is outside the directories safe mode "
               f"allows ({where})")
        raise ConnectorError(msg)
