"""Logical plan -> physical operators with exchanges and changelog modes (plan-time checks)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum

import pyarrow as pa

from sqlengine.errors import NotSupportedError, PlanError
from sqlengine.plan import nodes as N
from sqlengine.plan.expressions import AggCall, Expr
from sqlengine.plan.nodes import Schema


class Partitioning(Enum):
    """How records travel along an edge (Flink's StreamPartitioner kinds)."""

    FORWARD = "FORWARD"
    HASH = "HASH"
    REBALANCE = "REBALANCE"
    BROADCAST = "BROADCAST"
    RANGE = "RANGE"
    SINGLE = "GLOBAL"


class ChainStrategy(Enum):
    """Flink's ChainingStrategy."""

    ALWAYS = "ALWAYS"
    HEAD = "HEAD"
    NEVER = "NEVER"


@dataclass(frozen=True, slots=True)
class OperatorSpec:
    """What one operator does: data, not a live operator (the runtime builds those)."""

    kind: str  # source, values, filter, project, group_aggregate, join, union, sort, limit, sink
    schema: Schema  # output schema (data columns; a row-kind column rides along if updating)
    updating: bool = False  # whether the output is an updating changelog
    params: tuple[tuple[str, object], ...] = ()
    chain_strategy: ChainStrategy = ChainStrategy.ALWAYS

    def param(self, key: str, default: object = None) -> object:
        return dict(self.params).get(key, default)

    def label(self) -> str:
        """The operator's name in EXPLAIN's Job Graph section."""
        p = dict(self.params)
        match self.kind:
            case "source":
                return f"Source({p['table']})"
            case "values":
                return f"Values(rows={len(p['rows'])})"  # type: ignore[arg-type]
            case "filter":
                return f"Filter({p['predicate'].sql()})"  # type: ignore[attr-defined]
            case "project":
                return f"Project({', '.join(self.schema.names())})"
            case ("group_aggregate" | "window_aggregate" | "session_aggregate" |
                  "local_aggregate" | "global_aggregate"):
                keys = ", ".join(k.sql() for k in p["keys"])  # type: ignore[attr-defined]
                aggs = ", ".join(a.sql() for a in p["aggs"])  # type: ignore[attr-defined]
                name = {"group_aggregate": "GroupAggregate",
                        "window_aggregate": "WindowAggregate",
                        "session_aggregate": "SessionWindowAggregate",
                        "local_aggregate": "LocalAggregate",
                        "global_aggregate": "GlobalAggregate"}[self.kind]
                return f"{name}(keys=[{keys}], aggs=[{aggs}])"
            case "window_assign":
                return f"WindowTableFunction({p['label']})"
            case "top_n" | "window_top_n":
                name = "Rank" if self.kind == "top_n" else "WindowRank"
                return f"{name}({p['label']})"
            case "join":
                return f"Join({p['join_kind']})"
            case "over_aggregate":
                return f"OverAggregate({p['label']})"
            case "window_join":
                return f"WindowJoin({p['join_kind']})"
            case "interval_join":
                return (f"IntervalJoin({p['join_kind']}, {p['lower']} ms <= left time - right "
                        f"time <= {p['upper']} ms)")
            case "union":
                return "Union"
            case "range_sample" | "range_boundaries" | "range_assign":
                name = {"range_sample": "RangeSample", "range_boundaries": "RangeBoundaries",
                        "range_assign": "RangeAssign"}[self.kind]
                keys = ", ".join(k.sql() for k in p["keys"])  # type: ignore[attr-defined]
                return f"{name}({keys})"
            case "ordered_concat":
                return "OrderedConcat"
            case "sort":
                keys = ", ".join(k.sql() for k in p["keys"])  # type: ignore[attr-defined]
                fetch = f", fetch={p['fetch']}" if p.get("fetch") is not None else ""
                return f"Sort({keys}{fetch})"
            case "limit":
                return f"Limit(fetch={p.get('fetch')}, offset={p.get('offset', 0)})"
            case "sink":
                return f"Sink({p['table']})"
            case _:
                return self.kind


@dataclass(frozen=True, slots=True)
class Exchange:
    """An input edge of a physical node: how its records are shipped."""

    partitioning: Partitioning
    keys: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True)
class PhysicalNode:
    op: OperatorSpec
    inputs: tuple[tuple[PhysicalNode, Exchange], ...] = field(default=())
    estimate: object = field(default=None, compare=False)  # optimizer.estimates.Estimate


FORWARD = Exchange(Partitioning.FORWARD)


