"""Flink's string functions beyond the basic ones in ``sqlengine.functions``: REGEXP_REPLACE,
CONCAT_WS, LEFT / RIGHT, ASCII / CHR, BTRIM, STARTSWITH / ENDSWITH, REGEXP_COUNT /
REGEXP_INSTR / REGEXP_SUBSTR, TRANSLATE, OVERLAY, ELT, TO_BASE64 / FROM_BASE64, URL_ENCODE /
URL_DECODE, PARSE_URL, and the hash functions MD5 / SHA1 / SHA2 / SHA224 ... SHA512
(signatures; kernels in ``runtime.kernels_text``)."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import ALIASES, Signature, _err, _strings, register


def _concat_ws(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("concat_ws", types, "STRING arguments")
    return T.STRING, [T.STRING] * len(types)


def _chr(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_integer(types[0]) or types[0] == T.NULL):
        raise _err("chr", types, "an integer")
    return T.STRING, [T.BIGINT]


def _elt(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_integer(types[0]) or types[0] == T.NULL):
        raise _err("elt", types, "an integer index, then the values")
    rest = T.common_type(types[1:], "ELT values")
    rest = T.STRING if rest == T.NULL else rest
    return rest, [T.INT] + [rest] * (len(types) - 1)


def _overlay(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types[:2]:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("overlay", types, "STRING values and integer positions")
    for t in types[2:]:
        if not (T.is_integer(t) or t == T.NULL):
            raise _err("overlay", types, "STRING values and integer positions")
    return T.STRING, [T.STRING, T.STRING] + [T.INT] * (len(types) - 2)


register(Signature("regexp_replace", 3, 3, _strings("regexp_replace", T.STRING),
                   literal_args=(1, 2)))
register(Signature("concat_ws", 1, None, _concat_ws))
register(Signature("left", 2, 2, _strings("left", T.STRING, (T.INT,), 1)))
register(Signature("right", 2, 2, _strings("right", T.STRING, (T.INT,), 1)))
register(Signature("ascii", 1, 1, _strings("ascii", T.INT)))
register(Signature("chr", 1, 1, _chr))
register(Signature("btrim", 1, 2, _strings("btrim", T.STRING), literal_args=(1,)))
register(Signature("starts_with", 2, 2, _strings("startswith", T.BOOLEAN), literal_args=(1,)))
register(Signature("ends_with", 2, 2, _strings("endswith", T.BOOLEAN), literal_args=(1,)))
register(Signature("regexp_count", 2, 2, _strings("regexp_count", T.INT), literal_args=(1,)))
register(Signature("regexp_instr", 2, 2, _strings("regexp_instr", T.INT), literal_args=(1,)))
register(Signature("regexp_substr", 2, 2, _strings("regexp_substr", T.STRING),
                   literal_args=(1,)))
register(Signature("translate", 3, 3, _strings("translate", T.STRING), literal_args=(1, 2)))
register(Signature("overlay", 3, 4, _overlay))
register(Signature("elt", 2, None, _elt))
for _fn in ("to_base64", "from_base64", "url_encode", "url_decode", "md5", "sha1", "sha224",
            "sha256", "sha384", "sha512"):
    register(Signature(_fn, 1, 1, _strings(_fn, T.STRING)))
register(Signature("sha2", 2, 2, _strings("sha2", T.STRING, (T.INT,), 1), literal_args=(1,)))
register(Signature("parse_url", 2, 3, _strings("parse_url", T.STRING), literal_args=(1, 2)))

ALIASES.update({"sha": "sha1", "startswith": "starts_with", "endswith": "ends_with"})
