"""StreamInputProcessor: elements from the input channels, through the valve, into the chain."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from sqlengine.runtime.elements import MAX_WATERMARK, Watermark
from sqlengine.runtime.native.chain import ChainedTask, OperatorChain
from sqlengine.runtime.native.input_processor import StreamInputProcessor
from sqlengine.runtime.native.network import Kind
from sqlengine.runtime.operators.base import Operator


class _Recorder(Operator):
    def __init__(self) -> None:
        self.seen: list[tuple[str, object]] = []

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.seen.append(("batch", (input_index, batch.num_rows)))
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        self.seen.append(("watermark", wm.timestamp))
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.seen.append(("end", input_index))
        return ()


def _processor(channels: list[int]) -> tuple[StreamInputProcessor, _Recorder, list[object]]:
    op = _Recorder()
    chain = ChainedTask("v", [op], ["Recorder"], max(channels) + 1, {}, channels)
    out: list[object] = []
    chain.output_watermark = lambda wm: out.append(wm.timestamp)
    chain.output_status = lambda idle: out.append(idle)
    return StreamInputProcessor(chain), op, out


def test_elements_reach_the_head_through_the_valve() -> None:
    processor, op, out = _processor([0, 0, 1])  # two channels on input 0, one on input 1
    batch = pa.record_batch([pa.array([1, 2])], names=["a"])
    processor.process(2, Kind.BATCH, batch)
    processor.process(0, Kind.WATERMARK, 10)
    processor.process(1, Kind.WATERMARK, 20)
    assert op.seen == [("batch", (1, 2))]  # channel 2 still holds the watermark back
    processor.process(2, Kind.IDLE, True)
    assert op.seen[-1] == ("watermark", 10) and out == [10]
    processor.process(0, Kind.IDLE, True)
    processor.process(1, Kind.IDLE, True)
    assert out[-1] is True  # all channels idle: the task says so downstream


def test_end_of_input_per_channel_and_task() -> None:
    processor, op, out = _processor([0, 1])
    processor.process(0, Kind.END, None)
    assert ("end", 0) in op.seen and not processor.finished
    latency: list[object] = []
    processor.on_latency = latency.append
    processor.process(1, Kind.LATENCY, ("src", 0.0))
    assert latency == [("src", 0.0)]
    processor.process(1, Kind.END, None)
    assert processor.finished
    assert out[-1] == MAX_WATERMARK.timestamp
    assert OperatorChain is ChainedTask