def _shuffle_before_windowing(child: PhysicalNode, keys: tuple[Expr, ...]
                              ) -> PhysicalNode | None:
    """Flink's plan shape for a window aggregation: Exchange(HASH keys) -> window assignment
    -> aggregation, so that a HOP window's copies of each row are made after the shuffle, not
    shipped. ``child`` is the aggregate's input (window assignment, perhaps under projections
    and filters); returns it rebuilt with the exchange below the window assignment, or None
    when a key is not a plain column of the assignment's input."""
    from sqlengine.plan.expressions import ColumnRef

    path: list[PhysicalNode] = []
    node = child
    mapped = list(keys)
    while node.op.kind in ("project", "filter"):
        ((inner, ex),) = node.inputs
        if ex.partitioning is not Partitioning.FORWARD:
            return None
        if node.op.kind == "project":
            exprs = node.op.param("exprs")
            if not all(isinstance(k, ColumnRef) and isinstance(exprs[k.index], ColumnRef)
                       for k in mapped):
                return None
            mapped = [exprs[k.index] for k in mapped]  # type: ignore[union-attr,index]
        path.append(node)
        node = inner
    if node.op.kind != "window_assign":
        return None
    ((source, ex),) = node.inputs
    if ex.partitioning is not Partitioning.FORWARD or not all(
            isinstance(k, ColumnRef) and k.index < len(source.op.schema) for k in mapped):
        return None
    rebuilt = PhysicalNode(node.op, ((source, Exchange(Partitioning.HASH, tuple(mapped))),))
    for above in reversed(path):
        rebuilt = PhysicalNode(above.op, ((rebuilt, FORWARD),))
    return rebuilt


def to_physical(plan: N.LogicalPlan, mode: str, options: dict[str, str] | None = None,
                tables: dict[str, object] | None = None,
                decisions: list[str] | None = None) -> PhysicalNode:
    """Choose operators and exchanges for a logical plan in ``mode`` (streaming | batch).
    ``decisions`` collects a line per choice a physical pass made (EXPLAIN VERBOSE).

    Raises:
        PlanError: the plan cannot run in this mode (unbounded input in batch mode, ORDER BY
            on an unbounded stream, an updating result into an append-only sink).
    """
    translator = _Translator(mode, options, tables)
    translator.collect_scans(plan)
    root = translator.translate(plan)
    if decisions is not None:
        decisions.extend(translator.decisions)
    return root


def parse_duration(text: str, key: str) -> int:
    """Flink's duration syntax ('10 s', '1 min', '500 ms', '2h') in milliseconds."""
    import re

    m = re.fullmatch(r"\s*(\d+)\s*(ms|milli|millis|s|sec|secs|second|seconds|min|mins|minute|"
                     r"minutes|m|h|hour|hours|d|day|days)?\s*", text, re.IGNORECASE)
    if not m:
        msg = f"option {key!r} must be a duration such as '10 s' or '1 min', got {text!r}"
        raise PlanError(msg)
    unit = (m.group(2) or "ms").lower()
    scale = {"ms": 1, "milli": 1, "millis": 1, "s": 1000, "sec": 1000, "secs": 1000,
             "second": 1000, "seconds": 1000, "min": 60_000, "mins": 60_000, "m": 60_000,
             "minute": 60_000, "minutes": 60_000, "h": 3_600_000, "hour": 3_600_000,
             "hours": 3_600_000, "d": 86_400_000, "day": 86_400_000, "days": 86_400_000}[unit]
    return int(m.group(1)) * scale


