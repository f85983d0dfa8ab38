"""Logical plan nodes: small, frozen, hashable; each knows its schema, children and label."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from sqlengine.errors import PlanError
from sqlengine.plan.match import Bound, MatchSpec
from sqlengine.types import type_name

if TYPE_CHECKING:
    from sqlengine.plan.expressions import AggCall, Expr


@dataclass(frozen=True, slots=True)
class Field:
    """A named, typed column of a plan node's output."""

    name: str
    type: pa.DataType
    nullable: bool = True
    rowtime: bool = False  # an event-time attribute (a WATERMARK was declared on it)
    proctime: bool = False  # a processing-time attribute (PROCTIME())


@dataclass(frozen=True, slots=True)
class Schema:
    fields: tuple[Field, ...]

    def names(self) -> list[str]:
        return [f.name for f in self.fields]

    def to_arrow(self) -> pa.Schema:
        return pa.schema([pa.field(f.name, f.type, f.nullable) for f in self.fields])

    def __len__(self) -> int:
        return len(self.fields)

    def describe(self) -> str:
        return ", ".join(f"{f.name}:{type_name(f.type)}" for f in self.fields)


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """What a Scan reads: the catalog table's connector, options and bounds."""

    table: str
    connector: str
    options: tuple[tuple[str, str], ...]
    bounded: bool
    # WATERMARK FOR: the rowtime column's position in the table and the bound expression.
    watermark: tuple[int, Expr] | None = None
    changelog: bool = False  # it reads +I / -U / +U / -D rows (a CDC format)
    # A WATERMARK FOR a computed column: its expression over the table's columns (the
    # watermark's own is inlined too), and -1 as the watermark's column position.
    rowtime_expr: Expr | None = None

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)


def partition_detail(source: SourceSpec, table_schema: Schema, filters: tuple[Expr, ...]
                     ) -> str:
    """A PARTITIONED BY table's scan in EXPLAIN: its partition columns and the pushed filters
    that prune partitions (those reading only partition columns); and the filters the connector
    pushes into its own reads (jdbc: into the SELECT it sends)."""
    from sqlengine.connectors import find
    from sqlengine.connectors.base import decode_partition_keys

    connector = find(source.connector)
    pushed = connector.explain_scan(dict(source.options), table_schema.to_arrow(), filters) \
        if connector is not None and filters else ""
    keys = set(decode_partition_keys(dict(source.options)))
    if not keys:
        return pushed
    cols = {i for i, f in enumerate(table_schema.fields) if f.name in keys}
    text = ", partitioned=[" + ", ".join(f.name for f in table_schema.fields
                                         if f.name in keys) + "]"
    pruning = [f.sql() for f in filters if f.columns() <= cols]
    if pruning:
        text += ", partition-filter=[" + ", ".join(pruning) + "]"
    return text + pushed


class LogicalPlan:
    """Protocol shared by every node (the dataclasses below implement it)."""

    schema: Schema
    if TYPE_CHECKING:  # every node is a dataclass, so dataclasses.replace takes any of them
        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def children(self) -> tuple[LogicalPlan, ...]:
        return ()

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return self

    def explain_label(self) -> str:
        raise NotImplementedError


class UnaryPlan(LogicalPlan):
    """A node with one ``input``; its schema is the input's unless it says otherwise."""

    input: LogicalPlan

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.input,)

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, input=children[0])

    def _keep_input_schema(self) -> None:
        object.__setattr__(self, "schema", self.input.schema)


@dataclass(frozen=True, slots=True)
class Scan(LogicalPlan):
    """Read a catalog table; ``projection`` and ``filters`` are pushed down into it."""

    source: SourceSpec
    table_schema: Schema
    projection: tuple[int, ...] | None = None
    filters: tuple[Expr, ...] = ()
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.projection is None:
            fields = self.table_schema.fields
        else:
            fields = tuple(self.table_schema.fields[i] for i in self.projection)
        object.__setattr__(self, "schema", Schema(fields))

    def explain_label(self) -> str:
        text = f"Scan: {self.source.table}"
        if self.projection is not None:
            text += f", projection=[{', '.join(self.schema.names())}]"
        if self.filters:
            text += f", filters=[{', '.join(f.sql() for f in self.filters)}]"
        return text + partition_detail(self.source, self.table_schema, self.filters)


