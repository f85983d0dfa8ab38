"""Graph creation: the logical plan becomes the physical DAG (operators and exchanges)."""

from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from sqlengine import connectors
from sqlengine import types as T
from sqlengine.errors import NotSupportedError, PlanError
from sqlengine.optimizer.passes.base import PassContext
from sqlengine.optimizer.passes.streaming_lag import streaming_lag
from sqlengine.optimizer.physical import FORWARD, Exchange, Partitioning, PhysicalNode
from sqlengine.optimizer.specs import (
    ChainStrategy,
    ExpandSpec,
    FilterSpec,
    GroupAggregateSpec,
    JoinSpec,
    LimitSpec,
    ProjectSpec,
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
from sqlengine.optimizer.specs_iteration import MAX_ROUNDS, IterateSpec, IterationSourceSpec
from sqlengine.optimizer.specs_lookup import LookupJoinSpec
from sqlengine.optimizer.specs_windows import (
    IntervalJoinSpec,
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
from sqlengine.options import parse_duration
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.plan.iteration import Iterate, StepInput, WorkingTable
from sqlengine.plan.lookup import LookupJoin


class CreateGraph:
    """Graph creation (Flink's GraphCreatingVisitor): each logical node becomes a physical
    operator, each input an exchange with the ship strategy the operator needs by itself
    (HASH on grouping and join keys, SINGLE below a global sort or limit, FORWARD otherwise),
    with the estimates of the logical node it came from. The plan-time checks of what can
    run in this mode are made here too. The passes after it only improve on this plan; it
    already runs as it is, so it is the one step that cannot be turned off."""

    name = "create_graph"

    def translate(self, plan: N.LogicalPlan, ctx: PassContext) -> PhysicalNode:
        translator = _Translator(ctx)
        translator.count_consumers(plan)
        return translator.translate(plan)


def _hinted(plan: N.LogicalPlan) -> bool:
    """Whether a STATE_TTL hint set a TTL on this join or GROUP BY."""
    if isinstance(plan, N.Join):
        return plan.state_ttl != (None, None)
    return isinstance(plan, N.Aggregate) and plan.state_ttl is not None


def _lateness(options: dict[str, str]) -> tuple[int, str | None]:
    """A window's allowed lateness in ms, as Flink's legacy group windows take it: only with
    'table.exec.emit.late-fire.enabled' (late rows then update the fired window as they come,
    a late-fire delay of 0); and the refusal of a lateness given without it (Flink ignores
    it, then: a window would drop the late rows it names)."""
    key = "table.exec.emit.allow-lateness"
    lateness = parse_duration(options[key], key) if options.get(key) else 0
    if not lateness:
        return 0, None
    if options.get("table.exec.emit.late-fire.enabled", "false").lower() != "true":
        return 0, (f"{key!r} takes effect only with 'table.exec.emit.late-fire.enabled' = "
                   "'true' (as in Flink, which ignores it otherwise): set that too, or RESET "
                   f"{key!r}")
    delay_key = "table.exec.emit.late-fire.delay"
    if options.get(delay_key) and parse_duration(options[delay_key], delay_key) != 0:
        return 0, (f"a {delay_key!r} other than 0 is not implemented yet (late rows update "
                   "a fired window as they come)")
    return lateness, None


class _Translator:
    def __init__(self, ctx: PassContext) -> None:
        self.estimator = ctx.estimator
        self.streaming = ctx.streaming
        options = ctx.options
        self.lateness, self.lateness_refusal = _lateness(options)
        key = "table.exec.state.ttl"
        self.ttl = parse_duration(options[key], key) if options.get(key) else 0
        self.session_tvfs: set[int] = set()  # SESSION TVFs consumed by a window aggregate
        # TVFs under a windowed aggregate or Top-N (which must not see late rows)
        self.windowed_tvfs: set[int] = set()
        # HOP TVFs whose window aggregate adds up slices (see _sliceable)
        self.sliced_tvfs: set[int] = set()
        self.memo: dict[int, PhysicalNode] = {}  # (a logical DAG stays a DAG)
        self.options = options
        self.consumers: dict[int, int] = {}  # (node id -> how many nodes read it)
        # (Iterate node id -> the rows a LIMIT straight above it reads: see _enough_rows)
        self.enough_rows: dict[int, int] = {}

    def count_consumers(self, root: N.LogicalPlan) -> None:
        seen: set[int] = set()
        stack = [root]
        while stack:
            node = stack.pop()
            for child in node.children():
                self.consumers[id(child)] = self.consumers.get(id(child), 0) + 1
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)

    def translate(self, plan: N.LogicalPlan) -> PhysicalNode:
        if id(plan) not in self.memo:
            node = self._translate(plan)
            if self.streaming and _hinted(plan) and not isinstance(
                    node.op, JoinSpec | GroupAggregateSpec):
                raise NotSupportedError(
                    f"the STATE_TTL hint applies to regular joins and GROUP BYs; this one runs "
                    f"as {node.op.label()}, which keeps its state by time, so the hint would "
                    "be ignored")
            if node.estimate is None:
                node = replace(node, estimate=self.estimator.estimate(plan))
            self.memo[id(plan)] = node
        return self.memo[id(plan)]

    def _translate(self, plan: N.LogicalPlan) -> PhysicalNode:
        match plan:
            case N.Scan():
                if not self.streaming and not plan.source.bounded:
                    msg = (f"table {plan.source.table!r} is unbounded and cannot be read in "
                           "batch mode (set 'execution.runtime-mode' = 'streaming')")
                    raise PlanError(msg)
                if plan.source.changelog and not self.streaming:
                    msg = (f"table {plan.source.table!r} reads a changelog "
                           f"({plan.source.option('format')}), which batch mode cannot "
                           "consume (set 'execution.runtime-mode' = 'streaming')")
                    raise PlanError(msg)
                if self.streaming and plan.source.rowtime_expr is not None and \
                        self.options.get("execution.target") == "spark":
                    msg = (f"table {plan.source.table!r}: a WATERMARK FOR a computed column "
                           "is not supported on Spark yet (declare it for a physical column)")
                    raise NotSupportedError(msg)
                return PhysicalNode(TableScanSpec(
                    schema=plan.schema, chain_strategy=ChainStrategy.HEAD,
                    updating=plan.source.changelog,
                    table=plan.source.table, source=plan.source,
                    table_schema=plan.table_schema, projection=plan.projection,
                    filters=plan.filters, bounded=plan.source.bounded,
                    # Batch mode has no late data: watermarks only at the end.
                    event_time=self.streaming and plan.source.watermark is not None))
            case N.Values():
                return PhysicalNode(ValuesSpec(schema=plan.schema, rows=plan.rows,
                                               chain_strategy=ChainStrategy.HEAD))
            case N.Filter():
                child = self.translate(plan.input)
                return PhysicalNode(FilterSpec(schema=plan.schema, updating=child.op.updating,
                                               predicate=plan.predicate), ((child, FORWARD),))
            case N.Project():
                child = self.translate(plan.input)
                return PhysicalNode(ProjectSpec(schema=plan.schema, updating=child.op.updating,
                                                exprs=plan.exprs), ((child, FORWARD),))
            case N.WindowFunctions():
                over = streaming_lag(plan) if self.streaming else None
                if over is not None:
                    return self.translate(over)
                # Partitioned by a window's bounds: each window computed when it fires,
                # its late rows dropped, as a window Top-N (bounded or not).
                bounds = window_bounds(plan.partition, plan.input) if self.streaming \
                    else None
                if bounds is not None:
                    self.windowed_tvfs.add(id(bounds[1]))
                child = self.translate(plan.input)
                if bounds is not None and child.op.updating:
                    bounds = None
                if bounds is None:
                    self._require_bounded(plan.input, "window functions other than OVER "
                                          "aggregates ordered by a rowtime, ROW_NUMBER "
                                          "Top-N and those partitioned by a window")
                exchange = Exchange(Partitioning.HASH, plan.partition) if plan.partition \
                    else Exchange(Partitioning.SINGLE)
                return PhysicalNode(WindowFunctionsSpec(
                    schema=plan.schema, partition=plan.partition, order=plan.order,
                    calls=plan.calls, input_schema=plan.input.schema,
                    end_index=-1 if bounds is None else bounds[0],
                    zone="" if bounds is None else bounds[1].zone),
                    ((child, exchange),))
            case N.Expand():
                child = self.translate(plan.input)
                return PhysicalNode(ExpandSpec(schema=plan.schema, updating=child.op.updating,
                                               projections=plan.projections),
                                    ((child, FORWARD),))
            case N.StatementSet():
                sinks = [self.translate(sink) for sink in plan.sinks]
                return PhysicalNode(StatementSetSpec(schema=plan.schema, updating=False),
                                    tuple((sink, FORWARD) for sink in sinks))
            case N.Unnest():
                child = self.translate(plan.input)
                return PhysicalNode(UnnestSpec(schema=plan.schema, updating=child.op.updating,
                                               ordinality=plan.ordinality, outer=plan.outer),
                                    ((child, FORWARD),))
            case N.ReplicateRows():
                child = self.translate(plan.input)
                return PhysicalNode(ReplicateRowsSpec(schema=plan.schema,
                                                      updating=child.op.updating),
                                    ((child, FORWARD),))
            case N.Aggregate():
                return self._window_aggregate(plan) or self._aggregate(plan)
            case N.WindowTVF():
                return self._window_tvf(plan)
            case N.Rank():
                return self._rank(plan)
            case N.MatchRecognize():
                child = self.translate(plan.input)
                self._refuse_join_time(plan.input, plan.spec.time_index, "MATCH_RECOGNIZE")
                if child.op.updating:
                    msg = "MATCH_RECOGNIZE needs an insert-only input (as in Flink)"
                    raise NotSupportedError(msg)
                fields = plan.input.schema.fields
                keys = tuple(ColumnRef(i, fields[i].name, fields[i].type)
                             for i in plan.spec.partition)
                exchange = Exchange(Partitioning.HASH, keys) if keys \
                    else Exchange(Partitioning.SINGLE)
                mr = MatchRecognizeSpec(
                    schema=plan.schema, spec=plan.spec, input_schema=plan.input.schema,
                    text=plan.explain_label().removeprefix("MatchRecognize: "))
                return PhysicalNode(mr, ((child, exchange),))
            case N.OverAggregate():
                child = self.translate(plan.input)
                if plan.time_index >= 0:
                    self._refuse_join_time(plan.input, plan.time_index, "an OVER aggregate")
                if child.op.updating:
                    msg = "OVER aggregates need an insert-only input"
                    raise NotSupportedError(msg)
                exchange = Exchange(Partitioning.HASH, plan.partition) if plan.partition \
                    else Exchange(Partitioning.SINGLE)
                op = OverAggregateSpec(
                    schema=plan.schema, partition=plan.partition, time_index=plan.time_index,
                    frame=plan.frame, preceding=plan.preceding, aggs=plan.aggs,
                    text=plan.explain_label().removeprefix("OverAggregate: "),
                    ttl=self.ttl if self.streaming and not (
                        plan.frame == "range" and plan.preceding is not None) else 0)
                return PhysicalNode(op, ((child, exchange),))
            case N.Join():
                return self._join(plan)
            case N.TemporalJoin():
                left, right = self.translate(plan.left), self.translate(plan.right)
                if plan.right_time >= 0:
                    self._refuse_join_time(plan.left, plan.left_time,
                                           "an event-time temporal join")
                if left.op.updating:
                    msg = ("a temporal join needs an insert-only probe side (its versioned "
                           "table may be a changelog); the left input here is updating")
                    raise NotSupportedError(msg)
                op = TemporalJoinSpec(
                    schema=plan.schema, join_kind=plan.kind, left_keys=plan.left_keys,
                    right_keys=plan.right_keys, condition=plan.condition,
                    left_width=len(plan.left.schema), left_time=plan.left_time,
                    right_time=plan.right_time, monotonic_versions=plan.monotonic_versions)
                return PhysicalNode(op, ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                                         (right, Exchange(Partitioning.HASH, plan.right_keys))))
            case N.Union():
                kids = [self.translate(i) for i in plan.inputs]
                updating = any(k.op.updating for k in kids)
                return PhysicalNode(UnionSpec(schema=plan.schema, updating=updating,
                                              inputs=len(kids)),
                                    tuple((k, FORWARD) for k in kids))
            case N.Sort():
                if self.streaming and not plan.outermost and plan.fetch is None and \
                        not plan.offset:
                    # A subquery's or view's ORDER BY without a LIMIT orders nothing the
                    # query returns: Flink drops it (a temporal sort there dropped late rows)
                    return self.translate(plan.input)
                child = self.translate(plan.input)
                if self.streaming:
                    streamed = self._streaming_sort(plan, child)
                    if streamed is not None:
                        return streamed
                self._require_bounded(plan.input, "ORDER BY")
                return PhysicalNode(SortSpec(
                    schema=plan.schema, keys=plan.keys, fetch=plan.fetch, offset=plan.offset,
                    input_updating=child.op.updating),
                    ((child, Exchange(Partitioning.SINGLE)),))
            case N.Limit():
                self._enough_rows(plan)
                child = self.translate(plan.input)
                if child.op.updating:
                    self._require_bounded(plan.input, "LIMIT over an updating result")
                return PhysicalNode(LimitSpec(
                    schema=plan.schema, fetch=plan.fetch, offset=plan.offset,
                    input_updating=child.op.updating),
                    ((child, Exchange(Partitioning.SINGLE)),))
            case N.Sink():
                child = self.translate(plan.input)
                target = plan.target
                sink = connectors.find(target.connector)
                if child.op.updating and sink is not None and \
                        not sink.accepts_updates(dict(target.options)):
                    msg = (f"table sink {target.table!r} ({target.connector}) does not support "
                           "consuming update changes; the query produces an updating result (a "
                           "GROUP BY, a join or a changelog source in streaming mode). Use "
                           "'execution.runtime-mode' = 'batch' or a window aggregation")
                    raise PlanError(msg)
                if sink is not None:
                    from sqlengine.optimizer.analysis import is_bounded

                    # (on Spark each micro-batch commits what it wrote, as a checkpoint)
                    why = sink.sink_refusal(
                        dict(target.options), self.streaming,
                        not self.streaming or is_bounded(plan.input),
                        bool(self.options.get("execution.checkpointing.interval")) or
                        self.options.get("execution.target", "native").lower() == "spark")
                    if why is not None:
                        raise PlanError(f"table {target.table!r}: {why}")
                enforcer = self.options.get("table.exec.sink.not-null-enforcer", "ERROR")
                if enforcer.upper() == "DROP":  # (read by the sink: runtime/operators/sink.py)
                    target = replace(target, options=(*target.options,
                                                      (connectors.NOT_NULL_ENFORCER, "DROP")))
                return PhysicalNode(TableSinkSpec(
                    schema=plan.schema, updating=child.op.updating, table=target.table,
                    target=target, input_updating=child.op.updating),
                    ((child, FORWARD),))
            case Iterate():
                return self._iterate(plan)
            case LookupJoin():
                child = self.translate(plan.left)
                return PhysicalNode(LookupJoinSpec(
                    schema=plan.schema, updating=child.op.updating, join_kind=plan.kind,
                    source=plan.source, table_schema=plan.table_schema,
                    left_keys=plan.left_keys, key_columns=plan.key_columns,
                    condition=plan.condition, left_width=len(plan.left.schema),
                    retry=plan.retry),
                    ((child, FORWARD),))
            case WorkingTable():
                return PhysicalNode(IterationSourceSpec(schema=plan.schema, name=plan.name,
                                                        chain_strategy=ChainStrategy.HEAD))
            case StepInput():
                return PhysicalNode(IterationSourceSpec(
                    schema=plan.schema, name=plan.table, index=plan.index,
                    chain_strategy=ChainStrategy.HEAD))
            case _:
                msg = f"no physical operator for {type(plan).__name__}"
                raise NotSupportedError(msg)

    def _enough_rows(self, plan: N.Limit) -> None:
        """A LIMIT over a recursive query through projections only (no filter, no other
        reader of either): the loop may end once it has found OFFSET + LIMIT rows (in
        streaming mode too: the LIMIT takes the first rows to arrive)."""
        if plan.fetch is None:
            return
        node = plan.input
        while isinstance(node, N.Project) and self.consumers.get(id(node), 1) == 1:
            node = node.input
        if isinstance(node, Iterate) and self.consumers.get(id(node), 1) == 1:
            self.enough_rows[id(node)] = plan.fetch + plan.offset

    def _iterate(self, plan: Iterate) -> PhysicalNode:
        """A recursive query. At parallelism > 1, when the step is an equi-join of the
        recursive table with a static side, the iteration is partitioned: its base rows are
        hash-partitioned by the recursive table's join columns and the static side (its
        input 1) by its own join keys, so each subtask runs the step on co-located rows and
        the rows a round derives go to the subtask of their key (a superstep aligned across
        the subtasks in batch mode). Otherwise one task gathers the base rows and runs the
        rounds (a SINGLE exchange: the fixpoint is decided over every row). In streaming
        mode the step's tables become the iteration's inputs too, fed as they arrive."""
        child = self.translate(plan.base)
        if child.op.updating or any(isinstance(n, N.Scan) and n.source.changelog
                                    for n in _walk(plan.step)):
            msg = "WITH RECURSIVE needs insert-only inputs; an input here is updating"
            raise NotSupportedError(msg)
        key = "table.exec.iteration.max-rounds"
        rounds = int(self.options[key]) if self.options.get(key) else MAX_ROUNDS
        parallel = int(self.options.get("parallelism.default", "1") or "1") > 1 and \
            str(self.options.get("execution.target", "native")).lower() != "spark"
        if self.streaming:  # (what a maintained step cannot hold is refused either way)
            _step_inputs(plan.step, plan.name)
        found = _colocation(plan) if parallel else None
        if isinstance(found, tuple):
            cols, static, static_keys = found
            fields = plan.schema.fields
            refs = tuple(ColumnRef(i, fields[i].name, fields[i].type) for i in cols)
            static_node = self.translate(static)
            if not static_node.op.updating:
                label = static.source.table if isinstance(static, N.Scan) else "static side"
                step = _replace_node(plan.step, static, StepInput(label, 1, static.schema))
                op = IterateSpec(schema=plan.schema, name=plan.name, distinct=plan.distinct,
                                 step=step, max_rounds=rounds, streaming=self.streaming,
                                 partition=cols,
                                 static_keys=tuple(k.sql() for k in static_keys))
                return PhysicalNode(op, ((child, Exchange(Partitioning.HASH, refs)),
                                         (static_node,
                                          Exchange(Partitioning.HASH, static_keys))))
            found = "its static side is an updating stream"
        inputs = [(child, Exchange(Partitioning.SINGLE))]
        step = plan.step
        if self.streaming:
            step, scans = _step_inputs(step, plan.name)
            inputs += [(self.translate(scan), Exchange(Partitioning.SINGLE)) for scan in scans]
        op = IterateSpec(schema=plan.schema, name=plan.name, distinct=plan.distinct,
                         step=step, max_rounds=rounds, streaming=self.streaming,
                         single_reason=found or "",
                         enough_rows=self.enough_rows.get(id(plan)))
        return PhysicalNode(op, tuple(inputs))

    def _aggregate(self, plan: N.Aggregate) -> PhysicalNode:
        child = self.translate(plan.input)
        exchange = Exchange(Partitioning.HASH, plan.keys) if plan.keys \
            else Exchange(Partitioning.SINGLE)
        ttl = (self.ttl if plan.state_ttl is None else plan.state_ttl) if self.streaming else 0
        op = GroupAggregateSpec(
            schema=plan.schema, updating=self.streaming, keys=plan.keys, aggs=plan.aggs,
            key_names=plan.key_names, agg_names=plan.agg_names,
            input_updating=child.op.updating, emit="changelog" if self.streaming else "final",
            ttl=ttl)
        return PhysicalNode(op, ((child, exchange),))

    def _window_tvf(self, plan: N.WindowTVF) -> PhysicalNode:
        alone = plan.kind == "session" and id(plan) not in self.session_tvfs
        if self.lateness_refusal and self.streaming and not plan.proctime and (
                id(plan) in self.windowed_tvfs or id(plan) in self.session_tvfs):
            raise PlanError(self.lateness_refusal)
        column = plan.input.schema.fields[plan.time_index]
        if self.streaming and not plan.proctime and not column.rowtime:
            # (batch mode windows any TIMESTAMP column, as Flink's: every row is there)
            msg = (f"column {column.name!r} is not a time attribute: windows in streaming mode "
                   "need a rowtime column (declare a WATERMARK FOR it) or PROCTIME(); in "
                   "batch mode any TIMESTAMP column can be windowed")
            raise PlanError(msg)
        if plan.zone and self.options.get("execution.target") == "spark":
            msg = (f"windows over the TIMESTAMP_LTZ column {column.name!r} in session time zone "
                   f"{plan.zone!r} are not supported on Spark yet: they run on the native "
                   "runtime" + ("" if plan.zone == "UTC" or not plan.proctime else
                                ", or with 'table.local-time-zone' = 'UTC'"))
            raise NotSupportedError(msg)
        child = self.translate(plan.input)
        if not plan.proctime:
            self._refuse_join_time(plan.input, plan.time_index, "windows")
        if child.op.updating and self.options.get("execution.target") == "spark":
            msg = ("window table functions over an updating input (a changelog source or "
                   "an aggregate's result) are not supported on Spark: they run on the "
                   "native runtime")
            raise NotSupportedError(msg)
        # (over an updating input, as Flink's since 1.19, the rows keep their kinds: a
        # window aggregate above takes the retractions off, other readers see changes)
        op = WindowAssignSpec(
            schema=plan.schema, updating=child.op.updating, window_kind=plan.kind,
            time_index=plan.time_index, size=plan.size, slide=plan.slide, offset=plan.offset,
            lateness=self.lateness,
            proctime=plan.proctime, text=plan.explain_label().removeprefix("WindowTVF: "),
            drop_late=self.streaming and id(plan) in self.windowed_tvfs,
            sliced=id(plan) in self.sliced_tvfs,
            zone=plan.zone)
        assign = PhysicalNode(op, ((child, FORWARD),))
        if not alone:
            return assign
        # The SESSION TVF on its own: rows wait (per PARTITION BY key) for their session.
        keys = tuple(ColumnRef(i, plan.schema.fields[i].name, plan.schema.fields[i].type)
                     for i in plan.partition_keys)
        exchange = Exchange(Partitioning.HASH, keys) if keys else Exchange(Partitioning.SINGLE)
        session = SessionAssignSpec(schema=plan.schema, updating=child.op.updating,
                                    partition=plan.partition_keys,
                                    start_pos=len(plan.input.schema), gap=plan.size,
                                    zone=plan.zone)
        return PhysicalNode(session, ((assign, exchange),))

    def _join_time(self, plan: N.LogicalPlan, idx: int) -> bool:
        """Whether column ``idx`` of ``plan`` (translated already) is a rowtime column that,
        in streaming mode, comes out of a regular join: as in Flink, no time attribute any
        more (a regular join emits a row whenever its match comes, so event-time operators
        over it would drop rows as late by timing)."""
        return self.streaming and plan.schema.fields[idx].rowtime and \
            self._from_regular_join(plan, idx)

    def _refuse_join_time(self, plan: N.LogicalPlan, idx: int, what: str) -> None:
        """Refuses ``what`` (an event-time operator) over a regular join's time column."""
        if self._join_time(plan, idx):
            name = plan.schema.fields[idx].name
            msg = (f"column {name!r} is not a time attribute: it comes out of a regular join, "
                   "whose rows come whenever their match does (as in Flink, which makes it a "
                   f"plain TIMESTAMP there), so {what} cannot run on its event time; use the "
                   "join's inputs' time, an interval or window join, or batch mode")
            raise PlanError(msg)

    def _from_regular_join(self, plan: N.LogicalPlan, idx: int) -> bool:
        """Whether column ``idx`` of ``plan`` (translated already) comes, through projections,
        filters and UNNESTs, out of a join that runs as a regular join (not an interval or
        temporal one, which keep their inputs' time attributes)."""
        from sqlengine.plan.expressions import ColumnRef

        while True:
            match plan:
                case N.Project():
                    e = plan.exprs[idx]
                    if not isinstance(e, ColumnRef):
                        return False
                    idx, plan = e.index, plan.input
                case N.Filter():
                    plan = plan.input
                case N.Unnest() if idx < len(plan.input.schema) - 1:
                    plan = plan.input
                case N.Join():
                    node = self.memo.get(id(plan))
                    return node is not None and isinstance(node.op, JoinSpec)
                case _:
                    return False

    def _window_aggregate(self, plan: N.Aggregate) -> PhysicalNode | None:
        from sqlengine.plan.expressions import ColumnRef

        found: dict[str, tuple[int, N.WindowTVF]] = {}
        unioned = False  # (the window columns come through a UNION ALL of TVFs)
        for pos, k in enumerate(plan.keys):
            if isinstance(k, ColumnRef):
                hit = trace_window_column(plan.input, k.index)
                if hit is None and self.options.get("execution.target") != "spark":
                    hit = union_window_column(plan.input, k.index)
                    unioned = unioned or hit is not None
                if hit is not None and hit[1] in ("window_start", "window_end"):
                    found.setdefault(hit[1], (pos, hit[0]))
        if set(found) != {"window_start", "window_end"} or \
                found["window_start"][1] is not found["window_end"][1]:
            return None
        tvf = found["window_end"][1]
        if tvf.kind == "hop" and tvf.size % tvf.slide:  # (as Flink's window aggregates)
            text = tvf.explain_label().removeprefix("WindowTVF: ")
            msg = (f"a window aggregation over {text} needs a size that is a whole multiple "
                   "of the slide (a HOP on its own, or under a window join or Top-N, may "
                   "have any)")
            raise PlanError(msg)
        if not unioned:
            # (under a union each TVF keeps its rows, and the aggregate drops the late ones
            # by its own watermark, the union's inputs' least, as Flink's window aggregate)
            self.windowed_tvfs.add(id(tvf))
        window_pos = {found["window_start"][0], found["window_end"][0]}
        # (a window_time key is its window's too: the same for all the window's rows once
        # a session is merged, so neither a shuffle key nor a session's key)
        traced = [trace_window_column(plan.input, k.index) if isinstance(k, ColumnRef)
                  else None for k in plan.keys]
        time_pos = next((pos for pos, hit in enumerate(traced) if hit is not None
                         and hit[0] is tvf and hit[1] == "window_time"), -1)
        others = tuple(k for i, k in enumerate(plan.keys)
                       if i not in window_pos and i != time_pos)
        exchange = Exchange(Partitioning.HASH, others) if others \
            else Exchange(Partitioning.SINGLE)
        start_pos, end_pos = found["window_start"][0], found["window_end"][0]
        op: SessionAggregateSpec | WindowAggregateSpec
        if tvf.kind == "session" and _directly_over(plan.input, tvf) and \
                _session_keys(plan.input, others, tvf):
            self.session_tvfs.add(id(tvf))
            child = self.translate(plan.input)
            self._check_changelog_window(child, plan)
            op = SessionAggregateSpec(
                schema=plan.schema, keys=plan.keys, aggs=plan.aggs, key_names=plan.key_names,
                start_pos=start_pos, end_pos=end_pos, gap=tvf.size, time_pos=time_pos,
                input_updating=child.op.updating, zone=tvf.zone)
        else:
            # (Spark's window operators take the windows whole; a TVF read by another node
            # too must give its rows their windows)
            # (slices of a zone's wall clock would not be of one length in instants)
            sliced = self.lateness == 0 and self.options.get("execution.target") != "spark" \
                and not tvf.zone and not unioned and \
                _sliceable(plan, tvf, window_pos, self.consumers)
            if sliced:
                self.sliced_tvfs.add(id(tvf))
            child = self.translate(plan.input)
            self._check_changelog_window(child, plan)
            op = WindowAggregateSpec(
                schema=plan.schema, updating=self.lateness > 0, keys=plan.keys, aggs=plan.aggs,
                key_names=plan.key_names, start_pos=start_pos, end_pos=end_pos,
                lateness=self.lateness, proctime=tvf.proctime,
                slice_size=tvf.size if sliced else 0, slice_step=tvf.slide if sliced else 0,
                zone=tvf.zone, input_updating=child.op.updating)
        return PhysicalNode(op, ((child, exchange),))

    def _check_changelog_window(self, child: PhysicalNode, plan: N.Aggregate) -> None:
        """A window aggregate over an updating input takes retractions off its windows'
        counts and sums; the aggregates that cannot (yet) are refused by name."""
        if not child.op.updating:
            return
        from sqlengine.plan.partials import SIGNED

        for a in plan.aggs:
            if a.func not in (*SIGNED, "min", "max"):
                name = a.sql().split("(", 1)[0].upper()
                msg = (f"{name} in a window aggregation over an updating input (a changelog "
                       "source or an aggregate's result) is not supported yet: COUNT, SUM, "
                       "AVG (also DISTINCT), MIN and MAX are")
                raise NotSupportedError(msg)
        if self.lateness:
            msg = ("'table.exec.emit.allow-lateness' with a window aggregation over an "
                   "updating input is not supported")
            raise NotSupportedError(msg)

    def _rank(self, plan: N.Rank) -> PhysicalNode:
        from sqlengine.plan.expressions import ColumnRef

        text = plan.explain_label().removeprefix("Rank: ")
        found = window_columns(plan.partition, plan.input)
        if window_bounds(plan.partition, plan.input) is not None:
            self.windowed_tvfs.add(id(found["window_end"][1]))
        child = self.translate(plan.input)
        # (an unfiltered ROW_NUMBER over bounded input is numbered at its end, below)
        numbered_at_end = plan.limit is None and self.streaming
        others = tuple(p for p in plan.partition
                       if not (isinstance(p, ColumnRef) and p.index in
                               {i for i, _ in found.values()}))
        exchange = Exchange(Partitioning.HASH, others) if others \
            else Exchange(Partitioning.SINGLE)
        retract = False
        if child.op.updating and not numbered_at_end:
            from sqlengine.optimizer.analysis import unbounded_sources

            if not unbounded_sources(plan.input):
                # Bounded: the changelog's final rows numbered at its end (as batch mode and
                # RANK do), then the first ones kept.
                return self._numbered_then_kept(plan, child, exchange)
            # Unbounded: a Top-N keeping every live row (Flink's retractable Top-N).
            retract = True
        dedup = _deduplication(plan) if self.streaming else None
        if dedup is not None and dedup[1] == "ROWTIME" and \
                self._join_time(plan.input, dedup[2]):
            dedup = None  # (as Flink: a Top-N on a plain TIMESTAMP, see _join_time)
        if retract and dedup is not None:
            msg = ("deduplication (ROW_NUMBER = 1 ordered by a time attribute) over an "
                   "updating input is not supported, as in Flink")
            raise NotSupportedError(msg)
        if {"window_start", "window_end"} <= set(found) and \
                found["window_start"][1] is found["window_end"][1] and not child.op.updating:
            window_op = WindowTopNSpec(
                schema=plan.schema, partition=plan.partition, order=plan.order,
                limit=plan.limit, text=text, end_index=found["window_end"][0],
                keep=dedup[0] if dedup is not None and dedup[1] == "ROWTIME" else "",
                exchange_keys=others, zone=found["window_end"][1].zone)
            return PhysicalNode(window_op, ((child, exchange),))
        if plan.limit is None and self.streaming and not child.op.updating and not (
                len(plan.order) == 1 and isinstance(plan.order[0].expr, ColumnRef) and
                self._join_time(plan.input, plan.order[0].expr.index)):
            over = _row_number_over_time(plan, child, self.ttl if self.streaming else 0)
            if over is not None:
                return over
        if plan.limit is None and self.streaming:
            from sqlengine.optimizer.analysis import unbounded_sources

            if unbounded_sources(plan.input):
                msg = ("ROW_NUMBER without a filter on it (WHERE rn <= N) is not supported "
                       "in streaming mode over an unbounded input")
                raise NotSupportedError(msg)
            # Bounded input: numbered at its end, as batch mode does.
            call = N.WindowCall("row_number", (), T.BIGINT)
            return PhysicalNode(WindowFunctionsSpec(
                schema=plan.schema, partition=plan.partition, order=plan.order,
                calls=(call,), input_schema=plan.input.schema), ((child, exchange),))
        keep, time_kind, time_index = dedup if dedup is not None else ("", "", -1)
        op = TopNSpec(schema=plan.schema, updating=self.streaming and keep != "FirstRow",
                      partition=plan.partition, order=plan.order, limit=plan.limit, text=text,
                      emit="changelog" if self.streaming else "final",
                      output_rank=plan.output_rank, keep=keep, time_kind=time_kind,
                      time_index=time_index, retract=retract,
                      ttl=self.ttl if self.streaming else 0)
        return PhysicalNode(op, ((child, exchange),))

    def _numbered_then_kept(self, plan: N.Rank, child: PhysicalNode,
                            exchange: Exchange) -> PhysicalNode:
        from sqlengine.plan.expressions import Call, ColumnRef, Literal

        call = N.WindowCall("row_number", (), T.BIGINT)
        numbered = PhysicalNode(WindowFunctionsSpec(
            schema=plan.schema, partition=plan.partition, order=plan.order, calls=(call,),
            input_schema=plan.input.schema), ((child, exchange),))
        if plan.limit is None:
            return numbered
        last = plan.schema.fields[-1]
        keep = Call("le", (ColumnRef(len(plan.schema) - 1, last.name, last.type),
                           Literal(plan.limit, T.BIGINT)), T.BOOLEAN)
        return PhysicalNode(FilterSpec(schema=plan.schema, predicate=keep),
                            ((numbered, FORWARD),))

    def _join(self, plan: N.Join) -> PhysicalNode:
        timed = self.streaming and plan.kind in ("inner", "left", "full")
        # (a window join: every kind, as Flink's window joins, IN / EXISTS as semi and anti)
        windows = window_join_ends(plan) if self.streaming and plan.left_keys else None
        # (a window join judges lateness itself, by its own watermark, the minimum of both
        # inputs', as Flink's: the TVFs below it keep every row)
        left = self.translate(plan.left)
        right = self.translate(plan.right)
        if windows is not None and not (left.op.updating or right.op.updating):
            window_op = WindowJoinSpec(
                schema=plan.schema, join_kind=plan.kind, left_keys=plan.left_keys,
                right_keys=plan.right_keys, condition=plan.condition,
                left_width=len(plan.left.schema), end_indexes=windows,
                zone=_join_zone(plan, windows), right_schema=plan.right.schema)
            return PhysicalNode(window_op, ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                                     (right, Exchange(Partitioning.HASH, plan.right_keys))))
        bounds = interval_bounds(plan) if timed else None
        if bounds is not None and (self._join_time(plan.left, bounds[0]) or
                                   self._join_time(plan.right, bounds[1])):
            bounds = None  # (as Flink: a regular join then, see _join_time)
        if bounds is not None and not (left.op.updating or right.op.updating):
            lt, rt, lower, upper, residual = bounds
            interval_op = IntervalJoinSpec(
                schema=plan.schema, join_kind=plan.kind, left_keys=plan.left_keys,
                right_keys=plan.right_keys, condition=residual,
                left_width=len(plan.left.schema), left_time=lt, right_time=rt, lower=lower,
                upper=upper)
            if not plan.left_keys:  # (no equality key: every pair in range, in one subtask)
                return PhysicalNode(interval_op, ((left, Exchange(Partitioning.SINGLE)),
                                                  (right, Exchange(Partitioning.SINGLE))))
            return PhysicalNode(interval_op, ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                                     (right, Exchange(Partitioning.HASH, plan.right_keys))))
        # A streaming join retracts when a later row changes what it emitted: the null-padded
        # rows of outer joins, an anti join's rows once a match arrives.
        updating = self.streaming and (plan.kind in ("left", "full", "anti")
                                       or left.op.updating or right.op.updating)
        if plan.left_keys:
            inputs = ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                      (right, Exchange(Partitioning.HASH, plan.right_keys)))
        else:  # a nested-loop join: every pair meets in one subtask
            inputs = ((left, Exchange(Partitioning.SINGLE)), (right, Exchange(Partitioning.SINGLE)))
        evict = _evictions(plan) if self.streaming and plan.kind == "inner" and \
            self.lateness == 0 and not (left.op.updating or right.op.updating) else ()
        # (a STATE_TTL hint's TTL of a side over the option's)
        left_ttl, right_ttl = (self.ttl if t is None else t for t in plan.state_ttl)
        hint = plan.strategy if not self.streaming else None  # (streaming: as Flink, none)
        if hint is not None and hint[0] in ("SHUFFLE_MERGE", "NEST_LOOP"):
            what = "a sort-merge join" if hint[0] == "SHUFFLE_MERGE" else "a nested-loop join"
            msg = (f"the '{hint[0]}' hint asks for {what}, which is not implemented: joins here "
                   "are hash joins (SHUFFLE_HASH(t) builds on t, BROADCAST(t) sends t to "
                   "every subtask)")
            raise NotSupportedError(msg)
        op = JoinSpec(
            schema=plan.schema, updating=updating, join_kind=plan.kind,
            left_keys=plan.left_keys, right_keys=plan.right_keys, condition=plan.condition,
            left_width=len(plan.left.schema), emit="stream" if self.streaming else "final",
            ttl=left_ttl, right_ttl=None if right_ttl == left_ttl else right_ttl,
            right_schema=plan.right.schema, evict=evict, hint=hint)
        return PhysicalNode(op, inputs)

    def _streaming_sort(self, plan: N.Sort, child: PhysicalNode) -> PhysicalNode | None:
        """A streaming ORDER BY as Flink runs it, or None for the sort at the end of a
        bounded input (an extension: Flink refuses ORDER BY other than on a time attribute).

        Without a LIMIT on an insert-only input, first on an ascending time attribute: the
        temporal sort (rows leave in order as the watermark passes them, late rows dropped).
        With a LIMIT over an unbounded input: the Top-N of the whole input (Flink's
        SortLimit, an updating result; over an updating input, a retractable one)."""
        from sqlengine.optimizer.analysis import unbounded_sources
        from sqlengine.plan.expressions import Call, ColumnRef, Literal

        first = plan.keys[0].expr if plan.keys else None
        field = plan.input.schema.fields[first.index] if isinstance(first, ColumnRef) \
            else None
        timed = field is not None and (field.rowtime or field.proctime) and \
            plan.keys[0].ascending and not self._join_time(plan.input, first.index)
        if timed and plan.fetch is None and not plan.offset and not child.op.updating:
            assert isinstance(first, ColumnRef) and field is not None
            op = TemporalSortSpec(schema=plan.schema, keys=plan.keys, time_index=first.index,
                                  time_kind="ROWTIME" if field.rowtime else "PROCTIME")
            return PhysicalNode(op, ((child, Exchange(Partitioning.SINGLE)),))
        unbounded = unbounded_sources(plan.input)
        if not unbounded:
            return None
        if plan.fetch is None:
            what = "OFFSET without FETCH / LIMIT" if plan.offset else "ORDER BY"
            msg = (f"{what} over an unbounded input (table {unbounded[0]!r}) is not supported: "
                   "in streaming mode ORDER BY must be on an ascending time attribute first "
                   "(a rowtime or PROCTIME() column) of an insert-only input, or have a LIMIT "
                   "(as in Flink)")
            raise PlanError(msg)
        # The first OFFSET + LIMIT rows by the keys, those past OFFSET kept, the number dropped.
        rank = N.Rank(plan.input, (), plan.keys, name="$rn", limit=plan.offset + plan.fetch,
                      output_rank=plan.offset > 0)
        kept: N.LogicalPlan = rank
        if plan.offset:
            number = ColumnRef(len(plan.input.schema), "$rn", T.BIGINT)
            kept = N.Filter(rank, Call("gt", (number, Literal(plan.offset, T.BIGINT)),
                                       T.BOOLEAN))
        fields = plan.input.schema.fields
        return self.translate(N.Project(kept, tuple(ColumnRef(i, f.name, f.type)
                                                    for i, f in enumerate(fields)),
                                        tuple(f.name for f in fields)))

    def _require_bounded(self, plan: N.LogicalPlan, what: str) -> None:
        if not self.streaming:
            return
        from sqlengine.optimizer.analysis import unbounded_sources

        unbounded = unbounded_sources(plan)
        if unbounded:
            msg = (f"{what} needs a bounded input, but table {unbounded[0]!r} is unbounded "
                   "(give it 'number-of-rows', or use a window)")
            raise PlanError(msg)




