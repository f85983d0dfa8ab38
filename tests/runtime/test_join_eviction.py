"""A streaming inner join whose condition bounds one side's time from below by a window
aggregate's window_end on the other side (Nexmark q7: B.dateTime BETWEEN B1.dateTime - 10 s
AND B1.dateTime) drops the state rows no row still to come can meet, as the watermark moves;
the answer stays a regular join's (rows arriving late still meet every row kept). Checked
against the same query without dropping, on disordered input with late rows."""

from __future__ import annotations

import collections

import pytest

import sqlengine
from sqlengine.optimizer.passes import create_graph
from sqlengine.runtime.native import factory
from sqlengine.runtime.operators.join import JoinOperator

Q7 = ("SELECT B.auction, B.price, B.bidder, B.dateTime FROM bid AS B JOIN (SELECT MAX(price) "
      "AS maxprice, window_end AS dateTime FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), "
      "INTERVAL '500' MILLISECOND)) GROUP BY window_start, window_end) AS B1 ON B.price = "
      "B1.maxprice WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '500' MILLISECOND AND "
      "B1.dateTime")


def _session(p: int, disorder_ms: int, events: int = 100_000) -> sqlengine.Session:
    s = sqlengine.connect({"parallelism.default": str(p),
                           "pipeline.auto-watermark-interval": "0"})
    s.execute("CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, "
              "dateTime TIMESTAMP(3), WATERMARK FOR dateTime AS dateTime - INTERVAL '1' SECOND)"
              " WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'nexmark.events' = "
              f"'{events}', 'nexmark.out-of-orderness' = '{disorder_ms}')")
    return s


def _rows(s: sqlengine.Session, sql: str) -> collections.Counter:
    return collections.Counter(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


@pytest.mark.parametrize(("p", "disorder_ms"), [(1, 0), (1, 3000), (2, 800)])
def test_dropping_rows_that_cannot_match_keeps_the_answer(
        p: int, disorder_ms: int, monkeypatch: pytest.MonkeyPatch) -> None:
    plan = _session(p, disorder_ms).sql(Q7).explain()
    assert "Join(inner, left rows dropped at dateTime < watermark - 498 ms)" in plan
    got = _rows(_session(p, disorder_ms), Q7)
    monkeypatch.setattr(create_graph, "_evictions", lambda *_: ())
    assert "rows dropped" not in _session(p, disorder_ms).sql(Q7).explain()
    want = _rows(_session(p, disorder_ms), Q7)
    assert got == want and sum(want.values()) >= 10


def test_the_state_stays_small(monkeypatch: pytest.MonkeyPatch) -> None:
    joins: list[JoinOperator] = []
    build = factory.build_operator

    def recording(spec, tables):  # type: ignore[no-untyped-def]
        op = build(spec, tables)
        if isinstance(op, JoinOperator):
            joins.append(op)
        return op

    monkeypatch.setattr(factory, "build_operator", recording)
    kept = {}
    for evict in (True, False):
        if not evict:
            monkeypatch.setattr(create_graph, "_evictions", lambda *_: ())
        joins.clear()
        _rows(_session(1, 0), Q7)
        (join,) = joins
        kept[evict] = join.state_summary()["left_rows"]
    assert kept[False] > 90_000  # (every bid of 100,000 events)
    # (with dropping: the bids of the last ~1.5 s of the ~10 s: above the last watermark
    # before the end, 1 s behind the last bid, minus the 0.5 s the condition reaches back)
    assert kept[True] < kept[False] / 4


@pytest.mark.parametrize("sql", [
    Q7.replace("JOIN (", "LEFT JOIN ("),  # (a left join's rows may still be padded)
    Q7.replace("B.dateTime BETWEEN B1.dateTime - INTERVAL '500' MILLISECOND AND "
               "B1.dateTime", "B.dateTime <= B1.dateTime"),  # (no lower bound)
    Q7.replace("window_end AS dateTime", "window_start AS dateTime"),  # (not window_end)
])
def test_no_bound_no_dropping(sql: str) -> None:
    plan = _session(1, 0).sql(sql).explain()
    assert "Join(" in plan and "rows dropped" not in plan
