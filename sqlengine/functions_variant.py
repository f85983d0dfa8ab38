"""Signatures of Flink's VARIANT functions (sqlengine/variant.py; kernels in
``runtime.kernels_variant``): PARSE_JSON / TRY_PARSE_JSON(json [, allow_duplicate_keys]), and
the internal ``variant_get`` that ``v['key']`` / ``v[i]`` bind to (bind_nested.bracket)."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import Inference, Signature, _err, register
from sqlengine.variant import VARIANT


def _parse(name: str) -> Inference:
    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        if not (T.is_string(types[0]) or types[0] == T.NULL) or (
                len(types) > 1 and types[1] not in (T.BOOLEAN, T.NULL)):
            raise _err(name, types, "a STRING JSON text and, optionally, a BOOLEAN "
                       "allow_duplicate_keys")
        return VARIANT, [T.STRING, T.BOOLEAN][:len(types)]

    return infer


def _get(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    return VARIANT, list(types)


register(Signature("parse_json", 1, 2, _parse("parse_json")))
register(Signature("try_parse_json", 1, 2, _parse("try_parse_json")))
register(Signature("variant_get", 2, 2, _get))
register(Signature("variant_text", 1, 1, lambda types: (T.STRING, list(types))))
