"""Kernels of ARRAY / MAP / ROW values: constructors, element and field access, CARDINALITY,
ELEMENT, ARRAY_CONTAINS, SPLIT (Flink's semantics: an index out of range or a missing key is
NULL; a NULL container gives NULL). Vectorised over the offsets of Arrow's list and map
arrays."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def _interleaved(cols: list[Array], out_type: pa.DataType) -> Array:
    """The values of ``cols`` row by row: row 0's k values, then row 1's, ..."""
    n, k = len(cols[0]), len(cols)
    values = pa.concat_arrays([c.cast(out_type) for c in cols])
    order = (np.arange(k)[None, :] * n + np.arange(n)[:, None]).ravel()
    return values.take(pa.array(order))


def _array_value(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    n, k = len(args[0]), len(args)
    values = _interleaved(args, out.value_type)
    offsets = pa.array(np.arange(0, n * k + 1, k, dtype=np.int32))
    return pa.ListArray.from_arrays(offsets, values, type=out)


def _map_value(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """MAP[k1, v1, k2, v2, ...]: a later equal key replaces an earlier one (Flink's map
    constructor keeps the last value)."""
    n, pairs = len(args[0]), len(args) // 2
    keys, items = args[0::2], args[1::2]
    for k in keys:
        if k.null_count:
            raise ExecutionError("MAP: a key is NULL")
    if pairs > 1:
        # (drop a pair whose key comes again later in the same row)
        kept: list[Array] = []
        for i in range(pairs):
            later = [pc.equal(keys[i], keys[j]) for j in range(i + 1, pairs)]
            dup = later[0] if later else None
            for x in later[1:]:
                dup = pc.or_(dup, x)
            kept.append(pc.invert(dup) if dup is not None else pa.array(np.ones(n, bool)))
        mask = np.stack([m.to_numpy(zero_copy_only=False) for m in kept], axis=1)
        counts = mask.sum(axis=1)
        offsets = pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))
        flat_mask = pa.array(mask.ravel())
        key_values = _interleaved(keys, out.key_type).filter(flat_mask)
        item_values = _interleaved(items, out.item_type).filter(flat_mask)
    else:
        offsets = pa.array(np.arange(0, n * pairs + 1, max(pairs, 1), dtype=np.int32)) \
            if pairs else pa.array(np.zeros(n + 1, np.int32))
        key_values = _interleaved(keys, out.key_type) if pairs else pa.array([], out.key_type)
        item_values = _interleaved(items, out.item_type) if pairs else \
            pa.array([], out.item_type)
    return pa.MapArray.from_arrays(offsets, key_values, item_values, type=out)


def _row_value(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return pa.StructArray.from_arrays([a.cast(f.type) for a, f in zip(args, out)],
                                      fields=list(out))


def _lengths(a: Array) -> np.ndarray:
    """Elements per row of a list or map array (0 for a NULL one)."""
    offsets = a.offsets.to_numpy(zero_copy_only=False)
    lengths = np.diff(offsets).astype(np.int64)
    if a.null_count:
        lengths[a.is_null().to_numpy(zero_copy_only=False)] = 0
    return lengths


def entries(a: Array) -> tuple[np.ndarray, np.ndarray]:
    """(row, position in the child array) of every element of a list or map array, in
    order (the elements of a NULL row are left out)."""
    lengths = _lengths(a)
    total = int(lengths.sum())
    parents = np.repeat(np.arange(len(a)), lengths)
    starts = a.offsets.to_numpy(zero_copy_only=False)[:-1].astype(np.int64)
    before = np.cumsum(lengths) - lengths
    positions = np.arange(total) - np.repeat(before, lengths) + np.repeat(starts, lengths)
    return parents, positions


def _element_at(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """a[i] for an ARRAY (1-based; out of range is NULL) or m[k] for a MAP."""
    container, key = args
    if pa.types.is_map(container.type):
        if lits[1] is None:
            return _map_get_rows(container, key, out)
        return pc.map_lookup(container, pa.scalar(lits[1], container.type.key_type), "last")
    idx = key.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    lengths = _lengths(container)
    ok = (idx >= 1) & (idx <= lengths)
    if container.null_count:
        ok &= container.is_valid().to_numpy(zero_copy_only=False)
    if key.null_count:
        ok &= key.is_valid().to_numpy(zero_copy_only=False)
    starts = container.offsets.to_numpy(zero_copy_only=False)[:-1].astype(np.int64)
    positions = np.where(ok, starts + idx - 1, 0)
    values = container.values
    if len(values) == 0:
        return pa.nulls(len(container), out)
    return values.take(pa.array(positions, mask=~ok))


def _map_get_rows(container: Array, key: Array, out: pa.DataType) -> Array:
    """m[k] with a key per row: the last entry of each row whose key equals the row's key."""
    parents, entry_rows = entries(container)
    keys = pc.struct_field(container.values, [0])
    if len(entry_rows) == 0:
        return pa.nulls(len(container), out)
    wanted = key.take(pa.array(parents))
    hit = pc.fill_null(pc.equal(keys.take(pa.array(entry_rows)), wanted), False)
    hit_np = hit.to_numpy(zero_copy_only=False)
    last = np.full(len(container), -1, dtype=np.int64)
    last[parents[hit_np]] = entry_rows[hit_np]
    items = pc.struct_field(container.values, [1])
    return items.take(pa.array(np.maximum(last, 0), mask=last < 0))


