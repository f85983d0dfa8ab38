"""Streaming mode on Spark Structured Streaming: bounded sources become file streams (our
copy of the rows as the native runtime reads them; a parquet file none of whose rows can be
behind its watermark is streamed as it is: _plain_parquet),
WATERMARK FOR becomes withWatermark, window aggregates run in append mode, GROUP BY in complete
mode; each run is an availableNow trigger. Unbounded sources are read on the driver by our
connectors into a folder Spark streams, and such a query yields its rows per micro-batch
(runtime/spark/unbounded.py).

Spark does not emit the windows still open when an availableNow run ends (its watermark only
moves with data). To close that gap, a source with a watermark gets one more row after its data,
far in the future: it moves the watermark past every real window (so they are emitted, as a
bounded Flink source's final watermark does) and opens a window of its own that is never emitted.
Spark judges lateness per micro-batch, not per row: a source's rows arrive in one micro-batch,
so Spark itself drops none. The native runtime judges each row against the watermark its
source emitted before it. When a source has rows behind that watermark (more out of order than
its WATERMARK bound), each row carries it (the ``$wm`` column, computed as the native source
computes it, over the same batches) through filters and projections to the window TVF, which
drops and counts late rows as the native one does (``late_records_dropped``); operators that
judge no lateness take them as they are. SESSION windows over such rows run as the native
session aggregate inside our stateful operator (runtime/spark/stateful.py session_aggregate:
each row judged in source order, ``$seq``, against its own watermark; Spark's session_window
would merge a row into a session the native runtime had fired). Those whose judging has no
Spark translation (window joins of TVFs, deduplication by event time) refuse them by name.

Processing-time windows (PROCTIME()): a row's time is Spark's processing time, its micro-
batch's current_timestamp() (native's: when its batch is evaluated); no watermark moves such
windows, so Spark's append mode cannot emit them: the aggregation runs as a GROUP BY of the
keys and the window (Spark's own in complete mode, or our stateful operator in a query of
them), each window's final row, as native emits it when the clock passes its end or the input
ends.

A non-windowed Top-N, a GROUP BY with a join and a GROUP BY over another GROUP BY's changes
(Spark's own aggregations cannot feed one another: its global-watermark check fails such a
query) run as our own stateful operators (runtime/spark/stateful.py, applyInPandasWithState
in append mode): their rows are a changelog the driver applies; Spark allows one such
operator per query, so a chain of GROUP BYs (each over the changes of the one before,
through filters and projections, retractions included) runs in one.

Python aggregate functions (Spark refuses grouped-aggregate pandas UDFs in a streaming
aggregation): in a window aggregation each window's argument rows are collected (collect_list,
a built-in aggregate) and the function runs on them when Spark emits the window
(_python_values); a GROUP BY of one runs as our stateful operator, which keeps each key's
accumulator. OVER has no streaming translation.

Two kinds of operators run after the streaming query, on the static DataFrames it hands over:
- a window Top-N over a window aggregate runs on each micro-batch (``foreachBatch``): append
  mode emits every row of a window in the micro-batch in which the watermark passes its end, so
  ranking within one micro-batch ranks the whole window;
- ORDER BY / LIMIT over an append-mode stream (Spark sorts streams only in complete mode) runs
  once over the whole output when the (bounded) run ends, which is what a bounded Flink job's
  final result holds.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sqlengine.errors import NotSupportedError
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.optimizer.specs import (
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
    SortSpec,
    TableScanSpec,
    TableSinkSpec,
    UnionSpec,
    UnnestSpec,
    ValuesSpec,
)
from sqlengine.optimizer.specs_iteration import IterateSpec
from sqlengine.optimizer.specs_windows import (
    SessionAggregateSpec,
    TopNSpec,
    WindowAggregateSpec,
    WindowAssignSpec,
    WindowJoinSpec,
    WindowTopNSpec,
)
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import Call, ColumnRef, Literal
from sqlengine.runtime.elements import ROWKIND, millis, row_watermarks
from sqlengine.runtime.spark.expressions import ddl
from sqlengine.runtime.spark.sink import sink_target
from sqlengine.runtime.spark.translate import SEQ, WM, SparkJob, _names

KIND = ROWKIND  # (the row kinds of our stateful operators' changes: runtime/spark/stateful.py)

# Operators the streaming translation knows; anything else is refused at plan time.
STREAMING_OPERATORS: tuple[type[OperatorSpec], ...] = (
    TableScanSpec, ValuesSpec, FilterSpec, ProjectSpec, WindowAssignSpec, WindowAggregateSpec,
    SessionAggregateSpec, GroupAggregateSpec, UnionSpec, JoinSpec, WindowJoinSpec, SortSpec,
    LimitSpec,
    WindowTopNSpec, TableSinkSpec,
    # (a non-windowed Top-N: runtime/spark/stateful.py)
    TopNSpec,
    # (the two phases of an aggregation are one Spark aggregation, a range-partitioned sort
    # one orderBy)
    LocalAggregateSpec, GlobalAggregateSpec, RangeSampleSpec, RangeBoundariesSpec,
    RangeAssignSpec, OrderedConcatSpec,
    # (a Python table function's rows: fused with its projection into one mapInArrow, a
    # flatMap that runs on streams as on static DataFrames; an UNNEST of an ARRAY column is
    # refused before, as ARRAY values have no Spark translation)
    UnnestSpec,
    # (WITH RECURSIVE: maintained on the driver per micro-batch, runtime/spark/iteration.py)
    IterateSpec)
# Operators that may follow a deferred one (they run on static DataFrames too).
_AFTER_DEFERRED: tuple[type[OperatorSpec], ...] = (
    FilterSpec, ProjectSpec, WindowTopNSpec, SortSpec, LimitSpec, TableSinkSpec,
    OrderedConcatSpec)
# Operators that may follow our own session operator (its rows carry no event time).
_AFTER_NATIVE: tuple[type[OperatorSpec], ...] = (
    FilterSpec, ProjectSpec, SortSpec, LimitSpec, TableSinkSpec, OrderedConcatSpec)
# Operators that judge no lateness: rows behind the watermark go through them as they are
# (a window TVF on its own keeps late rows, as Flink's; a session TVF leaves the judging to
# the session aggregation, refused; a deduplication by event time is refused).
_NO_LATENESS: tuple[type[OperatorSpec], ...] = (
    FilterSpec, ProjectSpec, GroupAggregateSpec, LocalAggregateSpec, GlobalAggregateSpec,
    JoinSpec, UnionSpec, SortSpec, LimitSpec, TopNSpec, TableSinkSpec, WindowAssignSpec,
    UnnestSpec, IterateSpec)
# Operators that take a changelog (our stateful operators' changes) as it is, or (sorts,
# limits: at the end) after the driver applied it.
_OVER_CHANGELOG: tuple[type[OperatorSpec], ...] = (
    FilterSpec, ProjectSpec, TableSinkSpec, GroupAggregateSpec, LocalAggregateSpec,
    GlobalAggregateSpec, SortSpec, LimitSpec, OrderedConcatSpec, RangeSampleSpec,
    RangeBoundariesSpec, RangeAssignSpec)
_AGGREGATES = (GroupAggregateSpec, LocalAggregateSpec, GlobalAggregateSpec,
               WindowAggregateSpec, SessionAggregateSpec)
_SENTINEL_MS = 253_370_764_800_000  # 9999-01-01: after any real event time
# Each source's rows reach Spark in this many micro-batches (one: all in the first; tests set
# more, so that a query's state and changes carry across micro-batches).
_MICRO_BATCHES = 1
_EXCLUDED = "spark.sql.optimizer.excludedRules"


def _file_order(folder: Path) -> None:
    """The parquet files of ``folder`` given modification times a second apart, in the order
    of their names: Spark's file source takes files in modification-time order (to the
    millisecond), and files written within one millisecond came in the file system's listing
    order, so that a later micro-batch's rows could go first (late-row SESSION windows then
    gave other sessions than native's, now and then)."""
    import os
    import time

    files = sorted(folder.glob("*.parquet"))
    start = int(time.time()) - len(files) - 1
    for i, f in enumerate(files):
        os.utime(f, (start + i, start + i))
