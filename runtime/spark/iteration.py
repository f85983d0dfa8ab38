"""WITH RECURSIVE on Spark (batch mode): the iteration as a loop of DataFrames on the driver,
Spark's own way to iterate.

The base (the Iterate's input) is the first part of the result, distinct for UNION. The
step (IterateSpec.step, a logical plan whose working table is its IterationSource) is planned
as a job of its own, as the native operator does (runtime/operators/iterate.py), and
translated by a SparkJob whose IterationSource yields the round's working DataFrame; the
step's static inputs (the tables it joins with) are translated once and cached, only the
vertices downstream of the head are translated again each round. Each round the step runs
over the previous round's new rows (semi-naive evaluation): for UNION the new rows are its
distinct output rows not found before (EXCEPT DISTINCT against every part so far), for
UNION ALL every output row. A round adding nothing is the fixpoint. Each round's rows are
materialized (localCheckpoint), so no round's plan holds the lineage of the rounds before
it; the parts found so far are merged now and then (eight of a size into one), so that
neither the EXCEPT of UNION nor the final union grows a leaf per round. Past
'table.exec.iteration.max-rounds' rounds the query fails as natively.

A round costs Spark about a second however few its rows (its jobs), so rounds of few rows
run on the driver (``_LocalRounds``): while the working rows are at most
'table.exec.iteration.spark.local-rows' (10,000; 0: never), the step runs over them in this
process as the native runtime runs it (its step job over the same step plan and tables),
a round in about a millisecond; the rows found there go back to Spark as one DataFrame when
the loop ends or a round finds more rows than that (Spark's rounds go on from them). Spark
4.1's own WITH RECURSIVE (UnionLoopExec) folds small rounds into LocalRelations on the driver
too, but it takes UNION ALL only, refuses aggregates in the step, and its rounds cost about
15 ms each (measured, counting: 1,000 rounds 15 s, 4,000 rounds 59 s in pyspark 4.3).

The loop runs while the job's DataFrames are built to run the query: the result is the union
of materialized parts, its columns c0, c1, ... as the base's. EXPLAIN does not run it (no
round, no materialization): its frame is the base and one round of the step over it, lazily,
with a note that the rest is a loop of rounds on the driver.

Structured Streaming (``streaming_iterate``): Spark has no feedback edge, so the iteration is
maintained on the driver in two stages. First the iteration's inputs (its base and, as
natively in streaming mode, every table its step reads: IterationInput heads) are one
streaming query, tagged by input and unioned; its ``foreachBatch`` hands each micro-batch's
new rows to ``Maintained``, which keeps every row found so far and every step table's rows
and derives only the new rows: the step over the rows found before with each step table's
new rows (one term per table, the tables before it whole and the ones after it as they
were: the step is linear in each table, as it reads each once), then semi-naive rounds over
the new rows until a round adds none (UNION: rows found before are not new). The new rows are
appended to a folder, which the rest of the query reads as a file stream (the second stage,
the streaming translation as for any source). Rounds are counted over all micro-batches and
each micro-batch's rounds are bounded by 'table.exec.iteration.max-rounds'. Its rounds of
few rows run on the driver too when the step reads no table but the recursive one (the rows
of step tables are Spark's).
"""

from __future__ import annotations

from functools import reduce
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from sqlengine.errors import (
    ExecutionError,
    InternalError,
    NotSupportedError,
    SqlEngineError,
)
from sqlengine.optimizer.specs_iteration import IterateSpec, IterationSourceSpec
from sqlengine.runtime.operators.iterate import MAX_ROUNDS_KEY, check_rounds, new_rows

if TYPE_CHECKING:
    from sqlengine.runtime.spark.translate import SparkJob

LOCAL_ROWS_KEY = "table.exec.iteration.spark.local-rows"
LOCAL_ROWS = 10_000  # a round's working rows at most for it to run on the driver
LOCAL_FOUND = 1_000_000  # UNION: rows found at most for the driver to hold them (its dedup)
FAN_IN = 8  # parts of one size merged into one (their number stays logarithmic in rounds)


def working_frame(job: SparkJob, op: IterationSourceSpec) -> Any:
    """The IterationSource of a step: this round's working rows (an IterationInput, index >
    0: the step table's rows the round reads)."""
    if op.index:
        tables = getattr(job, "step_tables", None) or {}
        if op.index in tables:
            return tables[op.index]
    working = getattr(job, "working", None)
    if working is None or op.index:
        msg = f"{op.label()} on Spark: read outside the rounds of its iteration"
        raise ExecutionError(msg)
    return working


