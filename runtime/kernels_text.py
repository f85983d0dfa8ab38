"""Kernels of ``sqlengine.functions_text`` with Flink's semantics (NULL in, NULL out unless
said otherwise).

Most are Arrow kernels. Those Arrow has none for (base64, URL coding, hashes, TRANSLATE,
PARSE_URL) call Python once per distinct value of the batch (``per_distinct``), not per row.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import urllib.parse
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ExecutionError
from sqlengine.runtime.string_kernels import as_int

Array = pa.Array
Kernel = Callable[[list[Array], list[object], pa.DataType], Array]


def per_distinct(a: Array, fn: Callable[[str], object | None], out: pa.DataType) -> Array:
    """``fn`` of each distinct non-NULL value of ``a`` (NULL stays NULL), taken back to the
    rows: one Python call per distinct value."""
    if len(a) == 0:
        return pa.array([], out)
    enc = pc.dictionary_encode(a)
    values = [fn(v) for v in enc.dictionary.to_pylist()]
    return pc.take(pa.array(values, out), enc.indices)


def _nulls_if_null_literal(args: list[Array], lits: list[object], positions: tuple[int, ...],
                           out: pa.DataType) -> Array | None:
    if any(lits[i] is None for i in positions):
        return pa.nulls(len(args[0]), out)
    return None


_JAVA_GROUP = re.compile(r"\\(.)|\$(\d)|(\\)")


def _java_replacement(text: str) -> str:
    """A java.util.regex replacement ($1 for a group, \\x for a literal x) in RE2's form
    (\\1 for a group, \\\\ for a backslash)."""
    def sub(m: re.Match[str]) -> str:
        if m.group(1) is not None:
            return "\\\\" if m.group(1) == "\\" else m.group(1)
        if m.group(2) is not None:
            return "\\" + m.group(2)
        return "\\\\"

    return _JAVA_GROUP.sub(sub, text)


def _regexp_replace(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_REPLACE(s, regex, replacement): every match replaced; NULL when the regex is
    invalid (Flink logs and returns NULL)."""
    none = _nulls_if_null_literal(args, lits, (1, 2), out)
    if none is not None:
        return none
    try:
        return pc.replace_substring_regex(args[0], pattern=str(lits[1]),
                                          replacement=_java_replacement(str(lits[2])))
    except pa.ArrowInvalid:
        return pa.nulls(len(args[0]), out)


