"""A NATS connection of one reader or writer of the nats connector, and the event loop that
drives it: the NATS client (nats-py) is asyncio, the engine's readers and writers are not."""

from __future__ import annotations

from typing import Any

from sqlengine.errors import ConnectorError

DEFAULT_SERVERS = "nats://127.0.0.1:4222"


def client() -> Any:
    try:
        import nats
    except ImportError:
        msg = "the nats connector needs the NATS client: pip install 'sqlengine[nats]'"
        raise ConnectorError(msg) from None
    return nats


class NatsIO:
    """An event loop and its NATS connection (JetStream context ``js``)."""

    def __init__(self, table: str, options: dict[str, str]) -> None:
        self.table = table
        self.servers = options.get("servers", DEFAULT_SERVERS)
        import asyncio  # (here: every connector module is imported to find one by name)

        self.loop = asyncio.new_event_loop()
        nats = client()
        self.errors: list[BaseException] = []

        async def keep(e: BaseException) -> None:  # (the client's default prints tracebacks)
            self.errors.append(e)

        try:
            self.nc = self.run(nats.connect(self.servers, connect_timeout=5, error_cb=keep,
                                            max_reconnect_attempts=2, allow_reconnect=False))
        except Exception as e:  # (the client's errors: no server, refused, timed out)
            self.loop.close()
            why = str(e) or ("timed out" if isinstance(e, TimeoutError) else
                             type(e).__name__)
            msg = f"table {table!r}: cannot connect to NATS at {self.servers!r}: {why}"
            raise ConnectorError(msg) from None
        self.js = self.nc.jetstream()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        try:
            self.run(self.nc.close())
        finally:
            self.loop.close()


def stream_info(io: NatsIO, stream: str, subject: str) -> Any:
    """JetStream stream ``stream``'s info, checked to take ``subject`` (a sink's messages or a
    source's filter); an error names the table, the stream and the subject."""
    try:
        info = io.run(io.js.stream_info(stream))
    except Exception as e:
        msg = f"table {io.table!r}: JetStream stream {stream!r}: {type(e).__name__}: {e}"
        raise ConnectorError(msg) from None
    subjects = list(info.config.subjects or ())  # (none: a mirror's, a sourcing one's)
    if subjects and not any(subject_within(subject, p) for p in subjects):
        msg = (f"table {io.table!r}: option 'subject' = {subject!r} is not among the "
               f"subjects of JetStream stream {stream!r}: {', '.join(map(repr, subjects))}")
        raise ConnectorError(msg)
    return info


def subject_within(subject: str, pattern: str) -> bool:
    """Whether every subject ``subject`` (a filter, with ``*`` / ``>`` wildcards) matches is
    one ``pattern`` matches (NATS's subset rule: a stream's subject the table's filters)."""
    have, want = subject.split("."), pattern.split(".")
    for i, p in enumerate(want):
        if p == ">":
            return len(have) > i
        if i >= len(have):
            return False
        if p != "*" and (p != have[i] or have[i] in ("*", ">")):
            return False
        if p == "*" and have[i] == ">":
            return False
    return len(have) == len(want)
