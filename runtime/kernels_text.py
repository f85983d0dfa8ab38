"""Kernels of ``sqlengine.functions_text`` with Flink's semantics (NULL in, NULL out unless
said otherwise).

Most are Arrow kernels. Those Arrow has none for (base64, URL coding, hashes, TRANSLATE,
PARSE_URL) call Python once per distinct value of the batch (``per_distinct``), not per row.
"""

from __future__ import annotations

import base64
import decimal
import functools
import hashlib
import math
import re
import urllib.parse
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import types as T
from sqlengine.cast import java_double_text
from sqlengine.errors import ExecutionError
from sqlengine.runtime.column_arguments import constants_or_columns
from sqlengine.runtime.string_kernels import NOT_LINE_END, as_int, join_skipping_nulls

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


def per_distinct_rows(args: list[Array], fn: Callable[..., object | None],
                      out: pa.DataType) -> Array:
    """``fn(*values)`` for each distinct combination of the arguments' values in a row (NULLs
    given as None), taken back to the rows: one Python call per distinct combination."""
    n = len(args[0])
    if n == 0:
        return pa.array([], out)
    codes, values = [], []
    for a in args:
        enc = pc.dictionary_encode(a)
        codes.append(pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False))
        values.append(enc.dictionary.to_pylist())
    uniq, inverse = np.unique(np.stack(codes, axis=1), axis=0, return_inverse=True)
    results = [fn(*(None if c < 0 else vals[c] for c, vals in zip(row, values)))
               for row in uniq.tolist()]
    return pc.take(pa.array(results, out), pa.array(inverse.reshape(-1)))


def _nulls_if_null_literal(args: list[Array], lits: list[object], positions: tuple[int, ...],
                           out: pa.DataType) -> Array | None:
    if any(lits[i] is None for i in positions):
        return pa.nulls(len(args[0]), out)
    return None


# Java's \p{...} POSIX classes (ASCII, as Java's are by default) as character ranges, which
# RE2 and Python's re both read; Java's own Unicode classes as RE2's. Others stay as written.
_POSIX = {"Lower": "a-z", "Upper": "A-Z", "ASCII": "\\x00-\\x7F", "Alpha": "a-zA-Z",
          "Digit": "0-9", "Alnum": "a-zA-Z0-9", "Punct": "!-/:-@\\[-`{-~", "Graph": "!-~",
          "Print": " -~", "Blank": " \\t", "Cntrl": "\\x00-\\x1F\\x7F",
          "XDigit": "0-9a-fA-F", "Space": " \\t\\n\\x0B\\f\\r"}
_UNICODE = {"javaLowerCase": "Ll", "javaUpperCase": "Lu", "IsAlphabetic": "L",
            "IsLetter": "L", "IsDigit": "Nd", "IsUppercase": "Lu", "IsLowercase": "Ll",
            "IsPunctuation": "P"}


# What a regex Java rejects becomes: one RE2 and Python reject too, so that each function
# answers as Flink's does for an invalid regex (NULL, or FALSE for REGEXP).
INVALID_REGEX = "(?P<"
_QUANTIFIER = re.compile(r"\{\d+(,\d*)?\}")


def _regex_tokens(pattern: str) -> Iterator[tuple[int, int, bool]]:
    """A regex's parts as (start, end, bare) spans: an escape (``\\p{...}`` and ``\\x{...}``
    whole), a character class (Java's nested ones whole; a ']' first is one of its letters),
    or one bare character outside them."""
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            end = i + 2
            if pattern[i + 1:i + 2] in ("p", "P", "x") and pattern.startswith("{", i + 2):
                close = pattern.find("}", i + 3)  # (\\p{Alpha}, \\x{263A})
                end = close + 1 if close > 0 else n
            yield i, min(end, n), False
            i = end
        elif c == "[":
            j = i + 1 + pattern.startswith("^", i + 1)
            j += pattern.startswith("]", j)
            depth = 1
            while j < n and depth:
                if pattern[j] == "\\":
                    j += 2
                    continue
                depth += 1 if pattern[j] == "[" else -1 if pattern[j] == "]" else 0
                j += 1
            yield i, min(j, n), False
            i = j
        else:
            yield i, i + 1, True
            i += 1


def _java_rejects(pattern: str) -> bool:
    """Whether Java's Pattern rejects ``pattern`` where Python's re and RE2 read it: a '{'
    that starts no repetition ('{', 'a{', 'a{1', 'a{,2}': Java's "Illegal repetition"; the
    others take it for a letter), and Python's own '(?P<name>...)' groups."""
    for start, _, bare in _regex_tokens(pattern):
        if not bare:
            continue
        if pattern[start] == "{" and (start == 0 or
                                      _QUANTIFIER.match(pattern, start) is None):
            return True
        if pattern.startswith("(?P", start):
            return True
    return False


def _java_dots(pattern: str) -> str:
    """Each '.' (not escaped, not in a class) as Java's: any character but a line terminator
    (RE2's and Python's '.' take a carriage return too: 'a\\rb' ~ 'a.b' matched)."""
    return "".join(NOT_LINE_END if bare and pattern[start] == "." else pattern[start:end]
                   for start, end, bare in _regex_tokens(pattern))


