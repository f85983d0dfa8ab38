"""SourceOperator: reads a connector's batches, applies pushed-down filters and projection."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import connectors
from sqlengine.connectors import ReadStats, SourceCursor, SourceRead
from sqlengine.errors import ConnectorError, ExecutionError
from sqlengine.plan.expressions import Expr, remap_columns
from sqlengine.plan.nodes import SourceSpec
from sqlengine.runtime.elements import MIN_WATERMARK, Watermark, WatermarkStatus, with_meta
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator
from sqlengine.runtime.operators.stateless import calls_in, carried_values
from sqlengine.runtime.watermark_emission import emitted_before


class SourceOperator(Operator):
    """The head of a source vertex; the executor polls ``batches()``."""

    name = "Source"

    def __init__(self, source: SourceSpec, table_schema: pa.Schema,
                 projection: tuple[int, ...] | None, filters: tuple[Expr, ...],
                 data: object | None = None, event_time: bool = True) -> None:
        self.source = source
        self.table_schema = table_schema
        self.projection = projection
        self.filters = filters
        self.data = data
        self.event_time = event_time and source.watermark is not None
        self.stats = ReadStats()
        self.watermark = MIN_WATERMARK  # the largest watermark this source has produced
        self.idle = False
        self.explicit = False
        # How far the watermark grows before it is emitted within a batch (ms; 0: on every
        # advance, Flink's on-event); see runtime/watermark_emission.py. The driver sets it.
        self.emit_interval = 0
        self.split = (0, 1)  # (subtask, parallelism): which share of the input this reads

    def state_bytes(self) -> int:
        return 0  # (it reads its input; registered data is not state)

    # -- checkpoints: the splits' positions (connectors/base.py's SourceCursor), the
    # watermark (so rows read after a restore are judged late exactly as before) and the
    # skipped-row counts.
    cursor: SourceCursor | None = None

    def _read(self) -> SourceRead:
        return SourceRead(self.source.table, dict(self.source.options), self.table_schema,
                          self.stats, self.split, self._needed_columns(), self.data,
                          self._row_filter if self.filters else None,
                          # (a changelog keeps its order: the updates of a key follow each
                          # other, so a file is not split between subtasks)
                          self.event_time or self.source.changelog, self.cursor,
                          self.filters)

    def enable_checkpoints(self) -> str | None:
        """Keep split positions from now on; returns why this source cannot (None: it
        can)."""
        found = connectors.find(self.source.connector)
        if found is None:
            return f"connector {self.source.connector!r} cannot be read"
        why = found.checkpoint_refusal(self._read())
        if why is None and self.cursor is None:
            self.cursor = SourceCursor()
        return why

    def snapshot_state(self) -> dict[str, object]:
        position = dict(self.cursor.position) if self.cursor is not None else {}
        return {"position": position, "watermark": self.watermark, "idle": self.idle,
                "stats": self.stats}

    def prepare_snapshot(self, checkpoint: int) -> None:
        if self.cursor is not None:
            self.cursor.barrier(checkpoint)

    def notify_checkpoint_complete(self, checkpoint: int) -> None:
        if self.cursor is not None:  # (a broker's reader acknowledges what it covers)
            self.cursor.completed(checkpoint)

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        """Each split resumes where the old subtasks left it, whichever subtask reads it
        now; the watermark is the old subtask's own (after a rescale the lowest of theirs,
        so that no row becomes late that was not)."""
        merged: dict[str, object] = {}
        for s in states:
            merged.update(s["position"])  # type: ignore[arg-type]
        self.cursor = SourceCursor(merged)
        if len(states) == parallelism:
            own = states[subtask]
            self.watermark = int(own["watermark"])  # type: ignore[call-overload]
            self.idle = bool(own["idle"])
            self.stats = own["stats"]  # type: ignore[assignment]
        else:
            self.watermark = min(int(s["watermark"]) for s in states)  # type: ignore[call-overload]
            if subtask == 0:  # (the counts of skipped rows are reported once)
                for s in states:
                    old: ReadStats = s["stats"]  # type: ignore[assignment]
                    self.stats.skipped += old.skipped
                    self.stats.skipped_at.extend(old.skipped_at)

    def _needed_columns(self) -> list[int] | None:
        """The table columns to read: the projection's, the pushed filters' and, with event
        time, the rowtime column and the columns its WATERMARK expression reads (needed for
        the watermark even when the query selects none of them)."""
        if self.projection is None:
            return None
        cols = set(self.projection)
        for f in self.filters:
            cols |= f.columns()
        if self.event_time and self.source.watermark is not None:
            col, expr = self.source.watermark
            cols |= expr.columns() | ({col} if col >= 0 else set())
            if self.source.rowtime_expr is not None:
                cols |= self.source.rowtime_expr.columns()
        return sorted(cols)

    def _raw(self) -> Iterator[object]:
        """This subtask's share of the input, through the connector's source API."""
        read = self._read()
        found = connectors.find(self.source.connector)
        if found is None:
            msg = f"table {self.source.table!r}: connector {self.source.connector!r} cannot be read"
            raise ConnectorError(msg)
        return found.open_source(read)

    def _row_filter(self, batch: pa.RecordBatch, columns: frozenset[int]) -> np.ndarray:
        """Which rows of ``batch`` (the table's columns) the pushed filters that read only
        ``columns`` keep: a connector prunes partitions with it."""
        keep = np.ones(batch.num_rows, dtype=bool)
        for f in self.filters:
            if f.columns() <= columns:
                mask = pc.fill_null(evaluate(f, batch, rows=keep), False)
                keep &= mask.to_numpy(zero_copy_only=False)
        return keep

    def batches(self) -> Iterator[pa.RecordBatch | None]:
        """Batches as read; None when only the source's watermark or idleness changed."""
        explicit = bool(getattr(self.data, "explicit_watermarks", False))
        self.explicit = explicit
        self._reader = reader = self._raw()
        for item in reader:
            if isinstance(item, Watermark):
                self.watermark = max(self.watermark, item.timestamp)
                yield None
            elif isinstance(item, WatermarkStatus):
                self.idle = item.idle
                yield None
            elif item is None:
                yield None
            elif isinstance(item, pa.RecordBatch):
                if self.idle:
                    self.idle = False
                yield from self.process_batch(item)

    def _row_watermarks(self, batch: pa.RecordBatch) -> np.ndarray:
        """The watermark emitted before each row (see runtime/watermark_emission.py): with an
        emit interval of 0 the running maximum of the WATERMARK expression over the rows before
        it, so lateness never depends on batching; otherwise Flink's eager rule within the
        batch. The batch's last watermark is emitted after it."""
        if self.source.watermark is None:  # (event time is off without a WATERMARK)
            return np.full(batch.num_rows, self.watermark, dtype=np.int64)
        col, expr = self.source.watermark
        rowtime = self.source.rowtime_expr  # (a computed rowtime column)
        times = batch.column(col) if rowtime is None else evaluate(rowtime, batch)
        if getattr(self, "explicit", False):
            # Watermarks come as elements between batches (a TestStream): every row of a
            # batch sees the watermark in effect when the batch arrived.
            return np.full(batch.num_rows, self.watermark, dtype=np.int64)
        if times.null_count:
            name = batch.schema.names[col] if rowtime is None else rowtime.sql()
            msg = (f"table {self.source.table!r}: the rowtime column "
                   f"{name!r} is NULL in {times.null_count} row(s)")
            raise ExecutionError(msg)
        marks = evaluate(expr, batch).cast(pa.timestamp("ms")).cast(pa.int64())
        # (a NULL watermark advances nothing: Flink emits no watermark for it)
        values = np.asarray(marks.fill_null(np.iinfo(np.int64).min)
                            .to_numpy(zero_copy_only=False), dtype=np.int64)
        before = emitted_before(values, self.watermark, self.emit_interval)
        if len(values):
            self.watermark = max(self.watermark, int(values.max()))
        return before

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        if batch.num_rows == 0:
            return ()
        kinds = None
        if self.source.changelog:  # (the row kinds travel beside the data, see with_meta)
            kinds = batch.column(batch.num_columns - 1)
            batch = pa.RecordBatch.from_arrays(batch.columns[:-1],
                                               names=batch.schema.names[:-1])
        wm = self._row_watermarks(batch) if self.event_time else None
        keep = None
        memo: dict[Expr, pa.Array] | None = {} if self.carry else None
        rows = batch.num_rows
        failed: list[Expr] = []
        for f in self.filters:
            # (a conjunct is only needed on the rows those before it keep; one that fails on
            # every row is tried again after the others, on the rows they keep)
            try:
                mask = pc.fill_null(evaluate(f, batch, memo, keep), False)
            except ExecutionError:
                if keep is not None or len(self.filters) == 1:
                    raise
                failed.append(f)
                continue
            keep = mask if keep is None else pc.and_(keep, mask)
        for f in failed:  # (fails again if no other conjunct kept any row)
            mask = pc.fill_null(evaluate(f, batch, memo, keep), False)
            keep = mask if keep is None else pc.and_(keep, mask)
        if self.projection is not None:  # (before filtering: only the columns read are taken)
            batch = batch.select(list(self.projection))
        if keep is not None:
            batch = batch.filter(keep)
            if wm is not None:
                wm = wm[keep.to_numpy(zero_copy_only=False)]
            if kinds is not None:
                kinds = kinds.filter(keep)
        if batch.num_rows == 0:
            return ()
        out = with_meta(batch, wm, kinds) if wm is not None or kinds is not None else batch
        if memo and keep is not None:
            self.carried = (out, carried_values(self.carry, memo, keep, rows))
        return (out,)

    _reader: Iterator[object] | None = None

    def close(self) -> None:
        """The connector's reader is closed when the task ends, however it ends (a broker's
        connection, files, a read-ahead thread), not when it is garbage collected."""
        reader, self._reader = self._reader, None
        close = getattr(reader, "close", None)
        if close is not None:
            close()

    # The calls of pushed filters that the Project chained after it computes too (see
    # runtime/operators/stateless.py: carry_into), and their values for the last batch.
    carry: dict[Expr, Expr] = {}  # (replaced, never changed in place)
    carried: tuple[pa.RecordBatch, dict[Expr, pa.Array]] | None = None

    def offered_calls(self) -> dict[Expr, Expr]:
        """The pushed filters' calls over the columns it outputs, as the next operator
        writes them (by output position)."""
        position = {c: i for i, c in enumerate(self.projection)} \
            if self.projection is not None else None
        offered: dict[Expr, Expr] = {}
        for f in self.filters:
            for x in calls_in(f):
                if position is None:
                    offered[x] = x
                elif x.columns() <= position.keys():
                    offered[x] = remap_columns(x, position)
        return offered
