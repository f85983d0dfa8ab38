"""Bind window table functions (``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`` and HOP,
CUMULATE, SESSION) and the legacy group windows (``GROUP BY TUMBLE(ts, size)``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pyarrow as pa
from sqlglot import exp

from sqlengine.bind_common import ClauseBinder, Relation, requalify
from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn
from sqlengine.bind_interval import interval_literal
from sqlengine.cast import arrow_zone
from sqlengine.dialect import TableArg
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.options import session_time_zone
from sqlengine.plan.expressions import ColumnRef
from sqlengine.plan.nodes import WindowTVF
from sqlengine.types import is_ltz

GROUP_WINDOWS = ("tumble", "hop", "session")

# A GROUP BY item: a SQL expression, or the position of a column the window TVF added.
GroupItem = exp.Expression | int


def group_window_kind(n: GroupItem) -> str | None:
    """'tumble', 'hop' or 'session' for a legacy group window call in GROUP BY."""
    name = _func_name(n) if isinstance(n, exp.Expression) else None
    return name if name in GROUP_WINDOWS else None


def group_window_aux(n: exp.Expression) -> str | None:
    """'start', 'end' or 'rowtime' for TUMBLE_START(...), HOP_END(...), SESSION_ROWTIME(...)."""
    name = _func_name(n)
    if name is None or "_" not in name:
        return None
    kind, _, part = name.partition("_")
    if kind in GROUP_WINDOWS and part in ("start", "end", "rowtime"):
        return part
    return None


def _func_name(n: exp.Expression) -> str | None:
    if isinstance(n, exp.Anonymous):
        return str(n.this).lower()
    return None


MAX_WINDOWS_PER_ROW = 10_000


def _text(ms: int) -> str:
    for unit, n in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms % n == 0:
            return f"{ms // n} {unit}"
    return f"{ms} ms"


def interval_ms(node: exp.Interval, exprs: ExprBinder) -> int:
    """An INTERVAL literal in milliseconds."""
    value = interval_literal(node, exprs).value
    if not isinstance(value, dt.timedelta):
        msg = f"a window size must be a day-time interval (SECOND to DAY), not {node.sql()}"
        raise exprs.error(NotSupportedError, msg, node)
    return int(value.total_seconds() * 1000)


# Flink's parameter names of the window functions, in order (the last of TUMBLE, HOP and
# CUMULATE, OFFSET, is optional).
_PARAMS = {"tumble": ("DATA", "TIMECOL", "SIZE", "OFFSET"),
           "hop": ("DATA", "TIMECOL", "SLIDE", "SIZE", "OFFSET"),
           "cumulate": ("DATA", "TIMECOL", "STEP", "SIZE", "OFFSET"),
           "session": ("DATA", "TIMECOL", "GAP")}


class WindowBinder(ClauseBinder):
    """Window table functions and legacy group windows, both as a WindowTVF node."""

    def _positional(self, kind: str, given: list[exp.Expression], call: exp.Expression
                    ) -> list[exp.Expression]:
        """The arguments in order: named ones (``SIZE => INTERVAL ...``) put in place."""
        names = _PARAMS[kind]
        if not any(isinstance(a, exp.Kwarg) for a in given):
            return given
        if not all(isinstance(a, exp.Kwarg) for a in given):
            raise self.error(BindError, f"{kind.upper()} takes either named or positional "
                             "arguments, not both", call)
        found: dict[str, exp.Expression] = {}
        for a in given:
            key = a.this.name.upper()
            if key not in names:
                raise self.error(BindError, f"{kind.upper()} has no parameter {key} (its "
                                 f"parameters: {', '.join(names)})", a)
            if key in found:
                raise self.error(BindError, f"parameter {key} of {kind.upper()} is given "
                                 "twice", a)
            found[key] = a.expression
        required = names[:-1] if names[-1] == "OFFSET" else names
        missing = [n for n in required if n not in found]
        if missing:
            raise self.error(BindError, f"{kind.upper()} needs parameter "
                             f"{', '.join(missing)}", call)
        return [found[n] for n in names if n in found]

    def _bounded_copies(self, kind: str, slide: int, size: int, node: exp.Expression
                        ) -> None:
        """Each row goes to size / slide windows: past MAX_WINDOWS_PER_ROW the copies would
        exhaust memory (Flink slices windows instead; here each window is kept whole)."""
        copies = -(-size // slide)
        if copies > MAX_WINDOWS_PER_ROW:
            what = "slide" if kind == "hop" else "step"
            raise self.error(NotSupportedError, f"{kind.upper()} with a {_text(slide)} {what} "
                             f"and a {_text(size)} size puts every row in {copies:,} windows; "
                             f"at most {MAX_WINDOWS_PER_ROW:,} are supported", node)

    def window_tvf(self, node: exp.Table, ctes: dict[str, Relation]) -> Relation:
        """``TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), size))`` and HOP, CUMULATE, SESSION."""
        outer = node.this
        name = (outer.name if isinstance(outer, exp.Anonymous) else outer.sql_name()).upper()
        args = list(outer.expressions) if isinstance(outer, exp.Anonymous) else []
        if name.lower() in _PARAMS and isinstance(outer, exp.Anonymous):
            call = outer  # Flink 2.x's form: FROM TUMBLE(TABLE t, ...) without TABLE(...)
        elif name == "TABLE" and len(args) == 1 and isinstance(args[0], exp.Anonymous) and \
                str(args[0].this).lower() in _PARAMS:
            call = args[0]
        else:
            called = str(args[0].this).upper() if name == "TABLE" and len(args) == 1 and \
                isinstance(args[0], exp.Anonymous) else name
            raise self.error(NotSupportedError, f"table function {called} is not supported "
                             "(the window functions TUMBLE, HOP, CUMULATE and SESSION are)",
                             node)
        kind = str(call.this).lower()
        wants = {"tumble": (3, 4), "hop": (4, 5), "cumulate": (4, 5), "session": (3, 3)}
        params = self._positional(kind, list(call.expressions), call)
        lo, hi = wants[kind]
        if not lo <= len(params) <= hi:
            raise self.error(BindError, f"{kind.upper()} takes {lo} to {hi} arguments "
                             f"(TABLE t, DESCRIPTOR(col), ...), got {len(params)}", call)
        data, desc = params[0], params[1]
        query = data.this if isinstance(data, TableArg) and \
            isinstance(data.this, exp.Subquery) else data
        if isinstance(query, exp.Subquery) and not isinstance(query.this, exp.Table):
            # a query, as Flink takes it: TUMBLE((SELECT ... WHERE ...), DESCRIPTOR(ts), ...)
            relations = self.binder.relations
            rel = relations.binder.selects.order_limit(query,
                                                       relations.query(query.this, ctes))
        elif not isinstance(data, TableArg):
            raise self.error(BindError, f"the first argument of {kind.upper()} must be "
                             "TABLE <name> or a query in parentheses", data)
        elif (table_node := data.this).name.lower() in ctes and \
                not table_node.args.get("db"):
            tname = table_node.name
            rel = ctes[tname.lower()]
            rel = Relation(rel.plan, requalify(rel.scope, tname))
        else:
            rel = self.binder.relations.table(".".join(p.name for p in table_node.parts),
                                              table_node.name, table_node)
        if not (isinstance(desc, exp.Anonymous) and str(desc.this).upper() == "DESCRIPTOR"
                and len(desc.expressions) == 1):
            raise self.error(BindError, f"the second argument of {kind.upper()} must be "
                             "DESCRIPTOR(<time column>)", desc)
        col = desc.expressions[0]
        idx = rel.scope.resolve(col.name, None)
        if idx is None:
            raise self.error(BindError, f"unknown column {col.name!r} in DESCRIPTOR", col)
        proctime = rel.scope.columns[idx].proctime
        if not rel.scope.columns[idx].rowtime and not proctime and \
                not pa.types.is_timestamp(rel.scope.columns[idx].type):
            # (a plain TIMESTAMP is windowed in batch mode; streaming mode refuses it)
            raise self.error(BindError, f"column {col.name!r} is not a time attribute: window "
                             "functions need a rowtime column (declare a WATERMARK FOR it), "
                             "PROCTIME() or, in batch mode, a TIMESTAMP column", col)
        if proctime and kind == "session":
            raise self.error(NotSupportedError, "SESSION windows on processing time are not "
                             "supported yet", desc)
        intervals = []
        for p in params[2:]:
            if not isinstance(p, exp.Interval):
                raise self.error(BindError, f"{kind.upper()} expects INTERVAL arguments", p)
            intervals.append(interval_ms(p, self.exprs))
        n_sizes = 2 if kind in ("hop", "cumulate") else 1
        for ms, p in zip(intervals[:n_sizes], params[2:]):
            if ms <= 0:
                raise self.error(BindError, "window sizes must be positive", p)
        partition: tuple[int, ...] = ()
        if data.args.get("partition_by"):
            if kind != "session":
                raise self.error(BindError, "PARTITION BY is only for SESSION windows", data)
            keys = []
            for c in data.args["partition_by"]:
                k = rel.scope.resolve(c.name, None)
                if k is None:
                    raise self.error(BindError, f"unknown column {c.name!r}", c)
                keys.append(k)
            partition = tuple(keys)
        if kind == "tumble":
            size, slide, offset = intervals[0], 0, intervals[1] if len(intervals) > 1 else 0
            if abs(offset) >= size:  # (as Flink's TUMBLE; HOP and CUMULATE take any offset)
                raise self.error(BindError, "TUMBLE's offset must be shorter than its size "
                                 f"(abs(offset) < size), got {_text(abs(offset))} for a "
                                 f"{_text(size)} window", params[3])
        elif kind == "session":
            size, slide, offset = intervals[0], 0, 0
        else:
            slide, size = intervals[0], intervals[1]
            offset = intervals[2] if len(intervals) > 2 else 0
            if size % slide and kind == "cumulate":  # (a HOP's is refused under an aggregate)
                raise self.error(BindError, "CUMULATE size must be a multiple of its step",
                                 call)
            self._bounded_copies(kind, slide, size, call)
        zone = self._shift_zone(rel.scope.columns[idx], kind, desc)
        plan = WindowTVF(rel.plan, kind, idx, size, slide, offset, partition, proctime, zone)
        alias = node.alias or None
        scope = Scope(tuple(
            replace(c, qualifier=alias or c.qualifier) for c in rel.scope.columns) + tuple(
            ScopeColumn(alias, f.name, f.type, f.rowtime)
            for f in plan.schema.fields[len(rel.scope.columns):]))
        return Relation(plan, scope)

    def _shift_zone(self, column: ScopeColumn, kind: str, node: exp.Expression) -> str:
        """The session time zone when windows over ``column`` are aligned to its wall clock
        (a TIMESTAMP_LTZ or PROCTIME() column, as Flink's windows are), else ''. A
        TIMESTAMP_LTZ's in UTC too: window_time is then a TIMESTAMP_LTZ, as in Flink (it was a
        TIMESTAMP); PROCTIME() is a TIMESTAMP here, its window_time too."""
        if not (is_ltz(column.type) or column.proctime):
            return ""
        zone = session_time_zone()
        if arrow_zone(zone) in ("UTC", "+00:00", "-00:00"):
            return "" if column.proctime else "UTC"
        return zone

    def group_window(self, rel: Relation, group_nodes: list[GroupItem],
                     legacy: list[tuple[exp.Expression, str]]
                     ) -> tuple[Relation, list[GroupItem], dict[str, int]]:
        """``GROUP BY TUMBLE(ts, size)`` (and HOP, SESSION): the legacy group windows, as a
        window TVF whose window_start and window_end become grouping keys. ``legacy`` holds
        the group window calls in GROUP BY with their kinds."""
        if len(legacy) > 1:
            raise self.error(BindError, "only one group window per GROUP BY", legacy[1][0])
        g, kind = legacy[0]
        args = list(g.expressions)
        want = {"tumble": 2, "hop": 3, "session": 2}[kind]
        if len(args) != want or not isinstance(args[0], exp.Column):
            raise self.error(BindError, f"{kind.upper()}(time_attr, "
                             f"{'slide, size' if kind == 'hop' else 'interval'}) expected", g)
        idx = rel.scope.resolve(args[0].name, args[0].table or None)
        if idx is None or not (rel.scope.columns[idx].rowtime or
                               pa.types.is_timestamp(rel.scope.columns[idx].type)):
            raise self.error(BindError, f"{args[0].sql()!r} is not a time attribute: group "
                             "windows need a rowtime column (declare a WATERMARK FOR it) or, "
                             "in batch mode, a TIMESTAMP column", args[0])
        ms = []
        for a in args[1:]:
            if not isinstance(a, exp.Interval):
                raise self.error(BindError, f"{kind.upper()} expects INTERVAL arguments", a)
            ms.append(interval_ms(a, self.exprs))
        if kind == "hop":
            slide, size = ms
            if size % slide:
                raise self.error(BindError, "HOP size must be a multiple of its slide", g)
            self._bounded_copies(kind, slide, size, g)
        else:
            slide, size = 0, ms[0]
        others = []
        for o in group_nodes:
            if o is g or isinstance(o, int):
                continue
            b = self.exprs.bind(o, rel.scope)
            if isinstance(b, ColumnRef):
                others.append(b.index)
        zone = self._shift_zone(rel.scope.columns[idx], kind, args[0])
        proctime = rel.scope.columns[idx].proctime
        if proctime and kind == "session":
            raise self.error(NotSupportedError, "SESSION windows on processing time are not "
                             "supported yet", args[0])
        tvf = WindowTVF(rel.plan, kind, idx, size, slide, 0,
                        tuple(others) if kind == "session" else (), proctime, zone)
        width = len(rel.scope.columns)
        start, end, time = tvf.schema.fields[width:]
        scope = Scope((*rel.scope.columns, ScopeColumn(None, start.name, start.type),
                       ScopeColumn(None, end.name, end.type),
                       ScopeColumn(None, time.name, time.type, True)))
        pos = group_nodes.index(g)
        # (grouped by window_time too: TUMBLE_ROWTIME is that key, a time attribute for a
        # window after it, as in Flink; it was end - 1 ms, a plain TIMESTAMP)
        new_nodes: list[GroupItem] = [*group_nodes[:pos], width, width + 1, width + 2,
                                      *group_nodes[pos + 1:]]
        aux = {"start": pos, "end": pos + 1, "rowtime": pos + 2}
        if zone:
            aux["zoned"] = 1
        return Relation(tvf, scope), new_nodes, aux