def _step_inputs(step: N.LogicalPlan, name: str
                 ) -> tuple[N.LogicalPlan, list[N.LogicalPlan]]:
    """The step with each table it reads (a scan) as a StepInput leaf, and the scans. Only
    what keeps an insert-only stream insert-only may sit in a maintained step: an outer,
    semi or anti join would retract rows the iteration already built on."""
    scans: list[N.LogicalPlan] = []

    def swap(node: N.LogicalPlan) -> N.LogicalPlan:
        what = None
        if isinstance(node, N.Join) and node.kind != "inner":
            what = f"a {node.kind.upper()} join"
        elif isinstance(node, N.Aggregate | N.Rank) and not _windowed(node) and not (
                isinstance(node, N.Aggregate) and not node.aggs):  # (DISTINCT only adds)
            what = ("an aggregation" if isinstance(node, N.Aggregate)
                    else "a Top-N (ROW_NUMBER)")
        elif isinstance(node, N.ReplicateRows):
            what = "an INTERSECT ALL or EXCEPT ALL"
        if what is not None:
            msg = (f"{what} in the step of the recursive query {name!r} is not supported in "
                   "streaming mode (its rows change as input arrives: it would retract rows "
                   "the iteration already built on); run it in batch mode")
            raise NotSupportedError(msg)
        if isinstance(node, N.Scan):
            for i, seen in enumerate(scans):
                if seen is node:
                    return StepInput(node.source.table, i + 1, node.schema)
            scans.append(node)
            return StepInput(node.source.table, len(scans), node.schema)
        kids = node.children()
        if not kids:
            return node
        return node.with_children(tuple(swap(k) for k in kids))

    return swap(step), scans