def iterate(job: SparkJob, op: IterateSpec, base: Any) -> Any:
    """The rows of the recursive query ``op`` whose base rows are ``base``."""
    from sqlengine.runtime.spark.translate import spark_failure

    if job.streaming or op.streaming:  # (Structured Streaming runs streaming_iterate)
        raise InternalError(f"{op.label()} reached the batch loop in a streaming job")
    if getattr(job, "explaining", False):
        return _explained(job, op, base)
    try:
        return _Iteration(job, op).run(base)
    except SqlEngineError:
        raise
    except Exception as e:  # a failure while Spark ran a round
        raise spark_failure(f"{op.label()} on Spark: ", e) from None


def _explained(job: SparkJob, op: IterateSpec, base: Any) -> Any:
    """For EXPLAIN: the iteration's frame without running its loop (Spark plans only): the
    base (distinct for UNION) and the step over it once, and a note of what runs after."""
    kind = "UNION" if op.distinct else "UNION ALL"
    notes = job.__dict__.setdefault("explain_notes", [])
    notes.append(f"Iterate({op.name}, {kind}): a loop of rounds on the driver, not run by "
                 "EXPLAIN; below, its base and the step over the base rows (round 1); each "
                 "later round is the step over the previous round's new rows"
                 f"{' (EXCEPT the rows found)' if op.distinct else ''}, materialized, until "
                 f"a round adds none or {MAX_ROUNDS_KEY!r} ({op.max_rounds}) is passed; "
                 f"rounds of at most {LOCAL_ROWS_KEY!r} "
                 f"({job.options.get(LOCAL_ROWS_KEY) or LOCAL_ROWS}) rows run on the driver "
                 "(the native step over Arrow tables), not as Spark jobs")
    fields = base.schema.fields
    working = _conformed(base, fields)
    if op.distinct:
        working = working.distinct()
    step = _Step(job, op, cache=False)
    return working.unionByName(_conformed(step.round(working), fields))


def _conformed(df: Any, fields: list[Any]) -> Any:
    """``df`` with the base's columns (c0, c1, ...) and types, as natively."""
    from pyspark.sql import functions as F

    return df.select(*[F.col(c).cast(f.dataType).alias(f"c{i}")
                       for i, (c, f) in enumerate(zip(df.columns, fields))])


class _Step:
    """The step as a SparkJob: its static inputs translated once (cached), the vertices
    downstream of its IterationSource translated again for each round's working rows."""

    def __init__(self, job: SparkJob, spec: IterateSpec, cache: bool = True) -> None:
        from sqlengine.optimizer import plan_job
        from sqlengine.plan.nodes import Sink, SinkSpec
        from sqlengine.runtime.spark.translate import SparkJob

        options = {**job.options, "execution.runtime-mode": "batch"}
        plan = Sink(spec.step, SinkSpec("collect", "collect", (), spec.step.schema))
        graph = plan_job(plan, options, job.tables)
        self.job = SparkJob(graph, options, job.tables)
        self.job.result = job.result  # (rows a static input skips count for the query)
        heads = [v.id for v in graph.vertices
                 if isinstance(v.head, IterationSourceSpec) and not v.head.index]
        if len(heads) != 1:
            msg = f"the step of {spec.name!r} reads its working table {len(heads)} times"
            raise ExecutionError(msg)
        # (streaming: the step tables' IterationInput heads change from round to round too)
        self.inputs = [v.head.index for v in graph.vertices
                       if isinstance(v.head, IterationSourceSpec) and v.head.index]
        self.dynamic = {heads[0], *(v.id for v in graph.vertices
                                    if isinstance(v.head, IterationSourceSpec))}
        for v in graph.vertices:  # (in topological order)
            if any(e.source in self.dynamic for e in graph.in_edges(v.id)):
                self.dynamic.add(v.id)
        # The static vertices the rounds read: translated now, cached at their first use.
        self.cached = []
        for v in graph.vertices:
            if v.id not in self.dynamic and \
                    any(e.target in self.dynamic for e in graph.out_edges(v.id)):
                if not cache:  # (EXPLAIN: nothing is computed)
                    continue
                df = self.job.frame(v.id).cache()
                self.job._frames[v.id] = df
                self.cached.append(df)

    def round(self, working: Any, tables: dict[int, Any] | None = None) -> Any:
        """The step's output over ``working`` (a lazy DataFrame), its IterationInputs
        reading ``tables`` (by input index)."""
        self.job.working = working  # type: ignore[attr-defined]
        self.job.step_tables = tables or {}  # type: ignore[attr-defined]
        for vid in self.dynamic:
            self.job._frames.pop(vid, None)
        return self.job.final_frame()[0]

    def close(self) -> None:
        for df in self.cached:
            df.unpersist()