@dataclass(frozen=True, slots=True)
class Values(LogicalPlan):
    """Constant rows (``VALUES ...`` or a SELECT without FROM).

    Each row holds one bound expression per column, typed as its column. The binder leaves
    literals as they are; optimizer/rules/fold_constants.py folds the other cells to literals
    and the runtime evaluates whatever is still not a literal when it builds the rows.
    """

    rows: tuple[tuple[Expr, ...], ...]
    schema: Schema

    def explain_label(self) -> str:
        return f"Values: rows={len(self.rows)}"


@dataclass(frozen=True, slots=True)
class Filter(UnaryPlan):
    input: LogicalPlan
    predicate: Expr
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if not pa.types.is_boolean(self.predicate.dtype) and self.predicate.dtype != pa.null():
            msg = f"filter predicate must be BOOLEAN, got {type_name(self.predicate.dtype)}"
            raise PlanError(msg)
        self._keep_input_schema()

    def explain_label(self) -> str:
        return f"Filter: {self.predicate.sql()}"


@dataclass(frozen=True, slots=True)
class Project(UnaryPlan):
    input: LogicalPlan
    exprs: tuple[Expr, ...]
    names: tuple[str, ...]
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if len(self.exprs) != len(self.names):
            raise PlanError("projection needs one name per expression")
        in_fields = self.input.schema.fields
        fields = []
        from sqlengine.plan.expressions import ROWTIME, Call, ColumnRef

        for e, n in zip(self.exprs, self.names):
            rowtime = (isinstance(e, ColumnRef) and in_fields[e.index].rowtime) or (
                isinstance(e, Call) and e.name == ROWTIME)
            proctime = (isinstance(e, ColumnRef) and in_fields[e.index].proctime) or (
                isinstance(e, Call) and e.name == "proctime")
            fields.append(Field(n, e.dtype, True, rowtime, proctime))
        object.__setattr__(self, "schema", Schema(tuple(fields)))

    def explain_label(self) -> str:
        parts = []
        for e, n in zip(self.exprs, self.names):
            s = e.sql()
            parts.append(s if s == n else f"{s} AS {n}")
        return f"Project: {', '.join(parts)}"


@dataclass(frozen=True, slots=True)
class Aggregate(UnaryPlan):
    """GROUP BY ``keys`` (expressions over the input) computing ``aggs``; output keys then aggs."""

    input: LogicalPlan
    keys: tuple[Expr, ...]
    key_names: tuple[str, ...]
    aggs: tuple[AggCall, ...]
    agg_names: tuple[str, ...]
    # A STATE_TTL hint's TTL (ms) over 'table.exec.state.ttl' (None: the option's)
    state_ttl: int | None = None
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        from sqlengine.plan.expressions import ColumnRef

        inputs = self.input.schema.fields
        grouped = {inputs[k.index].name.lower() for k in self.keys if isinstance(k, ColumnRef)}
        # A window aggregate (grouped by window_start and window_end) keeps a grouped
        # rowtime, window_time say, as a time attribute for a window after it (Flink's
        # cascading windows); any other GROUP BY makes it a plain timestamp.
        windowed = {"window_start", "window_end"} <= grouped
        fields = [Field(n, k.dtype, rowtime=windowed and isinstance(k, ColumnRef)
                        and inputs[k.index].rowtime)
                  for k, n in zip(self.keys, self.key_names)]
        fields += [Field(n, a.type) for a, n in zip(self.aggs, self.agg_names)]
        object.__setattr__(self, "schema", Schema(tuple(fields)))

    def explain_label(self) -> str:
        keys = ", ".join(k.sql() for k in self.keys)
        aggs = ", ".join(a.sql() for a in self.aggs)
        return f"Aggregate: keys=[{keys}], aggs=[{aggs}]"


