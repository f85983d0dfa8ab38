"""Flink's BITMAP type (FLIP-556, Flink 2.3): a set of 32-bit integers, a RoaringBitmap.

A BITMAP value is held in Arrow as an extension type over ``binary``: the set's portable
Roaring serialization after ``runOptimize`` (Flink's BITMAP_TO_BYTES, byte for byte). That
form is canonical (one set, one byte string), so equality, GROUP BY, DISTINCT and joins on a
bitmap compare its bytes. Values are read as unsigned: -1 is 4294967295, and sorts last.

As Flink: a BITMAP casts only to character strings (``{1,2,3}``, cut after 524,288
characters with ``...``, as RoaringBitmap's toString); nothing but NULL casts to BITMAP; no
file format or external system holds one (print and blackhole sinks do). pyroaring (CRoaring)
does the set work; it is imported when a bitmap is first made or read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa

from sqlengine.opaque_type import OpaqueType, registered, storage

if TYPE_CHECKING:
    from pyroaring import BitMap

NAME = "sqlengine.bitmap"
_TEXT_LIMIT = 524288  # (RoaringBitmap.toString stops past this many characters)


class BitmapType(OpaqueType):
    """BITMAP: the Roaring serialization of a set of unsigned 32-bit integers; ``as_py()``
    is a ``pyroaring.BitMap``."""

    NAME = NAME
    STORAGE = pa.binary()

    @staticmethod
    def python(raw: Any) -> Any:
        return load(raw)

    @staticmethod
    def from_python(value: Any) -> Any:
        if isinstance(value, bytes | bytearray | memoryview):
            return dump(load(bytes(value)))
        if isinstance(value, _roaring()):
            return dump(value)
        msg = f"a BITMAP value is a pyroaring.BitMap, got {type(value).__name__}"
        raise TypeError(msg)


BITMAP = registered(BitmapType())


def is_bitmap(t: pa.DataType) -> bool:
    return isinstance(t, BitmapType)


def wrap(arr: pa.Array) -> pa.Array:
    """Bytes (canonical Roaring serializations) as a BITMAP column."""
    if is_bitmap(arr.type):
        return arr
    return pa.ExtensionArray.from_storage(BITMAP, arr.cast(pa.binary()))


# -- values ---------------------------------------------------------------------------------

def _roaring() -> type[BitMap]:
    from pyroaring import BitMap

    return BitMap


def new(values: object = ()) -> BitMap:
    """A BitMap of ``values`` (ints read as unsigned 32-bit: -1 is 4294967295)."""
    bm = _roaring()()
    if isinstance(values, np.ndarray):
        if len(values):
            bm.update(values.astype(np.int64).astype(np.uint32))
        return bm
    for v in values:  # type: ignore[attr-defined]
        bm.add(int(v) & 0xFFFFFFFF)
    return bm


def dump(bm: BitMap) -> bytes:
    """The canonical bytes of a set: its values added one by one (array and bitmap containers
    only), then run-optimized, serialized (as Flink's BITMAP_BUILD and BITMAP_TO_BYTES). A set
    holding run containers already (made from a range, or read from bytes) is made again
    from its values: run containers where an array is as small would make equal sets'
    bytes differ."""
    if bm.get_statistics()["n_run_containers"]:
        fresh = _roaring()()
        fresh.update(bm.to_array())
        bm = fresh
    else:
        bm = bm.copy()
    bm.run_optimize()
    return bm.serialize()


def load(raw: bytes) -> BitMap:
    """The set a serialization holds (either Roaring cookie; bytes past it ignored).

    Raises:
        ValueError: not a Roaring serialization.
    """
    return _roaring().deserialize(raw)


def text(bm: BitMap) -> str:
    """RoaringBitmap.toString: ``{1,2,3}`` in unsigned order, ``...`` once past 524,288
    characters."""
    full = "{" + ",".join(map(str, np.asarray(bm.to_array(), dtype=np.uint32).tolist()))
    cut = full.find(",", _TEXT_LIMIT)  # (the first comma that takes the text past the limit)
    return full + "}" if cut < 0 else full[:cut + 1] + "...}"


def texts(arr: pa.Array) -> pa.Array:
    """A BITMAP column as strings (``{1,2,3}``; NULL stays NULL)."""
    raw = storage(arr).to_pylist()
    return pa.array([None if r is None else text(load(r)) for r in raw], pa.string())
