"""Operator specs of the window, rank, OVER and time-bound join operators (see
optimizer/specs.py for the common base and the other operators)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from sqlengine.optimizer.specs import OperatorSpec, exprs_text
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.match import MatchSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowAssignSpec(OperatorSpec):
    """A window table function (TUMBLE / HOP / CUMULATE): window columns for every row."""

    type_name: ClassVar[str] = "window_assign"

    window_kind: str  # tumble | hop | cumulate | session
    time_index: int
    size: int  # ms
    slide: int = 0  # ms
    offset: int = 0  # ms
    lateness: int = 0  # ms of allowed lateness
    proctime: bool = False  # windows over processing time
    text: str  # the window function as EXPLAIN shows it
    # Drop (row, window) pairs whose window has fired: only for a windowed aggregate or
    # Top-N above, which would otherwise take a late row into a window already emitted. On
    # its own the TVF keeps every row, late or not, as Flink's window table function does.
    drop_late: bool = False
    # HOP into a slicing window aggregate: each row once, window_end its slide-long slice's
    # end, window_start the end of its first window still open by the row's watermark (the
    # slice's end for a row on time); see WindowAggregateSpec.slice_size.
    sliced: bool = False
    zone: str = ""  # windows aligned to this zone's wall clock (see WindowTVF.zone)

    def label(self) -> str:
        return f"WindowTableFunction({self.text}{', sliced' if self.sliced else ''})"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowAggregateSpec(OperatorSpec):
    """GROUP BY window_start, window_end, ...: fired when the watermark passes a window."""

    type_name: ClassVar[str] = "window_aggregate"

    keys: tuple[Expr, ...]
    aggs: tuple[AggCall, ...]
    key_names: tuple[str, ...]
    start_pos: int
    end_pos: int
    lateness: int = 0
    proctime: bool = False
    # Slicing (HOP windows of slice_size ms every slice_step ms; 0: not sliced): its input
    # rows carry their slice as window_start / window_end; each window is merged from its
    # slices when it fires (Flink's SliceSharedAssigner / SlicingWindowOperator).
    slice_size: int = 0
    slice_step: int = 0
    # The global phase of a two-phase window aggregation: its input is the partial rows of
    # a LocalWindowAggregate (keys k0.., the partials, the rows they count), not rows.
    merges_partials: bool = False
    zone: str = ""  # windows of this zone's wall clock fire by it (see WindowTVF.zone)
    # Over an updating input (a CDC table; Flink 1.19's window aggregation over a
    # changelog): retractions count as negative rows, a window all of whose rows were
    # retracted is not emitted; the output stays insert-only.
    input_updating: bool = False

    def label(self) -> str:
        sliced = f", slices of {self.slice_step} ms" if self.slice_step else ""
        name = "GlobalWindowAggregate" if self.merges_partials else "WindowAggregate"
        changes = ", retractions" if self.input_updating else ""
        return (f"{name}(keys=[{exprs_text(self.keys)}], aggs=[{exprs_text(self.aggs)}]"
                f"{sliced}{changes})")


@dataclass(frozen=True, slots=True, kw_only=True)
class LocalWindowAggregateSpec(OperatorSpec):
    """The local phase of a two-phase window aggregation (Flink's LocalWindowAggregate):
    each batch's rows pre-aggregated per key and window (or slice), before the shuffle; the
    global phase (a WindowAggregateSpec with ``merges_partials``) merges them into its
    windows (slices) and fires them. Its output: the keys k0.., the aggregates'
    partial columns (sqlengine/plan/partials.py) and c<len(aggs)>, the rows each partial
    row stands for (what a late partial row counts as dropped)."""

    type_name: ClassVar[str] = "local_window_aggregate"

    keys: tuple[Expr, ...]
    aggs: tuple[AggCall, ...]
    slice_step: int = 0  # ms (0: its rows come with their windows, not slices)
    input_updating: bool = False  # (retractions are negative rows: WindowAggregateSpec)

    def label(self) -> str:
        sliced = f", slices of {self.slice_step} ms" if self.slice_step else ""
        changes = ", retractions" if self.input_updating else ""
        return (f"LocalWindowAggregate(keys=[{exprs_text(self.keys)}], "
                f"aggs=[{exprs_text(self.aggs)}]{sliced}{changes})")


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionAggregateSpec(OperatorSpec):
    """A window aggregate over SESSION windows (merged as rows arrive)."""

    type_name: ClassVar[str] = "session_aggregate"

    keys: tuple[Expr, ...]
    aggs: tuple[AggCall, ...]
    key_names: tuple[str, ...]
    start_pos: int
    end_pos: int
    gap: int  # ms
    time_pos: int = -1  # the key that is the TVF's window_time (its session's end - 1 ms)
    input_updating: bool = False  # (retractions are negative rows: WindowAggregateSpec)
    zone: str = ""  # sessions of this zone's wall clock fire by it (see WindowTVF.zone)

    def label(self) -> str:
        changes = ", retractions" if self.input_updating else ""
        return (f"SessionWindowAggregate(keys=[{exprs_text(self.keys)}], "
                f"aggs=[{exprs_text(self.aggs)}]{changes})")


@dataclass(frozen=True, slots=True, kw_only=True)
class TopNSpec(OperatorSpec):
    """ROW_NUMBER / RANK over a partition, perhaps cut to the top N."""

    type_name: ClassVar[str] = "top_n"

    partition: tuple[Expr, ...]
    order: tuple[N.SortKey, ...]
    limit: int | None
    text: str  # the ranking as EXPLAIN shows it
    emit: str = "final"  # "changelog" | "final"
    output_rank: bool = True
    # Flink's Deduplicate (streaming ROW_NUMBER = 1 ordered by one time attribute):
    # keep "FirstRow" (ASC) or "LastRow" (DESC) by "ROWTIME" or "PROCTIME"; "" for a Top-N.
    keep: str = ""
    time_kind: str = ""
    time_index: int = -1  # the ORDER BY time column of the input
    # Over an updating unbounded input: every live row kept, retractions taken out of them
    # (Flink's RetractableTopNFunction).
    retract: bool = False
    ttl: int = 0  # ms a partition's state outlives its last write ('table.exec.state.ttl')

    def label(self) -> str:
        if self.keep:
            return (f"Deduplicate(keep=[{self.keep}], key=[{exprs_text(self.partition)}], "
                    f"order=[{self.time_kind}])")
        return f"Rank({self.text})"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowTopNSpec(OperatorSpec):
    """The top N of every window, fired when the watermark passes the window's end."""

    type_name: ClassVar[str] = "window_top_n"

    partition: tuple[Expr, ...]
    order: tuple[N.SortKey, ...]
    limit: int | None
    text: str
    end_index: int  # the window_end column
    keep: str = ""  # window deduplication (ROW_NUMBER = 1 by rowtime): FirstRow | LastRow
    # What the exchange before it hashes: the partition keys but the window's bounds (a
    # rescaled restore splits its rows by them).
    exchange_keys: tuple[Expr, ...] = ()
    zone: str = ""  # windows of this zone's wall clock fire by it (see WindowTVF.zone)

    def label(self) -> str:
        if self.keep:
            return f"WindowDeduplicate(keep=[{self.keep}], {self.text})"
        return f"WindowRank({self.text})"


@dataclass(frozen=True, slots=True, kw_only=True)
class OverAggregateSpec(OperatorSpec):
    """Aggregates OVER (PARTITION BY ... ORDER BY time RANGE | ROWS ... PRECEDING)."""

    type_name: ClassVar[str] = "over_aggregate"

    partition: tuple[Expr, ...]
    time_index: int
    frame: str  # "range" | "rows"
    preceding: int | None  # ms for RANGE, a row count for ROWS, None for UNBOUNDED
    aggs: tuple[AggCall, ...]
    text: str
    # ms a key's state outlives its last row ('table.exec.state.ttl'; 0: for ever, and for a
    # bounded RANGE frame, which frees its rows by time and takes no TTL in Flink)
    ttl: int = 0

    def label(self) -> str:
        return f"OverAggregate({self.text})"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowJoinSpec(OperatorSpec):
    """A join of two windowed inputs on their windows, fired at each window's end."""

    type_name: ClassVar[str] = "window_join"

    join_kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    condition: Expr | None
    left_width: int
    end_indexes: tuple[int, int]  # the window_end column of each input
    zone: str = ""  # windows of this zone's wall clock fire by it (see WindowTVF.zone)
    right_schema: N.Schema | None = None  # (semi and anti joins do not output it)

    def label(self) -> str:
        return f"WindowJoin({self.join_kind})"


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionAssignSpec(OperatorSpec):
    """The SESSION TVF on its own: each row, once its session closes, with the session's
    window columns (after the WindowTableFunction's placeholder [t, t + gap) columns)."""

    type_name: ClassVar[str] = "session_assign"

    partition: tuple[int, ...]
    start_pos: int
    gap: int  # ms
    zone: str = ""  # sessions of this zone's wall clock close by it (see WindowTVF.zone)

    def label(self) -> str:
        return f"SessionAssign(gap={self.gap} ms)"


@dataclass(frozen=True, slots=True, kw_only=True)
class TemporalJoinSpec(OperatorSpec):
    """An event-time temporal join: left rows wait for the watermark, then meet the version
    of the right side valid at their time; versions older than that are dropped."""

    type_name: ClassVar[str] = "temporal_join"

    join_kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    condition: Expr | None
    left_width: int
    left_time: int
    right_time: int  # (within the right input)
    monotonic_versions: bool = False  # (a versioned view's rows: see N.TemporalJoin)

    def label(self) -> str:
        return f"TemporalJoin({self.join_kind}, FOR SYSTEM_TIME AS OF left time)"


@dataclass(frozen=True, slots=True, kw_only=True)
class IntervalJoinSpec(OperatorSpec):
    """A join whose condition bounds left time - right time (rows expire by the watermark)."""

    type_name: ClassVar[str] = "interval_join"

    join_kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    condition: Expr | None  # what remains of the condition besides the time bounds
    left_width: int
    left_time: int
    right_time: int  # (within the right input)
    lower: int  # ms
    upper: int  # ms

    def label(self) -> str:
        return (f"IntervalJoin({self.join_kind}, {self.lower} ms <= left time - right "
                f"time <= {self.upper} ms)")


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchRecognizeSpec(OperatorSpec):
    """MATCH_RECOGNIZE per PARTITION BY key (sqlengine/plan/match.py)."""

    type_name: ClassVar[str] = "match_recognize"

    spec: MatchSpec
    input_schema: N.Schema
    text: str

    def label(self) -> str:
        return f"MatchRecognize({self.text})"
