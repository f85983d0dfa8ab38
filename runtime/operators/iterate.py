"""The iteration of a recursive query (``WITH RECURSIVE``; optimizer/specs_iteration.py).

The operator gathers the base rows (its input). When they end, it plans the step (whose
working table is an IterationSource head) as a job of its own and runs it in this task: the
step's static inputs (the tables it joins with) are read to their end first, so that its
joins hold them; then round after round the head emits the previous round's new rows, they
go through the step synchronously (pushed, as the native executor pushes every batch), and
what reaches the step's collecting sink (the IterationSink) is the round's output. For
UNION, a row already found is not new (a KeyIndex over every row found so far: semi-naive
evaluation, each row goes round once); for UNION ALL every output row is new. The rows
found each round are emitted at once and handed back to the head (the broker); a round
that finds none is the fixpoint, and the job's head input ends. The head, the step and the
tail share this task, as Flink co-locates an iteration's head and tail.

Partitioned (``spec.partition``, parallelism > 1): each subtask holds the base rows and the
static side's rows of its keys (both hash-partitioned by the step's join keys: co-located)
and runs the step on its working rows; the rows a round derives are routed by the same key
to their subtask through the broker (runtime/native/iteration_broker.py), which dedups them
there (UNION: equal rows have equal keys, so one subtask's KeyIndex sees every copy). Batch
mode runs aligned supersteps: the fixpoint is the round in which no subtask had working
rows, seen by all at once; streaming mode sends rows as they are derived and ends, once its
inputs have, when the broker is quiescent.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from sqlengine import types as T
from sqlengine.errors import ExecutionError
from sqlengine.optimizer.specs_iteration import IterateSpec
from sqlengine.runtime.elements import conformed, data_part, has_rowkind, signs
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.key_index import KeyIndex

if TYPE_CHECKING:
    from sqlengine.runtime.native.iteration_broker import IterationBroker

MAX_ROUNDS_KEY = "table.exec.iteration.max-rounds"
OUT_ROWS = 65_536  # rows found before they are emitted (many rounds find a few rows each)


class _Gathered:
    """A loop's new rows, handed on in batches of about OUT_ROWS rather than per round."""

    def __init__(self, first: pa.Table) -> None:
        self.parts, self.held = [first], first.num_rows

    def add(self, rows: pa.Table) -> list[pa.RecordBatch]:
        self.parts.append(rows)
        self.held += rows.num_rows
        return self.rest() if self.held >= OUT_ROWS else []

    def rest(self) -> list[pa.RecordBatch]:
        if not self.held:
            return []
        out = pa.concat_tables(self.parts).combine_chunks().to_batches()
        self.parts, self.held = [], 0
        return out


def check_rounds(spec: IterateSpec, rounds: int) -> None:
    """Fails a loop past its round limit, naming 'table.exec.iteration.max-rounds'."""
    if rounds > spec.max_rounds:
        raise ExecutionError(
            f"the recursive query {spec.name!r} did not reach a fixpoint in "
            f"{spec.max_rounds} rounds ({MAX_ROUNDS_KEY!r}; each round found new rows)")


def new_rows(seen: KeyIndex | None, rows: pa.Table) -> pa.Table:
    """UNION: the rows of ``rows`` that ``seen`` (every row found so far) lacks, each once,
    now added to it; None (UNION ALL): all of them. An ARRAY, MAP or ROW column is compared
    by its key bytes, as GROUP BY compares one (Arrow's grouping takes no list: a UNION
    recursion with an ARRAY column failed with 'Keys of type list')."""
    if seen is None or rows.num_rows == 0:
        return rows
    nested = any(T.is_nested(c.type) for c in rows.columns)
    if not nested:
        rows = rows.group_by(rows.column_names, use_threads=False).aggregate([])
    before = len(seen)
    slots = seen.assign([_flat(c.combine_chunks()) for c in rows.columns])
    if not nested:
        return rows.filter(pa.array(slots >= before))
    firsts = np.unique(slots, return_index=True)[1]  # (not grouped: each new key's first row)
    fresh = np.zeros(len(slots), bool)
    fresh[firsts[slots[firsts] >= before]] = True
    return rows.filter(pa.array(fresh))


def _flat(column: pa.Array) -> pa.Array:
    """A column as UNION's key: a nested value as its key bytes (what GROUP BY groups by)."""
    if not T.is_nested(column.type):
        return column
    from sqlengine.runtime.key_bytes import key_bytes

    return key_bytes([column], [None], pa.binary())


class IterationSourceOperator(Operator):
    """The iteration's head: passes on what the broker hands it (see IterateOperator)."""

    name = "IterationSource"
    state_fields = ()

    def __init__(self, index: int = 0) -> None:
        self.index = index  # 0: the recursive table's new rows; i > 0: iteration input i

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        return (batch,)