def _windowed(node: N.Aggregate | N.Rank) -> bool:
    """Whether ``node`` works per event-time window (insert-only in streaming mode): grouped
    or partitioned by a window's window_start and window_end."""
    keys = node.keys if isinstance(node, N.Aggregate) else node.partition
    fields = node.input.schema.fields
    names = {fields[k.index].name.lower() for k in keys if isinstance(k, ColumnRef)}
    return {"window_start", "window_end"} <= names


def _colocation(plan: Iterate
                ) -> tuple[tuple[int, ...], N.LogicalPlan, tuple[Expr, ...]] | str:
    """How the step of ``plan`` can run partitioned: the recursive table's columns its
    rows are routed by, the static side of the step's join and that side's join keys (its
    rows are routed by them: co-located). Else why not (the iteration runs in one task):
    the step must be projections and filters over one equi-join whose one side reads the
    recursive table (through projections and filters of its columns) and whose other side
    does not."""
    from sqlengine.plan.iteration import working_tables

    why = ("the step has no equi-join of the recursive table with a static side to "
           "partition by")
    if len(working_tables(plan.step)) != 1:
        return "the step reads the recursive table more than once (several step terms)"
    node = plan.step
    while isinstance(node, (N.Project, N.Filter)):
        node = node.input
    if not isinstance(node, N.Join) or not node.left_keys:
        return why
    sides = [(node.left, node.left_keys, node.right, node.right_keys)]
    if node.kind == "inner":
        sides.append((node.right, node.right_keys, node.left, node.left_keys))
    elif node.kind not in ("semi", "anti", "left"):
        return why
    for side, keys, static, static_keys in sides:
        if not working_tables(side) or working_tables(static):
            continue
        cols = [_working_column(side, k) for k in keys]
        if any(c is None for c in cols):
            return why + " (its join keys are not columns of the recursive table)"
        return tuple(c for c in cols if c is not None), static, static_keys
    return why


