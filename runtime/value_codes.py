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

from sqlengine import types as T
from sqlengine.cast import own_elements
from sqlengine.errors import ExecutionError
from sqlengine.runtime.key_bytes import key_bytes

Array = pa.Array | pa.ChunkedArray


def value_codes(values: Array) -> np.ndarray:
    """An int64 code per value (>= 0), equal exactly for equal values; -1 for NULL. A ROW /
    ARRAY / MAP by its key bytes (runtime/key_bytes.py, which GROUP BY groups them by)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if len(values) == 0:
        return np.zeros(0, np.int64)
    if T.is_nested(values.type):
        if not T.groupable(values.type):
            raise ExecutionError(f"values of type {T.type_name(values.type)} cannot be "
                                 "compared")
        values = key_bytes([values], [None], pa.binary())
    enc = pc.dictionary_encode(values, null_encoding="mask")
    codes = pc.fill_null(enc.indices.cast(pa.int64()), -1).to_numpy(zero_copy_only=False)
    return np.asarray(codes, dtype=np.int64)


def value_ranks(values: Array) -> pa.Array:
    """Dense ranks (>= 1) in the order Flink sorts values, NULL where the value is NULL: what
    lets ORDER BY sort ARRAY values (and ROWs holding them), which Arrow cannot. ARRAYs order
    element by element, a shorter one first where it is the other's start; a NULL element (or
    field) below every value (PyFlink 2.3's order)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    ranks = _ranks(values)
    mask = values.is_null().to_numpy(zero_copy_only=False) if values.null_count else None
    return pa.array(ranks, pa.int64(), mask=mask)


def _ranks(values: pa.Array) -> np.ndarray:
    """Dense ranks from 1, a NULL ranked 0."""
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int64)
    t = values.type
    if pa.types.is_struct(t):
        fields = [_ranks(pc.struct_field(values, [i])) for i in range(t.num_fields)]
        ranks = _dense_rank(fields, n)
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        if pa.types.is_fixed_size_list(t):
            values = values.cast(pa.list_(t.value_type))
        offsets, kids = own_elements(values)
        elements = _ranks(kids[0]).astype(">u8")  # (big-endian: bytes order as the numbers)
        raw = pa.FixedSizeBinaryArray.from_buffers(
            pa.binary(8), len(elements), [None, pa.py_buffer(elements.tobytes())])
        lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int64()).cast(pa.int32()),
                                         raw.cast(pa.binary()))
        keys = pc.binary_join(lists, b"")
        ranks = np.asarray(pc.rank(keys, sort_keys="ascending", tiebreaker="dense")
                           .to_numpy(zero_copy_only=False), dtype=np.int64)
    elif pa.types.is_map(t):
        raise ExecutionError(f"values of type {T.type_name(t)} cannot be ordered")
    else:
        # (a NULL's rank, after the values', is set to 0 below)
        ranks = np.asarray(pc.rank(values, sort_keys="ascending", tiebreaker="dense")
                           .to_numpy(zero_copy_only=False), dtype=np.int64)
    if values.null_count:
        ranks = np.where(values.is_null().to_numpy(zero_copy_only=False), 0, ranks)
    return ranks


def _dense_rank(parts: list[np.ndarray], n: int) -> np.ndarray:
    """Dense ranks from 1 of the tuples (parts[0][i], parts[1][i], ...) in their order."""
    if not parts:
        return np.ones(n, np.int64)
    _, inverse = np.unique(np.stack(parts, axis=1), axis=0, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64) + 1