def _reads_step_tables(spec: IterateSpec) -> bool:
    from sqlengine.plan.iteration import StepInput

    stack = [spec.step]
    while stack:
        node = stack.pop()
        if isinstance(node, StepInput):
            return True
        stack.extend(node.children())
    return False


class _LocalRounds:
    """Rounds on the driver: while a round's working rows are few (at most
    'table.exec.iteration.spark.local-rows'), the step runs over them as Arrow tables in
    this process (the native runtime's step job, runtime/operators/iterate.py, over the same
    step plan and the same tables) instead of as Spark jobs, which cost about a second a
    round however few the rows; Spark's own recursive CTE does likewise when it folds a small
    round into a LocalRelation its optimizer evaluates on the driver. Rows found on the driver
    go back to Spark as one DataFrame when the loop ends or a round's rows outgrow the limit
    (then Spark's rounds go on). UNION: the driver holds the rows found so far (its dedup,
    as natively: a KeyIndex kept from one stay on the driver to the next, given the rows
    Spark's rounds found in between), so it takes rounds only while they are at most
    LOCAL_FOUND."""

    def __init__(self, job: Any, spec: IterateSpec, fields: list[Any], limit: int) -> None:
        self.job = job
        self.spec = spec
        self.fields = fields
        self.limit = limit
        self.schema = spec.schema.to_arrow()
        self.step: Any = None  # (the native step job, planned at the first local round)
        self.refused = False
        self.seen: Any = None  # (UNION: a KeyIndex of the rows found, once on the driver)
        self.rounds = 0
        self.fed = 0  # (rows the driver's rounds fed the step)

    @classmethod
    def of(cls, job: Any, spec: IterateSpec, fields: list[Any]) -> _LocalRounds | None:
        """Rounds on the driver for ``spec``, or None: turned off (local-rows 0), or the step
        reads step tables (streaming: their rows are Spark's), or a registered table is a
        stream of batches (batch: the native step would read it up)."""
        from collections.abc import Iterator

        limit = int(job.options.get(LOCAL_ROWS_KEY) or LOCAL_ROWS)
        if limit <= 0 or _reads_step_tables(spec) or (not spec.streaming and any(
                isinstance(t, Iterator) for t in (job.tables or {}).values())):
            return None
        return cls(job, spec, fields, limit)

    def takes(self, rows: int, found: _Iteration) -> bool:
        """Whether the driver runs the next rounds, the rows ``found`` so far (the step
        planned natively at the first; if the native runtime cannot plan it, every round is
        Spark's)."""
        from sqlengine.errors import SqlEngineError
        from sqlengine.runtime.operators.iterate import _StepJob

        if self.spec.distinct and found.rows > LOCAL_FOUND:
            self.refused = True  # (for good: the rows found only grow)
        if self.refused:
            found.unseen = None
            return False
        if rows > self.limit:
            return False
        if self.step is None:
            options = {k: v for k, v in self.job.options.items() if k != "execution.target"}
            try:
                self.step = _StepJob(self.spec, _Options(options), self.job.tables)
            except SqlEngineError:
                self.refused = True
                return False
        return True

    def _to_arrow(self, df: Any) -> pa.Table:
        from sqlengine.runtime.spark.arrow_ops import retime, schema_units

        t = df.toArrow()
        batches = [retime(b, "ms", schema_units(self.schema)) for b in t.to_batches()]
        t = pa.Table.from_batches(batches, t.schema if not batches else batches[0].schema)
        return _cast(t, self.schema)

    def _to_spark(self, rows: pa.Table) -> Any:
        from sqlengine.runtime.spark.arrow_ops import retime

        names = [f"c{i}" for i in range(rows.num_columns)]
        batches = [retime(b, "us") for b in rows.rename_columns(names).combine_chunks()
                   .to_batches()]
        table = pa.Table.from_batches(batches) if batches else \
            rows.rename_columns(names)
        return _conformed(self.job._from_arrow(table), self.fields)

    def run(self, working: Any, found: _Iteration, rounds: int
            ) -> tuple[tuple[Any, int] | None, int, tuple[Any, int] | None]:
        """Rounds from ``working`` (a Spark DataFrame, its rows in ``found`` already) until
        the fixpoint or a round's rows outgrow the limit: the rows found on the driver before
        (a DataFrame and its rows), the rounds so far, and that round's rows, not added to
        the rows found yet, for Spark's next round (None at the fixpoint)."""
        from sqlengine.runtime.operators.key_index import KeyIndex

        spec = self.spec
        seen = None
        if spec.distinct:  # (the rows found that the driver has not seen)
            if self.seen is None:
                self.seen = KeyIndex([f.type for f in self.schema])
                found.unseen = [found._found()]
            for df in found.unseen or []:
                whole = self._to_arrow(df)
                if whole.num_rows:
                    self.seen.assign([c.combine_chunks() for c in whole.columns])
            found.unseen = []
            seen = self.seen
        rows = self._to_arrow(working)
        new: list[pa.Table] = []  # (the rounds' rows, found on the driver)
        total = 0  # (their rows)
        while True:
            rounds += 1
            self.rounds += 1
            check_rounds(spec, rounds)
            self.fed += rows.num_rows
            rows = new_rows(seen, _cast(self.step.round(rows), self.schema))
            if not rows.num_rows or rows.num_rows > self.limit:
                break
            new.append(rows)
            total += rows.num_rows
            if spec.enough_rows is not None and found.rows + total >= spec.enough_rows:
                rows = rows.slice(0, 0)  # (enough rows for the LIMIT above: as a fixpoint)
                break
        part = (_counted(self._to_spark(pa.concat_tables(new)))[0], total) if total \
            else None
        if not rows.num_rows:
            return part, rounds, None
        return part, rounds, _counted(self._to_spark(rows))

    def close(self) -> None:
        if self.step is not None:
            self.step.close()


