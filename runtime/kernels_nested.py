"""Kernels of ARRAY / MAP / ROW values: constructors, element and field access, CARDINALITY,
ELEMENT, ARRAY_CONTAINS, SPLIT, the ARRAY_* / MAP_* collection functions, STR_TO_MAP and
REGEXP_EXTRACT_ALL (Flink's semantics: an index out of range or a missing key is
NULL; a NULL container gives NULL). Vectorised over the offsets of Arrow's list and map
arrays."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError
from sqlengine.runtime.column_arguments import constants_or_columns
from sqlengine.runtime.value_codes import value_codes

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
        hit = _equal_to(flat, v, parents)
        res = pa.array(np.bincount(parents[hit], minlength=len(a)) > 0)
    return pc.if_else(a.is_valid(), res, pa.nulls(len(a), pa.bool_())) if a.null_count \
        else res


def _split(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """SPLIT(s, delimiter): the pieces between delimiters (empty ones kept); an empty
    delimiter splits into characters; an empty string is an empty array; NULL if either is
    NULL."""
    s = args[0]
    if lits[1] is None:
        return pa.nulls(len(s), out)
    delim = str(lits[1])
    if delim == "":
        from sqlengine.runtime.kernels_text import per_distinct

        return per_distinct(s, list, out)
    parts = pc.split_pattern(s, pattern=delim)
    empty = pc.fill_null(pc.equal(s, ""), False).to_numpy(zero_copy_only=False)
    if not empty.any():
        return parts
    parents, flat = _flat(parts)  # (Flink: SPLIT('', d) is an empty array)
    keep = ~empty[parents]
    return _list(len(s), parents[keep], flat.filter(pa.array(keep)), out, _null_rows(parts))


# -- the collection functions: on the flattened elements with each one's row ---------------
def _flat(a: Array) -> tuple[np.ndarray, Array]:
    """(row of each element, the elements) of a list or map array, in order; the elements
    of a NULL row are left out."""
    parents, positions = entries(a)
    return parents, a.values.take(pa.array(positions, pa.int64()))


def _null_rows(*arrays: Array) -> np.ndarray:
    """Per row: whether any of ``arrays`` is NULL there."""
    out = np.zeros(len(arrays[0]), bool)
    for x in arrays:
        if x.null_count:
            out |= x.is_null().to_numpy(zero_copy_only=False)
    return out


def _offsets(n: int, parents: np.ndarray) -> pa.Array:
    counts = np.bincount(parents, minlength=n) if len(parents) else np.zeros(n, np.int64)
    offsets = np.zeros(n + 1, np.int32)
    offsets[1:] = np.cumsum(counts)
    return pa.array(offsets, pa.int32())


def _list(n: int, parents: np.ndarray, values: Array, out: pa.DataType,
          null: np.ndarray) -> Array:
    """A list array of ``n`` rows from elements ordered by their row (``parents``); NULL
    where ``null`` (such rows have no elements)."""
    return pa.ListArray.from_arrays(_offsets(n, parents), values.cast(out.value_type),
                                    type=out, mask=pa.array(null) if null.any() else None)


def _map(n: int, parents: np.ndarray, keys: Array, items: Array, out: pa.DataType,
         null: np.ndarray) -> Array:
    if keys.null_count:
        raise ExecutionError("a MAP key is NULL")
    return pa.MapArray.from_arrays(_offsets(n, parents), keys.cast(out.key_type),
                                   items.cast(out.item_type), type=out,
                                   mask=pa.array(null) if null.any() else None)


def _codes(values: Array) -> np.ndarray:
    """An integer per value, equal for equal values and -1 for NULL."""
    try:
        return value_codes(values)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
        msg = f"elements of type {values.type} cannot be compared"
        raise ExecutionError(msg) from None


def _keys(parents: np.ndarray, codes: np.ndarray, width: int) -> np.ndarray:
    return parents.astype(np.int64) * (width + 2) + codes + 1


def _first_each(keys: np.ndarray, last: bool = False) -> np.ndarray:
    """Whether each position holds the first (``last``: the last) occurrence of its key."""
    keep = np.zeros(len(keys), bool)
    if len(keys):
        if last:
            _, idx = np.unique(keys[::-1], return_index=True)
            keep[len(keys) - 1 - idx] = True
        else:
            _, idx = np.unique(keys, return_index=True)
            keep[idx] = True
    return keep


def _by_row(pieces: list[tuple[np.ndarray, Array]], value_type: pa.DataType
            ) -> tuple[np.ndarray, Array]:
    """The elements of several pieces (each ordered by row) together, row by row, each
    row's elements in the order of the pieces."""
    parents = np.concatenate([p for p, _ in pieces]).astype(np.int64)
    values = pa.concat_arrays([v.cast(value_type) for _, v in pieces])
    order = np.argsort(parents, kind="stable")
    return parents[order], values.take(pa.array(order))


