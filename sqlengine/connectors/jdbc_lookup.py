"""Lookups in a PostgreSQL table for the jdbc connector (the dimension side of a lookup join):
a batch of distinct keys goes to the server in one COPY (ADBC's bulk ingest into a temporary
table) and comes back joined with the table in one query, so a batch costs two round trips
whatever its number of keys. 'lookup.max-retries' (Flink's, default 3) retries a failed
lookup on a new connection."""

from __future__ import annotations

import contextlib
from typing import Any

import pyarrow as pa

from sqlengine.connectors.column_fit import fit_column
from sqlengine.errors import ConnectorError
from sqlengine.plan.nodes import SourceSpec

_KEYS = "sqlengine_lookup_keys"


class JdbcLookup:
    def __init__(self, source: SourceSpec, schema: pa.Schema, keys: list[str]) -> None:
        from sqlengine.connectors.jdbc import _quote

        self.options = dict(source.options)
        self.table = source.table
        self.schema = schema
        self.keys = keys
        self.retries = int(self.options.get("lookup.max-retries", "3"))
        self.con: Any = None
        self.on = " AND ".join(f"t.{_quote(k)} = k.{_quote(f'k{i}')}"
                               for i, k in enumerate(keys))
        self.sql = ""  # (the SELECT, once the server's column types are known)

    def lookup(self, keys: pa.Table) -> pa.Table:
        for attempt in range(self.retries + 1):
            try:
                return self._query(keys)
            except ConnectorError:
                raise
            except Exception as e:  # (the server's errors; the connection may be gone)
                self.close()
                if attempt == self.retries:
                    msg = (f"table {self.table!r}: looking up keys in "
                           f"{self.options['table-name']!r} failed after {attempt + 1} "
                           f"attempts: {str(e).splitlines()[0]}")
                    raise ConnectorError(msg) from None
        raise AssertionError("unreachable")

    def _select(self, con: Any) -> str:
        from sqlengine.connectors.jdbc import _table_ref, select_item, server_types

        table = self.options["table-name"]
        server = server_types(con, table)
        cols = ", ".join(select_item(f.name, f.type, server, "t.") for f in self.schema)
        return f"SELECT {cols} FROM {_table_ref(table)} AS t JOIN {_KEYS} AS k ON {self.on}"

    def _query(self, keys: pa.Table) -> pa.Table:
        from sqlengine.connectors.jdbc import _connect

        if self.con is None:
            self.con = _connect(self.table, self.options)
            if not self.sql:
                self.sql = self._select(self.con)
        named = keys.rename_columns([f"k{i}" for i in range(keys.num_columns)])
        with self.con.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {_KEYS}")
            cur.adbc_ingest(_KEYS, named, mode="create", temporary=True)
            cur.execute(self.sql)
            found = cur.fetch_arrow_table()
            cur.execute(f"DROP TABLE IF EXISTS {_KEYS}")
        self.con.commit()
        cols = []
        for i, f in enumerate(self.schema):
            col = found.column(i).combine_chunks()
            if pa.types.is_timestamp(col.type) and col.type.tz is not None and \
                    not (pa.types.is_timestamp(f.type) and f.type.tz is not None):
                col = col.cast(pa.timestamp(col.type.unit))
            cols.append(fit_column(col, f.type, f"table {self.table!r}: looking up keys in "
                                   f"{self.options['table-name']!r}", f.name,
                                   "the database's"))
        return pa.Table.from_arrays(cols, schema=self.schema)

    def close(self) -> None:
        if self.con is not None:
            with contextlib.suppress(Exception):  # (closing a broken connection)
                self.con.close()
            self.con = None
