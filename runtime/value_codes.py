"""One integer per value of any type, equal for equal values: what lets ROW, ARRAY and MAP
values be partitioned, deduplicated and found among elements, where Arrow's hash kernels
(dictionary_encode, equal, is_in) take only flat types.

Equality here is whole-value equality, as Flink compares such values when it groups or looks
them up: a NULL field, element or entry value is the same as a NULL one, NaN the same as NaN;
a MAP's entries compare whatever their order. A NULL value itself is code -1.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import own_elements

Array = pa.Array | pa.ChunkedArray


def value_codes(values: Array) -> np.ndarray:
    """An int64 code per value (>= 0), equal exactly for equal values; -1 for NULL."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int64)
    t = values.type
    if pa.types.is_struct(t):
        codes = _combined([value_codes(pc.struct_field(values, [i]))
                           for i in range(t.num_fields)], n)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        codes = _sequence_codes(values)
    elif pa.types.is_fixed_size_list(t):
        codes = _sequence_codes(values.cast(pa.list_(t.value_type)))
    else:
        enc = pc.dictionary_encode(values, null_encoding="mask")
        codes = pc.fill_null(enc.indices.cast(pa.int64()), -1).to_numpy(zero_copy_only=False)
        return np.asarray(codes, dtype=np.int64)
    if values.null_count:
        codes = np.where(values.is_null().to_numpy(zero_copy_only=False), -1, codes)
    return codes


def _combined(parts: list[np.ndarray], n: int) -> np.ndarray:
    """Dense codes of the tuples (parts[0][i], parts[1][i], ...)."""
    if not parts:
        return np.zeros(n, np.int64)
    _, inverse = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64)


def _sequence_codes(values: pa.Array) -> np.ndarray:
    """Codes of LIST values by their elements' codes in order (a MAP's entries sorted by
    key first): each row's codes as bytes, joined, then encoded."""
    offsets, kids = own_elements(values)
    if pa.types.is_map(values.type):
        keys, items = value_codes(kids[0]), value_codes(kids[1])
        row = np.repeat(np.arange(len(values), dtype=np.int64), np.diff(offsets))
        order = np.lexsort((items, keys, row))
        elements = _combined([keys[order], items[order]], len(order))
    else:
        elements = value_codes(kids[0])
    raw = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(8), len(elements), [None, pa.py_buffer(elements.astype(np.int64).tobytes())])
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int64()).cast(pa.int32()),
                                     raw.cast(pa.binary()))
    keys = pc.binary_join(lists, b"")
    enc = pc.dictionary_encode(keys)
    return np.asarray(enc.indices.cast(pa.int64()).to_numpy(zero_copy_only=False),
                      dtype=np.int64)
