"""The user's own cache directory for sqlengine (``$XDG_CACHE_HOME/sqlengine``, else
``~/.cache/sqlengine``), created private to the user.

Rather than the shared temporary directory, whose files another user could plant: what is kept
here (lark's parse tables, compiled dataclass code) is loaded as code.
"""

from __future__ import annotations

import os


def user_cache_directory() -> str | None:
    """The directory, created if missing; None when it cannot be created or written."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "sqlengine")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return None
    if not os.access(directory, os.W_OK):
        return None
    return directory
