"""Streaming ORDER BY as Flink 2.3 runs it (optimizer/passes/create_graph.py, _streaming_sort):

- on an ascending rowtime first, the temporal sort (runtime/operators/temporal_sort.py): rows
  leave in order as the watermark passes them; a row whose time is not after the last time
  already emitted is late and dropped. On main the whole input was sorted at its end, late
  rows kept, and over an unbounded input the query was refused;
- with a LIMIT over an unbounded input, the Top-N of the whole input, an updating result
  (on main: refused);
- otherwise, over an unbounded input, refused by name, as Flink refuses it.

Expected ids, in their order: tests/fixtures/flink/temporal_sort.json, from PyFlink 2.3 on the
same files (tests/fixtures/flink/gen_temporal_sort.py), with Flink's default watermark interval
and with an interval of 0 (Flink's filesystem source does not act on the emit-strategy option;
ours does, and on-event is compared with Flink's interval-0 answer).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import PlanError
from tests.harness import TestStream

FLINK = json.loads((Path(__file__).parent.parent / "fixtures" / "flink" /
                    "temporal_sort.json").read_text())


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("interval", ["default", "interval-0"])
@pytest.mark.parametrize("name", sorted(FLINK["inputs"]))
def test_ordered_by_rowtime_as_flink(tmp_path: Path, name: str, interval: str,
                                     parallelism: int) -> None:
    path = tmp_path / f"{name}.csv"
    path.write_text("".join(",".join(map(str, row)) + "\n" for row in FLINK["inputs"][name]))
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    strategy = "on-event" if interval == "interval-0" else "on-periodic"
    s.execute(f"CREATE TABLE t (id INT, ts TIMESTAMP(3), s STRING, v INT, WATERMARK FOR ts AS "
              f"ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = '{path}', "
              f"'format' = 'csv', 'scan.watermark.emit.strategy' = '{strategy}')")
    for qname, query in FLINK["queries"].items():
        want = FLINK["answers"][f"{name}-{qname}-{interval}"]
        q = s.sql(query)
        got = [r["id"] for r in q.collect().to_pylist()]
        assert got == want, (qname, interval)
        if qname == "time":
            assert q.late_records_dropped == len(FLINK["inputs"][name]) - len(want)


SCHEMA = pa.schema([("item", pa.string()), ("price", pa.int64()), ("ts", pa.timestamp("ms"))])
S = 1000


def _stream() -> TestStream:
    return (TestStream(SCHEMA)
            .add_batch([("a", 1, 1 * S), ("b", 5, 4 * S), ("c", 3, 2 * S)])
            .advance_watermark_to(3 * S)      # a, c leave; 2 s is the last time emitted
            .add_batch([("d", 2, 2500), ("e", 9, 1500), ("f", 4, 3 * S)])  # e is late
            .advance_watermark_to(10 * S)     # d, f, b leave (d, f waited: behind 3 s)
            .add_batch([("g", 7, 3 * S), ("h", 0, 11 * S)])  # g is late
            .advance_watermark_to_infinity())


def _steps(sql: str) -> tuple[list[list[tuple]], sqlengine.Query]:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", _stream(), rowtime="ts", bounded=False)
    q = s.sql(sql)
    return [[tuple(r.values()) for r in b.to_pylist()] for b in q.stream()], q


def test_an_unbounded_input_leaves_in_order_as_the_watermark_passes() -> None:
    steps, q = _steps("SELECT item FROM t ORDER BY ts")
    assert steps == [[("+I", "a"), ("+I", "c")], [("+I", "d"), ("+I", "f"), ("+I", "b")],
                     [("+I", "h")]]
    assert q.late_records_dropped == 2


def test_order_by_with_a_limit_over_an_unbounded_input_is_a_top_n() -> None:
    steps, _ = _steps("SELECT item, price FROM t ORDER BY price DESC LIMIT 2")
    changes = [row for step in steps for row in step]
    assert changes == [("+I", "b", 5), ("+I", "c", 3), ("-D", "c", 3), ("+I", "e", 9),
                       ("-D", "b", 5), ("+I", "g", 7)]
    steps, _ = _steps("SELECT item, price FROM t ORDER BY price DESC LIMIT 2 OFFSET 1")
    final: dict[str, int] = {}
    for op, item, price in (row for step in steps for row in step):
        if op in ("+I", "+U"):
            final[item] = price
        else:
            assert final.pop(item) == price
    assert final == {"g": 7, "b": 5}  # (9, 7, 5, 4, 3, 2, 1, 0: the 2nd and 3rd)


@pytest.mark.parametrize("sql, what", [
    ("SELECT item FROM t ORDER BY price", "ORDER BY over an unbounded input"),
    ("SELECT item FROM t ORDER BY ts DESC", "ORDER BY over an unbounded input"),
    ("SELECT item FROM t ORDER BY ts OFFSET 1", "OFFSET without FETCH"),
])
def test_other_orders_over_an_unbounded_input_are_refused(sql: str, what: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", _stream(), rowtime="ts", bounded=False)
    with pytest.raises(PlanError, match=what):
        s.sql(sql).collect()


def test_a_bounded_input_is_still_sorted_whole_by_other_keys() -> None:
    """(An extension: Flink refuses these in streaming mode; a bounded input is sorted at its
    end, as batch mode does.)"""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", pa.table({"a": [3, 1, 2], "ts": pa.array(
        [dt.datetime(2024, 1, 1, 0, 0, i) for i in (1, 2, 3)], pa.timestamp("ms"))}),
        rowtime="ts")
    assert [r["a"] for r in s.sql("SELECT a FROM t ORDER BY a DESC").collect().to_pylist()] \
        == [3, 2, 1]


MINI = ("1,2024-01-01 00:00:05,a,1\n2,2024-01-01 00:00:01,b,2\n3,2024-01-01 00:00:09,c,3\n"
        "4,2024-01-01 00:00:02,d,4\n")


def test_a_subquerys_order_by_without_a_limit_is_dropped(tmp_path: Path) -> None:
    """Flink drops an ORDER BY without a LIMIT in a subquery, a WITH query or a view: its
    rows pass in input order, none late (PyFlink 2.3 on this file, an interval of 0: a count
    of 4, ids 1, 2, 3, 4). A temporal sort there dropped late rows (3, and 2, 1, 3)."""
    (tmp_path / "x.csv").write_text(MINI)
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE x (id INT, ts TIMESTAMP(3), s STRING, v INT, WATERMARK FOR ts AS "
              f"ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 'x.csv'}', 'format' = 'csv', 'scan.watermark.emit.strategy' = "
              "'on-event')")
    s.execute("CREATE VIEW sorted_x AS SELECT id, v FROM x ORDER BY ts")

    def ids(sql: str) -> list[int]:
        return [r["id"] for r in s.sql(sql).collect().to_pylist()]

    assert s.sql("SELECT COUNT(*) AS c FROM (SELECT id FROM x ORDER BY ts)").collect(
        ).to_pylist() == [{"c": 4}]
    assert ids("SELECT id FROM (SELECT id, v FROM x ORDER BY ts) WHERE v > 0") == [1, 2, 3, 4]
    assert ids("WITH w AS (SELECT id, ts FROM x ORDER BY ts) SELECT id FROM w") == [1, 2, 3, 4]
    assert ids("SELECT id FROM sorted_x") == [1, 2, 3, 4]
    # (the statement's own ORDER BY sorts, as Flink's: 4 is late)
    assert ids("SELECT id FROM x ORDER BY ts") == [2, 1, 3]
    assert ids("SELECT id FROM (SELECT id, ts FROM x ORDER BY ts) ORDER BY ts") == [2, 1, 3]


def test_a_rowtime_finer_than_milliseconds_is_refused(tmp_path: Path) -> None:
    """Flink refuses it ("precision 'p' is from 0 to 3"); it was taken, and every query of
    the table then failed in its source with Arrow's "Casting from timestamp[us] to
    timestamp[ms] would lose data"."""
    from sqlengine.errors import BindError

    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    with pytest.raises(BindError, match=r"precision 0 to 3 .*got TIMESTAMP\(6\)"):
        s.execute(f"CREATE TABLE t6 (id INT, ts TIMESTAMP(6), WATERMARK FOR ts AS ts - "
                  f"INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
                  f"'{tmp_path}', 'format' = 'csv')")
