"""Operator specs: what one physical operator does, as data (the optimizer -> runtime
contract). One frozen dataclass per operator; the runtime (native factory, Spark translator)
dispatches on the type and builds the live operator. Each spec names itself in EXPLAIN by
``label()``; ``type_name`` is its name in the JSON plan only.

The window and time-bound operators are in optimizer/specs_windows.py."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import AggCall, Expr


class ChainStrategy(Enum):
    """Flink's ChainingStrategy."""

    ALWAYS = "ALWAYS"
    HEAD = "HEAD"
    NEVER = "NEVER"


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorSpec:
    """The common part of every operator spec: data, not a live operator."""

    type_name: ClassVar[str] = "operator"  # the operator's name in the JSON plan

    schema: N.Schema  # output schema (data columns; a row-kind column rides along if updating)
    updating: bool = False  # whether the output is an updating changelog
    chain_strategy: ChainStrategy = ChainStrategy.ALWAYS

    def label(self) -> str:
        """The operator's name in EXPLAIN's Job Graph section."""
        return self.type_name


def exprs_text(exprs: tuple[Expr, ...] | tuple[AggCall, ...]) -> str:
    return ", ".join(e.sql() for e in exprs)


def sort_keys_text(keys: tuple[N.SortKey, ...]) -> str:
    return ", ".join(k.sql() for k in keys)


# -- sources and sinks ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class TableScanSpec(OperatorSpec):
    """Reads a table through its connector (projection and filters pushed into the read)."""

    type_name: ClassVar[str] = "source"

    table: str
    source: N.SourceSpec
    table_schema: N.Schema
    projection: tuple[int, ...] | None = None
    filters: tuple[Expr, ...] = ()
    bounded: bool = True
    event_time: bool = True  # watermarks from the data (batch mode: only at the end)

    def label(self) -> str:
        return f"Source({self.table})"

    def read_detail(self) -> str:
        """What the source reads, as its label's tail: ", fields=[..], filters=[..])"."""
        text = ""
        proj = self.projection
        if proj is not None and len(proj) < len(self.table_schema):
            text += ", fields=[" + ", ".join(self.table_schema.fields[i].name
                                             for i in proj) + "]"
        if self.filters:
            text += ", filters=[" + exprs_text(self.filters) + "]"
        text += N.partition_detail(self.source, self.table_schema, self.filters)
        return text + ")"


@dataclass(frozen=True, slots=True, kw_only=True)
class ValuesSpec(OperatorSpec):
    type_name: ClassVar[str] = "values"

    rows: tuple[tuple[Expr, ...], ...]

    def label(self) -> str:
        return f"Values(rows={len(self.rows)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableSinkSpec(OperatorSpec):
    """Writes into a table through its connector."""

    type_name: ClassVar[str] = "sink"

    table: str
    target: N.SinkSpec
    input_updating: bool = False

    def label(self) -> str:
        return f"Sink({self.table})"


# -- stateless ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class FilterSpec(OperatorSpec):
    type_name: ClassVar[str] = "filter"

    predicate: Expr

    def label(self) -> str:
        return f"Filter({self.predicate.sql()})"


@dataclass(frozen=True, slots=True, kw_only=True)
class ProjectSpec(OperatorSpec):
    type_name: ClassVar[str] = "project"

    exprs: tuple[Expr, ...]

    def label(self) -> str:
        return f"Project({', '.join(self.schema.names())})"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnionSpec(OperatorSpec):
    type_name: ClassVar[str] = "union"

    inputs: int

    def label(self) -> str:
        return "Union"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpandSpec(OperatorSpec):
    type_name: ClassVar[str] = "expand"

    projections: tuple[tuple[Expr, ...], ...]

    def label(self) -> str:
        return f"Expand({len(self.projections)} projections)"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplicateRowsSpec(OperatorSpec):
    type_name: ClassVar[str] = "replicate_rows"

    def label(self) -> str:
        return "ReplicateRows"


