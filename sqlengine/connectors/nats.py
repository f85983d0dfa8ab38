"""The nats connector: NATS JetStream streams as sources and sinks, in the shape of Flink's
Kafka connector (a replayable, sequenced log; a Kafka connector would sit behind the same
options: 'scan.startup.mode', 'scan.bounded.mode', 'format' and its options).

- Source (nats_source.py): the messages of 'stream' on 'subject', from 'scan.startup.mode' =
  'earliest', 'latest', 'timestamp' ('scan.startup.timestamp-millis') or 'sequence'
  ('scan.startup.specific-offset': the stream sequence read first), one record each in
  'format' json, csv, raw or debezium-json (a changelog) with the format's options
  (message_format.py; a bad message is named ``nats <subject>:seq:<stream sequence>``, or skipped
  and counted with '<format>.ignore-parse-errors'). Unbounded, or bounded with
  'scan.bounded.mode' = 'latest-offset'. A single reader (a non-parallel source) whose
  position, the stream sequence, is part of a checkpointing job's checkpoints. 'durable' names
  a durable consumer that keeps the committed position on the server, acknowledged as
  checkpoints complete.
- Sink (nats_sink.py): each row published to 'subject' as one message (json, csv or raw),
  acknowledged by JetStream; in a checkpointing job exactly-once, each epoch's rows published
  when its checkpoint completes with message ids that JetStream deduplicates after a restore.
The NATS client (nats-py) is asyncio: the connector drives its own event loop
(nats_client.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sqlengine.connectors import raw_format
from sqlengine.connectors.base import Connector, Fail, OptionSpec, SinkWriter, SourceRead
from sqlengine.connectors.message_format import (
    FORMATS,
    SINK_FORMATS,
    check_format_options,
    format_options,
)
from sqlengine.connectors.nats_source import OFFSET, STARTUP, TIMESTAMP
from sqlengine.errors import ConnectorError
from sqlengine.types import is_nested, type_name

if TYPE_CHECKING:
    from sqlengine.plan.nodes import Schema

_NOT_IMPLEMENTED = {
    "scan.startup.specific-offsets": f"a stream has one sequence: use '{STARTUP}' = "
                                     f"'sequence' with '{OFFSET}'",
    "properties.group.id": "a durable consumer keeps the committed position: use 'durable'",
    "scan.bounded.timestamp-millis": "a bounded read ends at the stream's last sequence "
                                     "('scan.bounded.mode' = 'latest-offset')",
    "scan.bounded.specific-offsets": "a bounded read ends at the stream's last sequence "
                                     "('scan.bounded.mode' = 'latest-offset')",
    "sink.delivery-guarantee": "the sink is exactly-once in a checkpointing job, and "
                               "publishes each row once otherwise",
    "sink.transactional-id-prefix": "message ids are drawn by the sink",
    "key.format": "a message has no key (its subject is the table's 'subject')",
    "value.format": "use 'format'",
    "csv.write-bom": "messages are written without a byte order mark",
    "json.timestamp-format.standard": "json timestamps are read and written in one format",
    "json.map-null-key.mode": "json maps are not supported",
    "raw.endianness": "the raw format reads STRING and BYTES only",
}
_MAX_SEQUENCE = 2**64 - 1  # (JetStream's sequences are unsigned 64-bit)
_MAX_MILLIS = 253_402_300_799_999
# NATS's rules for a consumer's name (no whitespace, '.', '*', '>', path separators).
_DURABLE = re.compile(r"[^\s.*>/\\]+")


class Nats(Connector):
    name = "nats"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("servers"),
        OptionSpec("subject", required=True),
        OptionSpec("stream"),
        OptionSpec("durable"),
        *format_options(FORMATS),
        OptionSpec(STARTUP, "enum", ("earliest", "latest", "timestamp", "sequence")),
        OptionSpec(TIMESTAMP, "int"),
        OptionSpec(OFFSET, "int"),
        OptionSpec("scan.bounded.mode", "enum", ("unbounded", "latest-offset")),
        OptionSpec("scan.watermark.idle-timeout", "duration"),
        OptionSpec("sink.parallelism", "positive"),
    )
    is_source = True
    is_sink = True
    sink_accepts_updates = False
    parallel_source = False  # (one ordered consumer)

    def check_extra_option(self, key: str, value: str, columns: set[str], fail: Fail) -> bool:
        why = _NOT_IMPLEMENTED.get(key)
        if why is not None:
            raise fail(key, f"option {key!r} is not implemented ({why}); it would be ignored")
        return False

    def check_table(self, options: dict[str, str], fail: Fail) -> None:
        check_format_options(options, fail)
        mode = options.get(STARTUP, "earliest")
        for key, needs in ((TIMESTAMP, "timestamp"), (OFFSET, "sequence")):
            if key in options and mode != needs:
                raise fail(key, f"option {key!r} is only read with '{STARTUP}' = '{needs}' "
                           f"(here {mode!r}): it would be ignored")
            if mode == needs and key not in options:
                raise fail(STARTUP, f"'{STARTUP}' = '{needs}' needs option {key!r}")
        if OFFSET in options and not 1 <= int(options[OFFSET]) <= _MAX_SEQUENCE:
            raise fail(OFFSET, f"option {OFFSET!r} is a stream sequence, 1 to "
                       f"{_MAX_SEQUENCE}; got {options[OFFSET]!r}")
        if TIMESTAMP in options and not 0 <= int(options[TIMESTAMP]) <= _MAX_MILLIS:
            # (one past year 9999 failed in the reader with Python's "year ... is out of
            # range", naming no option)
            raise fail(TIMESTAMP, f"option {TIMESTAMP!r} is milliseconds since 1970-01-01 "
                       f"UTC, 0 to {_MAX_MILLIS} (9999-12-31); got {options[TIMESTAMP]!r}")
        durable = options.get("durable")
        if durable is not None and _DURABLE.fullmatch(durable) is None:
            raise fail("durable", f"option 'durable' must be a JetStream consumer name (no "
                       f"whitespace, '.', '*', '>', '/' or '\\\\'), got {durable!r}")

    def check_columns(self, options: dict[str, str], schema: Schema, fail: Fail) -> None:
        if options.get("format") == "raw" and len(schema.fields) != 1:
            raise fail("format", "the raw format reads and writes a single column; this "
                       f"table has {len(schema.fields)}: "
                       + ", ".join(repr(f.name) for f in schema.fields))

    def type_refusal(self, options: dict[str, str], t: pa.DataType) -> str | None:
        fmt = options.get("format", "json")
        if fmt == "raw":
            return raw_format.type_refusal(t, lines=False)
        if is_nested(t):
            return f"the nats connector does not read or write {type_name(t)} columns yet"
        return None

    def changelog(self, options: dict[str, str]) -> bool:
        return options.get("format") == "debezium-json"

    def check_sink(self, options: dict[str, str]) -> None:
        subject = options.get("subject", "")
        if any(token in ("*", ">") for token in subject.split(".")):
            # (a wildcard filters what a reader takes; a message published to 'a.*' was
            # stored under that very subject, which no reader of a.b receives)
            msg = (f"option 'subject' = {subject!r} holds a wildcard: a nats sink publishes "
                   "to one subject")
            raise ConnectorError(msg)
        fmt = options.get("format", "json")
        if fmt not in SINK_FORMATS:
            msg = (f"writing the {fmt} format to nats is not supported (it is read as a "
                   f"changelog); write {', '.join(SINK_FORMATS)}")
            raise ConnectorError(msg)

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
        from sqlengine.connectors.nats_source import NatsReader

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
