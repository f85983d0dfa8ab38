"""``python -m sqlengine``: the ``sqlengine`` command."""

from __future__ import annotations

from sqlengine.shell.launch import entry

if __name__ == "__main__":
    entry()
