"""JobGraph -> PySpark DataFrames (batch mode): Spark's own operators for scans, filters,
projections, aggregations, joins, windows, ranks, sorts and unions; our Arrow operators inside
mapInArrow only for expressions Spark would evaluate differently.

Columns are named c0, c1, ... by position between operators (joins and views may repeat a
name); the final result gets the query's column names back.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

import pyarrow as pa

from sqlengine import connectors
from sqlengine.errors import DataValueError, ExecutionError, NotSupportedError, SqlEngineError
from sqlengine.optimizer.jobgraph import JobEdge, JobGraph, JobVertex
from sqlengine.optimizer.specs import (
    ExpandSpec,
    FilterSpec,
    GlobalAggregateSpec,
    GroupAggregateSpec,
    JoinSpec,
    LimitSpec,
    LocalAggregateSpec,
    OperatorSpec,
    OrderedConcatSpec,
    ProjectSpec,
    RangeAssignSpec,
    RangeBoundariesSpec,
    RangeSampleSpec,
    ReplicateRowsSpec,
    SortSpec,
    TableScanSpec,
    TableSinkSpec,
    UnionSpec,
    ValuesSpec,
    WindowFunctionsSpec,
)
from sqlengine.optimizer.specs_iteration import IterateSpec, IterationSourceSpec
from sqlengine.optimizer.specs_windows import (
    IntervalJoinSpec,
    OverAggregateSpec,
    SessionAggregateSpec,
    SessionAssignSpec,
    TemporalJoinSpec,
    TopNSpec,
    WindowAggregateSpec,
    WindowAssignSpec,
    WindowJoinSpec,
    WindowTopNSpec,
)
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.runtime.native.executor import JobResult
from sqlengine.runtime.spark import arrow_ops, iteration
from sqlengine.runtime.spark.aggregates import agg_column, agg_inputs
from sqlengine.runtime.spark.arrow_ops import declared_units, retime
from sqlengine.runtime.spark.expressions import ddl, spark_type, to_sql
from sqlengine.runtime.spark.joins import Joining, join_frames
from sqlengine.runtime.spark.session import spark_session
from sqlengine.runtime.spark.sink import sink_target, write_frame
from sqlengine.runtime.values import values_columns

Aggregating: TypeAlias = (GroupAggregateSpec | GlobalAggregateSpec | WindowAggregateSpec
                          | SessionAggregateSpec)


# On Structured Streaming, rows that may be late carry the watermark before them in this
# column, from their source through filters and projections (runtime/spark/streaming.py).
WM = "$wm"
# ... and their position in their source (the order in which the native runtime reads them,
# which its session windows judge lateness in: runtime/spark/stateful.py session_aggregate).
SEQ = "$seq"
# Columns that ride along beside c0.. through scans' projections and projections: WM, SEQ and
# the row kinds of a changelog (runtime/spark/stateful.py).
_META = (WM, SEQ, "$row_kind")


def _names(n: int, start: int = 0) -> list[str]:
    return [f"c{i}" for i in range(start, start + n)]


class SparkJob:
    """Runs one JobGraph on Spark; ``run()`` yields the collected result as Arrow batches."""

    def __init__(self, graph: JobGraph, options: dict[str, str],
                 tables: dict[str, object]) -> None:
        self.graph = graph
        self.options = options
        self.tables = tables
        self.result = JobResult()
        self.spark = spark_session(options)
        self.time_type = "timestamp_ntz"  # window columns (event time in streaming mode)
        self.streaming = False
        self._frames: dict[str, Any] = {}
        self.vertex_id = ""  # (the vertex whose chain is being translated)

    # -- graph ------------------------------------------------------------------------------
    def frame(self, vertex_id: str) -> Any:
        if vertex_id not in self._frames:
            v = self.graph.vertex(vertex_id)
            inputs = [self._ship(self.frame(e.source), e) for e in self.graph.in_edges(v.id)]
            self.vertex_id = v.id
            self._frames[vertex_id] = self._chain(v, inputs)
        return self._frames[vertex_id]

    def paths_to_output(self, vertex_id: str) -> int:
        """How many times the vertex's rows are read on their way to the query's outputs
        (a vertex read by two consumers, a self-join's GROUP BY, is in Spark's plan twice)."""
        out = self.graph.out_edges(vertex_id)
        return sum(self.paths_to_output(e.target) for e in out) if out else 1

    def _ship(self, df: Any, edge: JobEdge) -> Any:
        # Every HASH / GLOBAL edge of ours ends at an operator (aggregate, join, rank, sort)
        # whose Spark counterpart plans the matching Exchange itself (hashpartitioning on the
        # same keys, a single partition, a range partitioning for ORDER BY); an explicit
        # repartition here would only add a second shuffle. EXPLAIN shows Spark's exchanges.
        # A BROADCAST edge (the optimizer's broadcast join) becomes Spark's broadcast hint.
        from sqlengine.optimizer.physical import Partitioning

        if edge.partitioning is Partitioning.BROADCAST and not self.streaming:
            from pyspark.sql import functions as F

            return F.broadcast(df)
        return df

    def _chain(self, v: JobVertex, inputs: list[Any]) -> Any:
        df = inputs[0] if inputs else None
        chain = list(v.chain)
        for i, op in enumerate(chain):
            if i and arrow_ops.is_lateral_table(chain[i - 1], op):
                continue  # (ran with the projection before it)
            try:
                if arrow_ops.is_lateral_table(op, chain[i + 1] if i + 1 < len(chain) else None):
                    df = arrow_ops.lateral_table(self, op, chain[i + 1], df)  # type: ignore[arg-type]
                    continue
                df = self._operator(op, df, inputs if i == 0 else [df])
            except SqlEngineError:
                raise
            except Exception as e:
                first = next((ln for ln in str(e).splitlines() if ln.strip()), "")
                msg = f"{op.label()} on Spark: {first or type(e).__name__ + ': ' + repr(e)}"
                raise ExecutionError(msg) from None
        return df

    def _operator(self, op: OperatorSpec, df: Any, inputs: list[Any]) -> Any:
        """The DataFrame of ``op`` over its input ``df`` (``inputs``: every input's)."""
        match op:
            case TableScanSpec():
                return self._op_source(op)
            case ValuesSpec():
                return self._op_values(op)
            case FilterSpec():
                return self._filter(df, op.predicate)
            case ProjectSpec():
                return self._op_project(op, df)
            case GroupAggregateSpec() | GlobalAggregateSpec():
                # (a global phase runs over the untouched input rows: one Spark aggregation)
                return self._op_group_aggregate(op, df)
            case WindowAggregateSpec():
                return self._op_window_aggregate(op, df)
            case SessionAggregateSpec():
                return self._op_session_aggregate(op, df)
            case LocalAggregateSpec():
                return df  # Spark's HashAggregate pre-aggregates each partition itself
            # A range-partitioned sort is one orderBy on Spark (which samples ranges itself).
            case RangeSampleSpec() | RangeBoundariesSpec() | OrderedConcatSpec():
                return df
            case RangeAssignSpec():
                return inputs[0]
            case WindowAssignSpec():
                return self._op_window_assign(op, df)
            case JoinSpec() | WindowJoinSpec():
                return self._join(op, inputs[0], inputs[1])
            case IntervalJoinSpec():
                return self._op_interval_join(op, inputs)
            case UnionSpec():
                return self._op_union(inputs)
            case SortSpec():
                df = df.orderBy(*self._sort_cols(op.keys))
                return self._limit(df, op.fetch, op.offset)
            case LimitSpec():
                return self._limit(df, op.fetch, op.offset)
            case TopNSpec() | WindowTopNSpec():
                return self._op_top_n(op, df)
            case OverAggregateSpec():
                return self._op_over_aggregate(op, df)
            case TableSinkSpec():
                return df
            case ExpandSpec():
                return arrow_ops.expand(self, op, df)
            case ReplicateRowsSpec():
                return arrow_ops.replicate(self, op, df)
            case WindowFunctionsSpec():
                return arrow_ops.window_functions(self, op, df)
            case TemporalJoinSpec():
                return arrow_ops.temporal_join(self, op, inputs)
            case SessionAssignSpec():
                return arrow_ops.session_assign(self, op, df)
            case IterateSpec():  # (WITH RECURSIVE: a loop of rounds, batch mode)
                return iteration.iterate(self, op, df)
            case IterationSourceSpec():  # (in a step: the round's working rows)
                return iteration.working_frame(self, op)
            case _:
                msg = f"operator {op.label()} has no Spark translation yet"
                raise NotSupportedError(msg)

    # -- helpers ----------------------------------------------------------------------------
    def _expr(self, e: Expr) -> Any:
        from pyspark.sql import functions as F

        sql = to_sql(e)
        return None if sql is None else F.expr(sql)

    def _arrow_map(self, df: Any, operator: Any, schema: pa.Schema,
                   units: dict[int, str] | None = None) -> Any:
        """Run one of our Arrow operators over every partition (exact Flink semantics);
        ``units``: the declared unit of each timestamp column of its input."""
        from sqlengine.runtime.elements import data_part

        shipped = arrow_ops.ship(operator)  # (the Python functions it calls)

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            arrow_ops.install(shipped)
            for batch in batches:
                batch = retime(batch, "ms", units)
                for out in operator.process_batch(batch):
                    out = data_part(out)
                    yield retime(pa.RecordBatch.from_arrays(
                        out.columns, names=_names(len(schema))), "us")

        return df.mapInArrow(run, ddl(schema))

    def _from_arrow(self, table: pa.Table) -> Any:
        renamed = table.rename_columns(_names(table.num_columns))
        if renamed.num_rows == 0:
            return self.spark.createDataFrame([], ddl(table.schema))
        return self.spark.createDataFrame(renamed, ddl(table.schema))

    # -- operators --------------------------------------------------------------------------
    def _op_source(self, op: TableScanSpec) -> Any:
        source = op.source
        if source.changelog:
            msg = (f"table {source.table!r} reads a changelog ({source.option('format')}): "
                   "changelog sources have no Spark translation yet")
            raise NotSupportedError(msg)
        schema = op.table_schema.to_arrow()
        df = connectors.get(source.connector).spark_read(
            self.spark, source, ddl(_placeheld(op, schema), schema.names))
        if df is not None:
            df = df.toDF(*_names(len(schema)))
        else:
            # csv/json (Flink's formats, file:line errors), memory, datagen, nexmark: read by
            # our own connectors and handed to Spark as Arrow.
            df = self._from_arrow(_untranslated_unread(op, self._read_native(source, schema)))
        return self._scan_tail(op, df)

    def _read_native(self, source: N.SourceSpec, schema: pa.Schema) -> pa.Table:
        """A bounded source read by our own connector (Flink's formats and errors)."""
        from sqlengine.runtime.operators.source import SourceOperator

        reader = SourceOperator(source, schema, None, (), self.tables.get(source.table.lower()),
                                event_time=False)
        batches = [b for b in reader.batches() if b is not None]
        self.result.skipped_rows += reader.stats.skipped
        return pa.Table.from_batches(batches, schema)

    def _scan_tail(self, op: TableScanSpec, df: Any) -> Any:
        """The filters and the projection pushed into a scan."""
        for f in op.filters:
            df = self._filter(df, f)
        if op.projection is not None:
            wm = [c for c in _META if c in df.columns]
            df = df.select(*[df.columns[i] for i in op.projection], *wm).toDF(
                *_names(len(op.projection)), *wm)
        return df

    @staticmethod
    def _values_table(op: ValuesSpec) -> pa.Table:
        """VALUES rows as Arrow (a SELECT without FROM: one placeholder column per row)."""
        schema = op.schema.to_arrow()
        if not len(schema):
            return pa.table({"c0": pa.array(range(len(op.rows)), pa.int64())})
        return pa.table(values_columns(op.rows, schema), schema=schema)

    def _op_values(self, op: ValuesSpec) -> Any:
        df = self._from_arrow(self._values_table(op))
        # A SELECT without FROM: rows without columns (Spark keeps their count), so that
        # joins number the other side's columns from c0, as the plan does.
        return df.select() if not len(op.schema) else df

    def _filter(self, df: Any, predicate: Expr) -> Any:
        from pyspark.sql import functions as F

        cond = self._expr(predicate)
        if cond is not None:
            return df.where(cond)
        # (our kernels compute the predicate as one more column; NULL drops the row too)
        with_mask, names = self._arrow_columns(df, [predicate])
        return with_mask.where(F.col(names[0])).drop(names[0])

    def _op_project(self, op: ProjectSpec, df: Any) -> Any:
        from pyspark.sql import functions as F

        cols = [self._expr(e) for e in op.exprs]
        out = op.schema.to_arrow()
        missing = [i for i, c in enumerate(cols) if c is None]
        if missing:
            df, names = self._arrow_columns(df, [op.exprs[i] for i in missing],
                                            [out.field(i).type for i in missing])
            for i, name in zip(missing, names):
                cols[i] = F.col(name)
        meta = [c for c in _META if c in df.columns]
        return df.select(*[c.alias(f"c{i}") for i, c in enumerate(cols)], *meta)

    def _prepare(self, df: Any, exprs: list[Expr]) -> tuple[Any, list[str]]:
        """Columns p0, p1, ... holding ``exprs`` (by Spark, or by our kernels if needed)."""
        from pyspark.sql import functions as F

        cols = [self._expr(e) for e in exprs]
        names = [f"p{i}" for i in range(len(exprs))]
        missing = [i for i, c in enumerate(cols) if c is None]
        given = list(df.columns)
        if missing:
            df, made = self._arrow_columns(df, [exprs[i] for i in missing])
            for i, name in zip(missing, made):
                cols[i] = F.col(name)
        return df.select(*given, *[c.alias(n) for c, n in zip(cols, names)]), names

    def _arrow_columns(self, df: Any, exprs: list[Expr], types: list[pa.DataType] | None = None
                       ) -> tuple[Any, list[str]]:
        """``df`` with one more column per expression, computed by our kernels in mapInArrow
        (exact Flink semantics; the Python functions they call shipped with the plan). Every
        column of ``df`` passes through untouched (whatever its type: a streaming window's
        struct, an event time with its watermark)."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructType, _parse_datatype_string

        from sqlengine.runtime.operators.stateless import ProjectOperator

        if not df.columns:
            # (rows without columns reach mapInArrow as no rows: one placeholder column
            # keeps them, as elements.rows_only does natively; a SELECT without FROM lost
            # its row)
            df = df.select(F.lit(None).cast("tinyint").alias("$rows"))
        types = types or [e.dtype for e in exprs]
        names = [f"$x{len(df.columns) + i}" for i in range(len(exprs))]
        made = pa.schema([pa.field(f"c{i}", t) for i, t in enumerate(types)])
        added = _parse_datatype_string(ddl(made, names))
        schema = StructType([*df.schema.fields, *added.fields])
        operator = ProjectOperator(tuple(exprs), made)
        shipped = arrow_ops.ship(exprs)
        units = declared_units(exprs)

        def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            arrow_ops.install(shipped)
            for batch in batches:
                # Spark hands timestamps over in microseconds (an event time: with its time
                # zone) and takes computed ones back so; our kernels take each column in its
                # declared unit (a TIMESTAMP(3)'s milliseconds, a TIMESTAMP(6)'s micros);
                # the columns they do not read stay as they are.
                (out,) = operator.process_batch(retime(batch, "us", units))
                computed = retime(pa.RecordBatch.from_arrays(
                    out.columns[:len(names)], names=names), "us")
                yield pa.RecordBatch.from_arrays([*batch.columns, *computed.columns],
                                                 names=[*batch.schema.names, *names])

        return df.mapInArrow(run, schema), names

    def _aggregate(self, op: Aggregating, df: Any, window: Any = None) -> Any:
        grouped, names = self._aggregate_all(op, df, window)
        signs = [c for c in grouped.columns if c.startswith("$neg")]
        if not signs:
            return grouped, names
        from pyspark.sql import functions as F

        for sign in signs:  # (each -0.0 group's key back to -0.0: Spark made it 0.0)
            key = names[int(sign[4:])]
            grouped = grouped.withColumn(key, F.when(F.col(sign), F.lit(-0.0).cast(
                grouped.schema[key].dataType)).otherwise(F.col(key)))
        return grouped.drop(*signs), names

    def _aggregate_all(self, op: Aggregating, df: Any, window: Any = None) -> Any:
        from pyspark.sql import functions as F

        keys, aggs = op.keys, op.aggs
        exprs, slots = agg_inputs(aggs, list(keys))
        df, names = self._prepare(df, exprs)
        out_types = [f.type for f in op.schema.to_arrow()]
        group = [names[i] for i in range(len(keys))]
        # -0.0 and 0.0 are two keys, as Flink groups them (Spark normalizes -0.0 to 0.0): a
        # floating key is grouped with whether it is -0.0 beside it
        for i, k in enumerate(keys):
            if pa.types.is_floating(k.dtype) and (window is None or i not in window[0]):
                df = df.withColumn(f"$neg{i}", F.coalesce(
                    (F.col(names[i]) == 0) & F.col(names[i]).cast("string").startswith("-"),
                    F.lit(False)))
                group.append(f"$neg{i}")
        if window is not None:
            group = [g for i, g in enumerate(group) if i not in window[0]] + [window[1]]
        measures = [agg_column(a, names[s] if s is not None else None,
                               names[f] if f is not None else None,
                               out_types[len(keys) + j], streaming=self.streaming
                               ).alias(f"m{j}")
                    for j, (a, (s, f)) in enumerate(zip(aggs, slots))]
        if not measures and not self.streaming:  # SELECT DISTINCT / GROUP BY, no aggregates
            grouped = df.select(*group).distinct()
        elif not measures:  # a streaming distinct must be an aggregation for complete mode
            grouped = df.groupBy(*group).count().drop("count")
        elif not self.streaming and any(a.func.startswith("py:") for a in aggs) and \
                not all(a.func.startswith("py:") for a in aggs):
            # (on a stream a Python aggregate collects its rows, a built-in aggregate:
            # aggregates.python_rows)
            # Spark runs a grouped-aggregate pandas UDF (a Python aggregate) in an aggregation
            # of its own: the built-in and the Python aggregates apart, joined on the groups.
            python = [m for a, m in zip(aggs, measures) if a.func.startswith("py:")]
            others = [m for a, m in zip(aggs, measures) if not a.func.startswith("py:")]
            if not group:
                grouped = df.agg(*others).crossJoin(df.agg(*python))
            else:
                keys = [f"$g{i}" for i in range(len(group))]
                left = df.groupBy(*group).agg(*others)
                right = df.groupBy(*group).agg(*python)
                right = right.select(*[right[c].alias(k) if i < len(keys) else right[c]
                                       for i, (c, k) in enumerate(zip(right.columns,
                                                                      keys + right.columns))])
                on = [left[c].eqNullSafe(right[k]) for c, k in zip(left.columns, keys)]
                grouped = left.join(right, on, "inner").drop(*keys)
        elif not group and self.streaming:
            # (Flink's streaming GROUP BY emits a row only once one arrives; Spark's global
            # aggregation of a stream emits (0, NULL, ...) before: its row count filters it)
            from pyspark.sql import functions as F

            grouped = df.agg(*measures, F.count(F.lit(1)).alias("$rows")) \
                .where(F.col("$rows") > 0).drop("$rows")
        else:
            grouped = df.groupBy(*group).agg(*measures) if group else df.agg(*measures)
        return grouped, names

    def _op_group_aggregate(self, op: Aggregating, df: Any) -> Any:
        from pyspark.sql import functions as F

        grouped, names = self._aggregate(op, df)
        n_keys = len(op.keys)
        cols = [F.col(names[i]).alias(f"c{i}") for i in range(n_keys)]
        cols += [F.col(f"m{j}").alias(f"c{n_keys + j}") for j in range(len(op.aggs))]
        return grouped.select(*cols)

    def _op_window_aggregate(self, op: WindowAggregateSpec, df: Any) -> Any:
        return self._op_group_aggregate(op, df)

    def _op_session_aggregate(self, op: SessionAggregateSpec, df: Any) -> Any:
        from pyspark.sql import functions as F

        start, end = op.start_pos, op.end_pos
        window = {start, end} | ({op.time_pos} if op.time_pos >= 0 else set())
        if self.streaming and len(op.keys) == len(window):
            # (Spark's own error: "Global aggregation with session window in streaming query
            # is not supported")
            msg = ("a SESSION window without PARTITION BY (or another GROUP BY key) cannot "
                   "run on Spark Structured Streaming, which refuses a global session window; "
                   "run it natively or in batch mode")
            raise NotSupportedError(msg)
        # window_start holds each row's time (the assigner's placeholder).
        session = F.session_window(F.col(f"p{start}"), f"{op.gap} milliseconds")
        grouped, names = self._aggregate(op, df, (window, session.alias("s")))
        cols = []
        for i in range(len(op.keys)):
            if i == start:
                cols.append(F.col("s.start").cast(self.time_type).alias(f"c{i}"))
            elif i == end:
                cols.append(F.col("s.end").cast(self.time_type).alias(f"c{i}"))
            elif i == op.time_pos:  # (window_time: the session's end - 1 ms)
                cols.append((F.col("s.end") - F.expr("INTERVAL 1 MILLISECOND"))
                            .cast(self.time_type).alias(f"c{i}"))
            else:
                cols.append(F.col(names[i]).alias(f"c{i}"))
        n_keys = len(op.keys)
        cols += [F.col(f"m{j}").alias(f"c{n_keys + j}") for j in range(len(op.aggs))]
        return grouped.select(*cols)

    def _op_window_assign(self, op: WindowAssignSpec, df: Any) -> Any:
        from pyspark.sql import functions as F

        kind, ts = op.window_kind, F.col(f"c{op.time_index}")
        width = len(df.columns)
        ms = "milliseconds"
        if kind == "session":
            gap = F.make_dt_interval(F.lit(0), F.lit(0), F.lit(0), F.lit(op.size / 1000))
            cols = [ts, ts + gap, ts + gap - F.expr("INTERVAL 1 MILLISECOND")]
            # (the meta columns stay last: rows judged late by their watermark, in order)
            meta = [c for c in _META if c in df.columns]
            data = [c for c in df.columns if c not in meta]
            return df.select(*data, *[c.alias(n) for c, n in
                                      zip(cols, _names(3, len(data)))], *meta)
        if kind == "cumulate":
            return self._cumulate(op, df)
        slide = op.slide if kind == "hop" else op.size
        w = F.window(ts, f"{op.size} {ms}", f"{slide} {ms}", f"{op.offset} {ms}")
        framed = df.select("*", w.alias("w"))
        t = self.time_type
        return framed.select(*df.columns, F.col("w.start").cast(t).alias(
            f"c{width}"), F.col("w.end").cast(t).alias(f"c{width + 1}"),
            (F.col("w.end").cast(t) - F.expr("INTERVAL 1 MILLISECOND"))
            .alias(f"c{width + 2}"))

    def _cumulate(self, op: WindowAssignSpec, df: Any) -> Any:
        """CUMULATE (Spark has no such window): each row goes to every window of its
        max-size bucket that ends after it: start = the bucket's start (``size`` aligned at
        ``offset``), ends = start + k * step up to start + size, as Flink assigns them."""
        from pyspark.sql import functions as F

        size, step, offset = op.size, op.slide, op.offset
        t = F.unix_millis(F.col(f"c{op.time_index}").cast("timestamp"))
        start = t - F.pmod(t - F.lit(offset), F.lit(size))
        first_end = start + (F.floor((t - start) / F.lit(step)).cast("bigint") + 1) * step
        ends = F.sequence(first_end, start + F.lit(size), F.lit(step).cast("bigint"))
        width = len(df.columns)
        framed = df.select("*", start.alias("$cs"), F.explode(ends).alias("$ce"))
        tt = self.time_type

        def ts(ms: Any) -> Any:
            return F.timestamp_millis(ms).cast(tt)

        return framed.select(*df.columns, ts(F.col("$cs")).alias(f"c{width}"),
                             ts(F.col("$ce")).alias(f"c{width + 1}"),
                             ts(F.col("$ce") - 1).alias(f"c{width + 2}"))

    def _join(self, op: Joining, left: Any, right: Any,
              extra: list[Any] | None = None) -> Any:
        return join_frames(self, op, left, right, extra)

    def _op_interval_join(self, op: IntervalJoinSpec, inputs: list[Any]) -> Any:
        from pyspark.sql import functions as F

        n_left = len(inputs[0].columns)
        diff = F.unix_millis(F.col(f"c{op.left_time}").cast("timestamp")) - F.unix_millis(
            F.col(f"c{n_left + op.right_time}").cast("timestamp"))
        return self._join(op, inputs[0], inputs[1], [diff.between(op.lower, op.upper)])

    def _op_union(self, inputs: list[Any]) -> Any:
        from functools import reduce

        return reduce(lambda a, b: a.unionByName(b), inputs)

    def _sort_cols(self, keys: tuple[N.SortKey, ...]) -> list[Any]:
        cols = []
        for k in keys:
            c = self._expr(k.expr)
            if c is None:
                msg = f"ORDER BY {k.expr.sql()} is not supported on Spark yet"
                raise NotSupportedError(msg)
            if k.ascending:
                cols.append(c.asc_nulls_first() if k.nulls_first else c.asc_nulls_last())
            else:
                cols.append(c.desc_nulls_first() if k.nulls_first else c.desc_nulls_last())
        return cols

    @staticmethod
    def _limit(df: Any, fetch: int | None, offset: int) -> Any:
        if offset:
            df = df.offset(offset)
        if fetch is not None:
            df = df.limit(fetch)
        return df

    def _op_top_n(self, op: TopNSpec | WindowTopNSpec, df: Any) -> Any:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        parts = [self._expr(e) for e in op.partition]
        if any(c is None for c in parts):
            msg = "a PARTITION BY expression Spark evaluates differently is not supported yet"
            raise NotSupportedError(msg)
        width = len(df.columns)
        spec = Window.partitionBy(*parts).orderBy(*self._sort_cols(op.order))
        ranked = df.select("*", F.row_number().over(spec).cast("bigint").alias(f"c{width}"))
        if op.limit is not None:
            ranked = ranked.where(F.col(f"c{width}") <= op.limit)
        return ranked

    def _op_over_aggregate(self, op: OverAggregateSpec, df: Any) -> Any:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        parts = [self._expr(e) for e in op.partition]
        order = F.unix_millis(F.col(f"c{op.time_index}").cast("timestamp"))
        spec = Window.partitionBy(*parts).orderBy(order)
        lo = Window.unboundedPreceding if op.preceding is None else -op.preceding
        spec = spec.rangeBetween(lo, 0) if op.frame == "range" else spec.rowsBetween(lo, 0)
        width = len(df.columns)
        exprs, slots = agg_inputs(op.aggs, [])
        prepared, names = self._prepare(df, exprs)
        out = op.schema.to_arrow()
        cols = [F.col(c) for c in df.columns]
        for j, (a, (s, f)) in enumerate(zip(op.aggs, slots)):
            agg = agg_column(a, names[s] if s is not None else None,
                             names[f] if f is not None else None, out.field(width + j).type,
                             over=spec)
            cols.append(agg.alias(f"c{width + j}"))
        return prepared.select(*cols)

    # -- running ----------------------------------------------------------------------------
    def final_frame(self) -> tuple[Any, OperatorSpec]:
        last = self.graph.vertices[-1]
        return self.frame(last.id), last.tail

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # A subclass's own run() (Structured Streaming's) reports Spark's failures so too.
        super().__init_subclass__(**kwargs)
        if "run" in cls.__dict__:
            cls.run = _reporting(cls.__dict__["run"])  # type: ignore[method-assign]

    def run(self) -> Iterator[pa.RecordBatch]:
        df, sink = self.final_frame()
        yield from write_frame(df, sink_target(sink), self.result)

    def explain(self) -> str:
        self.explaining = True  # (an iteration's loop is not run: runtime/spark/iteration.py)
        try:
            df, _ = self.final_frame()
        finally:
            self.explaining = False
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            df.explain(mode="formatted")
        notes = "".join(f"{note}\n" for note in getattr(self, "explain_notes", []))
        return notes + buf.getvalue().rstrip()


def _reporting(run: Callable[[SparkJob], Iterator[pa.RecordBatch]]
               ) -> Callable[[SparkJob], Iterator[pa.RecordBatch]]:
    """``run`` with a failure while Spark ran the job as an ExecutionError (its text:
    spark_error_text), never a raw Py4J trace."""

    @functools.wraps(run)
    def reporting(job: SparkJob) -> Iterator[pa.RecordBatch]:
        try:
            yield from run(job)
        except SqlEngineError:
            raise
        except Exception as e:  # a failure while Spark ran the job
            raise spark_failure("on Spark: ", e) from None

    return reporting


SparkJob.run = _reporting(SparkJob.run)  # type: ignore[method-assign]

# Our own error raised in a Spark Python worker (a kernel's, a Python function's), as the
# worker's traceback ends: its message and the indented lines after it (the user's frames).
_OUR_ERROR = re.compile(r"^sqlengine\.errors\.\w+: (.*(?:\n  .*)*)", re.MULTILINE)


_CAUSE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?\w*(?:Error|Exception): (.+)$", re.MULTILINE)


def _unread_untranslated(op: TableScanSpec, schema: pa.Schema) -> list[int]:
    """The columns of a type Spark has no translation of (TIME) that the query does not
    read (neither its projection nor its filters)."""
    from sqlengine.errors import NotSupportedError

    if op.projection is None:
        return []
    used = set(op.projection) | {e.index for f in op.filters for e in f.walk()
                                 if isinstance(e, ColumnRef)}
    out = []
    for i, f in enumerate(schema):
        if i not in used:
            try:
                spark_type(f.type)
            except NotSupportedError:
                out.append(i)
    return out


def _placeheld(op: TableScanSpec, schema: pa.Schema) -> pa.Schema:
    """``schema`` with the columns of _unread_untranslated as INTs: a query not reading a
    table's TIME column runs on Spark."""
    for i in _unread_untranslated(op, schema):
        schema = schema.set(i, pa.field(schema.field(i).name, pa.int32()))
    return schema


