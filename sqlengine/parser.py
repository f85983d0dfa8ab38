"""Parse SQL scripts: split into statements, lark for statement structure, sqlglot for queries."""

from __future__ import annotations

import os
import re
from functools import lru_cache

import sqlglot
from lark import Lark
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)
from sqlglot import exp

from sqlengine import hints
from sqlengine.cache_dir import user_cache_directory
from sqlengine.dialect import Flink
from sqlengine.errors import NotSupportedError, ParseError, Span, SqlEngineError
from sqlengine.statements import QueryText, Statement, StatementBuilder


@lru_cache(maxsize=1)
def _grammar() -> Lark:
    # (beside this file; importlib.resources would import tempfile and shutil at start-up)
    with open(os.path.join(os.path.dirname(__file__), "grammar", "statements.lark"),
              encoding="utf-8") as f:
        text = f.read()
    return Lark(
        text,
        parser="lalr",
        propagate_positions=True,
        maybe_placeholders=True,
        cache=_grammar_cache_file(text),
    )


def _grammar_cache_file(text: str) -> str | bool:
    """Where lark keeps the built LALR tables between runs (building them takes ~150 ms).

    A file of the user's own cache directory rather than lark's default in the shared temporary
    directory, whose pickle another user could plant. lark checks the grammar's hash (with its
    own version and Python's) before using the file and rebuilds it when they differ; when the
    directory cannot be written the tables are built each time. The name holds the grammar's
    hash: lark writes the file in place, so two processes of different grammars (two installed
    versions) writing one file at once could leave one's header over the other's tables.
    """
    import hashlib

    directory = user_cache_directory()
    if directory is None:
        return False
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    return os.path.join(directory, f"statements-grammar-{digest}.lark-cache")


_SET_BEGIN = re.compile(
    r"(?is)\s*(?:(?P<explain>EXPLAIN\s+(?:PLAN\s+FOR\s+)?(?P<details>(?:(?:ESTIMATED_COST|"
    r"CHANGELOG_MODE|JSON_EXECUTION_PLAN|PLAN_ADVICE|VERBOSE)\s*,?\s*)*))(?:EXECUTE\s+)?"
    r"STATEMENT\s+SET\s+BEGIN|EXECUTE\s+STATEMENT\s+SET\s+BEGIN|BEGIN\s+STATEMENT\s+SET)\b")
_SET_END = re.compile(r"(?is)\s*END\s*$")


def split_script(script: str) -> list[tuple[int, str]]:
    """Split a script at top-level ``;`` into (offset, statement text) pairs.

    Quotes, backtick identifiers and comments are respected; statements that hold only
    white space and comments are dropped. A statement set (``EXECUTE STATEMENT SET BEGIN
    ... END`` or the SQL client's ``BEGIN STATEMENT SET; ... END;``) stays one statement,
    from its BEGIN to its END. A byte order mark at the start is white space.
    """
    if script.startswith("\ufeff"):
        script = " " + script[1:]  # (same length: offsets stay the script's)
    parts = _split_plain(script)
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(parts):
        offset, text = parts[i]
        m = _SET_BEGIN.match(text)
        if m is None:
            out.append((offset, text))
            i += 1
            continue
        j = i
        if not _SET_END.fullmatch(text[m.end():]):  # (else BEGIN END: an empty set)
            j = i + 1
            while j < len(parts) and not _SET_END.fullmatch(parts[j][1]):
                j += 1
        if j == len(parts):
            raise ParseError("this statement set has no END", span=Span.from_offset(
                script, offset, offset + m.end()), sql=script)
        end_offset, end_text = parts[j]
        out.append((offset, script[offset:end_offset + len(end_text)]))
        i = j + 1
    return out


