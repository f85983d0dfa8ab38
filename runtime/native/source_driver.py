"""Drives one source subtask: reads its connector batch by batch and pushes each through the
vertex's chain, with watermarks (on each batch, or every 'pipeline.auto-watermark-interval'),
idleness ('scan.watermark.idle-timeout') and the final watermark of a bounded source."""

from __future__ import annotations

import time

from sqlengine.errors import ConnectorError
from sqlengine.options import parse_duration
from sqlengine.runtime.elements import MAX_WATERMARK, Watermark
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.operators.source import SourceOperator


def idle_timeout(src: SourceOperator, options: dict[str, str]) -> float:
    """Seconds without data after which a source is idle (0: never)."""
    key = "scan.watermark.idle-timeout"
    text = src.source.option(key) or options.get("table.exec.source.idle-timeout")
    if not text:
        return 0.0
    return parse_duration(text, key) / 1000.0


class SourceDriver:
    def __init__(self, task: ChainedTask, options: dict[str, str]) -> None:
        self.task = task
        head = task.operators[0]
        if not isinstance(head, SourceOperator):
            raise TypeError(f"a source task's head is a source, not {type(head).__name__}")
        self.src = head
        key = "pipeline.auto-watermark-interval"
        self.interval = parse_duration(options.get(key, "0"), key) / 1000.0
        self.idle_after = idle_timeout(self.src, options)
        self.last_wm = self.last_data = time.monotonic()
        self._batches = self.src.batches()

    @property
    def rows(self) -> int:
        return self.task.metrics[0].records_out

    def poll(self) -> bool:
        """Read once and push what was read through the chain. Returns False when the source
        has ended (after its final watermark and the end of its input went down the chain)."""
        task, src = self.task, self.src
        try:
            batch = next(self._batches)
        except StopIteration:
            # A bounded source ends with the maximum watermark: every window fires.
            task.fire_watermark(MAX_WATERMARK, start=1)
            task.end_input(0)
            return False
        except ConnectorError:
            raise
        except Exception as e:
            raise task._fail(0, e) from e
        now = time.monotonic()
        if batch is not None:
            task.emit_from_head([batch])
            self.last_data = now
        elif self.idle_after and now - self.last_data >= self.idle_after:
            src.idle = True
        task.set_task_idle(src.idle)
        # Watermarks follow each batch (on-event), or at most once per
        # 'pipeline.auto-watermark-interval'; scripted ones go at once.
        due = self.interval == 0 or now - self.last_wm >= self.interval or src.explicit
        if due and src.watermark > task.watermark:
            task.fire_watermark(Watermark(src.watermark), start=1)
            self.last_wm = now
        return True
