"""The sqlengine error hierarchy, by audience, with source spans and caret highlights."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A place in SQL text: 1-based line and column, plus the 0-based offsets it covers."""

    line: int
    column: int
    start: int = 0
    end: int = 0

    @staticmethod
    def from_offset(text: str, start: int, end: int | None = None) -> Span:
        """Build a span from 0-based character offsets into ``text``."""
        start = max(0, min(start, len(text)))
        line = text.count("\n", 0, start) + 1
        column = start - (text.rfind("\n", 0, start) + 1) + 1
        return Span(line, column, start, max(start + 1, end if end is not None else start + 1))


def highlight(text: str, span: Span) -> str:
    """Return the line of ``text`` holding ``span`` with a caret line under it."""
    lines = text.splitlines() or [""]
    idx = min(max(span.line - 1, 0), len(lines) - 1)
    line = lines[idx]
    width = max(1, min(span.end - span.start, len(line) - span.column + 1))
    start = span.column - 1
    if len(line) > _WIDE:  # (a very long line: the part around the place, marked '...')
        cut = max(0, min(start - _WIDE // 2, len(line) - _WIDE))
        width = min(width, _WIDE // 2)
        line = ("..." if cut else "") + line[cut:cut + _WIDE] + \
            ("..." if cut + _WIDE < len(line) else "")
        start += (3 if cut else 0) - cut
    before, marked = line[:start], line[start:start + width]
    # in terminal columns: a wide character (CJK, emoji) takes two; a tab stays a tab, so
    # that the caret lands under what it marks
    pad = "\t".join(" " * _columns(part) for part in before.split("\t"))
    return f"  {line}\n  {pad}{'^' * max(1, _columns(marked))}"


_WIDE = 160  # characters of a line shown at most


def _columns(text: str) -> int:
    """Terminal columns of ``text``: an emoji sequence (a skin tone, a flag, a ZWJ family)
    as one picture (counting its characters apart put the caret 2 to 4 columns right), a
    control character as one."""
    from wcwidth import wcswidth, wcwidth

    whole = wcswidth(text)
    return whole if whole >= 0 else sum(w if (w := wcwidth(ch)) >= 0 else 1 for ch in text)


class Warning(Exception):
    """PEP 249's Warning (sqlengine reports warnings in results, never raises this)."""


class Error(Exception):
    """PEP 249's Error: the base of every database error."""


class InterfaceError(Error):
    """PEP 249: a misuse of the interface (a closed cursor, fetching before execute)."""


class DatabaseError(Error):
    """PEP 249: an error of the database (every SqlEngineError is one)."""


class DataError(DatabaseError):
    """PEP 249: bad data (a malformed row, a value out of range)."""


class OperationalError(DatabaseError):
    """PEP 249: an error while running (a failed operator, a checkpoint)."""


class IntegrityError(DatabaseError):
    """PEP 249 (not raised: constraints are NOT ENFORCED, as in Flink)."""


class ProgrammingError(DatabaseError):
    """PEP 249: the SQL is wrong (does not parse, an unknown name or a type error)."""


class SqlEngineError(DatabaseError):
    """Base class of every error sqlengine raises to its users."""

    def __init__(
        self,
        message: str,
        *,
        span: Span | None = None,
        sql: str | None = None,
        source: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.sql = sql
        self.source = source  # a file name the SQL came from, for file:line:col

    def located(self, sql: str, source: str | None = None, offset: int = 0) -> SqlEngineError:
        """Attach the SQL text (and file) the span refers to, shifting it by ``offset`` chars."""
        if self.span is not None and offset:
            self.span = Span.from_offset(
                sql, self.span.start + offset, self.span.end + offset
            )
        if self.sql is None or offset:
            self.sql = sql
        if source is not None:
            self.source = source
        return self

    def __str__(self) -> str:
        where = ""
        if self.span is not None:
            prefix = f"{self.source}:" if self.source else ""
            where = f"{prefix}{self.span.line}:{self.span.column}: "
        elif self.source:
            where = f"{self.source}: "
        text = f"{where}{self.message}"
        if self.span is not None and self.sql:
            text += "\n" + highlight(self.sql, self.span)
        return text


class ParseError(SqlEngineError, ProgrammingError):
    """The SQL text does not parse."""


class BindError(SqlEngineError, ProgrammingError):
    """A name or type in the SQL does not resolve (unknown table, column, function, ...)."""


class PlanError(SqlEngineError, ProgrammingError):
    """The query is well formed but cannot be planned as asked."""


class NotSupportedError(SqlEngineError):
    """A known gap: valid Flink SQL that sqlengine does not run yet."""


class ConnectorError(SqlEngineError, DataError):
    """A connector option, path or data row is wrong; the message names the key or file:line."""


class ExecutionError(SqlEngineError, OperationalError):
    """A failure while a query runs."""


class DataValueError(ExecutionError, DataError):
    """A value a query computes has no result: a division by zero, a CAST of a value its
    type cannot hold (PEP 249's DataError)."""


class FailedRows(ExecutionError):
    """A Python function failed on some rows of the batch being evaluated, and the operator
    evaluating it drops such rows ('python.udf.on-error' = 'skip'): ``rows`` are their
    positions in that batch; the message is the first failure's."""

    def __init__(self, message: str, rows: object) -> None:
        super().__init__(message)
        self.rows = rows  # (a numpy int64 array)


class CheckpointError(ExecutionError):
    """A checkpoint or savepoint that cannot be written, found or restored (naming its path)."""


class OperatorError(ExecutionError):
    """A failure inside one operator of a chain, naming the vertex and the step."""

    def __init__(self, vertex_id: str, step_id: str, message: str) -> None:
        super().__init__(f"{message} (in operator {step_id} of vertex {vertex_id})")
        self.vertex_id = vertex_id
        self.step_id = step_id


class OperatorDataError(OperatorError, DataError):
    """An OperatorError whose cause is a value (DataValueError): PEP 249's DataError."""


class InternalError(SqlEngineError):
    """A broken invariant: this is a bug in sqlengine."""

    def __init__(self, message: str) -> None:
        super().__init__(f"{message} (this is a bug in sqlengine)")


def unexpected(error: BaseException) -> SqlEngineError:
    """A non-sqlengine exception as a sqlengine error (no raw traceback reaches a user): a
    too-deep statement and exhausted memory say so; anything else is reported as a bug."""
    if isinstance(error, SqlEngineError):
        return error
    if isinstance(error, RecursionError):
        return NotSupportedError("the statement nests too deeply for sqlengine (nested "
                                 "parentheses, operators, subqueries or UNION branches); "
                                 "split it, for example with views")
    if isinstance(error, MemoryError):
        return ExecutionError("out of memory: the query's state or a value grew too large")
    if type(error).__name__ == "ArrowCapacityError":
        return ExecutionError(f"a value or batch is too large for Arrow: {error}")
    return InternalError(f"unexpected {type(error).__name__}: {error}")


def statement_place(message: str, text: str, offset: int, script: str) -> Span:
    """Where an error without a place of its own points in a statement: the first name its
    message quotes, else the statement's first word."""
    return named_place(message, text, offset, script) or Span.from_offset(
        script, offset, offset + len((text.split() or [""])[0]))


def named_place(message: str, text: str, offset: int, script: str) -> Span | None:
    """The place in a statement of the first name an error message quotes ('x'), when the
    statement holds it as a word (``text`` starts at ``offset`` of ``script``)."""
    import re

    for name in re.findall(r"'([^'\s]+)'", message):
        m = re.search(rf"(?<![\w`']){re.escape(name)}(?![\w`'])|`{re.escape(name)}`", text)
        if m is not None:
            return Span.from_offset(script, offset + m.start(), offset + m.end())
    return None

