"""SQL hints (``/*+ ... */``) as Flink reads them.

Flink's dynamic table options, ``t /*+ OPTIONS('key' = 'value', ...) */`` right after a table's
name in FROM or INSERT INTO, override the table's WITH options for that one use; they are
checked like WITH options. ``SELECT /*+ STATE_TTL('name' = '1d', ...) */`` gives the regular
joins and the GROUP BY of that query block a state TTL of their own for the inputs it names
(bind_state_ttl.py), and ``LOOKUP('table' = 'dim', ...)`` there its lookup joins' options
(bind_lookup_hint.py). Every other hint (join strategy hints such as BROADCAST, or a hint
placed anywhere else) is refused at its place: a hint that would be ignored is a silent
wrong answer, and sqlglot would otherwise keep it as a plain comment.

A query's hints are swapped, before sqlglot parses it, for marker comments of the same length
(so every offset stays true); the parse tree then says which node each one follows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.tokens import TokenType

from sqlengine.dialect import Flink
from sqlengine.errors import NotSupportedError, ParseError, Span

START, END = "/*+", "*/"
_MARKER = re.compile(r"^\s*sqeh(\d+)\s*$")
META_KEY = "sqlengine_options"  # where a Table node carries its OPTIONS hint
TTL_KEY = "sqlengine_state_ttl"  # where a Select node carries its STATE_TTL hint
LOOKUP_KEY = "sqlengine_lookup"  # where a Select node carries its LOOKUP hints (a list)
JOIN_KEY = "sqlengine_join_hints"  # where a Select node carries its join hints (a list)
JOIN_STRATEGIES = ("BROADCAST", "SHUFFLE_HASH", "SHUFFLE_MERGE", "NEST_LOOP")
# (the hints of a query block, after SELECT)
_BLOCK_HINTS = ("STATE_TTL", "LOOKUP", *JOIN_STRATEGIES)
_HINT_HEAD = re.compile(r"\s*([A-Za-z_]\w*)\s*\(")
_HINT_GAP = re.compile(r"\s*(,)?\s*")


@dataclass(frozen=True, slots=True)
class TableOptions:
    """An ``OPTIONS(...)`` hint: its pairs in order, where each key starts in the script, and
    where the hint itself lies (for errors about it as a whole)."""

    options: tuple[tuple[str, str], ...]
    key_offsets: tuple[tuple[str, int], ...]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class JoinHint:
    """A join strategy hint, ``BROADCAST(t1, t2)``: its strategy and the tables it names,
    each with where its name starts in the script."""

    strategy: str
    tables: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class _Hint:
    start: int  # offset in the query text
    end: int
    text: str  # between /*+ and */


def mark(sql: str) -> tuple[str, list[_Hint]]:
    """``sql`` with each hint replaced by a same-length marker comment, and the hints."""
    hints: list[_Hint] = []
    pos = 0
    out: list[str] = []
    for start, end in _hint_spans(sql):
        body = f"sqeh{len(hints)}"
        # (a hint too short to hold a marker is no OPTIONS hint: it is refused, unused)
        marker = "/*" + body.ljust(end - start - 4) + "*/" if end - start >= len(body) + 4 \
            else None
        hints.append(_Hint(start, end, sql[start + len(START):end - len(END)]))
        out.append(sql[pos:start])
        out.append(marker if marker is not None else " " * (end - start))
        pos = end
    out.append(sql[pos:])
    return "".join(out), hints


def _hint_spans(sql: str) -> list[tuple[int, int]]:
    """Where ``/*+ ... */`` comments lie: in the gaps between tokens (never in a string)."""
    if START not in sql:
        return []
    try:
        tokens = Flink().tokenize(sql)
    except sqlglot.errors.TokenError:
        return []  # the parse that follows reports it
    spans: list[tuple[int, int]] = []
    pos = 0
    for tok in [*tokens, None]:
        if tok is not None and tok.token_type == TokenType.HINT:
            # sqlglot reads a hint after SELECT / INSERT as a token of its own.
            spans.append((tok.start, tok.end + 1))
            pos = tok.end + 1
            continue
        gap_end = len(sql) if tok is None else tok.start
        gap = sql[pos:gap_end]
        i = gap.find(START)
        while i >= 0:
            j = gap.find(END, i + len(START))
            if j < 0:
                break
            spans.append((pos + i, pos + j + len(END)))
            i = gap.find(START, j + len(END))
        if tok is not None:
            pos = tok.end + 1
    return spans


def attach(tree: exp.Expression, hints: list[_Hint], offset: int, script: str) -> None:
    """Give each Table node its OPTIONS hint (in ``meta``); refuse every other hint."""
    if not hints:
        return
    used: set[int] = set()
    for node in tree.walk():
        for comment in list(node.comments or ()):
            m = _MARKER.match(comment)
            if m is None:
                continue
            i = int(m.group(1))
            used.add(i)
            hint = hints[i]
            if isinstance(node, exp.Select) and _name(hint.text) in _BLOCK_HINTS:
                _block_hints(node, hint, offset, script)
                node.comments.remove(comment)
                continue
            if not isinstance(node, exp.Table) or isinstance(node.this, exp.Anonymous):
                raise _refuse(hint, offset, script)
            node.meta[META_KEY] = table_options(hint.text, offset + hint.start + len(START),
                                                 script)
            node.comments.remove(comment)
    for i, hint in enumerate(hints):
        if i not in used:
            raise _refuse(hint, offset, script)


def _block_hints(node: exp.Select, hint: _Hint, offset: int, script: str) -> None:
    """A query block's hint comment: ``STATE_TTL(...)`` and ``LOOKUP(...)`` hints, separated
    by commas, as Flink reads them (one STATE_TTL; LOOKUP hints in order: the first naming a
    table is its)."""
    start = offset + hint.start + len(START)
    for name, text, at in _split_hints(hint.text, start, script):
        if name not in _BLOCK_HINTS:
            raise _refuse(_Hint(at - offset - len(START), at - offset + len(text) + len(END),
                                text), offset, script)
        if name in JOIN_STRATEGIES:
            node.meta.setdefault(JOIN_KEY, []).append(_join_hint(name, text, at, script))
            continue
        parsed = table_options(text, at, script, name)
        if name == "LOOKUP":
            node.meta.setdefault(LOOKUP_KEY, []).append(parsed)
        elif TTL_KEY in node.meta:
            raise ParseError("a query block takes one STATE_TTL hint (name every input in it)",
                             span=Span.from_offset(script, at, at + len(text)), sql=script)
        else:
            node.meta[TTL_KEY] = parsed


_TABLE_NAME = re.compile(r"\s*(`(?:[^`]|``)+`|'(?:[^']|'')+'|[A-Za-z_][\w$]*)\s*(,|\))")


def _join_hint(name: str, text: str, start: int, script: str) -> JoinHint:
    """``NAME(t1, t2, ...)`` (``text`` starts at ``start`` in the script): the tables, as
    simple identifiers, backquoted or string literals."""
    pos = text.index("(") + 1
    tables: list[tuple[str, int]] = []
    while True:
        m = _TABLE_NAME.match(text, pos)
        if m is None:
            raise ParseError(f"{name} hint: expected the names of tables, separated by commas "
                             "and closed by ')'",
                             span=Span.from_offset(script, start + pos, start + len(text)),
                             sql=script)
        raw = m.group(1)
        table = raw[1:-1].replace(raw[0] * 2, raw[0]) if raw[0] in "`'" else raw
        tables.append((table, start + m.start(1)))
        pos = m.end()
        if m.group(2) == ")":
            break
    if text[pos:].strip():
        raise ParseError(f"{name} hint: unexpected text after ')'",
                         span=Span.from_offset(script, start + pos, start + len(text)),
                         sql=script)
    return JoinHint(name, tuple(tables))


def _split_hints(text: str, start: int, script: str) -> list[tuple[str, str, int]]:
    """The hints of one comment's text (which starts at ``start`` in the script): each
    ``NAME(...)`` (quotes respected) with its name and where it starts."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while True:
        m = _HINT_HEAD.match(text, pos)
        if m is None:
            raise ParseError("a hint: expected NAME(...) hints separated by commas",
                             span=Span.from_offset(script, start + pos, start + len(text)),
                             sql=script)
        i, quoted = m.end(), False
        while i < len(text) and (quoted or text[i] != ")"):
            if text[i] == "'":
                quoted = not quoted
            i += 1
        end = min(i + 1, len(text))
        out.append((m.group(1).upper(), text[m.start(1):end], start + m.start(1)))
        rest = _HINT_GAP.match(text, end)
        assert rest is not None
        if rest.end() == len(text):
            return out
        if rest.group(1) is None:
            raise ParseError("a hint: expected a comma between two hints",
                             span=Span.from_offset(script, start + end, start + len(text)),
                             sql=script)
        pos = rest.end()