def trace_window_column(plan: N.LogicalPlan, idx: int) -> tuple[N.WindowTVF, str] | None:
    """Follow column ``idx`` down through projections and filters to a window TVF's
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


def _time_term(e: Expr, fields: tuple[N.Field, ...]) -> tuple[int, int] | None:
    """``rowtime_column [+|- INTERVAL]`` as (column, offset ms)."""
    import datetime as dt

    from sqlengine.plan.expressions import Call, ColumnRef, Literal

    if isinstance(e, ColumnRef):
        return (e.index, 0) if fields[e.index].rowtime else None
    if isinstance(e, Call) and e.name in ("add", "subtract") and \
            isinstance(e.args[0], ColumnRef) and isinstance(e.args[1], Literal) and \
            isinstance(e.args[1].value, dt.timedelta) and fields[e.args[0].index].rowtime:
        ms = int(e.args[1].value.total_seconds() * 1000)
        return e.args[0].index, ms if e.name == "add" else -ms
    return None


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
        a = b = None
        if isinstance(c, Call) and c.name in flip:
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


def _directly_over(plan: N.LogicalPlan, tvf: N.WindowTVF) -> bool:
    """Whether ``tvf`` is reached through projections and filters only (no aggregate)."""
    while isinstance(plan, N.Project | N.Filter):
        plan = plan.input
    return plan is tvf


class _Translator:
    def __init__(self, mode: str, options: dict[str, str] | None = None,
                 tables: dict[str, object] | None = None) -> None:
        from optimizer.estimates import Estimator

        self.mode = mode
        self.estimator = Estimator(tables)
        self.streaming = mode == "streaming"
        options = options or {}
        key = "table.exec.emit.allow-lateness"
        self.lateness = parse_duration(options[key], key) if options.get(key) else 0
        key = "table.exec.state.ttl"
        self.ttl = parse_duration(options[key], key) if options.get(key) else 0
        self.session_tvfs: set[int] = set()  # SESSION TVFs consumed by a window aggregate
        # Branch tracking (Flink's sub-plan reuse): equal subplans, e.g. a table read by two
        # branches of a query, translate to one physical node, so the DAG computes them once.
        enabled = options.get("table.optimizer.enabled", "true").lower() != "false"
        self.reuse = enabled and options.get("table.optimizer.reuse-sub-plan-enabled",
                                             "true").lower() != "false"
        self.reuse_sources = enabled and options.get("table.optimizer.reuse-source-enabled",
                                                     "true").lower() != "false"
        self.memo: dict[object, PhysicalNode] = {}
        self.decisions: list[str] = []  # what each physical pass chose, for EXPLAIN VERBOSE
        self.parallelism = int(options.get("parallelism.default", "1"))
        # Requested partitioning met by what the input already has: no second shuffle.
        self.interesting = enabled
        key = "table.optimizer.join.broadcast-threshold"
        self.broadcast_threshold = _bytes_option(options.get(key, "10 mb"), key)
        self.range_sort = options.get("table.exec.range-sort.enabled",
                                      "true").lower() != "false"
        key = "table.optimizer.agg-phase-strategy"
        self.agg_phase = options.get(key, "AUTO").upper()
        if self.agg_phase not in ("AUTO", "ONE_PHASE", "TWO_PHASE"):
            msg = (f"option {key!r} must be 'AUTO', 'ONE_PHASE' or 'TWO_PHASE', got "
                   f"{options[key]!r}")
            raise PlanError(msg)
        self.costs = CostModel(self.parallelism)
        # Per (table, filters): the columns every scan of it reads (see collect_scans).
        self.scan_columns: dict[object, set[int]] = {}

    def collect_scans(self, plan: N.LogicalPlan) -> None:
        """Source reuse across projections (Flink's ScanReuser): scans of one table with the
        same pushed-down filters share one source reading the union of their columns; each
        keeps its own columns by a projection above the shared source."""
        if not self.reuse_sources:
            return
        seen: dict[object, set[tuple[int, ...] | None]] = {}

        def walk(node: N.LogicalPlan) -> None:
            if isinstance(node, N.Scan):
                key = self._scan_key(node)
                if key is not None:
                    seen.setdefault(key, set()).add(node.projection)
            for child in node.children():
                walk(child)

        walk(plan)
        for key, projections in seen.items():
            if len(projections) > 1:
                width = len(key[1].fields)  # type: ignore[index]
                cols: set[int] = set()
                for proj in projections:
                    cols |= set(range(width)) if proj is None else set(proj)
                self.scan_columns[key] = cols

    @staticmethod
    def _scan_key(scan: N.Scan) -> object | None:
        key = (scan.source, scan.table_schema, scan.filters)
        try:
            hash(key)
        except TypeError:
            return None
        return key

    def _shared_scan(self, plan: N.Scan) -> PhysicalNode | None:
        """A scan that shares its source with other scans of the table: the shared source
        (reading the union of their columns) and a projection to this scan's columns."""
        from sqlengine.plan.expressions import ColumnRef

        key = self._scan_key(plan)
        if key is None or key not in self.scan_columns:
            return None
        merged = tuple(sorted(self.scan_columns[key]))
        wanted = plan.projection if plan.projection is not None else \
            tuple(range(len(plan.table_schema)))
        if wanted == merged:
            return None  # this is the shared scan itself
        shared = self.translate(N.Scan(plan.source, plan.table_schema, merged, plan.filters))
        fields = plan.table_schema.fields
        exprs = tuple(ColumnRef(merged.index(i), fields[i].name, fields[i].type)
                      for i in wanted)
        return self._unary("project", plan, shared, (("exprs", exprs),))

    def translate(self, plan: N.LogicalPlan) -> PhysicalNode:
        key = self._reuse_key(plan)
        if key is not None and key in self.memo:
            self._decide("reuse_sub_plans", f"{self.memo[key].op.label()} is read once more: "
                         "the same node serves both")
            return self.memo[key]
        node = self._translate(plan)
        if node.estimate is None:
            node = replace(node, estimate=self.estimator.estimate(plan))
        if key is not None:
            self.memo[key] = node
        return node

    def _reuse_key(self, plan: N.LogicalPlan) -> object | None:
        if isinstance(plan, N.Scan):
            if not self.reuse_sources:
                return None
        elif not self.reuse or isinstance(plan, N.Sink):
            return None
        try:
            hash(plan)
        except TypeError:  # (a node holding something unhashable is not reused)
            return None
        return plan

    def _translate(self, plan: N.LogicalPlan) -> PhysicalNode:
        match plan:
            case N.Scan():
                if not self.streaming and not plan.source.bounded:
                    msg = (f"table {plan.source.table!r} is unbounded and cannot be read in "
                           "batch mode (set 'execution.runtime-mode' = 'streaming')")
                    raise PlanError(msg)
                shared = self._shared_scan(plan)
                if shared is not None:
                    return shared
                return PhysicalNode(OperatorSpec(
                    "source", plan.schema, False,
                    (("table", plan.source.table), ("source", plan.source),
                     ("table_schema", plan.table_schema), ("projection", plan.projection),
                     ("filters", plan.filters), ("bounded", plan.source.bounded),
                     # Batch mode has no late data: watermarks only at the end.
                     ("event_time", self.streaming and plan.source.watermark is not None)),
                    ChainStrategy.HEAD))
            case N.Values():
                return PhysicalNode(OperatorSpec("values", plan.schema, False,
                                                 (("rows", plan.rows),), ChainStrategy.HEAD))
            case N.Filter():
                child = self.translate(plan.input)
                return self._unary("filter", plan, child, (("predicate", plan.predicate),))
            case N.Project():
                child = self.translate(plan.input)
                return self._unary("project", plan, child, (("exprs", plan.exprs),))
            case N.Aggregate():
                return self._window_aggregate(plan) or self._aggregate(plan)
            case N.WindowTVF():
                return self._window_tvf(plan)
            case N.Rank():
                return self._rank(plan)
            case N.OverAggregate():
                child = self.translate(plan.input)
                if child.op.updating:
                    msg = "OVER aggregates need an insert-only input"
                    raise NotSupportedError(msg)
                exchange = Exchange(Partitioning.HASH, plan.partition) if plan.partition \
                    else Exchange(Partitioning.SINGLE)
                op = OperatorSpec("over_aggregate", plan.schema, False, (
                    ("partition", plan.partition), ("time_index", plan.time_index),
                    ("frame", plan.frame), ("preceding", plan.preceding), ("aggs", plan.aggs),
                    ("label", plan.explain_label().removeprefix("OverAggregate: "))))
                return PhysicalNode(op, ((child, exchange),))
            case N.Join():
                return self._join(plan)
            case N.Union():
                kids = [self.translate(i) for i in plan.inputs]
                updating = any(k.op.updating for k in kids)
                return PhysicalNode(OperatorSpec("union", plan.schema, updating,
                                                 (("inputs", len(kids)),)),
                                    tuple((k, FORWARD) for k in kids))
            case N.Sort():
                child = self.translate(plan.input)
                self._require_bounded(plan.input, "ORDER BY")
                ranged = self._range_sort(plan, child)
                if ranged is not None:
                    keys = ", ".join(k.sql() for k in plan.keys)
                    self._decide("range_sort", f"ORDER BY {keys}: sample -> boundaries -> "
                                 f"RANGE -> {self.parallelism} local sorts -> ordered "
                                 "concatenation")
                    return ranged
                return PhysicalNode(OperatorSpec(
                    "sort", plan.schema, False,
                    (("keys", plan.keys), ("fetch", plan.fetch), ("offset", plan.offset),
                     ("input_updating", child.op.updating))),
                    ((child, Exchange(Partitioning.SINGLE)),))
            case N.Limit():
                child = self.translate(plan.input)
                if child.op.updating:
                    self._require_bounded(plan.input, "LIMIT over an updating result")
                return PhysicalNode(OperatorSpec(
                    "limit", plan.schema, False,
                    (("fetch", plan.fetch), ("offset", plan.offset),
                     ("input_updating", child.op.updating))),
                    ((child, Exchange(Partitioning.SINGLE)),))
            case N.Sink():
                child = self.translate(plan.input)
                target = plan.target
                if child.op.updating and target.connector == "filesystem":
                    msg = (f"table sink {target.table!r} (filesystem) does not support consuming "
                           "update changes; the query produces an updating result (a GROUP BY "
                           "or a join in streaming mode). Use 'execution.runtime-mode' = "
                           "'batch' or a window aggregation")
                    raise PlanError(msg)
                return PhysicalNode(OperatorSpec(
                    "sink", plan.schema, child.op.updating,
                    (("table", target.table), ("target", target),
                     ("input_updating", child.op.updating))),
                    ((child, FORWARD),))
            case _:
                msg = f"no physical operator for {type(plan).__name__}"
                raise NotSupportedError(msg)

    def _unary(self, kind: str, plan: N.LogicalPlan, child: PhysicalNode,
               params: tuple[tuple[str, object], ...]) -> PhysicalNode:
        op = OperatorSpec(kind, plan.schema, child.op.updating, params)
        return PhysicalNode(op, ((child, FORWARD),))

    def _aggregate(self, plan: N.Aggregate) -> PhysicalNode:
        child = self.translate(plan.input)
        if child.op.updating:
            for a in plan.aggs:
                if a.func in ("min", "max") or a.distinct:
                    msg = (f"{a.sql()} over an updating input is not supported yet "
                           "(it needs retractable state)")
                    raise NotSupportedError(msg)
        exchange = Exchange(Partitioning.HASH, plan.keys) if plan.keys \
            else Exchange(Partitioning.SINGLE)
        if plan.keys and self.interesting and _already_partitioned(child, plan.keys):
            exchange = FORWARD  # (the rows of each group are already together)
            keys = ", ".join(k.sql() for k in plan.keys)
            self._decide("interesting_properties", f"GROUP BY {keys}: the input is already "
                         "partitioned on these keys, no shuffle")
        op = OperatorSpec("group_aggregate", plan.schema, self.streaming, (
            ("keys", plan.keys), ("aggs", plan.aggs), ("key_names", plan.key_names),
            ("agg_names", plan.agg_names), ("input_updating", child.op.updating),
            ("emit", "changelog" if self.streaming else "final")))
        one_phase = PhysicalNode(op, ((child, exchange),))
        two_phase = self._two_phase(plan, child) if exchange is not FORWARD else None
        if two_phase is None:
            return one_phase
        if self.agg_phase == "TWO_PHASE":
            return two_phase
        est = self.estimator.estimate(plan)
        one_phase = replace(one_phase, estimate=est)
        two_phase = replace(two_phase, estimate=est)
        costs = [self.costs.total(n)[id(n)].total for n in (one_phase, two_phase)]
        chosen = "TWO_PHASE" if costs[1] < costs[0] else "ONE_PHASE"
        self._decide("aggregate_phases", f"{op.label()}: {chosen} (cost {costs[1]:,.0f} in two "
                     f"phases, {costs[0]:,.0f} in one)")
        return two_phase if chosen == "TWO_PHASE" else one_phase

    def _range_sort(self, plan: N.Sort, child: PhysicalNode) -> PhysicalNode | None:
        """ORDER BY at parallelism > 1 in batch mode (Flink's RangePartitionRewriter): sample
        -> boundaries -> RANGE partition -> local sort -> ordered concatenation, so the sort
        runs in every subtask. Switch: 'table.exec.range-sort.enabled'."""
        from sqlengine.plan.expressions import ColumnRef

        if self.streaming or self.parallelism <= 1 or plan.fetch is not None or \
                plan.offset or child.op.updating or not self.range_sort:
            return None
        width = len(plan.schema)
        sample_fields = []
        for i, k in enumerate(plan.keys):
            sample_fields += [N.Field(f"n{i}", pa.bool_()), N.Field(f"v{i}", k.expr.dtype)]
        sample_schema = Schema(tuple(sample_fields))
        keys = (("keys", plan.keys),)
        sample = PhysicalNode(OperatorSpec("range_sample", sample_schema, False,
                                           (*keys, ("size", 5000))), ((child, FORWARD),))
        bounds = PhysicalNode(
            OperatorSpec("range_boundaries", sample_schema, False,
                         (*keys, ("parallelism", self.parallelism))),
            ((sample, Exchange(Partitioning.SINGLE)),))
        part = N.Field("$part", pa.int32())
        ranged = Schema((*plan.schema.fields, part))
        assign = PhysicalNode(OperatorSpec("range_assign", ranged, False, keys),
                              ((child, FORWARD), (bounds, Exchange(Partitioning.BROADCAST))))
        local = PhysicalNode(
            OperatorSpec("sort", ranged, False, (*keys, ("fetch", None), ("offset", 0),
                                                 ("input_updating", False))),
            ((assign, Exchange(Partitioning.RANGE,
                               (ColumnRef(width, "$part", pa.int32()),))),))
        return PhysicalNode(
            OperatorSpec("ordered_concat", plan.schema, False,
                         (("width", width), ("per_channel", True))),
            ((local, Exchange(Partitioning.SINGLE)),))

    def _two_phase(self, plan: N.Aggregate, child: PhysicalNode) -> PhysicalNode | None:
        """Local pre-aggregation chained before the shuffle, global merge after it (batch
        mode, parallelism > 1, GROUP BY keys, aggregates that merge: no DISTINCT)."""
        from optimizer.estimates import type_width
        from runtime.operators.partials import sum_type
        from sqlengine.plan.expressions import ColumnRef

        if self.streaming or self.parallelism <= 1 or not plan.keys or \
                self.agg_phase == "ONE_PHASE" or child.op.updating or \
                any(a.distinct for a in plan.aggs):
            return None
        fields = [N.Field(f"k{i}", k.dtype) for i, k in enumerate(plan.keys)]
        for j, a in enumerate(plan.aggs):
            arg = a.args[0].dtype if a.args else None
            if a.func == "count_star":
                fields.append(N.Field(f"c{j}", pa.int64()))
            elif a.func == "count":
                fields.append(N.Field(f"n{j}", pa.int64()))
            elif a.func in ("sum", "avg"):
                fields += [N.Field(f"s{j}", sum_type(arg)), N.Field(f"n{j}", pa.int64())]
            elif a.func in ("min", "max"):
                fields.append(N.Field(f"m{j}", arg))
            else:
                return None
        partial = Schema(tuple(fields))
        local = PhysicalNode(OperatorSpec("local_aggregate", partial, False, (
            ("keys", plan.keys), ("aggs", plan.aggs))), ((child, FORWARD),))
        # (the local rows: about one partial per group per batch of the input)
        inner = child.estimate
        if inner is not None:
            from optimizer.estimates import Estimate

            groups = self.estimator.estimate(plan).rows
            batches = max(inner.rows / 65536, 1.0)  # type: ignore[attr-defined]
            rows = min(inner.rows, groups * batches * min(self.parallelism, batches))  # type: ignore[attr-defined]
            local = replace(local, estimate=Estimate(rows, sum(
                type_width(f.type) for f in fields), ()))
        refs = tuple(ColumnRef(i, f.name, f.type) for i, f in enumerate(fields[:len(plan.keys)]))
        op = OperatorSpec("global_aggregate", plan.schema, False, (
            ("keys", plan.keys), ("aggs", plan.aggs), ("key_names", plan.key_names),
            ("agg_names", plan.agg_names), ("partial_schema", partial)))
        return PhysicalNode(op, ((local, Exchange(Partitioning.HASH, refs)),))

    def _window_tvf(self, plan: N.WindowTVF) -> PhysicalNode:
        if plan.kind == "session" and id(plan) not in self.session_tvfs:
            msg = ("SESSION windows are supported in window aggregations only (GROUP BY "
                   "window_start, window_end, ...)")
            raise NotSupportedError(msg)
        child = self.translate(plan.input)
        if child.op.updating:
            msg = "window table functions need an insert-only input"
            raise NotSupportedError(msg)
        op = OperatorSpec("window_assign", plan.schema, False, (
            ("window_kind", plan.kind), ("time_index", plan.time_index), ("size", plan.size),
            ("slide", plan.slide), ("offset", plan.offset), ("lateness", self.lateness),
            ("proctime", plan.proctime),
            ("label", plan.explain_label().removeprefix("WindowTVF: "))))
        return PhysicalNode(op, ((child, FORWARD),))

    def _window_aggregate(self, plan: N.Aggregate) -> PhysicalNode | None:
        from sqlengine.plan.expressions import ColumnRef

        found: dict[str, tuple[int, N.WindowTVF]] = {}
        for pos, k in enumerate(plan.keys):
            if isinstance(k, ColumnRef):
                hit = trace_window_column(plan.input, k.index)
                if hit is not None and hit[1] in ("window_start", "window_end"):
                    found.setdefault(hit[1], (pos, hit[0]))
        if set(found) != {"window_start", "window_end"} or \
                found["window_start"][1] is not found["window_end"][1]:
            return None
        tvf = found["window_end"][1]
        window_pos = {found["window_start"][0], found["window_end"][0]}
        others = tuple(k for i, k in enumerate(plan.keys) if i not in window_pos)
        exchange = Exchange(Partitioning.HASH, others) if others \
            else Exchange(Partitioning.SINGLE)
        common = (("keys", plan.keys), ("aggs", plan.aggs), ("key_names", plan.key_names),
                  ("start_pos", found["window_start"][0]), ("end_pos", found["window_end"][0]))
        if tvf.kind == "session" and _directly_over(plan.input, tvf):
            self.session_tvfs.add(id(tvf))
            child = self.translate(plan.input)
            op = OperatorSpec("session_aggregate", plan.schema, False,
                              (*common, ("gap", tvf.size)))
        else:
            child = self.translate(plan.input)
            op = OperatorSpec("window_aggregate", plan.schema, self.lateness > 0,
                              (*common, ("lateness", self.lateness),
                               ("proctime", tvf.proctime)))
            moved = _shuffle_before_windowing(child, others) if others else None
            if moved is not None:
                self._decide("shuffle_before_windowing", f"{op.label()}: HASH exchange moved "
                             "below the window assignment")
                return PhysicalNode(op, ((moved, FORWARD),))
        return PhysicalNode(op, ((child, exchange),))

    def _rank(self, plan: N.Rank) -> PhysicalNode:
        from sqlengine.plan.expressions import ColumnRef

        child = self.translate(plan.input)
        if child.op.updating:
            msg = "ROW_NUMBER over an updating input is not supported yet"
            raise NotSupportedError(msg)
        common = (("partition", plan.partition), ("order", plan.order), ("limit", plan.limit),
                  ("label", plan.explain_label().removeprefix("Rank: ")))
        found = {}
        for p in plan.partition:
            if isinstance(p, ColumnRef):
                hit = trace_window_column(plan.input, p.index)
                if hit is not None:
                    found[hit[1]] = (p.index, hit[0])
        others = tuple(p for p in plan.partition
                       if not (isinstance(p, ColumnRef) and p.index in
                               {i for i, _ in found.values()}))
        exchange = Exchange(Partitioning.HASH, others) if others \
            else Exchange(Partitioning.SINGLE)
        if {"window_start", "window_end"} <= set(found) and \
                found["window_start"][1] is found["window_end"][1]:
            op = OperatorSpec("window_top_n", plan.schema, False,
                              (*common, ("end_index", found["window_end"][0])))
            return PhysicalNode(op, ((child, exchange),))
        if plan.limit is None and self.streaming:
            msg = ("ROW_NUMBER without a filter on it (WHERE rn <= N) is not supported in "
                   "streaming mode")
            raise NotSupportedError(msg)
        op = OperatorSpec("top_n", plan.schema, self.streaming, (
            *common, ("emit", "changelog" if self.streaming else "final"),
            ("output_rank", plan.output_rank)))
        return PhysicalNode(op, ((child, exchange),))

    def _join(self, plan: N.Join) -> PhysicalNode:
        left = self.translate(plan.left)
        right = self.translate(plan.right)
        windows = window_join_ends(plan) if self.streaming else None
        if windows is not None and not (left.op.updating or right.op.updating):
            op = OperatorSpec("window_join", plan.schema, False, (
                ("join_kind", plan.kind), ("left_keys", plan.left_keys),
                ("right_keys", plan.right_keys), ("condition", plan.condition),
                ("left_width", len(plan.left.schema)), ("end_indexes", windows)))
            return PhysicalNode(op, ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                                     (right, Exchange(Partitioning.HASH, plan.right_keys))))
        bounds = interval_bounds(plan) if self.streaming else None
        if bounds is not None and not (left.op.updating or right.op.updating):
            lt, rt, lower, upper, residual = bounds
            op = OperatorSpec("interval_join", plan.schema, False, (
                ("join_kind", plan.kind), ("left_keys", plan.left_keys),
                ("right_keys", plan.right_keys), ("condition", residual),
                ("left_width", len(plan.left.schema)), ("left_time", lt),
                ("right_time", rt), ("lower", lower), ("upper", upper)))
            return PhysicalNode(op, ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                                     (right, Exchange(Partitioning.HASH, plan.right_keys))))
        updating = self.streaming and (plan.kind == "left" or left.op.updating
                                       or right.op.updating)
        inputs = self._join_strategy(plan, left, right)
        # Batch mode builds a hash table on one side and streams the other through it: the
        # broadcast side, else the smaller by the estimates.
        sizes = [getattr(n.estimate, "bytes", None) for n, _ in inputs]
        build = next((i for i, (_, ex) in enumerate(inputs)
                      if ex.partitioning is Partitioning.BROADCAST), None)
        if build is None and None not in sizes:
            build = 0 if sizes[0] < sizes[1] else 1  # type: ignore[operator]
        op = OperatorSpec("join", plan.schema, updating, (
            ("join_kind", plan.kind), ("left_keys", plan.left_keys),
            ("right_keys", plan.right_keys), ("condition", plan.condition),
            ("left_width", len(plan.left.schema)), ("emit", "stream" if self.streaming
                                                    else "final"),
            ("ttl", self.ttl), ("updating", updating), ("build_side", build)))
        return PhysicalNode(op, inputs)

    def _join_strategy(self, plan: N.Join, left: PhysicalNode, right: PhysicalNode
                       ) -> tuple[tuple[PhysicalNode, Exchange], ...]:
        """Hash-repartition both sides, or broadcast the small one (within
        'table.optimizer.join.broadcast-threshold') and leave the other where it is: the
        alternatives are costed and the cheaper wins. Only in batch mode (as Flink: a streaming
        join keeps both sides as state, so the side that arrives first is stored whatever its
        size) with parallelism > 1 (one subtask needs no exchange at all); a LEFT join
        broadcasts its right side only (each left row must meet every right row in one
        subtask to know it is unmatched)."""
        hashed = ((left, Exchange(Partitioning.HASH, plan.left_keys)),
                  (right, Exchange(Partitioning.HASH, plan.right_keys)))
        if self.streaming or self.parallelism <= 1 or self.broadcast_threshold < 0:
            return hashed
        options = [hashed]
        sides = [(right, 1)] if plan.kind == "left" else [(right, 1), (left, 0)]
        for small, i in sides:
            est = small.estimate
            if est is not None and est.bytes <= self.broadcast_threshold:  # type: ignore[attr-defined]
                other = left if i == 1 else right
                pair = [(other, FORWARD), (small, Exchange(Partitioning.BROADCAST))]
                options.append(tuple(pair) if i == 1 else tuple(reversed(pair)))
        best = min(options, key=lambda ins: self.costs.exchanges(ins).total)
        costed = ", ".join(
            f"{'+'.join(ex.partitioning.value for _, ex in ins)} "
            f"{self.costs.exchanges(ins).total:,.0f}" for ins in options)
        chosen = "+".join(ex.partitioning.value for _, ex in best)
        self._decide("join_strategy", f"Join({plan.kind}): {chosen} (costs: {costed})")
        return best

    def _decide(self, pass_name: str, what: str) -> None:
        line = f"{pass_name}: {what}"
        if line not in self.decisions:
            self.decisions.append(line)

    def _require_bounded(self, plan: N.LogicalPlan, what: str) -> None:
        if not self.streaming:
            return
        from optimizer.analysis import unbounded_sources

        unbounded = unbounded_sources(plan)
        if unbounded:
            msg = (f"{what} needs a bounded input, but table {unbounded[0]!r} is unbounded "
                   "(give it 'number-of-rows', or use a window)")
            raise PlanError(msg)