def _field(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """r.f: the field of a ROW (NULL where the row is NULL)."""
    return pc.struct_field(args[0], [int(lits[1])])


def _cardinality(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a = args[0]
    res = pa.array(_lengths(a).astype(np.int32))
    return pc.if_else(a.is_valid(), res, pa.nulls(len(a), pa.int32())) if a.null_count \
        else res


def _element(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ELEMENT(array): its only element, NULL for an empty array; more is an error."""
    a = args[0]
    lengths = _lengths(a)
    if (lengths > 1).any():
        raise ExecutionError("ELEMENT: the array has more than one element")
    return _element_at([a, pa.array(np.ones(len(a), np.int64))], [None, 1], out)


def _array_contains(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_CONTAINS(array, v): whether an element equals v (a NULL v looks for a NULL
    element); NULL for a NULL array."""
    a, v = args
    parents, positions = entries(a)
    flat = a.values.take(pa.array(positions))
    if len(flat) == 0:
        res = pa.array(np.zeros(len(a), bool))
    else:
        wanted = v.cast(flat.type).take(pa.array(parents))
        equal = pc.fill_null(pc.equal(flat, wanted), False)
        both_null = pc.and_(pc.is_null(flat), pc.is_null(wanted))
        hit = pc.or_(equal, both_null).to_numpy(zero_copy_only=False)
        res = pa.array(np.bincount(parents[hit], minlength=len(a)) > 0)
    return pc.if_else(a.is_valid(), res, pa.nulls(len(a), pa.bool_())) if a.null_count \
        else res


def _split(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """SPLIT(s, delimiter): the pieces between delimiters (empty ones kept); an empty
    delimiter splits into characters; NULL if either is NULL."""
    s = args[0]
    if lits[1] is None:
        return pa.nulls(len(s), out)
    delim = str(lits[1])
    if delim == "":
        from sqlengine.runtime.kernels_text import per_distinct

        return per_distinct(s, list, out)
    return pc.split_pattern(s, pattern=delim)


KERNELS: dict[str, Kernel] = {
    "array_value": _array_value,
    "map_value": _map_value,
    "row_value": _row_value,
    "element_at": _element_at,
    "field": _field,
    "cardinality": _cardinality,
    "element": _element,
    "array_contains": _array_contains,
    "split": _split,
}
