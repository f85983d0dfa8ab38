"""The ROW value a Python function receives, as PyFlink's ``Row``.

PyFlink passes a ROW argument as a Row: a tuple of the field values that also answers to the
field names, ``r[0]``, ``r["name"]`` and ``r.name``; iterating it gives the values. (sqlengine
passed a dict, on which ``r[0]`` and ``r.name`` failed and ``a, b = r`` gave the names.)
A function may also return one for a ROW result: ``Row(a=1, b="x")`` or ``Row(1, "x")``.
"""

from __future__ import annotations

import functools
from typing import Any


class Row(tuple):
    """A ROW value: its fields by position (``r[0]``), by name (``r["a"]``, ``r.a``);
    iterating gives the values, ``as_dict()`` the fields by name."""

    __slots__ = ()
    _names: tuple[str, ...] = ()
    _index: dict[str, int] = {}  # (each class of field names its own; _named)

    def __new__(cls, *values: Any, **fields: Any) -> Row:
        if values and fields:
            msg = "Row takes its values by position or by name, not both"
            raise TypeError(msg)
        if fields:
            return of(tuple(fields), tuple(fields.values()))
        return tuple.__new__(cls, values)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            at = self._index.get(key)
            if at is None:
                raise KeyError(key)
            return tuple.__getitem__(self, at)
        return tuple.__getitem__(self, key)

    def __getattr__(self, name: str) -> Any:
        at = type(self)._index.get(name)
        if at is None:
            raise AttributeError(f"Row has no field {name!r} (its fields: "
                                 f"{', '.join(self._names) or 'none named'})")
        return tuple.__getitem__(self, at)

    def as_dict(self, recursive: bool = False) -> dict[str, Any]:
        """The fields by name (``recursive``: nested Rows too), as PyFlink's ``as_dict``."""
        if not self._names:
            msg = "a Row of unnamed values has no dict"
            raise TypeError(msg)
        if not recursive:
            return dict(zip(self._names, self))
        return {n: _plain(v) for n, v in zip(self._names, self)}

    def __repr__(self) -> str:
        if self._names:
            return "Row(" + ", ".join(f"{n}={v!r}" for n, v in zip(self._names, self)) + ")"
        return "Row(" + ", ".join(repr(v) for v in self) + ")"

    def __reduce__(self) -> tuple[Any, ...]:  # (the class is made per field names)
        return of, (self._names, tuple(self))


def _plain(v: Any) -> Any:
    if isinstance(v, Row) and v._names:
        return v.as_dict(recursive=True)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


@functools.lru_cache(maxsize=1024)
def _named(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"__slots__": (), "_names": names,
                                "_index": {n: i for i, n in enumerate(names)}})


def of(names: tuple[str, ...], values: tuple[Any, ...]) -> Row:
    """A Row of ``values`` named ``names``."""
    return tuple.__new__(_named(names), values)
