"""Kernels of the VARIANT functions (signatures in ``sqlengine.functions_variant``). A VARIANT
column reaches a kernel as its storage text (sqlengine/variant.py), and a VARIANT result is
returned as such text."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa

from sqlengine import variant as V
from sqlengine.errors import ExecutionError

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def _parser(try_: bool) -> Kernel:
    """PARSE_JSON fails naming the text (as Flink: 'Failed to parse json string: ...');
    TRY_PARSE_JSON gives NULL. A NULL text, or a NULL allow_duplicate_keys, gives NULL."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        texts = args[0].cast(pa.string()).to_pylist()
        flags = args[1].to_pylist() if len(args) > 1 else [False] * len(texts)
        values: list[str | None] = []
        done: dict[tuple[str, bool], str] = {}  # (each distinct text parsed once)
        for t, dup in zip(texts, flags):
            if t is None or dup is None:
                values.append(None)
                continue
            if (t, bool(dup)) in done:
                values.append(done[t, bool(dup)])
                continue
            try:
                values.append(done.setdefault((t, bool(dup)), V.parse(t, bool(dup))))
            except V.ParseError as e:
                if try_:
                    values.append(None)
                    continue
                shown = t if len(t) <= 200 else t[:200] + "..."
                msg = f"Failed to parse json string: {shown} ({e})"
                raise ExecutionError(msg) from None
        return pa.array(values, pa.string())

    return kernel


def _get(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """v['key'] / v[i] (i from 1): NULL where absent; a key into no object, or an index into
    no array, fails as in Flink."""
    raws, keys = args[0].cast(pa.string()).to_pylist(), args[1].to_pylist()
    by_index = pa.types.is_integer(args[1].type)
    values: list[str | None] = []
    try:
        for raw, key in zip(raws, keys):
            if raw is None or key is None:
                values.append(None)
            else:
                values.append(V.element(raw, int(key)) if by_index else V.member(raw, key))
    except ValueError as e:
        raise ExecutionError(str(e)) from None
    return pa.array(values, pa.string())


def _text(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """A variant's JSON text as Flink prints it (JSON_STRING; its display)."""
    return V.texts(args[0].cast(pa.string()))


KERNELS: dict[str, Kernel] = {
    "parse_json": _parser(False),
    "try_parse_json": _parser(True),
    "variant_get": _get,
    "variant_text": _text,
}
