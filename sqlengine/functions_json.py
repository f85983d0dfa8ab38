"""Signatures of the SQL/JSON functions (bound by ``sqlengine.bind_json``; kernels in
``runtime.kernels_json``). JSON_STRING is an ordinary call; the others carry their clauses as
constant arguments. JSON_QUOTE / JSON_UNQUOTE are ordinary calls too."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import BindError
from sqlengine.functions import Inference, Signature, register


def _as_given(result: pa.DataType) -> Inference:
    return lambda types: (result, list(types))


def not_json_convertible(t: pa.DataType) -> pa.DataType | None:
    """The (element) type in ``t`` Flink cannot write as JSON (DATE, TIME, intervals), or
    None: strings, binary strings, numbers, booleans, timestamps, arrays, maps and rows of
    those are."""
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return not_json_convertible(t.value_type)
    if pa.types.is_map(t):
        return not_json_convertible(t.key_type) or not_json_convertible(t.item_type)
    if pa.types.is_struct(t):
        return next((bad for f in t if (bad := not_json_convertible(f.type)) is not None),
                    None)
    if pa.types.is_date(t) or pa.types.is_time(t) or T.is_interval(t):
        return t
    return None


def _json_string(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    bad = not_json_convertible(types[0])
    if bad is not None:
        msg = (f"JSON_STRING cannot convert a {T.type_name(bad)} to JSON (strings, binary "
               "strings, numbers, booleans, timestamps, arrays, maps and rows)")
        raise BindError(msg)
    return T.STRING, list(types)


def _json_text(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        if not (T.is_string(types[0]) or types[0] == T.NULL):
            raise BindError(f"{name.upper()} expects a STRING, got {T.type_name(types[0])}")
        return T.STRING, [T.STRING]

    return infer


register(Signature("json_string", 1, 1, _json_string))
register(Signature("json_quote", 1, 1, _json_text("json_quote")))
register(Signature("json_unquote", 1, 1, _json_text("json_unquote")))
register(Signature("json_value", 6, 6, _as_given(T.STRING), literal_args=(2, 4)))
register(Signature("json_query", 5, 5, _as_given(T.STRING), literal_args=(2, 3, 4)))
register(Signature("json_exists", 3, 3, _as_given(T.BOOLEAN), literal_args=(2,)))
register(Signature("is_json", 2, 2, _as_given(T.BOOLEAN), literal_args=(1,)))
register(Signature("json_object", 2, None, _as_given(T.STRING), literal_args=(0, 1)))
register(Signature("json_array", 2, None, _as_given(T.STRING), literal_args=(0, 1)))
