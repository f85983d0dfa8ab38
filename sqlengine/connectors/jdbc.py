"""The jdbc connector for PostgreSQL (Flink's 'connector' = 'jdbc' options), through the
ADBC PostgreSQL driver: Arrow in and out, no row-by-row Python.

- Source: a bounded scan of 'table-name', the columns the query reads only. Without
  'scan.partition.*' options it is one SELECT (at parallelism > 1 the first subtask reads it
  all); with them, Flink's partitioned scan (jdbc_splits.py): the range [lower-bound,
  upper-bound] of the partition column cut into 'scan.partition.num' ranges, each one split
  (``WHERE col BETWEEN start AND end``), split j read by subtask j mod parallelism; as in
  Flink, rows outside the bounds (or NULL there) are not read. The query's filters that
  PostgreSQL evaluates exactly go into the SELECT's WHERE clause, their literals as parameters
  (jdbc_pushdown.py; EXPLAIN lists them as ``jdbc-pushed``); the engine applies every filter
  to the rows read all the same. The rows come through COPY in one stream, or, with
  'scan.fetch-size' = n > 0, from a server-side cursor n rows per round trip (Flink's JDBC
  fetch size: memory bounded by n rows).
- Sink (jdbc_sink.py): append, or upsert when the table has a PRIMARY KEY, so an updating
  query keeps the PostgreSQL table equal to its result (without a key it is refused);
  'sink.buffer-flush.max-rows' / '.interval' buffering and 'sink.max-retries' retries.
A lookup join reads it by key (jdbc_lookup.py) through the lookup.* cache options. Flink's
other jdbc options are refused by name.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sqlengine.connectors import jdbc_splits
from sqlengine.connectors.base import (
    PRIMARY_KEY_OPTION,
    Connector,
    Fail,
    OptionSpec,
    SinkWriter,
    SourceRead,
)
from sqlengine.connectors.column_fit import fit_column
from sqlengine.connectors.jdbc_pushdown import COLUMN_TYPES_SQL, Pushed, columns_safe, push
from sqlengine.errors import ConnectorError, PlanError, SqlEngineError
from sqlengine.options import parse_duration
from sqlengine.types import type_name

if TYPE_CHECKING:
    from sqlengine.plan.nodes import Schema

_NOT_IMPLEMENTED = {
    "driver": "the ADBC PostgreSQL driver is always used",
    "scan.auto-commit": "a scan runs in one transaction (its cursor needs one)",
    "lookup.cache.max-rows": "deprecated in Flink: use 'lookup.cache' = 'PARTIAL' and "
                             "'lookup.partial-cache.max-rows'",
    "lookup.cache.ttl": "deprecated in Flink: use 'lookup.partial-cache.expire-after-write'",
    "lookup.cache.caching-missing-key": "deprecated in Flink: use "
                                        "'lookup.partial-cache.cache-missing-key'",
    "connection.max-retry-timeout": "a connection is tried once per attempt "
                                    "('sink.max-retries', 'lookup.max-retries')",
}


def _uri(options: dict[str, str]) -> str:
    """jdbc:postgresql://host:port/db -> the libpq URI ADBC takes (with user / password)."""
    m = re.fullmatch(r"jdbc:postgresql://([^/?]+)/([^?]+)(\?.*)?", options["url"])
    if m is None:
        msg = f"option 'url' must be jdbc:postgresql://host:port/database, got {options['url']!r}"
        raise ConnectorError(msg)
    auth = ""
    if options.get("username"):
        auth = options["username"] + (f":{options['password']}" if options.get("password")
                                      else "") + "@"
    return f"postgresql://{auth}{m.group(1)}/{m.group(2)}{m.group(3) or ''}"


def server_name(options: dict[str, str]) -> str:
    """host:port/database of the table's url, for error messages."""
    m = re.fullmatch(r"jdbc:postgresql://([^/?]+)/([^?]+)(\?.*)?", options["url"])
    return f"{m.group(1)}/{m.group(2)}" if m else options["url"]


