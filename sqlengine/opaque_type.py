"""The Arrow extension type the opaque SQL types share (BITMAP: bitmap.py, VARIANT:
variant.py): a value held as its storage (bytes or text), with no parameters; and how their
columns are taken apart into, and made again from, that storage.

Operators and kernels work on the storage (``storage``; the evaluator passes a kernel an
extension column's storage and dresses its result), and build a column of a type holding
one, nested ones too, from storage values (``typed_array``) or from Python values a user's
function gave (``python_values``)."""

from __future__ import annotations

import contextlib
from typing import Any

import pyarrow as pa


class OpaqueType(pa.ExtensionType):
    """An extension type without parameters: subclasses set NAME and STORAGE, and say how a
    stored value reads in Python (``python``) and how a Python value is stored
    (``from_python``)."""

    NAME = ""
    STORAGE: pa.DataType = pa.binary()

    def __init__(self) -> None:
        super().__init__(self.STORAGE, self.NAME)

    @staticmethod
    def python(raw: Any) -> Any:
        """A stored value as Python reads it (``as_py``)."""
        return raw

    @staticmethod
    def from_python(value: Any) -> Any:
        """A Python value (a function's result) as stored.

        Raises:
            TypeError, ValueError: not a value of the type.
        """
        return value

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType,
                                  serialized: bytes) -> OpaqueType:
        return cls()

    def __arrow_ext_scalar_class__(self) -> type:
        return OpaqueScalar

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return type(self), ()

    def __hash__(self) -> int:  # (plan expressions, frozen dataclasses, hash their types)
        return hash(self.NAME)


class OpaqueScalar(pa.ExtensionScalar):
    """``as_py()``: the type's Python reading of the stored value (None for NULL)."""

    def as_py(self, **kwargs: Any) -> Any:
        raw = self.value.as_py() if self.value is not None else None
        return None if raw is None else self.type.python(raw)


def registered(t: OpaqueType) -> OpaqueType:
    """``t``, registered with Arrow (so IPC, parquet metadata and pickles know it)."""
    with contextlib.suppress(pa.ArrowKeyError):  # (registered already: a module reloaded)
        pa.register_extension_type(t)
    return t


def storage(arr: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """An extension column's (a BITMAP's, a VARIANT's) storage; other columns as they are."""
    t = arr.type
    if not isinstance(t, pa.ExtensionType):
        return arr
    if isinstance(arr, pa.ChunkedArray):
        return pa.chunked_array([c.storage for c in arr.chunks], t.storage_type)
    return arr.storage


def storage_type(t: pa.DataType) -> pa.DataType:
    """``t`` with each extension type (BITMAP, VARIANT), nested ones too, as its storage."""
    if isinstance(t, pa.ExtensionType):
        return t.storage_type
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(storage_type(t.value_type)))
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(storage_type(t.key_type)),
                       t.item_field.with_type(storage_type(t.item_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(storage_type(f.type)) for f in t])
    return t


def typed_array(values: object, t: pa.DataType, mask: object = None) -> pa.Array:
    """``pa.array(values, t, mask=mask)``, where an extension type's (nested ones too) values
    are its storage's (kept so by the operators)."""
    plain = storage_type(t)
    arr = pa.array(values, plain, mask=mask)
    return arr if plain == t else arr.cast(t)


def python_values(values: list[object], t: pa.DataType) -> pa.Array:
    """Python values (a function's results) as a column of type ``t``: a BITMAP's a
    ``pyroaring.BitMap``, a VARIANT's its JSON text, kept as their storage.

    Raises:
        TypeError, ValueError: a value that is none of the type's.
    """
    if not isinstance(t, OpaqueType):
        return pa.array(values, t)
    stored = [None if v is None else t.from_python(v) for v in values]
    return pa.ExtensionArray.from_storage(t, pa.array(stored, t.storage_type))
