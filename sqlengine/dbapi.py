"""PEP 249 (DB-API 2.0) over a Session: ``sqlengine.connect()`` is a connection, and
``con.cursor()`` a cursor, so tools built on PEP 249 (``pandas.read_sql``, notebook SQL
magics) work with sqlengine.

A cursor runs one statement per ``execute`` (a script of several runs them in order; the last
one's rows are the result). A query's rows are collected when it is executed (a bounded
query's final rows; an unbounded one is refused: use ``Session.sql(...).stream()``); DDL,
SET and INSERT give no rows (``description`` is None, ``rowcount`` the rows an INSERT wrote).
Parameters: ``paramstyle = 'named'`` (``:name`` with a mapping), ``?`` with a sequence.
Transactions do not exist: ``commit()`` does nothing (every statement takes effect at once),
``rollback()`` raises NotSupportedError.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import InterfaceError, NotSupportedError

if TYPE_CHECKING:
    from sqlengine.api import Session

apilevel = "2.0"
threadsafety = 1  # threads may share the module, not connections
paramstyle = "named"


class _TypeCode(str):
    """A type code of ``description`` (its Flink type name); equal to the PEP 249 type
    objects it belongs to."""

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _TypeSet):
            return other == self
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class _TypeSet(frozenset):
    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return any(other.startswith(name) for name in self)
        return frozenset.__eq__(self, other)

    __hash__ = frozenset.__hash__


STRING = _TypeSet({"STRING", "VARCHAR", "CHAR"})
BINARY = _TypeSet({"BYTES", "BINARY", "VARBINARY"})
NUMBER = _TypeSet({"TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE", "DECIMAL",
                   "BOOLEAN"})
DATETIME = _TypeSet({"DATE", "TIMESTAMP", "TIME"})
ROWID = _TypeSet()

Date = dt.date
Time = dt.time
Timestamp = dt.datetime
Binary = bytes


def DateFromTicks(ticks: float) -> dt.date:
    return dt.date.fromtimestamp(ticks)


def TimeFromTicks(ticks: float) -> dt.time:
    return dt.datetime.fromtimestamp(ticks).time()


def TimestampFromTicks(ticks: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(ticks)


def _description(schema: pa.Schema) -> list[tuple[Any, ...]]:
    out = []
    for f in schema:
        t = f.type
        precision = t.precision if pa.types.is_decimal(t) else None
        scale = t.scale if pa.types.is_decimal(t) else None
        out.append((f.name, _TypeCode(T.type_name(t)), None, None, precision, scale,
                    f.nullable))
    return out


class Cursor:
    """A PEP 249 cursor of a Session."""

    arraysize = 1

    def __init__(self, session: Session) -> None:
        self._session = session
        self._rows: list[tuple[Any, ...]] | None = None
        self._at = 0
        self._closed = False
        self.description: list[tuple[Any, ...]] | None = None
        self.rowcount = -1
        self.table: pa.Table | None = None  # (the last result as Arrow)

    # -- running -------------------------------------------------------------------------------
    def execute(self, operation: str, parameters: Mapping[str, Any] | Sequence[Any] | None = None
                ) -> Cursor:
        self._check()
        from sqlengine.parser import parse_statement, split_script
        from sqlengine.statements import QueryStmt

        self._rows, self._at, self.description, self.rowcount, self.table = (
            None, 0, None, -1, None)
        params = _parameters(parameters)
        parts = split_script(operation)
        for i, (offset, text) in enumerate(parts):
            last = i == len(parts) - 1
            stmt = parse_statement(text, offset, operation)
            if isinstance(stmt, QueryStmt):
                query = self._session.sql(text, params)
                if not query.has_bounded_result:  # (LIMIT over an unbounded source ends)
                    raise NotSupportedError("a cursor collects a query's rows: this query "
                                            "reads an unbounded source (use Session.sql(...)"
                                            ".stream())")
                table = query.collect()
                if last:
                    self._result(table)
                continue
            result = self._session.run_statement(text, offset, operation, params=params)
            if last:
                if result.table is not None:
                    self._result(result.table)
                elif result.sink_rows:
                    self.rowcount = sum(result.sink_rows.values())
        return self

    def executemany(self, operation: str,
                    seq_of_parameters: Sequence[Mapping[str, Any] | Sequence[Any]]) -> Cursor:
        for params in seq_of_parameters:
            self.execute(operation, params)
        return self

    def _result(self, table: pa.Table) -> None:
        self.table = table
        self.description = _description(table.schema)
        self._rows = [tuple(row.values()) for row in table.to_pylist()]
        self.rowcount = len(self._rows)

    # -- fetching ------------------------------------------------------------------------------
    def fetchone(self) -> tuple[Any, ...] | None:
        rows = self._fetched()
        if self._at >= len(rows):
            return None
        self._at += 1
        return rows[self._at - 1]

    def fetchmany(self, size: int | None = None) -> list[tuple[Any, ...]]:
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)
                                 or size < 0):
            raise InterfaceError(f"fetchmany() takes a row count (a non-negative int), got "
                                 f"{size!r}")
        rows = self._fetched()
        n = self.arraysize if size is None else size
        out = rows[self._at:self._at + n]
        self._at += len(out)
        return out

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows = self._fetched()
        out = rows[self._at:]
        self._at = len(rows)
        return out

    def fetch_arrow_table(self) -> pa.Table:
        """The last result as an Arrow table (Arrow-first, without Python rows)."""
        self._fetched()
        assert self.table is not None
        return self.table

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (row := self.fetchone()) is not None:
            yield row

    def _fetched(self) -> list[tuple[Any, ...]]:
        self._check()
        if self._rows is None:
            raise InterfaceError("no rows to fetch: the last statement was not a query")
        return self._rows

    # -- the rest ------------------------------------------------------------------------------
    def setinputsizes(self, sizes: object) -> None:
        return None

    def setoutputsize(self, size: object, column: object = None) -> None:
        return None

    def close(self) -> None:
        self._closed = True
        self._rows = None

    def _check(self) -> None:
        if self._closed:
            raise InterfaceError("the cursor is closed")
        if getattr(self._session, "closed", False):
            raise InterfaceError("the connection is closed")

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["BINARY", "DATETIME", "NUMBER", "ROWID", "STRING", "Binary", "Cursor", "Date",
           "DateFromTicks", "Time", "TimeFromTicks", "Timestamp", "TimestampFromTicks",
           "apilevel", "decimal", "paramstyle", "threadsafety"]


def _parameters(parameters: object) -> dict[str, object] | list[object] | None:
    """A cursor's parameters as the session takes them: a mapping for ``:name``, a sequence
    (not a string: its characters were taken for values) for ``?``."""
    if parameters is None:
        return None
    if isinstance(parameters, Mapping):
        return dict(parameters)
    if isinstance(parameters, Sequence) and not isinstance(parameters, str | bytes | bytearray):
        return list(parameters)
    raise InterfaceError(f"parameters are a sequence (for ?) or a mapping (for :name), got "
                         f"{type(parameters).__name__}")
