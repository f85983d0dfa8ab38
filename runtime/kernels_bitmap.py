"""Kernels of the BITMAP functions (signatures in ``sqlengine.functions_bitmap``). A BITMAP
column reaches a kernel as its storage, the canonical Roaring bytes (sqlengine/bitmap.py);
a BITMAP result is returned as such bytes. Each value is read and written once by pyroaring
(CRoaring); the per-row work is the set operation itself."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import bitmap as B
from sqlengine.errors import ExecutionError

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def _build(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """BITMAP_BUILD(ARRAY<INT>): the array's values (NULL elements skipped) as a set."""
    arr = args[0]
    if pa.types.is_null(arr.type):
        return pa.nulls(len(arr), pa.binary())
    offsets = arr.offsets.to_numpy()
    if arr.offset:  # (a slice: offsets relative to the values' start)
        offsets = offsets - offsets[0]
    flat = arr.values.slice(int(arr.offsets[0].as_py()), int(offsets[-1]) if len(offsets)
                            else 0)
    valid = np.asarray(flat.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    values = np.asarray(pc.fill_null(flat, 0).to_numpy(zero_copy_only=False), dtype=np.int64)
    null = np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    out_values: list[bytes | None] = []
    for i in range(len(arr)):
        if null[i]:
            out_values.append(None)
            continue
        lo, hi = int(offsets[i]), int(offsets[i + 1])
        part = values[lo:hi][valid[lo:hi]]
        out_values.append(B.dump(B.new(part)))
    return pa.array(out_values, pa.binary())


def _load_all(arr: Array) -> list[object]:
    """Each value's set (None for NULL)."""
    return [None if raw is None else B.load(raw) for raw in arr.to_pylist()]


def _set_op(op: Callable[[object, object], object]) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a, b = (_load_all(x) if not pa.types.is_null(x.type) else [None] * len(x)
                for x in args)
        return pa.array([None if x is None or y is None else B.dump(op(x, y))
                         for x, y in zip(a, b)], pa.binary())

    return kernel


def _per_value(fn: Callable[[object], object], out_type: pa.DataType) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if pa.types.is_null(args[0].type):
            return pa.nulls(len(args[0]), out_type)
        return pa.array([None if v is None else fn(v) for v in _load_all(args[0])],
                        out_type)

    return kernel


def _to_array(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """BITMAP_TO_ARRAY: the values in unsigned order, as (signed) INTs: 4294967295 is -1."""
    if pa.types.is_null(args[0].type):
        return pa.nulls(len(args[0]), out)
    sets = _load_all(args[0])
    parts = [np.asarray(s.to_array(), dtype=np.uint32).view(np.int32) if s is not None
             else np.zeros(0, np.int32) for s in sets]
    lengths = np.array([len(p) for p in parts], dtype=np.int64)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int32)
    values = np.concatenate(parts) if parts else np.zeros(0, np.int32)
    mask = pa.array([s is None for s in sets], pa.bool_())
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, pa.int32()),
                                    type=out, mask=mask)


def _from_bytes(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """BITMAP_FROM_BYTES: a Roaring serialization (either cookie; trailing bytes ignored) as
    a BITMAP; bytes that are none fail, as in Flink."""
    raws = args[0].cast(pa.binary()).to_pylist() if not pa.types.is_null(args[0].type) \
        else [None] * len(args[0])
    values: list[bytes | None] = []
    for raw in raws:
        if raw is None:
            values.append(None)
            continue
        try:
            values.append(B.dump(B.load(raw)))
        except (ValueError, MemoryError, OverflowError):
            shown = raw[:16].hex() + ("..." if len(raw) > 16 else "")
            msg = f"BITMAP_FROM_BYTES: the bytes x'{shown}' are not a serialized bitmap"
            raise ExecutionError(msg) from None
    return pa.array(values, pa.binary())


KERNELS: dict[str, Kernel] = {
    "bitmap_build": _build,
    "bitmap_from_bytes": _from_bytes,
    "bitmap_and": _set_op(lambda x, y: x & y),
    "bitmap_andnot": _set_op(lambda x, y: x - y),
    "bitmap_or": _set_op(lambda x, y: x | y),
    "bitmap_xor": _set_op(lambda x, y: x ^ y),
    "bitmap_cardinality": _per_value(len, pa.int64()),
    # (the storage is the canonical serialization already)
    "bitmap_to_bytes": lambda args, lits, out: args[0].cast(pa.binary()),
    "bitmap_to_string": _per_value(B.text, pa.string()),
    "bitmap_to_array": _to_array,
}
