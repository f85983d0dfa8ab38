"""StreamInputProcessor: stream elements from a task's input channels into its chain."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa

from sqlengine.runtime.elements import MAX_WATERMARK, Watermark
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.native.network import InputGate, Kind, read_spilled


class StreamInputProcessor:
    """Flink's StreamOneInputProcessor / StreamMultipleInputProcessor: takes the elements of
    the input channels (batches, watermarks, idleness, end of input; later checkpoint
    barriers), lets the task's StatusWatermarkValve combine the channels' watermarks and
    status, and hands rows and watermarks to the chain's head operator. The single-threaded
    executor pushes elements in by direct calls; a task thread pulls them from its InputGate
    (``process_input``)."""

    def __init__(self, chain: ChainedTask,
                 on_latency: Callable[[Any], None] | None = None,
                 after_spilled_batch: Callable[[], None] | None = None) -> None:
        self.chain = chain
        self.on_latency = on_latency  # a latency marker passed on (task threads only)
        self.after_spilled_batch = after_spilled_batch

    @property
    def finished(self) -> bool:
        return self.chain.finished

    def process_batch(self, batch: pa.RecordBatch, channel: int = 0) -> None:
        self.chain.process(batch, channel)

    def process_watermark(self, wm: Watermark, channel: int = 0) -> None:
        self.chain.process_watermark(wm, channel)

    def process_status(self, idle: bool, channel: int = 0) -> None:
        self.chain.set_idle(idle, channel)

    def end_input(self, channel: int = 0) -> bool:
        """``channel`` ended; True when the whole task has finished."""
        return self.chain.end_input(channel)

    def process(self, channel: int, kind: Kind, payload: Any) -> None:
        """One element that arrived on ``channel``."""
        if kind is Kind.BATCH:
            self.process_batch(payload, channel)
        elif kind is Kind.WATERMARK:
            self.process_watermark(Watermark(payload), channel)
        elif kind is Kind.IDLE:
            self.process_status(payload, channel)
        elif kind is Kind.SPILLED:
            for batch in read_spilled(payload):
                self.process_batch(batch, channel)
                if self.after_spilled_batch is not None:
                    self.after_spilled_batch()
        elif kind is Kind.LATENCY:
            if self.on_latency is not None:
                self.on_latency(payload)
        else:  # END: an ended channel no longer holds the watermark back
            self.process_watermark(MAX_WATERMARK, channel)
            self.end_input(channel)

    def process_input(self, gate: InputGate, on_wait: Callable[[], None] | None = None
                      ) -> None:
        """Take the next element from ``gate`` (running ``on_wait`` while none arrives) and
        process it."""
        channel, kind, payload = gate.get(on_wait)
        self.process(channel, kind, payload)
