"""The jdbc connector for PostgreSQL (Flink's 'connector' = 'jdbc' options), through the
ADBC PostgreSQL driver: Arrow in and out, no row-by-row Python.

- Source: a bounded scan of 'table-name', the columns the query reads only. Without
  'scan.partition.*' options it is one SELECT (at parallelism > 1 the first subtask reads it
  all); with them, Flink's partitioned scan (jdbc_splits.py): the range [lower-bound,
  upper-bound] of the partition column cut into 'scan.partition.num' ranges, each one split
  (``WHERE col BETWEEN start AND end``), split j read by subtask j mod parallelism; as in
  Flink, rows outside the bounds (or NULL there) are not read. The query's filters are
  applied to the rows read (the connector is handed none it could put into its SELECT).
- Sink: append (COPY through ADBC's bulk ingest), or, when the table has a PRIMARY KEY, upsert:
  each batch's last change per key is applied, +I / +U as ``INSERT ... ON CONFLICT (key) DO
  UPDATE``, -D as ``DELETE`` (-U rows are superseded by their +U), so an updating query keeps
  the PostgreSQL table equal to its result. Without a key an updating query is refused.
A lookup join reads it by key (jdbc_lookup.py) through the lookup.* cache options. Flink's
other jdbc options ('scan.fetch-size', flush buffering, write retries) are refused by name
until they are implemented.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import cast_array
from sqlengine.connectors import jdbc_splits
from sqlengine.connectors.base import (
    PRIMARY_KEY_OPTION,
    Connector,
    Fail,
    OptionSpec,
    SinkWriter,
    SourceRead,
)
from sqlengine.errors import ConnectorError, PlanError
from sqlengine.options import parse_duration
from sqlengine.types import type_name

if TYPE_CHECKING:
    from sqlengine.plan.nodes import Schema

_NOT_IMPLEMENTED = {
    "driver": "the ADBC PostgreSQL driver is always used",
    "scan.fetch-size": "the ADBC driver reads through COPY, in batches of a size in bytes "
                       "rather than a number of rows per round trip",
    "scan.auto-commit": "scans run in one read",
    "lookup.cache.max-rows": "deprecated in Flink: use 'lookup.cache' = 'PARTIAL' and "
                             "'lookup.partial-cache.max-rows'",
    "lookup.cache.ttl": "deprecated in Flink: use 'lookup.partial-cache.expire-after-write'",
    "lookup.cache.caching-missing-key": "deprecated in Flink: use "
                                        "'lookup.partial-cache.cache-missing-key'",
    "sink.buffer-flush.max-rows": "each record batch is written when it arrives",
    "sink.buffer-flush.interval": "each record batch is written when it arrives",
    "sink.max-retries": "a failed write fails the job", "connection.max-retry-timeout": "retries",
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


def _table_ref(name: str) -> str:
    return ".".join(_quote(p) for p in name.split("."))


def primary_key(options: dict[str, str]) -> tuple[str, ...]:
    text = options.get(PRIMARY_KEY_OPTION)
    return tuple(json.loads(text)) if text else ()


def _refuse(table: str) -> Fail:
    return lambda _key, msg: ConnectorError(f"table {table!r}: {msg}")


def _read(read: SourceRead, con: Any, sql: str, wanted: list[int]) -> Iterator[pa.RecordBatch]:
    """The batches of one SELECT of the columns ``wanted``, laid out as the table's."""
    schema = read.schema
    with con.cursor() as cur:
        try:
            cur.execute(sql)
            reader = cur.fetch_record_batch()
        except Exception as e:
            msg = (f"table {read.table!r}: reading {read.options['table-name']!r} failed: "
                   f"{str(e).splitlines()[0]}")
            raise ConnectorError(msg) from None
        for batch in reader:
            arrays = []
            for i, f in enumerate(schema):
                if i in wanted:
                    col = batch.column(wanted.index(i))
                    if pa.types.is_timestamp(col.type) and col.type.tz is not None:
                        col = col.cast(pa.timestamp(col.type.unit))
                    arrays.append(col if col.type == f.type else cast_array(col, f.type))
                else:
                    arrays.append(pa.nulls(batch.num_rows, f.type))
            yield pa.RecordBatch.from_arrays(arrays, schema=schema)


