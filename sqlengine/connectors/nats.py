"""The nats connector: NATS JetStream streams as sources and sinks (first part: JSON
messages, one row each).

- Source: the messages of 'stream' on 'subject' from 'scan.startup.mode' = 'earliest' (or
  'latest': only those published after the job starts), read by an ordered consumer in
  batches; rows parsed with the json format, vectorised per batch of messages (a bad message
  is named ``nats <subject>:<stream sequence>``). Unbounded, or bounded with
  'scan.bounded.mode' = 'latest-offset' (the stream's last sequence when the job starts, as
  Flink's Kafka source). A single reader (a non-parallel source). In a checkpointing job its
  position is the stream sequence of the last message it turned into rows (and the bound):
  a restored job resumes at the next sequence (a consumer from that start sequence), so no
  message is lost or read twice. A gap in the consumer's sequence (messages the client
  dropped) restarts the consumer after the last message read, as an ordered consumer does.
- Sink (nats_sink.py): each row published to 'subject' as a JSON message, acknowledged by
  JetStream; in a checkpointing job exactly-once, each epoch's rows published when its
  checkpoint completes with message ids that JetStream deduplicates after a restore.
The NATS client (nats-py) is asyncio: the connector drives its own event loop
(nats_client.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

import pyarrow as pa

from sqlengine.connectors.base import Connector, OptionSpec, SinkWriter, SourceRead
from sqlengine.connectors.nats_client import NatsIO
from sqlengine.errors import ConnectorError

_FETCH = 1000  # messages per fetch
_WAIT = 0.2  # seconds a fetch waits for messages before the reader yields None


class NatsReader:
    def __init__(self, read: SourceRead) -> None:
        self.read = read
        self.options = read.options
        self.subject = self.options["subject"]
        self.stream = self.options["stream"]
        self.where = f"nats {self.subject}"
        # The split's key in a checkpoint's positions: (the stream sequence of the last
        # message turned into rows, the bounded read's last sequence or None).
        self.key = f"nats:{self.stream}:{self.subject}"

    def batches(self) -> Iterator[pa.RecordBatch | None]:
        io = NatsIO(self.read.table, self.options)
        try:
            yield from self._batches(io)
        finally:
            io.close()

    def _batches(self, io: NatsIO) -> Iterator[pa.RecordBatch | None]:
        try:
            info = io.run(io.js.stream_info(self.stream))
        except Exception as e:
            msg = (f"table {self.read.table!r}: JetStream stream {self.stream!r}: "
                   f"{type(e).__name__}: {e}")
            raise ConnectorError(msg) from None
        cursor = self.read.cursor
        resumed = cursor.resume(self.key) if cursor is not None else None
        if resumed is not None:  # (a restored job: on after the last message read)
            done, end = resumed  # type: ignore[misc]
        else:
            latest = self.options.get("scan.startup.mode", "earliest") == "latest"
            done = info.state.last_seq if latest else 0
            bounded = self.options.get("scan.bounded.mode") == "latest-offset"
            end = info.state.last_seq if bounded else None
        if cursor is not None:
            cursor.position[self.key] = (done, end)
        if end is not None and done >= end:
            return
        sub = self._subscribe(io, done)
        if end is not None and io.run(sub.consumer_info()).num_pending == 0:
            return  # (no message of the subject up to the bound)
        expected = 1  # the next consumer sequence (no ack, no redelivery: one by one)
        while True:
            try:
                msgs = io.run(sub.fetch(_FETCH, timeout=_WAIT))
            except Exception as e:  # (a timeout: nothing new yet)
                if type(e).__name__ not in ("TimeoutError", "FetchTimeoutError"):
                    raise ConnectorError(f"table {self.read.table!r}: reading "
                                         f"{self.where}: {e}") from None
                msgs = []
            if not msgs:
                yield None
                continue
            kept, gap, past = [], False, False
            for m in msgs:
                if m.metadata.sequence.consumer != expected:
                    gap = True  # (messages lost in between: read again after the last kept)
                    break
                expected += 1
                if end is not None and m.metadata.sequence.stream > end:
                    past = True
                    break
                kept.append(m)
            if kept:
                done = kept[-1].metadata.sequence.stream
                batch = self._batch(kept)
                if cursor is not None:  # (before the rows go out: a snapshot follows them)
                    cursor.position[self.key] = (done, end)
                if batch is not None:
                    yield batch
            if end is not None and (past or done >= end or
                                    (kept and kept[-1].metadata.num_pending == 0)):
                return
            if gap:  # (a new consumer from the next sequence, as an ordered consumer does)
                io.run(sub.unsubscribe())
                sub = self._subscribe(io, done)
                expected = 1

    def _subscribe(self, io: NatsIO, done: int) -> Any:
        """A consumer of the subject's messages after stream sequence ``done``."""
        from nats.js.api import ConsumerConfig, DeliverPolicy

        start = {"deliver_policy": DeliverPolicy.ALL} if done == 0 else {
            "deliver_policy": DeliverPolicy.BY_START_SEQUENCE, "opt_start_seq": done + 1}
        return io.run(io.js.pull_subscribe(
            self.subject, stream=self.stream,
            config=ConsumerConfig(ack_policy="none", inactive_threshold=60.0, **start)))

    def _batch(self, msgs: list[Any]) -> pa.RecordBatch | None:
        """The messages' rows as one batch (None: every one skipped as bad)."""
        from sqlengine.connectors.json_format import read_json

        data = b"\n".join(m.data.replace(b"\n", b" ") for m in msgs) + b"\n"
        first = msgs[0].metadata.sequence.stream
        batches = list(read_json(f"{self.where}:seq", self.options, self.read.schema,
                                 self.read.stats, data=data, first_line=first))
        if not batches:
            return None
        return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


class Nats(Connector):
    name = "nats"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("servers"),
        OptionSpec("subject", required=True),
        OptionSpec("stream"),
        OptionSpec("format", "enum", ("json",)),
        OptionSpec("scan.startup.mode", "enum", ("earliest", "latest")),
        OptionSpec("scan.bounded.mode", "enum", ("unbounded", "latest-offset")),
        OptionSpec("json.ignore-parse-errors", "bool"),
        OptionSpec("scan.watermark.idle-timeout"),
        OptionSpec("sink.parallelism", "int"),
    )
    is_source = True
    is_sink = True
    sink_accepts_updates = False
    parallel_source = False  # (one ordered consumer)

    def check_table(self, options: dict[str, str], fail: Any) -> None:
        if options.get("format", "json") != "json":
            raise fail("format", "the nats connector reads and writes json messages only")

    def bounded(self, table: Any) -> bool:
        return dict(table.options).get("scan.bounded.mode") == "latest-offset"

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        return None  # (the reader keeps its stream sequence in read.cursor)

    def open_source(self, read: SourceRead) -> Iterator[object]:
        if "stream" not in read.options:
            msg = f"table {read.table!r}: a nats source needs option 'stream' (the JetStream)"
            raise ConnectorError(msg)
        if read.split[0] > 0:
            return iter(())
        return NatsReader(read).batches()

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        if overwrite:
            raise ConnectorError(f"table {table!r}: INSERT OVERWRITE into a nats subject")
        from sqlengine.connectors.nats_sink import NatsWriter

        return NatsWriter(table, options, schema)

    def open_committing_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                             subtask: int) -> SinkWriter | None:
        from sqlengine.connectors.nats_sink import CommittingNatsWriter

        return CommittingNatsWriter(table, options, schema, subtask)


CONNECTOR = Nats()
