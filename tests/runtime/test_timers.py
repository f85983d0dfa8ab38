"""TimerService: event-time timers fire in registration order once the watermark passes."""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from sqlengine.runtime.elements import MIN_WATERMARK
from sqlengine.runtime.timers import RowTimers, TimerService


def _rows(*values: int) -> pa.RecordBatch:
    return pa.record_batch([pa.array(values, pa.int64())], names=["v"])


def test_advance_watermark_fires_due_rows_in_order() -> None:
    timers = TimerService()
    timers.register_event_time(_rows(1, 2, 3), np.array([30, 10, 20]))
    timers.register_event_time(_rows(4), np.array([5]))
    before, due = timers.advance_watermark(15)
    assert before == MIN_WATERMARK
    assert due is not None and due["v"].to_pylist() == [2, 4]
    before, due = timers.advance_watermark(15)
    assert before == 15 and due is None
    before, due = timers.advance_watermark(100)
    assert before == 15
    assert due is not None and due["v"].to_pylist() == [1, 3]
    assert not timers.event_time[0]


def test_is_late_against_watermark_or_row_watermarks() -> None:
    timers = TimerService()
    timers.move_watermark(10)
    assert timers.is_late(np.array([5, 10, 11])).tolist() == [True, True, False]
    assert timers.is_late(np.array([5, 10]), np.array([4, 10])).tolist() == [False, True]


def test_sides_fire_separately() -> None:
    timers = TimerService(sides=2)
    timers.register_event_time(_rows(1), np.array([1]), side=0)
    timers.register_event_time(_rows(2, 3), np.array([1, 9]), side=1)
    assert timers.move_watermark(5) == MIN_WATERMARK
    left, right = timers.due(0), timers.due(1)
    assert left is not None and left["v"].to_pylist() == [1]
    assert right is not None and right["v"].to_pylist() == [2]
    assert timers.event_time[1].num_rows == 1


def test_processing_time_timers_fire_by_the_clock() -> None:
    timers = TimerService()
    timers.register_processing_time(_rows(7, 8), np.array([1000, 2000]))
    assert timers.advance_processing_time(999) is None
    due = timers.advance_processing_time(1500)
    assert due is not None and due["v"].to_pylist() == [7]
    assert timers.watermark == MIN_WATERMARK  # the clock does not move the watermark


def test_row_timers_with_schema_and_empty_batches() -> None:
    schema = pa.schema([("v", pa.int64())])
    timers = RowTimers(schema)
    timers.register(_rows(), np.array([], dtype=np.int64))
    assert not timers and timers.advance(0) is None
    timers.register(_rows(1), np.array([0]))
    assert timers.batches[0].num_rows == 1
    due = timers.advance(0)
    assert due is not None and due.schema == schema
