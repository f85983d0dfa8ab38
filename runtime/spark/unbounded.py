"""Unbounded sources and never-ending queries on Spark Structured Streaming.

A source that does not end by itself (a socket, datagen without 'number-of-rows', nexmark
without 'nexmark.events', NATS, MQTT, a registered stream of batches) is read on the driver
by our own connector, as the native runtime reads it (its formats, bad-row handling and the
watermark before each row: the native SourceOperator), by a ``SourcePump`` thread that
writes what it read as parquet files into a folder Spark streams (a file per flush interval,
written under a hidden name and renamed, so Spark never lists a half-written file). As for
a bounded source whose rows come behind their watermark, every row carries the watermark
emitted before it (``$wm``) and its position (``$seq``), so window TVFs judge lateness per
row as natively (runtime/spark/streaming.py _late_rows); operators that cannot judge those
rows are refused by name. When the source ends (a socket's peer closes it), the pump writes
the end-of-input row that closes the windows still open (as for a bounded source) and the
query ends once Spark has processed every file.

The query runs with Spark's default trigger (a micro-batch as soon as the one before ends and
new files are there); ``run_unbounded`` yields each micro-batch's rows as they come: the
rows of an append-mode query as they are; our stateful operators' changes with their row
kinds; a complete-mode GROUP BY's whole result as the changes from the micro-batch before
(-D for rows gone, +I for rows new). A LIMIT stops the query when enough rows came. Sinks
other than collect take each micro-batch: a filesystem table through the exactly-once
committing writer, its part files named by the micro-batch's id (a micro-batch Spark runs
again after a restart writes the same names: its files are not written twice); others
(print, jdbc, NATS, ...) through their own sink, opened once.

With 'execution.checkpoint-location', the pump keeps its reader's position (the connector's
cursor, as for a native checkpoint) beside the folder after each file, and a restarted query
reads on from there: the files Spark had listed are not listed again (Spark's checkpoint),
the ones after are written again with the same names. A source that cannot resume (a socket)
is refused with a checkpoint location, naming why.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sqlengine.errors import ExecutionError, NotSupportedError, SqlEngineError
from sqlengine.optimizer.specs import LimitSpec, ProjectSpec, TableScanSpec, TableSinkSpec
from sqlengine.runtime.elements import ROWKIND, data_part, row_watermarks

FLUSH_SECONDS = 0.2  # a pump writes what it read at least this often
FLUSH_ROWS = 200_000  # ... or once it holds this many rows
STATE = "pump-state.pickle"


class SourcePump:
    """Reads an unbounded source on the driver into parquet files of ``folder`` (see the
    module's text)."""

    def __init__(self, job: Any, op: TableScanSpec, schema: pa.Schema, folder: Path,
                 fields: pa.Schema, sentinel: pa.Table | None, resumable: bool) -> None:
        from sqlengine.runtime.native.source_driver import emit_interval
        from sqlengine.runtime.operators.source import SourceOperator

        self.op = op
        self.folder = folder
        self.fields = fields  # (the files' columns: c0, c1, ... and $wm, $seq with a watermark)
        self.sentinel = sentinel
        self.marks = op.source.watermark is not None
        self.reader = SourceOperator(op.source, schema, None, (),
                                     job.tables.get(op.source.table.lower()), event_time=True)
        self.reader.emit_interval = emit_interval(self.reader, job.options)
        self.result = job.result
        self.state = folder.parent / f"{folder.name}.{STATE}" if resumable else None
        self.files = 0  # (part files written: the next one's number)
        self.rows = 0  # (rows written: the next row's position)
        if self.state is not None:
            why = self.reader.enable_checkpoints()
            if why is not None:
                msg = (f"table {op.source.table!r} on Spark Structured Streaming with "
                       f"'execution.checkpoint-location': {why}")
                raise NotSupportedError(msg)
            if self.state.exists():
                self._restore()
        self.done = threading.Event()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"pump-{op.source.table}",
                                        daemon=True)

    def _restore(self) -> None:
        assert self.state is not None
        try:
            saved = pickle.loads(self.state.read_bytes())
        except Exception as e:
            msg = (f"checkpoint location: {str(self.state)!r} cannot be read back ({e}); "
                   "remove the checkpoint location to start over")
            raise ExecutionError(msg) from None
        self.reader.restore_from([saved["reader"]], 0, 1)
        self.files, self.rows = int(saved["files"]), int(saved["rows"])

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        try:
            pending: list[pa.RecordBatch] = []
            marks: list[np.ndarray] = []
            held, last = 0, time.monotonic()
            for b in self.reader.batches():
                if self._stop.is_set():
                    return
                if b is not None and b.num_rows:
                    pending.append(data_part(b))
                    if self.marks:
                        marks.append(row_watermarks(b))
                    held += b.num_rows
                if pending and (held >= FLUSH_ROWS or
                                time.monotonic() - last >= FLUSH_SECONDS):
                    self._write(pending, marks)
                    pending, marks, held, last = [], [], 0, time.monotonic()
            if pending:
                self._write(pending, marks)
            if self.sentinel is not None and not self._stop.is_set():
                self._publish(self.sentinel, "part-end.parquet")
        except BaseException as e:  # (handed to the query's loop, which raises it)
            self.error = e
        finally:
            self.result.skipped_rows += self.reader.stats.skipped
            with contextlib.suppress(Exception):
                self.reader.close()
            self.done.set()

    def _write(self, batches: list[pa.RecordBatch], marks: list[np.ndarray]) -> None:
        data = pa.Table.from_batches(batches)
        data = data.rename_columns([f"c{i}" for i in range(data.num_columns)])
        if self.marks:
            data = data.append_column("$wm", pa.array(np.concatenate(marks), pa.int64()))
            seq = np.arange(self.rows, self.rows + data.num_rows, dtype=np.int64)
            data = data.append_column("$seq", pa.array(seq))
        self._publish(data.cast(self.fields), f"part-{self.files:08d}.parquet")
        self.files += 1
        self.rows += data.num_rows
        if self.state is not None:  # (where the reader stands after this file)
            self.reader.prepare_snapshot(self.files)
            saved = {"reader": self.reader.snapshot_state(), "files": self.files,
                     "rows": self.rows}
            tmp = self.state.with_name(f".{self.state.name}.tmp")
            tmp.write_bytes(pickle.dumps(saved))
            os.replace(tmp, self.state)

    def _publish(self, table: pa.Table, name: str) -> None:
        tmp = self.folder / f".{name}.tmp"  # (Spark lists no name starting with '.')
        pq.write_table(table, tmp)
        os.replace(tmp, self.folder / name)


