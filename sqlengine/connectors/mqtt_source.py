"""The mqtt connector's reader: the messages of an MQTT topic filter (Mosquitto here), one record
each in the table's format (message_format.py), at-least-once.

The client speaks MQTT 5 with manual acknowledgements and a Receive Maximum of 65,535 (MQTT 3.1.1
leaves the broker's default of 20 unacknowledged messages in flight). With 'client-id' its
session persists on the broker ('session-expiry', default 1 hour): what was not acknowledged
is delivered again when a client of that id connects again, and what is published while it
is away is queued for it (up to the broker's queue limit: Mosquitto's max_queued_messages).
A message is acknowledged once its rows are safe: in a checkpointing job when a checkpoint
that covers it completes, otherwise once its batch went on (at the latest when the read
ends). So after a crash, or a restore
from the last checkpoint, the messages after that checkpoint come again (rows may be read
twice, none is lost while the broker keeps the session): at-least-once, as Flink's sources
without a replayable position. MQTT numbers no messages: a bad one is named by the topic
filter and its place in this read (``mqtt <topic>:msg:<n>``).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sqlengine.connectors.base import SourceRead
from sqlengine.connectors.message_format import Messages, decode
from sqlengine.errors import ConnectorError

_BATCH = 1000  # messages per batch at most
_WAIT = 0.2  # seconds the reader waits for a message before it yields None
RECEIVE_MAXIMUM = 65535
CONNECT_TIMEOUT = 10.0  # seconds for the broker's answer to a connection


def parse_servers(text: str) -> tuple[str, int]:
    """'tcp://host:port' (or mqtt://, or host:port) -> (host, port). Another scheme
    (ssl://, ws://) is refused: the connection would be plain TCP all the same."""
    scheme, _, rest = text.rpartition("://")
    if scheme and scheme.lower() not in ("tcp", "mqtt"):
        msg = (f"option 'servers': the scheme {scheme + '://'!r} of {text!r} is not "
               "supported (only plain TCP: tcp://host:port); TLS and WebSocket connections "
               "are not implemented")
        raise ValueError(msg)
    host, _, port = rest.rstrip("/").rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        msg = f"option 'servers' must be tcp://host:port (port 1 to 65535), got {text!r}"
        raise ValueError(msg)
    return host, int(port)


class MqttReader:
    def __init__(self, read: SourceRead) -> None:
        self.read = read
        self.options = read.options
        self.table = read.table
        self.topic = self.options["topic"]
        self.qos = int(self.options.get("qos", "1"))
        self.client_id = self.options.get("client-id", "")
        self.where = f"mqtt {self.topic}:msg"
        self.key = f"mqtt:{self.topic}"
        self.cond = threading.Condition()
        self.queue: list[Any] = []  # (messages received, not yet turned into rows)
        self.count = 0  # messages turned into rows by this reader
        # (acknowledgements owed: (count after the message, its mid), in order of receipt)
        self.unacked: list[tuple[int, int]] = []
        self.client: Any = None
        self.lost: str | None = None
        if read.cursor is not None:
            read.cursor.on_complete.append(self._completed)

    def _connect(self) -> Any:
        try:
            import paho.mqtt.client as mqtt
            from paho.mqtt.enums import CallbackAPIVersion
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties
        except ImportError:
            msg = "the mqtt connector needs the MQTT client: pip install 'sqlengine[mqtt]'"
            raise ConnectorError(msg) from None
        servers = self.options.get("servers", "tcp://127.0.0.1:1883")
        host, port = parse_servers(servers)
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                             protocol=mqtt.MQTTv5, manual_ack=True)
        if "username" in self.options:  # (an empty one too: MQTT sends it)
            client.username_pw_set(self.options["username"], self.options.get("password"))
        client.on_message = self._on_message
        connected = threading.Event()
        refused: list[str] = []

        def on_connect(client: Any, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
            if reason.is_failure:
                refused.append(str(reason))
            connected.set()

        client.on_connect = on_connect
        props = Properties(PacketTypes.CONNECT)
        props.ReceiveMaximum = RECEIVE_MAXIMUM
        if self.client_id:
            props.SessionExpiryInterval = int(self.options.get("session-expiry", "3600"))
        try:
            code = client.connect(host, port, keepalive=30, clean_start=not self.client_id,
                                  properties=props)
            if code != 0:
                raise ConnectionError(mqtt.error_string(code))
        except Exception as e:  # (refused, unreachable, bad credentials)
            msg = f"table {self.table!r}: cannot connect to MQTT at {servers!r}: {e}"
            raise ConnectorError(msg) from None
        client.loop_start()
        if not connected.wait(CONNECT_TIMEOUT) or refused:
            client.loop_stop()
            why = refused[0] if refused else f"no answer in {CONNECT_TIMEOUT:g} s"
            msg = f"table {self.table!r}: MQTT broker at {servers!r} refused the connection: {why}"
            raise ConnectorError(msg)
        result, _mid = client.subscribe(self.topic, qos=self.qos)
        if result != 0:
            client.loop_stop()
            msg = (f"table {self.table!r}: subscribing to {self.topic!r} at {servers!r} "
                   f"failed: {mqtt.error_string(result)}")
            raise ConnectorError(msg)
        client.on_disconnect = self._on_disconnect
        return client

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        with self.cond:
            self.queue.append(message)
            self.cond.notify()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any,
                       properties: Any) -> None:
        # (paho's loop connects again on its own: the session, and so the unacknowledged
        # messages, survive)
        self.lost = str(reason)

    def batches(self) -> Iterator[pa.RecordBatch | None]:
        self.client = self._connect()
        try:
            while True:
                with self.cond:
                    if not self.queue:
                        self.cond.wait(_WAIT)
                    taken, self.queue = self.queue[:_BATCH], self.queue[_BATCH:]
                if not taken:
                    yield None
                    continue
                first = self.count + 1
                self.count += len(taken)
                batch = decode(Messages(self.where, [m.payload for m in taken],
                                        list(range(first, self.count + 1))),
                               self.options, self.read.schema, self.read.stats,
                               self.read.columns)
                if self.qos > 0:
                    self.unacked.extend((first + i, m.mid) for i, m in enumerate(taken))
                if self.read.cursor is not None:  # (a snapshot follows the rows)
                    self.read.cursor.position[self.key] = self.count
                if batch is not None:
                    yield batch
                if self.read.cursor is None:
                    self._ack(self.count)  # (no checkpoints: the rows went on)
        finally:
            if self.read.cursor is None:  # (the rows of the last batch went on: a LIMIT)
                with contextlib.suppress(Exception):
                    self._ack(self.count)
            client, self.client = self.client, None
            client.disconnect()
            client.loop_stop()

    def _completed(self, position: dict[str, object]) -> None:
        done = position.get(self.key)
        if isinstance(done, int):
            self._ack(done)

    def _ack(self, upto: int) -> None:
        """Acknowledge the messages up to the ``upto``-th, in the order they came."""
        if self.client is None:
            # (the read has ended: its session keeps them, delivered again to the next
            # client of the id)
            return
        n = 0
        for count, mid in self.unacked:
            if count > upto:
                break
            self.client.ack(mid, self.qos)
            n += 1
        del self.unacked[:n]
