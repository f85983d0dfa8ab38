"""Signatures of Flink's BITMAP functions (sqlengine/bitmap.py; kernels in
``runtime.kernels_bitmap``; the aggregates in ``bitmap_aggregates``): BITMAP_BUILD,
BITMAP_FROM_BYTES, BITMAP_TO_ARRAY / _TO_BYTES / _TO_STRING, BITMAP_CARDINALITY and the set
operations BITMAP_AND / _ANDNOT / _OR / _XOR. Each is NULL where an argument is NULL."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.bitmap import BITMAP, is_bitmap
from sqlengine.functions import Inference, Signature, _err, register

_INT_ARRAY = T.array_of(T.INT)


def small_integer(t: pa.DataType) -> bool:
    """TINYINT, SMALLINT or INT: what a bitmap holds (Flink's INTEGER family, BIGINT not)."""
    return T.is_integer(t) and t.bit_width <= 32


def _build(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if t == T.NULL or (pa.types.is_list(t) and (small_integer(t.value_type) or
                                                  t.value_type == T.NULL)):
        return BITMAP, [_INT_ARRAY]
    raise _err("bitmap_build", types, "an ARRAY<INT> (of TINYINT, SMALLINT or INT values)")


def _of_bitmaps(name: str, result: pa.DataType) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        if not all(is_bitmap(t) or t == T.NULL for t in types):
            raise _err(name, types, "BITMAP arguments")
        return result, [BITMAP] * len(types)

    return infer


def _from_bytes(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not (pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t) or t == T.NULL):
        raise _err("bitmap_from_bytes", types, "a BYTES argument (BINARY / VARBINARY)")
    return BITMAP, [pa.binary()]


register(Signature("bitmap_build", 1, 1, _build))
register(Signature("bitmap_from_bytes", 1, 1, _from_bytes))
for _name in ("bitmap_and", "bitmap_andnot", "bitmap_or", "bitmap_xor"):
    register(Signature(_name, 2, 2, _of_bitmaps(_name, BITMAP)))
register(Signature("bitmap_cardinality", 1, 1, _of_bitmaps("bitmap_cardinality", T.BIGINT)))
register(Signature("bitmap_to_array", 1, 1, _of_bitmaps("bitmap_to_array", _INT_ARRAY)))
register(Signature("bitmap_to_bytes", 1, 1, _of_bitmaps("bitmap_to_bytes", pa.binary())))
register(Signature("bitmap_to_string", 1, 1, _of_bitmaps("bitmap_to_string", T.STRING)))
