"""A regular join of changelogs on Structured Streaming, and our stateful operators after the
first of a query.

Spark joins insert-only streams only, and those outer or semi only with watermarks on both and
a time range in the condition; a join of a GROUP BY's or a Top-N's changes (rows carrying
their kind in ``$row_kind``, runtime/spark/stateful.py), and a LEFT, FULL, semi or anti join
of streams, runs here as the native runtime's own JoinOperator (runtime/operators/join.py):
both sides' rows go to buckets of the hash of their join keys, each bucket keeps the
operator's state (both sides' rows with their multiplicities) across micro-batches, and a call
feeds it the bucket's new changes of each side (netted per distinct row by the operator, so
their order within a micro-batch does not matter) and emits the joined changes (a retracted
input row retracts the pairs it made).

Spark allows one ``applyInPandasWithState`` per query ("Multiple applyInPandasWithStates are
not supported"), so the first stateful operator of a query runs as one and every later one
(this join over two GROUP BYs, a GROUP BY over a Top-N's changes) as a
``transformWithStateInPandas``, which Spark lets follow one another; it keeps its state in the
RocksDB state store (the query's 'spark.sql.streaming.stateStore.providerClass' then) and talks
to the JVM through protobuf (the ``spark`` extra installs it).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine.errors import NotSupportedError

if TYPE_CHECKING:
    from sqlengine.optimizer.specs import JoinSpec
    from sqlengine.runtime.spark.streaming import SparkStreamingJob

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
PROVIDER = "spark.sql.streaming.stateStore.providerClass"
_SIDE = "$side"


def apply_stateful(job: SparkStreamingJob, df: Any, update: Any, out_schema: Any) -> Any:
    """``update(key, frames, state)`` (applyInPandasWithState's form, no timeout) over the
    buckets of ``df`` (stateful._bucketed): as Spark's applyInPandasWithState for the
    query's first stateful operator, as a transformWithStateInPandas for each later one."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    from sqlengine.runtime.spark.stateful import _STATE, BUCKET

    job.stateful_ops += 1
    # (Spark allows one applyInPandasWithState in a query's plan: not for an operator whose
    # rows are read twice, which is in the plan twice; a transformWithStateInPandas may be)
    if not job.apply_in_pandas and job.paths_to_output(job.vertex_id) == 1:
        job.apply_in_pandas = True
        return df.groupBy(BUCKET).applyInPandasWithState(update, out_schema, _STATE, "append",
                                                         GroupStateTimeout.NoTimeout)
    grouped = df.groupBy(BUCKET)
    if not hasattr(grouped, "transformWithStateInPandas"):
        msg = ("a second stateful operator of ours in one Spark Structured Streaming query "
               "runs as transformWithStateInPandas, which Spark has from 4.0 on (this is "
               "pyspark " + __import__("pyspark").__version__ + ")")
        raise NotSupportedError(msg)
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        msg = ("a second stateful operator of ours in one Spark Structured Streaming query "
               "runs as transformWithStateInPandas, which needs the 'protobuf' package "
               "(pip install 'sqlengine[spark]')")
        raise NotSupportedError(msg) from None
    job.query_conf[PROVIDER] = ROCKSDB
    # (its frames come with columns whose names are not Avro's renamed _0, _1, ...: they
    # get their names back by position)
    return grouped.transformWithStateInPandas(_processor(update, list(df.columns)),
                                              out_schema, "append", "None")


def _processor(update: Any, names: list[str]) -> Any:
    """A StatefulProcessor running ``update`` with its state in one value state (a blob),
    its frames' columns named ``names``."""
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import BinaryType, StructField, StructType

    class _State:
        """What ``update`` reads of applyInPandasWithState's GroupState."""

        hasTimedOut = False

        def __init__(self, value: Any) -> None:
            self.value = value

        @property
        def exists(self) -> bool:
            return bool(self.value.exists())

        @property
        def get(self) -> tuple[Any, ...]:
            return tuple(self.value.get())

        def update(self, row: tuple[Any, ...]) -> None:
            self.value.update(row)

    class Processor(StatefulProcessor):  # type: ignore[misc]
        def init(self, handle: Any) -> None:
            self.state = _State(handle.getValueState(
                "blob", StructType([StructField("blob", BinaryType())])))

        def handleInputRows(self, key: Any, rows: Any, timerValues: Any
                            ) -> Iterator[Any]:
            def named(frames: Iterator[Any]) -> Iterator[Any]:
                for frame in frames:
                    if len(frame.columns) != len(names):
                        msg = f"columns {list(frame.columns)}, expected {names}"
                        raise RuntimeError(msg)
                    frame.columns = names
                    yield frame

            yield from update(key, named(rows), self.state)

        def close(self) -> None:
            pass

    return Processor()


def changelog_join(job: SparkStreamingJob, op: JoinSpec, left: Any, right: Any) -> Any:
    """``op`` over ``left`` and ``right`` (see the module's note)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import ByteType, StructField, StructType, _parse_datatype_string

    from sqlengine.runtime.elements import INSERT, data_part, has_rowkind, with_meta
    from sqlengine.runtime.native.factory import build_operator
    from sqlengine.runtime.spark import arrow_ops
    from sqlengine.runtime.spark.expressions import ddl
    from sqlengine.runtime.spark.joins import within_spark_digits
    from sqlengine.runtime.spark.stateful import KIND, _batch, _bucketed, _frame

    if op.ttl:
        msg = (f"{op.label()} with 'table.exec.state.ttl' has no Spark Structured Streaming "
               "translation (it runs as our stateful operator, whose state would expire by "
               "our clock in Spark's tasks); use the native runtime")
        raise NotSupportedError(msg)
    for a, b in zip(op.left_keys, op.right_keys):
        if a.dtype != b.dtype:
            msg = (f"{op.label()}: keys {a.sql()} ({a.dtype}) and {b.sql()} ({b.dtype}) of "
                   "different types would hash apart on Spark")
            raise NotSupportedError(msg)
    # (each side's data columns c0.., without its row kind or a judged row's meta columns)
    datas = [[c for c in df.columns if c[:1] == "c" and c[1:].isdigit()]
             for df in (left, right)]
    # (the schemas the native operator takes each side's rows in)
    schemas = build_operator(op, {}).schemas
    widths = [len(data) for data in datas]
    if widths != [len(schema) for schema in schemas]:
        msg = f"{op.label()}: inputs of {widths} columns, expected {list(map(len, schemas))}"
        raise NotSupportedError(msg)
    frames = []
    # (rows are spread by their keys, within Spark's 38 digits: equal keys stay equal; the
    # native operator compares the keys themselves)
    spread = [within_spark_digits(a, b) for a, b in zip(op.left_keys, op.right_keys)]
    for side, df in enumerate((left, right)):
        prepared, names = job._prepare(df, [pair[side] for pair in spread])
        cols = [F.lit(side).cast("byte").alias(_SIDE),
                *[F.col(n).alias(f"$k{i}", metadata={}) for i, n in enumerate(names)]]
        for s in (0, 1):  # (each side's columns, the other side's NULL)
            for i in range(widths[s]):
                name = f"s{s}_{i}"
                if s == side:
                    cols.append(F.col(datas[s][i]).alias(name, metadata={}))
                else:
                    t = (left, right)[s].schema[datas[s][i]].dataType
                    cols.append(F.lit(None).cast(t).alias(name))
        kind = F.col(KIND).cast("byte") if KIND in prepared.columns else \
            F.lit(INSERT).cast("byte")
        frames.append(prepared.select(*cols, kind.alias(KIND)))
    both = frames[0].unionByName(frames[1])
    out = op.schema.to_arrow()
    spark_out = _parse_datatype_string(ddl(out))
    out_schema = StructType([*spark_out.fields, StructField(KIND, ByteType())])
    columns = [f"c{i}" for i in range(len(out))]
    shipped = arrow_ops.ship(op)
    side_columns = [[f"s{s}_{i}" for i in range(widths[s])] for s in (0, 1)]

    def update(bucket: tuple[Any, ...], parts: Iterator[Any], state: Any) -> Iterator[Any]:
        arrow_ops.install(shipped)
        operator = build_operator(op, {})
        if state.exists:
            operator.restore_state(pickle.loads(state.get[0]))
        frames_ = [f for f in parts if len(f)]
        emitted: list[pa.RecordBatch] = []
        if frames_:
            batch = _batch(frames_)
            for s in (0, 1):  # (a side's changes, netted per row by the operator: their
                # order within a micro-batch does not matter)
                rows = batch[batch[_SIDE] == s]
                if not len(rows):
                    continue
                arrays = [pa.Array.from_pandas(rows[c]).cast(f.type, safe=False)
                          for c, f in zip(side_columns[s], schemas[s])]
                data = pa.RecordBatch.from_arrays(arrays, schema=schemas[s])
                kinds = rows[KIND].to_numpy(dtype="int8")
                emitted += operator.process_batch(with_meta(data, rowkind=kinds), s)
        state.update((pickle.dumps(operator.snapshot_state()),))
        for b in emitted:
            if not b.num_rows:
                continue
            kinds = b.column(b.num_columns - 1).to_numpy(zero_copy_only=False) \
                if has_rowkind(b) else None
            frame = _frame(data_part(b), columns)
            frame[KIND] = kinds.astype("int8") if kinds is not None else INSERT
            yield frame

    keyed = _bucketed(both, [f"$k{i}" for i in range(len(op.left_keys))])
    return apply_stateful(job, keyed, update, out_schema)