def _working_column(plan: N.LogicalPlan, key: Expr) -> int | None:
    """The recursive table's column ``key`` (over ``plan``) is, through projections and
    filters, or None."""
    if not isinstance(key, ColumnRef):
        return None
    index = key.index
    while True:
        match plan:
            case WorkingTable():
                return index
            case N.Filter():
                plan = plan.input
            case N.Project():
                e = plan.exprs[index]
                if not isinstance(e, ColumnRef):
                    return None
                index, plan = e.index, plan.input
            case _:
                return None


def _replace_node(plan: N.LogicalPlan, old: N.LogicalPlan, new: N.LogicalPlan
                  ) -> N.LogicalPlan:
    if plan is old:
        return new
    kids = plan.children()
    if not kids:
        return plan
    return plan.with_children(tuple(_replace_node(k, old, new) for k in kids))


def _walk(plan: N.LogicalPlan) -> list[N.LogicalPlan]:
    out, stack = [], [plan]
    while stack:
        node = stack.pop()
        out.append(node)
        stack.extend(node.children())
    return out


def _join_zone(plan: N.Join, ends: tuple[int, int]) -> str:
    """The wall-clock zone of a window join's windows (see WindowTVF.zone): both sides'."""
    zones = []
    for side, end in zip((plan.left, plan.right), ends):
        hit = trace_window_column(side, end)
        zones.append(hit[0].zone if hit is not None else "")
    if zones[0] != zones[1]:
        msg = ("a window join of windows over a TIMESTAMP_LTZ column with windows over a "
               "TIMESTAMP column outside UTC is not supported: their days are not the same")
        raise NotSupportedError(msg)
    return zones[0]


