"""Signatures of the ARRAY / MAP / ROW functions (bound from their syntax by
``sqlengine.bind_expr``: ``ARRAY[...]``, ``MAP[...]``, ``ROW(...)``, ``a[i]``, ``m[k]``,
``r.f``; by name: CARDINALITY, ELEMENT, ARRAY_CONTAINS, SPLIT). Kernels in
``runtime.kernels_nested``."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import Signature, _err, register


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t)


def _array_value(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    element = T.common_type(types, "ARRAY elements")
    element = T.STRING if element == T.NULL else element
    return T.array_of(element), [element] * len(types)


def _map_value(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if len(types) % 2:
        raise _err("map", types, "keys and values in pairs")
    key = T.common_type(types[0::2], "MAP keys")
    value = T.common_type(types[1::2], "MAP values")
    key = T.STRING if key == T.NULL else key
    value = T.STRING if value == T.NULL else value
    return pa.map_(key, value), [key, value] * (len(types) // 2)


def _row_value(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    fields = [pa.field(f"EXPR${i}", T.STRING if t == T.NULL else t)
              for i, t in enumerate(types)]
    return pa.struct(fields), [f.type for f in fields]


def _element_at(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    c, k = types
    if _is_list(c):
        if not (T.is_integer(k) or k == T.NULL):
            raise _err("[]", types, "an integer index into an ARRAY")
        return c.value_type, [c, T.INT]
    if pa.types.is_map(c):
        if not (k == T.NULL or T.can_implicitly_cast(k, c.key_type) or k == c.key_type):
            raise _err("[]", types, f"a {T.type_name(c.key_type)} key of the MAP")
        return c.item_type, [c, c.key_type]
    raise _err("[]", types, "an ARRAY or a MAP")


def _field(types: list[pa.DataType], values: list[object]
           ) -> tuple[pa.DataType, list[pa.DataType]]:
    row, _ = types
    return row.field(int(values[1])).type, list(types)  # type: ignore[call-overload]


def _cardinality(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not (_is_list(t) or pa.types.is_map(t)):
        raise _err("cardinality", types, "an ARRAY or a MAP")
    return T.INT, [t]


def _element(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not _is_list(t):
        raise _err("element", types, "an ARRAY")
    return t.value_type, [t]


def _array_contains(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    a, v = types
    if not _is_list(a):
        raise _err("array_contains", types, "an ARRAY and a value")
    if v != T.NULL and v != a.value_type and not T.can_implicitly_cast(v, a.value_type):
        raise _err("array_contains", types, f"a {T.type_name(a.value_type)} value")
    return T.BOOLEAN, [a, a.value_type]


def _split(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("split", types, "a STRING and a delimiter STRING")
    return T.array_of(T.STRING), [T.STRING, T.STRING]


register(Signature("array_value", 1, None, _array_value))
register(Signature("map_value", 2, None, _map_value))
register(Signature("row_value", 1, None, _row_value))
register(Signature("element_at", 2, 2, _element_at))
register(Signature("field", 2, 2, lambda types: _field(types, [None, 0]), literal_args=(1,),
                   by_value=_field))
register(Signature("cardinality", 1, 1, _cardinality))
register(Signature("element", 1, 1, _element))
register(Signature("array_contains", 2, 2, _array_contains))
register(Signature("split", 2, 2, _split, literal_args=(1,)))
