"""'table.exec.state.ttl' on OVER aggregations, as Flink's cleanup timers
(KeyedProcessFunctionWithCleanupState): with UNBOUNDED PRECEDING and ROWS frames a key no
row reached and none of whose rows was emitted for the TTL, with no row waiting for the
watermark, is forgotten without a word (its carried aggregates, kept rows and last emitted
time), and its next row starts it again. A bounded RANGE frame frees its rows by time and
takes no TTL, as in Flink. The option was refused for OVER before.

Processing time comes from a hand-driven clock; each key's expected values are worked out by
hand from the rows it has since its state was last forgotten."""

from __future__ import annotations

import datetime as dt
import pickle

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.optimizer.specs_windows import OverAggregateSpec
from sqlengine.query import collect_sink
from sqlengine.runtime.operators.over import OverAggregateOperator
from tests.harness import OperatorHarness
from tests.runtime.test_operators import Clock

BASE = dt.datetime(2024, 1, 1)
DDL = ("CREATE TABLE g (k STRING, v BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) "
       "WITH ('connector' = 'datagen', 'number-of-rows' = '10')")


def spec(sql: str, ttl: str = "90 s") -> OverAggregateSpec:
    s = sqlengine.connect({"table.exec.state.ttl": ttl})
    s.execute(DDL)
    plan = collect_sink(s.sql(sql).logical_plan)
    found, = [op for v in s.job_graph(plan).vertices for op in v.chain
              if isinstance(op, OverAggregateSpec)]
    return found


def harness(frame: str, clock: Clock, ttl_ms: int = 1000) -> OperatorHarness:
    sp = spec(f"SELECT k, v, ts, SUM(v) OVER (PARTITION BY k ORDER BY ts {frame}) AS s, "
              f"COUNT(*) OVER (PARTITION BY k ORDER BY ts {frame}) AS n FROM g")
    return OperatorHarness(OverAggregateOperator(
        sp.partition, sp.time_index, sp.frame, sp.preceding, sp.aggs, sp.schema.to_arrow(),
        ttl_ms=ttl_ms, clock=clock))


def rows(*kvs: tuple[str, int, int]) -> pa.RecordBatch:
    """(key, value, second) rows."""
    return pa.RecordBatch.from_pylist(
        [{"k": k, "v": v, "ts": BASE + dt.timedelta(seconds=t)} for k, v, t in kvs],
        schema=pa.schema([("k", pa.string()), ("v", pa.int64()), ("ts", pa.timestamp("ms"))]))


def wm(second: int) -> int:
    return int((BASE + dt.timedelta(seconds=second)).timestamp() * 1000)


def fire(h: OperatorHarness, second: int) -> list[tuple]:
    """The rows the watermark at ``second`` emits, by key."""
    return sorted((r[0], r[1], r[4], r[5]) for r in h.watermark(wm(second)).take_rows())


@pytest.mark.parametrize("frame", ["", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
                                   "ROWS BETWEEN 1 PRECEDING AND CURRENT ROW"])
@pytest.mark.parametrize("ttl_ms", [0, 1000])
def test_an_idle_key_starts_again(frame: str, ttl_ms: int) -> None:
    clock = Clock()
    h = harness(frame, clock, ttl_ms)
    h.process(rows(("a", 1, 1), ("b", 10, 1)))
    assert fire(h, 1) == [("+I", "a", 1, 1), ("+I", "b", 10, 1)]
    clock.now = 0.8
    h.process(rows(("b", 5, 2)))
    assert fire(h, 2) == [("+I", "b", 15, 2)]
    clock.now = 1.6  # a unused since 0.0: forgotten (with a TTL); b used at 0.8: kept
    h.process(rows(("a", 2, 3), ("b", 1, 3)))
    bounded = "1 PRECEDING" in frame
    a = (2, 1) if ttl_ms else (3, 2)
    b = (6, 2) if bounded else (16, 3)
    assert fire(h, 3) == [("+I", "a", *a), ("+I", "b", *b)]
    assert h.op.state_summary()["late_records_dropped"] == 0