def window_columns(partition: tuple[Expr, ...], plan: N.LogicalPlan
                   ) -> dict[str, tuple[int, N.WindowTVF]]:
    """Of the ``partition`` keys over ``plan``, those that are a window TVF's window_start /
    window_end / window_time: by name, the column and the TVF."""
    found = {}
    for p in partition:
        if isinstance(p, ColumnRef):
            hit = trace_window_column(plan, p.index)
            if hit is not None:
                found[hit[1]] = (p.index, hit[0])
    return found


def window_bounds(partition: tuple[Expr, ...], plan: N.LogicalPlan
                  ) -> tuple[int, N.WindowTVF] | None:
    """The window_end column and its TVF, when the ``partition`` keys over ``plan`` hold
    both window_start and window_end of one window TVF."""
    found = window_columns(partition, plan)
    if {"window_start", "window_end"} <= set(found) and \
            found["window_start"][1] is found["window_end"][1]:
        return found["window_end"]
    return None


def trace_window_column(plan: N.LogicalPlan, idx: int) -> tuple[N.WindowTVF, str] | None:
    """Follow column ``idx`` down through projections, filters and UNNESTs to a window TVF's
    window_start / window_end / window_time, if that is where it comes from."""
    from sqlengine.plan.expressions import ColumnRef

    match plan:
        case N.WindowTVF():
            width = len(plan.input.schema)
            return (plan, N.WINDOW_COLUMNS[idx - width]) if idx >= width else None
        case N.Project():
            e = plan.exprs[idx]
            return trace_window_column(plan.input, e.index) if isinstance(e, ColumnRef) \
                else None
        case N.Filter():
            return trace_window_column(plan.input, idx)
        case N.Unnest() if idx < len(plan.input.schema) - 1:
            # (CROSS JOIN UNNEST: the input's other columns pass through, each row once per
            # element, so a window column stays one, as through Flink's correlate: an
            # aggregate or Top-N over it is windowed and drops late rows)
            return trace_window_column(plan.input, idx)
        case N.Expand():
            # A grouping-set Expand keeps a window column when every set holds it.
            refs = {e.index if isinstance(e, ColumnRef) else None
                    for e in (p[idx] for p in plan.projections)}
            if len(refs) != 1 or None in refs:
                return None
            return trace_window_column(plan.input, refs.pop())  # type: ignore[arg-type]
        case N.Aggregate() if idx < len(plan.keys):
            # Window propagation: a window aggregate's window_start / window_end keys stay
            # window columns, so an aggregate over its result is a window aggregate too.
            k = plan.keys[idx]
            if not isinstance(k, ColumnRef):
                return None
            hit = trace_window_column(plan.input, k.index)
            if hit is None:
                return None
            ends = [trace_window_column(plan.input, x.index) for x in plan.keys
                    if isinstance(x, ColumnRef)]
            names = {h[1] for h in ends if h is not None and h[0] is hit[0]}
            return hit if {"window_start", "window_end"} <= names else None
        case _:
            return None