def partitioned_on(node: PhysicalNode) -> frozenset[int] | None:
    """Interesting properties: the output columns by which ``node``'s rows are already
    hash-partitioned (rows with equal values there are in one subtask), or None. A HASH
    exchange establishes it; aggregates and joins keep it on their key columns; filters keep
    it and projections carry it to where the columns go."""
    from sqlengine.plan.expressions import ColumnRef

    op = node.op
    if op.kind in ("filter", "project", "sink") and node.inputs:
        (child, ex), = node.inputs
        if ex.partitioning is not Partitioning.FORWARD:
            return None
        below = partitioned_on(child)
        if below is None or op.kind != "project":
            return below
        exprs = op.param("exprs")
        where = {e.index: i for i, e in enumerate(exprs)  # type: ignore[attr-defined]
                 if isinstance(e, ColumnRef)}
        return frozenset(where[c] for c in below) if below <= set(where) else None
    if op.kind in ("group_aggregate", "global_aggregate") and node.inputs:
        (_, ex), = node.inputs
        keys = op.param("keys")
        if ex.partitioning in (Partitioning.HASH, Partitioning.FORWARD) and keys:
            return frozenset(range(len(keys)))  # type: ignore[arg-type]
        return None
    if op.kind == "join" and len(node.inputs) == 2:
        (_, lex), (_, rex) = node.inputs
        if lex.partitioning is Partitioning.HASH and rex.partitioning is Partitioning.HASH:
            keys = op.param("left_keys")
            if all(isinstance(k, ColumnRef) for k in keys):  # type: ignore[attr-defined]
                return frozenset(k.index for k in keys)  # type: ignore[attr-defined]
        return None
    return None


