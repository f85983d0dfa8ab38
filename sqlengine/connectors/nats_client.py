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
        except Exception as e:  # (the client's errors: no server, refused)
            self.loop.close()
            msg = f"table {table!r}: cannot connect to NATS at {self.servers!r}: {e}"
            raise ConnectorError(msg) from None
        self.js = self.nc.jetstream()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        try:
            self.run(self.nc.close())
        finally:
            self.loop.close()
