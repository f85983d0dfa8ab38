"""MatchRecognizeOperator: MATCH_RECOGNIZE over each PARTITION BY key's rows in time order,
with the semantics of Flink's CEP library (which Flink's SQL translates the clause into).

Rows wait until the watermark passes their time (a row at or behind the watermark is late and
dropped, as Flink's CepOperator does), then go through the key's automaton in (time, arrival)
order. The automaton follows Flink's NFA compiled from the pattern, variable by variable:

- a variable's first ``low`` rows are mandatory (the row must satisfy its DEFINE condition);
  after that, up to ``high``, a row satisfying the condition is taken (TAKE) and the match may
  also move on to the next variable with the same row (PROCEED) — for a greedy quantifier only
  when the row does not satisfy the condition, for a reluctant one and for ``?`` always (both
  branches live);
- every row may start a match; a match completes when its last variable has its rows, or
  earlier where the variables after the current one may take no row and would not wait for
  one (reluctant ones, a plain ``?``): A B*? matches A alone, as in Flink;
- a completed match is emitted once no partial match that started earlier is alive (the CEP
  library's rule; one that started with the same row does not hold it back), and then AFTER
  MATCH SKIP discards partial and completed matches: PAST LAST ROW those that started at or
  before the match's last row, TO NEXT ROW those that started at or before its first, TO FIRST
  / LAST v those that started before that row of v;
- WITHIN drops a partial match once a row (or the watermark) is as far from its first row as
  the interval.

DEFINE conditions are evaluated on the candidate row with the partial match as context
(``A.price`` is the last row mapped to A, the candidate included when it is being tried as A;
LAST / FIRST with offsets; aggregates over a variable's rows kept as running values on the
match's chain of rows), as Python per row (runtime/row_eval.py): the automaton is sequential.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from sqlengine.cast import WIDE_DECIMALS
from sqlengine.errors import ExecutionError
from sqlengine.plan.match import UNBOUNDED, Bound, MatchSpec, Navigation
from sqlengine.runtime.elements import Watermark, data_part, millis, row_watermarks, with_meta
from sqlengine.runtime.operators.base import NotRescalable, Operator
from sqlengine.runtime.row_eval import RowFn, compile_row

_MAX = np.iinfo(np.int64).max


class _Node:
    """One row mapped into a (partial) match: a chain back to the match's first row, as the
    CEP library's shared buffer; ``aggs`` are the running aggregate states after this row."""

    __slots__ = ("aggs", "length", "prev", "row", "var")

    def __init__(self, row: int, var: str, prev: _Node | None, aggs: tuple) -> None:
        self.row = row
        self.var = var
        self.prev = prev
        self.aggs = aggs
        self.length = 1 if prev is None else prev.length + 1


@dataclass
class _Partial:
    start: int  # the first row's sequence number
    start_time: int
    pos: int  # the pattern variable being matched
    count: int  # rows mapped to it so far
    last: _Node | None


