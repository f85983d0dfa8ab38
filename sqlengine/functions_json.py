"""Signatures of the SQL/JSON functions (bound by ``sqlengine.bind_json``; kernels in
``runtime.kernels_json``). JSON_STRING is an ordinary call; the others carry their clauses as
constant arguments."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import Inference, Signature, register


def _as_given(result: pa.DataType) -> Inference:
    return lambda types: (result, list(types))


register(Signature("json_string", 1, 1, _as_given(T.STRING)))
register(Signature("json_value", 6, 6, _as_given(T.STRING), literal_args=(1, 2, 4)))
register(Signature("json_query", 5, 5, _as_given(T.STRING), literal_args=(1, 2, 3, 4)))
register(Signature("json_exists", 3, 3, _as_given(T.BOOLEAN), literal_args=(1, 2)))
register(Signature("is_json", 2, 2, _as_given(T.BOOLEAN), literal_args=(1,)))
register(Signature("json_object", 2, None, _as_given(T.STRING), literal_args=(0, 1)))
register(Signature("json_array", 2, None, _as_given(T.STRING), literal_args=(0, 1)))