@dataclass(frozen=True, slots=True, kw_only=True)
class StatementSetSpec(OperatorSpec):
    """The end of a statement set's job: its sinks' (empty) outputs meet here."""

    type_name: ClassVar[str] = "statement_set"

    def label(self) -> str:
        return "StatementSet"


@dataclass(frozen=True, slots=True, kw_only=True)
class UnnestSpec(OperatorSpec):
    """Each row once per element of its last column (runtime.operators.unnest)."""

    type_name: ClassVar[str] = "unnest"
    ordinality: bool = False
    outer: bool = False

    def label(self) -> str:
        return "Unnest" + ("(WITH ORDINALITY)" if self.ordinality else "") + \
            ("(outer)" if self.outer else "")


# -- aggregates -----------------------------------------------------------------------------
def _aggregate_label(name: str, keys: tuple[Expr, ...], aggs: tuple[AggCall, ...]) -> str:
    return f"{name}(keys=[{exprs_text(keys)}], aggs=[{exprs_text(aggs)}])"


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupAggregateSpec(OperatorSpec):
    """GROUP BY in one phase: 'changelog' (streaming) or 'final' (batch) results."""

    type_name: ClassVar[str] = "group_aggregate"

    keys: tuple[Expr, ...]
    aggs: tuple[AggCall, ...]
    key_names: tuple[str, ...]
    agg_names: tuple[str, ...]
    input_updating: bool = False
    emit: str = "final"  # "changelog" | "final"
    ttl: int = 0  # ms a group's state outlives its last row ('table.exec.state.ttl'; 0: ever)

    def label(self) -> str:
        return _aggregate_label("GroupAggregate", self.keys, self.aggs)


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalAggregateSpec(OperatorSpec):
    """The local phase of a two-phase aggregation: partials per batch (before the shuffle)."""

    type_name: ClassVar[str] = "local_aggregate"

    keys: tuple[Expr, ...]
    aggs: tuple[AggCall, ...]

    def label(self) -> str:
        return _aggregate_label("LocalAggregate", self.keys, self.aggs)


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobalAggregateSpec(OperatorSpec):
    """The global phase of a two-phase aggregation: merges the partials."""

    type_name: ClassVar[str] = "global_aggregate"

    keys: tuple[Expr, ...]
    aggs: tuple[AggCall, ...]
    key_names: tuple[str, ...]
    agg_names: tuple[str, ...]
    partial_schema: N.Schema
    emit: str = "final"  # "changelog" | "final"
    ttl: int = 0  # (as GroupAggregateSpec's)

    def label(self) -> str:
        return _aggregate_label("GlobalAggregate", self.keys, self.aggs)


# -- joins ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class JoinSpec(OperatorSpec):
    """A regular join: hash join on the keys (nested loops without keys, both inputs in one
    subtask); in streaming mode both sides are kept as state."""

    type_name: ClassVar[str] = "join"

    join_kind: str  # inner | left | full | semi | anti
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    condition: Expr | None
    left_width: int
    right_schema: N.Schema | None = None  # (semi and anti joins do not output it)
    emit: str = "final"  # "stream" | "final"
    ttl: int = 0  # ms of state retention (0: for ever)
    right_ttl: int | None = None  # the right side's, when a STATE_TTL hint sets its own
    build_side: int | None = None  # the side a batch join builds its hash table on
    # A join hint's (BROADCAST | SHUFFLE_HASH, the side it names): batch mode's strategy
    hint: tuple[str, int] | None = None
    # State rows that can no longer match (optimizer/passes/create_graph.py: _evictions):
    # (side, column of that side, offset): rows with column < watermark + offset are dropped.
    evict: tuple[tuple[int, int, int], ...] = ()

    def label(self) -> str:
        side = "" if self.build_side is None else \
            f", build={('left', 'right')[self.build_side]}"
        evict = "".join(
            f", {('left', 'right')[s]} rows dropped at {self._column(s, c)} < watermark "
            f"{'+' if o >= 0 else '-'} {abs(o)} ms" for s, c, o in self.evict)
        hint = "" if self.hint is None else \
            f", hint={self.hint[0]}({('left', 'right')[self.hint[1]]})"
        return f"Join({self.join_kind}{side}{hint}{evict})"

    def _column(self, side: int, column: int) -> str:
        return self.schema.fields[column + (self.left_width if side else 0)].name


