"""StatusWatermarkValve: a task's watermark and status from those of its input channels."""

from __future__ import annotations

from sqlengine.runtime.elements import MIN_WATERMARK


class StatusWatermarkValve:
    """Flink's StatusWatermarkValve. Each input channel has a watermark and a status (active
    or idle); the output watermark is the minimum over the active channels and never goes
    backwards; idle channels do not hold it back; the output is idle when all channels are."""

    __slots__ = ("channel_idle", "channel_wm", "row_wm", "twins", "watermark")

    def __init__(self, n_channels: int) -> None:
        self.channel_wm: list[int] = [MIN_WATERMARK] * n_channels
        # Per channel: the watermark before the last row it delivered (a batch carries the
        # watermarks its producer emitted between its rows as a column, not as elements).
        self.row_wm: list[int] = [MIN_WATERMARK] * n_channels
        self.channel_idle: list[bool] = [False] * n_channels
        self.watermark: int = MIN_WATERMARK  # the output watermark
        # Per channel, a number it shares with the channels fed by the same upstream subtask
        # (a self-join's two inputs from one source): they keep pace, row for row.
        self.twins: list[int] = list(range(n_channels))

    def input_watermark(self, channel: int, timestamp: int) -> int | None:
        """A watermark on ``channel`` (which makes it active). Returns the new output
        watermark when it advanced, else None."""
        if timestamp > self.channel_wm[channel]:
            self.channel_wm[channel] = timestamp
        self.channel_idle[channel] = False
        return self._advance()

    def input_status(self, channel: int, idle: bool) -> int | None:
        """``channel`` turned idle or active again. Returns the new output watermark when
        it advanced (an idle channel no longer holds it back), else None."""
        self.channel_idle[channel] = idle
        return self._advance()

    @property
    def all_idle(self) -> bool:
        """The output status: idle when every input channel is."""
        return all(self.channel_idle)

    def advance_output(self, timestamp: int) -> bool:
        """Move the output watermark forward from outside the channels (a source task's
        own watermark); returns whether it moved."""
        if timestamp <= self.watermark:
            return False
        self.watermark = timestamp
        return True

    def delivered_rows(self, channel: int, last_row_watermark: int) -> None:
        """``channel`` delivered rows, the last of them after a watermark of its producer at
        ``last_row_watermark``: the channel has come that far, though the watermark element
        itself follows the batch."""
        if last_row_watermark > self.row_wm[channel]:
            self.row_wm[channel] = last_row_watermark

    def others_bound(self, channel: int) -> int | None:
        """The minimum watermark over the active channels other than ``channel`` (bounds the
        watermark before a row arriving on ``channel``), or None when there are none. A
        channel whose rows were delivered counts as far as the watermarks between them went
        (as in Flink, where those watermarks travel between the rows). ``channel``'s twins
        (``channel`` among them) keep pace with it and are left out."""
        key = self.twins[channel]
        others = [max(w, r) for w, r, idle, g in zip(self.channel_wm, self.row_wm,
                                                     self.channel_idle, self.twins)
                  if g != key and not idle]
        return min(others) if others else None

    def _advance(self) -> int | None:
        active = [w for w, idle in zip(self.channel_wm, self.channel_idle) if not idle]
        if not active:
            return None
        combined = min(active)
        if combined > self.watermark:
            self.watermark = combined
            return combined
        return None
