"""The mqtt connector: an MQTT topic (filter) as an unbounded source, at-least-once
(mqtt_source.py), for device streams: 'servers' (tcp://host:port), 'topic' (wildcards + and #
allowed), 'qos' (0, 1 or 2; default 1), 'client-id' and 'session-expiry' (a persistent
session), 'username' / 'password', and 'format' json, csv or raw with the format's options
(message_format.py). A single reader (a non-parallel source).

In a checkpointing job the source needs 'client-id' and a QoS above 0: its messages are
acknowledged as checkpoints complete, so the broker delivers what a restored job has not
accounted for again (at-least-once). MQTT offers no position to read from again, so a
restored job does not read exactly the messages after its checkpoint: no exactly-once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sqlengine.connectors import raw_format
from sqlengine.connectors.base import Connector, Fail, OptionSpec, SourceRead
from sqlengine.connectors.message_format import check_format_options, format_options
from sqlengine.errors import ConnectorError
from sqlengine.types import is_nested, type_name

if TYPE_CHECKING:
    from sqlengine.plan.nodes import Schema

FORMATS = ("json", "csv", "raw")
_MAX_EXPIRY = 2**32 - 1
_NOT_IMPLEMENTED = {
    "scan.bounded.mode": "an MQTT topic has no end to read to (end the query with LIMIT)",
    "scan.startup.mode": "a subscription receives what is published after it (and what the "
                         "broker queued for a persistent session)",
}


class Mqtt(Connector):
    name = "mqtt"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("servers"),
        OptionSpec("topic", required=True),
        OptionSpec("qos", "enum", ("0", "1", "2")),
        OptionSpec("client-id"),
        OptionSpec("session-expiry", "int"),
        OptionSpec("username"),
        OptionSpec("password"),
        *format_options(FORMATS),
        OptionSpec("scan.watermark.idle-timeout", "duration"),
    )
    is_source = True
    is_sink = False
    parallel_source = False  # (one subscription)

    def check_extra_option(self, key: str, value: str, columns: set[str], fail: Fail) -> bool:
        why = _NOT_IMPLEMENTED.get(key)
        if why is not None:
            raise fail(key, f"option {key!r} is not implemented ({why}); it would be ignored")
        return False

    def check_table(self, options: dict[str, str], fail: Fail) -> None:
        from sqlengine.connectors.mqtt_source import parse_servers

        check_format_options(options, fail)
        if "servers" in options:
            try:
                parse_servers(options["servers"])
            except ValueError as e:
                raise fail("servers", str(e)) from None
        topic = options.get("topic")
        if topic is not None:  # (MQTT's rules for a subscription's filter)
            levels = topic.split("/")
            if not topic or "\x00" in topic or any(
                    ("#" in lv and (lv != "#" or i != len(levels) - 1)) or
                    ("+" in lv and lv != "+") for i, lv in enumerate(levels)):
                raise fail("topic", f"option 'topic': {topic!r} is not a valid MQTT topic "
                           "filter ('#' only as the whole last level, '+' only as a whole "
                           "level, not empty)")
        if "session-expiry" in options and "client-id" not in options:
            raise fail("session-expiry", "option 'session-expiry' is only read with "
                       "'client-id' (a persistent session): it would be ignored")
        if options.get("client-id") == "":
            raise fail("client-id", "option 'client-id' is empty: the broker would draw an "
                       "id for each connection (no persistent session); leave it out, or "
                       "name the session")
        if "session-expiry" in options and \
                not 0 <= int(options["session-expiry"]) <= _MAX_EXPIRY:
            raise fail("session-expiry", "option 'session-expiry' is seconds, 0 to "
                       f"{_MAX_EXPIRY} (MQTT's four bytes); got {options['session-expiry']!r}")
        if "password" in options and "username" not in options:
            raise fail("password", "option 'password' is only sent with 'username': it "
                       "would be ignored")
        if "json.encode.decimal-as-plain-number" in options:
            raise fail("json.encode.decimal-as-plain-number", "option "
                       "'json.encode.decimal-as-plain-number' is an option of writing, and "
                       "the mqtt connector is a source only: it would be ignored")

    def check_columns(self, options: dict[str, str], schema: Schema, fail: Fail) -> None:
        if options.get("format") == "raw" and len(schema.fields) != 1:
            raise fail("format", "the raw format reads a single column; this table has "
                       f"{len(schema.fields)}: " + ", ".join(repr(f.name) for f in schema.fields))

    def type_refusal(self, options: dict[str, str], t: pa.DataType) -> str | None:
        if options.get("format", "json") == "raw":
            return raw_format.type_refusal(t, lines=False)
        if is_nested(t):
            return f"the mqtt connector does not read {type_name(t)} columns yet"
        return None

    def bounded(self, table: Any) -> bool:
        return False

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        if not read.options.get("client-id"):
            return ("an mqtt source needs 'client-id' in a checkpointing job (a persistent "
                    "session delivers what a restored job has not accounted for again)")
        if read.options.get("qos", "1") == "0":
            return ("an mqtt source with 'qos' = '0' cannot take part in checkpoints (the "
                    "broker does not deliver a QoS 0 message again)")
        return None  # (at-least-once: acknowledgements follow completed checkpoints)

    def open_source(self, read: SourceRead) -> Iterator[object]:
        if read.split[0] > 0:
            return iter(())
        from sqlengine.connectors.mqtt_source import MqttReader

        return MqttReader(read).batches()

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> Any:
        raise ConnectorError(f"table {table!r}: the mqtt connector is a source only")


CONNECTOR = Mqtt()