def _untranslated_unread(op: TableScanSpec, table: pa.Table) -> pa.Table:
    """``table`` with the columns of _unread_untranslated NULL INTs."""
    for i in _unread_untranslated(op, table.schema):
        table = table.set_column(i, table.schema.field(i).name,
                                 pa.nulls(table.num_rows, pa.int32()))
    return table


def spark_failure(prefix: str, e: BaseException) -> ExecutionError:
    """Spark's failure ``e`` as our error (its text: spark_error_text, after ``prefix``); a
    value's failure (division by zero, a CAST) is PEP 249's DataError, as natively (it was
    an ExecutionError)."""
    text = spark_error_text(e)
    cls = DataValueError if _DATA_ERROR.match(text) else ExecutionError
    return cls(prefix + text)


def spark_error_text(e: BaseException) -> str:
    """The first line of a Spark error, without the class and state of an error the query
    raised itself (raise_error: a scalar subquery's second row); an error of ours that a
    Spark Python worker raised (a Python function's failure), as we raise it natively."""
    ours = _OUR_ERROR.search(str(e))
    if ours:
        return ours.group(1).rstrip()
    text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    if text.startswith("[STREAM_FAILED]"):
        # (a streaming query's failure: its cause is the last exception of the Python
        # traceback it carries, not the first line, Spark's FOREACH_BATCH_USER_FUNCTION_ERROR)
        causes = _CAUSE.findall(str(e))
        if causes:
            text = causes[-1].split(" SQLSTATE: ")[0].strip()
    if text.startswith("[USER_RAISED_EXCEPTION] "):
        text = text.removeprefix("[USER_RAISED_EXCEPTION] ").split(" SQLSTATE: ")[0]
    # (Spark's advice names its own functions and options, which Flink SQL has not: "Use
    # `try_divide` to tolerate divisor being 0", 'set "spark.sql.ansi.enabled" to "false"')
    return re.split(r" Use `try_| If necessary set | SQLSTATE: ", text)[0].strip()



# Spark's errors of a value (what the native runtime raises as a DataValueError).
_DATA_ERROR = re.compile(r"\[(DIVIDE_BY_ZERO|REMAINDER_BY_ZERO|INTERVAL_DIVIDED_BY_ZERO|"
                         r"CAST_INVALID_INPUT|CAST_OVERFLOW|NUMERIC_VALUE_OUT_OF_RANGE|"
                         r"ARITHMETIC_OVERFLOW|DATETIME_OVERFLOW|BINARY_ARITHMETIC_OVERFLOW)|"
                         r"cannot CAST |division by zero")


