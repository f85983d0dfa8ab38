"""Drives one source subtask: reads its connector batch by batch and pushes each through the
vertex's chain, with a watermark after each batch, idleness ('scan.watermark.idle-timeout') and
the final watermark of a bounded source. Within a batch, rows are judged against the watermark
emitted before them by Flink's rule (runtime/watermark_emission.py, ``emit_interval``)."""

from __future__ import annotations

import time

from sqlengine.connectors import EMIT_STRATEGY
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


DEFAULT_WATERMARK_INTERVAL = "200 ms"  # Flink's pipeline.auto-watermark-interval default


def emit_interval(src: SourceOperator, options: dict[str, str]) -> int:
    """How far (ms) the watermark grows before a source emits it within a batch: 0 under
    'scan.watermark.emit.strategy' = 'on-event'; under 'on-periodic' (Flink's default)
    'pipeline.auto-watermark-interval' (200 ms by default), as Flink's watermark assigner
    emits eagerly once the watermark has grown by more than the interval."""
    if (src.source.option(EMIT_STRATEGY) or "on-periodic") == "on-event":
        return 0
    key = "pipeline.auto-watermark-interval"
    return parse_duration(options.get(key, DEFAULT_WATERMARK_INTERVAL), key)


class SourceDriver:
    def __init__(self, task: ChainedTask, options: dict[str, str]) -> None:
        self.task = task
        head = task.operators[0]
        if not isinstance(head, SourceOperator):
            raise TypeError(f"a source task's head is a source, not {type(head).__name__}")
        self.src = head
        self.src.emit_interval = emit_interval(self.src, options)
        self.idle_after = idle_timeout(self.src, options)
        self.last_data = time.monotonic()
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
        # A watermark follows each batch (under either strategy; scripted ones go at once).
        if src.watermark > task.watermark:
            task.fire_watermark(Watermark(src.watermark), start=1)
        return True
