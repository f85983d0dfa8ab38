"""StatusWatermarkValve: a task's watermark and status from those of its input channels."""

from __future__ import annotations

from collections.abc import Sequence

from sqlengine.runtime.elements import MIN_WATERMARK

_NONE = 2**63  # (above every watermark: an idle channel, or no channel at all)


class _MinTree:
    """The minimum over n slots, kept as a binary tree of minima: a slot set in O(log n), the
    minimum over all slots but a few given ones in O(k log n) (a task with thousands of input
    channels asks for it per batch)."""

    __slots__ = ("size", "tree")

    def __init__(self, values: Sequence[int]) -> None:
        size = 1
        while size < len(values):
            size *= 2
        self.size = size
        tree = [_NONE] * (2 * size)
        tree[size:size + len(values)] = values
        for i in range(size - 1, 0, -1):
            tree[i] = min(tree[2 * i], tree[2 * i + 1])
        self.tree = tree

    def set(self, slot: int, value: int) -> None:
        tree = self.tree
        i = slot + self.size
        if tree[i] == value:
            return
        tree[i] = value
        i >>= 1
        while i:
            low = min(tree[2 * i], tree[2 * i + 1])
            if tree[i] == low:  # (the minima above are those of this one's)
                return
            tree[i] = low
            i >>= 1

    def min(self) -> int:
        return self.tree[1]

    def min_without(self, slots: Sequence[int]) -> int:
        """The minimum over every slot but ``slots`` (ascending)."""
        low, start = _NONE, 0
        for slot in slots:
            if slot > start:
                low = min(low, self._range_min(start, slot))
            start = slot + 1
        if start < self.size:
            low = min(low, self._range_min(start, self.size))
        return low

    def _range_min(self, lo: int, hi: int) -> int:
        tree, low = self.tree, _NONE
        lo += self.size
        hi += self.size
        while lo < hi:
            if lo & 1:
                low = min(low, tree[lo])
                lo += 1
            if hi & 1:
                hi -= 1
                low = min(low, tree[hi])
            lo >>= 1
            hi >>= 1
        return low


class StatusWatermarkValve:
    """Flink's StatusWatermarkValve. Each input channel has a watermark and a status (active
    or idle); the output watermark is the minimum over the active channels and never goes
    backwards; idle channels do not hold it back; the output is idle when all channels are."""

    __slots__ = ("_active", "_groups", "_reached", "_twins", "channel_idle", "channel_wm",
                 "idle_count", "row_wm", "watermark")

    def __init__(self, n_channels: int) -> None:
        self.channel_wm: list[int] = [MIN_WATERMARK] * n_channels
        # Per channel: the watermark before the last row it delivered (a batch carries the
        # watermarks its producer emitted between its rows as a column, not as elements).
        self.row_wm: list[int] = [MIN_WATERMARK] * n_channels
        self.channel_idle: list[bool] = [False] * n_channels
        self.idle_count = 0
        self.watermark: int = MIN_WATERMARK  # the output watermark
        # The active channels' watermarks (_active) and how far they have come, rows
        # included (_reached); an idle channel is _NONE in both.
        self._active = _MinTree(self.channel_wm)
        self._reached = _MinTree(self.channel_wm)
        # Per channel, a number it shares with the channels fed by the same upstream subtask
        # (a self-join's two inputs from one source): they keep pace, row for row.
        self.twins = list(range(n_channels))

    @property
    def twins(self) -> list[int]:
        return self._twins

    @twins.setter
    def twins(self, twins: list[int]) -> None:
        self._twins = list(twins)
        groups: dict[int, list[int]] = {}
        for channel, group in enumerate(self._twins):
            groups.setdefault(group, []).append(channel)
        self._groups = groups

    def restore(self, channel_wm: list[int], channel_idle: list[bool], watermark: int) -> None:
        """The channels' watermarks and statuses and the output watermark of a checkpoint."""
        self.channel_wm = list(channel_wm)
        self.channel_idle = list(channel_idle)
        self.idle_count = sum(self.channel_idle)
        self.watermark = watermark
        for channel in range(len(self.channel_wm)):
            self._refresh(channel)

    def input_watermark(self, channel: int, timestamp: int) -> int | None:
        """A watermark on ``channel`` (which makes it active). Returns the new output
        watermark when it advanced, else None."""
        if timestamp > self.channel_wm[channel]:
            self.channel_wm[channel] = timestamp
        self._set_idle(channel, False)
        self._refresh(channel)
        return self._advance()

    def input_status(self, channel: int, idle: bool) -> int | None:
        """``channel`` turned idle or active again. Returns the new output watermark when
        it advanced (an idle channel no longer holds it back), else None."""
        self._set_idle(channel, idle)
        self._refresh(channel)
        return self._advance()

    @property
    def all_idle(self) -> bool:
        """The output status: idle when every input channel is."""
        return self.idle_count == len(self.channel_idle)

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
            self._refresh(channel)

    def others_bound(self, channel: int) -> int | None:
        """The minimum watermark over the active channels other than ``channel`` (bounds the
        watermark before a row arriving on ``channel``), or None when there are none. A
        channel whose rows were delivered counts as far as the watermarks between them went
        (as in Flink, where those watermarks travel between the rows). ``channel``'s twins
        (``channel`` among them) keep pace with it and are left out."""
        low = self._reached.min_without(self._groups[self._twins[channel]])
        return None if low == _NONE else low

    def _set_idle(self, channel: int, idle: bool) -> None:
        if self.channel_idle[channel] != idle:
            self.channel_idle[channel] = idle
            self.idle_count += 1 if idle else -1

    def _refresh(self, channel: int) -> None:
        if self.channel_idle[channel]:
            self._active.set(channel, _NONE)
            self._reached.set(channel, _NONE)
        else:
            wm = self.channel_wm[channel]
            self._active.set(channel, wm)
            self._reached.set(channel, max(wm, self.row_wm[channel]))

    def _advance(self) -> int | None:
        combined = self._active.min()
        if combined == _NONE:
            return None
        if combined > self.watermark:
            self.watermark = combined
            return combined
        return None
