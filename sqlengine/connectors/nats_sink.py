"""The nats sink: each row published to 'subject' as one message, acknowledged by JetStream.

Without checkpoints (``NatsWriter``) rows are published as they arrive (asynchronously, in
order, every acknowledgement awaited per batch).

In a checkpointing job (``CommittingNatsWriter``, exactly-once into the stream, as Flink's
Kafka sink with its transactions): the rows of an epoch (between two checkpoint barriers)
are held, encoded, and become part of the checkpoint at its barrier; they are published when
that checkpoint completes, each with a JetStream message id (header 'Nats-Msg-Id')
``<sink id>-<subtask>-<checkpoint>-<position in the epoch>``, the sink id drawn when the job
first starts and kept in its checkpoints. A job killed while publishing is restored from
that checkpoint (or a later one), whose state still holds the epoch: the restored writer
publishes it again under the same ids, and JetStream drops those it already stored (its
duplicate window, 2 minutes by default). A restore later than the window (measured from the
epoch's barrier) first reads the ids already in the stream since that barrier (a
headers-only consumer) and publishes only the others. So each row reaches the stream once,
whether or not the rows replayed after the restore come in the same order as before (they
are never published before their checkpoint completes). Rows become visible once their
checkpoint completes; the epoch's rows are held in the checkpoint's state meanwhile.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from typing import ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.connectors.base import SinkWriter
from sqlengine.connectors.message_format import encode
from sqlengine.connectors.nats_client import NatsIO, stream_info
from sqlengine.errors import ConnectorError

MSG_ID = "Nats-Msg-Id"
ACK_TIMEOUT = 60.0  # seconds for JetStream to acknowledge the messages of one publish
# A restore this close to (or past) the end of the stream's duplicate window reads the ids
# already stored rather than trust the window (seconds; the server's clock may differ).
WINDOW_MARGIN = 10.0
CLOCK_SKEW = 60.0


def insert_only(table: str, kinds: pa.Array | None) -> None:
    if kinds is not None and pc.any(pc.not_equal(kinds, "+I")).as_py():
        msg = f"table {table!r}: the nats sink takes insert-only rows"
        raise ConnectorError(msg)


class Published:
    """What one publish stored: messages new to the stream, and duplicates it dropped."""

    def __init__(self) -> None:
        self.stored = 0
        self.duplicates = 0


def publish(io: NatsIO, where: str, subject: str, stream: str | None, messages: pa.Array,
            ids: list[str] | None = None) -> Published:
    """Publish ``messages`` in order (with message ids ``ids``), and wait for JetStream to
    acknowledge them all; a failure names the subject (and the position of the message)."""
    done = Published()
    values = messages.to_pylist()

    async def go() -> None:
        futures = []
        for i, data in enumerate(values):
            headers = {MSG_ID: ids[i]} if ids is not None else None
            futures.append(await io.js.publish_async(subject, data, stream=stream,
                                                     headers=headers))
        acks = await asyncio.wait_for(asyncio.gather(*futures, return_exceptions=True),
                                      timeout=ACK_TIMEOUT)
        for i, ack in enumerate(acks):
            if isinstance(ack, BaseException):
                msg = (f"{where}: publishing to {subject!r} failed at message {i + 1} of "
                       f"{len(values)}: {type(ack).__name__}: {ack}")
                raise ConnectorError(msg)
            if ack.duplicate:
                done.duplicates += 1
            else:
                done.stored += 1

    try:
        io.run(go())
    except ConnectorError:
        raise
    except TimeoutError:
        msg = (f"{where}: JetStream did not acknowledge the messages published to {subject!r} "
               f"within {ACK_TIMEOUT:g} s")
        raise ConnectorError(msg) from None
    except Exception as e:  # (the client's errors: connection lost, no stream)
        msg = f"{where}: publishing to {subject!r} failed: {type(e).__name__}: {e}"
        raise ConnectorError(msg) from None
    return done


class NatsWriter(SinkWriter):
    name = "NatsSink"
    # (a checkpointing job writes through CommittingNatsWriter instead)
    guarantee: ClassVar[str | None] = None

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema) -> None:
        super().__init__()
        self.table = table
        self.options = options
        self.subject = options["subject"]
        self.stream = options.get("stream")
        self.where = f"table {table!r}"
        # (connected on the first write: in a checkpointing job this writer is dropped
        # unused for the committing one)
        self._io: NatsIO | None = None

    @property
    def io(self) -> NatsIO:
        if self._io is None:
            io = NatsIO(self.table, self.options)
            if self.stream is not None:
                # (the stream and that it takes the subject, before publishing: a publish
                # to a stream that does not exist, or expects another, was never
                # acknowledged, and failed after 60 s naming neither)
                try:
                    stream_info(io, self.stream, self.subject)
                except ConnectorError:
                    io.close()
                    raise
            self._io = io
        return self._io

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        insert_only(self.table, kinds)
        publish(self.io, self.where, self.subject, self.stream,
                encode(self.table, self.options, batch))
        self.rows += batch.num_rows

    def close(self) -> None:
        if self._io is not None:
            self._io.close()
            self._io = None


# An epoch's rows awaiting their checkpoint: (checkpoint, message id prefix, messages,
# wall-clock time of the barrier in seconds).
Epoch = tuple[int, str, pa.Array, float]


class CommittingNatsWriter(NatsWriter):
    name = "NatsSink"
    guarantee: ClassVar[str | None] = "exactly-once"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 subtask: int = 0) -> None:
        super().__init__(table, options, schema)
        self.subtask = subtask
        self.sink_id = uuid.uuid4().hex[:16]  # (kept in the checkpoints: see restore)
        self.buffer: list[pa.Array] = []  # the messages of the current epoch
        self.pending: list[Epoch] = []
        self.duplicates = 0  # messages JetStream dropped as already stored
        self._io = NatsIO(table, options)  # (connected now: a server down fails the start)

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        insert_only(self.table, kinds)
        self.buffer.append(encode(self.table, self.options, batch))
        self.rows += batch.num_rows

    def prepare_commit(self, checkpoint: int) -> None:
        if self.buffer:
            messages = pa.concat_arrays(self.buffer) if len(self.buffer) > 1 else \
                self.buffer[0]
            self.buffer = []
            if len(messages):
                self.pending.append((checkpoint, f"{self.sink_id}-{self.subtask}-{checkpoint}",
                                     messages, time.time()))

    def snapshot(self) -> object:
        return {"sink_id": self.sink_id, "subtask": self.subtask, "rows": self.rows,
                "pending": list(self.pending)}

    def commit(self, checkpoint: int) -> None:
        keep: list[Epoch] = []
        for epoch in self.pending:
            if epoch[0] <= checkpoint:
                self._publish(epoch, restored=False)
            else:
                keep.append(epoch)
        self.pending = keep

    def _publish(self, epoch: Epoch, restored: bool) -> None:
        _checkpoint, prefix, messages, barrier = epoch
        ids = [f"{prefix}-{i}" for i in range(len(messages))]
        if restored and time.time() - barrier + WINDOW_MARGIN >= self._window():
            # (past JetStream's duplicate window: what was stored is read back instead)
            stored = self._stored_ids(prefix, barrier)
            if stored:
                missing = [i for i, x in enumerate(ids) if x not in stored]
                self.duplicates += len(ids) - len(missing)
                messages = messages.take(pa.array(missing, pa.int64()))
                ids = [ids[i] for i in missing]
        if not ids:
            return
        done = publish(self.io, self.where, self.subject, self.stream, messages, ids)
        self.duplicates += done.duplicates

    def _stream_name(self) -> str:
        if self.stream is not None:
            return self.stream
        try:
            self.stream = str(self.io.run(self.io.js.find_stream_name_by_subject(self.subject)))
        except Exception as e:
            msg = (f"{self.where}: no JetStream stream holds subject {self.subject!r} "
                   f"({type(e).__name__}: {e})")
            raise ConnectorError(msg) from None
        return self.stream

    def _window(self) -> float:
        """The stream's duplicate window in seconds."""
        stream = self._stream_name()
        try:
            info = self.io.run(self.io.js.stream_info(stream))
        except Exception as e:
            msg = f"{self.where}: JetStream stream {stream!r}: {type(e).__name__}: {e}"
            raise ConnectorError(msg) from None
        return float(info.config.duplicate_window or 0.0)

    def _stored_ids(self, prefix: str, barrier: float) -> set[str]:
        """The message ids starting with ``prefix`` stored on the subject since the epoch's
        barrier (less the clocks' possible skew), read by a headers-only consumer."""
        from nats.js.api import ConsumerConfig, DeliverPolicy

        stream = self._stream_name()
        start = dt.datetime.fromtimestamp(barrier - CLOCK_SKEW, dt.UTC)
        found: set[str] = set()

        async def scan() -> None:
            sub = await self.io.js.pull_subscribe(
                self.subject, stream=stream, config=ConsumerConfig(
                    ack_policy="none", deliver_policy=DeliverPolicy.BY_START_TIME,
                    opt_start_time=start, headers_only=True, inactive_threshold=60.0))
            try:
                if (await sub.consumer_info()).num_pending == 0:
                    return
                while True:
                    msgs = await sub.fetch(1000, timeout=5)
                    for m in msgs:
                        mid = (m.headers or {}).get(MSG_ID, "")
                        if mid.startswith(prefix + "-"):
                            found.add(mid)
                    if not msgs or msgs[-1].metadata.num_pending == 0:
                        return
            finally:
                await sub.unsubscribe()

        try:
            self.io.run(scan())
        except Exception as e:
            msg = (f"{self.where}: reading the message ids stored in stream {stream!r} on "
                   f"{self.subject!r} (a restore past the duplicate window) failed: "
                   f"{type(e).__name__}: {e}")
            raise ConnectorError(msg) from None
        return found

    def restore(self, states: list[object], subtask: int, parallelism: int) -> None:
        mine = [s for s in states if isinstance(s, dict)]
        # What the checkpoint covered is published (again: JetStream drops what it stored),
        # by the subtask that held it or, after a rescale, by the one its index maps to.
        for s in mine:
            if int(s["subtask"]) % parallelism != subtask:
                continue
            for epoch in s["pending"]:
                self._publish(epoch, restored=True)
        if len(mine) == parallelism and subtask < len(mine) and \
                int(mine[subtask]["subtask"]) == subtask:
            self.sink_id = str(mine[subtask]["sink_id"])
        # (rescaled: a fresh id, so the new subtasks' ids never meet the old ones)
        self.rows = sum(int(s["rows"]) for s in mine if int(s["subtask"]) % parallelism ==
                        subtask)