JOIN_KINDS = ("inner", "left", "full", "semi", "anti")


@dataclass(frozen=True, slots=True)
class Join(LogicalPlan):
    """A join: ``left_keys[i] = right_keys[i]`` (none for a cross or non-equi join) plus an
    optional residual condition over the concatenated (left ++ right) row.

    ``kind`` is inner, left, full (outer), semi (the left rows with a match) or anti (the left
    rows without one); semi and anti output the left columns only. NULL keys never match.
    """

    left: LogicalPlan
    right: LogicalPlan
    kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    condition: Expr | None = None
    # A STATE_TTL hint's TTL (ms) of each side's state over 'table.exec.state.ttl' (None:
    # the option's)
    state_ttl: tuple[int | None, int | None] = (None, None)
    # A join hint's (strategy, side it names): BROADCAST / SHUFFLE_HASH / SHUFFLE_MERGE /
    # NEST_LOOP (sqlengine/bind_join_hint.py)
    strategy: tuple[str, int] | None = None
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in JOIN_KINDS:
            raise PlanError(f"unknown join kind {self.kind!r}")
        left, right = self.left.schema.fields, self.right.schema.fields
        if self.kind in ("semi", "anti"):
            right = ()
        if self.kind in ("left", "full"):
            right = tuple(replace(f, nullable=True) for f in right)
        if self.kind == "full":
            left = tuple(replace(f, nullable=True) for f in left)
        object.__setattr__(self, "schema", Schema(left + right))

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.left, self.right)

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, left=children[0], right=children[1])

    def explain_label(self) -> str:
        on = ", ".join(f"{a.sql()} = {b.sql()}" for a, b in zip(self.left_keys, self.right_keys))
        text = f"Join: {self.kind}, on=[{on}]"
        if self.condition is not None:
            text += f", filter={self.condition.sql()}"
        if self.strategy is not None:
            text += f", hint={self.strategy[0]}({('left', 'right')[self.strategy[1]]})"
        return text


@dataclass(frozen=True, slots=True)
class TemporalJoin(LogicalPlan):
    """``left JOIN right FOR SYSTEM_TIME AS OF left.time``: each left row meets the version of
    ``right`` (a table with a primary key and an event time) valid at its time, the right row
    with equal keys and the greatest time at or before it (Flink's event-time temporal
    join). ``kind`` is inner or left; ``condition`` is checked on the row and that version.
    The right side's time is no longer a time attribute in the output."""

    left: LogicalPlan
    right: LogicalPlan
    kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    condition: Expr | None
    left_time: int
    right_time: int
    # The right side is a versioned view's rows (plan/versioned_view.py): a row older than
    # its key's newest so far is no version, as the deduplication drops it.
    monotonic_versions: bool = False
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ("inner", "left"):
            raise PlanError(f"a temporal join is INNER or LEFT, not {self.kind!r}")
        right = tuple(replace(f, rowtime=False, nullable=f.nullable or self.kind == "left")
                      for f in self.right.schema.fields)
        object.__setattr__(self, "schema", Schema(self.left.schema.fields + right))

    def children(self) -> tuple[LogicalPlan, ...]:
        return (self.left, self.right)

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, left=children[0], right=children[1])

    def explain_label(self) -> str:
        on = ", ".join(f"{a.sql()} = {b.sql()}" for a, b in zip(self.left_keys, self.right_keys))
        lt = self.left.schema.fields[self.left_time].name
        text = f"TemporalJoin: {self.kind}, FOR SYSTEM_TIME AS OF {lt}, on=[{on}]"
        if self.condition is not None:
            text += f", filter={self.condition.sql()}"
        return text