def _already_partitioned(child: PhysicalNode, keys: tuple[Expr, ...]) -> bool:
    """Whether a HASH exchange on ``keys`` would only send rows where they already are: the
    child is partitioned on a subset of the key columns."""
    from sqlengine.plan.expressions import ColumnRef

    have = partitioned_on(child)
    if not have or not all(isinstance(k, ColumnRef) for k in keys):
        return False
    return have <= {k.index for k in keys}  # type: ignore[attr-defined]


def _bytes_option(text: str, key: str) -> int:
    """A memory size ('10 mb', '512 kb', '1048576'); -1 disables."""
    import re

    m = re.fullmatch(r"\s*(-?\d+)\s*(b|bytes|kb|k|mb|m|gb|g)?\s*", text, re.IGNORECASE)
    if not m:
        msg = f"option {key!r} must be a size such as '10 mb' (or -1 to disable), got {text!r}"
        raise PlanError(msg)
    scale = {"b": 1, "bytes": 1, "kb": 1 << 10, "k": 1 << 10, "mb": 1 << 20, "m": 1 << 20,
             "gb": 1 << 30, "g": 1 << 30}[(m.group(2) or "b").lower()]
    value = int(m.group(1))
    return -1 if value < 0 else value * scale


@dataclass(frozen=True, slots=True)
class Cost:
    """Flink's Costs: bytes over the network, bytes to disk, and CPU (rows handled)."""

    network: float = 0.0
    disk: float = 0.0
    cpu: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.network + other.network, self.disk + other.disk,
                    self.cpu + other.cpu)

    @property
    def total(self) -> float:
        # A byte shipped costs more than a row handled; a byte spilled more than shipped.
        return self.network + 2.0 * self.disk + 4.0 * self.cpu

    def label(self) -> str:
        return (f"network={_size(self.network)}, disk={_size(self.disk)}, "
                f"cpu={self.cpu:,.0f} rows")


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


