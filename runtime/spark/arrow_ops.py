"""Operators that run on Spark as our own Arrow operators (exact Flink semantics): Expand and
ReplicateRows row by row (mapInArrow), window functions and the SESSION TVF on its own per
hash partition of their PARTITION BY keys, temporal joins per key group (cogroup)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine.errors import NotSupportedError
from sqlengine.optimizer.specs import ExpandSpec, ReplicateRowsSpec, WindowFunctionsSpec
from sqlengine.optimizer.specs_windows import SessionAssignSpec, TemporalJoinSpec
from sqlengine.runtime.spark.expressions import ddl

if TYPE_CHECKING:
    from sqlengine.runtime.spark.translate import SparkJob as SparkTranslator


def _retime(batch: pa.RecordBatch, unit: str) -> pa.RecordBatch:
    if not any(pa.types.is_timestamp(f.type) for f in batch.schema):
        return batch
    cols = [c.cast(pa.timestamp(unit)) if pa.types.is_timestamp(c.type) else c
            for c in batch.columns]
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def _out(out: pa.RecordBatch, width: int) -> pa.RecordBatch:
    from sqlengine.runtime.elements import data_part

    data = data_part(out)
    return _retime(pa.RecordBatch.from_arrays(data.columns, names=[f"c{i}" for i in
                                                                   range(width)]), "us")


def expand(t: SparkTranslator, op: ExpandSpec, df: Any) -> Any:
    from sqlengine.runtime.operators.stateless import ExpandOperator

    schema = op.schema.to_arrow()
    return t._arrow_map(df, ExpandOperator(op.projections, schema), schema)


def replicate(t: SparkTranslator, op: ReplicateRowsSpec, df: Any) -> Any:
    from sqlengine.runtime.operators.stateless import ReplicateRowsOperator

    schema = op.schema.to_arrow()
    return t._arrow_map(df, ReplicateRowsOperator(schema), schema)


def window_functions(t: SparkTranslator, op: WindowFunctionsSpec, df: Any) -> Any:
    """Hash-partitioned by the PARTITION BY keys (so each Spark partition holds whole window
    partitions), then our operator over each Spark partition."""
    from sqlengine.runtime.operators.window_functions import WindowFunctionsOperator

    schema = op.schema.to_arrow()
    in_schema = op.input_schema.to_arrow()
    parts = [t._expr(e) for e in op.partition]
    shuffled = df.repartition(*parts) if parts and all(p is not None for p in parts) \
        else df.repartition(1)
    operator = WindowFunctionsOperator(op.partition, op.order, op.calls, schema, in_schema)
    width = len(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            operator.process_batch(_retime(pa.RecordBatch.from_arrays(
                batch.columns, names=in_schema.names), "ms"))
        for out in operator.end_input():
            yield _out(out, width)

    return shuffled.mapInArrow(run, ddl(schema))


def session_assign(t: SparkTranslator, op: SessionAssignSpec, df: Any) -> Any:
    """The SESSION TVF on its own: per hash partition of its keys, our operator (batch mode:
    every session at the end of the partition's rows)."""
    from pyspark.sql import functions as F

    from sqlengine.runtime.operators.session_assign import SessionAssignOperator

    schema = op.schema.to_arrow()
    keys = [F.col(f"c{i}") for i in op.partition]
    shuffled = df.repartition(*keys) if keys else df.repartition(1)
    operator = SessionAssignOperator(op.partition, op.start_pos, op.gap, schema)
    width = len(schema)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            operator.process_batch(_retime(pa.RecordBatch.from_arrays(
                batch.columns, names=schema.names), "ms"))
        for out in operator.end_input():
            yield _out(out, width)

    return shuffled.mapInArrow(run, ddl(schema))


def temporal_join(t: SparkTranslator, op: TemporalJoinSpec, inputs: list[Any]) -> Any:
    """Both sides grouped by their join keys (cogroup): each key's rows and versions meet in
    one call of our operator, which joins at the end of its inputs (batch mode)."""
    from sqlengine.runtime.operators.temporal_join import TemporalJoinOperator

    left, right = inputs
    schema = op.schema.to_arrow()
    lkeys = [t._expr(k) for k in op.left_keys]
    rkeys = [t._expr(k) for k in op.right_keys]
    if any(k is None for k in (*lkeys, *rkeys)):
        msg = "a temporal join key that Spark evaluates differently is not supported on Spark"
        raise NotSupportedError(msg)
    left_schema = pa.schema(list(schema)[:op.left_width])
    right_schema = pa.schema(list(schema)[op.left_width:])
    width = len(schema)

    def run(lt: pa.Table, rt: pa.Table) -> pa.Table:
        operator = TemporalJoinOperator(op.join_kind, op.left_keys, op.right_keys, op.condition,
                                        left_schema, right_schema, schema, op.left_time,
                                        op.right_time)
        for side, table, names in ((1, rt, right_schema.names), (0, lt, left_schema.names)):
            for batch in table.to_batches():
                operator.process_batch(_retime(pa.RecordBatch.from_arrays(
                    batch.columns, names=names), "ms"), side)
        outs = [*operator.end_input(0), *operator.end_input(1)]
        batches = [_out(b, width) for b in outs]
        if not batches:
            return pa.Table.from_batches([], _retime(pa.RecordBatch.from_pylist(
                [], schema=schema), "us").rename_columns([f"c{i}" for i in range(width)])
                .schema)
        return pa.Table.from_batches(batches)

    grouped = left.groupBy(*lkeys).cogroup(right.groupBy(*rkeys))
    return grouped.applyInArrow(run, ddl(schema))
