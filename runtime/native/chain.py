"""ChainedTask: runs one JobVertex's operator chain by direct calls.

In Flink's words it is the OperatorChain together with the StreamTask's processing part: the
StatusWatermarkValve (``valve``) combines its input channels' watermarks, the
StreamInputProcessor (input_processor.py) feeds it, and a Task (task.py) runs it in a thread.
``OperatorChain`` names the same class."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from sqlengine.errors import (
    ConnectorError,
    DataValueError,
    ExecutionError,
    OperatorDataError,
    OperatorError,
    SqlEngineError,
)
from sqlengine.runtime.elements import (
    MAX_WATERMARK,
    MIN_WATERMARK,
    ROWKIND,
    Watermark,
    data_part,
    has_rowkind,
    row_watermarks,
    with_meta,
)
from sqlengine.runtime.memory import MemoryAccount, account_for, mib
from sqlengine.runtime.native.valve import StatusWatermarkValve
from sqlengine.runtime.operators.base import Operator, OperatorContext, OperatorMetrics

Output = Callable[[pa.RecordBatch], None]


class ChainedTask:
    """A vertex's chain: a batch entering operator *i* flows on to *i + 1*; the tail's output
    goes to ``output`` (the partitioners of the vertex's outgoing edges)."""

    def __init__(self, vertex_id: str, operators: list[Operator], names: list[str],
                 n_inputs: int, options: dict[str, str],
                 channels: list[int] | None = None,
                 memory: MemoryAccount | None = None,
                 subtask: tuple[int, int] = (0, 1)) -> None:
        self.vertex_id = vertex_id
        # The operators' StreamGraph node ids (what checkpointed state is matched by).
        self.nodes: tuple[int, ...] = tuple(-(i + 1) for i in range(len(operators)))
        # The slot's memory budget, shared with the other chains of the process.
        self.memory = memory if memory is not None else account_for(options)
        self.operators = operators
        self.names = names
        self.metrics = [OperatorMetrics() for _ in operators]
        self.n_inputs = n_inputs
        # Input channels (one per upstream subtask of each input) -> the head's input index.
        self.channels = channels if channels is not None else list(range(n_inputs))
        n_channels = len(self.channels)
        self.ended: set[int] = set()  # ended channels
        # Per input index of the head, its channels not ended yet.
        self._open_channels = Counter(self.channels)
        self.finished = False
        # The last operator found done (-1: none) and the operators ended after it.
        self._cut = -1
        self._ops_ended: set[int] = set()
        # Per operator that holds its rows until its input ends (Operator.holds_until_end):
        # the last watermark that reached it, let go after its rows (see _end_operator).
        self._held: dict[int, Watermark] = {}
        self.output: Output = lambda b: None
        self.output_watermark: Callable[[Watermark], None] = lambda wm: None
        self.output_status: Callable[[bool], None] = lambda idle: None
        self.idle = False
        # The task's watermark: the minimum over its active input channels, never backwards.
        self.valve = StatusWatermarkValve(n_channels)
        for i, op in enumerate(operators):
            op.open(OperatorContext(vertex_id, f"{i + 1}:{names[i]}", options, self.memory,
                                    *subtask))

    def _fail(self, i: int, e: Exception) -> OperatorError:
        step = f"{self.names[i]}"
        if isinstance(e, SqlEngineError):
            message = e.message
        elif isinstance(e, pa.ArrowCapacityError):  # (Arrow's words: "Result might not fit")
            message = ("a result holds more than 2 GiB of text or bytes in one batch of "
                       "rows, beyond what a column holds (Arrow's limit); make the values "
                       "smaller (REPEAT, LPAD, LISTAGG ...)")
        elif isinstance(e, pa.ArrowException):
            message = f"{type(e).__name__}: {e}"
        else:
            message = f"{type(e).__name__}: {e}"
        cls = OperatorDataError if isinstance(e, DataValueError) else OperatorError
        return cls(self.vertex_id, step, message)

    def _outputs(self, i: int, fn: Callable[[], Iterable[pa.RecordBatch]]
                 ) -> Iterator[pa.RecordBatch]:
        """Operator ``i``'s outputs of one call, as it produces them (a spilled operator's
        end of input yields one partition's rows at a time), with its failures named."""
        try:
            yield from fn()
        except (OperatorError, ConnectorError):
            raise  # already names its place (operator, or file:line)
        except (SqlEngineError, pa.ArrowException, ArithmeticError, ValueError, TypeError,
                OSError) as e:
            raise self._fail(i, e) from e
        except MemoryError:
            raise self._out_of_memory(i) from None

    def _run(self, i: int, fn: Callable[[], Iterable[pa.RecordBatch]]) -> None:
        """Call operator ``i`` and push each output on down the chain as it comes; then
        account its state against the slot's memory budget."""
        m = self.metrics[i]
        for out in self._outputs(i, fn):
            m.records_out += out.num_rows
            self._push_from(i + 1, [out])
            if self.finished or i + 1 <= self._cut:
                break
        self._account(i)

    def _account(self, i: int) -> None:
        """Operator ``i``'s state against the budget: past it, the operator spills (batch
        mode) or the job fails naming it."""
        memory = self.memory
        if not memory.limit:
            return
        op = self.operators[i]
        key = (id(self), i)
        try:
            size = op.state_bytes()
        except MemoryError:
            raise self._out_of_memory(i) from None
        before = memory.held.get(key, 0)
        if memory.set(key, size) or size <= before or size < memory.limit // 16:
            return  # (within the budget, or this operator neither grew nor holds much)
        try:
            spilled = op.spill(memory.spill_dir)
        except OSError as e:
            raise self._fail(i, e) from e
        except MemoryError:
            raise self._out_of_memory(i) from None
        if spilled:
            memory.set(key, op.state_bytes())
            return
        others = memory.total - size
        shared = f", with {mib(others)} held by other operators of the slot" \
            if others >= 1 << 20 else ""
        raise OperatorError(self.vertex_id, self.names[i], (
            f"its state ({mib(size)}) is beyond the memory budget of {mib(memory.limit)} per "
            f"task slot{shared} ('taskmanager.memory.managed.size'; by default "
            f"'taskmanager.memory.managed.fraction' of the memory the slot may use), and it "
            f"cannot spill to disk{op.spill_refusal()}: raise the budget or bound the state "
            f"(fewer keys, a window, or 'table.exec.state.ttl')"))

    def _out_of_memory(self, i: int) -> OperatorError:
        """Memory ran out in operator ``i``: the error names it and how much state it holds."""
        import resource

        try:
            held = self.operators[i].state_bytes()
        except Exception:  # (measuring may fail too, with memory this short)
            held = -1
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # (KiB on Linux)
        state = f" (process peak {peak:,.0f} MiB"
        state += f"; the operator's state counted {held / 2**20:,.0f} MiB)" if held >= 0 \
            else ")"
        return OperatorError(self.vertex_id, self.names[i], f"out of memory{state}: give the "
                             "process more memory or bound the state (fewer keys, a window, "
                             "or 'table.exec.state.ttl')")

    def _push_from(self, i: int, batches: list[pa.RecordBatch]) -> None:
        # Depth-first along the chain: each output of operator i is processed by i + 1 at once.
        for batch in batches:
            if i <= self._cut:
                return  # (an operator at or after ``i`` is done)
            if batch.num_rows == 0:
                continue
            if i >= len(self.operators):
                self.output(batch)
                continue
            m = self.metrics[i]
            m.records_in += batch.num_rows
            m.batches_in += 1
            op = self.operators[i]
            self._run(i, lambda op=op, b=batch: op.process_batch(b))
            if op.done:
                self._end_after(i)
                return

    def _end_after(self, i: int) -> None:
        """Operator ``i`` is done (it has emitted every row it will): the operators after it
        see the end of their input and the task has finished; what comes in later is
        dropped."""
        if self.finished or i <= self._cut:
            return
        self._cut = i  # (first: nothing the ends emit flows back into ``i``)
        for j in range(i + 1, len(self.operators)):
            if j <= self._cut or j in self._ops_ended:
                continue  # (a later operator got done while the ends flowed)
            self._ops_ended.add(j)
            self._end_operator(j)
        self.finished = True

    def finish_if_done(self) -> bool:
        """End the chain after its first operator that is done (one can be from the start, as
        LIMIT 0). Returns whether the task has finished."""
        if not self.finished:
            for i, op in enumerate(self.operators):
                if op.done:
                    self._end_after(i)
                    break
        return self.finished

    def process(self, batch: pa.RecordBatch, channel: int = 0) -> None:
        """A batch arriving on input channel ``channel``."""
        if self.finished:
            return
        if len(self.channels) > 1:
            batch = self._merge_row_watermarks(batch, channel)
        head = self.operators[0]
        m = self.metrics[0]
        m.records_in += batch.num_rows
        m.batches_in += 1
        index = self.channels[channel]
        self._run(0, lambda: head.process_batch(batch, index))
        if head.done:
            self._end_after(0)

    def set_producers(self, producers: list[object]) -> None:
        """The upstream subtask feeding each input channel (any hashable name)."""
        ids: dict[object, int] = {}
        self.valve.twins = [ids.setdefault(p, len(ids)) for p in producers]

    def _merge_row_watermarks(self, batch: pa.RecordBatch, channel: int) -> pa.RecordBatch:
        # With several inputs, the watermark before a row is also bounded by the other
        # channels' current watermarks (and so depends on how channels interleave, as in Flink).
        wm = row_watermarks(batch)
        if wm is None:
            return batch
        if len(wm):
            self.valve.delivered_rows(channel, int(wm[-1]))
        # (a twin channel is as far as this one: the same rows and watermarks in the same
        # order, as Flink sends a shared source's records to both inputs of a self-join)
        bound = self.valve.others_bound(channel)
        if bound is None:
            return batch
        merged = np.minimum(wm, bound)
        return with_meta(data_part(batch), merged, _rowkind_of(batch))

    def process_watermark(self, wm: Watermark, channel: int = 0) -> None:
        """A watermark arriving on one input channel."""
        if self.finished:
            return
        advanced = self.valve.input_watermark(channel, wm.timestamp)
        if advanced is not None:
            self._emit_watermark(Watermark(advanced))

    def set_idle(self, idle: bool, channel: int = 0) -> None:
        """A channel turned idle (excluded from the minimum) or active again; the task is
        idle, and says so downstream, when all its channels are."""
        advanced = self.valve.input_status(channel, idle)
        if advanced is not None:
            self._emit_watermark(Watermark(advanced))
        self.set_task_idle(self.valve.all_idle)

    def set_task_idle(self, idle: bool) -> None:
        if idle != self.idle:
            self.idle = idle
            self.output_status(idle)

    @property
    def watermark(self) -> int:
        """The task's current watermark (the valve's output)."""
        return self.valve.watermark

    def fire_watermark(self, wm: Watermark, start: int = 0) -> None:
        """Each operator from ``start`` on processes ``wm`` (its output flowing on down the
        chain first), then the watermark leaves the vertex."""
        if self.finished or (not self.valve.advance_output(wm.timestamp) and start == 0):
            return
        self._emit_watermark(wm, start)

    def _emit_watermark(self, wm: Watermark, start: int = 0) -> None:
        for i in range(start, len(self.operators)):
            if self.finished:
                return
            op = self.operators[i]
            self._run(i, lambda op=op, wm=wm: op.process_watermark(wm))
            if op.holds_until_end:  # (its rows come at its end: the watermark after them)
                self._held[i] = wm
                return
            if op.output_delay and wm.timestamp != MAX_WATERMARK.timestamp:
                wm = Watermark(max(MIN_WATERMARK, wm.timestamp - op.output_delay))
        self.output_watermark(wm)

    def _end_operator(self, i: int, input_index: int = 0) -> None:
        """Operator ``i``'s input ``input_index`` ended: its rows flow on, then the watermark
        it held (if its whole input has ended: it may still hold rows of another)."""
        op = self.operators[i]
        self._run(i, lambda: op.end_input(input_index))
        held = self._held.get(i)
        if held is not None and not self.finished and (
                i > 0 or not any(self._open_channels.values())):
            del self._held[i]
            self._emit_watermark(held, i + 1)

    @property
    def has_timers(self) -> bool:
        return any(op.uses_processing_time for op in self.operators)

    def fire_processing_time(self, now_ms: int) -> None:
        """Processing-time timers: each operator that keeps them fires those due."""
        for i, op in enumerate(self.operators):
            if op.uses_processing_time and not self.finished:
                self._run(i, lambda op=op: op.on_processing_time(now_ms))

    def emit_from_head(self, batches: list[pa.RecordBatch]) -> None:
        """Batches a source head produced itself (counted as its output)."""
        if self.finished:
            return
        self.metrics[0].records_out += sum(b.num_rows for b in batches)
        self._push_from(1, batches)

    def end_input(self, channel: int = 0) -> bool:
        """Input channel ``channel`` ended; the head's input ends with its last channel.
        Returns True when the whole task has finished."""
        if channel in self.ended or self.finished:
            return self.finished
        self.ended.add(channel)
        index = self.channels[channel]
        self._open_channels[index] -= 1
        if not self._open_channels[index]:
            self._end_operator(0, index)
        if self.finished or len(self.ended) < len(self.channels):
            return self.finished  # (finished: an operator got done on what the end flushed)
        for i in range(1, len(self.operators)):
            if self.finished:
                return True
            self._end_operator(i)
        self.finished = True
        return True

    def operator_counters(self, vertex: str) -> list[tuple[str, dict[str, int], tuple | None]]:
        """Per operator of the chain: its metrics key (``vertex.Name``, primed when a name
        repeats in the chain), its counters (records in/out, state bytes, late drops where
        it drops late rows), and (table, rows) for a sink."""
        out: list[tuple[str, dict[str, int], tuple | None]] = []
        used: set[str] = set()
        for name, m, op in zip(self.names, self.metrics, self.operators):
            key = f"{vertex}.{name}"
            while key in used:
                key += "'"
            used.add(key)
            counters = {"records_in": m.records_in, "records_out": m.records_out,
                        "state_bytes": op.state_bytes()}
            if op.spilled_bytes:
                counters["spilled_bytes"] = op.spilled_bytes
            late = getattr(op, "late_dropped", None)
            if late is not None:
                counters["late_records_dropped"] = late
            counters.update(op.extra_metrics())
            rows = getattr(op, "rows", None)
            table = getattr(op, "table_name", None)
            out.append((key, counters, (table, rows) if rows is not None and table else None))
        return out

    def close(self) -> None:
        for i in range(len(self.operators)):
            self.memory.release((id(self), i))
        for op in self.operators:
            try:
                op.close()
            except Exception as e:
                raise ExecutionError(f"closing {type(op).__name__} failed: {e}") from e


OperatorChain = ChainedTask  # Flink's name for the chain of operators a task runs


def _rowkind_of(batch: pa.RecordBatch) -> pa.Array | None:
    return batch.column(ROWKIND) if has_rowkind(batch) else None
