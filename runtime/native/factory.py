"""OperatorSpec (plan data) -> live runtime operator."""

from __future__ import annotations

import pyarrow as pa
from sqlengine.optimizer.physical import OperatorSpec
from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.interval_join import IntervalJoinOperator
from sqlengine.runtime.operators.join import JoinOperator
from sqlengine.runtime.operators.over import OverAggregateOperator
from sqlengine.runtime.operators.range_sort import (
    OrderedConcatOperator,
    RangeAssignOperator,
    RangeBoundariesOperator,
    RangeSampleOperator,
)
from sqlengine.runtime.operators.rank import TopNOperator, WindowTopNOperator
from sqlengine.runtime.operators.sink import CollectSink, ConnectorSink
from sqlengine.runtime.operators.sort import LimitOperator, SortOperator
from sqlengine.runtime.operators.source import SourceOperator
from sqlengine.runtime.operators.stateless import FilterOperator, ProjectOperator, UnionOperator
from sqlengine.runtime.operators.two_phase import GlobalAggregateOperator, LocalAggregateOperator
from sqlengine.runtime.operators.window import (
    SessionAggregateOperator,
    WindowAggregateOperator,
    WindowAssignOperator,
)
from sqlengine.runtime.operators.window_join import WindowJoinOperator
from sqlengine.runtime.values import values_columns

from sqlengine.errors import NotSupportedError
from sqlengine.plan.expressions import Expr


class ValuesOperator(Operator):
    name = "Values"

    def __init__(self, rows: tuple[tuple[Expr, ...], ...], schema: pa.Schema) -> None:
        self.rows = rows
        self.schema = schema

    def values_batches(self) -> list[pa.RecordBatch]:
        if not self.schema.names:
            # SELECT without FROM: one row, no columns; keep a placeholder column so the batch
            # has a row count.
            return [pa.record_batch([pa.array([0] * len(self.rows))], names=["$dummy"])]
        arrays = values_columns(self.rows, self.schema)
        return [pa.RecordBatch.from_arrays(arrays, schema=self.schema)]

    def process_batch(self, batch, input_index=0):  # type: ignore[no-untyped-def]
        return (batch,)


class SinkOperator(Operator):
    """A sink with its table name (for row counts); delegates to the connector's writer."""

    def __init__(self, table: str, inner: Operator) -> None:
        self.table_name = table
        self.inner = inner
        self.name = inner.name

    @property
    def rows(self) -> int:
        return getattr(self.inner, "rows", 0)

    def process_batch(self, batch, input_index=0):  # type: ignore[no-untyped-def]
        return self.inner.process_batch(batch, input_index)

    def end_input(self, input_index=0):  # type: ignore[no-untyped-def]
        return self.inner.end_input(input_index)

    def close(self) -> None:
        self.inner.close()


