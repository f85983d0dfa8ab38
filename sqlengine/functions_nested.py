"""Signatures of the ARRAY / MAP / ROW functions (bound from their syntax by
``sqlengine.bind_expr``: ``ARRAY[...]``, ``MAP[...]``, ``ROW(...)``, ``a[i]``, ``m[k]``,
``r.f``; by name: CARDINALITY, ELEMENT, ARRAY_CONTAINS, SPLIT, the ARRAY_* / MAP_* collection
functions, STR_TO_MAP and REGEXP_EXTRACT_ALL). Kernels in ``runtime.kernels_nested``."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import ALIASES, Signature, _err, register
from sqlengine.variant import is_variant


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
    if T.is_multiset(c):
        raise _err("[]", types, "an ARRAY or a MAP (a MULTISET has no element access, as in "
                   "Flink; UNNEST it)")
    if pa.types.is_map(c):
        if not (k == T.NULL or T.can_implicitly_cast(k, c.key_type) or k == c.key_type):
            raise _err("[]", types, f"a {T.type_name(c.key_type)} key of the MAP")
        return c.item_type, [c, c.key_type]
    if is_variant(c):  # (v['key'] / v[i]: bound as variant_get by bind_nested.bracket)
        if T.is_string(k) or T.is_integer(k) or k == T.NULL:
            return c, [c, T.STRING if T.is_string(k) or k == T.NULL else T.BIGINT]
        raise _err("[]", types, "a VARIANT indexed by a STRING key or an INTEGER index")
    raise _err("[]", types, "an ARRAY or a MAP")


def _field(types: list[pa.DataType], values: list[object]
           ) -> tuple[pa.DataType, list[pa.DataType]]:
    row, _ = types
    pos = values[1]
    if not pa.types.is_struct(row) or not isinstance(pos, int) or isinstance(pos, bool) or \
            not 0 <= pos < row.num_fields:
        raise _err("field", types, "a ROW and the position of one of its fields")
    return row.field(pos).type, list(types)


def _cardinality(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not (_is_list(t) or pa.types.is_map(t)) or T.is_multiset(t):
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
register(Signature("split", 2, 2, _split))
# (UNNEST of a MULTISET: each element repeated by its count; bind_relations)
register(Signature("multiset_elements", 1, 1,
                   lambda types: (T.array_of(types[0].key_type), list(types))))


# -- the collection functions (ARRAY_* / MAP_*), STR_TO_MAP and REGEXP_EXTRACT_ALL -----------
def _array_arg(name: str, types: list[pa.DataType], pos: int = 0) -> pa.DataType:
    t = types[pos]
    if not _is_list(t):
        raise _err(name, types, "an ARRAY" if pos == 0 else f"an ARRAY as argument {pos + 1}")
    return t


def _same_array(name: str) -> Callable[[list[pa.DataType]], tuple[pa.DataType,
                                                                   list[pa.DataType]]]:
    """One ARRAY in, the same ARRAY type out (ARRAY_DISTINCT, ARRAY_REVERSE)."""
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        a = _array_arg(name, types)
        return a, [a]
    return infer


def _array_element_of(name: str) -> Callable[[list[pa.DataType]],
                                             tuple[pa.DataType, list[pa.DataType]]]:
    """ARRAY_MAX / ARRAY_MIN: an element of the ARRAY."""
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        a = _array_arg(name, types)
        if T.is_nested(a.value_type):
            raise _err(name, types, "an ARRAY of comparable elements")
        return a.value_type, [a]
    return infer


def _needle(name: str, result: str) -> Callable[[list[pa.DataType]],
                                                tuple[pa.DataType, list[pa.DataType]]]:
    """(ARRAY, value): ARRAY_POSITION (an INT), ARRAY_REMOVE (the ARRAY)."""
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        a = _array_arg(name, types)
        v = types[1]
        if v != T.NULL and v != a.value_type and not T.can_implicitly_cast(v, a.value_type):
            raise _err(name, types, f"an ARRAY and a {T.type_name(a.value_type)} value")
        return (T.INT if result == "int" else a), [a, a.value_type]
    return infer


def _add_element(name: str) -> Callable[[list[pa.DataType]],
                                        tuple[pa.DataType, list[pa.DataType]]]:
    """ARRAY_APPEND / ARRAY_PREPEND (array, element): the elements' common type."""
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        a = _array_arg(name, types)
        element = T.common_type([a.value_type, types[1]], f"{name.upper()} elements")
        element = a.value_type if element == T.NULL else element
        out = T.array_of(element)
        return out, [out, element]
    return infer


def _arrays(name: str) -> Callable[[list[pa.DataType]], tuple[pa.DataType,
                                                               list[pa.DataType]]]:
    """Several ARRAYs of one common element type (ARRAY_CONCAT, ARRAY_UNION, ...)."""
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        for i, t in enumerate(types):
            if t != T.NULL:
                _array_arg(name, types, i)
        elements = [t.value_type for t in types if t != T.NULL]
        if not elements:
            raise _err(name, types, "ARRAY arguments")
        element = T.common_type(elements, f"{name.upper()} elements")
        element = T.STRING if element == T.NULL else element
        out = T.array_of(element)
        return out, [out] * len(types)
    return infer