# Settings of the session while a streaming query runs (the query keeps its own copy, taken
# when it starts; the session gets its own back when it ends):
_STREAMING_CONF = {
    # The watermark is the sources': Spark would push a filter below withWatermark (an inner
    # join's inferred IS NOT NULL, a WHERE), so that the rows it drops never move the
    # watermark (the native runtime's watermark counts every row a source reads), and the
    # end-of-input row that closes the last windows would be lost. Filters stay above it.
    # (the first rule holds the second, which Spark also runs on its own after it infers
    # a join's IS NOT NULL filters)
    _EXCLUDED: "org.apache.spark.sql.catalyst.optimizer.PushDownPredicates,"
               "org.apache.spark.sql.catalyst.optimizer.PushPredicateThroughNonJoin",
    # A stream read twice (q5: one window aggregation feeding both sides of a join) would
    # share an exchange, and Spark would not see the watermark under the reused exchange:
    # the stateful operators above it would never evict (never emit in append mode).
    "spark.sql.exchange.reuse": "false",
}


@contextlib.contextmanager
def streaming_conf(spark: Any, extra: dict[str, str] | None = None) -> Iterator[None]:
    """The session's Spark settings for a streaming query (_STREAMING_CONF and ``extra``, the
    query's own; excluded rules added to the session's own), restored afterwards."""
    conf = spark.conf
    settings = {**_STREAMING_CONF, **(extra or {})}
    before = {k: conf.get(k, None) for k in settings}
    for k, v in settings.items():
        conf.set(k, ",".join(r for r in (before[k], v) if r) if k == _EXCLUDED else v)
    try:
        yield
    finally:
        for k, old in before.items():
            if old is None:
                conf.unset(k)
            else:
                conf.set(k, old)


