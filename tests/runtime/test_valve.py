"""StatusWatermarkValve: the task's watermark and status from its input channels."""
from __future__ import annotations

import random

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


def _bound_by_scan(valve: StatusWatermarkValve, channel: int) -> int | None:
    """others_bound by its definition: every active channel outside ``channel``'s twins."""
    key = valve.twins[channel]
    others = [max(w, r) for c, (w, r) in enumerate(zip(valve.channel_wm, valve.row_wm))
              if valve.twins[c] != key and not valve.channel_idle[c]]
    return min(others) if others else None


def test_bounds_agree_with_a_scan_of_every_channel() -> None:
    """The valve keeps its minima in trees (a task with thousands of inputs asks per batch):
    over random watermarks, rows, idleness and twins, the output watermark and each
    channel's bound are those of a scan over all channels."""
    rng = random.Random(7)
    for n in (1, 2, 3, 5, 8, 13, 40):
        valve = StatusWatermarkValve(n)
        valve.twins = [rng.randrange(max(1, n // 2)) for _ in range(n)]
        out = MIN_WATERMARK
        for _ in range(400):
            channel, step = rng.randrange(n), rng.random()
            if step < 0.4:
                valve.input_watermark(channel, rng.randrange(1000))
            elif step < 0.7:
                valve.delivered_rows(channel, rng.randrange(1000))
            else:
                valve.input_status(channel, rng.random() < 0.5)
            active = [w for w, idle in zip(valve.channel_wm, valve.channel_idle) if not idle]
            out = max(out, min(active)) if active else out
            assert valve.watermark == out
            assert valve.all_idle == all(valve.channel_idle)
            for c in range(n):
                assert valve.others_bound(c) == _bound_by_scan(valve, c)
        valve.restore([5] * n, [c % 2 == 1 for c in range(n)], 5)
        assert valve.watermark == 5 and not valve.all_idle
        for c in range(n):
            assert valve.others_bound(c) == _bound_by_scan(valve, c)