def _concat_ws(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """CONCAT_WS(sep, s1, ...): NULL when sep is NULL; NULL strings are skipped."""
    sep, rest = args[0], args[1:]
    if not rest:
        return pc.if_else(pc.is_valid(sep), "", pa.nulls(len(sep), pa.string()))
    return pc.binary_join_element_wise(*rest, sep, null_handling="skip")


def _left_right(left: bool) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        s, n = args
        count = pc.max_element_wise(n.cast(pa.int64()), 0)
        length = pc.utf8_length(s).cast(pa.int64())
        if left:
            starts = pa.array(np.zeros(len(s), np.int64))
            stops = pc.min_element_wise(count, length)
        else:
            stops = length
            starts = pc.max_element_wise(pc.subtract(length, count), 0)
        res = _slice_rows(s, starts, stops)
        valid = pc.and_(pc.is_valid(s), pc.is_valid(n))
        return pc.if_else(valid, res, pa.nulls(len(s), pa.string()))

    return kernel


def _slice_rows(s: Array, starts: Array, stops: Array) -> Array:
    """Characters [start, stop) of each row, positions per row (groups of rows sharing
    a (start, stop) pair are sliced with Arrow's kernel)."""
    st = pc.fill_null(starts, 0).to_numpy(zero_copy_only=False)
    sp = pc.fill_null(stops, 0).to_numpy(zero_copy_only=False)
    pairs = np.stack([st, sp], axis=1)
    uniq, inverse = np.unique(pairs, axis=0, return_inverse=True)
    if len(uniq) == 1:
        return pc.utf8_slice_codeunits(s, start=int(uniq[0, 0]), stop=int(uniq[0, 1]))
    out = pa.nulls(len(s), pa.string())
    inverse = inverse.reshape(-1)
    for i, (a, b) in enumerate(uniq.tolist()):
        mask = pa.array(inverse == i)
        out = pc.if_else(mask, pc.utf8_slice_codeunits(s, start=a, stop=max(a, b)), out)
    return out


def _ascii(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ASCII(s): the code of the first character (its low byte, as Flink's byte value), 0 for
    an empty string."""
    s = args[0]
    first = pc.utf8_slice_codeunits(s, 0, 1)
    return per_distinct(first, lambda v: ord(v) if v else 0, pa.int32())


def _chr(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """CHR(n): the character of code n & 255 (Flink/Hive: '' for a negative n)."""
    n = args[0]
    values = n.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    table = pa.array([chr(i) for i in range(256)] + [""], pa.string())
    idx = np.where(values < 0, 256, values & 255)
    res = pc.take(table, pa.array(idx))
    return pc.if_else(pc.is_valid(n), res, pa.nulls(len(n), pa.string())) if n.null_count \
        else res


def _btrim(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    if len(args) == 1:
        return pc.utf8_trim(args[0], characters=" ")
    if lits[1] is None:
        return pa.nulls(len(args[0]), out)
    return pc.utf8_trim(args[0], characters=str(lits[1]))


def _affix(fn: Callable[..., Array]) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        if lits[1] is None:
            return pa.nulls(len(args[0]), out)
        return fn(args[0], pattern=str(lits[1]))

    return kernel


def _regex(lits: list[object]) -> str | None:
    return None if lits[1] is None else str(lits[1])


def _regexp_count(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    pattern = _regex(lits)
    if pattern is None:
        return pa.nulls(len(args[0]), out)
    try:
        return pc.count_substring_regex(args[0], pattern=pattern).cast(pa.int32())
    except pa.ArrowInvalid:
        return pa.nulls(len(args[0]), out)


def _regexp_substr(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_SUBSTR(s, regex): the first match, NULL when there is none."""
    pattern = _regex(lits)
    if pattern is None:
        return pa.nulls(len(args[0]), out)
    try:
        found = pc.extract_regex(args[0], pattern=f"(?P<m>{pattern})")
    except pa.ArrowInvalid:
        return pa.nulls(len(args[0]), out)
    return pc.struct_field(found, [0])


def _regexp_instr(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_INSTR(s, regex): the 1-based character position of the first match, 0 when
    there is none."""
    pattern = _regex(lits)
    if pattern is None:
        return pa.nulls(len(args[0]), out)
    try:
        found = pc.extract_regex(args[0], pattern=f"(?P<b>.*?)(?P<m>{pattern})")
    except pa.ArrowInvalid:
        return pa.nulls(len(args[0]), out)
    before = pc.struct_field(found, [0])
    at = pc.add(pc.utf8_length(before), 1).cast(pa.int32())
    return pc.if_else(pc.is_valid(args[0]), pc.fill_null(at, 0), pa.nulls(len(at), pa.int32()))


def _translate(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """TRANSLATE(s, from, to): each character of ``from`` becomes the character at the same
    place of ``to``, or is removed when ``to`` is shorter."""
    none = _nulls_if_null_literal(args, lits, (1, 2), out)
    if none is not None:
        return none
    src, dst = str(lits[1]), str(lits[2])
    table: dict[int, int | None] = {}
    for i, ch in enumerate(src):
        table.setdefault(ord(ch), ord(dst[i]) if i < len(dst) else None)
    return per_distinct(args[0], lambda v: v.translate(table), pa.string())


def _overlay(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """OVERLAY(s PLACING r FROM pos [FOR len]): s with ``len`` characters from ``pos``
    replaced by r (len defaults to r's length)."""
    s, r, pos = args[0], args[1], args[2]
    length = args[3] if len(args) > 3 else pc.utf8_length(r).cast(pa.int32())
    p = pc.subtract(pos.cast(pa.int64()), 1)
    head = _slice_rows(s, pa.array(np.zeros(len(s), np.int64)), pc.max_element_wise(p, 0))
    tail_start = pc.add(p, length.cast(pa.int64()))
    tail = _slice_rows(s, pc.max_element_wise(tail_start, 0),
                       pa.array(np.full(len(s), 2**31 - 1, np.int64)))
    res = pc.binary_join_element_wise(head, r, tail, "")
    valid = pc.and_(pc.and_(pc.is_valid(s), pc.is_valid(r)), pc.and_(pc.is_valid(pos),
                                                                         pc.is_valid(length)))
    return pc.if_else(valid, res, pa.nulls(len(s), pa.string()))


def _elt(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ELT(n, e1, e2, ...): the n-th value, NULL when n is out of range or NULL."""
    idx = args[0].cast(pa.int64())
    res = pa.nulls(len(idx), out)
    for i, v in enumerate(args[1:], start=1):
        res = pc.if_else(pc.fill_null(pc.equal(idx, i), False), v.cast(out), res)
    return res


def _from_base64(v: str) -> str | None:
    try:
        return base64.b64decode(v, validate=False).decode("utf-8", errors="replace")
    except (binascii.Error, ValueError):
        return None


def _url_encode(v: str) -> str:
    return urllib.parse.quote_plus(v, safe="*", encoding="utf-8").replace("~", "%7E")


def _url_decode(v: str) -> str | None:
    try:
        return urllib.parse.unquote_plus(v, encoding="utf-8", errors="strict")
    except (UnicodeDecodeError, ValueError):
        return None


def _hash(algorithm: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        return per_distinct(args[0], lambda v: hashlib.new(
            algorithm, v.encode("utf-8")).hexdigest(), pa.string())

    return kernel


_SHA2 = {224: "sha224", 256: "sha256", 384: "sha384", 512: "sha512", 0: "sha256"}


def _sha2(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """SHA2(s, bits): bits 224, 256, 384 or 512 (0 is 256); another length is NULL."""
    if lits[1] is None or as_int(lits[1]) not in _SHA2:
        return pa.nulls(len(args[0]), out)
    return _hash(_SHA2[as_int(lits[1])])(args[:1], lits[:1], out)


_URL_PARTS = ("HOST", "PATH", "QUERY", "REF", "PROTOCOL", "FILE", "AUTHORITY", "USERINFO")


def _parse_url(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """PARSE_URL(url, part [, key]) as java.net.URL splits it; NULL for a bad URL or a part
    the URL does not have."""
    part = None if lits[1] is None else str(lits[1]).upper()
    if part not in _URL_PARTS or (len(lits) > 2 and lits[2] is None):
        return pa.nulls(len(args[0]), out)
    key = str(lits[2]) if len(lits) > 2 else None
    if key is not None and part != "QUERY":
        return pa.nulls(len(args[0]), out)

    def one(v: str) -> str | None:
        try:
            u = urllib.parse.urlsplit(v)
        except ValueError:
            return None
        if not u.scheme or "://" not in v:
            return None
        if part == "HOST":
            return u.hostname
        if part == "PATH":
            return u.path
        if part == "QUERY":
            if key is None:
                return u.query or None
            for k, val in urllib.parse.parse_qsl(u.query, keep_blank_values=True):
                if k == key:
                    return val
            return None
        if part == "REF":
            return u.fragment or None
        if part == "PROTOCOL":
            return u.scheme
        if part == "FILE":
            return u.path + (f"?{u.query}" if u.query else "")
        if part == "AUTHORITY":
            return u.netloc
        return u.username if u.password is None or u.username is None else \
            f"{u.username}:{u.password}"

    return per_distinct(args[0], one, pa.string())


def _checked(fn: Callable[[str], str | None], name: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        try:
            return per_distinct(args[0], fn, pa.string())
        except UnicodeEncodeError as e:
            msg = f"{name.upper()}: {e}"
            raise ExecutionError(msg) from None

    return kernel


KERNELS: dict[str, Kernel] = {
    "regexp_replace": _regexp_replace,
    "concat_ws": _concat_ws,
    "left": _left_right(True),
    "right": _left_right(False),
    "ascii": _ascii,
    "chr": _chr,
    "btrim": _btrim,
    "starts_with": _affix(pc.starts_with),
    "ends_with": _affix(pc.ends_with),
    "regexp_count": _regexp_count,
    "regexp_instr": _regexp_instr,
    "regexp_substr": _regexp_substr,
    "translate": _translate,
    "overlay": _overlay,
    "elt": _elt,
    "to_base64": _checked(lambda v: base64.b64encode(v.encode("utf-8")).decode("ascii"),
                          "to_base64"),
    "from_base64": _checked(_from_base64, "from_base64"),
    "url_encode": _checked(_url_encode, "url_encode"),
    "url_decode": _checked(_url_decode, "url_decode"),
    "md5": _hash("md5"),
    "sha1": _hash("sha1"),
    "sha224": _hash("sha224"),
    "sha256": _hash("sha256"),
    "sha384": _hash("sha384"),
    "sha512": _hash("sha512"),
    "sha2": _sha2,
    "parse_url": _parse_url,
}