def _name(text: str) -> str:
    m = re.match(r"\s*([A-Za-z_]\w*)", text)
    return m.group(1).upper() if m else ""


def _refuse(hint: _Hint, offset: int, script: str) -> NotSupportedError:
    name = _name(hint.text)
    what = f"hint {name}" if name else "an empty hint"
    span = Span.from_offset(script, offset + hint.start, offset + hint.end)
    if name == "OPTIONS":
        msg = ("an OPTIONS hint goes right after a table's name (FROM t /*+ OPTIONS(...) */, "
               "INSERT INTO t /*+ OPTIONS(...) */)")
    elif name == "STATE_TTL":
        msg = ("a STATE_TTL hint goes right after SELECT (SELECT /*+ STATE_TTL('t' = '1d') "
               "*/ ...), for the joins and the GROUP BY of that query block")
    elif name == "LOOKUP":
        msg = ("a LOOKUP hint goes right after SELECT (SELECT /*+ LOOKUP('table' = 'dim', "
               "...) */ ...), for the lookup joins of that query block")
    elif name in JOIN_STRATEGIES:
        msg = (f"a {name} hint goes right after SELECT (SELECT /*+ {name}(t) */ ...), for the "
               "joins of that query block")
    else:
        msg = (f"{what} is not supported: the hints are OPTIONS('key' = 'value', ...) after a "
               "table's name (dynamic table options), and STATE_TTL('name' = 'duration', ...), "
               "LOOKUP('table' = 'name', ...) and the join hints BROADCAST, SHUFFLE_HASH, "
               "SHUFFLE_MERGE and NEST_LOOP (t, ...) after SELECT")
    return NotSupportedError(msg, span=span, sql=script)


