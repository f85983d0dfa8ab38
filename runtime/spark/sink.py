"""The batch Spark job's result: collected as Arrow, written by Spark (filesystem), or handed
to our own connector sink (print, jdbc, ...; blackhole drops it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sqlengine.connectors.base import PARTITION_KEYS_OPTION
from sqlengine.connectors.filesystem import spark_path
from sqlengine.errors import ExecutionError
from sqlengine.optimizer.specs import OperatorSpec, TableSinkSpec
from sqlengine.plan import nodes as N
from sqlengine.runtime.native.executor import JobResult


def sink_target(op: OperatorSpec) -> N.SinkSpec:
    """The table a job's last operator writes into."""
    if not isinstance(op, TableSinkSpec):
        msg = f"the job ends in {op.label()}, not in a sink"
        raise ExecutionError(msg)
    return op.target


def write_frame(df: Any, target: N.SinkSpec, result: JobResult) -> Iterator[pa.RecordBatch]:
    """Writes the final DataFrame ``df`` into ``target`` (yields the rows of a collect sink)
    and counts its rows into ``result``."""
    names = target.schema.names()
    if target.connector == "collect":
        table = df.toArrow()
        table = table.rename_columns(names).cast(target.schema.to_arrow())
        result.sink_rows[target.table] = table.num_rows
        yield from table.to_batches()
        return
    options = dict(target.options)
    if target.connector == "filesystem" and (PARTITION_KEYS_OPTION in options or any(
            k.startswith(("sink.rolling-policy.", "sink.partition-commit.")) for k in options)):
        # PARTITIONED BY: our writer makes Flink's k=v directories (default partition name,
        # escaping, OVERWRITE per partition) from the collected rows; so it writes a table
        # with a rolling policy or a partition commit policy (Spark's writer has neither).
        table = df.toArrow().rename_columns(names).cast(target.schema.to_arrow())
        _write(target.table, "filesystem", options, table)
        result.sink_rows[target.table] = table.num_rows
        return
    if target.connector == "filesystem":
        fmt = options["format"]
        writer = df.toDF(*names).write.mode(
            "overwrite" if options.get("$overwrite") == "true" else "append")
        # Flink's SQL timestamp text, which our readers (and Flink's) expect back.
        writer = writer.option("timestampNTZFormat", "yyyy-MM-dd HH:mm:ss.SSS")
        if fmt == "csv":
            writer = writer.option("header", "false").option(
                "sep", options.get("csv.field-delimiter", ","))
        writer.format(fmt).save(spark_path(options["path"]))
        result.sink_rows[target.table] = -1
        return
    table = df.toArrow().rename_columns(names).cast(target.schema.to_arrow())
    result.sink_rows[target.table] = table.num_rows
    if target.connector == "blackhole":
        return
    # Any other connector (print, jdbc, nats, ...): its own sink, as on the native runtime
    # (the rows had been counted and dropped: a jdbc table stayed empty without a word).
    _write(target.table, target.connector, options, table)


def _write(table_name: str, connector: str, options: dict[str, str], table: Any) -> None:
    """The collected rows through the connector's own sink (as the native runtime writes
    them); its files are published only once every row is written."""
    from sqlengine.runtime.operators.sink import ConnectorSink

    sink_op = ConnectorSink.open(table_name, connector, options, table.schema)
    try:
        for b in table.to_batches():
            sink_op.process_batch(b)
        sink_op.end_input()
    finally:
        sink_op.close()