class SparkStreamingJob(SparkJob):
    def __init__(self, graph: JobGraph, options: dict[str, str],
                 tables: dict[str, object]) -> None:
        ops = [op for v in graph.vertices for op in v.chain]
        for op in ops:
            _check_streamable(op)
        # (processing-time windows are no event-time windows: a GROUP BY of the keys and
        # the window; see _op_window_aggregate)
        proctime = {id(op) for op in ops if isinstance(op, WindowAggregateSpec) and op.proctime}
        grouped = any(isinstance(op, GroupAggregateSpec | GlobalAggregateSpec) or
                      id(op) in proctime for op in ops)
        self.windowed = any(isinstance(op, WindowAggregateSpec | SessionAggregateSpec)
                            and id(op) not in proctime for op in ops)
        # A non-windowed Top-N, or a GROUP BY with a join (Spark joins streams in append
        # mode only, and its own GROUP BY emits updates), runs as our stateful operators
        # (runtime/spark/stateful.py), every GROUP BY of the query with them: append mode,
        # their rows a changelog the driver applies.
        # So does a GROUP BY of a Python aggregate function (Spark runs no pandas UDF in a
        # streaming aggregation): its accumulator is kept per key in our operator's state.
        self.stateful = any(isinstance(op, TopNSpec) for op in ops) or (grouped and any(
            isinstance(op, JoinSpec | WindowJoinSpec) for op in ops)) or any(
            a.func.startswith("py:") for op in ops
            if isinstance(op, GroupAggregateSpec | GlobalAggregateSpec) or id(op) in proctime
            for a in op.aggs)
        # A GROUP BY of a GROUP BY's changes (through filters and projections; and a third
        # of the second's...): Spark's own aggregations cannot feed one another (the second
        # would take the first's updates as late rows: Spark's global-watermark check
        # refuses the query), so the query runs as our stateful operators, all of the
        # chain in one (first's id -> each next stage: the operators between, the GROUP BY),
        # each GROUP BY over the changes of the one before, retractions included.
        chained = _fused_group_bys(graph)
        self.stateful = self.stateful or bool(chained)
        self.fused = chained if self.stateful else {}
        absorbed = [op for stages in self.fused.values() for between, last in stages
                    for op in (*between, last)]
        self.absorbed = {id(op) for op in absorbed}
        if self.windowed and proctime:
            msg = ("processing-time windows together with event-time windows in one query "
                   "have no Spark Structured Streaming translation yet (the row that closes "
                   "the event-time windows at the end of the input would reach the "
                   "processing-time ones); use the native runtime")
            raise NotSupportedError(msg)
        if self.windowed and grouped:
            msg = ("a GROUP BY together with a window aggregation has no Structured Streaming "
                   "translation yet (Spark allows one output mode per query)")
            raise NotSupportedError(msg)
        if any(isinstance(op, WindowTopNSpec) for op in ops) and not self.windowed:
            msg = ("a window Top-N directly over a window TVF has no Structured Streaming "
                   "translation yet (Spark emits the rows before their window closes); rank "
                   "the result of a window aggregation instead")
            raise NotSupportedError(msg)
        self.output_mode = "complete" if grouped and not self.stateful else "append"
        # Operators run on the streaming query's output: per micro-batch, and at the end.
        self.per_batch: list[OperatorSpec] = []
        self.at_end: list[OperatorSpec] = []
        # DataFrames holding rows that may be late, by id (with the table they come from)
        self._behind: dict[int, tuple[Any, str]] = {}
        # DataFrames of our own session operator's rows (no event time for Spark), by id
        self._unwatermarked: set[int] = set()
        # Our stateful operators translated so far (the first runs as Spark's
        # applyInPandasWithState, later ones as transformWithStateInPandas:
        # runtime/spark/stateful_join.py), and the settings the query then needs
        self.stateful_ops = 0
        self.apply_in_pandas = False  # (Spark's one applyInPandasWithState is taken)
        self.query_conf: dict[str, str] = {}
        # Unbounded sources' readers on the driver (runtime/spark/unbounded.py), and the
        # request to stop a query that may never end (cancel())
        self.pumps: list[Any] = []
        self.cancelled = threading.Event()
        super().__init__(graph, options, tables)
        # Rows the window TVFs drop as late (as the native runtime counts them)
        self.late_counter = self.spark.sparkContext.accumulator(0)
        self.time_type = "timestamp_ltz"
        self.streaming = True
        given = options.get("execution.checkpoint-location")
        self.workdir = Path(given or tempfile.mkdtemp(prefix="sqlengine-spark-"))
        self.temporary = given is None  # removed after the run

    def cancel(self) -> None:
        """Stops a running query that reads an unbounded source (from another thread): its
        loop ends within a poll interval; what its sinks committed stays."""
        self.cancelled.set()

    def _operator(self, op: OperatorSpec, df: Any, inputs: list[Any]) -> Any:
        behind = [self._behind[id(x)][1] for x in inputs if x is not None and
                  id(x) in self._behind]
        plain = any(x is not None and id(x) in self._unwatermarked for x in inputs)
        if plain and not isinstance(op, _AFTER_NATIVE):
            msg = (f"{op.label()} after a SESSION window aggregation over rows behind the "
                   "watermark has no Spark Structured Streaming translation: those sessions "
                   "are our own stateful operator's rows, which carry no event time for "
                   "Spark; use the native runtime")
            raise NotSupportedError(msg)
        if behind:
            out = self._late_rows(op, df, inputs, behind[0])
        else:
            out = self._in_order(op, df, inputs)
        if plain:
            self._unwatermarked.add(id(out))
        return out

    def _late_rows(self, op: OperatorSpec, df: Any, inputs: list[Any], table: str) -> Any:
        """``op`` over rows of which some may be late (behind the watermark before them).

        The native runtime judges lateness per row, against the watermark its source emitted
        before the row (the ``$wm`` column here, carried from the source through filters and
        projections): a window TVF under a window aggregation drops the (row, window) pairs
        whose window has fired and counts the rows left with none. That is done here too,
        before Spark's own window (which, all rows in one micro-batch, drops none).
        Operators that judge no lateness (filters, projections, regular joins, GROUP BY,
        unions, Top-N, sorts) take the rows as they are; the operators that do judge it
        another way (session windows, window joins of TVFs, deduplication by event time)
        are refused by name rather than keeping late rows."""
        carries = WM in df.columns if df is not None else False
        if isinstance(op, WindowAssignSpec) and op.drop_late and not op.proctime and \
                op.window_kind != "session" and carries:
            return self._judged_window_assign(op, df)
        if isinstance(op, WindowAssignSpec) and op.window_kind == "session" and \
                op.drop_late and carries:
            # (each row's placeholder window, its watermark and position kept for the
            # session aggregate)
            out = self._in_order(op, df, inputs)
            self._mark_behind(out, table)
            return out
        if isinstance(op, SessionAggregateSpec) and carries:
            return self._native_sessions(op, df)
        # (processing time is never late: its windows take every row)
        passes = (isinstance(op, _NO_LATENESS) and not (isinstance(op, TopNSpec) and op.keep)
                  and not (isinstance(op, WindowAssignSpec) and op.drop_late and
                           op.window_kind != "session" and not op.proctime)) or \
            (isinstance(op, WindowAggregateSpec) and op.proctime)
        if not passes:
            why = ("a row behind the watermark may find its key's session already fired "
                   "and open a session of its own, or be late: the native session "
                   "aggregate judges that per key, row by row, and Spark's session_window "
                   "would merge it") if isinstance(op, SessionAggregateSpec) else \
                "it judges late rows, which its Spark translation would keep"
            has = "may have rows" if any(p.op.source.table == table for p in self.pumps) \
                else "has rows"
            msg = (f"table {table!r} {has} behind its watermark (more out of order than "
                   f"its WATERMARK allows) that reach {op.label()} on Spark Structured "
                   f"Streaming: {why}; widen the WATERMARK bound or use the native runtime")
            raise NotSupportedError(msg)
        if not isinstance(op, FilterSpec | ProjectSpec):
            inputs = [_unjudged(x) if x is not None else x for x in inputs]
            df = _unjudged(df) if df is not None else df
        out = self._in_order(op, df, inputs)
        self._mark_behind(out, table)
        return out

    def _judged_window_assign(self, op: WindowAssignSpec, df: Any) -> Any:
        """The window TVF over rows carrying the watermark before them: the rows none of
        whose windows is still open are dropped and counted (our own assigner, as the native
        WindowAssignOperator judges them), then Spark's windows, without the (row, window)
        pairs whose window had fired."""
        from pyspark.sql import functions as F

        from sqlengine.runtime.windows import assign

        counter = self.late_counter
        time, kind, lateness = f"c{op.time_index}", op.window_kind, op.lateness
        size, slide, offset = op.size, op.slide, op.offset

        def judge(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            for batch in batches:
                names = batch.schema.names
                times = batch.column(names.index(time))
                wm = batch.column(names.index(WM)).to_numpy(zero_copy_only=False)
                # (a NULL time has no window: Spark's drops the row, not as late)
                timed = np.asarray(pc.is_valid(times), dtype=bool)
                ts = millis(pc.fill_null(times, 0).cast(pa.timestamp("ms")))
                windows = assign(kind, ts, size, slide, offset)
                alive = windows.end - 1 + lateness > wm[windows.rows]
                keep = ~timed
                keep[windows.rows[alive]] = True
                dropped = len(ts) - int(np.count_nonzero(keep))
                if dropped:
                    counter.add(dropped)
                    batch = batch.filter(pa.array(keep))
                yield batch

        # (the schema as it is, the event time's watermark metadata kept)
        judged = df.mapInArrow(judge, df.schema)
        out = self._op_window_assign(op, judged)
        end = F.unix_millis(F.col(f"c{_width(judged) + 1}").cast("timestamp"))
        return _unjudged(out.where(end - 1 + F.lit(lateness) > F.col(WM)))

    def _native_sessions(self, op: SessionAggregateSpec, df: Any) -> Any:
        """SESSION windows over rows some of which are behind the watermark: our own
        session aggregate (runtime/spark/stateful.py), which judges each row as the native
        one does (Spark's session_window would merge a row into a session the native
        runtime had already fired). Its rows carry no event time for Spark: only filters,
        projections, sorts and the sink may follow."""
        from sqlengine.runtime.spark.stateful import session_aggregate

        if self.stateful:
            msg = (f"{op.label()} over rows behind the watermark runs as our own stateful "
                   "operator on Spark Structured Streaming, and this query has another "
                   "(a Top-N, a GROUP BY with a join, or processing-time windows): Spark "
                   "allows one arbitrary stateful operator (applyInPandasWithState) per "
                   "query; use the native runtime")
            raise NotSupportedError(msg)
        self.stateful = True
        out = session_aggregate(self, op, df)
        self._unwatermarked.add(id(out))
        return out

    def _in_order(self, op: OperatorSpec, df: Any, inputs: list[Any]) -> Any:
        if isinstance(op, JoinSpec) and (op.join_kind != "inner" or any(
                x is not None and KIND in x.columns for x in inputs)):
            from sqlengine.runtime.spark.stateful_join import changelog_join

            return changelog_join(self, op, inputs[0], inputs[1])
        if any(x is not None and KIND in x.columns for x in inputs) and \
                not isinstance(op, _OVER_CHANGELOG):
            msg = (f"{op.label()} over an updating input (a Top-N's, a GROUP BY's or a "
                   "processing-time window aggregation's changes) has no Spark Structured "
                   "Streaming translation yet")
            raise NotSupportedError(msg)
        if id(op) in self.absorbed:  # (run by the stateful operator before it)
            return df
        deferring = bool(self.per_batch or self.at_end)
        if deferring and not isinstance(op, _AFTER_DEFERRED):
            msg = (f"{op.label()} after a window Top-N or an ORDER BY has no Spark Structured "
                   "Streaming translation yet")
            raise NotSupportedError(msg)
        if isinstance(op, IterateSpec):
            from sqlengine.runtime.spark.iteration import streaming_iterate

            if self.pumps:
                msg = (f"{op.label()} over an unbounded source on Spark Structured Streaming "
                       "has no translation yet (its rounds run on the driver over bounded "
                       "inputs); use the native runtime")
                raise NotSupportedError(msg)

            return streaming_iterate(self, op, inputs)
        if (isinstance(op, SortSpec | LimitSpec) and self.output_mode == "append") or \
                self.at_end:
            self.at_end.append(op)
            return df
        if isinstance(op, WindowTopNSpec) or self.per_batch:
            self.per_batch.append(op)
            return df
        return super()._operator(op, df, inputs)

    def _static(self, ops: list[OperatorSpec], df: Any) -> Any:
        """Deferred operators over a static DataFrame (the batch translation)."""
        for op in ops:
            df = super()._operator(op, df, [df])
        return df

    def _op_source(self, op: TableScanSpec) -> Any:
        from pyspark.sql import functions as F

        source = op.source
        schema = op.table_schema.to_arrow()
        if not source.bounded:
            return self._pumped(op, schema)
        folder = self.workdir / f"source-{op.table}-{id(op)}"
        path = _plain_parquet(source, schema) if _MICRO_BATCHES == 1 else None
        if path is not None:
            return self._scan_tail(op, self._parquet_stream(op, schema, path, folder))
        data, marks = self._read_judged(op, schema)
        folder.mkdir(parents=True, exist_ok=True)
        data = _pruned(op, data).rename_columns(_names(len(schema)))
        if marks is not None:
            # (rows behind the watermark: each carries the one before it, and its position)
            data = data.append_column(WM, marks)
            data = data.append_column(SEQ, pa.array(np.arange(data.num_rows, dtype=np.int64)))
        # (one file, one micro-batch; tests split it: a query's state across micro-batches)
        step = -(-data.num_rows // _MICRO_BATCHES) if _MICRO_BATCHES > 1 else 0
        for i in range(0, data.num_rows, step) if step else [None]:
            part = data if i is None else data.slice(i, step)
            pq.write_table(part, folder / ("part-0.parquet" if i is None else
                                           f"part-0-{i // step:05d}.parquet"))
        delay = _delay(source.watermark)
        if source.watermark is not None and self.windowed:
            sentinel = {f"c{i}": pa.nulls(1, f.type) for i, f in enumerate(schema)}
            sentinel[f"c{source.watermark[0]}"] = pa.array([_SENTINEL_MS], pa.timestamp("ms"))
            if marks is not None:
                # (never late itself: it only moves Spark's watermark)
                sentinel[WM] = pa.array([np.iinfo(np.int64).min], pa.int64())
                sentinel[SEQ] = pa.array([np.iinfo(np.int64).max], pa.int64())
            pq.write_table(pa.table(sentinel).cast(data.schema), folder / "part-1.parquet")
        if step:
            _file_order(folder)
        fields = ddl(schema) + (f", `{WM}` BIGINT, `{SEQ}` BIGINT" if marks is not None
                                else "")
        reader = self.spark.readStream.schema(fields)
        if step:
            reader = reader.option("maxFilesPerTrigger", 1)
        df = reader.parquet(str(folder))
        if source.watermark is not None:
            col = f"c{source.watermark[0]}"
            df = df.withColumn(col, F.col(col).cast("timestamp_ltz"))
            df = df.withWatermark(col, f"{delay} milliseconds")
        df = self._scan_tail(op, df)
        if marks is not None:
            self._mark_behind(df, source.table)
        return df

    def _pumped(self, op: TableScanSpec, schema: pa.Schema) -> Any:
        """An unbounded source: read on the driver by our connector into a folder Spark
        streams (runtime/spark/unbounded.py), each row with the watermark before it."""
        from pyspark.sql import functions as F

        from sqlengine.runtime.spark.unbounded import SourcePump

        source = op.source
        if source.changelog:
            msg = (f"table {source.table!r}: an unbounded changelog source on Spark Structured "
                   "Streaming has no translation yet; use the native runtime")
            raise NotSupportedError(msg)
        marks = source.watermark is not None
        parallelism = int(self.options.get("parallelism.default", "1"))
        if marks and parallelism > 1:
            msg = (f"table {source.table!r} is unbounded and has a WATERMARK: its rows may come "
                   "behind the watermark, which the native runtime judges at "
                   f"'parallelism.default' = {parallelism} against watermarks that depend on "
                   "how its subtasks interleave; Spark cannot judge them the same way (run at "
                   "parallelism 1)")
            raise NotSupportedError(msg)
        # (a stable name: a restarted query's checkpoint refers to it)
        index = len(self.pumps)
        folder = self.workdir / f"unbounded-{index}-{source.table}"
        fields = pa.schema([(f"c{i}", f.type) for i, f in enumerate(schema)] +
                           ([(WM, pa.int64()), (SEQ, pa.int64())] if marks else []))
        sentinel = None
        if marks and self.windowed:
            row = {f.name: pa.nulls(1, f.type) for f in fields}
            row[f"c{source.watermark[0]}"] = pa.array([_SENTINEL_MS], pa.timestamp("ms"))
            row[WM] = pa.array([np.iinfo(np.int64).min], pa.int64())
            row[SEQ] = pa.array([np.iinfo(np.int64).max], pa.int64())
            sentinel = pa.table(row).cast(fields)
        pump = SourcePump(self, op, schema, folder, fields, sentinel,
                          resumable=not self.temporary)
        self.pumps.append(pump)
        folder.mkdir(parents=True, exist_ok=True)
        ddl_fields = ddl(schema) + (f", `{WM}` BIGINT, `{SEQ}` BIGINT" if marks else "")
        df = self.spark.readStream.schema(ddl_fields).parquet(str(folder))
        if marks:
            col = f"c{source.watermark[0]}"
            df = df.withColumn(col, F.col(col).cast("timestamp_ltz"))
            df = df.withWatermark(col, f"{_delay(source.watermark)} milliseconds")
        df = self._scan_tail(op, df)
        if marks:
            self._mark_behind(df, source.table)
        return df

    def _parquet_stream(self, op: TableScanSpec, schema: pa.Schema, path: str,
                        folder: Path) -> Any:
        """A parquet file no row of which is behind its watermark (_plain_parquet), streamed
        by Spark as it is, as it reads it in batch mode: linked (not copied) into the folder
        Spark streams, beside the end-of-input row when windows need it (its rows need no
        watermark of their own, so no copy of ours)."""
        import os

        from pyspark.sql import functions as F

        source = op.source
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / "part-0.parquet"
        link.unlink(missing_ok=True)  # (a given checkpoint location's, from a run before)
        try:
            os.link(path, link)
        except OSError:  # (another file system)
            os.symlink(Path(path).resolve(), link)
        if source.watermark is not None and self.windowed:
            sentinel = {f.name: pa.nulls(1, f.type) for f in schema}
            sentinel[schema.names[source.watermark[0]]] = pa.array([_SENTINEL_MS],
                                                                   pa.timestamp("ms"))
            pq.write_table(pa.table(sentinel).cast(schema), folder / "part-1.parquet")
        df = self.spark.readStream.schema(ddl(schema, schema.names)).parquet(str(folder))
        df = df.toDF(*_names(len(schema)))
        if source.watermark is not None:
            col = f"c{source.watermark[0]}"
            df = df.withColumn(col, F.col(col).cast("timestamp_ltz"))
            df = df.withWatermark(col, f"{_delay(source.watermark)} milliseconds")
        return df

    def _read_judged(self, op: TableScanSpec, schema: pa.Schema
                     ) -> tuple[pa.Table, pa.Array | None]:
        """The source's rows as the native runtime reads them and, when some row is behind
        the watermark in effect before it (a row a window operator may find late), the
        watermark before each row (int64 ms).

        The watermarks are the native source's own (SourceOperator: the running maximum of
        the WATERMARK expression, emitted by Flink's periodic rule within each batch the
        connector reads), over the same batches in the same order, so a row is judged late
        on Spark exactly when it is on the native runtime (which reads a source in one split
        at parallelism 1)."""
        from sqlengine.runtime.elements import data_part
        from sqlengine.runtime.native.source_driver import emit_interval
        from sqlengine.runtime.operators.source import SourceOperator

        source = op.source
        if source.watermark is None or source.changelog:
            return self._read_native(source, schema), None
        reader = SourceOperator(source, schema, None, (),
                                self.tables.get(source.table.lower()), event_time=True)
        reader.emit_interval = emit_interval(reader, self.options)
        batches, marks = [], []
        for b in reader.batches():
            if b is None:
                continue
            batches.append(data_part(b))
            marks.append(row_watermarks(b))
        self.result.skipped_rows += reader.stats.skipped
        data = pa.Table.from_batches(batches, schema)
        if not batches:
            return data, None
        wm = np.concatenate(marks)
        times = millis(data.column(source.watermark[0]))
        behind = int(np.count_nonzero(times <= wm))
        if not behind:
            return data, None
        parallelism = int(self.options.get("parallelism.default", "1"))
        if parallelism > 1:
            msg = (f"table {source.table!r}: {behind} row(s) arrive behind the watermark "
                   "(more out of order than its WATERMARK allows), and at "
                   f"'parallelism.default' = {parallelism} the native runtime judges them "
                   "against watermarks that depend on how its subtasks interleave; Spark "
                   "cannot judge them the same way (run at parallelism 1)")
            raise NotSupportedError(msg)
        return data, pa.array(wm, pa.int64())

    def _mark_behind(self, df: Any, table: str) -> None:
        """``df`` holds rows of ``table`` that may be late (see _late_rows)."""
        self._behind[id(df)] = (df, table)

    def _op_values(self, op: ValuesSpec) -> Any:
        # VALUES becomes a (one-file) stream too: a streaming query has no static inputs.
        table = self._values_table(op)
        table = table.rename_columns(_names(table.num_columns))
        folder = self.workdir / f"values-{id(op)}"
        folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, folder / "part-0.parquet")
        return self.spark.readStream.schema(ddl(table.schema)).parquet(str(folder))

    def _op_window_assign(self, op: WindowAssignSpec, df: Any) -> Any:
        from pyspark.sql import functions as F

        if op.window_kind == "session" or not op.drop_late or op.proctime:
            # (on its own, not under a windowed aggregate, the TVF is a projection; over
            # processing time too: its aggregation is a GROUP BY of our stateful operator)
            return super()._op_window_assign(op, df)
        # Spark's append mode needs the aggregation grouped by a window on the watermarked
        # event time: window_start holds the window struct until the aggregate is done.
        ts = F.col(f"c{op.time_index}")
        ms = "milliseconds"
        if op.window_kind == "cumulate":
            # (Spark has no CUMULATE window: window_start is the max-size bucket's window, on
            # the event time as append mode needs; each row is exploded into the bucket's
            # windows that end after it, their end a grouping key beside it)
            bucket = F.window(ts, f"{op.size} {ms}", f"{op.size} {ms}", f"{op.offset} {ms}")
            t = F.unix_millis(ts.cast("timestamp"))
            start = t - F.pmod(t - F.lit(op.offset), F.lit(op.size))
            first = start + (F.floor((t - start) / F.lit(op.slide)).cast("bigint") + 1) * \
                op.slide
            ends = F.sequence(first, start + F.lit(op.size), F.lit(op.slide).cast("bigint"))
            width = _width(df)
            framed = df.select("*", bucket.alias(f"c{width}"), F.explode(ends).alias("$ce"))
            end = F.timestamp_millis(F.col("$ce"))
            return framed.select(*df.columns, F.col(f"c{width}"), end.alias(f"c{width + 1}"),
                                 F.timestamp_millis(F.col("$ce") - 1).alias(f"c{width + 2}"))
        slide = op.slide if op.window_kind == "hop" else op.size
        w = F.window(ts, f"{op.size} {ms}", f"{slide} {ms}", f"{op.offset} {ms}")
        width = _width(df)
        framed = df.select("*", w.alias(f"c{width}"))
        return framed.select(*framed.columns, F.col(f"c{width}.end").alias(f"c{width + 1}"),
                             (F.col(f"c{width}.end") - F.expr("INTERVAL 1 MILLISECOND"))
                             .alias(f"c{width + 2}"))

    def _expr(self, e: Any) -> Any:
        if isinstance(e, Call) and e.name == "proctime":
            # Spark's processing time: the micro-batch's (current_timestamp() on a stream),
            # to the millisecond as ours (the native runtime's: when a batch is evaluated)
            from pyspark.sql import functions as F

            now = F.current_timestamp()
            if e.args:  # (the session time zone's wall clock, as the native runtime's)
                now = F.from_utc_timestamp(now, str(e.args[0].value))
            return F.date_trunc("millisecond", now)
        return super()._expr(e)

    def _op_top_n(self, op: TopNSpec | WindowTopNSpec, df: Any) -> Any:
        if isinstance(op, TopNSpec):
            from sqlengine.runtime.spark.stateful import top_n

            return top_n(self, op, df)
        return super()._op_top_n(op, df)

    def _op_group_aggregate(self, op: Any, df: Any) -> Any:
        if self.stateful and isinstance(op, GroupAggregateSpec | GlobalAggregateSpec):
            from sqlengine.runtime.spark.stateful import group_aggregate

            return group_aggregate(self, op, df, self.fused.get(id(op)))
        return super()._op_group_aggregate(op, df)

    def _op_session_aggregate(self, op: SessionAggregateSpec, df: Any) -> Any:
        return _python_values(op, super()._op_session_aggregate(op, df))

    def _op_window_aggregate(self, op: WindowAggregateSpec, df: Any) -> Any:
        from pyspark.sql import functions as F
        from pyspark.sql.types import StructType

        if op.proctime:
            # Processing-time windows: no watermark moves them, so Spark's append mode
            # cannot emit them. The window columns come from each row's PROCTIME() (its
            # micro-batch's current_timestamp(): _expr); the aggregation is a GROUP BY of the
            # keys and the window: Spark's own in complete mode (its last micro-batch holds
            # each window's final row, as the native runtime emits it when the clock passes
            # its end or the input ends), or, in a query of our stateful operators, one of
            # them, whose changes the driver applies; there a window whose end the clock
            # passed leaves the state (no row read later can fall in it).
            if not self.stateful:
                return super()._op_group_aggregate(op, df)
            from sqlengine.runtime.spark.stateful import group_aggregate

            return group_aggregate(self, op, df, expire_at=op.end_pos)
        out = _python_values(op, super()._op_group_aggregate(op, df))
        start, end = f"c{op.start_pos}", f"c{op.end_pos}"
        window = out.schema[start]
        if not isinstance(window.dataType, StructType):
            # (a window aggregate over a window aggregate's rows: grouped by their bounds,
            # window_end still the event time)
            return out
        # window_start held Spark's window struct, the event time of append mode; the
        # output keeps window_end as the event time (Spark's watermark metadata, which it
        # compares with a window struct's end too), so that a window join, a join or a
        # window aggregation after this one can run in append mode: each evicts and drops
        # late a window once the watermark passes its end.
        # A window_time key (window_end - 1 ms, the rowtime of a cascading window
        # aggregation) is an event time too: without the metadata Spark refuses the next
        # window aggregation ("append ... without watermark").
        times = {end} | {f"c{i}" for i, k in enumerate(op.keys)
                         if isinstance(k, ColumnRef) and isinstance(op.keys[op.end_pos],
                                                                    ColumnRef)
                         and k.index == op.keys[op.end_pos].index + 1}
        return out.select(*[F.col(f"{c}.start").alias(c) if c == start else
                            F.col(c).alias(c, metadata=window.metadata) if c in times else
                            F.col(c) for c in out.columns])

    def explain(self) -> str:
        # (under the settings the query runs with: the plan Spark runs, its filters above
        # the watermark)
        with streaming_conf(self.spark, self.query_conf):
            return super().explain()

    def run(self) -> Iterator[pa.RecordBatch]:

        try:  # (an iteration runs its own streaming query while the frames are built)
            df, sink = self.final_frame()
        except BaseException:
            if self.temporary:
                shutil.rmtree(self.workdir, ignore_errors=True)
            raise
        target = sink_target(sink)
        df = _unjudged(df)
        if self.pumps:  # (a query that may never end: its rows as they come)
            from sqlengine.runtime.spark.unbounded import run_unbounded

            df = _ntz(df)
            try:
                yield from run_unbounded(self, df, target)
            finally:
                self.result.late_records_dropped = int(self.late_counter.value)
                if self.temporary:
                    shutil.rmtree(self.workdir, ignore_errors=True)
            return
        df = _ntz(df)
        batches: list[tuple[int, pa.Table]] = []

        def each(b: Any, i: int) -> None:
            batches.append((i, self._static(self.per_batch, b).toArrow()))

        try:
            with streaming_conf(self.spark, self.query_conf):
                query = (df.writeStream.outputMode(self.output_mode)
                         .trigger(availableNow=True)
                         .option("checkpointLocation", str(self.workdir / "checkpoint"))
                         .foreachBatch(each).start())
                query.awaitTermination()
        finally:
            if self.temporary:
                shutil.rmtree(self.workdir, ignore_errors=True)
        self.result.late_records_dropped = int(self.late_counter.value)
        if self.output_mode == "complete":  # the last batch holds the whole result
            batches = batches[-1:]
        tables = [t for _, t in batches if t.num_rows]
        if any(KIND in t.column_names for t in tables):
            # (our stateful operators' changes: the final rows, as collect() has them)
            from sqlengine.runtime.changelog import apply_changelog

            kinds = [b.set_column(b.num_columns - 1, KIND, b.column(KIND).cast(pa.int8()))
                     for t in tables for b in t.combine_chunks().to_batches()]
            data = [t.drop_columns([KIND]) for t in tables]
            applied = apply_changelog(kinds, data[0].schema)
            tables = [applied] if applied.num_rows else []
        if self.at_end and tables:  # (sorting or limiting no rows gives no rows)
            whole = pa.concat_tables(tables)
            tables = [self._static(self.at_end, self._from_arrow(whole)).toArrow()]
        names = target.schema.names()
        schema = target.schema.to_arrow()
        result = pa.concat_tables([t.cast(pa.schema([(f"c{i}", f.type) for i, f in
                                                      enumerate(schema)]))
                                   for t in tables]) if tables else schema.empty_table()
        result = result.rename_columns(names)
        self.result.sink_rows[target.table] = result.num_rows
        if target.connector == "collect":
            yield from result.to_batches()
            return
        self._write(target, result)

    def _write(self, target: N.SinkSpec, table: pa.Table) -> None:
        from sqlengine.runtime.native.factory import sink_operator

        # Other sinks: the rows go through our own sink operators.
        op = sink_operator(TableSinkSpec(schema=target.schema, table=target.table,
                                         target=target))
        try:
            for b in table.to_batches():
                op.process_batch(b)
            list(op.end_input())  # (a file sink publishes its parts once every row is in)
        finally:
            op.close()


def _ntz(df: Any) -> Any:
    """Event-time columns back to TIMESTAMP without time zone."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    return df.select(*[F.col(f.name).cast("timestamp_ntz").alias(f.name)
                       if isinstance(f.dataType, TimestampType) else F.col(f.name)
                       for f in df.schema.fields])


def _fused_group_bys(graph: JobGraph
                     ) -> dict[int, list[tuple[list[OperatorSpec], OperatorSpec]]]:
    """GROUP BYs whose changes go, through filters and projections only, into a second
    GROUP BY (and its, into a third...): first's id -> each next stage (the filters and
    projections between, the GROUP BY)."""
    nxt: dict[int, OperatorSpec] = {}
    for v in graph.vertices:
        for a, b in zip(v.chain, v.chain[1:]):
            nxt[id(a)] = b
        outs = graph.out_edges(v.id)
        if len(outs) == 1 and len(graph.in_edges(outs[0].target)) == 1:
            nxt[id(v.tail)] = graph.vertex(outs[0].target).head
    grouping = (GroupAggregateSpec, GlobalAggregateSpec)

    def following(op: OperatorSpec) -> tuple[list[OperatorSpec], OperatorSpec] | None:
        between: list[OperatorSpec] = []
        cur = nxt.get(id(op))
        while isinstance(cur, FilterSpec | ProjectSpec | LocalAggregateSpec):
            if not isinstance(cur, LocalAggregateSpec):
                between.append(cur)
            cur = nxt.get(id(cur))
        return (between, cur) if isinstance(cur, grouping) else None

    fused: dict[int, list[tuple[list[OperatorSpec], OperatorSpec]]] = {}
    taken: set[int] = set()
    for v in graph.vertices:
        for op in v.chain:
            if not isinstance(op, grouping) or id(op) in taken:
                continue
            stages = []
            stage = following(op)
            while stage is not None:
                stages.append(stage)
                taken.add(id(stage[1]))
                stage = following(stage[1])
            if stages:
                fused[id(op)] = stages
    return fused


def _python_values(op: WindowAggregateSpec | SessionAggregateSpec, df: Any) -> Any:
    """A window aggregation's Python aggregate functions (Spark refuses grouped-aggregate
    pandas UDFs in a streaming aggregation): the aggregation collected each window's argument
    rows (aggregates.python_rows, as the native window operators keep a Python aggregate's
    rows in its partials); the function runs on them in the Python workers (mapInArrow)
    when Spark emits the window. Other columns pass through untouched (the window's event
    time keeps its watermark metadata)."""
    from pyspark.sql.types import StructField, StructType, _parse_datatype_string

    from sqlengine.runtime.spark import arrow_ops
    from sqlengine.runtime.spark.arrow_ops import retime
    from sqlengine.runtime.spark.expressions import spark_type

    n_keys = len(op.keys)
    out = op.schema.to_arrow()
    calls = {f"c{n_keys + j}": (a, out.field(n_keys + j).type)
             for j, a in enumerate(op.aggs) if a.func.startswith("py:")}
    if not calls:
        return df
    shipped = arrow_ops.ship([a for a, _ in calls.values()])
    schema = StructType([StructField(f.name, _parse_datatype_string(
                                     spark_type(calls[f.name][1])), True)
                         if f.name in calls else f for f in df.schema.fields])

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from sqlengine.runtime.operators.python_aggregate import PythonAggregate

        arrow_ops.install(shipped)
        pys = {name: PythonAggregate(a) for name, (a, _) in calls.items()}
        for batch in batches:
            names = batch.schema.names
            cols = [retime(pa.RecordBatch.from_arrays(
                        [pys[n].values_of_lists(_typed_rows(c, pys[n]))], names=[n]),
                        "us").column(0) if n in pys else c
                    for n, c in zip(names, batch.columns)]
            yield pa.RecordBatch.from_arrays(cols, names=names)

    return df.mapInArrow(run, schema)


def _typed_rows(lists: pa.Array, py: Any) -> pa.Array:
    """Spark's list<struct> of a window's argument rows, with the call's argument types."""
    if not py.names:
        return lists
    lengths = pc.list_value_length(lists).fill_null(0).to_numpy(zero_copy_only=False)
    offsets = pa.array(np.r_[0, np.cumsum(lengths)].astype(np.int32))
    flat = pc.list_flatten(lists)
    fields = [flat.field(i).cast(f.type, safe=False) for i, f in enumerate(py.schema)]
    struct = pa.StructArray.from_arrays(fields, names=py.names)
    return pa.ListArray.from_arrays(offsets, struct, type=py.list_type(struct.type))