_PAIR = re.compile(r"\s*('(?:[^']|'')*')\s*=\s*('(?:[^']|'')*')\s*(,|\))")


def table_options(text: str, start: int, script: str, name: str = "OPTIONS") -> TableOptions:
    """Parse ``OPTIONS('k' = 'v', ...)`` (the text between ``/*+`` and ``*/``, which starts at
    ``start`` in the script, just after the ``/*+``), or another hint ``name``'s pairs.

    Raises:
        ParseError: located at the part that does not read.
        NotSupportedError: for a hint other than ``name``.
    """
    hint_start = start - len(START)
    hint_end = start + len(text) + len(END)
    m = re.match(r"\s*([A-Za-z_]\w*)\s*\(", text)
    if m is None or m.group(1).upper() != name:
        raise _refuse(_Hint(0, hint_end - hint_start, text), hint_start, script)
    pos = m.end()
    pairs: list[tuple[str, str]] = []
    offsets: list[tuple[str, int]] = []
    while True:
        pm = _PAIR.match(text, pos)
        if pm is None:
            raise ParseError(f"{name} hint: expected 'key' = 'value' pairs separated by "
                             "commas and a closing ')'",
                             span=Span.from_offset(script, start + pos, hint_end), sql=script)
        key = pm.group(1)[1:-1].replace("''", "'")
        value = pm.group(2)[1:-1].replace("''", "'")
        if key.startswith("$"):
            raise ParseError(f"{name} hint: keys starting with '$' are reserved",
                             span=Span.from_offset(script, start + pm.start(1),
                                                   start + pm.end(1)), sql=script)
        if key in dict(pairs):
            raise ParseError(f"{name} hint names {key!r} twice",
                             span=Span.from_offset(script, start + pm.start(1),
                                                   start + pm.end(1)), sql=script)
        pairs.append((key, value))
        offsets.append((key, start + pm.start(1)))
        pos = pm.end()
        if pm.group(3) == ")":
            break
    if text[pos:].strip():
        raise ParseError(f"{name} hint: unexpected text after ')' (one {name}(...) per hint)",
                         span=Span.from_offset(script, start + pos, hint_end), sql=script)
    if not pairs:
        raise ParseError(f"{name} hint names no option",
                         span=Span.from_offset(script, hint_start, hint_end), sql=script)
    return TableOptions(tuple(pairs), tuple(offsets), hint_start, hint_end)


def merged(table_name: str, options: tuple[tuple[str, str], ...], hint: TableOptions,
           script: str) -> tuple[tuple[str, str], ...]:
    """A table's WITH options overridden by a hint's (which may not change the connector)."""
    for key, off in hint.key_offsets:
        if key == "connector":
            raise NotSupportedError(
                f"table {table_name!r}: an OPTIONS hint cannot change 'connector'",
                span=Span.from_offset(script, off, off + len(key) + 2), sql=script)
    out = dict(options)
    out.update(hint.options)
    return tuple(out.items())