def union_window_column(plan: N.LogicalPlan, idx: int) -> tuple[N.WindowTVF, str] | None:
    """Column ``idx`` of ``plan`` followed through projections and filters to a UNION ALL
    whose every input gives that window column (window_start, window_end or window_time) of
    a TUMBLE, HOP or CUMULATE window TVF of one window (kind, size, slide, offset, time
    zone, event time): the first input's (TVF, column). Flink keeps window properties
    through such a union (FlinkRelMdWindowProperties), so an aggregate over it is a window
    aggregate."""
    match plan:
        case N.Project():
            e = plan.exprs[idx]
            return union_window_column(plan.input, e.index) if isinstance(e, ColumnRef) \
                else None
        case N.Filter():
            return union_window_column(plan.input, idx)
        case N.Union():
            hits = [trace_window_column(i, idx) or union_window_column(i, idx)
                    for i in plan.inputs]
            first = hits[0]
            if first is None or first[0].kind == "session" or first[0].proctime:
                return None

            def window(t: N.WindowTVF) -> tuple:
                return t.kind, t.size, t.slide, t.offset, t.zone, t.proctime

            if all(h is not None and h[1] == first[1] and window(h[0]) == window(first[0])
                   for h in hits):
                return first
    return None


def _time_term(e: Expr, fields: tuple[N.Field, ...]) -> tuple[int, int] | None:
    """``rowtime_column [+|- INTERVAL]`` as (column, offset ms)."""
    term = _column_term(e)
    return term if term is not None and fields[term[0]].rowtime else None


