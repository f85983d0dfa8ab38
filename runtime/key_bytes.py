"""ROW and ARRAY values as BINARY group keys, and back: what lets GROUP BY, DISTINCT and the
set operations group by them (sqlengine/binder.py puts ``key_bytes`` under such a key and
``key_value`` over the grouped rows), where Arrow's hash aggregation takes no nested key.

The bytes are the value's, exactly and the same in every batch and process: a flag (0 for
NULL, 1 for a value), then the value: a fixed-width value's 8 (16 for a DECIMAL) bytes, a
string's length and bytes, a ROW's fields in order, an ARRAY's element count and elements, a
MAP's entries in the order of their keys' bytes. Equal values give equal bytes: a NULL field
or element is the same as a NULL one, NaN as NaN and -0.0 as 0.0, as Flink compares the
values it groups by.
"""

from __future__ import annotations

import decimal
import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import own_elements

Array = pa.Array | pa.ChunkedArray


def key_bytes(args: list[Array], lits: list[object], out: pa.DataType) -> pa.Array:
    """The bytes of each value; NULL for NULL (one group; not counted by COUNT(DISTINCT))."""
    values = args[0]
    keyed = _bytes(values)
    if values.null_count:
        keyed = pc.if_else(values.is_valid(), keyed, pa.scalar(None, pa.binary()))
    return keyed


def key_value(args: list[Array], lits: list[object], out: pa.DataType) -> pa.Array:
    from sqlengine.runtime.kernels_text import per_distinct

    return per_distinct(args[0], lambda b: _decode(b, 0, out)[0], out)


KERNELS = {"key_bytes": key_bytes, "key_value": key_value}


def _fixed(raw: bytes, width: int, n: int) -> pa.Array:
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), n,
                                                [None, pa.py_buffer(raw)]).cast(pa.binary())


def _count(counts: np.ndarray) -> pa.Array:
    return _fixed(counts.astype("<i4").tobytes(), 4, len(counts))


def _bytes(values: Array) -> pa.Array:
    """Each value's bytes (never NULL)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    t = values.type
    if n == 0:
        return pa.array([], pa.binary())
    if pa.types.is_struct(t):
        parts = [_bytes(pc.struct_field(values, [i])) for i in range(t.num_fields)]
        body = pc.binary_join_element_wise(*parts, b"") if parts else \
            pa.array([b""] * n, pa.binary())
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or pa.types.is_map(t):
        if pa.types.is_fixed_size_list(t):
            values = values.cast(pa.list_(t.value_type))
        offsets, kids = own_elements(values)
        if pa.types.is_map(t):
            keys, items = _bytes(kids[0]), _bytes(kids[1])
            entries = pc.binary_join_element_wise(keys, items, b"")
            row = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
            order = pc.sort_indices(pa.table({"r": row, "k": keys}),
                                    sort_keys=[("r", "ascending"), ("k", "ascending")])
            elements = entries.take(order)
        else:
            elements = _bytes(kids[0])
        lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int64()).cast(pa.int32()),
                                         elements)
        body = pc.binary_join_element_wise(_count(np.diff(offsets)),
                                           pc.binary_join(lists, b""), b"")
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
            pa.types.is_large_binary(t):
        raw = values.cast(pa.binary()).fill_null(b"")
        lengths = np.asarray(pc.binary_length(raw).to_numpy(zero_copy_only=False))
        body = pc.binary_join_element_wise(_count(lengths), raw, b"")
    elif pa.types.is_boolean(t):
        v = np.asarray(values.fill_null(False).to_numpy(zero_copy_only=False), dtype=np.uint8)
        body = _fixed(v.tobytes(), 1, n)
    elif pa.types.is_floating(t):
        v = np.asarray(values.cast(pa.float64()).fill_null(0.0).to_numpy(zero_copy_only=False),
                       dtype=np.float64) + 0.0  # (-0.0 as 0.0)
        v = np.where(np.isnan(v), np.nan, v)  # (one NaN)
        body = _fixed(v.astype("<f8").tobytes(), 8, n)
    elif pa.types.is_decimal128(t):
        body = values.view(pa.binary(16)).fill_null(b"\x00" * 16).cast(pa.binary())
    elif pa.types.is_integer(t) or pa.types.is_temporal(t):
        width = getattr(t, "bit_width", 64)
        ints = values if pa.types.is_integer(t) else values.view(
            pa.int32() if width == 32 else pa.int64())
        v = np.asarray(ints.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False),
                       dtype=np.int64)
        body = _fixed(v.astype("<i8").tobytes(), 8, n)
    else:  # (see sqlengine.types.groupable: no other type comes here)
        raise TypeError(f"no key bytes for {t}")
    one = pa.array([b"\x01"] * n, pa.binary())
    keyed = pc.binary_join_element_wise(one, body, b"")
    if values.null_count:
        keyed = pc.if_else(values.is_valid(), keyed, pa.scalar(b"\x00", pa.binary()))
    return keyed


def _decode(b: bytes, pos: int, t: pa.DataType) -> tuple[object, int]:
    """The value whose bytes start at ``pos`` (a Python value pyarrow builds ``t`` from), and
    where the next one starts."""
    flag = b[pos]
    pos += 1
    if flag == 0:
        return None, pos
    if pa.types.is_struct(t):
        row = {}
        for f in t:
            row[f.name], pos = _decode(b, pos, f.type)
        return row, pos
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t) \
            or pa.types.is_map(t):
        count = int.from_bytes(b[pos:pos + 4], "little", signed=True)
        pos += 4
        out: list[object] = []
        for _ in range(count):
            if pa.types.is_map(t):
                k, pos = _decode(b, pos, t.key_type)
                v, pos = _decode(b, pos, t.item_type)
                out.append((k, v))
            else:
                v, pos = _decode(b, pos, t.value_type)
                out.append(v)
        return out, pos
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or \
            pa.types.is_large_binary(t):
        length = int.from_bytes(b[pos:pos + 4], "little", signed=True)
        raw = b[pos + 4:pos + 4 + length]
        text = raw if pa.types.is_binary(t) or pa.types.is_large_binary(t) else raw.decode()
        return text, pos + 4 + length
    if pa.types.is_boolean(t):
        return b[pos] != 0, pos + 1
    if pa.types.is_floating(t):
        return struct.unpack("<d", b[pos:pos + 8])[0], pos + 8
    if pa.types.is_decimal128(t):
        unscaled = int.from_bytes(b[pos:pos + 16], "little", signed=True)
        return decimal.Decimal(unscaled).scaleb(-t.scale), pos + 16
    if pa.types.is_integer(t) or pa.types.is_temporal(t):
        # (a time as the integer Arrow stores, which pyarrow builds it from)
        return int.from_bytes(b[pos:pos + 8], "little", signed=True), pos + 8
    raise TypeError(f"no value of {t} from key bytes")