# -- order and limits -----------------------------------------------------------------------
@dataclass(frozen=True, slots=True, kw_only=True)
class SortSpec(OperatorSpec):
    type_name: ClassVar[str] = "sort"

    keys: tuple[N.SortKey, ...]
    fetch: int | None = None
    offset: int = 0
    input_updating: bool = False

    def label(self) -> str:
        fetch = f", fetch={self.fetch}" if self.fetch is not None else ""
        return f"Sort({sort_keys_text(self.keys)}{fetch})"


@dataclass(frozen=True, slots=True, kw_only=True)
class TemporalSortSpec(OperatorSpec):
    """Flink's streaming ORDER BY of an insert-only input on an ascending time attribute
    first (StreamExecTemporalSort): by a rowtime, rows wait for the watermark to pass their
    time and leave in order; by PROCTIME(), rows leave as they come."""

    type_name: ClassVar[str] = "temporal_sort"

    keys: tuple[N.SortKey, ...]  # the time column's key first, then the others
    time_index: int
    time_kind: str  # "ROWTIME" | "PROCTIME"

    def label(self) -> str:
        return f"TemporalSort(orderBy=[{sort_keys_text(self.keys)}], {self.time_kind.lower()})"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowFunctionsSpec(OperatorSpec):
    type_name: ClassVar[str] = "window_functions"

    partition: tuple[Expr, ...]
    order: tuple[N.SortKey, ...]
    calls: tuple[N.WindowCall, ...]
    input_schema: N.Schema
    # Partitioned by a window's bounds in streaming mode: the window_end column, each
    # window's rows computed when the watermark passes its end (-1: at the input's end).
    end_index: int = -1
    zone: str = ""  # windows of this zone's wall clock fire by it (see WindowTVF.zone)

    def label(self) -> str:
        part = exprs_text(self.partition)
        fire = ", per window" if self.end_index >= 0 else ""
        return (f"WindowFunctions(partition=[{part}], order=[{sort_keys_text(self.order)}], "
                f"calls=[{', '.join(c.sql() for c in self.calls)}]{fire})")


@dataclass(frozen=True, slots=True, kw_only=True)
class LimitSpec(OperatorSpec):
    type_name: ClassVar[str] = "limit"

    fetch: int | None
    offset: int = 0
    input_updating: bool = False

    def label(self) -> str:
        return f"Limit(fetch={self.fetch}, offset={self.offset})"


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeSampleSpec(OperatorSpec):
    """Range sort, step 1: a reservoir sample of the sort keys per subtask."""

    type_name: ClassVar[str] = "range_sample"

    keys: tuple[N.SortKey, ...]
    size: int

    def label(self) -> str:
        return f"RangeSample({sort_keys_text(self.keys)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeBoundariesSpec(OperatorSpec):
    """Range sort, step 2: parallelism - 1 boundaries from all samples."""

    type_name: ClassVar[str] = "range_boundaries"

    keys: tuple[N.SortKey, ...]
    parallelism: int

    def label(self) -> str:
        return f"RangeBoundaries({sort_keys_text(self.keys)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeAssignSpec(OperatorSpec):
    """Range sort, step 3: each row gets the subtask of its range (a "$part" column)."""

    type_name: ClassVar[str] = "range_assign"

    keys: tuple[N.SortKey, ...]

    def label(self) -> str:
        return f"RangeAssign({sort_keys_text(self.keys)})"


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderedConcatSpec(OperatorSpec):
    """Range sort, last step: the sorted ranges concatenated in range order."""

    type_name: ClassVar[str] = "ordered_concat"

    width: int  # data columns (the "$part" column after them is dropped)
    per_channel: bool = True  # one input channel per upstream subtask, read in their order

    def label(self) -> str:
        return "OrderedConcat"