def _connect(table: str, options: dict[str, str]) -> Any:
    try:
        import adbc_driver_postgresql.dbapi as pg
    except ImportError:
        msg = (f"table {table!r}: the jdbc connector needs the ADBC PostgreSQL driver: "
               "pip install 'sqlengine[postgres]'")
        raise ConnectorError(msg) from None

    try:
        return pg.connect(_uri(options))
    except Exception as e:  # (the driver's errors: credentials, host, database)
        msg = f"table {table!r}: cannot connect to {options['url']!r}: {str(e).splitlines()[0]}"
        raise ConnectorError(msg) from None


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# (the server types whose values arrive as Arrow strings, kept as they are: a CAST of a
# CHAR(n) to text would drop its padding, which getString keeps)
_TEXT_TYPES = frozenset({"text", "varchar", "bpchar", "name", "citext", "json", "jsonb"})


def select_item(name: str, t: pa.DataType, server: dict[str, tuple[str, int, bool]],
                prefix: str = "") -> str:
    """The SELECT list's item for a column declared ``t``: a STRING over a server type
    (``server``: server_types') other than a character one reads the server's text of the
    value, as JDBC's getString does (a uuid, inet, interval or array came as its binary or
    Arrow form: an inet as bytes, an interval as '+0-00')."""
    col = prefix + _quote(name)
    typ = server[name][0] if name in server else None
    if (pa.types.is_string(t) or pa.types.is_large_string(t)) and typ is not None and \
            typ not in _TEXT_TYPES:
        return f"CAST({col} AS text) AS {_quote(name)}"
    if typ == "money":  # (its binary form is in cents: 12.34 came as 1234)
        return f"CAST({col} AS numeric) AS {_quote(name)}"
    if typ == "oid":  # (unsigned: 4000000000 came as -294967296)
        return f"CAST({col} AS bigint) AS {_quote(name)}"
    if typ in _BOUNDLESS:
        # 'infinity' / '-infinity' (and a time of 24:00) have no value of the declared
        # type: they came as garbage ('infinity' as a date 5.8 million years BC); now they
        # fail the read, the server naming the value and the column (its text with this
        # note appended does not read as the type again).
        kind, test = _BOUNDLESS[typ]
        note = f" in column {name}: {type_name(t)} holds no such value"
        return (f"CASE WHEN {test.format(col)} OR {col} IS NULL THEN {col} ELSE "
                f"CAST(CAST({col} AS text) || '{note.replace(chr(39), chr(39) * 2)}' AS "
                f"{kind}) END AS {_quote(name)}")
    return col


_BOUNDLESS = {"date": ("date", "isfinite({})"), "timestamp": ("timestamp", "isfinite({})"),
              "timestamptz": ("timestamptz", "isfinite({})"),
              "time": ("time", "{} < '24:00:00'")}


def server_types(con: Any, table_name: str) -> dict[str, tuple[str, int, bool]]:
    """The server's type (name, typmod) of each column of ``table_name``, and whether its
    collation is deterministic (equal strings are equal bytes); empty when the catalog
    cannot say (a missing table is named when it is read)."""
    with con.cursor() as cur:
        try:
            cur.execute(COLUMN_TYPES_SQL, parameters=(_table_ref(table_name),))
            return {name: (typ, int(mod), bool(fixed))
                    for name, typ, mod, fixed in cur.fetchall()}
        except Exception as e:
            del e
            with contextlib.suppress(Exception):
                con.rollback()
            return {}


def _table_ref(name: str) -> str:
    return ".".join(_quote(p) for p in name.split("."))


def primary_key(options: dict[str, str]) -> tuple[str, ...]:
    text = options.get(PRIMARY_KEY_OPTION)
    return tuple(json.loads(text)) if text else ()


def _refuse(table: str) -> Fail:
    return lambda _key, msg: ConnectorError(f"table {table!r}: {msg}")


