"""Operator spec (plan data, optimizer/specs.py) -> live runtime operator.

An operator's module is imported when a plan first needs it, so a job starts without loading
the code of operators it does not use.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa

from sqlengine import connectors
from sqlengine.errors import NotSupportedError
from sqlengine.functions_python import is_python
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
    StatementSetSpec,
    TableScanSpec,
    TableSinkSpec,
    TemporalSortSpec,
    UnionSpec,
    UnnestSpec,
    ValuesSpec,
    WindowFunctionsSpec,
)
from sqlengine.optimizer.specs_iteration import IterateSpec, IterationSourceSpec
from sqlengine.optimizer.specs_lookup import LookupJoinSpec
from sqlengine.optimizer.specs_windows import (
    IntervalJoinSpec,
    LocalWindowAggregateSpec,
    MatchRecognizeSpec,
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
from sqlengine.plan.expressions import Expr
from sqlengine.runtime.elements import Watermark, rows_only
from sqlengine.runtime.operators.base import Operator, OperatorContext
from sqlengine.runtime.operators.sink import CollectSink, ConnectorSink
from sqlengine.runtime.operators.source import SourceOperator
from sqlengine.runtime.operators.stateless import (
    ExpandOperator,
    FilterOperator,
    ProjectOperator,
    ReplicateRowsOperator,
    StatementSetOperator,
    UnionOperator,
    carry_into,
)
from sqlengine.runtime.values import values_columns


class ValuesOperator(Operator):
    name = "Values"
    state_fields = ()

    def __init__(self, rows: tuple[tuple[Expr, ...], ...], schema: pa.Schema) -> None:
        self.rows = rows
        self.schema = schema

    def values_batches(self) -> list[pa.RecordBatch]:
        if not self.schema.names:
            return [rows_only(len(self.rows))]  # SELECT without FROM
        arrays = values_columns(self.rows, self.schema)
        return [pa.RecordBatch.from_arrays(arrays, schema=self.schema)]

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return (batch,)


class SinkOperator(Operator):
    """A sink with its table name (for row counts); delegates to the connector's writer. In
    a checkpointing job a connector that commits on checkpoints (the filesystem's) writes
    through its committing writer instead."""

    def __init__(self, table: str, inner: Operator, spec: TableSinkSpec | None = None) -> None:
        self.table_name = table
        self.inner = inner
        self.name = inner.name
        self.spec = spec

    @property
    def rows(self) -> int:
        return getattr(self.inner, "rows", 0)

    @property
    def guarantee(self) -> str | None:
        """What a restored job promises of this sink's rows (None: it cannot checkpoint)."""
        if isinstance(self.inner, ConnectorSink):
            return type(self.inner.writer).guarantee
        return "at-least-once"  # (the collect sink: rows handed out are not taken back)

    def open(self, ctx: OperatorContext) -> None:
        super().open(ctx)
        from sqlengine.runtime.checkpoint.config import INTERVAL

        if isinstance(self.inner, ConnectorSink) and \
                isinstance(getattr(self.inner.writer, "subtask", None), int):
            self.inner.writer.subtask = ctx.subtask  # (part files named by subtask)

        if ctx.options.get(INTERVAL) and self.spec is not None and \
                isinstance(self.inner, ConnectorSink):
            target = self.spec.target
            options = dict(target.options)
            found = connectors.find(target.connector)
            writer = None if found is None or options.get("$overwrite") == "true" else \
                found.open_committing_sink(target.table, ConnectorSink.clean_options(options),
                                           target.schema.to_arrow(), ctx.subtask)
            if writer is not None:
                writer.set_tokens(ctx.options.get("$sink-token"),
                                  ctx.options.get("$stale-sink-tokens", ""))
            if writer is not None:  # (the plain writer has not begun a file: dropped)
                self.inner.writer = writer

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return self.inner.process_batch(batch, input_index)

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        return self.inner.process_watermark(wm)

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        return self.inner.end_input(input_index)

    def prepare_snapshot(self, checkpoint: int) -> None:
        self.inner.prepare_snapshot(checkpoint)

    def snapshot_state(self) -> dict[str, object]:
        return self.inner.snapshot_state()

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        self.inner.restore_from(states, subtask, parallelism)

    def notify_checkpoint_complete(self, checkpoint: int) -> None:
        self.inner.notify_checkpoint_complete(checkpoint)

    def close(self) -> None:
        self.inner.close()


def build_chain(specs: Sequence[OperatorSpec], tables: dict[str, object]) -> list[Operator]:
    """The live operators of a chain, in order; a Filter (or a Source applying pushed
    filters) followed by a Project hands the Project what both compute
    (runtime/operators/stateless.py: carry_into)."""
    ops = [build_operator(spec, tables) for spec in specs]
    for first, second in itertools.pairwise(ops):
        if isinstance(first, FilterOperator | SourceOperator) and \
                isinstance(second, ProjectOperator):
            carry_into(first, second)
    return ops


def build_operator(spec: OperatorSpec, tables: dict[str, object]) -> Operator:
    """The live operator of ``spec`` (dispatched on the spec's type)."""
    schema = spec.schema.to_arrow()
    match spec:
        case TableScanSpec():
            return SourceOperator(spec.source, spec.table_schema.to_arrow(), spec.projection,
                                  spec.filters, tables.get(spec.source.table.lower()),
                                  spec.event_time)
        case ValuesSpec():
            return ValuesOperator(spec.rows, schema)
        case FilterSpec():
            return FilterOperator(spec.predicate)
        case ProjectSpec():
            return ProjectOperator(spec.exprs, schema)
        case WindowFunctionsSpec() if spec.end_index >= 0:
            from sqlengine.runtime.operators.window_functions import (
                WindowedFunctionsOperator,
            )
            windowed = WindowedFunctionsOperator(spec.partition, spec.order, spec.calls,
                                                 schema, spec.input_schema.to_arrow(),
                                                 spec.end_index)
            windowed.zone = spec.zone
            return windowed
        case WindowFunctionsSpec():
            from sqlengine.runtime.operators.window_functions import WindowFunctionsOperator
            return WindowFunctionsOperator(
                spec.partition, spec.order, spec.calls, schema, spec.input_schema.to_arrow(),
                loose=tuple(i for i, f in enumerate(spec.input_schema.fields) if f.proctime))
        case ExpandSpec():
            return ExpandOperator(spec.projections, schema)
        case ReplicateRowsSpec():
            return ReplicateRowsOperator(schema)
        case StatementSetSpec():
            return StatementSetOperator()
        case UnnestSpec():
            from sqlengine.runtime.operators.unnest import UnnestOperator
            return UnnestOperator(schema, spec.ordinality, spec.outer)
        case UnionSpec():
            return UnionOperator(schema, spec.updating)
        case LookupJoinSpec():
            from sqlengine.runtime.operators.lookup_join import LookupJoinOperator
            return LookupJoinOperator(spec, schema)
        case IterateSpec():
            from sqlengine.runtime.operators.iterate import IterateOperator
            return IterateOperator(spec, schema, tables)
        case IterationSourceSpec():
            from sqlengine.runtime.operators.iterate import IterationSourceOperator
            return IterationSourceOperator(spec.index)
        case GroupAggregateSpec():
            from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
            return GroupAggregateOperator(spec.keys, spec.aggs, schema, spec.emit,
                                          input_updating=spec.input_updating, ttl_ms=spec.ttl)
        case JoinSpec():
            left, right = _split(schema, spec.left_width)
            if spec.right_schema is not None:
                right = spec.right_schema.to_arrow()
            from sqlengine.runtime.operators.join import JoinOperator
            join = JoinOperator(spec.join_kind, spec.left_keys, spec.right_keys, spec.condition,
                                left, right, schema, spec.emit, spec.ttl, spec.updating,
                                build_side=spec.build_side, right_ttl_ms=spec.right_ttl)
            join.evict = spec.evict
            return join
        case RangeSampleSpec():
            from sqlengine.runtime.operators.range_sort import RangeSampleOperator
            return RangeSampleOperator(spec.keys, spec.size)
        case RangeBoundariesSpec():
            from sqlengine.runtime.operators.range_sort import RangeBoundariesOperator
            return RangeBoundariesOperator(spec.keys, spec.parallelism)
        case RangeAssignSpec():
            from sqlengine.runtime.operators.range_sort import RangeAssignOperator
            return RangeAssignOperator(spec.keys, schema)
        case OrderedConcatSpec():
            from sqlengine.runtime.operators.range_sort import OrderedConcatOperator
            return OrderedConcatOperator(spec.width)
        case LocalAggregateSpec():
            from sqlengine.runtime.operators.two_phase import LocalAggregateOperator
            return LocalAggregateOperator(spec.keys, spec.aggs)
        case GlobalAggregateSpec() if spec.emit == "changelog" or any(
                is_python(a.func) for a in spec.aggs):
            # (streaming; or batch with Python aggregates, whose accumulators it merges)
            from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
            return GroupAggregateOperator(spec.keys, spec.aggs, schema, spec.emit, merge=True,
                                          ttl_ms=spec.ttl)
        case GlobalAggregateSpec():
            from sqlengine.runtime.operators.two_phase import GlobalAggregateOperator
            return GlobalAggregateOperator(spec.keys, spec.aggs, spec.partial_schema.to_arrow(),
                                           schema)
        case WindowAssignSpec():
            from sqlengine.runtime.operators.window import WindowAssignOperator
            return WindowAssignOperator(spec.window_kind, spec.time_index, spec.size,
                                        spec.slide, spec.offset, spec.lateness, schema,
                                        spec.proctime, spec.drop_late, spec.sliced, spec.zone)
        case LocalWindowAggregateSpec():
            from sqlengine.runtime.operators.window_two_phase import LocalWindowAggregateOperator
            return LocalWindowAggregateOperator(spec.keys, spec.aggs, schema,
                                                signed=spec.input_updating)
        case WindowAggregateSpec() if spec.merges_partials:
            from sqlengine.plan.nodes import Schema
            from sqlengine.plan.partials import partial_fields, with_row_count
            from sqlengine.runtime.operators.window_two_phase import (
                GlobalWindowAggregateOperator,
            )
            fields = partial_fields(spec.keys, with_row_count(spec.aggs)) or []
            op = GlobalWindowAggregateOperator(
                spec.keys, spec.aggs, schema, Schema(tuple(fields)).to_arrow(), spec.end_pos,
                spec.start_pos, spec.slice_size, spec.slice_step, signed=spec.input_updating)
            op.partition_keys = [f"k{i}" for i in range(len(spec.keys))
                                 if i not in (spec.start_pos, spec.end_pos)]
            op.zone = spec.zone
            return op
        case WindowAggregateSpec():
            from sqlengine.runtime.operators.window import WindowAggregateOperator
            op = WindowAggregateOperator(spec.keys, spec.aggs, schema, spec.end_pos,
                                         spec.lateness, spec.proctime, spec.start_pos,
                                         spec.slice_size, spec.slice_step,
                                         signed=spec.input_updating)
            # (the exchange before it hashes the group keys but the window's bounds)
            op.partition_keys = [f"k{i}" for i in range(len(spec.keys))
                                 if i not in (spec.start_pos, spec.end_pos)]
            op.zone = spec.zone
            return op
        case SessionAggregateSpec():
            from sqlengine.runtime.operators.window import SessionAggregateOperator
            return SessionAggregateOperator(spec.keys, spec.aggs, schema, spec.start_pos,
                                            spec.end_pos, spec.gap, spec.time_pos,
                                            signed=spec.input_updating, zone=spec.zone)
        case TopNSpec() if spec.keep == "FirstRow":
            from sqlengine.runtime.operators.deduplicate import FirstRowOperator
            return FirstRowOperator(spec.partition, schema, spec.time_index
                                    if spec.time_kind == "ROWTIME" else None, ttl_ms=spec.ttl)
        case TopNSpec():
            from sqlengine.runtime.operators.rank import TopNOperator
            return TopNOperator(spec.partition, spec.order, spec.limit, schema, spec.emit,
                                spec.output_rank, spec.keep, spec.time_kind, spec.retract,
                                ttl_ms=spec.ttl)
        case WindowTopNSpec():
            from sqlengine.runtime.operators.rank import WindowTopNOperator
            top = WindowTopNOperator(spec.partition, spec.order, spec.limit, schema,
                                     spec.end_index, spec.keep)
            top.exchange_keys = spec.exchange_keys
            top.zone = spec.zone
            return top
        case MatchRecognizeSpec():
            from sqlengine.runtime.operators.match_recognize import MatchRecognizeOperator
            return MatchRecognizeOperator(spec.spec, spec.input_schema.to_arrow(), schema)
        case OverAggregateSpec():
            from sqlengine.runtime.operators.over import OverAggregateOperator
            return OverAggregateOperator(spec.partition, spec.time_index, spec.frame,
                                         spec.preceding, spec.aggs, schema, ttl_ms=spec.ttl)
        case WindowJoinSpec():
            left, right = _split(schema, spec.left_width)
            if spec.right_schema is not None:
                right = spec.right_schema.to_arrow()
            from sqlengine.runtime.operators.window_join import WindowJoinOperator
            join = WindowJoinOperator(spec.join_kind, spec.left_keys, spec.right_keys,
                                      spec.condition, left, right, schema, spec.end_indexes)
            join.zone = spec.zone
            return join
        case SessionAssignSpec():
            from sqlengine.runtime.operators.session_assign import SessionAssignOperator
            return SessionAssignOperator(spec.partition, spec.start_pos, spec.gap, schema,
                                         spec.zone)
        case TemporalJoinSpec():
            left, right = _split(schema, spec.left_width)
            from sqlengine.runtime.operators.temporal_join import TemporalJoinOperator
            return TemporalJoinOperator(spec.join_kind, spec.left_keys, spec.right_keys,
                                        spec.condition, left, right, schema, spec.left_time,
                                        spec.right_time, spec.monotonic_versions)
        case IntervalJoinSpec():
            left, right = _split(schema, spec.left_width)
            from sqlengine.runtime.operators.interval_join import IntervalJoinOperator
            return IntervalJoinOperator(spec.join_kind, spec.left_keys, spec.right_keys,
                                        spec.condition, left, right, schema, spec.left_time,
                                        spec.right_time, spec.lower, spec.upper)
        case SortSpec():
            from sqlengine.runtime.operators.sort import SortOperator
            return SortOperator(spec.keys, spec.fetch, spec.offset, schema)
        case TemporalSortSpec():
            from sqlengine.runtime.operators.temporal_sort import TemporalSortOperator
            return TemporalSortOperator(spec.keys, spec.time_index, spec.time_kind, schema)
        case LimitSpec():
            from sqlengine.runtime.operators.sort import LimitOperator
            return LimitOperator(spec.fetch, spec.offset, schema, spec.input_updating)
        case TableSinkSpec():
            return sink_operator(spec)
        case _:
            msg = f"no runtime operator for {type(spec).__name__}"
            raise NotSupportedError(msg)


def _split(schema: pa.Schema, left_width: int) -> tuple[pa.Schema, pa.Schema]:
    """A join's output schema as its left and right inputs' schemas."""
    return pa.schema(list(schema)[:left_width]), pa.schema(list(schema)[left_width:])


def sink_operator(spec: TableSinkSpec) -> Operator:
    """The writer of the sink table's connector."""
    target = spec.target
    table = target.table
    if target.connector == "collect":
        return SinkOperator(table, CollectSink(), spec)
    return SinkOperator(table, ConnectorSink.open(table, target.connector, dict(target.options),
                                                  target.schema.to_arrow()), spec)
