"""Flink's string functions beyond the basic ones in ``sqlengine.functions``: REGEXP_REPLACE,
CONCAT_WS, LEFT / RIGHT, ASCII / CHR, BTRIM, STARTSWITH / ENDSWITH, REGEXP_COUNT /
REGEXP_INSTR / REGEXP_SUBSTR, TRANSLATE, OVERLAY, ELT, TO_BASE64 / FROM_BASE64, URL_ENCODE /
URL_DECODE, PARSE_URL, REPLACE / REGEXP / REGEXP_EXTRACT (any pattern expression), ENCODE /
DECODE, PRINTF, IS_ALPHA / IS_DIGIT / IS_DECIMAL, INET_ATON / INET_NTOA (IPv4 addresses), and
the hash functions MD5 / SHA1 / SHA2 / SHA224 ... SHA512 (signatures; kernels in
``runtime.kernels_text``)."""

from __future__ import annotations

from collections.abc import Callable

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


def _encode(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    for t in types:
        if not (T.is_string(t) or t == T.NULL):
            raise _err("encode", types, "a STRING and a charset name")
    return pa.binary(), [T.STRING, T.STRING]


def _decode(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (pa.types.is_binary(types[0]) or types[0] == T.NULL) or \
            not (T.is_string(types[1]) or types[1] == T.NULL):
        raise _err("decode", types, "BYTES and a charset name")
    return T.STRING, [pa.binary(), T.STRING]


def _inet_ntoa(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_integer(types[0]) or types[0] == T.NULL):
        raise _err("inet_ntoa", types, "an integer (INT or BIGINT)")
    return T.STRING, [T.BIGINT]


def _printf(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_string(types[0]) or types[0] == T.NULL):
        raise _err("printf", types, "a STRING format, then the values")
    return T.STRING, [T.STRING] + [T.STRING if t == T.NULL else t for t in types[1:]]


register(Signature("regexp_replace", 3, 3, _strings("regexp_replace", T.STRING)))
register(Signature("concat_ws", 1, None, _concat_ws))
register(Signature("left", 2, 2, _strings("left", T.STRING, (T.INT,), 1)))
register(Signature("right", 2, 2, _strings("right", T.STRING, (T.INT,), 1)))
register(Signature("ascii", 1, 1, _strings("ascii", T.INT)))
register(Signature("chr", 1, 1, _chr))
register(Signature("btrim", 1, 2, _strings("btrim", T.STRING)))
def _affix(name: str) -> Callable[[list[pa.DataType]], tuple[pa.DataType, list[pa.DataType]]]:
    """STARTSWITH / ENDSWITH: two STRINGs or two BYTES (as Flink's)."""

    def infer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
        known = [t for t in types if t != T.NULL]
        if known and all(pa.types.is_binary(t) for t in known):
            return T.BOOLEAN, [pa.binary()] * 2
        if all(T.is_string(t) for t in known):
            return T.BOOLEAN, [T.STRING] * 2
        raise _err(name, types, "two STRING or two BYTES arguments")

    return infer


register(Signature("starts_with", 2, 2, _affix("startswith")))
register(Signature("ends_with", 2, 2, _affix("endswith")))
register(Signature("regexp_count", 2, 2, _strings("regexp_count", T.INT)))
register(Signature("regexp_instr", 2, 2, _strings("regexp_instr", T.INT)))
# (INSTR(s, sub) is POSITION(sub IN s): sqlengine/dialect.py)
register(Signature("instr", 3, 4, _strings("instr", T.INT, (T.INT, T.INT), 2)))
register(Signature("regexp_substr", 2, 2, _strings("regexp_substr", T.STRING)))
register(Signature("translate", 3, 3, _strings("translate", T.STRING)))
register(Signature("overlay", 3, 4, _overlay))
register(Signature("elt", 2, None, _elt))
def _to_base64(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not (T.is_string(t) or pa.types.is_binary(t) or t == T.NULL):
        raise _err("to_base64", types, "a STRING or BYTES value")
    return T.STRING, [t if pa.types.is_binary(t) else T.STRING]


def _hash_code(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if not (T.is_string(t) or T.is_integer(t) or pa.types.is_floating(t) or
            pa.types.is_boolean(t) or pa.types.is_date(t) or pa.types.is_decimal(t) or
            t == T.NULL):
        raise _err("hash_code", types, "a STRING, number, DATE or BOOLEAN value (Java's "
                   "hashCode of it)")
    return T.INT, [T.STRING if t == T.NULL else t]


register(Signature("to_base64", 1, 1, _to_base64))
register(Signature("hash_code", 1, 1, _hash_code))
for _fn in ("from_base64", "url_encode", "url_decode", "md5", "sha1", "sha224",
            "sha256", "sha384", "sha512"):
    register(Signature(_fn, 1, 1, _strings(_fn, T.STRING)))
register(Signature("sha2", 2, 2, _strings("sha2", T.STRING, (T.INT,), 1)))
register(Signature("parse_url", 2, 3, _strings("parse_url", T.STRING)))

# (These replace the signatures of ``sqlengine.functions``, which wanted constant patterns:
# Flink takes any expression, a NULL one giving NULL.)
register(Signature("replace", 3, 3, _strings("replace", T.STRING)))
register(Signature("regexp", 2, 2, _strings("regexp", T.BOOLEAN)))
register(Signature("regexp_extract", 2, 3, _strings("regexp_extract", T.STRING, (T.STRING,
                                                                                 T.INT), 1)))
register(Signature("encode", 2, 2, _encode))
register(Signature("decode", 2, 2, _decode))
register(Signature("printf", 1, None, _printf))
register(Signature("inet_aton", 1, 1, _strings("inet_aton", T.BIGINT)))
register(Signature("inet_ntoa", 1, 1, _inet_ntoa))
for _fn in ("is_alpha", "is_digit", "is_decimal"):
    register(Signature(_fn, 1, 1, _strings(_fn, T.BOOLEAN)))

ALIASES.update({"sha": "sha1", "startswith": "starts_with", "endswith": "ends_with"})
