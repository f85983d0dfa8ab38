"""A column read from a file or a database as the table's declared type: numbers the type
cannot hold are refused by name (a CAST would wrap or cut them), as the csv and json readers
refuse them."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import cast_array
from sqlengine.errors import ConnectorError, ExecutionError


def fit_column(col: pa.Array, target: pa.DataType, place: object, name: str,
               source: str = "the file's") -> pa.Array:
    """A column read from a file or a database (``place`` names it) as the table's
    ``target`` type: a number the type cannot hold is an error naming ``place``, the column
    and the value (a CAST would wrap or cut it), as is a value no CAST takes."""
    if col.type == target:
        return col
    col = nested_by_name(col, target)
    if col.type == target:
        return col
    fitted = _check_fits(col, target, place, name, source) \
        if _narrows(col.type, target) else None
    if fitted is not None:
        return fitted
    try:
        return cast_array(col, target)
    except ExecutionError as e:
        msg = f"{place}: column {name!r}: {e.message}"
        raise ConnectorError(msg) from None


def nested_by_name(col: pa.Array, target: pa.DataType) -> pa.Array:
    """A file's ROW fields (at any depth: in an ARRAY, a MAP, a ROW) matched to the declared
    ROW's by name, as its top-level columns are (exactly, else ignoring case): a field the
    file lacks is NULL, one the table does not declare is left out. A ROW with no field
    name in common is left as it is (then cast by position). It was always by position, so
    a file whose struct held the fields in another order swapped their values silently."""
    t = col.type
    if isinstance(col, pa.ChunkedArray):
        chunks = [nested_by_name(c, target) for c in col.chunks]
        return pa.chunked_array(chunks) if chunks else col
    if pa.types.is_struct(t) and pa.types.is_struct(target):
        names = [t.field(i).name for i in range(t.num_fields)]
        lower = {n.lower(): i for i, n in reversed(list(enumerate(names)))}
        wanted = [target.field(i) for i in range(target.num_fields)]
        found = [names.index(f.name) if f.name in names else lower.get(f.name.lower())
                 for f in wanted]
        if all(i is None for i in found):
            return col
        flat = col.flatten()  # (the children of its rows, its offset applied)
        children = [nested_by_name(flat[i], f.type) if i is not None else
                    pa.nulls(len(col), f.type) for i, f in zip(found, wanted)]
        fields = [pa.field(f.name, c.type) for f, c in zip(wanted, children)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=col.is_null()) \
            if len(col) else pa.array([], pa.struct(fields))
    if (pa.types.is_list(t) or pa.types.is_large_list(t)) and (
            pa.types.is_list(target) or pa.types.is_large_list(target)):
        values = nested_by_name(col.values, target.value_type)
        if values is col.values:
            return col
        kind = pa.LargeListArray if pa.types.is_large_list(t) else pa.ListArray
        return kind.from_arrays(col.offsets, values, mask=col.is_null())
    if pa.types.is_map(t) and pa.types.is_map(target):
        keys = nested_by_name(col.keys, target.key_type)
        items = nested_by_name(col.items, target.item_type)
        if keys is col.keys and items is col.items:
            return col
        return pa.MapArray.from_arrays(col.offsets, keys, items, mask=col.is_null())
    return col


def _narrows(src: pa.DataType, target: pa.DataType) -> bool:
    """A number read as a type that may not hold it (a CAST would wrap or cut it, or make
    a DOUBLE past FLOAT's range infinite)."""
    numeric = (pa.types.is_integer, pa.types.is_floating, pa.types.is_decimal)
    return any(k(src) for k in numeric) and (pa.types.is_integer(target) or (
        pa.types.is_decimal(target) and not pa.types.is_floating(src)) or (
        target == pa.float32() and src == pa.float64()))


def _check_fits(col: pa.Array, target: pa.DataType, path: object, name: str,
                source: str = "the file's") -> pa.Array | None:
    """``col`` as ``target`` (None: for cast_array to cast) when the declared type holds
    every value of the file; otherwise an error naming the first that it does not hold (a
    cast wrapped 3000000000 into INT as -1294967296, cut 1.9 into BIGINT as 1), as the csv
    and json readers refuse them."""
    if pa.types.is_integer(col.type) and pa.types.is_decimal(target):
        # (Arrow casts an int64 only to 19 digits and more: the values are checked instead)
        limit = 10 ** (target.precision - target.scale)
        ints = col.cast(pa.int64())
        bad = pc.or_(pc.greater_equal(ints, limit), pc.less_equal(ints, -limit)) \
            if limit <= 2 ** 63 else pa.array([False] * len(col))
        fits = not pc.any(bad).as_py()
    elif target == pa.float32():  # (a finite DOUBLE past FLOAT's range would be infinite)
        big = pc.and_(pc.is_finite(col), pc.greater(pc.abs(col), 3.4028234663852886e38))
        bad = pc.fill_null(big, False)
        fits = not pc.any(bad).as_py()
        if fits:
            return col.cast(target)
    else:
        try:
            return col.cast(target, safe=True)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            fits = False
        bad = pa.array([v is not None and not _fits(v, col.type, target)
                        for v in col.to_pylist()])  # (only when some value does not fit)
    if fits:
        return None
    value = col.filter(pc.fill_null(bad, False))[0].as_py()
    msg = (f"{path}: column {name!r}: {source} {T.type_name(col.type)} value {value!r} "
           f"does not fit the table's {T.type_name(target)}")
    raise ConnectorError(msg)


def _fits(v: object, src: pa.DataType, target: pa.DataType) -> bool:
    try:
        pa.array([v], src).cast(target, safe=True)
        return True
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return False
