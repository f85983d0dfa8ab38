"""Read ahead: a source's next batches decoded on a thread while the operators work on this one.

Decoding a parquet row group (Arrow's C++, the GIL released) and the operators' kernels
(mostly Arrow's and numpy's C, the GIL released too) overlap on two cores instead of taking
turns. Only for sources without a checkpoint cursor: a cursor records what has been handed
out, and batches read ahead have not been processed yet.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")

DEPTH = 2  # batches decoded ahead (each at most a row group's worth of rows)
_END = object()


class _Failed:
    def __init__(self, error: BaseException) -> None:
        self.error = error


def prefetched(items: Iterator[T], depth: int = DEPTH) -> Iterator[T]:
    """``items`` as they are, produced on a thread of their own up to ``depth`` ahead. An
    error raised producing them is raised here, in the consumer; closing this generator (a
    LIMIT satisfied, a cancelled job) stops the thread."""
    slots: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put(item):
                    return
            put(_END)
        except BaseException as e:  # handed to the consumer, raised there
            put(_Failed(e))
        finally:
            close = getattr(items, "close", None)
            if close is not None and stop.is_set():
                close()

    thread = threading.Thread(target=produce, name="sqlengine-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = slots.get()
            if item is _END:
                return
            if isinstance(item, _Failed):
                raise item.error
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        thread.join()