def check_unbounded_query(job: Any) -> None:
    """What a never-ending query cannot have on Spark, refused before it starts: an
    ORDER BY of the whole stream (it would run at an end that never comes), a LIMIT over a
    changelog, and a recursive query (its loop runs on the driver over bounded inputs)."""
    limits = [op for op in job.at_end if isinstance(op, LimitSpec)]
    for op in job.at_end:
        if isinstance(op, ProjectSpec | TableSinkSpec):  # (per micro-batch, after the LIMIT)
            continue
        if not isinstance(op, LimitSpec) or op.offset or op.fetch is None or \
                op is not job.at_end[0]:
            msg = (f"{op.label()} over an unbounded source on Spark Structured Streaming: it "
                   "would run over the whole stream at its end, which never comes (a LIMIT "
                   "without OFFSET, as the last operator but projections, ends such a query); "
                   "use the native runtime")
            raise NotSupportedError(msg)
    if len(limits) > 1:
        raise NotSupportedError("several LIMITs over an unbounded source on Spark Structured "
                                "Streaming")
    if limits and (job.output_mode == "complete" or job.stateful):
        raise NotSupportedError("a LIMIT over a GROUP BY's changes from an unbounded source on "
                                "Spark Structured Streaming; use the native runtime")


class _Changes:
    """A complete-mode result (each micro-batch the whole result) as changes: -D for the rows
    gone since the micro-batch before, +I for the rows new (as many as their counts
    changed by)."""

    def __init__(self) -> None:
        self.before: dict[tuple, int] = {}

    def __call__(self, table: pa.Table) -> pa.Table:
        now: dict[tuple, int] = {}
        rows = table.to_pylist()  # (a GROUP BY's result: one row a group)
        for r in rows:
            key = tuple(r.values())
            now[key] = now.get(key, 0) + 1
        gone = [k for k, n in self.before.items() for _ in range(n - now.get(k, 0))]
        new = [k for k, n in now.items() for _ in range(n - self.before.get(k, 0))]
        self.before = now
        names = table.schema.names
        columns = [[r[i] for r in gone + new] for i in range(len(names))]
        out = pa.table([pa.array(c, f.type) for c, f in zip(columns, table.schema)],
                       names=names)
        kinds = np.concatenate([np.full(len(gone), 3, np.int8), np.zeros(len(new), np.int8)])
        return out.append_column(ROWKIND, pa.array(kinds, pa.int8()))