@dataclass(frozen=True, slots=True)
class Union(LogicalPlan):
    """N-ary UNION ALL (inputs already cast to one schema)."""

    inputs: tuple[LogicalPlan, ...]
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        first = self.inputs[0].schema
        for other in self.inputs[1:]:
            if [f.type for f in other.schema.fields] != [f.type for f in first.fields]:
                raise PlanError("UNION ALL inputs must have the same column types")
        object.__setattr__(self, "schema", first)

    def children(self) -> tuple[LogicalPlan, ...]:
        return self.inputs

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, inputs=children)

    def explain_label(self) -> str:
        return "Union"


@dataclass(frozen=True, slots=True)
class ReplicateRows(UnaryPlan):
    """Each input row ``(n, c1, ..., ck)`` becomes ``n`` rows ``(c1, ..., ck)`` (Flink's
    ReplicateRows, for INTERSECT ALL and EXCEPT ALL); updates are replicated alike."""

    input: LogicalPlan
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        first = self.input.schema.fields[0] if self.input.schema.fields else None
        if first is None or not pa.types.is_integer(first.type):
            raise PlanError("ReplicateRows needs an integer count as its first column")
        object.__setattr__(self, "schema", Schema(self.input.schema.fields[1:]))

    def explain_label(self) -> str:
        return "ReplicateRows"


def unnest_fields(t: pa.DataType) -> tuple[Field, ...]:
    """The columns UNNEST makes of an ARRAY or MAP's elements: a ROW's fields, a MAP's key
    and value, else the element itself."""
    if pa.types.is_map(t):
        return (Field("key", t.key_type, True), Field("value", t.item_type, True))
    element = t.value_type
    if pa.types.is_struct(element):
        return tuple(Field(f.name, f.type, True) for f in element)
    return (Field("EXPR$0", element, True),)


@dataclass(frozen=True, slots=True)
class Unnest(UnaryPlan):
    """Each input row once per element of its last column (an ARRAY or MAP), that column
    replaced by the element's columns (``unnest_fields``) named ``names``, then its 1-based
    position if ``ordinality``; ``outer`` keeps a row whose array is empty or NULL once, with
    NULL elements (LEFT JOIN UNNEST ... ON TRUE)."""

    input: LogicalPlan
    names: tuple[str, ...]
    ordinality: bool = False
    outer: bool = False
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        fields = self.input.schema.fields
        if not fields or not (pa.types.is_list(fields[-1].type) or
                              pa.types.is_map(fields[-1].type)):
            raise PlanError("UNNEST needs an ARRAY or MAP")
        made = unnest_fields(fields[-1].type)
        if self.ordinality:
            made = (*made, Field("ORDINALITY", pa.int32(), False))
        if len(self.names) != len(made):
            raise PlanError(f"UNNEST makes {len(made)} columns, {len(self.names)} named")
        out = tuple(Field(n, f.type, True) for n, f in zip(self.names, made))
        object.__setattr__(self, "schema", Schema(fields[:-1] + out))

    def explain_label(self) -> str:
        return f"Unnest: {self.input.schema.fields[-1].name}" + \
            (" WITH ORDINALITY" if self.ordinality else "") + (", outer" if self.outer else "")


@dataclass(frozen=True, slots=True)
class Expand(UnaryPlan):
    """Each input row once per projection (Flink's Expand, for GROUPING SETS / ROLLUP / CUBE):
    every projection gives the same columns; a grouping set's absent keys are NULL."""

    input: LogicalPlan
    projections: tuple[tuple[Expr, ...], ...]
    names: tuple[str, ...]
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        first = self.projections[0]
        for p in self.projections:
            if len(p) != len(self.names) or [e.dtype for e in p] != [e.dtype for e in first]:
                raise PlanError("Expand projections must give the same column types")
        object.__setattr__(self, "schema", Schema(tuple(
            Field(n, e.dtype, True) for n, e in zip(self.names, first))))

    def explain_label(self) -> str:
        sets = "; ".join(", ".join(e.sql() for e in p[len(self.input.schema):])
                         for p in self.projections)
        return f"Expand: [{sets}]"


