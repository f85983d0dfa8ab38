"""Flink's math functions beyond the arithmetic operators: trigonometry, logarithms to any
base, PI / E, RAND / RAND_INTEGER, BIN / HEX, UUID (signatures; kernels in
``runtime.kernels_math``)."""

from __future__ import annotations

import pyarrow as pa

from sqlengine import types as T
from sqlengine.functions import Inference, Signature, _double, _err, register


def _constant(t: pa.DataType) -> Inference:
    return lambda types: (t, [])


def _rand(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    """RAND([seed INT]): a DOUBLE in [0, 1)."""
    for t in types:
        if not (T.is_integer(t) or t == T.NULL):
            raise _err("rand", types, "an integer seed")
    return T.DOUBLE, [T.INT] * len(types)


def _rand_integer(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    """RAND_INTEGER([seed INT,] bound INT): an INT in [0, bound)."""
    for t in types:
        if not (T.is_integer(t) or t == T.NULL):
            raise _err("rand_integer", types, "integer arguments")
    return T.INT, [T.INT] * len(types)


def _bin(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_integer(types[0]) or types[0] == T.NULL):
        raise _err("bin", types, "an integer argument")
    return T.STRING, [T.BIGINT]


def _hex(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    t = types[0]
    if T.is_string(t) or pa.types.is_binary(t):
        return T.STRING, [t]
    if not (T.is_numeric(t) or t == T.NULL):
        raise _err("hex", types, "an integer or a STRING")
    return T.STRING, [T.BIGINT]


for _fn in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "cot",
            "degrees", "radians", "log2"):
    register(Signature(_fn, 1, 1, _double(_fn)))
register(Signature("atan2", 2, 2, _double("atan2", 2)))
register(Signature("log", 1, 2, _double("log", 2)))
register(Signature("pi", 0, 0, _constant(T.DOUBLE)))
register(Signature("e", 0, 0, _constant(T.DOUBLE)))
register(Signature("rand", 0, 1, _rand, literal_args=(0,)))
register(Signature("rand_integer", 1, 2, _rand_integer))
register(Signature("uuid", 0, 0, _constant(T.STRING)))
register(Signature("bin", 1, 1, _bin))
register(Signature("hex", 1, 1, _hex))


def _unhex(types: list[pa.DataType]) -> tuple[pa.DataType, list[pa.DataType]]:
    if not (T.is_string(types[0]) or types[0] == T.NULL):
        raise _err("unhex", types, "a STRING of hexadecimal digits")
    return pa.binary(), [T.STRING]


register(Signature("unhex", 1, 1, _unhex))