def _column_term(e: Expr) -> tuple[int, int] | None:
    """``column [+|- INTERVAL]`` as (column, offset ms)."""
    import datetime as dt

    from sqlengine.plan.expressions import Call, Literal

    if isinstance(e, ColumnRef):
        return e.index, 0
    if isinstance(e, Call) and e.name in ("add", "subtract") and \
            isinstance(e.args[0], ColumnRef) and isinstance(e.args[1], Literal) and \
            isinstance(e.args[1].value, dt.timedelta):
        ms = int(e.args[1].value.total_seconds() * 1000)
        return e.args[0].index, ms if e.name == "add" else -ms
    return None


# How far above the watermark a window aggregate's window column is in every row it will
# still emit: a window fires when the watermark reaches its end - 1, so one not fired yet
# has end - 1 > watermark.
_FIRED_AHEAD = {"window_end": 2, "window_time": 1}


def _fired_window_column(plan: N.LogicalPlan, idx: int) -> str | None:
    """'window_end' / 'window_time' when column ``idx`` of ``plan`` is that key of an
    event-time TUMBLE / HOP / CUMULATE window aggregate below (through projections and
    filters): its rows come as windows fire, so each row still to come holds a later value
    than the watermark (see _FIRED_AHEAD)."""
    match plan:
        case N.Project():
            e = plan.exprs[idx]
            return _fired_window_column(plan.input, e.index) if isinstance(e, ColumnRef) \
                else None
        case N.Filter():
            return _fired_window_column(plan.input, idx)
        case N.Aggregate() if idx < len(plan.keys):
            key = plan.keys[idx]
            if not isinstance(key, ColumnRef):
                return None
            hit = trace_window_column(plan.input, key.index)
            if hit is None or hit[1] not in _FIRED_AHEAD:
                return None
            tvf = hit[0]
            names = set()
            for k in plan.keys:
                found = trace_window_column(plan.input, k.index) \
                    if isinstance(k, ColumnRef) else None
                if found is not None and found[0] is tvf:
                    names.add(found[1])
            windowed = {"window_start", "window_end"} <= names
            if not windowed or tvf.kind not in ("tumble", "hop", "cumulate") or tvf.proctime:
                return None
            return hit[1]
    return None


def _evictions(plan: N.Join) -> tuple[tuple[int, int, int], ...]:
    """An inner join's state rows that can never meet a row still to come: for a condition
    ``x >= y + c`` (or >, or BETWEEN's lower bound) where y is a window aggregate's window
    end (or time) on one side, every row still to come on that side has y >= watermark + a
    (a: _FIRED_AHEAD), so the other side's rows with x < watermark + a + c match none of them
    and are dropped from the state as the watermark moves (Flink keeps them: its window_end
    is no time attribute). Rows arriving late still meet every row kept on the other side:
    the answer is a regular join's. As (side, column within that side, offset): rows of
    ``side`` with column < watermark + offset go."""
    from sqlengine.plan.expressions import Call, conjuncts

    if plan.condition is None:
        return ()
    n_left = len(plan.left.schema)
    flip = {"ge": "le", "gt": "lt", "le": "ge", "lt": "gt"}
    out: dict[tuple[int, int], int] = {}
    for c in conjuncts(plan.condition):
        if not (isinstance(c, Call) and c.name in flip):
            continue
        a, b = _column_term(c.args[0]), _column_term(c.args[1])
        if a is None or b is None or (a[0] < n_left) == (b[0] < n_left):
            continue
        op = c.name
        if op in ("le", "lt"):  # as "a >= b": the bounded term first
            a, b, op = b, a, flip[op]
        # a.col + a.off >= b.col + b.off: a.col >= b.col + (b.off - a.off); b the window side
        bounded, window = a, b
        w_side = 0 if window[0] < n_left else 1
        w_plan = plan.left if w_side == 0 else plan.right
        w_index = window[0] - (0 if w_side == 0 else n_left)
        name = _fired_window_column(w_plan, w_index)
        if name is None:
            continue
        side = 1 - w_side
        column = bounded[0] - (0 if side == 0 else n_left)
        if not pa.types.is_timestamp(plan.schema.fields[bounded[0]].type):
            continue
        offset = _FIRED_AHEAD[name] + window[1] - bounded[1]
        key = (side, column)
        out[key] = max(out.get(key, offset), offset)  # (the tightest bound)
    return tuple((side, column, offset) for (side, column), offset in sorted(out.items()))