@dataclass(frozen=True, slots=True)
class SortKey:
    expr: Expr
    ascending: bool = True
    nulls_first: bool = True

    def sql(self) -> str:
        direction = "ASC" if self.ascending else "DESC"
        nulls = "NULLS FIRST" if self.nulls_first else "NULLS LAST"
        return f"{self.expr.sql()} {direction} {nulls}"


@dataclass(frozen=True, slots=True)
class Sort(UnaryPlan):
    """ORDER BY (bounded input only), with an optional LIMIT/OFFSET folded in. ``outermost``:
    the statement's own ORDER BY, not a subquery's or a view's (which streaming mode drops
    when it has no LIMIT, as Flink does)."""

    input: LogicalPlan
    keys: tuple[SortKey, ...]
    fetch: int | None = None
    offset: int = 0
    outermost: bool = True
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        self._keep_input_schema()

    def explain_label(self) -> str:
        text = f"Sort: {', '.join(k.sql() for k in self.keys)}"
        if self.fetch is not None:
            text += f", fetch={self.fetch}"
        if self.offset:
            text += f", offset={self.offset}"
        return text


@dataclass(frozen=True, slots=True)
class Limit(UnaryPlan):
    input: LogicalPlan
    fetch: int | None
    offset: int = 0
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        self._keep_input_schema()

    def explain_label(self) -> str:
        text = f"Limit: fetch={self.fetch}"
        if self.offset:
            text += f", offset={self.offset}"
        return text


@dataclass(frozen=True, slots=True)
class SinkSpec:
    """Where an INSERT writes: the catalog table's connector and options."""

    table: str
    connector: str
    options: tuple[tuple[str, str], ...]
    schema: Schema

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)


@dataclass(frozen=True, slots=True)
class Sink(UnaryPlan):
    input: LogicalPlan
    target: SinkSpec
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        self._keep_input_schema()

    def explain_label(self) -> str:
        return f"Sink: {self.target.table} ({self.target.connector})"


@dataclass(frozen=True, slots=True)
class StatementSet(LogicalPlan):
    """Several sinks planned as one job (EXECUTE STATEMENT SET): equal sources and sub-plans
    of its INSERTs are read once (the reuse passes merge them)."""

    sinks: tuple[LogicalPlan, ...]
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "schema", Schema(()))

    def children(self) -> tuple[LogicalPlan, ...]:
        return self.sinks

    def with_children(self, children: tuple[LogicalPlan, ...]) -> LogicalPlan:
        return replace(self, sinks=tuple(children))

    def explain_label(self) -> str:
        return f"StatementSet: {len(self.sinks)} INSERTs"


WINDOW_COLUMNS = ("window_start", "window_end", "window_time")


@dataclass(frozen=True, slots=True)
class WindowTVF(UnaryPlan):
    """A window table function: TUMBLE, HOP, CUMULATE or SESSION over a rowtime column; adds
    window_start, window_end and window_time (a rowtime attribute) to every row."""

    input: LogicalPlan
    kind: str  # tumble | hop | cumulate | session
    time_index: int
    size: int  # ms: TUMBLE/HOP size, CUMULATE max size, SESSION gap
    slide: int = 0  # ms: HOP slide, CUMULATE step
    offset: int = 0
    partition_keys: tuple[int, ...] = ()  # SESSION ... PARTITION BY
    proctime: bool = False  # windows over processing time (fired by the wall clock)
    # The session time zone of windows over a TIMESTAMP_LTZ column outside UTC (Flink's
    # shift time zone): windows are aligned to its wall clock, window_start and window_end
    # are its wall-clock TIMESTAMPs and window_time the TIMESTAMP_LTZ instant of end - 1 ms.
    zone: str = ""
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        t = pa.timestamp("ms")
        extra = (Field("window_start", t, False), Field("window_end", t, False),
                 Field("window_time", pa.timestamp("ms", tz="UTC") if self.zone else t, False,
                       True))
        object.__setattr__(self, "schema", Schema(self.input.schema.fields + extra))

    def explain_label(self) -> str:
        ts = self.input.schema.fields[self.time_index].name
        args = [_duration(self.slide)] if self.kind in ("hop", "cumulate") else []
        args.append(_duration(self.size))
        if self.offset:
            args.append(f"offset={_duration(self.offset)}")
        part = ""
        if self.partition_keys:
            names = [self.input.schema.fields[i].name for i in self.partition_keys]
            part = f" PARTITION BY {', '.join(names)}"
        if self.zone:
            args.append(f"zone={self.zone}")
        return f"WindowTVF: {self.kind.upper()}({ts}{part}, {', '.join(args)})"