def _read(read: SourceRead, con: Any, sql: str, params: tuple[str, ...], wanted: list[int],
          fetch: int) -> Iterator[pa.RecordBatch]:
    """The batches of one SELECT of the columns ``wanted``, laid out as the table's: through
    COPY, or (``fetch`` > 0) from a server-side cursor ``fetch`` rows at a time."""
    schema = read.schema
    where = f"table {read.table!r}: reading {read.options['table-name']!r} at " \
            f"{server_name(read.options)}"
    with con.cursor() as cur:
        try:
            if fetch > 0:
                cur.execute(f"DECLARE sqlengine_scan NO SCROLL CURSOR FOR {sql}",
                            parameters=params or None)
                cur.adbc_statement.set_options(**{"adbc.postgresql.use_copy": "false"})
                batches = _fetched(cur, fetch)
            else:
                cur.execute(sql, parameters=params or None)
                batches = iter(cur.fetch_record_batch())
            for batch in batches:
                arrays = []
                for i, f in enumerate(schema):
                    if i in wanted:
                        col = batch.column(wanted.index(i))
                        if pa.types.is_timestamp(col.type) and col.type.tz is not None:
                            col = col.cast(pa.timestamp(col.type.unit))
                        arrays.append(fit_column(col, f.type, where, f.name,
                                                 "the database's"))
                    else:
                        arrays.append(pa.nulls(batch.num_rows, f.type))
                yield pa.RecordBatch.from_arrays(arrays, schema=schema)
            if fetch > 0:
                cur.execute("CLOSE sqlengine_scan")
                con.commit()
        except SqlEngineError:
            raise
        except Exception as e:
            with contextlib.suppress(Exception):
                con.rollback()
            raise ConnectorError(f"{where} failed: {str(e).splitlines()[0]}") from None


def _fetched(cur: Any, fetch: int) -> Iterator[pa.RecordBatch]:
    while True:
        cur.execute(f"FETCH FORWARD {fetch} FROM sqlengine_scan")
        table = cur.fetch_arrow_table()
        if table.num_rows == 0:
            return
        yield from table.to_batches()