def _split_plain(script: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    start = i = 0
    n = len(script)
    has_code = False
    first_code = 0
    while i < n:
        c = script[i]
        if c in "'`\"":
            end = i + 1
            while end < n:
                if script[end] == c:
                    if end + 1 < n and script[end + 1] == c:
                        end += 2
                        continue
                    break
                end += 1
            if not has_code:
                has_code, first_code = True, i
            i = end + 1
            continue
        if c == "-" and script.startswith("--", i):
            nl = script.find("\n", i)
            i = n if nl < 0 else nl + 1
            continue
        if c == "/" and script.startswith("/*", i):
            close = script.find("*/", i + 2)
            if close < 0:  # (it would silently swallow the rest of the script)
                raise ParseError("unterminated comment: this '/*' has no closing '*/'",
                                 span=Span.from_offset(script, i, i + 2), sql=script)
            i = close + 2
            continue
        if c == ";":
            if has_code:
                out.append((first_code, script[first_code:i]))
            has_code = False
            start = i + 1
            i += 1
            continue
        if not c.isspace() and not has_code:
            has_code, first_code = True, i
        i += 1
    if has_code:
        out.append((first_code, script[first_code:n]))
    del start
    return out


_UNDECODED = re.compile("[\udc80-\udcff]")


def parse_statement(text: str, offset: int = 0, script: str | None = None) -> Statement:
    """Parse one statement (no trailing ``;``); ``offset`` locates it in ``script``.

    Raises:
        ParseError: with the line, column and a caret excerpt of the offending token.
    """
    script = script if script is not None else text
    bad = _UNDECODED.search(text)
    if bad is not None:  # (bytes read from a stream that is not UTF-8: surrogate escapes)
        raise ParseError(f"the statement is not UTF-8 text here (byte "
                         f"0x{ord(bad.group()) - 0xDC00:02x})",
                         span=Span.from_offset(script, offset + bad.start()), sql=script)
    begin = _SET_BEGIN.match(text)
    if begin is not None:
        inserts = _statement_set(text, offset, script, begin.end())
        if begin.group("explain") is None:
            return inserts
        return _explained(begin.group("details"), inserts)
    _no_control_characters_in_names(text, offset, script)
    try:
        tree = _grammar().parse(text)
    except UnexpectedInput as e:
        _refuse_unsupported_statement(text, offset, script)
        raise _lark_error(e, text, offset, script) from None
    try:
        return StatementBuilder(text, offset).transform(tree)
    except VisitError as e:  # (a statement the grammar takes but the builder refuses)
        if isinstance(e.orig_exc, SqlEngineError):
            at = getattr(e.orig_exc, "offset", None)
            if at is not None and e.orig_exc.span is None:
                e.orig_exc.span = Span.from_offset(script, at)
                e.orig_exc.sql = script
            raise e.orig_exc from None
        raise


# Statements of Flink SQL (and of other engines) that sqlengine does not run, named in the
# error instead of a parse error at their first word (checked only for text that failed to
# parse, so no supported form is shadowed).
_UNSUPPORTED_STATEMENTS = [
    (r"(UN)?LOAD\s+MODULE\b",
     "LOAD / UNLOAD MODULE are not supported: the built-in functions are the one module, "
     "'core', always there (SHOW MODULES lists it)"),
    (r"(ADD|REMOVE)\s+JAR\b|SHOW\s+JARS\b",
     "JARs are not supported: sqlengine runs no JVM code (Python functions: CREATE FUNCTION "
     "... LANGUAGE PYTHON)"),
    (r"(DESCRIBE|DESC)\s+(CATALOG|DATABASE|FUNCTION|MODEL)\b|SHOW\s+CREATE\s+"
     r"(CATALOG|DATABASE|FUNCTION|MODEL|MATERIALIZED)\b",
     "describing catalogs, databases, functions and models is not supported"),
    (r"ALTER\s+(DATABASE|CATALOG|FUNCTION|MODEL|MATERIALIZED)\b",
     "ALTER is supported for tables and views only (ALTER TABLE, ALTER VIEW); drop and "
     "create the object again"),
    (r"(CREATE\s+(OR\s+REPLACE\s+)?|DROP\s+|SHOW\s+)(MATERIALIZED\s+TABLES?|MODELS?)\b",
     "materialized tables and models are not supported"),
    (r"SHOW\s+(PROCEDURES|PARTITIONS)\b|CALL\b",
     "procedures and partition listings are not supported"),
    (r"ANALYZE\s+TABLE\b", "ANALYZE TABLE is not supported: estimates come from parquet "
     "footers and samples"),
    (r"(TRUNCATE\s+TABLE|DELETE\s+FROM|UPDATE)\b",
     "row-level changes (TRUNCATE / DELETE / UPDATE) are not supported: no connector here "
     "modifies rows in place; INSERT OVERWRITE replaces a filesystem table's rows"),
    (r"CREATE\s+OR\s+REPLACE\s+TEMPORARY\s+TABLE\b",
     "CREATE OR REPLACE TABLE ... AS does not replace a temporary table (as in Flink): DROP "
     "TEMPORARY TABLE, then CREATE TEMPORARY TABLE ... AS"),
    (r"(CREATE\s+OR\s+REPLACE|REPLACE)\s+TABLE\s+IF\s+NOT\s+EXISTS\b",
     "[CREATE OR] REPLACE TABLE ... AS takes no IF NOT EXISTS (as in Flink): CREATE OR "
     "REPLACE creates a table that does not exist"),
]


def _refuse_unsupported_statement(text: str, offset: int, script: str) -> None:
    from sqlengine.errors import NotSupportedError

    lead = len(text) - len(text.lstrip())
    for pattern, reason in _UNSUPPORTED_STATEMENTS:
        m = re.match(pattern, text[lead:], re.IGNORECASE)
        if m is not None:
            start = offset + lead
            raise NotSupportedError(reason, span=Span.from_offset(script, start,
                                                                   start + m.end()),
                                    sql=script)


def _explained(details: str, inserts: Statement) -> Statement:
    """EXPLAIN [PLAN FOR] [detail, ...] [EXECUTE] STATEMENT SET BEGIN ... END."""
    from sqlengine.statements import Explain

    return Explain(tuple(w.upper() for w in re.findall(r"\w+", details)),
                   inserts)  # type: ignore[arg-type]


def _statement_set(text: str, offset: int, script: str, start: int) -> Statement:
    """EXECUTE STATEMENT SET BEGIN INSERT ...; INSERT ...; END: INSERT statements only."""
    from sqlengine.statements import Insert, StatementSet

    end = re.search(r"(?is)\bEND\s*$", text)
    if end is None:
        raise ParseError("this statement set has no END",
                         span=Span.from_offset(script, offset, offset + start), sql=script)
    inner = text[start:end.start()]
    inserts = []
    for o, part in _split_plain(inner):
        stmt = parse_statement(part, offset + start + o, script)
        if not isinstance(stmt, Insert):
            at = offset + start + o
            raise ParseError("a statement set holds INSERT statements only",
                             span=Span.from_offset(script, at, at + len(part.split()[0])),
                             sql=script)
        inserts.append(stmt)
    if not inserts:
        raise ParseError("this statement set holds no INSERT",
                         span=Span.from_offset(script, offset, offset + start), sql=script)
    return StatementSet(tuple(inserts))


_QUOTED = re.compile(r"'(?:[^']|'')*'|`(?:[^`]|``)*`")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _no_control_characters_in_names(text: str, offset: int, script: str) -> None:
    """A quoted name holding a control character (NUL, a line break...) is refused: it would
    end up in file names, headers and catalogs as an invisible or truncating byte."""
    for m in _QUOTED.finditer(text):
        if not m.group(0).startswith("`"):
            continue
        bad = _CONTROL.search(m.group(0))
        if bad is not None:
            at = offset + m.start() + bad.start()
            msg = (f"a quoted name holds the control character U+{ord(bad.group(0)):04X}; "
                   "names cannot hold control characters")
            raise ParseError(msg, span=Span.from_offset(script, at, at + 1), sql=script)


def parse_script(script: str) -> list[Statement]:
    """Parse every statement of a script, in order."""
    return [parse_statement(text, offset, script) for offset, text in split_script(script)]


def _lark_error(e: UnexpectedInput, text: str, offset: int, script: str) -> ParseError:
    pos = getattr(e, "pos_in_stream", None)
    if pos is None:
        pos = len(text.rstrip())
    if isinstance(e, UnexpectedToken) and e.token.type == "$END":
        pos = len(text.rstrip())
        msg = "unexpected end of statement"
    elif isinstance(e, UnexpectedEOF):
        msg = "unexpected end of statement"
    elif isinstance(e, UnexpectedToken):
        msg = f"unexpected {str(e.token)!r}"
    elif isinstance(e, UnexpectedCharacters):
        msg = f"unexpected character {text[pos]!r}" if pos < len(text) else "unexpected input"
    else:
        msg = "syntax error"
    expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
    readable = list(dict.fromkeys(_terminal_words(t) for t in expected if not t.startswith("__")))
    if readable and len(readable) <= 8:
        msg += f"; expected {', '.join(readable)}"
    if pos == 0 and not text[:1].isalpha():
        msg = f"cannot parse statement starting with {text.split()[0]!r}" if text.split() else msg
    if readable == ["NOT"] and re.search(r"PRIMARY\s+KEY\b[^;]*$", text[:pos], re.I):
        msg += " (a key is PRIMARY KEY ... NOT ENFORCED: as Flink, no key is enforced)"
    return ParseError(msg, span=Span.from_offset(script, offset + pos), sql=script)


def _terminal_words(terminal: str) -> str:
    """How an error names what the grammar expected: the words of a keyword terminal
    (IF_NOT_EXISTS: IF NOT EXISTS), not the grammar's name for it."""
    if terminal in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[terminal]
    return terminal.removesuffix("_KW").replace("_", " ")


_TERMINAL_NAMES = {
    "RPAR": "')'", "LPAR": "'('", "COMMA": "','", "EQUAL": "'='", "STRING": "a string",
    "NAME": "a name", "QUOTED_NAME": "a name", "NUMBER": "a number", "QUERY": "a query",
    "$END": "end of statement", "SEMICOLON": "';'", "LIKE_KW": "LIKE", "ILIKE_KW": "ILIKE",
    "SHOW_FROM": "FROM or IN", "SHOW_NOT": "NOT", "SHOW_CREATE_KIND": "TABLE or VIEW",
    "SHOW_WHAT": "TABLES, VIEWS, [USER] FUNCTIONS, CATALOGS, DATABASES, CURRENT CATALOG, "
                 "CURRENT DATABASE, JOBS",
    "LIKE_STRATEGY": "INCLUDING, EXCLUDING or OVERWRITING",
    "LIKE_FEATURE": "ALL, CONSTRAINTS, PARTITIONS, GENERATED, OPTIONS, WATERMARKS or METADATA",
    "METADATA_FROM": "FROM", "LT": "'<'", "GT": "'>'", "STAR": "'*'",
    "WITH_TZ": "WITH [LOCAL] TIME ZONE", "WITH_OPTIONS": "WITH (", "OPERATOR": "an operator",
    "DROP_MODE": "RESTRICT or CASCADE", "USE_CATALOG": "CATALOG", "DROP_KIND": "TABLE or VIEW",
    "INSERT_MODE": "INTO or OVERWRITE", "SIGNED_NUMBER": "a number",
    "DESCRIBE": "DESCRIBE", "EXPLAIN_DETAIL": "ESTIMATED_COST, CHANGELOG_MODE, "
                                              "JSON_EXECUTION_PLAN, PLAN_ADVICE or VERBOSE",
    "HINT": "a hint /*+ ... */",
}


def parse_query(query: QueryText, script: str) -> exp.Expression:
    """Parse a query body with the Flink dialect of sqlglot.

    Raises:
        ParseError: located in ``script`` (line:column and caret).
    """
    sql, found = hints.mark(query.sql)
    try:
        tree = sqlglot.parse_one(sql, read=Flink)
    except sqlglot.errors.ParseError as e:
        err = e.errors[0] if e.errors else {}
        line, col = err.get("line", 1), err.get("col", 1)
        rel = _offset_of(query.sql, line, col)
        length = len(err.get("highlight") or " ")
        start = query.offset + max(rel - length + 1, 0)
        # (the text from the one before the highlight: a name after AS is highlighted
        # without its opening quote)
        before = script[max(start - 1, query.offset):start + length]
        msg = _readable(str(err.get("description", "syntax error")), before, query.sql)
        raise ParseError(msg, span=Span.from_offset(script, start, start + length),
                         sql=script) from None
    except sqlglot.errors.TokenError as e:
        at = _unclosed_quote(query.sql)
        if at is not None:
            kind = {"'": "string", "`": "name", '"': "name"}[query.sql[at]]
            raise ParseError(f"this {kind}'s {query.sql[at]} is never closed",
                             span=Span.from_offset(script, query.offset + at),
                             sql=script) from None
        raise ParseError(f"cannot tokenize query: {e}",
                         span=Span.from_offset(script, query.offset), sql=script) from None
    if tree is None:
        raise ParseError("empty query", span=Span.from_offset(script, query.offset), sql=script)
    if '"' in query.sql:  # (sqlglot reads an unclosed " as a name: unknown column '""')
        at = _unclosed_quote(query.sql)
        if at is not None and query.sql[at] == '"':
            raise ParseError('this name\'s " is never closed (Flink quotes names with '
                             "backticks, `name`, and strings with single quotes)",
                             span=Span.from_offset(script, query.offset + at), sql=script)
    _table_args_in_calls_only(tree, query, script)
    _no_reserved_aliases(tree, query, script)
    _limit_all(tree, query, script)
    hints.attach(tree, found, query.offset, script)
    return tree.transform(_array_agg_nulls, copy=False)


def _unclosed_quote(sql: str) -> int | None:
    """The offset of the quote (' ` ") that opens a string or name never closed."""
    at, i = None, 0
    while i < len(sql):
        ch = sql[i]
        if at is None and sql.startswith("--", i):
            i = sql.find("\n", i) if "\n" in sql[i:] else len(sql)
            continue
        if ch in "'`\"":
            if at is None:
                at = i
            elif sql[at] == ch:
                if sql[i + 1:i + 2] == ch:  # (a doubled quote inside)
                    i += 2
                    continue
                at = None
        i += 1
    return at


def _limit_all(tree: exp.Expression, query: QueryText, script: str) -> None:
    """LIMIT ALL is no limit (as the SQL standard's and PostgreSQL's); ORDER BY ALL (DuckDB's)
    is refused by name. Both read ALL as an unknown column."""
    def is_all(e: exp.Expression | None) -> bool:
        return isinstance(e, exp.Column) and not e.table and e.this.name.upper() == "ALL" \
            and not e.this.args.get("quoted")

    for limit in list(tree.find_all(exp.Limit)):
        if is_all(limit.expression) and not limit.expressions:
            limit.pop()
    for order in tree.find_all(exp.Order):
        if len(order.expressions) == 1 and is_all(order.expressions[0].this):
            raise NotSupportedError("ORDER BY ALL is not supported: name the columns",
                                    span=Span.from_offset(script, query.offset), sql=script)


_OPERATORS = {"Add": "+", "Sub": "-", "Mul": "*", "Div": "/", "Mod": "%", "EQ": "=",
              "NEQ": "<>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "And": "AND",
              "Or": "OR", "DPipe": "||", "Like": "LIKE", "Is": "IS", "In": "IN"}


_CLAUSES = {"Where": "WHERE is missing its condition", "Having": "HAVING is missing its "
            "condition", "Qualify": "QUALIFY is missing its condition", "Order": "ORDER BY is "
            "missing its expressions", "Limit": "LIMIT is missing its count", "Offset": "OFFSET "
            "is missing its count", "Fetch": "FETCH is missing its count", "Between": "BETWEEN "
            "is missing a bound (x BETWEEN low AND high)", "Window": "WINDOW is missing a "
            "window's name"}


def _readable(msg: str, highlight: str, sql: str) -> str:
    """sqlglot's message in SQL's words (its class names and argument keys left out)."""
    m = re.match(r"Required keyword: '(\w+)' missing for <class '[\w.]*?\.(\w+)'>", msg)
    if m is not None:
        name = m.group(2)
        if name in _OPERATORS:
            return f"the operator {_OPERATORS[name]} is missing an operand"
        if name in _CLAUSES:
            return _CLAUSES[name]
        return f"{name.upper()}(...) is missing an argument"
    # (sqlglot shows its token object: "but got <Token token_type: TokenType.WHERE, text:
    # WHERE, line: 1, ...>"; the end of the text is its SENTINEL token)
    m = re.match(r"(.*?)\s*<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+", msg)
    if m is not None:
        what = "the end of the query" if m.group(2) == "SENTINEL" else repr(m.group(3))
        return f"{m.group(1)} {what}"
    if msg.startswith("Invalid expression / Unexpected token") and '"' in sql and \
            '"' in highlight:
        return (msg + ' (a name in double quotes: Flink quotes names with backticks, `name`, '
                "and strings with single quotes)")
    return msg


def _array_agg_nulls(node: exp.Expression) -> exp.Expression:
    """ARRAY_AGG(x RESPECT NULLS) is ARRAY_AGG(x); ARRAY_AGG(x IGNORE NULLS) is ARRAY_AGG(x)
    FILTER (WHERE x IS NOT NULL), ANDed with a FILTER written after it (Flink 2.3's: a group
    of NULLs only is NULL). FIRST_VALUE / LAST_VALUE(x IGNORE NULLS) is FIRST_VALUE /
    LAST_VALUE(x), which skip NULLs. On other calls the clauses stay, and are refused by
    name."""
    extra = None
    agg = node
    if isinstance(node, exp.Filter):
        agg = node.this
        extra = node.expression.this if isinstance(node.expression, exp.Where) \
            else node.expression
    # (sqlglot puts the clause around the call, or around its argument before a FILTER)
    clause = None
    # FIRST_VALUE / LAST_VALUE(x IGNORE NULLS): Flink's always skip NULLs
    if isinstance(agg, exp.IgnoreNulls) and isinstance(agg.this, exp.FirstValue |
                                                       exp.LastValue):
        agg.replace(agg.this)
        return node if node is not agg else agg.this
    if isinstance(agg, exp.FirstValue | exp.LastValue) and isinstance(agg.this,
                                                                       exp.IgnoreNulls):
        agg.set("this", agg.this.this)
        return node
    if isinstance(agg, exp.IgnoreNulls | exp.RespectNulls) and \
            isinstance(agg.this, exp.ArrayAgg):
        clause, agg = agg, agg.this
    elif isinstance(agg, exp.ArrayAgg) and isinstance(agg.this, exp.IgnoreNulls |
                                                      exp.RespectNulls):
        clause = agg.this
        agg.set("this", clause.this)
    if clause is None:
        return node
    conds = [] if extra is None else [extra]
    if isinstance(clause, exp.IgnoreNulls):
        arg = agg.this.expressions[0] if isinstance(agg.this, exp.Distinct) else agg.this
        conds.insert(0, exp.Not(this=exp.Is(this=arg.copy(), expression=exp.Null())))
    if not conds:
        return agg
    cond = conds[0] if len(conds) == 1 else exp.and_(*conds)
    return exp.Filter(this=agg, expression=exp.Where(this=cond))


def _table_args_in_calls_only(tree: exp.Expression, query: QueryText, script: str) -> None:
    """``TABLE t`` is an argument of a table function (TUMBLE(TABLE t, ...), DATA => TABLE t);
    anywhere else it is a syntax error, not an expression."""
    from sqlengine.dialect import TableArg

    for node in tree.find_all(TableArg):
        parent = node.parent
        # (a table function call is an Anonymous call; AND / OR are "functions" in sqlglot)
        if isinstance(parent, exp.Kwarg | exp.PropertyEQ | exp.EQ) and \
                isinstance(parent.parent, exp.Anonymous):
            continue
        if isinstance(parent, exp.Anonymous):
            continue
        raise ParseError("TABLE t stands only as an argument of a table function (TUMBLE, "
                         "HOP, CUMULATE, SESSION)", span=node_span(node, query, script),
                         sql=script)


# Clause keywords Flink (Calcite) reserves: an unquoted one is not a name (``FROM t ORDER ORDER
# BY x`` is a syntax error there, where sqlglot would read the first ORDER as an alias).
_RESERVED = frozenset({
    "SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "BY", "LIMIT", "OFFSET", "UNION",
    "INTERSECT", "EXCEPT", "JOIN", "ON", "USING", "WINDOW", "AND", "OR", "NOT", "INNER",
    "LEFT", "RIGHT", "FULL", "CROSS", "NATURAL", "AS", "WITH", "VALUES", "FETCH",
})


def _no_reserved_aliases(tree: exp.Expression, query: QueryText, script: str) -> None:
    for alias in tree.find_all(exp.TableAlias):
        ident = alias.this
        if isinstance(ident, exp.Identifier) and not ident.args.get("quoted") and \
                ident.name.upper() in _RESERVED:
            span = node_span(ident, query, script)
            raise ParseError(f"{ident.name.upper()} is a reserved word, not a table alias "
                             f"(quote it, `{ident.name}`, to use it as a name)",
                             span=span or Span.from_offset(script, query.offset), sql=script)


def parse_expression(text: QueryText, script: str) -> exp.Expression:
    """Parse a scalar expression (a watermark or computed column) via a one-column SELECT."""
    wrapped = QueryText("SELECT " + text.sql, text.offset - len("SELECT "))
    tree = parse_query(wrapped, script)
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1 or tree.args.get("from_"):
        raise ParseError("expected a single expression",
                         span=Span.from_offset(script, text.offset), sql=script)
    return tree.expressions[0]


def _offset_of(text: str, line: int, col: int) -> int:
    lines = text.split("\n")
    line = max(1, min(line, len(lines)))
    return sum(len(x) + 1 for x in lines[: line - 1]) + max(col - 1, 0)


def written_call_name(node: exp.Expression, query: QueryText, script: str) -> str | None:
    """A function call's name as the SQL spells it, upper case (sqlglot's class names were
    shown: DECODE_CASE for DECODE, WEEK_OF_YEAR for WEEKOFYEAR): the word before the call's
    parenthesis, at or just before the node's first positioned token."""
    span = node_span(node, query, script)
    found = re.match(r"(\w+)\s*\(", script[span.start:]) or \
        re.search(r"(\w+)\s*\(\s*$", script[max(0, span.start - 200):span.start])
    return found.group(1).upper() if found else None


def node_span(node: exp.Expression, query: QueryText, script: str) -> Span:
    """The script span of a sqlglot node (its first positioned token), for error messages."""
    for n in node.walk():
        meta = n.meta if hasattr(n, "meta") else {}
        if "start" in meta:
            start = query.offset + int(meta["start"])
            end = query.offset + int(meta.get("end", meta["start"])) + 1
            if n is node or not isinstance(node, exp.Column):
                return Span.from_offset(script, start, end)
            return Span.from_offset(script, start, end)
    return Span.from_offset(script, query.offset, query.offset + len(query.sql.split()[0]))
