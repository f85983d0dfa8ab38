"""The blackhole connector (Flink's): a sink that counts the rows and drops them."""

from __future__ import annotations

import pyarrow as pa

from sqlengine.connectors.base import Connector, SinkWriter


class BlackholeWriter(SinkWriter):
    name = "Blackhole"
    guarantee = "exactly-once"  # (nothing is written: nothing can be written twice)


class Blackhole(Connector):
    holds_nested = True
    holds_opaque = True
    name = "blackhole"
    is_sink = True

    def parallel_sink(self, options: dict[str, str]) -> bool:
        return True

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        return BlackholeWriter()


CONNECTOR = Blackhole()
