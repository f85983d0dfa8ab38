"""Flink's VARIANT type (Flink 2.1+): a semi-structured value, made by PARSE_JSON /
TRY_PARSE_JSON and read with ``v['key']`` / ``v[i]``.

Flink keeps a variant in its binary encoding (Spark's): a value, whose objects hold their
fields sorted by name and whose numbers have types (TINYINT .. BIGINT by size, DECIMAL with its
scale for a number with a fraction or past BIGINT, DOUBLE for one with an exponent or past 38
digits), beside metadata: the dictionary of the document's keys in the order they first came.
``=`` compares those bytes, so ``7`` differs from ``7.0`` and ``{"a":1,"b":2}`` from
``{"b":2,"a":1}`` though both print the same, and ``v['a']`` keeps the whole document's
dictionary. Here a variant is an Arrow extension type over a string holding the same two
things, as JSON text: ``[[keys in first-seen order], value]``, the value's objects sorted by
key (Java's UTF-16 order), its numbers written so that their types show (an integer bare, a
DECIMAL with its fraction digits, a DOUBLE with an exponent). Equal texts are equal variants.

As Flink prints it (``toString``, JSON_STRING, the print connector): compact, keys sorted,
a DECIMAL without trailing zeros in plain notation, a DOUBLE as Java's Double.toString.
As in Flink 2.3, nothing casts to or from a VARIANT but NULL, and no file format holds one.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from sqlengine.opaque_type import OpaqueType, registered

NAME = "sqlengine.variant"
_SPACE = " \t\r\n"


class VariantType(OpaqueType):
    """VARIANT: its metadata and typed value as JSON text (see the module's docstring);
    ``as_py()`` is its JSON text as Flink prints it ('null' for JSON's null)."""

    NAME = NAME
    STORAGE = pa.string()

    @staticmethod
    def python(raw: Any) -> Any:
        return text(raw)

    @staticmethod
    def from_python(value: Any) -> Any:
        if not isinstance(value, str):
            msg = f"a VARIANT value is given as its JSON text, got {type(value).__name__}"
            raise TypeError(msg)
        return parse(value)


VARIANT = registered(VariantType())


def is_variant(t: pa.DataType) -> bool:
    return isinstance(t, VariantType)


class ParseError(ValueError):
    """A text that is no JSON document (Jackson's reading), or a key given twice."""


# -- parsing JSON text into a variant -------------------------------------------------------

class _Double(float):
    """A number written with an exponent, or past 38 digits: a DOUBLE."""


class _Pairs(list):
    """An object's members as written (a key may come twice)."""


def _number(literal: str) -> object:
    """A number with a fraction or an exponent, typed as Flink's variant builder types it."""
    if "e" in literal or "E" in literal:
        return _Double(float(literal))
    d = decimal.Decimal(literal)
    digits = len(d.as_tuple().digits)
    scale = -d.as_tuple().exponent
    if max(digits, scale) > 38:  # type: ignore[operator]
        return _Double(float(literal))
    return d.copy_abs() if d.is_zero() else d


def _integer(literal: str) -> object:
    n = int(literal)
    if -(2**63) <= n < 2**63:
        return n
    if len(literal.lstrip("-")) > 38:
        return _Double(float(literal))
    return decimal.Decimal(n)


def _no_constant(name: str) -> object:
    raise ParseError(f"Non-standard token '{name}'")


_DECODER = json.JSONDecoder(parse_float=_number, parse_int=_integer,
                            parse_constant=_no_constant, object_pairs_hook=_Pairs)


def parse(document: str, duplicates: bool = False) -> str:
    """PARSE_JSON: the variant (its storage text) of a JSON document. As Flink's Jackson,
    the document's first value, what follows it ignored ('{"a":1} x'), but for a number or a
    literal run on into other characters; a key given twice in an object is an error, or its
    last value with ``duplicates``.

    Raises:
        ParseError: the text is no JSON document, or holds a key twice.
    """
    body = document.lstrip(_SPACE)
    try:
        value, end = _DECODER.raw_decode(body)
    except (ValueError, RecursionError, decimal.InvalidOperation) as e:
        raise ParseError(str(e).split(":")[0] if str(e) else "not a JSON document") from None
    after = body[end:end + 1]
    if after and not isinstance(value, _Pairs | list | str) and (
            after not in _SPACE if not isinstance(value, bool) and value is not None
            else after.isalnum() or after in "_$"):
        raise ParseError("Unexpected character after a root-level value")
    keys: dict[str, None] = {}
    typed = _typed(value, keys, duplicates)
    return _dumps([list(keys), typed])


def _typed(value: object, keys: dict[str, None], duplicates: bool) -> object:
    """The value with each object's members deduplicated and sorted by key (Java's UTF-16
    order), its keys recorded in ``keys`` in the order they first come."""
    if isinstance(value, _Pairs):
        members: dict[str, object] = {}
        for k, v in value:
            keys.setdefault(k, None)
            if k in members and not duplicates:
                raise ParseError("VARIANT_DUPLICATE_KEY")
            members[k] = _typed(v, keys, duplicates)
        return dict(sorted(members.items(), key=lambda kv: kv[0].encode("utf-16-be")))
    if isinstance(value, list):
        return [_typed(v, keys, duplicates) for v in value]
    return value


def _dumps(value: object) -> str:
    """Storage text: JSON with a DOUBLE's exponent always written (``1000.0e0``), a DECIMAL
    with its scale (``1.50``), an integer bare."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(k)}:{_dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_dumps(v) for v in value) + "]"
    if isinstance(value, _Double):
        if value != value or value in (float("inf"), float("-inf")):
            return "1e99999" if value > 0 else "-1e99999"
        r = repr(float(value))
        return r if "e" in r else r + "e0"
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)  # (int, bool, None)


def _string(s: str) -> str:
    from sqlengine.cast import jackson_escapes

    text = json.dumps(s, ensure_ascii=False)
    if any("\ud800" <= c <= "\udfff" for c in text):  # (a lone surrogate: '?', as Java writes)
        text = text.encode("utf-8", "replace").decode("utf-8")
    return jackson_escapes(text)


# -- reading a variant ----------------------------------------------------------------------

def _stored_number(literal: str) -> object:
    if "e" in literal or "E" in literal:
        return _Double(float(literal))
    return decimal.Decimal(literal)


_STORED = json.JSONDecoder(parse_float=_stored_number)


def load(raw: str) -> tuple[list[str], object]:
    """A variant's dictionary of keys and its typed value."""
    keys, value = _STORED.decode(raw)
    return keys, value


def texts(arr: pa.Array) -> pa.Array:
    """A VARIANT column (or its storage) as Flink prints it; each distinct value once."""
    raws = (arr.storage if isinstance(arr.type, pa.ExtensionType) else arr).to_pylist()
    seen: dict[str, str] = {}
    return pa.array([None if r is None else seen.get(r) or seen.setdefault(r, text(r))
                     for r in raws], pa.string())


def text(raw: str) -> str:
    """The variant's JSON text as Flink prints it."""
    return _text(load(raw)[1])


def _text(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(k)}:{_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_text(v) for v in value) + "]"
    if isinstance(value, _Double):
        from sqlengine.cast import java_double_text

        return java_double_text(float(value))
    if isinstance(value, decimal.Decimal):  # (stripped of trailing zeros, every digit kept)
        return format(value.normalize(_EXACT), "f") if not value.is_zero() else "0"
    if isinstance(value, str):
        return _string(value)
    return json.dumps(value)


_EXACT = decimal.Context(prec=80)  # (normalize() rounds to the context's precision: 28)


def member(raw: str, key: str) -> str | None:
    """``v['key']``: the member's variant (the document's dictionary kept), None if absent.

    Raises:
        ValueError: the variant holds no object.
    """
    return _part(raw, dict, "String key access on variant requires an object variant, but a "
                 "non-object variant was provided.", lambda v: (key in v, key))


def element(raw: str, index: int) -> str | None:
    """``v[i]`` (from 1): the element's variant, None past either end.

    Raises:
        ValueError: the variant holds no array.
    """
    return _part(raw, list, "Integer index access on variant requires an array variant, but a "
                 "non-array variant was provided.", lambda v: (1 <= index <= len(v), index - 1))


def _part(raw: str, kind: type, refusal: str,
          where: Callable[[Any], tuple[bool, Any]]) -> str | None:
    """The variant of a member / element of the ``kind`` of value ``raw`` holds (None when
    ``where`` finds it absent), with the document's dictionary."""
    keys, value = load(raw)
    if not isinstance(value, kind):
        raise ValueError(refusal)
    present, at = where(value)
    return _dumps([keys, value[at]]) if present else None