def _duration(ms: int) -> str:
    for unit, n in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms % n == 0 and ms:
            return f"{ms // n} {unit}"
    return f"{ms} ms"


@dataclass(frozen=True, slots=True)
class Rank(UnaryPlan):
    """ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...): appends the row number as the last
    column. ``limit`` is set when a filter keeps only the first rows (Top-N); ``output_rank``
    is False when nothing reads the number (so rank shifts need not be emitted)."""

    input: LogicalPlan
    partition: tuple[Expr, ...]
    order: tuple[SortKey, ...]
    name: str = "rn"
    limit: int | None = None
    output_rank: bool = True
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        fields = (*self.input.schema.fields, Field(self.name, pa.int64(), False))
        object.__setattr__(self, "schema", Schema(fields))

    def explain_label(self) -> str:
        part = ", ".join(p.sql() for p in self.partition)
        order = ", ".join(k.sql() for k in self.order)
        text = f"Rank: ROW_NUMBER() OVER (PARTITION BY {part} ORDER BY {order}) AS {self.name}"
        if self.limit is not None:
            text += f", limit={self.limit}"
        if not self.output_rank:
            text += " (number not read)"
        return text


@dataclass(frozen=True, slots=True)
class WindowFrame:
    """ROWS | RANGE | GROUPS BETWEEN start AND end. Offsets count rows (ROWS), order-key
    units (RANGE; milliseconds for a time key) or peer groups (GROUPS): negative is
    PRECEDING, 0 CURRENT ROW (for RANGE and GROUPS: the row's peers), positive FOLLOWING,
    None UNBOUNDED."""

    kind: str  # "rows" | "range" | "groups"
    start: int | float | None
    end: int | float | None

    def sql(self) -> str:
        def bound(v: int | float | None, unbounded: str) -> str:
            if v is None:
                return f"UNBOUNDED {unbounded}"
            if v == 0:
                return "CURRENT ROW"
            return f"{abs(v)} {'PRECEDING' if v < 0 else 'FOLLOWING'}"

        return (f"{self.kind.upper()} BETWEEN {bound(self.start, 'PRECEDING')} AND "
                f"{bound(self.end, 'FOLLOWING')}")


@dataclass(frozen=True, slots=True)
class WindowCall:
    """One window function: a ranking function (row_number, rank, dense_rank, percent_rank,
    cume_dist, ntile), an offset function (lag, lead, first_value, last_value) or an
    aggregate (``agg``) over ``frame``."""

    func: str
    args: tuple[Expr, ...]
    type: pa.DataType
    frame: WindowFrame | None = None
    agg: AggCall | None = None

    def sql(self) -> str:
        # (LAG / LEAD IGNORE NULLS: a fourth argument, TRUE)
        shown = self.args[:3] if self.func in ("lag", "lead") else self.args
        inner = self.agg.sql() if self.agg is not None else \
            f"{self.func.upper()}({', '.join(a.sql() for a in shown)})"
        if len(shown) < len(self.args):
            inner += " IGNORE NULLS"
        return inner + (f" {self.frame.sql()}" if self.frame is not None else "")


