"""Watermark-driven tests with a scripted source: windows fire exactly at the watermark step
that passes their end, late rows are dropped, idle and uneven channels follow the valve."""

from __future__ import annotations

import datetime as dt
import time

import pyarrow as pa

import sqlengine
from tests.harness import TestStream

SCHEMA = pa.schema([("item", pa.string()), ("price", pa.int64()),
                    ("ts", pa.timestamp("ms"))])
S = 1000  # one second in ms
EPOCH = dt.datetime(1970, 1, 1)

TUMBLE = ("SELECT item, window_start, COUNT(*) AS n, SUM(price) AS total FROM "
          "TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
          "GROUP BY item, window_start, window_end")


def steps(q: sqlengine.Query) -> list[list[tuple]]:
    """The output, one list per emitted batch, window_start in seconds."""
    out = []
    for b in q.stream():
        out.append([(r["op"], r["item"], int((r["window_start"] - EPOCH).total_seconds()),
                     r["n"], r["total"]) for r in b.to_pylist()])
    return out


def test_windows_fire_at_the_watermark_step_and_late_rows_drop() -> None:
    stream = (TestStream(SCHEMA)
              .add_batch([("a", 1, 1 * S), ("b", 2, 4 * S)])
              .advance_watermark_to(9 * S)           # [0,10) not yet: fires at 9.999
              .add_batch([("a", 3, 8 * S)])          # out of order but on time
              .advance_watermark_to(10 * S)          # fires [0,10)
              .add_batch([("a", 4, 5 * S), ("b", 5, 12 * S)])  # a@5 is late
              .advance_watermark_to_infinity())
    s = sqlengine.connect()
    s.register("bids", stream, rowtime="ts", bounded=True)
    q = s.sql(TUMBLE.format(t="bids"))
    assert steps(q) == [
        [("+I", "a", 0, 2, 4), ("+I", "b", 0, 1, 2)],   # at watermark 10 s
        [("+I", "b", 10, 1, 5)],                        # at the end
    ]
    assert q.late_records_dropped == 1


def test_uneven_channels_take_the_minimum_and_idle_ones_are_left_out() -> None:
    fast = (TestStream(SCHEMA).add_batch([("a", 1, 1 * S)]).advance_watermark_to(30 * S)
            .add_batch([("a", 2, 31 * S)]).advance_watermark_to(35 * S))
    slow = (TestStream(SCHEMA).add_batch([("b", 3, 2 * S)]).advance_watermark_to(5 * S)
            .add_batch([("b", 4, 6 * S)]).mark_idle())
    s = sqlengine.connect()
    s.register("fast", fast, rowtime="ts", bounded=True)
    s.register("slow", slow, rowtime="ts", bounded=True)
    s.execute("CREATE VIEW u AS SELECT * FROM fast UNION ALL SELECT * FROM slow")
    q = s.sql(TUMBLE.format(t="u"))
    got = steps(q)
    # The union's watermark is min(fast, slow): 5 s holds [0,10) back while slow is active;
    # once slow turns idle, fast's 35 s alone decides and [0,10) fires; [30,40) waits for
    # the end of input.
    assert got == [[("+I", "a", 0, 1, 1), ("+I", "b", 0, 2, 7)], [("+I", "a", 30, 1, 2)]]


def test_a_quiet_source_turns_idle_after_the_timeout() -> None:
    def quiet():  # one row, then nothing for a while, then the end
        yield pa.RecordBatch.from_pylist([{"item": "b", "price": 3, "ts": dt.datetime(
            1970, 1, 1, 0, 0, 2)}], schema=SCHEMA)
        for _ in range(20):
            time.sleep(0.01)
            yield None

    def busy():
        for sec in (1, 12, 25, 40):
            time.sleep(0.02)
            yield pa.RecordBatch.from_pylist([{"item": "a", "price": sec, "ts": dt.datetime(
                1970, 1, 1, 0, 0, sec)}], schema=SCHEMA)

    results = {}
    for timeout in (None, "50 ms"):
        s = sqlengine.connect()
        s.register("busy", busy(), rowtime="ts")
        s.register("quiet", quiet(), rowtime="ts", idle_timeout=timeout)
        s.execute("CREATE VIEW u AS SELECT * FROM busy UNION ALL SELECT * FROM quiet")
        results[timeout] = steps(s.sql(TUMBLE.format(t="u")))
    # Without a timeout the quiet source holds every window back to the end of input.
    assert len(results[None]) == 1
    # With one, windows fire while the quiet source is still running.
    assert len(results["50 ms"]) > 1
    assert sorted(r for step in results["50 ms"] for r in step) == \
        sorted(r for step in results[None] for r in step)
