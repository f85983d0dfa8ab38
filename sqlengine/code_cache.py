"""Compiled code of generated dataclass methods, kept between runs.

Python builds a dataclass's ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
``__setattr__`` and ``__delattr__`` by compiling generated source text (``exec`` of a string in
``dataclasses``). sqlengine's plan, spec and graph objects are ~160 frozen dataclasses: ~850
texts compiled at every start, ~0.1 s of a ~0.5 s ``sqlengine run``. :func:`install` has
``dataclasses`` execute a code object compiled once and kept (``marshal``) in the user's cache
directory, looked up by the exact source text: the same text gives the same code, so the
classes are the ones ``dataclasses`` would build; a text not seen before is compiled as
``exec`` would compile it (no inherited ``__future__`` flags: ``dataclasses`` has none) and
added to the file when the process exits. The file is named by the interpreter's bytecode
magic number; an unreadable or foreign file is ignored and rewritten. Each code is kept
marshalled and unmarshalled when first used: reading the whole file takes ~1 ms.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import dataclasses
import importlib.util
import marshal
import os
import sys
import types
from typing import Any

MAX_ENTRIES = 8192  # (texts kept in the file: beyond it, new texts are compiled and not kept)

# source text -> its code, marshalled (as read from the file: unmarshalled when first used)
_codes: dict[str, bytes] = {}
_added = False  # (a text compiled in this process: the file is written again at exit)
_path: str | None = None


def _cached_exec(source: Any, globals: Any = None, locals: Any = None, /, **kwargs: Any) -> None:
    if kwargs or not isinstance(source, str):
        return builtins.exec(source, globals, locals, **kwargs)
    kept = _codes.get(source)
    if kept is not None:
        try:
            code = marshal.loads(kept)
        except (EOFError, ValueError, TypeError):
            code = None
        if isinstance(code, types.CodeType):
            return builtins.exec(code, globals, locals)
    code = compile(source, "<string>", "exec", dont_inherit=True)
    global _added
    if len(_codes) < MAX_ENTRIES or source in _codes:
        _codes[source] = marshal.dumps(code)
        _added = True
    return builtins.exec(code, globals, locals)


def _file(directory: str) -> str:
    magic = importlib.util.MAGIC_NUMBER.hex()
    return os.path.join(directory, f"dataclass-code-{sys.implementation.cache_tag}-{magic}.marshal")


def _load(path: str) -> dict[str, bytes]:
    try:
        with open(path, "rb") as f:
            loaded = marshal.loads(f.read())  # (marshal.load(f) reads piecemeal: ~30x slower)
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {k: v for k, v in loaded.items() if isinstance(k, str) and isinstance(v, bytes)}


def _save() -> None:
    global _added
    if not _added or _path is None:
        return
    tmp = f"{_path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(marshal.dumps(_codes))
        os.replace(tmp, _path)  # (atomic: a process starting meanwhile reads the old or the new)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    _added = False


def install(directory: str | None) -> None:
    """Serve ``dataclasses``' compilations from the cache file in ``directory`` (None: in
    memory only)."""
    global _path
    if getattr(dataclasses, "exec", None) is _cached_exec:
        return
    if directory is not None:
        _path = _file(directory)
        _codes.update(_load(_path))
        atexit.register(_save)
    dataclasses.exec = _cached_exec  # type: ignore[attr-defined]  # (shadows the builtin there)


def uninstall() -> None:
    """Let ``dataclasses`` compile with the builtin ``exec`` again (tests)."""
    if getattr(dataclasses, "exec", None) is _cached_exec:
        del dataclasses.exec  # type: ignore[attr-defined]
