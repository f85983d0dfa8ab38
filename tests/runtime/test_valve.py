"""StatusWatermarkValve: the task's watermark and status from its input channels."""
from __future__ import annotations

from sqlengine.runtime.elements import MIN_WATERMARK
from sqlengine.runtime.native.valve import StatusWatermarkValve


def test_min_over_active_channels() -> None:
    valve = StatusWatermarkValve(2)
    assert valve.input_watermark(0, 10) is None  # channel 1 still at the minimum
    assert valve.watermark == MIN_WATERMARK
    assert valve.input_watermark(1, 5) == 5
    assert valve.input_watermark(1, 20) == 10
    assert valve.watermark == 10


def test_never_backwards() -> None:
    valve = StatusWatermarkValve(1)
    assert valve.input_watermark(0, 10) == 10
    assert valve.input_watermark(0, 7) is None
    assert valve.watermark == 10
    assert valve.channel_wm == [10]
    assert not valve.advance_output(9)
    assert valve.advance_output(12)
    assert valve.input_watermark(0, 11) is None
    assert valve.watermark == 12


def test_idle_channels_skipped() -> None:
    valve = StatusWatermarkValve(3)
    valve.input_watermark(0, 30)
    valve.input_watermark(1, 20)
    assert valve.watermark == MIN_WATERMARK
    assert valve.input_status(2, True) == 20
    assert valve.others_bound(0) == 20
    assert valve.input_status(1, True) == 30
    assert valve.others_bound(0) is None
    assert not valve.all_idle


def test_all_idle_is_idle() -> None:
    valve = StatusWatermarkValve(2)
    valve.input_status(0, True)
    assert not valve.all_idle
    assert valve.input_status(1, True) is None  # no active channel: the watermark stays
    assert valve.all_idle
    assert valve.watermark == MIN_WATERMARK


def test_channel_active_again() -> None:
    valve = StatusWatermarkValve(2)
    valve.input_watermark(0, 50)
    valve.input_status(1, True)
    assert valve.watermark == 50
    # The channel comes back behind the output: it holds the output, never moves it back.
    assert valve.input_watermark(1, 40) is None
    assert not valve.all_idle
    assert valve.watermark == 50
    assert valve.input_watermark(0, 70) is None
    assert valve.input_watermark(1, 60) == 60
    assert valve.input_status(1, False) is None