def _valid_flat(a: Array, null: np.ndarray) -> tuple[np.ndarray, Array]:
    """_flat without the elements of the rows where ``null``."""
    parents, flat = _flat(a)
    if null.any() and len(parents):
        keep = ~null[parents]
        return parents[keep], flat.filter(pa.array(keep))
    return parents, flat


def _row_starts(n: int, parents: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(where each row's elements start among the flattened ones, how many it has)."""
    counts = np.bincount(parents, minlength=n) if len(parents) else np.zeros(n, np.int64)
    return np.cumsum(counts) - counts, counts


def _equal_to(flat: Array, v: Array, parents: np.ndarray) -> np.ndarray:
    """Per element: whether it equals its row's ``v`` (NULL equals NULL)."""
    if len(flat) == 0:
        return np.zeros(0, bool)
    wanted = v.cast(flat.type).take(pa.array(parents))
    if _is_nested(flat.type):  # (whole values, Arrow's equal takes no ROW / ARRAY / MAP)
        codes = _codes(pa.concat_arrays([flat, wanted]))
        return codes[:len(flat)] == codes[len(flat):]
    equal = pc.fill_null(pc.equal(flat, wanted), False)
    both_null = pc.and_(pc.is_null(flat), pc.is_null(wanted))
    return pc.or_(equal, both_null).to_numpy(zero_copy_only=False)


def _is_nested(t: pa.DataType) -> bool:
    return pa.types.is_struct(t) or pa.types.is_list(t) or pa.types.is_large_list(t) or \
        pa.types.is_fixed_size_list(t) or pa.types.is_map(t)


def _array_distinct(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_DISTINCT(a): the first occurrence of each element (one NULL), in order."""
    a = args[0]
    parents, flat = _flat(a)
    codes = _codes(flat)
    keep = _first_each(_keys(parents, codes, int(codes.max(initial=0))))
    return _list(len(a), parents[keep], flat.filter(pa.array(keep)), out, _null_rows(a))


def _array_reverse(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a = args[0]
    parents, flat = _flat(a)
    starts, counts = _row_starts(len(a), parents)
    i = np.arange(len(parents))
    src = 2 * starts[parents] + counts[parents] - 1 - i
    return _list(len(a), parents, flat.take(pa.array(src, pa.int64())), out, _null_rows(a))


def _array_position(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_POSITION(a, v): the 1-based position of the first element equal to v, 0 when
    there is none; NULL when a or v is NULL."""
    a, v = args
    n = len(a)
    parents, flat = _flat(a)
    starts, _ = _row_starts(n, parents)
    hit = _equal_to(flat, v, parents) & flat.is_valid().to_numpy(zero_copy_only=False) \
        if len(flat) else np.zeros(0, bool)
    first = np.full(n, np.iinfo(np.int64).max, np.int64)
    at = np.arange(len(parents)) - starts[parents] + 1
    np.minimum.at(first, parents[hit], at[hit])
    res = np.where(first == np.iinfo(np.int64).max, 0, first).astype(np.int32)
    return pa.array(res, pa.int32(), mask=_null_rows(a, v))


def _array_remove(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_REMOVE(a, v): a without the elements equal to v (a NULL v removes NULLs)."""
    a, v = args
    parents, flat = _flat(a)
    keep = ~_equal_to(flat, v, parents)
    return _list(len(a), parents[keep], flat.filter(pa.array(keep)), out, _null_rows(a))


def _add_element(at_end: bool) -> Kernel:
    """ARRAY_APPEND / ARRAY_PREPEND(a, v): v (also NULL) added; NULL for a NULL array."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a, v = args
        null = _null_rows(a)
        rows = np.flatnonzero(~null)
        one = (rows, v.take(pa.array(rows, pa.int64())))
        pieces = [_flat(a), one] if at_end else [one, _flat(a)]
        parents, values = _by_row(pieces, out.value_type)
        return _list(len(a), parents, values, out, null)
    return kernel


def _array_concat(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_CONCAT(a, b, ...): NULL if any array is NULL."""
    null = _null_rows(*args)
    parents, values = _by_row([_valid_flat(a, null) for a in args], out.value_type)
    return _list(len(args[0]), parents, values, out, null)


def _array_minmax(how: str) -> Kernel:
    """ARRAY_MAX / ARRAY_MIN: of the non-NULL elements; NULL when there are none."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a = args[0]
        parents, flat = _flat(a)
        if len(flat) == 0:
            return pa.nulls(len(a), out)
        groups = pa.table({"p": pa.array(parents, pa.int64()), "v": flat}) \
            .group_by("p").aggregate([("v", how)])
        where = np.full(len(a), -1, np.int64)
        where[groups.column("p").to_numpy()] = np.arange(groups.num_rows)
        values = groups.column(f"v_{how}").combine_chunks()
        return values.take(pa.array(np.maximum(where, 0), mask=where < 0))
    return kernel


def _array_slice(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_SLICE(a, start[, end]) as Flink: 1-based and inclusive, a negative offset
    counts from the end, 0 is the first element, an omitted end is the last; empty when
    start is after end; NULL when an argument is NULL."""
    a = args[0]
    n = len(a)
    null = _null_rows(*args)
    parents, flat = _flat(a)
    starts, length = _row_starts(n, parents)
    s = args[1].cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    e = args[2].cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False) \
        if len(args) > 2 else length
    s = np.maximum(1, np.where(s < 0, s + length + 1, s))
    e = np.where(e < 0, e + length + 1, e)
    e = np.where(e == 0, 1, np.minimum(e, length))
    count = np.where((length == 0) | null, 0, np.maximum(0, e - s + 1))
    total = int(count.sum())
    before = np.cumsum(count) - count
    src = np.repeat(starts + s - 1 - before, count) + np.arange(total)
    out_parents = np.repeat(np.arange(n), count)
    return _list(n, out_parents, flat.take(pa.array(src, pa.int64())), out, null)


def _set_op(kind: str) -> Kernel:
    """ARRAY_UNION / ARRAY_EXCEPT / ARRAY_INTERSECT(a, b): without duplicates (one NULL at
    most, NULL equal to NULL), in the order of a (then b); NULL if either is NULL."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a, b = args
        n = len(a)
        null = _null_rows(a, b)
        pa_, fa = _valid_flat(a, null)
        pb, fb = _valid_flat(b, null)
        if kind == "union":
            parents, values = _by_row([(pa_, fa), (pb, fb)], out.value_type)
            codes = _codes(values)
            keep = _first_each(_keys(parents, codes, int(codes.max(initial=0))))
            return _list(n, parents[keep], values.filter(pa.array(keep)), out, null)
        codes = _codes(pa.concat_arrays([fa.cast(out.value_type), fb.cast(out.value_type)]))
        width = int(codes.max(initial=0))
        ka, kb = _keys(pa_, codes[:len(fa)], width), _keys(pb, codes[len(fa):], width)
        found = np.isin(ka, kb)
        keep = _first_each(ka) & (found if kind == "intersect" else ~found)
        return _list(n, pa_[keep], fa.filter(pa.array(keep)), out, null)
    return kernel


def _array_join(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_JOIN(a, delimiter[, null_replacement]): the elements joined; NULL elements
    replaced, or left out without a replacement; NULL if an argument is NULL."""
    a, delim = args[0], args[1]
    null = _null_rows(*args)
    parents, flat = _valid_flat(a, null)
    flat = flat.cast(pa.string())
    if len(args) > 2:
        flat = pc.coalesce(flat, args[2].cast(pa.string()).take(pa.array(parents, pa.int64())))
    elif flat.null_count:
        keep = flat.is_valid()
        parents, flat = parents[keep.to_numpy(zero_copy_only=False)], flat.filter(keep)
    lists = _list(len(a), parents, flat, pa.list_(pa.string()), null)
    return pc.binary_join(lists, delim.cast(pa.string()))


def _array_sort(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ARRAY_SORT(a[, ascending[, nulls_first]]): ascending with NULLs first by default;
    ``ascending`` alone also decides where NULLs go (Flink); NULL if a flag is NULL. The flags
    may differ from row to row (Flink evaluates them per row)."""
    a = args[0]
    n = len(a)
    asc = _flag(args[1], n, True) if len(args) > 1 else np.ones(n, dtype=bool)
    nulls_first = _flag(args[2], n, True) if len(args) > 2 else asc
    null = _null_rows(*args)  # (a NULL array or flag)
    parents, flat = _flat(a)
    if null.any() and len(flat):  # (a NULL flag: its row is NULL, without elements)
        keep = ~null[parents]
        parents, flat = parents[keep], flat.filter(pa.array(keep))
    if len(flat):
        # Each element's place by its rank among all elements (equal values share one), run
        # backwards in a descending row; NULLs before or after every rank.
        rank = pc.rank(flat, sort_keys="ascending", tiebreaker="dense").to_numpy().astype(
            np.int64)
        top = int(rank.max()) + 1
        up = asc[parents]
        key = np.where(up, rank, top - rank)
        if flat.null_count:
            is_null = flat.is_null().to_numpy(zero_copy_only=False)
            key = np.where(is_null, np.where(nulls_first[parents], -1, top + 1), key)
        order = np.lexsort((key, parents))  # (stable: equal values keep their order)
        flat = flat.take(pa.array(order))
        parents = parents[order]
    return _list(n, parents, flat, out, null)


def _flag(arg: Array, n: int, default: bool) -> np.ndarray:
    """A BOOLEAN argument per row (NULL: ``default``; the row is NULL anyway)."""
    values = pc.fill_null(arg.cast(pa.bool_()), default)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=bool)


def _map_part(part: str) -> Kernel:
    """MAP_KEYS / MAP_VALUES / MAP_ENTRIES: as an ARRAY, in the map's order."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        m = args[0]
        parents, flat = _flat(m)
        values = flat if part == "entries" else pc.struct_field(
            flat, [0 if part == "keys" else 1])
        if part == "entries":
            values = pa.StructArray.from_arrays(
                [pc.struct_field(flat, [0]), pc.struct_field(flat, [1])],
                fields=list(out.value_type))
        return _list(len(m), parents, values, out, _null_rows(m))
    return kernel


def _map_from_arrays(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """MAP_FROM_ARRAYS(keys, values): arrays of the same length (else an error); a later
    equal key replaces an earlier one; NULL if either is NULL."""
    k, v = args
    n = len(k)
    null = _null_rows(k, v)
    kl, vl = _lengths(k), _lengths(v)
    bad = np.flatnonzero((kl != vl) & ~null)
    if len(bad):
        i = bad[0]
        msg = (f"Invalid function MAP_FROM_ARRAYS call: the length of the keys array "
               f"({kl[i]}) is not equal to the length of the values array ({vl[i]})")
        raise ExecutionError(msg)
    parents, keys = _valid_flat(k, null)
    _, items = _valid_flat(v, null)
    keep = _first_each(_keys(parents, _codes(keys), len(keys)), last=True)
    return _map(n, parents[keep], keys.filter(pa.array(keep)), items.filter(pa.array(keep)),
                out, null)


def _map_union(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """MAP_UNION(m1, m2, ...): the entries of all; a later map's value wins for an equal
    key; NULL if any map is NULL."""
    n = len(args[0])
    null = _null_rows(*args)
    parents, entries_ = _by_row([_valid_flat(m, null) for m in args],
                                pa.struct([out.key_field, out.item_field]))
    keys = pc.struct_field(entries_, [0])
    keep = _first_each(_keys(parents, _codes(keys), len(keys)), last=True)
    kept = entries_.filter(pa.array(keep))
    return _map(n, parents[keep], pc.struct_field(kept, [0]), pc.struct_field(kept, [1]),
                out, null)


def _java_split(rx: re.Pattern[str], text: str, limit: int = 0) -> list[str]:
    """java.lang.String#split: at most ``limit`` pieces (0: any, trailing empty ones
    dropped); no leading empty piece for a zero-width match at the start."""
    parts = rx.split(text, maxsplit=max(limit - 1, 0))
    if len(parts) > 1 and parts[0] == "" and (m := rx.match(text)) is not None \
            and m.end() == 0:
        parts = parts[1:]
    if limit == 0 and len(parts) > 1:
        while parts and parts[-1] == "":
            parts.pop()
    return parts


def _str_to_map(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """STR_TO_MAP(s[, pair_delimiter, key_value_delimiter]): pairs split by ',' and '=' by
    default (both regular expressions, as Flink); a pair without the delimiter maps its text
    to NULL; a later equal key wins; an empty string is an empty MAP."""
    s = args[0]
    if any(lit is None for lit in lits[1:]):
        return pa.nulls(len(s), out)
    try:
        pairs_rx = re.compile(str(lits[1]) if len(lits) > 1 else ",")
        kv_rx = re.compile(str(lits[2]) if len(lits) > 2 else "=")
    except re.error as e:
        msg = f"STR_TO_MAP: invalid delimiter: {e}"
        raise ExecutionError(msg) from None

    def parse(text: str) -> list[tuple[str, str | None]]:
        if text == "":
            return []
        found: dict[str, str | None] = {}
        for pair in _java_split(pairs_rx, text):
            kv = _java_split(kv_rx, pair, 2)
            found[kv[0]] = kv[1] if len(kv) > 1 else None
        return list(found.items())

    from sqlengine.runtime.kernels_text import per_distinct

    return per_distinct(s.cast(pa.string()), parse, out)


def _regexp_extract_all(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_EXTRACT_ALL(s, regex[, group]): group ``group`` (default 1, 0 the whole
    match) of every match; NULL for a group the regex does not have and for an invalid
    regex (as Flink 2.3); the regex read as Java's (kernels_text.java_regex)."""
    from sqlengine.runtime.kernels_text import java_regex, per_distinct

    s = args[0]
    if any(lit is None for lit in lits[1:]):
        return pa.nulls(len(s), out)
    try:
        rx = re.compile(java_regex(str(lits[1])))
    except re.error:
        return pa.nulls(len(s), out)
    group = int(lits[2]) if len(lits) > 2 else 1  # type: ignore[call-overload]
    if group < 0 or group > rx.groups:
        return pa.nulls(len(s), out)

    return per_distinct(s.cast(pa.string()),
                        lambda text: [m.group(group) for m in rx.finditer(text)], out)


def _multiset_elements(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A MULTISET's elements as an ARRAY, each repeated by its count, in the entries' order
    (UNNEST of a multiset, as Flink's)."""
    m = args[0]
    if isinstance(m, pa.ChunkedArray):
        m = m.combine_chunks()
    offsets = np.asarray(m.offsets.to_numpy(), dtype=np.int64)
    keys = m.keys.slice(int(offsets[0]), int(offsets[-1] - offsets[0])) if len(m) else m.keys
    counts = np.asarray(m.items.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
                        .fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64) \
        if len(m) else np.zeros(0, np.int64)
    counts = np.maximum(counts, 0)  # (a count of 0 or below gives no element)
    rel = offsets - offsets[0]
    ends = np.r_[0, np.cumsum(counts)].astype(np.int64)[rel]
    values = keys.take(pa.array(np.repeat(np.arange(len(keys)), counts)))
    mask = m.is_null() if m.null_count else None
    return pa.ListArray.from_arrays(pa.array(ends, pa.int32()), values, type=out, mask=mask)


def _ordered_values(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ordered_values(rows, ascending, nulls first): each list of ROW(k0, ..., v) (an ordered
    aggregate's rows, sqlengine/bind_ordered.py) as the list of its v sorted by the keys,
    stably (ties in arrival order), or a list of values sorted by themselves; all lists in
    one sort, by list and then keys."""
    from sqlengine.plan.expressions import ColumnRef
    from sqlengine.plan.nodes import SortKey
    from sqlengine.runtime.operators.sort import sort_order

    a = args[0]
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    ascending, nulls_first = lits[1], lits[2]
    offsets = np.asarray(a.offsets, dtype=np.int64)
    start = int(offsets[0])
    rows = a.values.slice(start, int(offsets[-1]) - start)
    relative = offsets - start
    parents = np.repeat(np.arange(len(a), dtype=np.int64), np.diff(relative))
    if not pa.types.is_struct(rows.type):  # (DISTINCT values, ordered by themselves)
        rows = pa.StructArray.from_arrays([rows, rows], names=["k0", "v"])
    width = rows.type.num_fields - 1
    keys = pa.table({f"k{i}": rows.field(i) for i in range(width)})
    order = tuple(SortKey(ColumnRef(i, f"k{i}", keys.schema.field(i).type), bool(up),
                          bool(first))
                  for i, (up, first) in enumerate(zip(ascending, nulls_first)))  # type: ignore[call-overload]
    taken = rows.field(width).take(sort_order(keys, order, first=[("p", pa.array(parents))]))
    return pa.ListArray.from_arrays(pa.array(relative, pa.int32()), taken, type=out,
                                    mask=a.is_null())


def _percentile_disc(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """percentile_disc(sorted values, (p, q)): of each list of n values, the k-th with k =
    ceil(n * p / q) (at least 1), exactly in integers; NULL for an empty or NULL list."""
    a = args[0]
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    p, q = lits[1]  # type: ignore[misc]
    offsets = np.asarray(a.offsets, dtype=np.int64)
    n = np.diff(offsets)
    k = np.maximum(-((-n * int(p)) // int(q)), 1)  # (ceil(n * p / q), exact)
    valid = (n > 0) & ~np.asarray(a.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    at = np.where(valid, offsets[:-1] + k - 1, 0)
    picked = a.values.take(pa.array(at)) if len(a.values) else pa.nulls(len(a), out)
    return pc.if_else(pa.array(valid), picked, pa.nulls(len(a), out))


KERNELS: dict[str, Kernel] = {
    "ordered_values": _ordered_values,
    "percentile_disc": _percentile_disc,
    "multiset_elements": _multiset_elements,
    "array_value": _array_value,
    "map_value": _map_value,
    "row_value": _row_value,
    "element_at": _element_at,
    "field": _field,
    "cardinality": _cardinality,
    "element": _element,
    "array_contains": _array_contains,
    "split": constants_or_columns(_split, (1,)),
    "array_distinct": _array_distinct,
    "array_reverse": _array_reverse,
    "array_position": _array_position,
    "array_remove": _array_remove,
    "array_append": _add_element(at_end=True),
    "array_prepend": _add_element(at_end=False),
    "array_concat": _array_concat,
    "array_max": _array_minmax("max"),
    "array_min": _array_minmax("min"),
    "array_slice": _array_slice,
    "array_union": _set_op("union"),
    "array_except": _set_op("except"),
    "array_intersect": _set_op("intersect"),
    "array_join": _array_join,
    "array_sort": _array_sort,
    "map_keys": _map_part("keys"),
    "map_values": _map_part("values"),
    "map_entries": _map_part("entries"),
    "map_from_arrays": _map_from_arrays,
    "map_union": _map_union,
    "str_to_map": constants_or_columns(_str_to_map, (1, 2)),
    "regexp_extract_all": constants_or_columns(_regexp_extract_all, (1, 2)),
}