def interval_bounds(plan: N.Join) -> tuple[int, int, int, int, Expr | None] | None:
    """For ``l.ts BETWEEN r.ts - a AND r.ts + b`` style conditions: (left time column, right
    time column within the right input, lower, upper) with lower <= l.ts - r.ts <= upper, and
    the rest of the condition. None unless both bounds are there."""
    from sqlengine.plan.expressions import Call, conjunction, conjuncts

    if plan.condition is None:
        return None
    fields = plan.schema.fields
    n_left = len(plan.left.schema)
    lower, upper = None, None
    times: set[tuple[int, int]] = set()
    rest: list[Expr] = []
    flip = {"ge": "le", "gt": "lt", "le": "ge", "lt": "gt"}
    for c in conjuncts(plan.condition):
        if not (isinstance(c, Call) and c.name in flip):
            rest.append(c)
            continue
        a, b = _time_term(c.args[0], fields), _time_term(c.args[1], fields)
        if a is None or b is None or (a[0] < n_left) == (b[0] < n_left):
            rest.append(c)
            continue
        op = c.name
        if a[0] >= n_left:  # right term first: flip to "left op right"
            a, b, op = b, a, flip[op]
        # l + oa (op) r + ob  =>  l - r (op) ob - oa
        bound = b[1] - a[1]
        times.add((a[0], b[0] - n_left))
        if op in ("ge", "gt"):
            value = bound + (1 if op == "gt" else 0)
            lower = value if lower is None else max(lower, value)
        else:
            value = bound - (1 if op == "lt" else 0)
            upper = value if upper is None else min(upper, value)
    if lower is None or upper is None or len(times) != 1:
        return None
    lt, rt = times.pop()
    return lt, rt, lower, upper, conjunction(rest)


def window_join_ends(plan: N.Join) -> tuple[int, int] | None:
    """For a join whose keys pair window_start with window_start and window_end with
    window_end of windowed inputs: the window_end column of each input."""
    from sqlengine.plan.expressions import ColumnRef

    found: dict[str, tuple[int, int]] = {}
    for lk, rk in zip(plan.left_keys, plan.right_keys):
        if not (isinstance(lk, ColumnRef) and isinstance(rk, ColumnRef)):
            continue
        lw = trace_window_column(plan.left, lk.index)
        rw = trace_window_column(plan.right, rk.index)
        if lw is not None and rw is not None and lw[1] == rw[1]:
            found[lw[1]] = (lk.index, rk.index)
    if {"window_start", "window_end"} <= set(found):
        return found["window_end"]
    return None


_SLICEABLE = frozenset({"count_star", "count", "sum", "avg", "min", "max"})


def _sliceable(plan: N.Aggregate, tvf: N.WindowTVF, window_pos: set[int],
               consumers: dict[int, int]) -> bool:
    """Whether a HOP window aggregate can add up slices (Flink's slicing window aggregation):
    each row aggregated once into its slide-long slice, a window's result merged from its
    size / slide slices when it fires, instead of each row copied into every window. Only
    for event-time HOP windows a whole number of slides long, aggregates whose partial
    results merge in any order (no DISTINCT, no order-sensitive or Python aggregates), and
    when nothing between the TVF and the aggregate, nor any other key, argument or FILTER,
    reads a window column (a slice's bounds are not its windows'), and when the TVF and
    what is between are read by this aggregate only."""
    if tvf.kind != "hop" or tvf.proctime or not tvf.slide or tvf.size % tvf.slide or \
            tvf.size == tvf.slide:
        return False
    if any(a.func not in _SLICEABLE or a.distinct for a in plan.aggs):
        return False
    if any(a.func in ("min", "max") for a in plan.aggs) and _may_update(tvf.input):
        return False  # (over an updating input MIN / MAX keep their values: not slices)

    def reads_window(node: N.LogicalPlan, exprs: list[Expr]) -> bool:
        return any(isinstance(x, ColumnRef) and trace_window_column(node, x.index)
                   is not None for e in exprs for x in e.walk())

    others = [k for i, k in enumerate(plan.keys) if i not in window_pos]
    args = [a for call in plan.aggs for a in call.args] + \
        [call.filter for call in plan.aggs if call.filter is not None]
    if reads_window(plan.input, others + args):
        return False
    node = plan.input
    while True:
        if consumers.get(id(node)) != 1:
            return False
        if node is tvf:
            return True
        if isinstance(node, N.Project):
            if not all(isinstance(e, ColumnRef) for e in node.exprs):
                return False
        elif isinstance(node, N.Filter):
            if reads_window(node.input, [node.predicate]):
                return False
        else:
            return False
        node = node.input


def _session_keys(plan: N.LogicalPlan, keys: tuple[Expr, ...], tvf: N.WindowTVF) -> bool:
    """Whether the group keys but the window's (``keys``, over ``plan``) are the SESSION
    TVF's PARTITION BY columns: its sessions are then the aggregate's groups, and one
    operator merges and aggregates them. Otherwise the TVF forms its sessions per its own
    PARTITION BY (all rows in one partition without one) and the aggregate groups the
    windowed rows, as Flink's does: sessions of other partitions are not merged into a
    group's, and a group holding rows of several sessions gets one row per session."""
    from sqlengine.plan.expressions import ColumnRef

    found = set()
    for k in keys:
        if not isinstance(k, ColumnRef):
            return False
        node, idx = plan, k.index
        while node is not tvf:
            if isinstance(node, N.Filter):
                node = node.input
            elif isinstance(node, N.Project) and isinstance(node.exprs[idx], ColumnRef):
                node, idx = node.input, node.exprs[idx].index  # type: ignore[attr-defined]
            else:
                return False
        found.add(idx)
    return found == set(tvf.partition_keys) and len(found) == len(keys)


def _may_update(plan: N.LogicalPlan) -> bool:
    """Whether ``plan``'s result may be updating (conservatively: a changelog source, or any
    node but scans, projections, filters, unions, inner joins, window TVFs and VALUES)."""
    match plan:
        case N.Scan():
            return bool(plan.source.changelog)
        case N.Values():
            return False
        case N.Join() if plan.kind != "inner":
            return True
        case N.Project() | N.Filter() | N.Union() | N.Join() | N.WindowTVF():
            return any(_may_update(c) for c in plan.children())
    return True


def _directly_over(plan: N.LogicalPlan, tvf: N.WindowTVF) -> bool:
    """Whether ``tvf`` is reached through projections and filters only (no aggregate)."""
    while isinstance(plan, N.Project | N.Filter):
        plan = plan.input
    return plan is tvf


def _row_number_over_time(plan: N.Rank, child: PhysicalNode, ttl: int
                          ) -> PhysicalNode | None:
    """ROW_NUMBER() OVER (PARTITION BY ... ORDER BY rowtime) without a filter on it, in
    streaming mode: an OVER aggregate, as Flink runs it (rows numbered as the watermark passes
    them, late rows dropped, rows of one time in arrival order), or None for another order."""
    from sqlengine.plan.expressions import AggCall, ColumnRef

    if len(plan.order) != 1 or not plan.order[0].ascending:
        return None
    key = plan.order[0].expr
    if not isinstance(key, ColumnRef) or not plan.input.schema.fields[key.index].rowtime:
        return None
    part = ", ".join(p.sql() for p in plan.partition)
    exchange = Exchange(Partitioning.HASH, plan.partition) if plan.partition \
        else Exchange(Partitioning.SINGLE)
    op = OverAggregateSpec(
        schema=plan.schema, partition=plan.partition, time_index=key.index, frame="rows",
        preceding=None, aggs=(AggCall("count_star", (), T.BIGINT),),
        text=f"PARTITION BY {part} ORDER BY {key.name} ROWS BETWEEN UNBOUNDED PRECEDING AND "
             f"CURRENT ROW, aggs=[ROW_NUMBER()]", ttl=ttl)
    return PhysicalNode(op, ((child, exchange),))


def _deduplication(plan: N.Rank) -> tuple[str, str, int] | None:
    """Flink's deduplication (streaming): ROW_NUMBER cut to the first row and ordered by one
    time attribute -> (keep "FirstRow" for ASC | "LastRow" for DESC, "ROWTIME" | "PROCTIME",
    the time column). Flink then breaks ties by arrival: keep-last keeps the last row of
    equal times, keep-first the first (a Top-N keeps the first-arrived rows of equal keys)."""
    from sqlengine.plan.expressions import ColumnRef

    if plan.limit != 1 or len(plan.order) != 1:
        return None
    key = plan.order[0]
    if not isinstance(key.expr, ColumnRef):
        return None
    field = plan.input.schema.fields[key.expr.index]
    if not (field.rowtime or field.proctime):
        return None
    return ("FirstRow" if key.ascending else "LastRow",
            "ROWTIME" if field.rowtime else "PROCTIME", key.expr.index)
