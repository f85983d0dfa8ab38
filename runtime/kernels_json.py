"""Kernels of the SQL/JSON functions (Flink's semantics, Calcite's JsonFunctions): JSON_VALUE,
JSON_QUERY, JSON_EXISTS, IS JSON, JSON_STRING, JSON_OBJECT, JSON_ARRAY, JSON(s) inside them.

Documents are parsed once per distinct value of a batch (``per_distinct``); JSON text is
written as Jackson writes it (compact, no spaces). A behaviour argument is a string constant:
'NULL', 'ERROR', 'DEFAULT' (the default value's argument follows), 'EMPTY ARRAY',
'EMPTY OBJECT', 'TRUE', 'FALSE', 'UNKNOWN'.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import cast_array, jackson_escapes
from sqlengine.errors import ExecutionError
from sqlengine.json_path import Path, PathError, evaluate, parse_path, path_is_indefinite
from sqlengine.runtime.kernels_text import java_double_text, per_distinct
from sqlengine.runtime.string_kernels import join_skipping_nulls

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]

_MISSING = object()
_SPACE = " \t\r\n"


def dumps(value: object) -> str:
    """JSON text as Jackson writes it: compact, doubles with a fraction ('1.0'), a number
    read from a document as it was written (see _number)."""
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dict) and any(isinstance(v, decimal.Decimal | dict | list)
                                       for v in value.values()):
        return "{" + ",".join(f"{_plain_dumps(k)}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list) and any(isinstance(v, decimal.Decimal | dict | list)
                                       for v in value):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return _plain_dumps(value)


def _plain_dumps(value: object) -> str:
    return jackson_escapes(json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                                      allow_nan=False))


def _number(text: str) -> decimal.Decimal:
    """A document's number with a fraction or an exponent, as Flink's Jackson reads it (a
    BigDecimal): its digits kept ('1.50', '1E+3'), no negative zero."""
    d = decimal.Decimal(text)
    return d.copy_abs() if d.is_zero() else d


def _parse(text: str) -> object:
    """The document's value as Flink's Jackson reads it: the first value of the text, what
    follows it ignored ('{"a":1} x' is {"a":1}), but for a number or a literal run on into
    other characters ('1x', 'truex')."""
    body = text.lstrip(_SPACE)
    try:
        value, end = _DECODER.raw_decode(body)
    except (ValueError, RecursionError, decimal.InvalidOperation):
        raise PathError("not a JSON document") from None
    after = body[end:end + 1]
    if after and not isinstance(value, dict | list | str) and (
            after not in _SPACE if not isinstance(value, bool) and value is not None
            else after.isalnum() or after in "_$"):
        raise PathError("not a JSON document")
    return value


class _NullDocument(PathError):
    """The document is JSON's null: Flink's JSON functions take a path into it for an error,
    in lax mode too."""


def _document(text: str, path: Path) -> object:
    """The parsed document for ``path``: a text that is no JSON is an error in strict mode
    and empty in lax mode (None is returned: nothing is selected), as Flink's (Calcite's
    lax mode takes the failure for no value); the document null is an error."""
    try:
        doc = _parse(text)
    except PathError:
        if not path.strict:
            return _MISSING
        raise
    if doc is None and path.steps:
        raise _NullDocument("a path into the JSON null")
    return doc


def _select(path: Path, text: str) -> list[object]:
    """The items ``path`` selects in the document ``text`` (none: a lax path into a text that
    is no JSON)."""
    doc = _document(text, path)
    return [] if doc is _MISSING else evaluate(path, doc)


def _no_constant(name: str) -> object:
    raise ValueError(name)


class _Failure(Exception):
    """JSON_VALUE / JSON_QUERY found an error: the ON ERROR behaviour applies."""


def _scalar_text(v: object) -> str | None:
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    return dumps(v)


def _json_value(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """JSON_VALUE(doc, path, empty, empty_default, error, error_default)."""
    doc = args[0]
    if lits[1] is None:
        return pa.nulls(len(doc), out)
    path = parse_path(str(lits[1]))
    empty, error = str(lits[2]), str(lits[4])

    def one(text: str) -> tuple[str, str | None]:
        """(outcome, text): outcome 'value', 'empty' or 'error'."""
        try:
            items = _select(path, text)
        except PathError as e:
            return "error", str(e)
        if path_is_indefinite(path):
            items = [items]  # (Jayway: an indefinite path's value is the list it selects)
        if not items:
            return "empty", None
        if len(items) > 1 or isinstance(items[0], dict | list):
            return "error", "the path selects no single scalar value"
        return "value", _scalar_text(items[0])

    found = per_distinct(doc, lambda v: dict(zip(("o", "t"), one(v))),
                         pa.struct([("o", pa.string()), ("t", pa.string())]))
    outcome = pc.struct_field(found, [0])
    text = pc.struct_field(found, [1])
    is_value = pc.fill_null(pc.equal(outcome, "value"), False)
    values = cast_array(pc.if_else(is_value, text, pa.nulls(len(text), pa.string())), out,
                        safe=True)
    # A value that does not convert to the RETURNING type is an error too.
    bad_cast = pc.and_(pc.and_(is_value, pc.is_valid(text)), pc.is_null(values))
    is_error = pc.or_(pc.fill_null(pc.equal(outcome, "error"), False), bad_cast)
    is_empty = pc.fill_null(pc.equal(outcome, "empty"), False)
    result = values
    for mask, kind, default, what in ((is_empty, empty, args[3], "empty"),
                                      (is_error, error, args[5], "error")):
        if not pc.any(mask).as_py():
            continue
        if kind == "ERROR":
            detail = _first_detail(found, mask) if what == "error" else "no value"
            msg = f"JSON_VALUE: {detail} (ERROR ON {what.upper()})"
            raise ExecutionError(msg)
        fill = cast_array(default, out) if kind == "DEFAULT" else pa.nulls(len(doc), out)
        result = pc.if_else(mask, fill, result)
    return result


def _first_detail(found: Array, mask: Array) -> str:
    i = pc.index(mask, True).as_py()
    row = found[i].as_py() or {}
    return str(row.get("t") or "not a JSON document")


def _json_query(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """JSON_QUERY(doc, path, wrapper, empty, error): JSON text of an object or array."""
    doc = args[0]
    if lits[1] is None:
        return pa.nulls(len(doc), out)
    path = parse_path(str(lits[1]))
    wrapper, empty, error = str(lits[2]), str(lits[3]), str(lits[4])

    def behave(kind: str, what: str, detail: str) -> str | None:
        if kind == "ERROR":
            msg = f"JSON_QUERY: {detail} (ERROR ON {what})"
            raise ExecutionError(msg)
        return {"EMPTY ARRAY": "[]", "EMPTY OBJECT": "{}"}.get(kind)

    def one(text: str) -> str | None:
        try:
            items = _key_sorted(_select(path, text))
        except PathError as e:
            return behave(error, "ERROR", str(e))
        if path_is_indefinite(path):
            items = [items]  # (Jayway: an indefinite path's value is the list it selects)
        elif items == [None]:  # (a JSON null selected: NULL, with a wrapper or ON EMPTY too)
            return None
        if not items:
            return behave(empty, "EMPTY", "no value")
        if wrapper == "UNCONDITIONAL":
            return dumps(items)
        if wrapper == "CONDITIONAL":  # (Calcite: only an array is not wrapped again)
            if len(items) == 1 and isinstance(items[0], list):
                return dumps(items[0])
            return dumps(items)
        if len(items) == 1 and not path.strict and not isinstance(items[0], dict | list):
            return behave(empty, "EMPTY", "no value")  # (Calcite: a lax scalar is no value)
        if len(items) > 1 or not isinstance(items[0], dict | list):
            return behave(error, "ERROR", "the path selects no single object or array")
        return dumps(items[0])

    if not pa.types.is_list(out):
        return per_distinct(doc, one, pa.string())

    def elements(text: str) -> list[str | None] | None:
        """RETURNING ARRAY<STRING>: the array's elements (a string's own text)."""
        found = one(text)
        if found is None:
            return None
        value = _parse(found)
        if not isinstance(value, list):
            kept = behave(error, "ERROR", "the path selects no array")
            return None if kept is None else []
        return [None if v is None else v if isinstance(v, str) else dumps(v) for v in value]

    return per_distinct(doc, elements, out)


def _key_sorted(value: object) -> object:
    """Objects with their members in key order, at every depth, as Flink's JSON_QUERY writes
    them (Calcite's JsonFunctions: Jackson with ORDER_MAP_ENTRIES_BY_KEYS)."""
    if isinstance(value, dict):
        return {k: _key_sorted(value[k]) for k in sorted(value, key=java_order)}
    if isinstance(value, list):
        return [_key_sorted(v) for v in value]
    return value


def _json_exists(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """JSON_EXISTS(doc, path, error): whether the path selects something, as Flink's (Calcite
    over Jayway: whether the selection is not null). A definite path selecting a JSON null
    does not exist; a path with a wildcard or a list selects a JSON array, even an empty one,
    once the definite steps before it found a value."""
    doc = args[0]
    if lits[1] is None:
        return pa.nulls(len(doc), out)
    path = parse_path(str(lits[1]))
    error = str(lits[2])
    indefinite = path_is_indefinite(path)
    first = next((i for i in range(len(path.steps))
                  if path_is_indefinite(dataclasses.replace(path, steps=path.steps[i:i + 1]))),
                 len(path.steps))
    prefix = dataclasses.replace(path, steps=path.steps[:first])

    def exists(text: str) -> bool:
        doc = _document(text, path)
        if doc is _MISSING:
            return False
        # (Jayway: no error past a wildcard, an empty array at worst)
        found = evaluate(prefix if indefinite else path, doc)
        return bool(found) and found[0] is not None

    def one(text: str) -> bool | None:
        try:
            return exists(text)
        except PathError as e:
            if error == "ERROR":
                msg = f"JSON_EXISTS: {e} (ERROR ON ERROR)"
                raise ExecutionError(msg) from None
            return {"TRUE": True, "FALSE": False}.get(error)

    return per_distinct(doc, one, pa.bool_())


def _is_json(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """s IS JSON [VALUE | SCALAR | ARRAY | OBJECT]; a NULL string is not JSON (FALSE)."""
    kind = str(lits[1])

    def one(text: str) -> bool:
        try:
            v = _parse(text)
        except PathError:
            return False
        if kind == "OBJECT":
            return isinstance(v, dict)
        if kind == "ARRAY":
            return isinstance(v, list)
        if kind == "SCALAR":
            return not isinstance(v, dict | list)
        return True

    return pc.fill_null(per_distinct(args[0], one, pa.bool_()), False)


def _big_decimal_text(v: float) -> str:
    """new BigDecimal(Double.toString(v)).toString(): Python's Decimal text follows the same
    rule (plain, or E notation when the exponent is positive or below -6); BigDecimal has no
    -0. Infinities and NaN are JSON strings, as Jackson writes them."""
    if not math.isfinite(v):
        return dumps(java_double_text(v))
    d = decimal.Decimal(java_double_text(v))
    return str(d.copy_abs() if d.is_zero() else d)


def json_texts(a: Array, raw: bool) -> Array:
    """Each value as JSON text ('null' for NULL) as Jackson writes it; ``raw``: the strings
    are JSON already. Arrays, maps and rows become JSON arrays and objects (a row's fields
    by name)."""
    t = a.type
    if raw:
        res = a
    elif pa.types.is_boolean(t):
        res = pc.if_else(a, "true", "false")
    elif pa.types.is_integer(t):
        res = a.cast(pa.string())
    elif pa.types.is_floating(t):
        # (PyFlink 2.3: Java's BigDecimal text of Double.toString, 1.0E-5 as 0.000010 and
        # 1.0E7 as 1.0E+7; a FLOAT widened to a DOUBLE first, 0.1 as 0.10000000149011612)
        res = per_distinct(a.cast(pa.float64()), _big_decimal_text, pa.string())
    elif pa.types.is_decimal(t):
        res = per_distinct(a, lambda v: str(v), pa.string())
    elif pa.types.is_string(t) or pa.types.is_large_string(t):
        res = per_distinct(a, dumps, pa.string())
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t):
        res = per_distinct(a, lambda v: dumps(base64.b64encode(v).decode("ascii")),
                           pa.string())
    elif pa.types.is_map(t):
        pairs = pc.binary_join_element_wise(_member_names(a.keys), json_texts(a.items, False),
                                            ":")
        res = _wrap(pa.ListArray.from_arrays(a.offsets, pairs, mask=a.is_null()), "{", "}")
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        texts = json_texts(a.values, raw=False)
        res = _wrap(type(a).from_arrays(a.offsets, texts, mask=a.is_null()), "[", "]")
    elif pa.types.is_struct(t):
        if t.num_fields == 0:
            res = pa.array(["{}"] * len(a), pa.string())
        else:
            members = [pc.binary_join_element_wise(dumps(f.name),
                                                   json_texts(pc.struct_field(a, [i]), False),
                                                   ":")
                       for i, f in enumerate(t)]
            body = pc.binary_join_element_wise(*members, ",")
            res = pc.binary_join_element_wise("{", body, "}", "")
        res = pc.if_else(pc.is_valid(a), res, pa.nulls(len(a), pa.string()))
    elif t == pa.null():
        return pa.array(["null"] * len(a), pa.string())
    elif pa.types.is_timestamp(t):
        # (as Flink's Jackson writes them: ISO text, the fraction's trailing zeros cut, a
        # TIMESTAMP_LTZ as the UTC instant with a Z: 2024-01-02T03:04:05.5, ...01Z)
        res = per_distinct(a, (lambda v: dumps(_iso_text(v))) if t.tz is None else
                           (lambda v: dumps(_iso_text(v.astimezone(dt.UTC)
                                                      .replace(tzinfo=None)) + "Z")),
                           pa.string())
    else:
        res = per_distinct(cast_array(a, pa.string()), dumps, pa.string())
    return pc.fill_null(res, "null")


def _member_names(keys: Array) -> Array:
    """Map keys as JSON member names (a key that is not a string: its text)."""
    text = keys if pa.types.is_string(keys.type) else cast_array(keys, pa.string())
    return pc.fill_null(per_distinct(text, dumps, pa.string()), '"null"')


def _wrap(lists: Array, left: str, right: str) -> Array:
    return pc.binary_join_element_wise(left, pc.binary_join(lists, ","), right, "")


def _json_string(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    a = args[0]
    text = json_texts(a, raw=False)
    return pc.if_else(pc.is_valid(a), text, pa.nulls(len(a), pa.string()))


_DECODER = json.JSONDecoder(parse_constant=_no_constant, parse_float=_number)


def _json_document(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """JSON(s), a value of JSON_OBJECT / JSON_ARRAY: the document s as Flink reads it with
    Jackson and writes it again: compact, numbers as written (no -0), a key given twice its
    last value. Jackson reads the first value of the text: what follows it is ignored, but
    for a number or a literal run on into other characters ('1x', 'truex'). NULL, or a text
    of white space only (no value), is NULL."""

    def one(text: str) -> str | None:
        if not text.lstrip(_SPACE):
            return None
        try:
            return dumps(_parse(text))
        except PathError:
            raise ExecutionError(f"JSON(): not a JSON document: {text!r}") from None

    return per_distinct(args[0], one, pa.string())


def _json_object(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """json_object(on_null, raw flags, key1, value1, ...): '{"k":v,...}', its members in the
    order of their keys, as Flink writes them (Java's string order: UTF-16 code units)."""
    n = len(args[0])
    absent = lits[0] == "ABSENT"
    raws = str(lits[1])
    pieces = []
    for i in range(2, len(args), 2):
        key, value = args[i], args[i + 1]
        if key.null_count:
            raise ExecutionError("JSON_OBJECT: a key is NULL")
        text = json_texts(value, raw=raws[(i - 2) // 2] == "1")
        piece = pc.binary_join_element_wise(json_texts(key, raw=False), text, ":")
        if absent:
            piece = pc.if_else(pc.is_valid(value), piece, pa.nulls(n, pa.string()))
        pieces.append(piece)
    if not pieces:
        return pa.array(["{}"] * n, pa.string())
    keys = [lits[i] for i in range(2, len(args), 2)]
    if not all(isinstance(k, str) for k in keys):  # (keys computed per row: rare)
        return _objects_by_row([args[i] for i in range(2, len(args), 2)], pieces)
    # (a key given twice: its last member, as Flink's ObjectNode.set overwrites; one left
    # out on NULL leaves the one before)
    last: dict[str, Array] = {}
    for k, piece in zip(keys, pieces):
        last[str(k)] = piece if str(k) not in last else pc.coalesce(piece, last[str(k)])
    pieces = [last[k] for k in sorted(last, key=java_order)]
    body = join_skipping_nulls(pieces, ",") \
        if len(pieces) > 1 else pc.fill_null(pieces[0], "")
    return pc.binary_join_element_wise("{", body, "}", "")


def java_order(key: str) -> bytes:
    """A sort key ordering strings as Java's String.compareTo (by UTF-16 code unit)."""
    return key.encode("utf-16-be", "surrogatepass")


def _objects_by_row(keys: list[Array], pieces: list[Array]) -> Array:
    """JSON objects whose member names differ from row to row, members sorted per row."""
    names = [cast_array(k, pa.string()).to_pylist() for k in keys]
    texts = [p.to_pylist() for p in pieces]
    out = []
    for row in range(len(pieces[0])):
        members = {names[j][row]: texts[j][row] for j in range(len(pieces))
                   if texts[j][row] is not None}  # (a key given twice: its last member)
        out.append("{" + ",".join(members[k] for k in sorted(members, key=java_order)) + "}")
    return pa.array(out, pa.string())


def _json_array(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """json_array(on_null, raw flags, values...): '[v,...]'; ABSENT ON NULL by default."""
    n = len(args[0])
    absent = lits[0] != "NULL"
    raws = str(lits[1])
    pieces = []
    for j, value in enumerate(args[2:]):
        text = json_texts(value, raw=raws[j] == "1")
        if absent:
            text = pc.if_else(pc.is_valid(value), text, pa.nulls(n, pa.string()))
        pieces.append(text)
    if not pieces:
        return pa.array(["[]"] * n, pa.string())
    body = join_skipping_nulls(pieces, ",") \
        if len(pieces) > 1 else pc.fill_null(pieces[0], "")
    return pc.binary_join_element_wise("[", body, "]", "")


def _quote_char(c: str) -> str:
    code = ord(c)
    if code < 128:
        return _QUOTE_ASCII.get(c, c)
    if code > 0xFFFF:  # (Flink writes the code point, then the low surrogate of its pair)
        return f"\\u{code:04x}\\u{0xDC00 + ((code - 0x10000) & 0x3FF):04x}"
    return f"\\u{code:04x}"


_QUOTE_ASCII = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f",
                "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_quote(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """JSON_QUOTE(s): s as a JSON string literal as Flink's JsonQuoteFunction writes it
    ('/' escaped, every character beyond ASCII as \\uXXXX)."""
    return per_distinct(args[0], lambda v: '"' + "".join(map(_quote_char, v)) + '"',
                        pa.string())


_ESCAPE = re.compile(r'\\(["\\/bfnrt]|u[0-9a-fA-F]{4})')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
            "t": "\t"}


def _unquote_one(v: str) -> str:
    """As Flink's JSON_UNQUOTE: a text Jackson reads as JSON (its first value) that starts and
    ends with a quote loses them and has its escapes read ('"a"b1"' is 'a"b1'); a lone
    surrogate is '?', as Java writes it; anything else stays as it is."""
    if len(v) < 2 or v[0] != '"' or v[-1] != '"':
        return v
    try:
        _parse(v)
    except PathError:
        return v  # (not JSON: as it is)
    text = _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1)) or chr(int(m.group(1)[1:], 16)),
                       v[1:-1])
    # (escaped surrogate pairs joined; a lone surrogate written as '?', as Java's UTF-8)
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    return text.encode("utf-8", "replace").decode("utf-8")


def _json_unquote(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """JSON_UNQUOTE(s): the value of a JSON string literal; anything else as it is."""
    return per_distinct(args[0], _unquote_one, pa.string())


def _json_text(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """json_text(value, raw): each value as JSON text (NULL stays NULL) for JSON_ARRAYAGG /
    JSON_OBJECTAGG, which gather the texts; ``raw``: the value is JSON already (a
    JSON_OBJECT / JSON_ARRAY / JSON_QUERY), taken as it is, not quoted."""
    a = args[0]
    t = a.type
    if pa.types.is_floating(t):
        # (as Flink's aggregates write a DOUBLE: Java's BigDecimal text of Double.toString,
        # 1.0E+15 and 0.00010, as the scalar functions do; a FLOAT by Float.toString)
        single = t == pa.float32()
        text = per_distinct(a, lambda v: str(decimal.Decimal(java_double_text(v, single)))
                            if math.isfinite(v) else dumps(java_double_text(v)), pa.string())
    elif pa.types.is_timestamp(t) and t.tz is None:
        # (ISO text with the fraction's trailing zeros cut: 2020-01-02T03:04:05.6)
        text = per_distinct(a, lambda v: dumps(_iso_text(v)), pa.string())
    else:
        text = json_texts(a, raw=lits[1] == "1")
    return pc.if_else(pc.is_valid(a), text, pa.nulls(len(a), pa.string()))


def _iso_text(v: object) -> str:
    """A timestamp as Java's ISO_LOCAL_DATE_TIME writes it (seconds always, the fraction
    without trailing zeros)."""
    text = v.isoformat() if hasattr(v, "isoformat") else str(v)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _paths_per_row(kernel: Kernel, error_at: int, default_at: int | None) -> Kernel:
    """``kernel`` with a path that is a column's value (Flink evaluates it per row): the
    rows of each distinct path computed with that path as a constant; a path that does not
    read is an error of its rows (their ON ERROR behaviour, argument ``error_at``), a NULL
    path gives NULL."""
    def run(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        paths = args[1]
        if lits[1] is not None or paths.null_count == len(paths):
            return kernel(args, lits, out)

        parts: list[tuple[np.ndarray, Array]] = []
        nulls = np.flatnonzero(paths.is_null().to_numpy(zero_copy_only=False))
        if len(nulls):
            parts.append((nulls, pa.nulls(len(nulls), out)))
        for p in pc.unique(paths.drop_null()).to_pylist():
            idx = np.flatnonzero(pc.fill_null(pc.equal(paths, p), False).to_numpy(
                zero_copy_only=False))
            sub = [a.take(pa.array(idx)) for a in args]
            try:
                parse_path(p)
            except ExecutionError as e:
                parts.append((idx, _bad_path(e, str(lits[error_at]), sub, default_at, out)))
                continue
            parts.append((idx, kernel(sub, [lits[0], p, *lits[2:]], out)))
        order = np.concatenate([i for i, _ in parts])
        values = pa.concat_arrays([v.cast(out) for _, v in parts])
        return values.take(pa.array(np.argsort(order, kind="stable")))

    return run


def _bad_path(e: ExecutionError, behaviour: str, args: list[Array], default_at: int | None,
              out: pa.DataType) -> Array:
    """The rows of a path that does not read, by the ON ERROR behaviour."""
    n = len(args[0])
    if behaviour == "ERROR":
        raise ExecutionError(f"{e.message} (ERROR ON ERROR)")
    if behaviour == "DEFAULT" and default_at is not None:
        return cast_array(args[default_at], out)
    fixed = {"TRUE": True, "FALSE": False, "EMPTY ARRAY": "[]", "EMPTY OBJECT": "{}"}
    if behaviour in fixed:
        value = fixed[behaviour]
        if pa.types.is_list(out):
            return pa.array([[]] * n, out) if value == "[]" else pa.nulls(n, out)
        return pa.array([value] * n, out)
    return pa.nulls(n, out)


KERNELS: dict[str, Kernel] = {
    "json_text": _json_text,
    "json_quote": _json_quote,
    "json_unquote": _json_unquote,
    "json_value": _paths_per_row(_json_value, 4, 5),
    "json_query": _paths_per_row(_json_query, 4, None),
    "json_exists": _paths_per_row(_json_exists, 2, None),
    "is_json": _is_json,
    "json_string": _json_string,
    "json_object": _json_object,
    "json_array": _json_array,
    "json": _json_document,
}
