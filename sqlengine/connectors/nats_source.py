"""The nats connector's reader: the messages of 'subject' in 'stream', in stream order, turned
into rows a batch of messages at a time (message_format.py).

Where it starts ('scan.startup.mode', as Flink's Kafka source names its modes): 'earliest'
(the stream's first message), 'latest' (those published after the job starts), 'timestamp'
(the first message stored at or after 'scan.startup.timestamp-millis', ms since the epoch,
UTC) or 'sequence' (from the stream sequence 'scan.startup.specific-offset', inclusive: the
stream's offset of the first message read, as a Kafka specific offset is the partition's;
a JetStream stream has one sequence, so the key is singular). Bounded by 'scan.bounded.mode' =
'latest-offset': the stream's last sequence when the job first starts.

Its position is the stream sequence of the last message turned into rows (and the bound): a
checkpointing job keeps it in its checkpoints, so a restored job reads on at the next
sequence (no message lost or read twice, whatever the startup mode).

Without 'durable' the messages are read by an ephemeral consumer without acknowledgements,
started after the position; a gap in its consumer sequence (messages the client dropped)
starts a new one after the last message read, as an ordered consumer does. With 'durable'
they are read by that durable consumer of the stream, which keeps the job's committed position
on the server (as a Kafka consumer group's offsets): the reader acknowledges (ack-all) the
last message of what a completed checkpoint covers, or, in a job without checkpoints, each
batch once its rows went on. A job started afresh resumes after the durable consumer's last
acknowledged message ('scan.startup.mode' says where a new durable consumer starts); a
restored job from its checkpoint's position. The reader (re)creates the durable consumer at
its start (refusing one that filters another subject), and after a gap, from its last
acknowledged message (messages already read are skipped by their stream sequence).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sqlengine.connectors.base import SourceRead
from sqlengine.connectors.message_format import Messages, decode
from sqlengine.connectors.nats_client import NatsIO, stream_info
from sqlengine.errors import ConnectorError

_FETCH = 1000  # messages per fetch
_WAIT = 0.2  # seconds a fetch waits for messages before the reader yields None
# How long the server waits for a durable consumer's acknowledgement before delivering a
# message again (acknowledgements come with checkpoints; a message delivered again is skipped).
ACK_WAIT = 3600.0

STARTUP = "scan.startup.mode"
TIMESTAMP = "scan.startup.timestamp-millis"
OFFSET = "scan.startup.specific-offset"


class NatsReader:
    def __init__(self, read: SourceRead) -> None:
        self.read = read
        self.options = read.options
        self.table = read.table
        self.subject = self.options["subject"]
        self.stream = self.options["stream"]
        self.where = f"nats {self.subject}"
        self.durable = self.options.get("durable")
        # The split's key in a checkpoint's positions: (the stream sequence of the last
        # message turned into rows, the bounded read's last sequence or None).
        self.key = f"nats:{self.stream}:{self.subject}"
        self.io: NatsIO | None = None
        # (durable) the stream sequence acknowledged last, and the acknowledgement subjects
        # of the messages that ended a batch (what a checkpoint's position can be)
        self.acked = 0
        self.ends: dict[int, str | None] = {}
        if self.durable is not None and read.cursor is not None:
            read.cursor.on_complete.append(self._completed)

    def batches(self) -> Iterator[pa.RecordBatch | None]:
        self.io = NatsIO(self.table, self.options)
        try:
            yield from self._batches(self.io)
        finally:
            io, self.io = self.io, None
            io.close()

    def _fail(self, what: str, e: Exception) -> ConnectorError:
        return ConnectorError(f"table {self.table!r}: {what}: {type(e).__name__}: {e}")

    # -- where to start ----------------------------------------------------------------------
    def _start(self, io: NatsIO, last_seq: int) -> int:
        """The stream sequence a fresh start reads after."""
        if self.durable is not None:
            committed = self._committed(io)
            if committed is not None:
                return committed
        mode = self.options.get(STARTUP, "earliest")
        if mode == "latest":
            return last_seq
        if mode == "sequence":
            return int(self.options[OFFSET]) - 1
        if mode == "timestamp":
            return self._at_time(io, int(self.options[TIMESTAMP]))
        return 0

    def _at_time(self, io: NatsIO, millis: int) -> int:
        """The stream sequence before the first message stored at or after ``millis``."""
        from nats.js.api import ConsumerConfig, DeliverPolicy

        start = dt.datetime.fromtimestamp(millis / 1000, dt.UTC)

        async def find() -> int:
            sub = await io.js.pull_subscribe(self.subject, stream=self.stream, config=(
                ConsumerConfig(ack_policy="none", deliver_policy=DeliverPolicy.BY_START_TIME,
                               opt_start_time=start, inactive_threshold=60.0)))
            try:  # (nothing delivered yet: the server reports its start sequence less one)
                return int((await sub.consumer_info()).delivered.stream_seq)
            finally:
                await sub.unsubscribe()

        try:
            return int(io.run(find()))
        except Exception as e:
            raise self._fail(f"finding the first message of {self.where} at or after "
                             f"'{TIMESTAMP}' = {millis}", e) from None

    def _committed(self, io: NatsIO) -> int | None:
        """The durable consumer's committed position (None: there is none yet)."""
        from nats.js.api import DeliverPolicy
        from nats.js.errors import NotFoundError

        try:
            info = io.run(io.js.consumer_info(self.stream, self.durable))
        except NotFoundError:
            return None
        except Exception as e:
            raise self._fail(f"durable consumer {self.durable!r} of stream {self.stream!r}",
                             e) from None
        self._check_filter(info)
        if info.ack_floor.stream_seq:
            return int(info.ack_floor.stream_seq)
        if info.config.deliver_policy == DeliverPolicy.BY_START_SEQUENCE:
            return int(info.config.opt_start_seq or 1) - 1
        if not info.delivered.consumer_seq:  # (the server's start sequence less one)
            return int(info.delivered.stream_seq)
        return None

    def _check_filter(self, info: Any) -> None:
        subject = info.config.filter_subject
        if subject != self.subject:
            msg = (f"table {self.table!r}: durable consumer {self.durable!r} of stream "
                   f"{self.stream!r} filters subject {subject!r}, not {self.subject!r} "
                   "(another reader's? choose another 'durable' name)")
            raise ConnectorError(msg)

    # -- reading -----------------------------------------------------------------------------
    def _batches(self, io: NatsIO) -> Iterator[pa.RecordBatch | None]:
        info = stream_info(io, self.stream, self.subject)
        cursor = self.read.cursor
        resumed = cursor.resume(self.key) if cursor is not None else None
        if resumed is not None:  # (a restored job: on after the last message read)
            done, end = resumed  # type: ignore[misc]
        else:
            done = self._start(io, info.state.last_seq)
            bounded = self.options.get("scan.bounded.mode") == "latest-offset"
            end = info.state.last_seq if bounded else None
        self.acked = done
        if cursor is not None:
            cursor.position[self.key] = (done, end)
        if end is not None and done >= end:
            if self.durable is not None:
                self._subscribe(io, done)  # (the durable consumer's position: the bound)
            return
        sub = self._subscribe(io, done)
        if end is not None and io.run(sub.consumer_info()).num_pending == 0:
            return  # (no message of the subject up to the bound)
        expected = 1  # the next consumer sequence (deliveries come in its order)
        while True:
            try:
                msgs = io.run(sub.fetch(_FETCH, timeout=_WAIT))
            except Exception as e:  # (a timeout: nothing new yet)
                if type(e).__name__ not in ("TimeoutError", "FetchTimeoutError"):
                    raise ConnectorError(f"table {self.table!r}: reading "
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
                seq = m.metadata.sequence.stream
                if seq <= done:  # (a durable consumer's delivery of a message read before)
                    if seq in self.ends:
                        self.ends[seq] = m.reply
                    continue
                if end is not None and seq > end:
                    past = True
                    break
                kept.append(m)
                done = seq
            if kept:
                batch = self._batch(kept)
                if self.durable is not None:
                    self.ends[done] = kept[-1].reply
                if cursor is not None:  # (before the rows go out: a snapshot follows them)
                    cursor.position[self.key] = (done, end)
                if batch is not None:
                    yield batch
                if self.durable is not None and cursor is None:
                    self._ack(done)  # (no checkpoints: the rows went on)
            if end is not None and (past or done >= end or
                                    (msgs[-1].metadata.num_pending == 0 and not gap)):
                return
            if gap:  # (a new consumer, as an ordered consumer does)
                io.run(sub.unsubscribe())
                sub = self._subscribe(io, done)
                expected = 1

    def _subscribe(self, io: NatsIO, done: int) -> Any:
        """A consumer of the subject's messages after stream sequence ``done`` (a durable one:
        after its last acknowledged message)."""
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        if self.durable is None:
            start = {"deliver_policy": DeliverPolicy.ALL} if done == 0 else {
                "deliver_policy": DeliverPolicy.BY_START_SEQUENCE, "opt_start_seq": done + 1}
            try:
                return io.run(io.js.pull_subscribe(
                    self.subject, stream=self.stream,
                    config=ConsumerConfig(ack_policy="none", inactive_threshold=60.0, **start)))
            except Exception as e:
                raise self._fail(f"subscribing to {self.where} of stream {self.stream!r}",
                                 e) from None
        from nats.js.errors import NotFoundError

        durable = self.durable
        config = ConsumerConfig(
            durable_name=durable, filter_subject=self.subject, ack_policy=AckPolicy.ALL,
            max_ack_pending=-1, ack_wait=ACK_WAIT,
            deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=self.acked + 1)

        async def make() -> Any:
            try:
                self._check_filter(await io.js.consumer_info(self.stream, durable))
                await io.js.delete_consumer(self.stream, durable)
            except NotFoundError:
                pass
            await io.js.add_consumer(self.stream, config)
            return await io.js.pull_subscribe_bind(durable, stream=self.stream)

        try:
            sub = io.run(make())
        except ConnectorError:
            raise
        except Exception as e:
            raise self._fail(f"creating durable consumer {durable!r} of stream "
                             f"{self.stream!r}", e) from None
        self.ends = dict.fromkeys(self.ends)  # (the old consumer's subjects are gone)
        return sub

    def _batch(self, msgs: list[Any]) -> pa.RecordBatch | None:
        """The messages' rows as one batch (None: every one skipped as bad)."""
        return decode(Messages(f"{self.where}:seq", [m.data for m in msgs],
                               [m.metadata.sequence.stream for m in msgs]),
                      self.options, self.read.schema, self.read.stats, self.read.columns)

    # -- acknowledgements (durable) ----------------------------------------------------------
    def _completed(self, position: dict[str, object]) -> None:
        held = position.get(self.key)
        if held is not None:
            self._ack(int(held[0]))  # type: ignore[index]

    def _ack(self, seq: int) -> None:
        """Acknowledge (ack-all) the messages up to stream sequence ``seq``: the last message
        that ended a batch at or before it whose delivery is known."""
        known = [s for s, reply in self.ends.items() if s <= seq and reply is not None]
        if not known or max(known) <= self.acked:
            return
        at = max(known)
        reply = self.ends[at]
        io = self.io if self.io is not None else NatsIO(self.table, self.options)

        async def ack() -> None:
            await io.nc.publish(reply, b"+ACK")
            await io.nc.flush()

        try:
            io.run(ack())
        except Exception as e:
            raise self._fail(f"acknowledging {self.where}:seq:{at} to durable consumer "
                             f"{self.durable!r}", e) from None
        finally:
            if io is not self.io:
                io.close()
        self.acked = at
        self.ends = {s: r for s, r in self.ends.items() if s > at}