class CostModel:
    """The cost of shipping inputs along their exchanges, and of an operator's work."""

    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism

    def exchange(self, child: PhysicalNode, ex: Exchange) -> Cost:
        est = child.estimate
        if est is None:
            return Cost()
        data = est.bytes  # type: ignore[attr-defined]
        rows = est.rows  # type: ignore[attr-defined]
        p = self.parallelism
        if ex.partitioning is Partitioning.FORWARD:
            return Cost()
        if ex.partitioning is Partitioning.BROADCAST:
            # every subtask gets every row, and builds its own table of them
            return Cost(network=data * p, cpu=rows * p)
        # HASH / REBALANCE / RANGE / GLOBAL: every row crosses once (and is hashed)
        return Cost(network=data, cpu=rows)

    def exchanges(self, inputs: tuple[tuple[PhysicalNode, Exchange], ...]) -> Cost:
        total = Cost()
        for child, ex in inputs:
            total = total + self.exchange(child, ex)
        return total

    def operator(self, node: PhysicalNode) -> Cost:
        est = node.estimate
        rows_in = sum(getattr(c.estimate, "rows", 0.0) for c, _ in node.inputs)
        cpu = rows_in
        if node.op.kind in ("sort", "top_n", "window_top_n") and rows_in > 1:
            cpu = rows_in * math.log2(rows_in)
        return Cost(cpu=cpu) if est is not None or node.inputs else Cost()

    def total(self, root: PhysicalNode) -> dict[int, Cost]:
        """Cumulative cost per node (each shared node counted once)."""
        out: dict[int, Cost] = {}

        def visit(node: PhysicalNode) -> Cost:
            if id(node) in out:
                return Cost()  # (already counted under another consumer)
            cost = self.operator(node) + self.exchanges(node.inputs)
            for child, _ in node.inputs:
                cost = cost + visit(child)
            out[id(node)] = cost
            return cost

        visit(root)
        return out


def agg_summary(aggs: tuple[AggCall, ...]) -> str:
    """The aggregates of a GroupAggregate, as EXPLAIN prints them."""
    return ", ".join(a.sql() for a in aggs)