def java_regex(pattern: str) -> str:
    """A Java regex (Flink's REGEXP functions) in RE2's syntax: ``\\p{Alpha}``, ``\\P{Digit}``
    and Java's ``\\p{javaLowerCase}``-style classes, which RE2 rejects (the functions gave
    NULL), become RE2's POSIX or Unicode classes; ``[:alpha:]`` inside a class is Java's
    nested class of those characters, not RE2's POSIX class (``[[:alpha:]]`` matches ``:``,
    ``a``, ``l``, ``p``, ``h`` in Flink). One Java rejects is ``INVALID_REGEX``."""
    if ("{" in pattern or "(?P" in pattern) and _java_rejects(pattern):
        return INVALID_REGEX
    if "." in pattern and "(?s" not in pattern:
        pattern = _java_dots(pattern)
    if "\\p" not in pattern and "\\P" not in pattern and "[:" not in pattern:
        return pattern
    out: list[str] = []
    depth = 0
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            m = re.match(r"\\([pP])\{(\w+)\}", pattern[i:])
            if m is not None and (m.group(2) in _POSIX or m.group(2) in _UNICODE):
                neg = m.group(1) == "P"
                if m.group(2) in _POSIX:
                    ranges = _POSIX[m.group(2)]
                    if not depth:
                        out.append(f"[{'^' if neg else ''}{ranges}]")
                    else:  # (a negated one inside a class: RE2's name, which re lacks)
                        out.append(f"[:^{m.group(2).lower()}:]" if neg else ranges)
                else:
                    out.append(f"\\{m.group(1)}{{{_UNICODE[m.group(2)]}}}")
                i += m.end()
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if depth and pattern.startswith("[:", i):
            m = re.match(r"\[:(\^?\w+):\]", pattern[i:])
            if m is not None:  # (Java: a nested class of these characters)
                out.append("".join(ch if ch.isalnum() else "\\" + ch
                                   for ch in f":{m.group(1)}:"))
                i += m.end()
                continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        out.append(c)
        i += 1
    return "".join(out)


def _python_regex(pattern: str) -> re.Pattern[str] | None:
    try:
        with warnings.catch_warnings():  # ("possible nested set": RE2's [[:alpha:]])
            warnings.simplefilter("ignore", FutureWarning)
            return re.compile(pattern)
    except (re.error, OverflowError, RecursionError):
        return None


def _may_match_empty(compiled: re.Pattern[str]) -> bool:
    """Whether the regex can match an empty string somewhere (Java and RE2 differ on where
    an empty match may follow another match: 'aaa' ~ 'a*' replaced is 'XX' in Java)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            return re._parser.parse(compiled.pattern).getwidth()[0] == 0  # type: ignore[attr-defined]
    except Exception:
        return True


def _regexp_replace(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_REPLACE(s, regex, replacement): every match replaced by the replacement taken
    literally (Flink quotes it: '$1' is not a group); NULL when the regex is invalid (Flink
    logs and returns NULL). Java's matching of empty matches (after a match, at the end)."""
    none = _nulls_if_null_literal(args, lits, (1, 2), out)
    if none is not None:
        return none
    pattern, replacement = java_regex(str(lits[1])), str(lits[2])
    compiled = _python_regex(pattern)
    if compiled is None or not _may_match_empty(compiled):
        try:
            return pc.replace_substring_regex(args[0], pattern=pattern,
                                              replacement=replacement.replace("\\", "\\\\"))
        except pa.ArrowInvalid:
            if compiled is None:
                return pa.nulls(len(args[0]), out)
    assert compiled is not None
    return per_distinct(args[0], lambda v: compiled.sub(lambda m: replacement, v), pa.string())