def run_unbounded(job: Any, df: Any, target: Any) -> Iterator[pa.RecordBatch]:
    """Runs the streaming query ``df`` until its sources end (or for ever), yielding each
    micro-batch's rows (see the module's text)."""
    from sqlengine.runtime.spark.streaming import KIND, streaming_conf
    from sqlengine.runtime.spark.translate import spark_failure

    check_unbounded_query(job)
    limit = job.at_end[0].fetch if job.at_end else None
    names = target.schema.names()
    schema = target.schema.to_arrow()
    changes = _Changes() if job.output_mode == "complete" else None
    out = _Output(job, target)
    found: queue.Queue = queue.Queue()
    end = object()

    def each(b: Any, batch_id: int) -> None:
        after = [op for op in job.at_end if isinstance(op, ProjectSpec)]
        table = job._static(job.per_batch + after, b).toArrow()
        if changes is not None:
            table = changes(table)
        elif KIND in table.column_names:
            i = table.column_names.index(KIND)
            table = table.set_column(i, ROWKIND, table.column(i).cast(pa.int8()))
        data = table.drop_columns([ROWKIND]) if ROWKIND in table.column_names else table
        data = data.cast(pa.schema([(f"c{i}", f.type) for i, f in enumerate(schema)]))
        data = data.rename_columns(names)
        if ROWKIND in table.column_names:
            data = data.append_column(ROWKIND, table.column(ROWKIND))
        out.micro_batch(data, batch_id)
        if data.num_rows:
            found.put(data)

    pumps: list[SourcePump] = job.pumps
    with streaming_conf(job.spark, job.query_conf):
        query = (df.writeStream.outputMode(job.output_mode)
                 .option("checkpointLocation", str(job.workdir / "checkpoint"))
                 .foreachBatch(each).start())
    for p in pumps:
        p.start()

    def finish() -> None:  # (the sources ended: what Spark has not processed yet, then stop)
        try:
            for p in pumps:
                p.done.wait()
            if all(p.error is None for p in pumps) and query.isActive:
                query.processAllAvailable()
        except Exception:  # (the query failed or was stopped: the loop reports it)
            pass
        finally:
            with contextlib.suppress(Exception):
                query.stop()
            found.put(end)

    watcher = threading.Thread(target=finish, name="spark-unbounded-end", daemon=True)
    watcher.start()
    given = 0
    try:
        while not job.cancelled.is_set():
            for p in pumps:
                if p.error is not None:
                    raise p.error
            try:
                item = found.get(timeout=0.2)
            except queue.Empty:
                if not query.isActive and found.empty():  # (stopped, or failed)
                    break
                continue
            if item is end:
                break
            if limit is not None:
                item = item.slice(0, limit - given)
            given += item.num_rows
            if target.connector == "collect":
                yield from item.to_batches()
            if limit is not None and given >= limit:
                break
        failure = query.exception()
        if failure is not None:
            raise spark_failure("the Spark streaming query failed: ", failure)
        out.close()
    finally:
        for p in pumps:
            p.stop()
        _stop(query)
        out.abort()
        job.result.sink_rows[target.table] = given