@dataclass
class _Key:
    """One PARTITION BY key: its released rows, partial and completed matches."""

    rows: dict[int, tuple]
    times: dict[int, int]
    partials: list[_Partial]
    completed: list[tuple[int, int, _Node]]  # (start, completion order, last node)

    # Pickled (a checkpoint) with the matches' nodes as one flat list: pickle recurses once
    # per ``prev`` link, so a chain of a few hundred rows (``A+`` over a long run) would
    # exceed the recursion limit; matches sharing their first rows keep sharing them.
    def __getstate__(self) -> dict[str, object]:
        at: dict[int, int] = {}  # id(node) -> its position in ``nodes``
        nodes: list[tuple[int, str, int, tuple]] = []  # (row, var, prev's position, aggs)

        def position(last: _Node | None) -> int:
            chain: list[_Node] = []
            node = last
            while node is not None and id(node) not in at:
                chain.append(node)
                node = node.prev
            for n in reversed(chain):  # (a node's prev is listed before it)
                at[id(n)] = len(nodes)
                nodes.append((n.row, n.var, -1 if n.prev is None else at[id(n.prev)],
                              n.aggs))
            return -1 if last is None else at[id(last)]

        partials = [(p.start, p.start_time, p.pos, p.count, position(p.last))
                    for p in self.partials]
        completed = [(start, order, position(last)) for start, order, last in self.completed]
        return {"rows": self.rows, "times": self.times, "nodes": nodes,
                "partials": partials, "completed": completed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        built: list[_Node] = []
        for row, var, prev, aggs in state["nodes"]:
            built.append(_Node(row, var, built[prev] if prev >= 0 else None, aggs))
        self.rows = state["rows"]
        self.times = state["times"]
        self.partials = [_Partial(start, start_time, pos, count,
                                  built[last] if last >= 0 else None)
                         for start, start_time, pos, count, last in state["partials"]]
        self.completed = [(start, order, built[last])
                          for start, order, last in state["completed"]]


class _Agg:
    """A running aggregate's state: (count, sum, min, max) of the values seen."""

    @staticmethod
    def add(state: tuple | None, value: object) -> tuple:
        if state is None:
            state = (0, 0, None, None)
        if value is None:
            return state
        n, s, lo, hi = state
        if isinstance(value, int | float | Decimal):  # (MIN / MAX / COUNT of text, times too)
            s = s + value
        return (n + 1, s, value if lo is None or value < lo else lo,  # type: ignore
                value if hi is None or value > hi else hi)  # type: ignore[operator]


class MatchRecognizeOperator(Operator):
    name = "MatchRecognize"
    # (not the compiled DEFINE / MEASURES functions and aggregate slots: built from the spec,
    # and lambdas, which do not pickle)
    state_fields = ("completions", "keys", "late_dropped", "processed", "seq", "waiting",
                    "watermark")

    def __init__(self, spec: MatchSpec, input_schema: pa.Schema, schema: pa.Schema) -> None:
        self.spec = spec
        self.schema = schema
        self.input_types = [f.type for f in input_schema]
        self.width = len(input_schema)
        self.pattern = spec.pattern
        self.last_pos = len(spec.pattern) - 1
        # Per position: whether the variables after it may all take no row without waiting
        # for one (each reluctant, or a plain optional ``?``, which Flink never waits for at
        # the end): a match there completes as soon as its variable has its rows, as in
        # Flink, where A B*? matches A alone.
        self.empty_tail = [all(v.low == 0 and (not v.greedy or (v.low, v.high) == (0, 1))
                               for v in spec.pattern[pos + 1:])
                           for pos in range(len(spec.pattern))]
        defines = dict(spec.defines)
        # Every navigation of every expression; aggregates get a slot in the chain's state.
        self.agg_slots: list[Navigation] = []
        self.agg_inner: list[RowFn | None] = []  # each slot's argument (None: COUNT(*))
        self.completions = 0
        self.defines: dict[str, tuple[RowFn, list[_Nav]]] = {
            name: self._compile(b) for name, b in defines.items()}
        self.measures = [self._compile(b) for _, b in spec.measures]
        # The input columns anything reads (the others are kept as None: not converted to
        # Python values per row, not held in the state; the time is kept apart, in ms)
        used = set(spec.partition) | {i for i, _, _ in spec.then_by}
        for b in [*(b for _, b in spec.defines), *(b for _, b in spec.measures)]:
            used |= {i for i in b.expr.columns() if i < self.width}
            used |= {i for n in b.navigations if n.expr is not None for i in n.expr.columns()}
        self.used = sorted(used)
        self.keys: dict[tuple, _Key] = {}
        self.waiting: list[tuple[tuple, int, int, tuple]] = []  # (key, time, seq, row)
        self.seq = 0
        self.processed = 0
        self.watermark = np.iinfo(np.int64).min
        self.late_dropped = 0

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """At another parallelism each subtask takes, from every old subtask, the partial
        matches and the waiting rows of the partitions it now owns. Row and match numbers
        continue past every old subtask's (they order rows and matches within a partition,
        whose rows all came from one old subtask)."""
        if len(states) == parallelism:
            super().restore_from(states, subtask, parallelism)
            return
        part = list(self.spec.partition)
        if not part:
            raise NotRescalable(self.name)
        from sqlengine.runtime.state.key_groups import owned

        def mine(keys: list[tuple]) -> list[bool]:
            if not keys:
                return []
            cols = [pa.array([k[j] for k in keys], type=self.input_types[p])
                    for j, p in enumerate(part)]
            return owned(cols, subtask, parallelism).tolist()

        self.keys = {}
        self.waiting = []
        for s in states:
            keys: dict[tuple, _Key] = s["keys"]  # type: ignore[assignment]
            self.keys.update((k, keys[k]) for k, ok in zip(keys, mine(list(keys))) if ok)
            waiting: list[tuple] = s["waiting"]  # type: ignore[assignment]
            self.waiting += [w for w, ok in zip(waiting, mine([w[0] for w in waiting])) if ok]
        for name in ("seq", "processed", "completions"):
            setattr(self, name, max(int(s[name]) for s in states))  # type: ignore[call-overload]
        self.watermark = min(int(s["watermark"]) for s in states)  # type: ignore[call-overload]
        self.late_dropped = sum(int(s["late_dropped"]) for s in states) if subtask == 0 else 0  # type: ignore[call-overload]

    # -- compiling -------------------------------------------------------------------------
    def _compile(self, b: Bound) -> tuple[RowFn, list[_Nav]]:
        types = [*self.input_types, *(n.type for n in b.navigations)]
        navs = []
        for n in b.navigations:
            slot = -1
            inner = compile_row(n.expr, self.input_types) if n.expr is not None else None
            if n.kind == "agg":
                slot = len(self.agg_slots)
                self.agg_slots.append(n)
                self.agg_inner.append(inner)
            navs.append(_Nav(n, inner, slot))
        return compile_row(b.expr, types), navs

    # -- input -----------------------------------------------------------------------------
    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        times = millis(data.column(self.spec.time_index))
        wm = row_watermarks(batch)
        late = times <= (wm if wm is not None else self.watermark)
        self.late_dropped += int(late.sum())
        blank = [None] * data.num_rows
        cols = [data.column(i).to_pylist() if i in self.used else blank
                for i in range(data.num_columns)]
        part = self.spec.partition
        keys = zip(*(cols[p] for p in part)) if part else ((),) * data.num_rows
        seq = self.seq
        for row, key, t, is_late in zip(zip(*cols), keys, times.tolist(), late.tolist()):
            if not is_late:
                self.waiting.append((key, t, seq, row))
                seq += 1
        self.seq = seq
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        before = self.watermark
        self.watermark = max(self.watermark, wm.timestamp)
        return self._release(self.watermark, before)

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        return self._release(_MAX, self.watermark)

    def _release(self, watermark: int, stamp: int) -> list[pa.RecordBatch]:
        """Run the rows up to ``watermark`` through the automata. The matches leave stamped
        with the watermark before this one (``stamp``): as Flink's timers, they are emitted
        before the watermark that fired them, so an operator after this one (a window by
        MATCH_ROWTIME(), say) does not take them for late rows."""
        due = [w for w in self.waiting if w[1] <= watermark]
        if not due:
            out: list[tuple] = []
        else:
            self.waiting = [w for w in self.waiting if w[1] > watermark]
            due.sort(key=lambda w: w[2])  # (arrival; stable sorts by the keys before it)
            for i, desc, nulls_first in reversed(self.spec.then_by):
                # (a NULL's key sorts it first or last once the sort runs in its direction)
                low = (-1,) if nulls_first != desc else (1,)
                due.sort(key=lambda w, i=i, low=low: low if w[3][i] is None else (0, w[3][i]),
                         reverse=desc)
            due.sort(key=lambda w: w[1])
            out = []
            for key, t, _, row in due:
                state = self.keys.get(key)
                if state is None:
                    state = self.keys[key] = _Key({}, {}, [], [])
                # Rows are numbered in the order they enter the automaton, (time, arrival):
                # "started before" and the skip strategies compare these numbers.
                self.processed += 1
                out += self._step(key, state, self.processed, t, row)
        # The watermark moves the automata's time too: WITHIN times out partial matches.
        if self.spec.within is not None:
            for key, state in list(self.keys.items()):
                out += self._advance_time(key, state, watermark)
        if not out:
            return []
        cols = list(zip(*out))
        arrays = [pa.array(list(c), f.type) for c, f in zip(cols, self.schema)]
        batch = pa.RecordBatch.from_arrays(arrays, schema=self.schema)
        return [with_meta(batch, np.full(batch.num_rows, stamp, dtype=np.int64))]

    # -- the automaton ---------------------------------------------------------------------
    def _step(self, key: tuple, st: _Key, seq: int, t: int, row: tuple) -> list[tuple]:
        st.rows[seq] = row
        st.times[seq] = t
        if self.spec.within is not None:
            st.partials = [p for p in st.partials if t - p.start_time < self.spec.within]
        moved: list[_Partial] = []
        for p in [*st.partials, _Partial(seq, t, 0, 0, None)]:
            for nxt, done in self._advance(st, p, seq, row):
                if done:
                    assert nxt.last is not None
                    st.completed.append((nxt.start, self.completions, nxt.last))
                    self.completions += 1
                else:
                    moved.append(nxt)
        st.partials = moved
        out = self._emit(key, st)
        self._forget(st)
        return out

    def _advance(self, st: _Key, p: _Partial, seq: int, row: tuple
                 ) -> list[tuple[_Partial, bool]]:
        """The partial match's successors after the row (each says whether it completed)."""
        out: list[tuple[_Partial, bool]] = []
        pos, count = p.pos, p.count
        while True:
            var = self.pattern[pos]
            can_take = var.high == UNBOUNDED or count < var.high
            ok = can_take and self._accepts(st, p.last, var.name, seq, row)
            if ok:
                node = self._node(st, p.last, seq, var.name, row)
                taken = _Partial(p.start, p.start_time, pos, count + 1, node)
                # (complete: the variables after this one may all take no row and would not
                # wait for one, and this one has its rows)
                out.append((taken, self.empty_tail[pos] and count + 1 >= var.low and
                            (not var.greedy or count + 1 == var.high)))
            # PROCEED to the next variable with this same row (an epsilon move).
            if count < var.low or pos == self.last_pos:
                break
            # (Flink compiles ``?`` as a plain optional: both branches live, greedy or not)
            # A greedy variable's rows never go to the next one: for B{n,m} not even once B
            # holds m rows (Flink's proceed edge requires NOT B's condition); B{n} is a plain
            # repetition.
            if var.greedy and (var.low, var.high) != (0, 1) and (
                    ok or (not can_take and var.low != var.high and
                           self._accepts(st, p.last, var.name, seq, row))):
                break
            pos, count = pos + 1, 0
        return out

    def _accepts(self, st: _Key, last: _Node | None, var: str, seq: int, row: tuple) -> bool:
        found = self.defines.get(var)
        if found is None:
            return True
        fn, navs = found
        values = [n.value(self, st, last, var, seq, row) for n in navs]
        return fn([*row, *values]) is True

    def _node(self, st: _Key, prev: _Node | None, seq: int, var: str, row: tuple) -> _Node:
        aggs = prev.aggs if prev is not None else (None,) * len(self.agg_slots)
        if self.agg_slots:
            new = list(aggs)
            for k, nav in enumerate(self.agg_slots):
                if nav.var is None or nav.var == var:
                    inner = self.agg_inner[k]
                    new[k] = _Agg.add(new[k], 1 if inner is None else inner(row))
            aggs = tuple(new)
        return _Node(seq, var, prev, aggs)

    def _emit(self, key: tuple, st: _Key) -> list[tuple]:
        out: list[tuple] = []
        while st.completed:
            st.completed.sort(key=lambda c: (st.times[c[0]], c[0], c[1]))
            start, _, last = st.completed[0]
            earliest = min(((st.times[p.start], p.start) for p in st.partials), default=None)
            if earliest is not None and not (st.times[start], start) <= earliest:
                break
            st.completed.pop(0)
            out.append(self._measure(key, st, last))
            self._skip(st, last)
        return out

    def _skip(self, st: _Key, last: _Node) -> None:
        rows = []
        node: _Node | None = last
        while node is not None:
            rows.append((node.row, node.var))
            node = node.prev
        rows.reverse()
        spec = self.spec
        if spec.skip == "past_last_row":
            cut, inclusive = rows[-1][0], True
        elif spec.skip == "next_row":
            cut, inclusive = rows[0][0], True
        else:
            mine = [r for r, v in rows if v == spec.skip_var]
            if not mine:
                msg = (f"AFTER MATCH SKIP {spec.skip_text()}: no row of the match is mapped "
                       f"to {spec.skip_var}")
                raise ExecutionError(msg)
            cut = mine[0] if spec.skip == "first" else mine[-1]
            if cut == rows[0][0]:
                msg = (f"AFTER MATCH SKIP {spec.skip_text()} would start the next match where "
                       "this one started (an endless loop)")
                raise ExecutionError(msg)
            inclusive = False

        def pruned(start: int) -> bool:
            return start <= cut if inclusive else start < cut
        st.partials = [p for p in st.partials if not pruned(p.start)]
        st.completed = [c for c in st.completed if not pruned(c[0])]

    def _advance_time(self, key: tuple, st: _Key, watermark: int) -> list[tuple]:
        within = self.spec.within
        assert within is not None
        if not st.partials:
            return []
        st.partials = [p for p in st.partials if watermark - p.start_time < within]
        out = self._emit(key, st)
        self._forget(st)
        return out

    def _forget(self, st: _Key) -> None:
        """Rows no live match can reach any more leave the key's state."""
        keep = min([p.start for p in st.partials] + [c[0] for c in st.completed], default=None)
        if keep is None:
            st.rows.clear()
            st.times.clear()
        elif len(st.rows) > 64:
            # (rows enter in increasing number and leave from the lowest: the dict's order)
            while st.rows:
                first = next(iter(st.rows))
                if first >= keep:
                    break
                del st.rows[first]
                del st.times[first]

    def _measure(self, key: tuple, st: _Key, last: _Node) -> tuple:
        values = list(key)
        blank = [None] * self.width
        for fn, navs in self.measures:
            nav_values = [n.value(self, st, last, None, None, None) for n in navs]
            values.append(fn([*blank, *nav_values]))
        return tuple(values)

    def state_summary(self) -> Mapping[str, object]:
        return {"waiting_rows": len(self.waiting),
                "partial_matches": sum(len(s.partials) for s in self.keys.values()),
                "late_records_dropped": self.late_dropped}


@dataclass
class _Nav:
    nav: Navigation
    inner: RowFn | None
    slot: int

    def value(self, op: MatchRecognizeOperator, st: _Key, last: _Node | None,
              var: str | None, seq: int | None, row: tuple | None) -> object:
        """The navigation's value for the candidate row (``seq``, tried as ``var``) on top of
        the chain ending at ``last``; with no candidate (MEASURES), on the chain alone."""
        n = self.nav
        cand = seq is not None and (n.var is None or n.var == var)
        if n.kind == "rowtime":
            return _timestamp(st.times[last.row]) if last is not None else None
        if n.kind == "agg":
            state = last.aggs[self.slot] if last is not None else None
            if cand:
                state = _Agg.add(state, 1 if self.inner is None else self.inner(row))  # type: ignore[arg-type]
            return _result(n, state)
        if n.kind == "last":
            k = n.offset
            if cand:
                if k == 0:
                    return self.inner(row) if self.inner else None  # type: ignore[arg-type]
                k -= 1
            node = last
            while node is not None:
                if n.var is None or node.var == n.var:
                    if k == 0:
                        return self.inner(st.rows[node.row]) if self.inner else None
                    k -= 1
                node = node.prev
            return None
        # first
        mine = []
        node = last
        while node is not None:
            if n.var is None or node.var == n.var:
                mine.append(node.row)
            node = node.prev
        mine.reverse()
        rows = [st.rows[r] for r in mine]
        if cand:
            rows.append(row)  # type: ignore[arg-type]
        if n.offset < len(rows) and self.inner is not None:
            return self.inner(rows[n.offset])
        return None


def _timestamp(ms: int) -> object:
    import datetime as dt

    return dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)


def _result(nav: Navigation, state: tuple | None) -> object:
    func = nav.func
    n = 0 if state is None else state[0]
    if func == "count":
        return n
    if n == 0 or state is None:
        return None
    _, total, lo, hi = state
    if func == "sum":
        return total
    if func == "min":
        return lo
    if func == "max":
        return hi
    t = nav.type  # avg
    if pa.types.is_integer(t):
        q = abs(total) // n
        return q if total >= 0 else -q
    if pa.types.is_decimal(t):
        wide = WIDE_DECIMALS  # (the default 28 digits cannot hold a DECIMAL(38, 30))
        return wide.divide(Decimal(total), Decimal(n)).quantize(Decimal(1).scaleb(-t.scale),
                                                                ROUND_HALF_UP, wide)
    return total / n


def output_rows(rows: Sequence[tuple], schema: pa.Schema) -> pa.RecordBatch:
    cols = list(zip(*rows)) if rows else [[] for _ in schema]
    return pa.RecordBatch.from_arrays([pa.array(list(c), f.type) for c, f in zip(cols, schema)],
                                      schema=schema)