def test_a_key_with_a_row_waiting_is_kept() -> None:
    """As Flink's onTimer, which clears no state while a row waits for the watermark."""
    clock = Clock()
    h = harness("", clock)
    h.process(rows(("a", 1, 1)))
    assert fire(h, 1) == [("+I", "a", 1, 1)]
    clock.now = 0.5
    h.process(rows(("a", 2, 5)))  # (waits for the watermark to reach 0:05)
    clock.now = 3.0
    h.process(rows(("b", 7, 4)))  # (a unused for 2.5 s, but its row waits)
    assert fire(h, 5) == [("+I", "a", 3, 2), ("+I", "b", 7, 1)]
    clock.now = 3.9  # (a used at 3.0 when its row was emitted: kept)
    h.process(rows(("a", 4, 6)))
    assert fire(h, 6) == [("+I", "a", 7, 3)]


def test_a_forgotten_key_forgets_its_last_emitted_time() -> None:
    """ROWS n PRECEDING drops a row behind the watermark only when a row of its key at or
    after its time was emitted: with the key forgotten, that time is forgotten too."""
    clock = Clock()
    h = harness("ROWS BETWEEN 1 PRECEDING AND CURRENT ROW", clock)
    h.process(rows(("a", 1, 5)))
    assert fire(h, 5) == [("+I", "a", 1, 1)]
    h.process(rows(("a", 2, 4)))  # behind a's emitted 0:05: dropped
    assert fire(h, 6) == []
    clock.now = 2.0
    h.process(rows(("b", 1, 7)))  # (a forgotten here)
    h.process(rows(("a", 3, 4)))  # behind the watermark, but a has emitted nothing now
    assert fire(h, 7) == [("+I", "a", 3, 1), ("+I", "b", 1, 1)]
    assert h.op.state_summary()["late_records_dropped"] == 1


def test_the_keys_ages_go_through_a_checkpoint() -> None:
    """A checkpoint holds each key's age; the restored operator counts on from it, the time
    between the two not counting."""
    clock = Clock()
    h = harness("", clock)
    h.process(rows(("a", 1, 1)))
    assert fire(h, 1) == [("+I", "a", 1, 1)]
    clock.now = 0.9
    state = pickle.dumps(h.op.snapshot_state())  # (as a checkpoint writes it)
    for now, expected in ((100.05, (3, 2)), (100.2, (2, 1))):
        later = Clock()
        later.now = 100.0
        restored = harness("", later)
        restored.op.restore_state(pickle.loads(state))
        later.now = now
        restored.process(rows(("a", 2, 2)))
        assert fire(restored, 2) == [("+I", "a", *expected)], now


def test_the_option_reaches_the_over_aggregates_that_take_it() -> None:
    over = "OVER (PARTITION BY k ORDER BY ts {})"
    for frame, ttl in (("", 90_000), ("ROWS BETWEEN 3 PRECEDING AND CURRENT ROW", 90_000),
                       ("RANGE BETWEEN INTERVAL '1' MINUTE PRECEDING AND CURRENT ROW", 0)):
        assert spec(f"SELECT k, SUM(v) {over.format(frame)} AS s FROM g").ttl == ttl, frame
    numbered = spec("SELECT k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts) AS rn FROM g")
    assert numbered.ttl == 90_000


def test_an_over_query_runs_with_the_option_and_gives_the_same_rows() -> None:
    """A bounded input read in far less than the TTL: nothing expires, the rows are those
    of a run without the option, at parallelism 1 and 2."""
    n = 600
    table = pa.table({"k": [f"k{i % 7}" for i in range(n)], "v": list(range(n)),
                      "ts": [BASE + dt.timedelta(seconds=i // 3) for i in range(n)]})
    sql = ("SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 2 PRECEDING "
           "AND CURRENT ROW) AS s, COUNT(*) OVER (PARTITION BY k ORDER BY ts) AS c FROM t")
    got = {}
    for opts in ({"table.exec.state.ttl": "1 h"}, {}):
        for p in ("1", "2"):
            s = sqlengine.connect({**opts, "parallelism.default": p})
            s.register("t", pa.Table.from_batches(table.to_batches(max_chunksize=50)),
                       rowtime="ts")
            got[(bool(opts), p)] = sorted(map(repr, s.sql(sql).collect().to_pylist()))
    assert len({tuple(v) for v in got.values()}) == 1
    assert len(got[(True, "1")]) == n
