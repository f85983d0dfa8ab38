"""Window TVF calls as Flink 2.x's pages write them: ``FROM TUMBLE(TABLE t, ...)`` without the
``TABLE(...)`` wrapper, and named arguments (``DATA =>``, ``TIMECOL =>``, ``SIZE =>``, ...).
Both were refused on main (with a message about "table functions other than ...")."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

TIMES = [dt.datetime(2024, 1, 1, 8, m) for m in (5, 7, 9, 11, 13)]
BID = pa.table({"item": list("ABCDE"), "price": [4.0, 2.0, 5.0, 3.0, 1.0],
                "bidtime": pa.array(TIMES, pa.timestamp("ms"))})


def _rows(mode: str, sql: str) -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("Bid", BID, rowtime="bidtime")
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def _w(m: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, 8, m)


AGG = "SELECT window_start, window_end, SUM(price) AS total FROM {} GROUP BY window_start, " \
      "window_end"
TUMBLES = [
    "TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES))",
    "TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)",
    "TABLE(TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '10' "
    "MINUTES))",
    "TUMBLE(SIZE => INTERVAL '10' MINUTES, TIMECOL => DESCRIPTOR(bidtime), DATA => TABLE Bid)",
]


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("call", TUMBLES)
def test_tumble_in_every_form(mode: str, call: str) -> None:
    assert _rows(mode, AGG.format(call)) == [(_w(0), _w(10), 11.0), (_w(10), _w(20), 4.0)]


def test_hop_and_cumulate_with_named_arguments() -> None:
    hop = ("HOP(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SLIDE => INTERVAL '5' "
           "MINUTES, SIZE => INTERVAL '10' MINUTES)")
    assert _rows("streaming", AGG.format(hop)) == [
        (_w(0), _w(10), 11.0), (_w(5), _w(15), 15.0), (_w(10), _w(20), 4.0)]
    cumulate = ("TABLE(CUMULATE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), STEP => "
                "INTERVAL '5' MINUTES, SIZE => INTERVAL '10' MINUTES))")
    # [08:00, 08:05) holds no row (08:05 is its end, excluded), so it gives no row.
    assert _rows("streaming", AGG.format(cumulate)) == [
        (_w(0), _w(10), 11.0), (_w(10), _w(15), 4.0), (_w(10), _w(20), 4.0)]


def test_a_bare_tumble_call_on_its_own() -> None:
    rows = _rows("streaming", "SELECT item, window_start FROM TUMBLE(TABLE Bid, "
                              "DESCRIPTOR(bidtime), INTERVAL '10' MINUTES)")
    assert rows == [("A", _w(0)), ("B", _w(0)), ("C", _w(0)), ("D", _w(10)), ("E", _w(10))]


@pytest.mark.parametrize(("call", "message"), [
    ("TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZES => INTERVAL '1' MINUTE)",
     "TUMBLE has no parameter SIZES"),
    ("TUMBLE(DATA => TABLE Bid, TIMECOL => DESCRIPTOR(bidtime))", "needs parameter SIZE"),
    ("TUMBLE(TABLE Bid, TIMECOL => DESCRIPTOR(bidtime), SIZE => INTERVAL '1' MINUTE)",
     "either named or positional"),
    ("FOO(TABLE Bid)", "table function FOO is not supported"),
])
def test_bad_calls_name_the_problem(call: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        _rows("streaming", f"SELECT * FROM {call}")