def _pruned(op: TableScanSpec, data: pa.Table) -> pa.Table:
    """The source's rows with the columns the query never reads (not in the scan's
    projection, filters or WATERMARK) all NULL: the file Spark streams from is written and
    read without them (a NULL column costs parquet next to nothing), positions kept."""
    if op.projection is None:
        return data
    used = set(op.projection)
    for f in op.filters:
        used |= {e.index for e in f.walk() if isinstance(e, ColumnRef)}
    if op.source.watermark is not None:
        used.add(op.source.watermark[0])
    if len(used) == data.num_columns:
        return data
    return pa.table([c if i in used else pa.nulls(data.num_rows, c.type)
                     for i, c in enumerate(data.columns)], schema=data.schema)


def _plain_parquet(source: N.SourceSpec, schema: pa.Schema) -> str | None:
    """The path of a filesystem source that Spark can stream as it is, without our copy:
    one parquet file (not partitioned, no METADATA columns) whose columns are the table's,
    of the table's types (Spark reads it as in batch mode: connectors/filesystem.py
    spark_read), and none of whose rows is behind the watermark before it. That needs only
    the rowtime column: a row is behind when its time is at most the watermark the native
    source emitted before it (_read_judged), which is at most the largest WATERMARK value
    (time - bound) of the rows before it; so a file whose every row is later than that
    has none, however the native source emits. Otherwise (or a NULL time, which the native
    source refuses): None, and the source is read as the native runtime reads it."""
    from sqlengine.connectors.base import decode_metadata, decode_partition_keys
    from sqlengine.connectors.filesystem_files import local_path
    from sqlengine.errors import ConnectorError

    options = dict(source.options)
    if source.connector != "filesystem" or source.option("format") != "parquet" or \
            source.changelog or decode_partition_keys(options) or decode_metadata(options):
        return None
    try:
        path = local_path(source.option("path") or "")
    except ConnectorError:
        return None  # (another URI: Spark's to read)
    if not path.is_file():
        return None
    names = [n.lower() for n in schema.names]
    try:
        held = pq.read_schema(path)
    except (OSError, pa.ArrowInvalid):
        return None  # (the native reader reports it)
    if len(set(names)) != len(names) or held.names != schema.names or \
            any(a.type != b.type for a, b in zip(held, schema)):
        return None
    if source.watermark is not None:
        try:
            delay = _delay(source.watermark)
        except NotSupportedError:
            return None
        times = pq.read_table(path, columns=[schema.names[source.watermark[0]]]).column(0)
        if times.null_count:
            return None
        t = millis(times.cast(pa.timestamp("ms")))
        if len(t) > 1 and not np.all(t[1:] > np.maximum.accumulate(t[:-1]) - delay):
            return None
    return str(path)