def _array_slice(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    a = _array_arg("array_slice", types)
    for t in types[1:]:
        if not (T.is_integer(t) or t == T.NULL):
            raise _err("array_slice", types, "an ARRAY and INT offsets")
    return a, [a] + [T.INT] * (len(types) - 1)


def _array_join(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    a = types[0]
    if not (_is_list(a) and (T.is_string(a.value_type) or a.value_type == T.NULL)):
        raise _err("array_join", types, "an ARRAY<STRING> and STRING delimiters")
    for t in types[1:]:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("array_join", types, "an ARRAY<STRING> and STRING delimiters")
    first = a if T.is_string(a.value_type) else T.array_of(T.STRING)
    return T.STRING, [first] + [T.STRING] * (len(types) - 1)


def _array_sort(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    a = _array_arg("array_sort", types)
    if T.is_nested(a.value_type):
        raise _err("array_sort", types, "an ARRAY of comparable elements")
    for t in types[1:]:
        if not (pa.types.is_boolean(t) or t == T.NULL):
            raise _err("array_sort", types, "an ARRAY and BOOLEAN flags")
    return a, [a] + [T.BOOLEAN] * (len(types) - 1)


def _map_arg(name: str, types: list[pa.DataType], pos: int = 0) -> pa.DataType:
    t = types[pos]
    if not pa.types.is_map(t) or T.is_multiset(t):
        raise _err(name, types, "a MAP")
    return t


def _map_keys(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    m = _map_arg("map_keys", types)
    return T.array_of(m.key_type), [m]


def _map_values(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    m = _map_arg("map_values", types)
    return T.array_of(m.item_type), [m]


def _map_entries(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    m = _map_arg("map_entries", types)
    entry = pa.struct([pa.field("key", m.key_type), pa.field("value", m.item_type)])
    return T.array_of(entry), [m]


def _map_from_arrays(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    k = _array_arg("map_from_arrays", types, 0)
    v = _array_arg("map_from_arrays", types, 1)
    key = T.STRING if k.value_type == T.NULL else k.value_type
    value = T.STRING if v.value_type == T.NULL else v.value_type
    return pa.map_(key, value), [T.array_of(key), T.array_of(value)]


def _map_union(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for i in range(len(types)):
        _map_arg("map_union", types, i)
    key = T.common_type([t.key_type for t in types], "MAP_UNION keys")
    value = T.common_type([t.item_type for t in types], "MAP_UNION values")
    out = pa.map_(key, value)
    return out, [out] * len(types)


def _str_to_map(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("str_to_map", types, "a STRING and STRING delimiters")
    return pa.map_(T.STRING, T.STRING), [T.STRING] * len(types)


def _regexp_extract_all(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    ok = all(T.is_string(t) or t == T.NULL for t in types[:2]) and \
        (len(types) < 3 or T.is_integer(types[2]) or types[2] == T.NULL)
    if not ok:
        raise _err("regexp_extract_all", types, "a STRING, a regex and an INT group")
    return T.array_of(T.STRING), [T.STRING, T.STRING, T.INT][:len(types)]


register(Signature("array_distinct", 1, 1, _same_array("array_distinct")))
register(Signature("array_reverse", 1, 1, _same_array("array_reverse")))
register(Signature("array_position", 2, 2, _needle("array_position", "int")))
register(Signature("array_remove", 2, 2, _needle("array_remove", "array")))
register(Signature("array_append", 2, 2, _add_element("array_append")))
register(Signature("array_prepend", 2, 2, _add_element("array_prepend")))
register(Signature("array_concat", 1, None, _arrays("array_concat")))
register(Signature("array_union", 2, 2, _arrays("array_union")))
register(Signature("array_except", 2, 2, _arrays("array_except")))
register(Signature("array_intersect", 2, 2, _arrays("array_intersect")))
register(Signature("array_max", 1, 1, _array_element_of("array_max")))
register(Signature("array_min", 1, 1, _array_element_of("array_min")))
register(Signature("array_slice", 2, 3, _array_slice))
register(Signature("array_join", 2, 3, _array_join))
register(Signature("array_sort", 1, 3, _array_sort))
register(Signature("map_keys", 1, 1, _map_keys))
register(Signature("map_values", 1, 1, _map_values))
register(Signature("map_entries", 1, 1, _map_entries))
register(Signature("map_from_arrays", 2, 2, _map_from_arrays))
register(Signature("map_union", 1, None, _map_union))
register(Signature("str_to_map", 1, 3, _str_to_map))
register(Signature("regexp_extract_all", 2, 3, _regexp_extract_all))
# (sqlglot reads ARRAY_JOIN as its ArrayToString, bound by that name)
ALIASES.setdefault("array_to_string", "array_join")