def _stop(query: Any, patience: float = 10.0) -> None:
    """Stops ``query``, after the micro-batch it runs (if it ends within ``patience``
    seconds): a micro-batch interrupted inside our foreachBatch fails in Spark's stream
    thread with a long error, and its rows are written again by the next run anyway."""
    with contextlib.suppress(Exception):
        deadline = time.monotonic() + patience
        while query.isActive and query.status.get("isTriggerActive") and \
                time.monotonic() < deadline:
            time.sleep(0.05)
    with contextlib.suppress(Exception):
        query.stop()


class _Output:
    """A sink other than collect, given each micro-batch's rows (see the module's text)."""

    def __init__(self, job: Any, target: Any) -> None:
        self.target = target
        self.sink: Any = None
        self.token = ""
        self.lock = threading.Lock()
        options = dict(target.options)
        if target.connector == "filesystem":
            from sqlengine.connectors.base import PARTITION_KEYS_OPTION
            from sqlengine.options import parse_duration

            delay = "sink.partition-commit.delay"
            if PARTITION_KEYS_OPTION in options and \
                    options.get("sink.partition-commit.policy.kind") and not (
                    options.get("sink.partition-commit.trigger", "process-time")
                    == "process-time" and parse_duration(options.get(delay, "0"), delay) == 0):
                # (each micro-batch commits the partitions it wrote; a delay or a watermark
                # trigger would need the partitions pending across micro-batches)
                msg = (f"table {target.table!r}: a partition commit policy with a delay or the "
                       "'partition-time' trigger on Spark Structured Streaming (each "
                       "micro-batch commits the partitions it wrote: 'process-time' with no "
                       "delay only); use the native runtime")
                raise NotSupportedError(msg)
            # (the part files' token: kept in the checkpoint location, so that a restarted
            # query's micro-batches write the names they wrote before)
            path = job.workdir / "sink-token"
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(os.urandom(2).hex())
            self.token = path.read_text().strip()
        elif target.connector not in ("collect", "blackhole"):
            from sqlengine.runtime.operators.sink import ConnectorSink

            self.sink = ConnectorSink.open(target.table, target.connector, options,
                                           target.schema.to_arrow())

    def micro_batch(self, table: pa.Table, batch_id: int) -> None:
        target = self.target
        if target.connector == "filesystem":
            if ROWKIND in table.column_names:
                msg = (f"table {target.table!r}: the filesystem sink takes insert-only rows; "
                       "this query's result is updating")
                raise ExecutionError(msg)
            from sqlengine.connectors.base import PARTITION_KEYS_OPTION
            from sqlengine.connectors.filesystem_commit import (
                CommittingFileWriter,
                CommittingPartitionedWriter,
            )
            from sqlengine.runtime.operators.sink import enforce_not_null
            from sqlengine.runtime.spark.sink import target_drops_nulls

            schema = target.schema.to_arrow()
            table = enforce_not_null(table, tuple(f.name for f in schema if not f.nullable),
                                     target_drops_nulls(target), target.table)
            options = dict(target.options)
            # (a PARTITIONED BY table: a part file per partition the micro-batch reaches,
            # named by the batch as a plain table's, so a micro-batch run again after a
            # restart writes the same names; the partitions it wrote are then committed)
            writer = (CommittingPartitionedWriter if PARTITION_KEYS_OPTION in options
                      else CommittingFileWriter)(target.table, options, schema)
            writer.token = f"{self.token}{batch_id:08d}"[-12:]
            try:
                for b in table.to_batches():
                    writer.write(b)
                writer.prepare_commit(batch_id)
                writer.commit(batch_id)
            finally:
                writer.close()
        elif self.sink is not None:
            with self.lock:
                for b in table.to_batches():
                    self.sink.process_batch(b)

    def close(self) -> None:
        if self.sink is not None:
            with self.lock:
                self.sink.end_input()
                self.sink.close()
            self.sink = None

    def abort(self) -> None:
        if self.sink is not None:
            with contextlib.suppress(SqlEngineError, Exception):
                self.sink.close()
            self.sink = None