def _concat_ws(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """CONCAT_WS(sep, s1, ...): NULL when sep is NULL; NULL strings are skipped."""
    sep, rest = args[0], args[1:]
    if not rest:
        return pc.if_else(pc.is_valid(sep), "", pa.nulls(len(sep), pa.string()))
    return join_skipping_nulls(rest, sep)


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
    """ASCII(s): the first byte of the string's UTF-8 as a Java byte, as Flink 2.3 gives it
    (97 for 'a'; -61 for 'É', whose UTF-8 starts 0xC3), 0 for an empty string."""
    s = args[0]
    first = pc.binary_slice(s.cast(pa.binary()), 0, 1)
    padded = pc.binary_join_element_wise(first, pa.scalar(b"\x00"), b"")  # ('' -> 0)
    byte = pc.binary_slice(padded, 0, 1).cast(pa.binary(1))
    codes = np.frombuffer(byte.buffers()[1], dtype=np.int8)[byte.offset:byte.offset + len(s)]
    return pa.array(codes.astype(np.int32), pa.int32(),
                    mask=pc.is_null(s).to_numpy(zero_copy_only=False) if s.null_count else None)


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
        if pa.types.is_binary(args[0].type):  # (BYTES: its first / last bytes compared)
            affix = bytes(lits[1])  # type: ignore[call-overload]
            n = len(affix)
            if n == 0:
                return pc.if_else(pc.is_null(args[0]), pa.scalar(None, out),
                                  pa.scalar(True, out))
            part = pc.binary_slice(args[0], 0, n) if fn is pc.starts_with else \
                pc.binary_slice(args[0], -n, None)  # type: ignore[arg-type]
            return pc.equal(part, pa.scalar(affix, pa.binary()))
        return fn(args[0], pattern=str(lits[1]))

    return kernel


def _regex(lits: list[object]) -> str | None:
    return None if lits[1] is None else java_regex(str(lits[1]))


def _regexp_count(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    pattern = _regex(lits)
    if pattern is None:
        return pa.nulls(len(args[0]), out)
    try:
        compiled: re.Pattern[str] | None = re.compile(pattern)
    except re.error:
        compiled = None
    if compiled is not None and compiled.fullmatch("") is not None and \
            not pc.all(pc.string_is_ascii(args[0])).as_py():
        # (a pattern matching the empty string: Arrow steps on by a byte after an empty
        # match, so 'ß' counted 3; Java's Matcher, as Python's, by a character: 2)
        return per_distinct(args[0], lambda v: sum(1 for _ in compiled.finditer(v)), out)
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


def _instr(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """INSTR(s, sub, position [, occurrence]) as Flink's (Oracle's): the 1-based position of
    the occurrence-th ``sub`` counted from ``position``, backwards from the end when it is
    negative (-1: the last character); 0 when there is none or ``position`` is 0. Once per
    distinct combination of the arguments (INSTR(s, sub) is POSITION's vectorised kernel)."""

    def one(s: str | None, sub: str | None, pos: int | None, occ: int | None = 1
            ) -> int | None:
        if s is None or sub is None or pos is None or occ is None:
            return None
        if occ <= 0:
            raise ExecutionError(f"INSTR's occurrence must be positive, got {occ}")
        if pos == 0 or abs(pos) > len(s):
            return 0
        if pos > 0:
            start = pos - 1
            for _ in range(occ):
                at = s.find(sub, start)
                if at < 0:
                    return 0
                start = at + 1
            return at + 1
        end = len(s) + pos + len(sub)  # (a match may start at the position, not after it)
        for _ in range(occ):
            at = s.rfind(sub, 0, end)
            if at < 0:
                return 0
            end = at + len(sub) - 1
        return at + 1

    return per_distinct_rows(args, one, out)


def _regexp_instr(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_INSTR(s, regex): the 1-based character position of the first match, 0 when
    there is none."""
    pattern = _regex(lits)
    if pattern is None:
        return pa.nulls(len(args[0]), out)
    try:
        # (the text before the first match, across lines: a match on a later line counted
        # from that line's start)
        found = pc.extract_regex(args[0], pattern=f"^(?P<b>(?s:.*?))(?P<m>{pattern})")
    except pa.ArrowInvalid:
        return pa.nulls(len(args[0]), out)
    before = pc.struct_field(found, [0])
    at = pc.add(pc.utf8_length(before), 1).cast(pa.int32())
    return pc.if_else(pc.is_valid(args[0]), pc.fill_null(at, 0), pa.nulls(len(at), pa.int32()))


def _translate(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """TRANSLATE(s, from, to): each character of ``from`` becomes the character at the same
    place of ``to``, or is removed when ``to`` is shorter. As Flink's TranslateFunction: a
    NULL ``from`` leaves ``s`` as it is, a NULL ``to`` removes every character of ``from``."""
    if lits[1] is None:
        return args[0]
    src, dst = str(lits[1]), "" if lits[2] is None else str(lits[2])
    table: dict[int, int | None] = {}
    for i, ch in enumerate(src):
        table.setdefault(ord(ch), ord(dst[i]) if i < len(dst) else None)
    return per_distinct(args[0], lambda v: v.translate(table), pa.string())


def _overlay(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """OVERLAY(s PLACING r FROM pos [FOR len]): s with ``len`` characters from ``pos``
    replaced by r (len defaults to r's length); s itself when pos is not one of its
    characters' positions (Flink's SqlFunctionUtils.overlay)."""
    s, r, pos = args[0], args[1], args[2]
    length = args[3] if len(args) > 3 else pc.utf8_length(r).cast(pa.int32())
    p = pc.subtract(pos.cast(pa.int64()), 1)
    head = _slice_rows(s, pa.array(np.zeros(len(s), np.int64)), pc.max_element_wise(p, 0))
    tail_start = pc.add(p, length.cast(pa.int64()))
    tail = _slice_rows(s, pc.max_element_wise(tail_start, 0),
                       pa.array(np.full(len(s), 2**31 - 1, np.int64)))
    res = pc.binary_join_element_wise(head, r, tail, "")
    # Flink: a position before the first or after the last character leaves s as it is.
    outside = pc.or_(pc.less_equal(pos.cast(pa.int64()), 0),
                     pc.greater(pos.cast(pa.int64()), pc.utf8_length(s).cast(pa.int64())))
    res = pc.if_else(pc.fill_null(outside, False), s, res)
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


_BASE64 = re.compile(r"[A-Za-z0-9+/]*")


def _from_base64(v: str) -> str:
    """java.util.Base64's basic decoder: padding optional, nothing outside the alphabet (an
    error naming the character, as Java)."""
    body = _BASE64.match(v).group()  # type: ignore[union-attr]
    rest = v[len(body):]
    bad = next((c for c in rest if c != "="), None)
    if bad is not None:
        msg = f"Illegal base64 character {ord(bad):x}"
        raise ExecutionError(msg)
    if len(body) % 4 == 1:
        raise ExecutionError("Last unit does not have enough valid bits")
    if rest and (len(body) % 4 == 0 or len(rest) != 4 - len(body) % 4):
        raise ExecutionError("Input byte array has wrong 4-byte ending unit")
    raw = base64.b64decode(body + "=" * (-len(body) % 4))
    return raw.decode("utf-8", errors="replace")


def _url_encode(v: str) -> str:
    return urllib.parse.quote_plus(v, safe="*", encoding="utf-8").replace("~", "%7E")


_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _url_decode(v: str) -> str | None:
    """Java's URLDecoder.decode, as Flink's URL_DECODE: NULL for a '%' not followed by two
    hex digits (Python kept it as text: 'hello+world%2' gave 'hello world%2'); bytes that
    are not UTF-8 are U+FFFD, a malformed sequence each ('%e2%82' is one)."""
    if _BAD_ESCAPE.search(v):
        return None
    return urllib.parse.unquote_plus(v, encoding="utf-8", errors="replace")


def _hash(algorithm: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        return per_distinct(args[0], lambda v: hashlib.new(
            algorithm, v.encode("utf-8")).hexdigest(), pa.string())

    return kernel


_SHA2 = {224: "sha224", 256: "sha256", 384: "sha384", 512: "sha512"}


def _sha2(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """SHA2(s, bits): bits 224, 256, 384 or 512; NULL bits give NULL, another length (0
    too, which Hive takes for 256) is an error, as in Flink."""
    if lits[1] is None:
        return pa.nulls(len(args[0]), out)
    bits = as_int(lits[1])
    if bits not in _SHA2:
        msg = f"SHA2: unsupported bit length {bits} (224, 256, 384 or 512)"
        raise ExecutionError(msg)
    return _hash(_SHA2[bits])(args[:1], lits[:1], out)


def _replace(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REPLACE(s, search, replacement) as Java's String.replace: an empty search string is
    found before every character and at the end ('abc', '', 'x' -> 'xaxbxcx')."""
    none = _nulls_if_null_literal(args, lits, (1, 2), out)
    if none is not None:
        return none
    search, replacement = str(lits[1]), str(lits[2])
    if search == "":
        return pc.replace_substring_regex(args[0], pattern="",
                                          replacement=replacement.replace("\\", "\\\\"))
    return pc.replace_substring(args[0], pattern=search, replacement=replacement)


def _regexp(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP(s, regex): whether the regex matches a part of s; FALSE for an empty or an
    invalid regex (Flink's SqlFunctionUtils.regExp)."""
    s = args[0]
    if lits[1] is None:
        return pa.nulls(len(s), pa.bool_())
    pattern = java_regex(str(lits[1]))
    if pattern == "":
        found = pa.array(np.zeros(len(s), bool))
    else:
        try:
            found = pc.match_substring_regex(s, pattern)
        except pa.ArrowInvalid:
            compiled = _python_regex(pattern)
            if compiled is None:
                found = pa.array(np.zeros(len(s), bool))
            else:
                return per_distinct(s, lambda v: compiled.search(v) is not None, pa.bool_())
    return pc.if_else(pc.is_valid(s), found, pa.nulls(len(s), pa.bool_()))


def _numbered_groups(pattern: str) -> tuple[str, int]:
    """The regex with every capturing group named g1, g2, ... (Arrow's extract_regex wants
    named groups), and their number. Escapes and character classes are skipped."""
    out: list[str] = []
    n, skip = 0, 0  # (skip: where a group's own name, replaced, ends)
    for start, end, bare in _regex_tokens(pattern):
        if start < skip:
            continue
        if bare and pattern[start] == "(":
            named = re.match(r"\(\?P?<([A-Za-z]\w*)>", pattern[start:])
            if named or not pattern.startswith("(?", start):
                n += 1
                out.append(f"(?P<g{n}>")
                skip = start + (named.end() if named else 1)
                continue
        out.append(pattern[start:end])
    return "".join(out), n


def _regexp_extract(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """REGEXP_EXTRACT(s, regex [, group]): the group (0, the whole match, by default) of the
    first match; NULL when nothing matches, the group does not exist or the regex is
    invalid (Flink's SqlFunctionUtils.regexpExtract)."""
    s = args[0]
    if lits[1] is None or (len(lits) > 2 and lits[2] is None):
        return pa.nulls(len(s), pa.string())
    group = as_int(lits[2]) if len(lits) > 2 else 0
    pattern, n = _numbered_groups(f"({java_regex(str(lits[1]))})")
    if group < 0 or group + 1 > n:
        return pa.nulls(len(s), pa.string())
    try:
        found = pc.extract_regex(s, pattern=pattern)
    except pa.ArrowInvalid:
        compiled = None if java_regex(str(lits[1])) == INVALID_REGEX else \
            _python_regex(str(lits[1]))
        if compiled is None or group > compiled.groups:
            return pa.nulls(len(s), pa.string())

        def one(v: str) -> str | None:
            m = compiled.search(v)
            return None if m is None else m.group(group)

        return per_distinct(s, one, pa.string())
    out = pc.struct_field(found, f"g{group + 1}")
    empty = pc.fill_null(pc.equal(out, ""), False)
    if group and pc.any(empty).as_py():
        # Arrow gives '' for a group that took no part in the match (a(x)?b on 'ab'); Java's
        # Matcher.group gives null, so Flink's NULL: those rows are read again in Python.
        compiled = None if java_regex(str(lits[1])) == INVALID_REGEX else \
            _python_regex(str(lits[1]))
        if compiled is not None and group <= compiled.groups:
            def again(v: str) -> str | None:
                m = compiled.search(v)
                return None if m is None else m.group(group)

            at = pc.indices_nonzero(empty)
            redone = per_distinct(pc.take(s, at), again, pa.string())
            out = pc.replace_with_mask(out, empty, redone) if len(redone) else out
    return out


def _initcap_one(v: str) -> str:
    """Calcite's SqlFunctions.initcap: words are runs of ASCII letters and digits; the first
    letter of a word upper-cased, the other ASCII letters lower-cased, the rest unchanged."""
    chars, start = [], True
    for ch in v:
        alnum = ch.isascii() and ch.isalnum()
        if start:
            if alnum:
                start = False
                ch = ch.upper()
        elif alnum:
            ch = ch.lower()
        else:
            start = True
        chars.append(ch)
    return "".join(chars)


def _initcap(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    return per_distinct(args[0], _initcap_one, pa.string())


# Java's charsets by their names and aliases (case-insensitive) -> Python's codec; UTF-16
# writes a big-endian byte order mark, and reads one (big-endian when there is none).
_CHARSETS = {
    "US-ASCII": "ascii", "ASCII": "ascii", "ISO646-US": "ascii",
    "ISO-8859-1": "latin-1", "ISO8859_1": "latin-1", "ISO_8859_1": "latin-1",
    "LATIN1": "latin-1", "L1": "latin-1", "8859_1": "latin-1",
    "UTF-8": "utf-8", "UTF8": "utf-8",
    "UTF-16BE": "utf-16-be", "UTF_16BE": "utf-16-be", "X-UTF-16BE": "utf-16-be",
    "UTF-16LE": "utf-16-le", "UTF_16LE": "utf-16-le", "X-UTF-16LE": "utf-16-le",
    "UTF-16": "utf-16", "UTF_16": "utf-16", "UTF16": "utf-16",
}


def _charset(name: str, fn: str) -> str:
    codec = _CHARSETS.get(name.upper())
    if codec is None:
        msg = (f"{fn}: unsupported charset {name!r} (US-ASCII, ISO-8859-1, UTF-8, UTF-16BE, "
               "UTF-16LE or UTF-16)")
        raise ExecutionError(msg)
    return codec


def _encode_one(codec: str) -> Callable[[str], bytes]:
    if codec == "utf-16":
        return lambda v: (b"\xfe\xff" + v.encode("utf-16-be", errors="replace")) if v else b""
    return lambda v: v.encode(codec, errors="replace")


def _decode_one(codec: str) -> Callable[[bytes], str]:
    if codec == "utf-16":
        def one(v: bytes) -> str:
            if v[:2] == b"\xff\xfe":
                return v[2:].decode("utf-16-le", errors="replace")
            return v[2 if v[:2] == b"\xfe\xff" else 0:].decode("utf-16-be", errors="replace")

        return one
    return lambda v: v.decode(codec, errors="replace")


def _encode(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """ENCODE(s, charset): the bytes of s in the charset (Java's String.getBytes: a character
    the charset has not is '?')."""
    if lits[1] is None:
        return pa.nulls(len(args[0]), pa.binary())
    codec = _charset(str(lits[1]), "ENCODE")
    return per_distinct(args[0], _encode_one(codec), pa.binary())


def _decode(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """DECODE(b, charset): the string the bytes are in the charset (malformed input is
    U+FFFD, as Java's new String(bytes, charset))."""
    if lits[1] is None:
        return pa.nulls(len(args[0]), pa.string())
    codec = _charset(str(lits[1]), "DECODE")
    return per_distinct(args[0], _decode_one(codec), pa.string())


# IS_DECIMAL: what Java's Double.parseDouble accepts (Integer/Long.parseLong accept less).
_JAVA_DOUBLE = (r"^[\x00-\x20]*[+-]?(?:NaN|Infinity|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)"
                r"(?:[eE][+-]?[0-9]+)?|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)"
                r"[pP][+-]?[0-9]+)[fFdD]?)[\x00-\x20]*$")


def _char_test(pattern: str) -> Kernel:
    """A test of a whole string by a regex; FALSE for NULL (Flink's IS_ALPHA / IS_DIGIT /
    IS_DECIMAL)."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        ok = pc.match_substring_regex(args[0], pattern)
        # (Java tests each UTF-16 unit: a character beyond U+FFFF is never a letter/digit)
        if pattern != _JAVA_DOUBLE:
            ok = pc.and_(ok, pc.invert(pc.match_substring_regex(
                args[0], "[\\x{10000}-\\x{10FFFF}]")))
        return pc.fill_null(ok, False)

    return kernel


# PRINTF: java.util.Formatter (Locale.US) for %s %S %b %B %c %C %d %o %x %X %e %E %f %g %G
# %% %n, with argument indexes (2$, <), flags (- # + space 0 , ( ), width and precision.
_SPEC = re.compile(r"%(?:(\d+)\$|(<))?([-#+ 0,(]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])")
_BITS = {pa.int8(): 8, pa.int16(): 16, pa.int32(): 32, pa.int64(): 64}


class _Java:
    """An argument as Java sees it: its value and the Java class Flink gives it."""

    __slots__ = ("bits", "kind", "value")

    def __init__(self, value: object, t: pa.DataType) -> None:
        self.value = value
        self.bits = _BITS.get(t, 64)
        if pa.types.is_integer(t):
            self.kind = {8: "Byte", 16: "Short", 32: "Integer"}.get(self.bits, "Long")
        elif pa.types.is_floating(t):
            self.kind = "Float" if t == pa.float32() else "Double"
        elif pa.types.is_decimal(t):
            self.kind = "DecimalData"
        elif pa.types.is_boolean(t):
            self.kind = "Boolean"
        else:
            self.kind = "BinaryStringData" if T.is_string(t) else "Object"

    def text(self) -> str:
        v = self.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return java_double_text(v, self.kind == "Float")
        if isinstance(v, decimal.Decimal):
            return f"{v:f}"
        return str(v)


def _conversion_error(conv: str, arg: _Java) -> ExecutionError:
    cls = "java.lang.String" if arg.kind == "BinaryStringData" else arg.kind
    return ExecutionError(f"PRINTF: IllegalFormatConversionException: {conv} != {cls}")


def _pad(text: str, flags: str, width: int | None, zero_ok: bool = False) -> str:
    if width is None or len(text) >= width:
        return text
    if "-" in flags:
        return text.ljust(width)
    if "0" in flags and zero_ok:
        sign = text[0] if text[:1] in "+- (" and text[:1] else ""
        return sign + text[len(sign):].rjust(width - len(sign), "0")
    return text.rjust(width)


def _signed(digits: str, negative: bool, flags: str) -> str:
    if "," in flags and digits.replace(".", "").isdigit():
        whole, _, frac = digits.partition(".")
        digits = f"{int(whole):,}" + (f".{frac}" if _ else "")
    if negative:
        return f"({digits})" if "(" in flags else f"-{digits}"
    return ("+" if "+" in flags else " " if " " in flags else "") + digits


def _number(arg: _Java, conv: str) -> decimal.Decimal:
    v = arg.value
    if isinstance(v, bool) or not isinstance(v, float | decimal.Decimal):
        raise _conversion_error(conv, arg)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            raise _NonFinite(java_double_text(v))
        return decimal.Decimal(java_double_text(v, arg.kind == "Float").replace("E", "e"))
    return v


class _NonFinite(Exception):
    """The text of NaN / Infinity, which no conversion rounds."""


def _format_one(spec: re.Match[str], arg: _Java | None) -> str:
    flags, width, prec, conv = spec.group(3), spec.group(4), spec.group(5), spec.group(6)
    w = int(width) if width else None
    p = int(prec) if prec is not None else None
    lower = conv.lower()
    if arg is None or (arg.value is None and lower != "b"):
        text = "null" if lower != "b" else "false"
        text = text[:p] if p is not None else text
        return _pad(text.upper() if conv.isupper() else text, flags, w)
    upper = conv.isupper()
    if lower == "b":
        text = ("true" if arg.value else "false") if isinstance(arg.value, bool) else \
            ("false" if arg.value is None else "true")
        text = text[:p] if p is not None else text
    elif lower == "s":
        text = arg.text()
        text = text[:p] if p is not None else text
    elif lower == "c":
        if arg.kind not in ("Byte", "Short", "Integer"):
            raise _conversion_error(conv, arg)
        text = chr(int(arg.value))  # type: ignore[call-overload]
    elif conv in ("d", "o", "x", "X"):
        if arg.kind not in ("Byte", "Short", "Integer", "Long"):
            raise _conversion_error(conv, arg)
        v = int(arg.value)  # type: ignore[call-overload]
        if conv == "d":
            return _pad(_signed(str(abs(v)), v < 0, flags), flags, w, True)
        v &= (1 << arg.bits) - 1  # (Java: a negative value in two's complement)
        text = format(v, "o" if conv == "o" else "x")
        if "#" in flags:
            text = ("0" if conv == "o" else "0x") + text
        return _pad(text.upper() if upper else text, flags, w, True)
    elif lower in ("e", "f", "g"):
        try:
            d = _number(arg, conv)
        except _NonFinite as e:
            return _pad(str(e), flags, w)
        text = _float_text(d, lower, 6 if p is None else p, "#" in flags)
        negative = text.startswith("-")
        text = _signed(text.lstrip("-"), negative, flags if lower != "e" else
                       flags.replace(",", ""))
        return _pad(text.upper() if upper else text, flags, w, True)
    else:
        msg = f"PRINTF: UnknownFormatConversionException: Conversion = '{conv}'"
        raise ExecutionError(msg)
    return _pad(text.upper() if upper else text, flags, w)


def _float_text(d: decimal.Decimal, conv: str, p: int, alternate: bool) -> str:
    up = decimal.ROUND_HALF_UP
    if conv == "g":
        p = max(p, 1)
        if d == 0:
            return _float_text(d, "f", p - 1, alternate)
        rounded = d.quantize(decimal.Decimal(1).scaleb(d.adjusted() - p + 1), rounding=up)
        if decimal.Decimal("1e-4") <= abs(rounded) < decimal.Decimal(10) ** p:
            return _float_text(d, "f", max(p - rounded.adjusted() - 1, 0), alternate)
        return _float_text(d, "e", p - 1, alternate)
    if conv == "f":
        text = f"{d.quantize(decimal.Decimal(1).scaleb(-p), rounding=up):f}"
        return text + "." if alternate and p == 0 else text
    if d == 0:
        mantissa, exp = decimal.Decimal(0), 0
    else:
        exp = d.adjusted()
        mantissa = d.scaleb(-exp).quantize(decimal.Decimal(1).scaleb(-p), rounding=up)
        if abs(mantissa) >= 10:
            exp += 1
            mantissa = d.scaleb(-exp).quantize(decimal.Decimal(1).scaleb(-p), rounding=up)
    body = f"{mantissa.quantize(decimal.Decimal(1).scaleb(-p)):f}"
    if alternate and p == 0:
        body += "."
    return f"{body}e{'-' if exp < 0 else '+'}{abs(exp):02d}"


def java_format(fmt: str, args: list[_Java]) -> str:
    """``String.format(Locale.US, fmt, args)``."""
    out, pos, ordinary, last = [], 0, 0, -1
    for spec in _SPEC.finditer(fmt):
        literal = fmt[pos:spec.start()]
        if "%" in literal:
            bad = literal[literal.index("%"):][:2]
            msg = f"PRINTF: UnknownFormatConversionException: Conversion = '{bad[1:] or '%'}'"
            raise ExecutionError(msg)
        out.append(literal)
        pos = spec.end()
        conv = spec.group(6)
        if conv == "%":
            out.append(_pad("%", spec.group(3), int(spec.group(4)) if spec.group(4) else None))
            continue
        if conv == "n":
            out.append("\n")
            continue
        if spec.group(1):
            index = int(spec.group(1)) - 1
        elif spec.group(2):
            index = last
        else:
            index = ordinary
            ordinary += 1
        if not 0 <= index < len(args):
            msg = f"PRINTF: MissingFormatArgumentException: Format specifier '{spec.group()}'"
            raise ExecutionError(msg)
        last = index
        out.append(_format_one(spec, args[index]))
    tail = fmt[pos:]
    if "%" in tail:
        bad = tail[tail.index("%") + 1:][:1] or "%"
        msg = f"PRINTF: UnknownFormatConversionException: Conversion = '{bad}'"
        raise ExecutionError(msg)
    out.append(tail)
    return "".join(out)


def _printf(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """PRINTF(format, args...): java.util.Formatter's text; NULL when the format is NULL."""
    types = [a.type for a in args[1:]]

    def one(fmt: str | None, *values: object) -> str | None:
        if fmt is None:
            return None
        return java_format(fmt, [_Java(v, t) for v, t in zip(values, types)])

    return per_distinct_rows(list(args), one, pa.string())


_URL_PARTS = ("HOST", "PATH", "QUERY", "REF", "PROTOCOL", "FILE", "AUTHORITY", "USERINFO")
# The protocols java.net.URL has handlers for; another is a MalformedURLException (NULL).
_URL_PROTOCOLS = ("http", "https", "ftp", "file", "jar", "mailto")
_URL_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_URL_PORT = re.compile(r"[+-]?[0-9]+")


def java_url(v: str) -> dict[str, str | None] | None:
    """The parts java.net.URL splits ``v`` into (its raw text: a host keeps its case and an
    IPv6 host its brackets, a query is not decoded), or None where it refuses ``v``: an
    unknown protocol, a port that is not a number. ``mailto:`` and ``jar:`` URLs hold a
    file but no authority; the others take '//authority' when the text has it."""
    m = _URL_SCHEME.match(v)
    if m is None or m.group(1).lower() not in _URL_PROTOCOLS:
        return None
    protocol, rest = m.group(1).lower(), v[m.end():]
    rest, hashed, ref = rest.partition("#")
    parts: dict[str, str | None] = {"PROTOCOL": protocol, "HOST": "", "AUTHORITY": None,
                                    "USERINFO": None, "QUERY": None,
                                    "REF": ref if hashed and protocol != "mailto" else None}
    if protocol in ("mailto", "jar"):
        file = rest
        path, asked, query = file.rpartition("?") if "?" in file else (file, "", "")
    else:
        before, asked, query = rest.partition("?")
        if before.startswith("//"):
            cut = before.find("/", 2)
            authority, path = (before[2:], "") if cut < 0 else (before[2:cut], before[cut:])
            userinfo, at, hostport = authority.rpartition("@")
            if hostport.startswith("["):
                close = hostport.find("]")
                host, port = hostport[:close + 1], hostport[close + 1:]
                if close < 0 or (port and not port.startswith(":")):
                    return None
                port = port[1:]
            else:
                host, _, port = hostport.partition(":")
            if port and not _URL_PORT.fullmatch(port):
                return None
            parts.update(AUTHORITY=authority, USERINFO=userinfo if at else None, HOST=host)
        else:
            path = before
        file = path + (f"?{query}" if asked else "")
    parts.update(PATH=path, FILE=file, QUERY=query if asked else None)
    return parts


def _parse_url(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """PARSE_URL(url, part [, key]) as java.net.URL splits it (``java_url``); NULL for a
    URL it refuses, a part the URL does not have, or a part name other than the eight,
    written in capitals as Flink reads them."""
    part = None if lits[1] is None else str(lits[1])
    if part not in _URL_PARTS or (len(lits) > 2 and lits[2] is None):
        return pa.nulls(len(args[0]), out)
    key = str(lits[2]) if len(lits) > 2 else None
    if key is not None and part != "QUERY":
        return pa.nulls(len(args[0]), out)

    def one(v: str) -> str | None:
        parts = java_url(v)
        if parts is None:
            return None
        value = parts[part]
        if key is None or value is None:
            return value
        for param in value.split("&"):
            k, eq, val = param.partition("=")
            if k == key and eq:
                return val
        return None

    return per_distinct(args[0], one, pa.string())


def _to_base64(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """TO_BASE64 of a STRING's UTF-8 bytes, or of BYTES as they are."""
    a = args[0]
    if pa.types.is_binary(a.type):
        return per_distinct(a, lambda v: base64.b64encode(v).decode("ascii"), pa.string())
    return _checked(lambda v: base64.b64encode(v.encode("utf-8")).decode("ascii"),
                    "to_base64")(args, lits, out)


def _java_string_hash(v: str) -> int:
    """Java's String.hashCode: over the UTF-16 code units, in 32-bit arithmetic."""
    units = np.frombuffer(v.encode("utf-16-be"), dtype=">u2").astype(np.uint32)
    h = 0
    for u in units.tolist():
        h = (31 * h + u) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _java_abs(h: int) -> int:
    """Java's Math.abs of an int (of -2^31: itself)."""
    return h if h == -(1 << 31) else abs(h)


def _java_decimal_hash(d: decimal.Decimal, scale: int) -> int:
    """Java's BigDecimal.hashCode at ``scale``: 31 * BigInteger.hashCode(unscaled) + scale,
    the BigInteger's over its magnitude's 32-bit words (most significant first) times its
    sign."""
    unscaled = int(d.scaleb(scale))
    mag, h = abs(unscaled), 0
    words = []
    while mag:
        words.append(mag & 0xFFFFFFFF)
        mag >>= 32
    for w in reversed(words):
        h = (31 * h + w) & 0xFFFFFFFF
    h = (h * (1 if unscaled >= 0 else -1)) & 0xFFFFFFFF
    h = (31 * h + scale) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def _hash_code(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """HASH_CODE(x): Java's hashCode of the value, as Flink 2.3 gives it (NULL: NULL)."""
    a = args[0]
    t = a.type
    if T.is_string(t):  # (Flink takes Math.abs of a string's: Integer.MIN_VALUE stays)
        return per_distinct(a, lambda v: _java_abs(_java_string_hash(v)), pa.int32())
    if pa.types.is_decimal(t):  # (BigDecimal.hashCode: 31 * unscaled's hash + scale)
        return per_distinct(a, lambda d: _java_decimal_hash(d, t.scale), pa.int32())
    if pa.types.is_date(t):  # (its days since 1970, an int)
        a, t = a.cast(pa.int32()), pa.int32()
    mask = a.is_null().to_numpy(zero_copy_only=False) if a.null_count else None
    if pa.types.is_boolean(t):
        v = pc.fill_null(a, False).to_numpy(zero_copy_only=False)
        return pa.array(np.where(v, 1231, 1237).astype(np.int32), pa.int32(), mask=mask)
    if pa.types.is_floating(t):
        if t == pa.float32():  # (Float.hashCode: its bits, NaN as one canonical NaN)
            f = pc.fill_null(a, 0.0).to_numpy(zero_copy_only=False).astype(np.float32)
            f = np.where(np.isnan(f), np.float32(np.nan), f)
            return pa.array(f.view(np.int32), pa.int32(), mask=mask)
        d = pc.fill_null(a, 0.0).to_numpy(zero_copy_only=False).astype(np.float64)
        bits = np.where(np.isnan(d), np.float64(np.nan), d).view(np.uint64)
        return pa.array((bits ^ (bits >> np.uint64(32))).astype(np.uint32).view(np.int32),
                        pa.int32(), mask=mask)
    v = pc.fill_null(a.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
    if t == pa.int64():  # (Long.hashCode: the two halves XORed)
        u = v.view(np.uint64)
        return pa.array((u ^ (u >> np.uint64(32))).astype(np.uint32).view(np.int32),
                        pa.int32(), mask=mask)
    return pa.array(v.astype(np.int32), pa.int32(), mask=mask)


def _checked(fn: Callable[[str], str | None], name: str) -> Kernel:
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        try:
            return per_distinct(args[0], fn, pa.string())
        except UnicodeEncodeError as e:
            msg = f"{name.upper()}: {e}"
            raise ExecutionError(msg) from None

    return kernel


@functools.cache
def _expanding(case: str) -> str:
    """An RE2 class of the characters whose ``case`` ("upper" / "lower") mapping is not one
    character (ß -> SS, ﬁ -> FI, İ -> i̇: Unicode's SpecialCasing, which Java follows; all
    below U+2000 or among the ligatures at U+FB00), or depends on its neighbours (Σ)."""
    points = [*range(0x2000), *range(0xFB00, 0xFB20)]
    chars = [p for p in points if len(getattr(chr(p), case)()) != 1]
    if case == "lower":  # (capital sigma: final at a word's end, Unicode's Final_Sigma, as Java)
        chars.append(0x3A3)
    return "[" + "".join(f"\\x{{{p:x}}}" for p in chars) + "]"


def _case(case: str, arrow: Callable[[Array], Array]) -> Kernel:
    """UPPER / LOWER as Java's String.toUpperCase / toLowerCase (Flink's): Arrow's mapping
    (one character for one), and Python's (Java's) for the values holding a character whose
    mapping is longer (Arrow gave 'ẞ' for 'ß', Flink 'SS')."""
    def kernel(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
        a = args[0]
        res = arrow(a)
        if len(a) == 0 or pc.all(pc.fill_null(pc.string_is_ascii(a), True)).as_py():
            return res
        special = pc.fill_null(pc.match_substring_regex(a, _expanding(case)), False)
        if not pc.any(special).as_py():
            return res
        fixed = per_distinct(a.filter(special), getattr(str, case), res.type)
        return pc.replace_with_mask(res, special, fixed)

    return kernel


def _inet_aton(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """Flink's INET_ATON (MySQL's): 'a.b.c.d' -> a<<24 | b<<16 | c<<8 | d, and the short forms
    'a' -> a, 'a.b' -> a.0.0.b, 'a.b.c' -> a.b.0.c; every part decimal digits (leading zeros
    allowed) from 0 to 255; NULL for anything else. Vectorised: the parts of every value in
    one flat array, each part's shift from its position and its value's number of parts."""
    a = args[0]
    n = len(a)
    shaped = pc.fill_null(pc.match_substring_regex(a, r"^[0-9]+(\.[0-9]+){0,3}$"), False)
    parts = pc.split_pattern(pc.if_else(shaped, a, pa.scalar("0")), ".")
    count = pc.list_value_length(parts).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(parts)
    row = pc.list_parent_indices(parts).to_numpy(zero_copy_only=False)
    digits = pc.utf8_ltrim(flat, "0")
    short = pc.less_equal(pc.utf8_length(digits), 3)
    digits = pc.if_else(pc.and_(short, pc.not_equal(digits, "")), digits, pa.scalar("0"))
    value = pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False)
    bad = (value > 255) | ~short.to_numpy(zero_copy_only=False)
    offsets = parts.offsets.to_numpy()[:-1] if n else np.zeros(0, np.int64)
    position = np.arange(len(value)) - (offsets[row] - (offsets[0] if n else 0))
    k = count[row]
    # (k parts: the first goes to bits 24.., the last to bits 0..; 4 parts fill 24/16/8/0,
    # 3 parts 24/16/0, 2 parts 24/0, 1 part 0)
    shift = np.select([position == k - 1, position == 0, position == 1, position == 2],
                      [0, 24, 16, 8], 0)
    total = np.bincount(row, weights=(value << shift).astype(np.float64), minlength=n)
    invalid = np.bincount(row, weights=bad, minlength=n) > 0
    valid = shaped.to_numpy(zero_copy_only=False) & ~invalid
    return pa.array(total.astype(np.int64), pa.int64(), mask=~valid)


def _inet_ntoa(args: list[Array], lits: list[object], out: pa.DataType) -> Array:
    """Flink's INET_NTOA: a number from 0 to 2^32 - 1 as 'a.b.c.d'; NULL outside."""
    a = args[0].cast(pa.int64())
    v = pc.fill_null(a, -1).to_numpy(zero_copy_only=False)
    ok = (v >= 0) & (v <= 0xFFFFFFFF)
    v = np.where(ok, v, 0)
    octets = [pc.cast(pa.array((v >> s) & 0xFF), pa.string()) for s in (24, 16, 8, 0)]
    text = pc.binary_join_element_wise(*octets, ".")
    return pc.if_else(pa.array(ok), text, pa.scalar(None, pa.string()))


KERNELS: dict[str, Kernel] = {
    "upper": _case("upper", pc.utf8_upper),
    "lower": _case("lower", pc.utf8_lower),
    "regexp_replace": constants_or_columns(_regexp_replace, (1, 2)),
    "concat_ws": _concat_ws,
    "left": _left_right(True),
    "right": _left_right(False),
    "ascii": _ascii,
    "chr": _chr,
    "btrim": constants_or_columns(_btrim, (1,)),
    "starts_with": constants_or_columns(_affix(pc.starts_with), (1,)),
    "ends_with": constants_or_columns(_affix(pc.ends_with), (1,)),
    "regexp_count": constants_or_columns(_regexp_count, (1,)),
    "regexp_instr": constants_or_columns(_regexp_instr, (1,)),
    "instr": _instr,
    "regexp_substr": constants_or_columns(_regexp_substr, (1,)),
    "translate": constants_or_columns(_translate, (1, 2)),
    "overlay": _overlay,
    "elt": _elt,
    "to_base64": _to_base64,
    "hash_code": _hash_code,
    "from_base64": _checked(_from_base64, "from_base64"),
    "url_encode": _checked(_url_encode, "url_encode"),
    "url_decode": _checked(_url_decode, "url_decode"),
    "md5": _hash("md5"),
    "sha1": _hash("sha1"),
    "sha224": _hash("sha224"),
    "sha256": _hash("sha256"),
    "sha384": _hash("sha384"),
    "sha512": _hash("sha512"),
    "sha2": constants_or_columns(_sha2, (1,)),
    "parse_url": constants_or_columns(_parse_url, (1, 2)),
    "replace": constants_or_columns(_replace, (1, 2)),
    "regexp": constants_or_columns(_regexp, (1,)),
    "regexp_extract": constants_or_columns(_regexp_extract, (1, 2)),
    "initcap": _initcap,
    "encode": constants_or_columns(_encode, (1,)),
    "decode": constants_or_columns(_decode, (1,)),
    "printf": _printf,
    "is_alpha": _char_test(r"^\p{L}+$"),
    "is_digit": _char_test(r"^\p{Nd}+$"),
    "is_decimal": _char_test(_JAVA_DOUBLE),
    "inet_aton": _inet_aton,
    "inet_ntoa": _inet_ntoa,
}
