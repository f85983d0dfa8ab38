"""The Arrow extension type the opaque SQL types share (BITMAP: bitmap.py, VARIANT:
variant.py): a value held as its storage (bytes or text), with no parameters; its Python
value given by the type's scalar class."""

from __future__ import annotations

import pyarrow as pa


class OpaqueType(pa.ExtensionType):
    """An extension type without parameters: subclasses set NAME, STORAGE and SCALAR."""

    NAME = ""
    STORAGE: pa.DataType = pa.binary()
    SCALAR: type = pa.ExtensionScalar

    def __init__(self) -> None:
        super().__init__(self.STORAGE, self.NAME)

    def __arrow_ext_serialize__(self) -> bytes:
        return b""

    @classmethod
    def __arrow_ext_deserialize__(cls, storage_type: pa.DataType,
                                  serialized: bytes) -> OpaqueType:
        return cls()

    def __arrow_ext_scalar_class__(self) -> type:
        return self.SCALAR

    def __reduce__(self) -> tuple[type, tuple[()]]:
        return type(self), ()

    def __hash__(self) -> int:  # (plan expressions, frozen dataclasses, hash their types)
        return hash(self.NAME)