class IterateOperator(Operator):
    name = "Iterate"
    # (the rounds run at once when the base ends, within one step of the task: a checkpoint
    # sees the base rows gathered so far, never a half-run iteration)
    state_fields = ("base", "seen", "rounds", "rows_derived", "rows_fed", "found_rows")

    def __init__(self, spec: IterateSpec, schema: pa.Schema,
                 tables: dict[str, object]) -> None:
        self.spec = spec
        self.schema = schema
        self.tables = tables
        self.base: list[pa.RecordBatch] = []
        self.rounds = 0  # rounds run (a metric)
        self.rows_derived = 0  # rows the step produced, new or not (a metric)
        self.rows_fed = 0  # rows the step was fed: each round's new rows, new step rows
        self.found_rows = 0  # (streaming: rows found so far, for spec.enough_rows)
        self.seen: KeyIndex | None = KeyIndex(
            [pa.binary() if T.is_nested(f.type) else f.type for f in schema]) \
            if spec.distinct else None
        self.step: _StepJob | None = None  # (streaming: the step's job, kept running)
        # Partitioned: the static side's rows (batch), the inputs ended, the broker to the
        # other subtasks (set by the parallel runtime; None: this is the only subtask).
        self.static: list[pa.RecordBatch] = []
        self.ended: set[int] = set()
        self.broker: IterationBroker | None = None
        self.uses_processing_time = spec.streaming and bool(spec.partition)
        self._taken = 0  # (messages the last _go_round took)

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if self.spec.streaming:
            if self.spec.partition:
                return self._maintain_partitioned(data_part(batch), input_index)
            return self._maintain(data_part(batch), input_index)
        if input_index:
            self.static.append(data_part(batch))
            return ()
        self.base.append(conformed(data_part(batch), self.schema))
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        if not self.spec.partition:
            return () if self.spec.streaming else self._iterate()
        self.ended.add(input_index)
        if len(self.ended) < 2:
            return ()
        return self._quiesce() if self.spec.streaming else self._iterate_partitioned()

    # -- streaming: the iteration maintained as its inputs grow -----------------------------
    def checkpoint_refusal(self) -> str | None:
        if self.spec.streaming:
            return ("a maintained streaming iteration (WITH RECURSIVE) keeps its step's "
                    "join state in a job of its own, which checkpoints do not capture yet; "
                    "run the query without 'execution.checkpointing.interval' or in batch "
                    "mode")
        return None

    def snapshot_state(self) -> dict[str, object]:
        why = self.checkpoint_refusal()
        if why:  # (the step's join state lives in its own job)
            from sqlengine.runtime.operators.base import NotCheckpointable

            raise NotCheckpointable(self.name, why)
        return super().snapshot_state()

    def _maintain(self, batch: pa.RecordBatch, input_index: int) -> list[pa.RecordBatch]:
        """New base rows go round from the start; new rows of a step table meet every row
        found so far in the step's joins (they hold both sides), and what they derive goes
        round. Either way only the new rows move: the iteration's result is maintained."""
        if self.step is None:
            self.step = _StepJob(self.spec, getattr(self, "ctx", None), self.tables,
                                 streaming=True)
        if self.spec.enough_rows is not None and self.found_rows >= self.spec.enough_rows:
            return []  # (the LIMIT above has read all it reads)
        if input_index == 0:
            working = self._new(pa.Table.from_batches([conformed(batch, self.schema)]))
        else:
            self.rows_fed += batch.num_rows
            out = self.step.feed(input_index, batch)
            self.rows_derived += out.num_rows
            working = self._new(out)
        found = [working]
        rounds = 0
        enough = self.spec.enough_rows
        self.found_rows += working.num_rows
        while working.num_rows and (enough is None or self.found_rows < enough):
            rounds += 1
            self.rounds += 1
            if rounds > self.spec.max_rounds:
                self._fail_rounds()
            self.rows_fed += working.num_rows
            out = self.step.round(working)
            self.rows_derived += out.num_rows
            working = self._new(out)
            self.found_rows += working.num_rows
            found.append(working)
        table = pa.concat_tables(found).combine_chunks()
        return table.to_batches() if table.num_rows else []

    def _fail_rounds(self) -> None:
        check_rounds(self.spec, self.spec.max_rounds + 1)

    def close(self) -> None:
        if self.step is not None:
            self.step.close()
            self.step = None

    def _new(self, rows: pa.Table) -> pa.Table:
        """The rows not found before (UNION), each once; all of them (UNION ALL)."""
        return new_rows(self.seen, rows)

    def _iterate(self) -> Iterator[pa.RecordBatch]:
        base = pa.Table.from_batches(self.base, self.schema)
        self.base = []
        working = self._new(base)
        if working.num_rows == 0:
            return
        found = _Gathered(working)  # (emitted in batches of OUT_ROWS, not per round)
        step = _StepJob(self.spec, getattr(self, "ctx", None), self.tables)
        enough, total = self.spec.enough_rows, working.num_rows
        try:
            while working.num_rows and (enough is None or total < enough):
                self.rounds += 1
                if self.rounds > self.spec.max_rounds:
                    self._fail_rounds()
                self.rows_fed += working.num_rows
                out = step.round(working)
                self.rows_derived += out.num_rows
                working = self._new(out)
                total += working.num_rows
                yield from found.add(working)
        finally:
            step.close()
        yield from found.rest()

    # -- partitioned (parallelism > 1) ------------------------------------------------------
    @property
    def _me(self) -> int:
        return self.broker.subtask if self.broker is not None else 0

    def _route(self, rows: pa.Table) -> list[pa.Table | None]:
        """``rows`` for each subtask, by the hash of their partition columns (as the
        exchange into this vertex routes the base rows: the same key groups)."""
        from sqlengine.runtime.native.partitioner import MAX_PARALLELISM, key_groups

        p = self.broker.parallelism if self.broker is not None else 1
        if p == 1 or rows.num_rows == 0:
            return [rows if rows.num_rows else None] + [None] * (p - 1)
        rows = rows.combine_chunks()
        targets = key_groups([rows.column(i).combine_chunks() for i in self.spec.partition]) \
            * p // MAX_PARALLELISM
        out: list[pa.Table | None] = []
        for j in range(p):
            mask = targets == j
            out.append(rows.filter(pa.array(mask)) if mask.any() else None)
        return out

    def _iterate_partitioned(self) -> Iterator[pa.RecordBatch]:
        """Aligned supersteps: each round every subtask runs the step on its working rows
        and sends the rows derived to their subtasks; a round in which no subtask had any
        working rows is the fixpoint (every subtask sees it in the same round)."""
        base = pa.Table.from_batches(self.base, self.schema)
        self.base = []
        working = self._new(base)
        step = _StepJob(self.spec, getattr(self, "ctx", None), self.tables, static=self.static)
        self.static = []
        found = _Gathered(working)
        empty = self.schema.empty_table()
        round_no = 0
        try:
            while True:
                out = empty
                if working.num_rows:
                    self.rows_fed += working.num_rows
                    out = step.round(working)
                    self.rows_derived += out.num_rows
                parts = self._route(out)
                if self.broker is None:
                    rows, total = [p for p in parts if p is not None], working.num_rows
                else:
                    rows, total = self.broker.exchange(round_no, parts, working.num_rows)
                if total == 0:
                    break
                round_no += 1
                if self._me == 0:  # (metrics are summed over the subtasks)
                    self.rounds = round_no
                if round_no > self.spec.max_rounds:
                    self._fail_rounds()
                working = self._new(pa.concat_tables(rows) if rows else empty)
                yield from found.add(working)
        finally:
            step.close()
        yield from found.rest()

    def _step_job(self) -> _StepJob:
        if self.step is None:
            self.step = _StepJob(self.spec, getattr(self, "ctx", None), self.tables,
                                 streaming=True)
        return self.step

    def _spread(self, out: pa.Table, depth: int) -> pa.Table:
        """The rows of ``out`` routed here; the others sent to their subtasks."""
        parts = self._route(out)
        if self.broker is not None:
            self.broker.send(depth, parts)
        mine = parts[self._me]
        return mine if mine is not None else self.schema.empty_table()

    def _go_round(self, working: pa.Table, depth: int) -> list[pa.Table]:
        """Rounds over this subtask's new rows, with the rows other subtasks sent meanwhile
        joining each round's working rows, until none stay here (those routed elsewhere go
        on there); the new rows found. The messages taken count as processed only at the
        end, when what they derived has all been sent (the quiescence check relies on it)."""
        step = self._step_job()
        found = [working]
        taken = 0
        while True:
            if self.broker is not None:
                messages = self.broker.poll()
                if messages:
                    taken += len(messages)
                    depth = max(depth, *(d for d, _ in messages))
                    fresh = self._new(pa.concat_tables([conformed_table(r, self.schema)
                                                        for _, r in messages]))
                    found.append(fresh)
                    working = pa.concat_tables([working, fresh])
            if not working.num_rows:
                break
            depth += 1
            self.rounds += 1
            if depth > self.spec.max_rounds:
                self._fail_rounds()
            self.rows_fed += working.num_rows
            out = step.round(working)
            self.rows_derived += out.num_rows
            working = self._new(self._spread(out, depth))
            found.append(working)
        if taken and self.broker is not None:
            self.broker.processed(taken)
        self._taken = taken
        return found

    def _maintain_partitioned(self, batch: pa.RecordBatch, input_index: int
                              ) -> list[pa.RecordBatch]:
        step = self._step_job()
        if input_index == 0:  # (routed here by the exchange: this subtask's key)
            found = self._go_round(self._new(pa.Table.from_batches(
                [conformed(batch, self.schema)])), 0)
        else:  # new static rows meet every row found so far here
            self.rows_fed += batch.num_rows
            out = step.feed(input_index, batch)
            self.rows_derived += out.num_rows
            found = self._go_round(self._new(self._spread(out, 1)), 1)
        return _batches(found)

    def _received(self) -> list[pa.Table]:
        """The rows other subtasks sent here, gone round."""
        return self._go_round(self.schema.empty_table(), 0)

    def on_processing_time(self, now_ms: int) -> Iterable[pa.RecordBatch]:
        if not self.uses_processing_time or self.broker is None:
            return ()
        return _batches(self._received())

    def _quiesce(self) -> Iterator[pa.RecordBatch]:
        """This subtask's inputs ended: take what the others send until every subtask's
        inputs have ended and no message is in flight."""
        if self.broker is None:
            return
        self.broker.end()
        while True:
            found = self._received()
            if self._taken:
                yield from _batches(found)
                continue
            if self.broker.quiescent():
                found = self._received()  # (nothing can be left; taken if it were)
                yield from _batches(found)
                return
            self.broker.wait()

    def extra_metrics(self) -> dict[str, int]:
        return {"rounds": self.rounds, "rows_derived": self.rows_derived,
                "rows_fed": self.rows_fed}