def _width(df: Any) -> int:
    """The columns c0.. of ``df`` (not the watermark and position it may carry)."""
    return len(df.columns) - (WM in df.columns) - (SEQ in df.columns)


def _unjudged(df: Any) -> Any:
    """``df`` without the watermark and position its rows carried to be judged."""
    meta = [c for c in (WM, SEQ) if c in df.columns]
    return df.drop(*meta) if meta else df


def _check_streamable(op: OperatorSpec) -> None:
    """Refuses, at plan time, an operator Structured Streaming cannot run."""
    if not isinstance(op, STREAMING_OPERATORS):
        what = op.label()
        if type(op).__name__ == "WindowFunctionsSpec":  # (its label is the plan's)
            calls = ", ".join(c.sql() for c in op.calls)  # type: ignore[attr-defined]
            what = (f"the window functions {calls} over a stream (not a Top-N of a window "
                    "aggregation's rows, nor ROW_NUMBER() ... = 1 / <= N over insert-only "
                    "rows)")
        msg = (f"{what} has no Spark Structured Streaming translation yet; run it with "
               "'execution.runtime-mode' = 'batch' or on the native runtime")
        raise NotSupportedError(msg)
    if isinstance(op, WindowAssignSpec) and op.window_kind == "cumulate" and \
            not op.drop_late:
        msg = ("a CUMULATE TVF on its own has no Spark Structured Streaming translation yet "
               "(under a window aggregation it runs)")
        raise NotSupportedError(msg)
    if isinstance(op, JoinSpec | WindowJoinSpec):
        _check_streamable_join(op)
    if isinstance(op, JoinSpec) and (op.ttl or op.right_ttl):  # (Spark's join: for ever)
        msg = (f"{op.label()} with a state TTL ('table.exec.state.ttl' or a STATE_TTL hint) "
               "has no Spark Structured Streaming translation (Spark keeps a regular join's "
               "state for ever); use the native runtime")
        raise NotSupportedError(msg)
    if isinstance(op, GroupAggregateSpec | GlobalAggregateSpec | TopNSpec) and op.ttl:
        msg = (f"{op.label()} with 'table.exec.state.ttl' has no Spark Structured Streaming "
               "translation (Spark keeps its state for ever); use the native runtime")
        raise NotSupportedError(msg)
    if isinstance(op, TableScanSpec) and op.source.option(
            "scan.watermark.emit.strategy") == "on-event":
        msg = (f"table {op.source.table!r}: 'scan.watermark.emit.strategy' = 'on-event' "
               "cannot run on Spark Structured Streaming (Spark moves its watermark once "
               "per micro-batch)")
        raise NotSupportedError(msg)
    # (a Python aggregate function: in a window aggregation its rows are collected per
    # window and the function runs on them when the window is emitted (_python_values); in a
    # GROUP BY its accumulator is kept by our stateful operator; OVER has no streaming
    # translation)
    # (COUNT / SUM / AVG (DISTINCT x) run as aggregates of collect_set(x), MIN / MAX
    # (DISTINCT x) as MIN / MAX (x): aggregates.distinct_from_set)


