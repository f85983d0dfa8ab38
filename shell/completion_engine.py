"""What to suggest at the cursor: a pure function of the text and the catalog (litecli-style),
so it is tested without a terminal."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlengine.options import SESSION_OPTIONS

if TYPE_CHECKING:
    from sqlengine.api import Session

KEYWORDS = (
    "SELECT", "FROM", "WHERE", "GROUP BY", "HAVING", "ORDER BY", "LIMIT", "OFFSET", "JOIN",
    "LEFT JOIN", "RIGHT JOIN", "INNER JOIN", "ON", "USING", "AS", "AND", "OR", "NOT", "IN",
    "BETWEEN", "LIKE", "IS NULL", "IS NOT NULL", "CASE", "WHEN", "THEN", "ELSE", "END",
    "DISTINCT", "UNION ALL", "WITH", "VALUES", "CREATE TABLE", "CREATE VIEW",
    "CREATE TEMPORARY VIEW", "DROP TABLE", "DROP VIEW", "INSERT INTO", "INSERT OVERWRITE",
    "SET", "RESET", "SHOW TABLES", "SHOW VIEWS", "SHOW FUNCTIONS", "DESCRIBE", "EXPLAIN",
    "WATERMARK FOR", "INTERVAL", "TABLE", "DESCRIPTOR", "TUMBLE", "HOP", "CUMULATE", "SESSION",
    "PARTITION BY", "OVER", "ROWS BETWEEN", "RANGE BETWEEN", "PRECEDING", "CURRENT ROW",
    "SOURCE", "HELP", "QUIT", "EXIT",
)

# Every key SET takes (the engine refuses any other), most used first.
_FIRST = ("execution.runtime-mode", "sql-client.execution.result-mode", "parallelism.default")
SET_KEYS = (*_FIRST, *sorted(k for k in SESSION_OPTIONS if k not in _FIRST))

OPTION_VALUES = {
    "connector": ("filesystem", "datagen", "nexmark", "print", "blackhole"),
    "format": ("csv", "json", "parquet"),
    "nexmark.table": ("person", "auction", "bid"),
}


@dataclass(frozen=True)
class CatalogInfo:
    """The names the engine knows: tables with their columns, functions, connector options."""

    tables: dict[str, list[str]] = field(default_factory=dict)
    functions: list[str] = field(default_factory=list)
    options: dict[str, list[str]] = field(default_factory=dict)  # connector -> option keys


@dataclass(frozen=True)
class Suggestion:
    text: str
    kind: str  # keyword | table | column | function | option | value | setting
    start: int  # negative offset from the cursor: how much of the word to replace


def _current_statement(text: str) -> str:
    # The text after the last ';' that is not inside quotes.
    depth_quote = None
    last = 0
    for i, c in enumerate(text):
        if depth_quote:
            if c == depth_quote:
                depth_quote = None
        elif c in "'`":
            depth_quote = c
        elif c == ";":
            last = i + 1
    return text[last:]


_WORD = re.compile(r"[\w$.]*$")


def _aliases(stmt: str, tables: dict[str, list[str]]) -> dict[str, str]:
    """alias (or table name) -> table, from FROM / JOIN clauses, case-insensitive keys."""
    found: dict[str, str] = {}
    pattern = re.compile(r"\b(?:FROM|JOIN)\s+(?:TABLE\s*\(\s*\w+\s*\(\s*TABLE\s+)?`?([\w.]+)`?"
                         r"(?:\s+(?:AS\s+)?(?!(?:WHERE|JOIN|LEFT|RIGHT|INNER|ON|GROUP|ORDER|"
                         r"LIMIT|UNION|USING|HAVING)\b)(\w+))?", re.IGNORECASE)
    names = {t.lower(): t for t in tables}
    for m in pattern.finditer(stmt):
        table = names.get(m.group(1).lower())
        if table is None:
            continue
        found[table.lower()] = table
        if m.group(2):
            found[m.group(2).lower()] = table
    return found


def suggest(text: str, info: CatalogInfo, after: str = "") -> list[Suggestion]:
    """Suggestions for the end of ``text`` (the text before the cursor); ``after`` is the text
    after the cursor, whose FROM clause may name the tables a column comes from."""
    stmt = _current_statement(text)
    whole = stmt + after.split(";", 1)[0]
    found = _WORD.search(stmt)
    word = found.group(0) if found else ""
    before = stmt[: len(stmt) - len(word)]

    quote_open = stmt.count("'") % 2 == 1
    if quote_open:
        return _inside_quotes(stmt, info)

    if "." in word:  # alias.column
        qualifier, _, partial = word.rpartition(".")
        table = _aliases(whole, info.tables).get(qualifier.lower())
        cols = info.tables.get(table, []) if table else []
        return _match(cols, partial, "column")

    prev = re.findall(r"[\w]+|[(),=*]", before.upper())
    last = prev[-1] if prev else ""
    last2 = " ".join(prev[-2:]) if len(prev) >= 2 else last
    if last in ("FROM", "JOIN", "INTO", "TABLE", "DESCRIBE", "DESC", "OVERWRITE") or \
            last2 in ("DROP TABLE", "DROP VIEW"):
        return _match(sorted(info.tables), word, "table")
    if last == "SET" or last == "RESET":
        return _match([f"'{k}'" for k in SET_KEYS], word, "setting")
    clause = _clause(prev)
    if clause in ("SELECT", "WHERE", "GROUP", "ORDER", "HAVING", "ON", "BY"):
        aliases = _aliases(whole, info.tables)
        # Before any FROM is written, every known column is a candidate.
        tables = set(aliases.values()) or set(info.tables)
        columns = sorted({c for t in tables for c in info.tables.get(t, [])})
        return (_match(columns, word, "column") + _match(info.functions, word, "function")
                + _match(list(KEYWORDS), word, "keyword"))
    return _match(list(KEYWORDS), word, "keyword")


def _clause(tokens: list[str]) -> str:
    for t in reversed(tokens):
        if t in ("SELECT", "WHERE", "GROUP", "ORDER", "HAVING", "ON", "FROM", "JOIN", "SET",
                 "WITH", "BY"):
            return t
    return ""


def _inside_quotes(stmt: str, info: CatalogInfo) -> list[Suggestion]:
    partial = stmt[stmt.rfind("'") + 1:]
    if re.search(r"\bSET\s*'[^']*$", stmt, re.IGNORECASE) or \
            re.search(r"\bRESET\s*'[^']*$", stmt, re.IGNORECASE):
        return _match(list(SET_KEYS), partial, "setting")
    with_pos = stmt.upper().rfind("WITH")
    if with_pos < 0 or stmt.count("(", with_pos) <= stmt.count(")", with_pos):
        return []
    options = stmt[with_pos:]
    value_of = re.search(r"'([\w.#-]+)'\s*=\s*'[^']*$", options)
    if value_of:
        key = value_of.group(1)
        values = list(OPTION_VALUES.get(key, ()))
        if key.endswith(("ignore-parse-errors", "allow-comments", "standard-error",
                         "fail-on-missing-field")):
            values = ["true", "false"]
        return _match(values, partial, "value")
    connector = re.search(r"'connector'\s*=\s*'([\w-]+)'", options)
    if connector is None:
        return _match(["connector"], partial, "option")
    keys = info.options.get(connector.group(1), [])
    used = set(re.findall(r"'([\w.#-]+)'\s*=", options))
    return _match([k for k in keys if k not in used], partial, "option")


def _match(candidates: list[str], partial: str, kind: str) -> list[Suggestion]:
    low = partial.lower()
    hits = [c for c in candidates if c.lower().startswith(low)]
    # Names that merely contain the partial text come after the prefix matches.
    hits += [c for c in candidates if low and low in c.lower() and c not in hits]
    return [Suggestion(c, kind, -len(partial)) for c in hits]


def catalog_info(session: Session) -> CatalogInfo:
    """The completion view of a live session's catalog."""
    from sqlengine import connectors
    from sqlengine.functions import AGGREGATES, SIGNATURES

    catalog = session.catalog
    tables: dict[str, list[str]] = {}
    for name in catalog.table_names():
        t = catalog.table(name)
        tables[name] = [f.name for f in t.schema.fields] + [c for c, _ in t.computed]
    for name in catalog.view_names():
        try:
            tables[name] = list(session.sql(f"SELECT * FROM `{name}`").schema.names)
        except Exception:
            tables[name] = []
    functions = sorted({n.upper() for n in SIGNATURES if not n.startswith(("extract_", "is_"))
                        and n not in ("add", "subtract", "multiply", "divide", "eq", "ne",
                                      "lt", "le", "gt", "ge", "and", "or", "not", "negate",
                                      "concat_op", "not_like", "like")}
                       | {a.upper() for a in AGGREGATES} | {"ROW_NUMBER", "EXTRACT",
                                                            "CURRENT_WATERMARK", "PROCTIME"})
    options = {c: sorted(connectors.get(c).option_specs()) for c in connectors.names()}
    return CatalogInfo(tables, functions, options)