class _StepJob:
    """The step planned and run as a job of its own in this task, its head fed by hand."""

    def __init__(self, spec: IterateSpec, ctx: object, tables: dict[str, object],
                 streaming: bool = False, static: list[pa.RecordBatch] | None = None
                 ) -> None:
        from sqlengine.optimizer import plan_job
        from sqlengine.plan.nodes import Sink, SinkSpec
        from sqlengine.runtime.native.executor import Executor
        from sqlengine.runtime.operators.join import JoinOperator

        options = dict(getattr(ctx, "options", {}) or {})
        options.update({"execution.runtime-mode": "streaming" if streaming else "batch",
                        "parallelism.default": "1"})
        for key in [k for k in options if k.startswith("execution.checkpointing.")]:
            del options[key]
        plan = Sink(spec.step, SinkSpec("collect", "collect", (), spec.step.schema))
        self.graph = plan_job(plan, options, tables)
        self.executor = Executor(self.graph, options, tables)
        self.heads = {task.operators[0].index: vid
                      for vid, task in self.executor.tasks.items()
                      if isinstance(task.operators[0], IterationSourceOperator)}
        self.head = self.heads[0]
        for task in self.executor.tasks.values():
            for op in task.operators:
                if isinstance(op, JoinOperator):
                    op.eager = True  # (match each round's rows at once)
                    op.build_side = None  # (the static side ends first: it is built)
        # The step's static inputs, read to their end (nothing reaches its sink yet: every
        # row of the step comes from the head).
        for batch in self.executor.run_open():
            if batch.num_rows:
                raise ExecutionError("the step of a recursive query produced rows without "
                                     "reading the recursive table")
        if static is not None:  # (batch, partitioned: this subtask's share, built)
            from sqlengine.runtime.elements import MAX_WATERMARK

            vid = self.heads[1]
            task = self.executor.tasks[vid]
            task.emit_from_head([b for b in static if b.num_rows])
            task.fire_watermark(MAX_WATERMARK, start=1)
            task.end_input(0)
            self.executor._finish(vid)
            if any(b.num_rows for b in self.executor.collect.drain()):
                raise ExecutionError("the step of a recursive query produced rows without "
                                     "reading the recursive table")
        self.collect = self.executor.collect
        assert self.collect is not None
        self.schema = spec.step.schema.to_arrow()

    def round(self, working: pa.Table) -> pa.Table:
        """The step's output for one round's rows."""
        return self.feed(0, working)

    def feed(self, index: int, rows: pa.Table | pa.RecordBatch) -> pa.Table:
        """The step's output for rows of input ``index`` (0: the recursive table's)."""
        batches = rows.to_batches() if isinstance(rows, pa.Table) else [rows]
        self.executor.tasks[self.heads[index]].emit_from_head(batches)
        out = []
        for b in self.collect.drain():
            if has_rowkind(b) and (signs(b) < 0).any():
                raise ExecutionError("the step of a recursive query retracted rows")
            out.append(conformed(data_part(b), self.schema))
        return pa.Table.from_batches(out, self.schema) if out else self.schema.empty_table()

    def close(self) -> None:
        self.executor.close()


def conformed_table(rows: pa.Table, schema: pa.Schema) -> pa.Table:
    return rows if rows.schema == schema else rows.cast(schema)


def _batches(tables: list[pa.Table]) -> list[pa.RecordBatch]:
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables).combine_chunks().to_batches() if tables else []