@dataclass(frozen=True, slots=True)
class WindowFunctions(UnaryPlan):
    """Window functions over one PARTITION BY / ORDER BY, evaluated over the whole (bounded)
    input: one output row per input row with the results appended (batch mode)."""

    input: LogicalPlan
    partition: tuple[Expr, ...]
    order: tuple[SortKey, ...]
    calls: tuple[WindowCall, ...]
    names: tuple[str, ...]
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        extra = tuple(Field(n, c.type) for n, c in zip(self.names, self.calls))
        object.__setattr__(self, "schema", Schema(self.input.schema.fields + extra))

    def explain_label(self) -> str:
        part = ", ".join(p.sql() for p in self.partition)
        order = ", ".join(k.sql() for k in self.order)
        calls = ", ".join(c.sql() for c in self.calls)
        return f"WindowFunctions: PARTITION BY {part} ORDER BY {order}, calls=[{calls}]"


@dataclass(frozen=True, slots=True)
class OverAggregate(UnaryPlan):
    """Aggregates OVER (PARTITION BY ... ORDER BY rowtime {RANGE|ROWS} BETWEEN ... PRECEDING
    AND CURRENT ROW), one output row per input row with the aggregates appended.
    ``preceding`` is milliseconds for RANGE, a row count for ROWS, None for UNBOUNDED."""

    input: LogicalPlan
    partition: tuple[Expr, ...]
    time_index: int
    frame: str  # "range" | "rows"
    preceding: int | None
    aggs: tuple[AggCall, ...]
    names: tuple[str, ...]
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        extra = tuple(Field(n, a.type) for n, a in zip(self.names, self.aggs))
        object.__setattr__(self, "schema", Schema(self.input.schema.fields + extra))

    def explain_label(self) -> str:
        part = ", ".join(p.sql() for p in self.partition)
        ts = self.input.schema.fields[self.time_index].name
        if self.preceding is None:
            start = "UNBOUNDED"
        elif self.frame == "range":
            start = _duration(self.preceding)
        else:
            start = str(self.preceding)
        aggs = ", ".join(a.sql() for a in self.aggs)
        return (f"OverAggregate: PARTITION BY {part} ORDER BY {ts} {self.frame.upper()} "
                f"BETWEEN {start} PRECEDING AND CURRENT ROW, aggs=[{aggs}]")


@dataclass(frozen=True, slots=True)
class MatchRecognize(UnaryPlan):
    """``MATCH_RECOGNIZE``: rows of each PARTITION BY key in time order, matched against a
    pattern; one row per match (the partition columns, then the measures). See
    sqlengine/plan/match.py for ``spec``."""

    input: LogicalPlan
    spec: MatchSpec
    schema: Schema = field(init=False, compare=False)

    def __post_init__(self) -> None:
        fields = self.input.schema.fields
        part = tuple(replace(fields[i], rowtime=False, proctime=False)
                     for i in self.spec.partition)
        width = len(fields)
        from sqlengine.plan.expressions import ColumnRef

        def rowtime(b: Bound) -> bool:  # MATCH_ROWTIME() is an event-time attribute
            e = b.expr
            return isinstance(e, ColumnRef) and e.index >= width and \
                b.navigations[e.index - width].kind == "rowtime"

        measures = tuple(Field(name, b.expr.dtype, rowtime=rowtime(b))
                         for name, b in self.spec.measures)
        object.__setattr__(self, "schema", Schema(part + measures))

    def explain_label(self) -> str:
        fields = self.input.schema.fields
        part = ", ".join(fields[i].name for i in self.spec.partition)
        ts = ", ".join([fields[self.spec.time_index].name,
                        *(f"{fields[i].name}{' DESC' if d else ''}"
                          for i, d, _ in self.spec.then_by)])
        within = f" WITHIN {_duration(self.spec.within)}" if self.spec.within else ""
        measures = ", ".join(n for n, _ in self.spec.measures)
        return (f"MatchRecognize: PARTITION BY [{part}] ORDER BY {ts} PATTERN "
                f"({self.spec.pattern_text()}){within} AFTER MATCH SKIP "
                f"{self.spec.skip_text()}, measures=[{measures}]")
