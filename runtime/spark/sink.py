"""The batch Spark job's result: collected as Arrow, written by Spark (filesystem), or handed
to our own connector sink (print, jdbc, ...; blackhole drops it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from sqlengine.connectors.base import NOT_NULL_ENFORCER, PARTITION_KEYS_OPTION
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
    fmt = options.get("format", "")
    if target.connector == "filesystem" and (PARTITION_KEYS_OPTION in options or any(
            k.startswith(("sink.rolling-policy.", "sink.partition-commit.", f"{fmt}."))
            for k in options) or fmt not in ("parquet", "orc")):
        # PARTITIONED BY: our writer makes Flink's k=v directories (default partition name,
        # escaping, OVERWRITE per partition) from the collected rows; so it writes a table
        # with a rolling policy or a partition commit policy (Spark's writer has neither),
        # a text format (Spark's csv / json writer kept none of 'csv.null-literal', the
        # quote character or the json timestamp standard: a NULL became '', a file the
        # table could not read back) and any format option (Spark's writer knows none).
        table = _not_null_enforced(df.toDF(*names), target).toArrow().rename_columns(
            names).cast(target.schema.to_arrow())
        _write(target.table, "filesystem", options, table)
        result.sink_rows[target.table] = table.num_rows
        return
    if target.connector == "filesystem":  # (parquet or orc, without options of its own)
        writer = _not_null_enforced(df.toDF(*names), target).write.mode(
            "overwrite" if options.get("$overwrite") == "true" else "append")
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


def target_drops_nulls(target: N.SinkSpec) -> bool:
    """Whether 'table.exec.sink.not-null-enforcer' = 'DROP' reached the sink."""
    return dict(target.options).get(NOT_NULL_ENFORCER) == "DROP"


def _not_null_enforced(df: Any, target: N.SinkSpec) -> Any:
    """``df`` (named as the table's columns) without the rows holding a NULL in a NOT NULL
    column ('table.exec.sink.not-null-enforcer' = 'DROP'), or checked to hold none
    (ERROR: one Spark job, only for a table with such columns); as our own sinks do."""
    from functools import reduce

    from pyspark.sql import functions as F

    from sqlengine.runtime.operators.sink import not_null_error

    not_null = [f.name for f in target.schema.to_arrow() if not f.nullable]
    if not not_null:
        return df
    cols = [F.col(f"`{name}`") for name in not_null]
    if target_drops_nulls(target):
        return df.filter(reduce(lambda a, b: a & b, (c.isNotNull() for c in cols)))
    found = df.select([F.max(c.isNull().cast("int")) for c in cols]).first()
    bad = [name for name, hit in zip(not_null, found or ()) if hit]
    if bad:
        raise not_null_error(bad[0], target.table)
    return df
