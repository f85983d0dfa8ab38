"""The print connector (Flink's): a sink writing each row as ``+I[1, abc, null]`` (the row kind
and the values, as Java's toString writes them: java_text.py) to standard output, or to
standard error with 'standard-error' = 'true', prefixed with '<print-identifier>> ' when
given."""

from __future__ import annotations

import sys
from typing import ClassVar, TextIO

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.connectors.base import Connector, OptionSpec, SinkWriter
from sqlengine.connectors.java_text import java_strings


def format_rows(batch: pa.RecordBatch, kinds: pa.Array | None = None) -> list[str]:
    """Flink's print format: ``+I[1, abc, null]`` per row (vectorised to strings); ``kinds``
    the rows' kinds as short names (+I when None)."""
    n = batch.num_rows
    cols = [java_strings(col) for col in batch.columns]
    prefix = kinds if kinds is not None else pa.array(["+I"] * n, pa.string())
    body = pc.binary_join_element_wise(*cols, ", ") if cols else pa.array([""] * n)
    lines = pc.binary_join_element_wise(prefix, body, "[")
    return [f"{line}]" for line in lines.to_pylist()]


class PrintWriter(SinkWriter):
    name = "Print"

    def __init__(self, identifier: str | None = None, stream: TextIO | None = None,
                 use_stderr: bool = False) -> None:
        super().__init__()
        self.identifier = identifier
        self.stream = stream
        self.use_stderr = use_stderr

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        out = self.stream or (sys.stderr if self.use_stderr else sys.stdout)
        prefix = f"{self.identifier}> " if self.identifier else ""
        out.write("".join(f"{prefix}{line}\n" for line in format_rows(batch, kinds)))
        out.flush()
        self.rows += batch.num_rows


class Print(Connector):
    holds_nested = True
    holds_opaque = True
    name = "print"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("print-identifier"),
        OptionSpec("standard-error", "bool"),
        OptionSpec("sink.parallelism", "positive"),
    )
    is_sink = True

    def open_sink(self, table: str, options: dict[str, str], schema: pa.Schema,
                  overwrite: bool) -> SinkWriter:
        return PrintWriter(options.get("print-identifier"),
                           use_stderr=options.get("standard-error", "false").lower() == "true")


CONNECTOR = Print()