class JdbcWriter(SinkWriter):
    name = "JdbcSink"
    guarantee: ClassVar[str | None] = "at-least-once"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema) -> None:
        super().__init__()
        self.table = table
        self.target = _table_ref(options["table-name"])
        self.schema = schema
        self.key = primary_key(options)
        self.con = _connect(table, options)

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        try:
            if not self.key:
                if kinds is not None and pc.any(pc.not_equal(kinds, "+I")).as_py():
                    msg = (f"table {self.table!r}: an updating result needs a PRIMARY KEY "
                           "on the jdbc table")
                    raise ConnectorError(msg)
                self._ingest(pa.Table.from_batches([batch]), self.target, "append")
            else:
                self._upsert(batch, kinds)
            self.con.commit()
        except ConnectorError:
            raise
        except Exception as e:  # (the server's errors: a missing table, a type mismatch)
            self.con.rollback()
            msg = f"table {self.table!r}: writing to PostgreSQL failed: {str(e).splitlines()[0]}"
            raise ConnectorError(msg) from None
        self.rows += batch.num_rows

    def _ingest(self, table: pa.Table, target: str, mode: str) -> None:
        with self.con.cursor() as cur:
            cur.adbc_ingest(target.strip('"'), table, mode=mode)

    def _upsert(self, batch: pa.RecordBatch, kinds: pa.Array | None) -> None:
        n = batch.num_rows
        kind = np.asarray(kinds.to_pylist() if kinds is not None else ["+I"] * n, dtype=object)
        keep = kind != "-U"  # (a -U is followed by its +U, or stands for nothing upsert-wise)
        rows = np.flatnonzero(keep)
        if not len(rows):
            return
        table = pa.Table.from_batches([batch]).take(pa.array(rows))
        kind = kind[rows]
        # The last change per key wins.
        keys = table.select(list(self.key))
        order = pa.table({**{c: keys.column(c) for c in self.key},
                          "$i": pa.array(np.arange(len(rows)))})
        last = order.group_by(list(self.key), use_threads=False).aggregate([("$i", "max")])
        chosen = np.sort(last.column("$i_max").to_numpy())
        table, kind = table.take(pa.array(chosen)), kind[chosen]
        deletes = table.filter(pa.array(kind == "-D"))
        upserts = table.filter(pa.array(kind != "-D"))
        stage = "sqlengine_stage"
        cols = ", ".join(_quote(c) for c in table.column_names)
        with self.con.cursor() as cur:
            for part, sql in (
                (upserts, f"INSERT INTO {self.target} ({cols}) SELECT {cols} FROM {stage} "
                          f"ON CONFLICT ({', '.join(_quote(k) for k in self.key)}) DO "
                          + ("UPDATE SET " + ", ".join(f"{_quote(c)} = EXCLUDED.{_quote(c)}"
                                                       for c in table.column_names
                                                       if c not in self.key)
                             if len(self.key) < len(table.column_names) else "NOTHING")),
                (deletes.select(list(self.key)),
                 f"DELETE FROM {self.target} AS t USING {stage} AS s WHERE "
                 + " AND ".join(f"t.{_quote(k)} = s.{_quote(k)}" for k in self.key)),
            ):
                if part.num_rows == 0:
                    continue
                cur.execute(f"DROP TABLE IF EXISTS {stage}")
                cur.adbc_ingest(stage, part, mode="create", temporary=True)
                cur.execute(sql)
                cur.execute(f"DROP TABLE IF EXISTS {stage}")

    def close(self) -> None:
        self.con.close()


class Jdbc(Connector):
    name = "jdbc"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("url", required=True),
        OptionSpec("table-name", required=True),
        OptionSpec("username"),
        OptionSpec("password"),
        OptionSpec("sink.parallelism", "int"),
        OptionSpec("scan.parallelism", "int"),
        # A lookup join's cache (runtime/operators/lookup_join.py) and retries
        # (connectors/jdbc_lookup.py), as Flink's jdbc connector names them.
        OptionSpec("lookup.cache", "enum", ("NONE", "PARTIAL")),
        OptionSpec("lookup.partial-cache.max-rows", "int"),
        OptionSpec("lookup.partial-cache.expire-after-write"),
        OptionSpec("lookup.partial-cache.expire-after-access"),
        OptionSpec("lookup.partial-cache.cache-missing-key", "bool"),
        OptionSpec("lookup.max-retries", "int"),
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
                    "lookup.partial-cache.expire-after-access"):
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
        """The columns the query reads, one SELECT per WHERE clause (None: the whole table),
        over one connection."""
        schema = read.schema
        wanted = list(read.columns) if read.columns is not None else list(range(len(schema)))
        names = [schema.field(i).name for i in wanted]
        base = f"SELECT {', '.join(_quote(n) for n in names) or '1'} FROM " \
               f"{_table_ref(read.options['table-name'])}"
        con = _connect(read.table, read.options)
        try:
            for where in wheres:
                sql = base if where is None else f"{base} WHERE ({where})"
                yield from _read(read, con, sql, wanted)
        finally:
            con.close()

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        if overwrite:
            msg = f"table {table!r}: INSERT OVERWRITE is not supported by the jdbc connector"
            raise ConnectorError(msg)
        return JdbcWriter(table, options, schema)


CONNECTOR = Jdbc()