# Where the optimizer's joins of these kinds come from (named in refusals).
_JOIN_ORIGINS = {"semi": " (from EXISTS, IN or ANY)", "anti": " (from NOT EXISTS)",
                 "left": " (from LEFT JOIN, a subquery's value, NOT IN or ALL)",
                 "full": " (from FULL JOIN)"}


def _check_streamable_join(op: JoinSpec | WindowJoinSpec) -> None:
    """Spark joins two streams inner only, on an equality: its outer and semi joins
    of streams need watermarks on both sides and an event-time range in the condition
    (a regular join keeps its state for ever), and it has no anti join of two streams. A
    regular join of another kind (or of a changelog) runs as the native join in our stateful
    operator (runtime/spark/stateful_join.py), which needs an equality key too."""
    kind = f"{op.join_kind.upper()} join{_JOIN_ORIGINS.get(op.join_kind, '')}"
    article = "an" if op.join_kind in ("inner", "anti") else "a"
    if not op.left_keys:
        what = "a cross join" if op.condition is None else "a non-equi join"
        msg = (f"{article} {kind} without an equality key ({what}) has no Spark Structured "
               "Streaming translation: Spark joins two streams only on an equality; use "
               "'execution.runtime-mode' = 'batch' or the native runtime")
        raise NotSupportedError(msg)
    if isinstance(op, JoinSpec):
        return
    if op.join_kind == "anti":
        msg = (f"an {kind} has no Spark Structured Streaming translation: Spark has no "
               "anti join of two streams; use 'execution.runtime-mode' = 'batch' or the "
               "native runtime")
        raise NotSupportedError(msg)
    if op.join_kind != "inner" and isinstance(op, WindowJoinSpec):
        msg = (f"a {op.join_kind.upper()} window join has no Spark Structured Streaming "
               "translation yet (an INNER window join runs); use the native runtime")
        raise NotSupportedError(msg)
    if op.join_kind != "inner":
        msg = (f"a {kind} has no Spark Structured Streaming translation: Spark joins two "
               "streams so only with watermarks on both and an event-time range in the "
               "condition (a regular join keeps its state for ever); use "
               "'execution.runtime-mode' = 'batch' or the native runtime")
        raise NotSupportedError(msg)


def _delay(watermark: tuple[int, Any] | None) -> int:
    """The out-of-orderness of ``WATERMARK FOR ts AS ts - INTERVAL ...`` in milliseconds."""
    if watermark is None:
        return 0
    expr = watermark[1]
    if isinstance(expr, ColumnRef):
        return 0
    if isinstance(expr, Call) and expr.name == "subtract" and \
            isinstance(expr.args[0], ColumnRef) and isinstance(expr.args[1], Literal) and \
            isinstance(expr.args[1].value, dt.timedelta):
        return int(expr.args[1].value.total_seconds() * 1000)
    msg = (f"the watermark {expr.sql()} has no Spark form: Spark takes "
           "'rowtime - INTERVAL ...' only")
    raise NotSupportedError(msg)