class Jdbc(Connector):
    name = "jdbc"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("url", required=True),
        OptionSpec("table-name", required=True),
        OptionSpec("username"),
        OptionSpec("password"),
        OptionSpec("sink.parallelism", "positive"),
        OptionSpec("scan.parallelism", "positive"),
        # A lookup join's cache (runtime/operators/lookup_join.py) and retries
        # (connectors/jdbc_lookup.py), as Flink's jdbc connector names them.
        OptionSpec("lookup.cache", "enum", ("NONE", "PARTIAL")),
        OptionSpec("lookup.partial-cache.max-rows", "int"),
        OptionSpec("lookup.partial-cache.expire-after-write"),
        OptionSpec("lookup.partial-cache.expire-after-access"),
        OptionSpec("lookup.partial-cache.cache-missing-key", "bool"),
        OptionSpec("lookup.max-retries", "int"),
        OptionSpec("scan.fetch-size", "int"),
        OptionSpec("sink.buffer-flush.max-rows", "int"),
        OptionSpec("sink.buffer-flush.interval"),
        OptionSpec("sink.max-retries", "int"),
        # A partitioned scan (jdbc_splits.py checks the four together, in check_table).
        OptionSpec(jdbc_splits.COLUMN),
        OptionSpec(jdbc_splits.NUM),
        OptionSpec(jdbc_splits.LOWER),
        OptionSpec(jdbc_splits.UPPER),
    )
    is_source = True
    is_sink = True
    sink_accepts_updates = True  # (with a PRIMARY KEY; see accepts_updates)

    def check_extra_option(self, key: str, value: str, columns: set[str], fail: Fail) -> bool:
        why = _NOT_IMPLEMENTED.get(key)
        if why is not None:
            raise fail(key, f"option {key!r} is not implemented yet ({why}); it would be "
                       "ignored")
        return False

    def check_table(self, options: dict[str, str], fail: Fail) -> None:
        for key in ("lookup.partial-cache.expire-after-write",
                    "lookup.partial-cache.expire-after-access", "sink.buffer-flush.interval"):
            if key in options:
                try:
                    parse_duration(options[key], key)
                except PlanError as e:
                    raise fail(key, e.message) from None
        if not re.fullmatch(r"jdbc:postgresql://[^/?]+/[^?]+(\?.*)?", options.get("url", "")):
            raise fail("url", "option 'url' must be jdbc:postgresql://host:port/database "
                       "(PostgreSQL is the database this connector reaches)")
        jdbc_splits.partitioning(options, fail)

    def check_columns(self, options: dict[str, str], schema: Schema, fail: Fail) -> None:
        """The partition column is one of the table's, numeric, DATE or TIMESTAMP."""
        column = options.get(jdbc_splits.COLUMN)
        if column is None:
            return
        types = {f.name: f.type for f in schema.fields}
        if column not in types:
            raise fail(jdbc_splits.COLUMN, f"option {jdbc_splits.COLUMN!r} names no column of "
                       f"the table: {column!r} (columns: {', '.join(types)})")
        why = jdbc_splits.type_refusal(types[column])
        if why is not None:
            raise fail(jdbc_splits.COLUMN, f"option {jdbc_splits.COLUMN!r}: column {column!r} "
                       f"is {type_name(types[column])}; a partitioned scan needs {why}")

    def accepts_updates(self, options: dict[str, str]) -> bool:
        return bool(primary_key(options))

    def lookup_refusal(self, options: dict[str, str]) -> str | None:
        return None

    def open_lookup(self, source: Any, schema: pa.Schema, keys: list[str]) -> Any:
        from sqlengine.connectors.jdbc_lookup import JdbcLookup

        return JdbcLookup(source, schema, keys)

    def bounded(self, table: object) -> bool:
        return True

    def open_source(self, read: SourceRead) -> Iterator[object]:
        index, parallelism = read.split
        parts = jdbc_splits.partitioning(read.options, _refuse(read.table))
        if parts is None:
            return self._scan(read, [None]) if index == 0 else iter(())
        ranges = parts.ranges()[index::parallelism]  # (split j: subtask j mod parallelism)
        if not ranges:
            return iter(())
        t = read.schema.field(parts.column).type
        col = _quote(parts.column)
        return self._scan(read, [jdbc_splits.predicate(col, t, lo, hi) for lo, hi in ranges])

    def _scan(self, read: SourceRead, wheres: list[str | None]) -> Iterator[pa.RecordBatch]:
        """The columns the query reads, one SELECT per WHERE clause of a split (None: the
        whole table) with the pushed filters, over one connection."""
        schema = read.schema
        wanted = list(read.columns) if read.columns is not None else list(range(len(schema)))
        names = [schema.field(i).name for i in wanted]
        fetch = int(read.options.get("scan.fetch-size", "0"))
        con = _connect(read.table, read.options)
        try:
            server = server_types(con, read.options["table-name"])
            items = [select_item(n, schema.field(n).type, server) for n in names]
            base = f"SELECT {', '.join(items) or '1'} FROM " \
                   f"{_table_ref(read.options['table-name'])}"
            pushed = self._pushed(read, server)
            for where in wheres:
                clauses = [c for c in (where, pushed.sql) if c]
                sql = base + (" WHERE " + " AND ".join(f"({c})" for c in clauses)
                              if clauses else "")
                yield from _read(read, con, sql, pushed.params, wanted, fetch)
        finally:
            con.close()

    def _pushed(self, read: SourceRead, server: dict[str, tuple[str, int, bool]]) -> Pushed:
        """The filters pushed into the SELECT: those on columns the server holds in a type
        that compares as the declared one (``server``: read off the server's catalog)."""
        if not read.filters or not server:
            return Pushed("", (), ())
        safe = columns_safe(read.schema, server)
        return push(tuple(read.filters), read.schema, _quote, lambda i: i in safe)

    def explain_scan(self, options: dict[str, str], schema: pa.Schema,
                     filters: tuple[Any, ...]) -> str:
        pushed = push(filters, schema, _quote)
        if not pushed.filters:
            return ""
        return ", jdbc-pushed=[" + ", ".join(f.sql() for f in pushed.filters) + "]"

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        if overwrite:
            msg = f"table {table!r}: INSERT OVERWRITE is not supported by the jdbc connector"
            raise ConnectorError(msg)
        from sqlengine.connectors.jdbc_sink import JdbcWriter

        return JdbcWriter(table, options, schema)


CONNECTOR = Jdbc()
