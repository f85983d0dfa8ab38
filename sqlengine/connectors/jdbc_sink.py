"""The jdbc connector's sink: append (COPY through ADBC's bulk ingest) or, when the table has a
PRIMARY KEY, upsert (each flush's last change per key applied: +I / +U as ``INSERT ... ON
CONFLICT (key) DO UPDATE``, -D and -U as ``DELETE``, as Flink's JDBC sink: a -U's +U comes
later and wins).

Buffering (Flink's options): rows are buffered and written together when
'sink.buffer-flush.max-rows' rows are held (0: no row bound), when
'sink.buffer-flush.interval' has passed since the first buffered row (0: no time bound;
a background thread flushes, as Flink's does), at a checkpoint barrier and at the end. With
neither option set each record batch is written when it arrives (Flink buffers 100 rows or 1
s by default; a record batch here is usually larger than 100 rows).

Retries ('sink.max-retries', Flink's default 3): a flush that fails for a transient reason (the
connection lost, the server shutting down or out of resources, a serialization failure or a
deadlock) is rolled back and tried again on a new connection after 1 s, 2 s, ...; then, or at
once for any other failure (a missing table, a type mismatch, a constraint), the job fails
with an error naming the server and the table. An upsert flush written twice leaves the same
rows; an append flush whose commit was lost with the connection may be written twice (the
sink is at-least-once).
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.connectors.base import SinkWriter
from sqlengine.errors import ConnectorError
from sqlengine.options import parse_duration

BACKOFF = 1.0  # seconds before the first retry (then 2x, 3x, ... as Flink's)
_TRANSIENT_STATES = ("08", "40001", "40P01", "53", "57P01", "57P02", "57P03")


def transient(e: BaseException) -> bool:
    """Whether a driver error may pass when tried again on a new connection."""
    state = getattr(e, "sqlstate", None) or ""
    if not state:
        m = re.search(r"SQLSTATE: ([0-9A-Z]{5})", str(e))
        state = m.group(1) if m else ""
    if state:
        return state.startswith(_TRANSIENT_STATES)
    code = getattr(e, "status_code", None)
    return getattr(code, "name", "") in ("IO", "TIMEOUT")


class JdbcWriter(SinkWriter):
    name = "JdbcSink"
    guarantee: ClassVar[str | None] = "at-least-once"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema) -> None:
        from sqlengine.connectors.jdbc import _connect, _table_ref, primary_key, server_name

        super().__init__()
        self.table = table
        self.options = options
        self.target = _table_ref(options["table-name"])
        self.where = (f"table {table!r}: writing to {options['table-name']!r} at "
                      f"{server_name(options)}")
        self.schema = schema
        self.key = primary_key(options)
        self.retries = int(options.get("sink.max-retries", "3"))
        self.max_rows = int(options.get("sink.buffer-flush.max-rows", "0"))
        interval = options.get("sink.buffer-flush.interval")
        self.interval = parse_duration(interval, "sink.buffer-flush.interval") / 1000 \
            if interval else 0.0
        self.buffering = "sink.buffer-flush.max-rows" in options or interval is not None
        self.buffer: list[tuple[pa.RecordBatch, pa.Array | None]] = []
        self.buffered = 0
        self.since = 0.0  # when the first buffered row came (monotonic)
        self.attempts = 0  # flushes tried, retries included (for tests and metrics)
        self._connect = lambda: _connect(table, options)
        self.con: Any = self._connect()
        # Whether an append goes straight into the table by binary COPY: only when each
        # column's type is the server column's own (COPY sends Arrow's binary form as it is,
        # so a DATE into an int column wrote -10947, an INT into a date 2000-01-11); else
        # through a staging table and INSERT ... SELECT, the server casting each column as
        # an INSERT does (or refusing it, naming both types). (None: not asked yet.)
        self._direct: bool | None = None
        self._lock = threading.Lock()
        self._failed: BaseException | None = None  # (a background flush's error)
        self._stop = threading.Event()
        self._timer: threading.Thread | None = None
        if self.buffering and self.interval > 0:
            self._timer = threading.Thread(target=self._tick, daemon=True,
                                           name=f"sqlengine jdbc flush {table}")
            self._timer.start()

    # -- buffering ---------------------------------------------------------------------------
    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        if not self.key and kinds is not None and pc.any(pc.not_equal(kinds, "+I")).as_py():
            msg = f"table {self.table!r}: an updating result needs a PRIMARY KEY on the jdbc table"
            raise ConnectorError(msg)
        with self._lock:
            self._raise_failed()
            if not self.buffer:
                self.since = time.monotonic()
            self.buffer.append((batch, kinds))
            self.buffered += batch.num_rows
            self.rows += batch.num_rows
            if not self.buffering or (self.max_rows > 0 and self.buffered >= self.max_rows):
                self._flush()

    def _tick(self) -> None:
        """The background flush of 'sink.buffer-flush.interval'."""
        while not self._stop.wait(min(self.interval, 0.05)):
            with self._lock:
                if self.buffer and self._failed is None and \
                        time.monotonic() - self.since >= self.interval:
                    with contextlib.suppress(BaseException):  # (raised by the next write)
                        self._flush()

    def _raise_failed(self) -> None:
        if self._failed is not None:
            raise self._failed

    def flush(self) -> None:
        with self._lock:
            self._raise_failed()
            self._flush()

    def end_input(self) -> None:
        self.flush()

    def prepare_commit(self, checkpoint: int) -> None:
        self.flush()  # (what the checkpoint covers is in the table)

    def _flush(self) -> None:
        if not self.buffer:
            return
        batches = [b for b, _ in self.buffer]
        batch = batches[0] if len(batches) == 1 else pa.concat_batches(batches)
        kinds = None
        if any(k is not None for _, k in self.buffer):
            kinds = pa.concat_arrays([k if k is not None else pa.array(["+I"] * b.num_rows)
                                      for b, k in self.buffer])
        try:
            self._write_retrying(batch, kinds)
        except BaseException as e:  # (the writer has failed: not tried again at close)
            self._failed = e
            raise
        self.buffer, self.buffered = [], 0

    # -- writing -----------------------------------------------------------------------------
    def _write_retrying(self, batch: pa.RecordBatch, kinds: pa.Array | None) -> None:
        for attempt in range(self.retries + 1):
            self.attempts += 1
            try:
                if self.con is None:
                    self.con = self._connect()
                if not self.key:
                    self._append(pa.Table.from_batches([batch]))
                else:
                    self._upsert(batch, kinds)
                self.con.commit()
                return
            except Exception as e:  # (the server's errors, or reconnecting failed)
                lost = self.con is None
                if isinstance(e, ConnectorError):
                    reason = re.sub(r"^table '[^']*': ", "", e.message)
                else:
                    reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                    with contextlib.suppress(Exception):
                        self.con.rollback()
                if not (lost or transient(e)) or attempt == self.retries:
                    tried = f" after {attempt + 1} attempts" if attempt else ""
                    msg = f"{self.where} failed{tried}: {reason}"
                    raise ConnectorError(msg) from None
            if self.con is not None:
                with contextlib.suppress(Exception):
                    self.con.close()
                self.con = None
            time.sleep(BACKOFF * (attempt + 1))

    def _append(self, table: pa.Table) -> None:
        from sqlengine.connectors.jdbc import _quote

        if self._direct is None:
            self._direct = "." not in self.options["table-name"] and \
                _copy_fits(self.con, self.options["table-name"], self.schema)
        with self.con.cursor() as cur:
            if self._direct:
                cur.adbc_ingest(self.target.strip('"'), table, mode="append")
                return
            stage = "sqlengine_stage"
            cols = ", ".join(_quote(c) for c in table.column_names)
            cur.execute(f"DROP TABLE IF EXISTS {stage}")
            cur.adbc_ingest(stage, table, mode="create", temporary=True)
            cur.execute(f"INSERT INTO {self.target} ({cols}) SELECT {cols} FROM {stage}")
            cur.execute(f"DROP TABLE IF EXISTS {stage}")

    def _upsert(self, batch: pa.RecordBatch, kinds: pa.Array | None) -> None:
        from sqlengine.connectors.jdbc import _quote

        n = batch.num_rows
        if not n:
            return
        kind = np.asarray(kinds.to_pylist() if kinds is not None else ["+I"] * n, dtype=object)
        table = pa.Table.from_batches([batch])
        # The last change per key wins. A -U deletes its key's row, as Flink's JDBC sink
        # reads it: its +U, when one comes, is later and wins; without one (a HAVING or a
        # WHERE dropped it, or the key itself changed: the sink's key is not the query's
        # unique key, a changelog's update of the key) the old row must go.
        keys = table.select(list(self.key))
        order = pa.table({**{c: keys.column(c) for c in self.key},
                          "$i": pa.array(np.arange(n))})
        last = order.group_by(list(self.key), use_threads=False).aggregate([("$i", "max")])
        chosen = np.sort(last.column("$i_max").to_numpy())
        table, kind = table.take(pa.array(chosen)), kind[chosen]
        gone = (kind == "-D") | (kind == "-U")
        deletes = table.filter(pa.array(gone))
        upserts = table.filter(pa.array(~gone))
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
        self._stop.set()
        if self._timer is not None:
            self._timer.join()
        try:
            with self._lock:
                # (rows still buffered: written at the end, as Flink's close flushes; a
                # failed job's writer is closed too, so a failure here is not raised again)
                if self.buffer and self._failed is None:
                    self._flush()
        finally:
            if self.con is not None:
                with contextlib.suppress(Exception):
                    self.con.close()
                self.con = None


# The server types whose binary COPY form is the Arrow type's own (what ADBC's bulk ingest
# sends for a column of that Arrow type).
_COPY_TYPES: dict[str, Any] = {
    "int2": pa.types.is_int16, "int4": pa.types.is_int32, "int8": pa.types.is_int64,
    "float4": pa.types.is_float32, "float8": pa.types.is_float64,
    "bool": pa.types.is_boolean,
    "text": pa.types.is_string, "varchar": pa.types.is_string, "bpchar": pa.types.is_string,
    "bytea": pa.types.is_binary, "date": pa.types.is_date32,
    "timestamp": lambda t: pa.types.is_timestamp(t) and t.tz is None,
    "timestamptz": pa.types.is_timestamp,
    "time": pa.types.is_time, "numeric": pa.types.is_decimal,
}


def _copy_fits(con: Any, name: str, schema: pa.Schema) -> bool:
    """Whether every column of ``schema`` has the Arrow type of its server column's binary
    COPY form (a column the server lacks, or of another type: no)."""
    from sqlengine.connectors.jdbc import server_types

    server = server_types(con, name)
    con.commit()
    return all(f.name in server and _COPY_TYPES.get(server[f.name][0], lambda _t: False)(
        f.type) for f in schema)