def build_operator(spec: OperatorSpec, tables: dict[str, object]) -> Operator:
    p = dict(spec.params)
    schema = spec.schema.to_arrow()
    match spec.kind:
        case "source":
            src = p["source"]
            return SourceOperator(src, p["table_schema"].to_arrow(), p["projection"],  # type: ignore[union-attr]
                                  p["filters"], tables.get(src.table.lower()),  # type: ignore[union-attr, arg-type]
                                  bool(p.get("event_time", True)))
        case "values":
            return ValuesOperator(p["rows"], schema)  # type: ignore[arg-type]
        case "filter":
            return FilterOperator(p["predicate"])  # type: ignore[arg-type]
        case "project":
            return ProjectOperator(p["exprs"], schema)  # type: ignore[arg-type]
        case "union":
            return UnionOperator(schema, spec.updating)
        case "group_aggregate":
            return GroupAggregateOperator(p["keys"], p["aggs"], schema, p["emit"])  # type: ignore[arg-type]
        case "join":
            width = int(p["left_width"])  # type: ignore[arg-type]
            left = pa.schema(list(schema)[:width])
            right = pa.schema(list(schema)[width:])
            return JoinOperator(p["join_kind"], p["left_keys"], p["right_keys"],  # type: ignore[arg-type]
                                p["condition"], left, right, schema, p["emit"],  # type: ignore[arg-type]
                                int(p.get("ttl", 0)), bool(p.get("updating", False)),  # type: ignore[arg-type]
                                build_side=p.get("build_side"))  # type: ignore[arg-type]
        case "range_sample":
            return RangeSampleOperator(p["keys"], int(p["size"]))  # type: ignore[arg-type]
        case "range_boundaries":
            return RangeBoundariesOperator(p["keys"], int(p["parallelism"]))  # type: ignore[arg-type]
        case "range_assign":
            return RangeAssignOperator(p["keys"], schema)  # type: ignore[arg-type]
        case "ordered_concat":
            return OrderedConcatOperator(int(p["width"]))  # type: ignore[arg-type]
        case "local_aggregate":
            return LocalAggregateOperator(p["keys"], p["aggs"])  # type: ignore[arg-type]
        case "global_aggregate" if p.get("emit") == "changelog":
            return GroupAggregateOperator(p["keys"], p["aggs"], schema,  # type: ignore[arg-type]
                                          "changelog", merge=True)
        case "global_aggregate":
            return GlobalAggregateOperator(p["keys"], p["aggs"],  # type: ignore[arg-type]
                                           p["partial_schema"].to_arrow(), schema)  # type: ignore[attr-defined]
        case "window_assign":
            return WindowAssignOperator(p["window_kind"], int(p["time_index"]),  # type: ignore[arg-type]
                                        int(p["size"]), int(p["slide"]), int(p["offset"]),  # type: ignore[arg-type]
                                        int(p["lateness"]), schema,  # type: ignore[arg-type]
                                        bool(p.get("proctime", False)))
        case "window_aggregate":
            return WindowAggregateOperator(p["keys"], p["aggs"], schema,  # type: ignore[arg-type]
                                           int(p["end_pos"]), int(p["lateness"]),  # type: ignore[arg-type]
                                           bool(p.get("proctime", False)))
        case "session_aggregate":
            return SessionAggregateOperator(p["keys"], p["aggs"], schema,  # type: ignore[arg-type]
                                            int(p["start_pos"]), int(p["end_pos"]),  # type: ignore[arg-type]
                                            int(p["gap"]))  # type: ignore[arg-type]
        case "top_n":
            return TopNOperator(p["partition"], p["order"], p["limit"], schema,  # type: ignore[arg-type]
                                str(p["emit"]), bool(p["output_rank"]))
        case "window_top_n":
            return WindowTopNOperator(p["partition"], p["order"], p["limit"], schema,  # type: ignore[arg-type]
                                      int(p["end_index"]))  # type: ignore[arg-type]
        case "over_aggregate":
            return OverAggregateOperator(p["partition"], int(p["time_index"]), str(p["frame"]),  # type: ignore[arg-type]
                                         p["preceding"], p["aggs"], schema)  # type: ignore[arg-type]
        case "window_join":
            width = int(p["left_width"])  # type: ignore[arg-type]
            return WindowJoinOperator(
                str(p["join_kind"]), p["left_keys"], p["right_keys"], p["condition"],  # type: ignore[arg-type]
                pa.schema(list(schema)[:width]), pa.schema(list(schema)[width:]), schema,
                p["end_indexes"])  # type: ignore[arg-type]
        case "interval_join":
            width = int(p["left_width"])  # type: ignore[arg-type]
            return IntervalJoinOperator(
                str(p["join_kind"]), p["left_keys"], p["right_keys"], p["condition"],  # type: ignore[arg-type]
                pa.schema(list(schema)[:width]), pa.schema(list(schema)[width:]), schema,
                int(p["left_time"]), int(p["right_time"]), int(p["lower"]), int(p["upper"]))  # type: ignore[arg-type]
        case "sort":
            return SortOperator(p["keys"], p["fetch"], int(p["offset"]), schema)  # type: ignore[arg-type]
        case "limit":
            return LimitOperator(p["fetch"], int(p["offset"]), schema,  # type: ignore[arg-type]
                                 bool(p["input_updating"]))
        case "sink":
            target = p["target"]
            table = target.table  # type: ignore[attr-defined]
            options = dict(target.options)  # type: ignore[attr-defined]
            connector = target.connector  # type: ignore[attr-defined]
            if connector == "collect":
                return SinkOperator(table, CollectSink())
            return SinkOperator(table, ConnectorSink.open(table, connector, options,
                                                          target.schema.to_arrow()))  # type: ignore[attr-defined]
        case _:
            msg = f"no runtime operator for {spec.kind!r}"
            raise NotSupportedError(msg)