class _Options:
    """(what the native step job reads of its context: the options)"""

    def __init__(self, options: dict[str, str]) -> None:
        self.options = options


def _cast(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """``t``'s columns, by position, as ``schema``'s."""
    cols = [c if c.type == f.type else c.cast(f.type) for c, f in zip(t.columns, schema)]
    return pa.Table.from_arrays(cols, schema=schema)


class _Iteration:
    def __init__(self, job: SparkJob, spec: IterateSpec) -> None:
        self.job = job
        self.spec = spec
        self.parts: list[tuple[int, Any]] = []  # (size level, materialized rows)
        self.rows = 0  # (rows in parts)
        # UNION with rounds on the driver: the parts added since its last rounds (not by
        # them), which its dedup has not seen; None: none kept.
        self.unseen: list[Any] | None = None
        self.width = max(1, job.spark.sparkContext.defaultParallelism)

    def run(self, base: Any) -> Any:
        spec = self.spec
        fields = base.schema.fields

        def conformed(df: Any) -> Any:
            return _conformed(df, fields)

        working = conformed(base)
        working, n = _counted(working.distinct() if spec.distinct else working)
        if not n:
            return working
        self._add(working, n)
        if self._enough():
            return self._found()
        step = _Step(self.job, spec)
        local = _LocalRounds.of(self.job, spec, fields)
        rounds = 0
        try:
            while True:
                if local is not None and local.takes(n, self):
                    found, rounds, after = local.run(working, self, rounds)
                    if found is not None:
                        self._add(*found, seen=True)
                    if after is None or self._enough():  # (the fixpoint, on the driver)
                        break
                    working, n = after  # (more rows than the driver takes: Spark's rounds)
                    self._add(working, n, seen=True)
                    continue
                rounds += 1
                check_rounds(spec, rounds)
                out = conformed(step.round(working))
                if spec.distinct:  # (rows not found before, each once)
                    out = out.subtract(self._found())
                working, n = _counted(out)
                if not n:
                    break
                self._add(working, n)
                if self._enough():
                    break
        finally:
            step.close()
            if local is not None:
                local.close()
        self.job.result.metrics[f"Iterate({spec.name})"] = {
            "rounds": rounds, "local_rounds": local.rounds if local is not None else 0,
            "rows_found": self.rows}  # (Spark's rounds do not count the rows they feed)
        return self._found()

    def _enough(self) -> bool:
        """Whether the rows found are all a LIMIT above reads (IterateSpec.enough_rows)."""
        return self.spec.enough_rows is not None and self.rows >= self.spec.enough_rows

    def _found(self) -> Any:
        return reduce(lambda a, b: a.unionByName(b), [df for _, df in self.parts])

    def _add(self, df: Any, rows: int, seen: bool = False) -> None:
        """One more part (of ``rows`` rows; ``seen``: by the driver's rounds, which found
        them); FAN_IN parts of one level merged into one of the next."""
        self.rows += rows
        self.parts.append((0, df))
        if self.unseen is not None and not seen:
            self.unseen.append(df)
        while len(self.parts) >= FAN_IN and \
                len({level for level, _ in self.parts[-FAN_IN:]}) == 1:
            level = self.parts[-1][0]
            merged = reduce(lambda a, b: a.unionByName(b),
                            [d for _, d in self.parts[-FAN_IN:]])
            del self.parts[-FAN_IN:]
            self.parts.append((level + 1,
                               merged.coalesce(self.width).localCheckpoint(eager=True)))


# -- Structured Streaming -------------------------------------------------------------------
TAG = "$input"  # (which of the iteration's inputs a row of the tagged union comes from)
MERGE_PARTS = 16  # a step table's parts merged into one past this many


def streaming_iterate(job: Any, op: IterateSpec, inputs: list[Any]) -> Any:
    """The recursive query over streaming ``inputs`` (its base, then the step's tables as
    the IterationInputs 1.. read them): maintained per micro-batch (see the module's text);
    the rows found, as a file stream."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    from sqlengine.runtime.spark.expressions import ddl
    from sqlengine.runtime.spark.translate import WM, spark_failure

    _check_linear(op)
    inputs = [x.drop(WM) if WM in x.columns else x for x in inputs]
    if getattr(job, "explaining", False):
        notes = job.__dict__.setdefault("explain_notes", [])
        notes.append(f"Iterate({op.name}): maintained on the driver per micro-batch of its "
                     f"{len(inputs)} input(s) (foreachBatch: semi-naive rounds over the new "
                     "rows), its new rows read back as a file stream; below, its base")
        return _conformed(inputs[0], inputs[0].schema.fields)
    types = [StructType(x.schema.fields) for x in inputs]
    tagged = None
    for j, x in enumerate(inputs):
        cols = [F.lit(j).alias(TAG)] + [
            (F.struct(*[F.col(c) for c in x.columns]) if k == j else
             F.lit(None).cast(types[k])).alias(f"i{k}") for k in range(len(inputs))]
        part = x.select(*cols)
        tagged = part if tagged is None else tagged.unionByName(part)
    name = f"iteration-{op.name}-{id(op)}"
    folder = job.workdir / name
    folder.mkdir(parents=True, exist_ok=True)
    maintained = Maintained(job, op, inputs[0].schema.fields, types[1:])
    failed: list[BaseException] = []

    def each(b: Any, _: int) -> None:
        if failed:
            return
        try:
            parts = [b.where(F.col(TAG) == j).select(f"i{j}.*") for j in range(len(inputs))]
            new = maintained.add(parts[0], dict(enumerate(parts[1:], start=1)))
            if new:  # (one write per micro-batch, of every round's new rows)
                _union(new).write.mode("append").parquet(str(folder))
        except BaseException as e:  # (raised again on the driver once the query stopped)
            failed.append(e)

    try:
        query = (tagged.writeStream.trigger(availableNow=True)
                 .option("checkpointLocation", str(job.workdir / f"{name}-checkpoint"))
                 .foreachBatch(each).start())
        query.awaitTermination()
    except Exception as e:
        raise spark_failure(f"{op.label()} on Spark: ", e) from None
    finally:
        maintained.close()
    if failed:
        if isinstance(failed[0], SqlEngineError):
            raise failed[0]
        raise spark_failure(f"{op.label()} on Spark: ", failed[0])
    job.result.metrics[f"Iterate({op.name})"] = maintained.metrics()
    return job.spark.readStream.schema(ddl(op.schema.to_arrow())).parquet(str(folder))


def _check_linear(op: IterateSpec) -> None:
    """Each step table is read once (the new rows of a table read twice would also have to
    meet each other: refused)."""
    from sqlengine.plan.iteration import StepInput

    seen: dict[int, int] = {}
    stack = [op.step]
    while stack:
        node = stack.pop()
        if isinstance(node, StepInput):
            seen[node.index] = seen.get(node.index, 0) + 1
            if seen[node.index] > 1:
                msg = (f"the step of the recursive query {op.name!r} reads table "
                       f"{node.table!r} twice, which its Spark Structured Streaming "
                       "maintenance (one term per step table's new rows) does not cover; "
                       "run it in batch mode or on the native runtime")
                raise NotSupportedError(msg)
        stack.extend(node.children())


class Maintained:
    """A recursive query kept up to date on the driver as its inputs' rows arrive (static
    DataFrames of each micro-batch's new rows): ``add`` returns the new rows found."""

    def __init__(self, job: Any, spec: IterateSpec, fields: list[Any],
                 table_types: list[Any]) -> None:
        self.job = job
        self.spec = spec
        self.fields = fields
        self.found = _Iteration(job, spec)  # (its parts: every row found so far)
        self.step = _Step(job, spec)
        spark = job.spark
        # Every row of each step table so far (materialized parts), by input index.
        self.tables: dict[int, list[Any]] = {
            j: [spark.createDataFrame([], t)] for j, t in enumerate(table_types, start=1)}
        self.rounds = 0
        self.rows_fed = 0
        self.rows_found = 0
        self.local = _LocalRounds.of(job, spec, fields)

    def _table(self, j: int) -> Any:
        return reduce(lambda a, b: a.unionByName(b), self.tables[j])

    def add(self, base: Any, deltas: dict[int, Any]) -> list[Any]:
        spec = self.spec

        def conformed(df: Any) -> Any:
            return _conformed(df, self.fields)

        had = bool(self.found.parts)
        terms = [conformed(base)]
        old = dict(self.tables)
        for j in sorted(deltas):
            delta, n = _counted(deltas[j])
            if not n:
                continue
            self.rows_fed += n
            self.tables[j] = [*self.tables[j], delta]
            if had:  # (the rows found before meet this table's new rows)
                tables = {k: self._table(k) if k < j else _union(old[k])
                          for k in self.tables}
                tables[j] = delta
                terms.append(conformed(self.step.round(self.found._found(), tables)))
            if len(self.tables[j]) > MERGE_PARTS:
                self.tables[j] = [self._table(j).localCheckpoint(eager=True)]
        working = reduce(lambda a, b: a.unionByName(b), terms)
        if spec.distinct:
            working = working.distinct()
            if had:
                working = working.subtract(self.found._found())
        working, n = _counted(working)
        out: list[Any] = []
        tables = {k: self._table(k) for k in self.tables}
        rounds = 0
        while n:
            self.found._add(working, n)
            self.rows_found += n
            out.append(working)
            if self.local is not None and self.local.takes(n, self.found):
                before = rounds
                found, rounds, after = self.local.run(working, self.found, rounds)
                self.rounds += rounds - before
                if found is not None:
                    self.found._add(*found, seen=True)
                    self.rows_found += found[1]
                    out.append(found[0])
                if after is None:  # (the fixpoint, reached on the driver)
                    break
                working, n = after  # (more rows than the driver takes: Spark's rounds)
                continue
            rounds += 1
            self.rounds += 1
            check_rounds(spec, rounds)
            self.rows_fed += n
            derived = conformed(self.step.round(working, tables))
            if spec.distinct:
                derived = derived.subtract(self.found._found())
            working, n = _counted(derived)
        return out

    def metrics(self) -> dict[str, int]:
        local = self.local
        return {"rounds": self.rounds, "local_rounds": local.rounds if local else 0,
                "rows_fed": self.rows_fed + (local.fed if local else 0),
                "rows_found": self.rows_found}

    def close(self) -> None:
        self.step.close()
        if self.local is not None:
            self.local.close()


def _union(parts: list[Any]) -> Any:
    return reduce(lambda a, b: a.unionByName(b), parts)


def _counted(df: Any) -> tuple[Any, int]:
    """``df`` computed once (a local checkpoint) and its number of rows."""
    checkpointed = df.localCheckpoint(eager=True)
    return checkpointed, checkpointed.count()
