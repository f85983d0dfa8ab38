"""The parallel native runtime: same rows at parallelism 1, 2 and 4; exchanges, watermarks
across channels, backpressure, failure and cancel."""

from __future__ import annotations

import datetime as dt
import multiprocessing
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import ExecutionError, SqlEngineError
from sqlengine.optimizer.jobgraph import JobEdge, JobGraph, JobVertex
from sqlengine.optimizer.physical import Partitioning
from sqlengine.optimizer.specs import ProjectSpec
from sqlengine.plan.expressions import ColumnRef
from sqlengine.plan.nodes import Schema
from sqlengine.runtime.elements import Watermark
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.native.execution_graph import DistributionPattern, build_execution_graph
from sqlengine.runtime.native.partitioner import MAX_PARALLELISM, HashPartitioner, key_groups
from sqlengine.runtime.operators.base import Operator
from tests.nexmark import (
    REFERENCES,
    queries,
    query,
    reference_db,
    result_rows,
    rows,
    session,
    tables,
)
from tests.scenarios import scenario_results

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "queries").glob("*.sql"))


def _no_workers_left() -> bool:
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        threads = [t for t in threading.enumerate() if t.name.startswith("sqlengine")]
        if not multiprocessing.active_children() and not threads:
            return True
        time.sleep(0.05)
    return False


# -- ExecutionGraph ---------------------------------------------------------------------------
def _vertex(vid: str, p: int) -> JobVertex:
    return JobVertex(vid, (ProjectSpec(schema=Schema(()), exprs=()),), p)


def test_execution_graph_connects_pointwise_and_all_to_all() -> None:
    graph = JobGraph((_vertex("v1", 2), _vertex("v2", 2), _vertex("v3", 3)),
                     (JobEdge("v1", "v2", Partitioning.FORWARD),
                      JobEdge("v2", "v3", Partitioning.HASH, (ColumnRef(0, "k", pa.int64()),))))
    eg = build_execution_graph(graph)
    assert [v.parallelism for v in eg.vertices] == [2, 2, 3]
    forward, shuffle = eg.results
    assert forward.pattern is DistributionPattern.POINTWISE
    assert shuffle.pattern is DistributionPattern.ALL_TO_ALL
    assert len(shuffle.partitions) == 2  # one per producing subtask
    # v2's subtask i reads v1's subtask i only; each v3 subtask reads both v2 subtasks.
    assert [[c.partition for c in chs] for chs in eg.vertex("v2").channels] == [[0], [1]]
    assert [[c.partition for c in chs] for chs in eg.vertex("v3").channels] == [[0, 1]] * 3
    assert [(v.name, ch) for v, ch in eg.consumers(shuffle, 1)] == \
        [("v3 (1/3)", 1), ("v3 (2/3)", 1), ("v3 (3/3)", 1)]


def test_explain_shows_parallelism_per_vertex() -> None:
    s = sqlengine.connect({"parallelism.default": "3"})
    s.register("t", pa.table({"k": [1, 2], "v": [3, 4]}))
    text = s.sql("SELECT k, SUM(v) AS s FROM t GROUP BY k ORDER BY k").explain()
    assert "v1 [parallelism=3]: Source(t)" in text
    assert "Sort" in text.split("[parallelism=1]")[1]  # a global sort runs once


# -- hash partitioning ------------------------------------------------------------------------
def test_equal_keys_of_different_types_land_on_the_same_subtask() -> None:
    ints = [1, 2, None, 5, 1 << 40]
    assert (key_groups([pa.array(ints, pa.int64())]) ==
            key_groups([pa.array(ints, pa.decimal128(20, 0))])).all()
    assert (key_groups([pa.array([1, 2, 3], pa.int8())]) ==
            key_groups([pa.array([1, 2, 3], pa.int64())])).all()
    ts = [dt.datetime(2024, 1, 1, 0, 0, 1), None]
    assert (key_groups([pa.array(ts, pa.timestamp("ms"))]) ==
            key_groups([pa.array(ts, pa.timestamp("us"))])).all()
    words = pa.array(["a", "", None, "hello", "a"] * 3)
    assert (key_groups([words.slice(5, 5)]) == key_groups([words])[:5]).all()
    assert (key_groups([words]) == key_groups([words.cast(pa.large_string())])).all()


def test_hash_partitioning_is_balanced_and_keeps_keys_together() -> None:
    keys = pa.array([f"user-{i}" for i in range(40_000)] * 2)
    batch = pa.record_batch({"k": keys, "v": np.arange(len(keys))})
    part = HashPartitioner(4, (ColumnRef(0, "k", pa.string()),))
    routed = part.route(batch)
    sizes = [b.num_rows for _, b in routed]
    assert sum(sizes) == 80_000 and max(sizes) < 1.15 * min(sizes)
    seen = {}
    for target, b in routed:
        for k in set(b.column(0).to_pylist()):
            assert seen.setdefault(k, target) == target
    assert MAX_PARALLELISM % 4 == 0


# -- same rows at every parallelism ----------------------------------------------------------

@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
@pytest.mark.usefixtures("repo_cwd")
def test_scenarios_give_the_same_rows_at_parallelism_1_2_4(
        path: Path, mode: str) -> None:
    got = {p: scenario_results(path, {"parallelism.default": str(p),
                                      "execution.runtime-mode": mode})
           for p in (1, 2, 4)}
    assert got[2] == got[1]
    assert got[4] == got[1]


@pytest.fixture(scope="module")
def duck():  # type: ignore[no-untyped-def]
    pytest.importorskip("duckdb")
    return reference_db(20_000)


# The whole suite in processes (p = 2 and 4, both modes); a sample with threads (the same
# task code, in-process queues only).
SETTINGS = [(name, setting) for setting in (("streaming", 2, "process"),
                                            ("streaming", 4, "process"),
                                            ("batch", 2, "process"))
            for name in queries()]
SETTINGS += [(name, ("streaming", 2, "thread"))
             for name in ("q0", "q3", "q5", "q7", "q8", "q11", "q18")]


@pytest.mark.parametrize(("name", "setting"), SETTINGS,
                         ids=[f"{n}-{m}-p{p}-{t}" for n, (m, p, t) in SETTINGS])
@pytest.mark.usefixtures("repo_cwd")
def test_nexmark_in_parallel(name: str, setting: tuple[str, int, str],  # type: ignore[no-untyped-def]
                             duck) -> None:
    mode, p, tasks = setting
    s = session(20_000, {"execution.runtime-mode": mode, "parallelism.default": str(p),
                         "execution.native.task-mode": tasks})
    got = result_rows(name, query(s, queries()[name]).collect())
    assert got == rows(duck.sql(REFERENCES[name]).fetchall())


def _disordered_bids(p: int, events: int, disorder_ms: int) -> sqlengine.Session:
    """A session at parallelism ``p`` with Nexmark bids up to ``disorder_ms`` out of order
    and a 1 s watermark bound."""
    s = sqlengine.connect({"parallelism.default": str(p), "pipeline.auto-watermark-interval": "0"})
    s.execute("CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, dateTime "
              "TIMESTAMP(3), WATERMARK FOR dateTime AS dateTime - INTERVAL '1' SECOND) WITH "
              f"('connector' = 'nexmark', 'nexmark.table' = 'bid', 'nexmark.events' = "
              f"'{events}', 'nexmark.out-of-orderness' = '{disorder_ms}')")
    return s


def test_out_of_order_input_within_the_bound_gives_the_same_windows() -> None:
    sql = ("SELECT auction, window_start, COUNT(*) AS n, MAX(price) AS top FROM TABLE(HOP("
           "TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND, INTERVAL '4' SECOND)) "
           "GROUP BY auction, window_start, window_end")
    got = {}
    for p in (1, 4):
        q = _disordered_bids(p, 30_000, 800).sql(sql)
        got[p] = rows([tuple(r.values()) for r in q.collect().to_pylist()])
        assert q.late_records_dropped == 0
    assert got[4] == got[1] and len(got[1]) > 1000


# -- channels and watermarks -----------------------------------------------------------------
class _Echo(Operator):
    name = "Echo"

    def __init__(self) -> None:
        self.watermarks: list[int] = []
        self.ended: list[int] = []

    def process_batch(self, batch, input_index=0):  # type: ignore[no-untyped-def]
        return ()

    def process_watermark(self, wm):  # type: ignore[no-untyped-def]
        self.watermarks.append(wm.timestamp)
        return ()

    def end_input(self, input_index=0):  # type: ignore[no-untyped-def]
        self.ended.append(input_index)
        return ()


def test_uneven_watermarks_across_channels_take_the_minimum() -> None:
    op = _Echo()
    # Channels 0 and 1 come from two subtasks of the first input, channel 2 from the second.
    task = ChainedTask("v3 (1/2)", [op], ["Echo"], 2, {}, channels=[0, 0, 1])
    task.process_watermark(Watermark(5), 0)
    task.process_watermark(Watermark(10), 1)
    assert op.watermarks == []  # channel 2 has not said anything yet
    task.process_watermark(Watermark(7), 2)
    task.process_watermark(Watermark(12), 0)
    assert op.watermarks == [5, 7]  # min(5, 10, 7), then min(12, 10, 7)
    task.set_idle(True, 2)
    assert op.watermarks == [5, 7, 10]  # an idle channel is left out
    task.end_input(0)
    assert op.ended == []  # the first input still has channel 1
    task.end_input(1)
    assert op.ended == [0]
    assert task.end_input(2) and op.ended == [0, 1]


def test_a_quiet_source_turns_idle_in_a_parallel_job() -> None:
    schema = pa.schema([("item", pa.string()), ("price", pa.int64()), ("ts", pa.timestamp("ms"))])

    def quiet():  # one row, then nothing for a while, then the end
        yield pa.RecordBatch.from_pylist([{"item": "b", "price": 3, "ts": dt.datetime(
            1970, 1, 1, 0, 0, 2)}], schema=schema)
        for _ in range(40):
            time.sleep(0.02)
            yield None

    def busy():
        for sec in (1, 12, 25, 40):
            time.sleep(0.05)
            yield pa.RecordBatch.from_pylist([{"item": "a", "price": sec, "ts": dt.datetime(
                1970, 1, 1, 0, 0, sec)}], schema=schema)

    sql = ("SELECT item, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE u, DESCRIPTOR(ts), "
           "INTERVAL '10' SECOND)) GROUP BY item, window_start, window_end")
    s = sqlengine.connect({"parallelism.default": "2", "execution.buffer-timeout": "10 ms"})
    s.register("busy", busy(), rowtime="ts")
    s.register("quiet", quiet(), rowtime="ts", idle_timeout="50 ms")
    s.execute("CREATE VIEW u AS SELECT * FROM busy UNION ALL SELECT * FROM quiet")
    started = time.monotonic()
    arrivals = []
    for batch in s.sql(sql).stream():
        arrivals.append((time.monotonic() - started, batch.num_rows))
    # Windows [0,10) and [10,20) fire while the quiet source still runs (it ends after
    # about 0.8 s): it turned idle, so it no longer holds the watermark back.
    assert sum(n for _, n in arrivals) == 5
    assert arrivals[0][0] < 0.6


# -- failure and cancel ----------------------------------------------------------------------
@pytest.mark.parametrize("tasks", ["process", "thread"])
@pytest.mark.parametrize(("expr", "message"), [
    ("a / b", "division by zero"),
    ("CAST(s AS INT)", "'oops'"),
])
def test_a_failing_subtask_fails_the_job_with_its_root_cause(expr: str, message: str,
                                                            tasks: str) -> None:
    # Two batches: the first goes to subtask 1, the second (with the bad row) to subtask 2.
    good = pa.record_batch({"a": [1, 2], "b": [1, 1], "s": ["1", "2"]})
    bad = pa.record_batch({"a": [3, 4], "b": [1, 0], "s": ["3", "oops"]})
    s = sqlengine.connect({"parallelism.default": "2", "execution.native.task-mode": tasks})
    s.register("t", pa.Table.from_batches([good, bad]))
    with pytest.raises(ExecutionError) as info:
        s.sql(f"SELECT {expr} AS x FROM t").collect()
    text = str(info.value)
    assert message in text and "(2/2)" in text, text
    assert "Traceback" not in text
    assert _no_workers_left()


@pytest.mark.parametrize("tasks", ["process", "thread"])
def test_closing_the_stream_cancels_every_task_within_a_second(tasks: str) -> None:
    s = sqlengine.connect({"parallelism.default": "2", "execution.native.task-mode": tasks})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '200000', 'fields.k.min' = '1', 'fields.k.max' = '50')")
    it = s.sql("SELECT k, COUNT(*) AS n, SUM(v) AS s FROM g GROUP BY k").stream()
    for _ in range(3):
        next(it)
    started = time.monotonic()
    it.close()
    assert time.monotonic() - started < 1.0
    assert _no_workers_left()


def test_cancel_from_another_thread_stops_collect() -> None:
    s = sqlengine.connect({"parallelism.default": "2"})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '10000000', 'rows-per-second' = '20000')")
    q = s.sql("SELECT k % 10 AS b, COUNT(*) AS n FROM g GROUP BY k % 10")
    threading.Timer(0.5, q.cancel).start()
    started = time.monotonic()
    with pytest.raises(ExecutionError, match="cancelled"):
        q.collect()
    assert time.monotonic() - started < 1.5
    assert _no_workers_left()


# -- backpressure and metrics ----------------------------------------------------------------
def test_a_slow_consumer_slows_the_sources_instead_of_growing_memory() -> None:
    s = sqlengine.connect({"parallelism.default": "2", "execution.buffer-timeout": "0 ms"})
    s.execute("CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '10000000', 'fields.k.min' = '1', 'fields.k.max' = '50')")
    q = s.sql("SELECT k, v * 2 AS w FROM g WHERE v > 0")
    it = q.stream()
    consumed = 0
    produced = []
    rss = []
    for i, batch in enumerate(it):
        consumed += batch.num_rows
        time.sleep(0.02)  # a throttled sink
        if i % 20 == 19:
            produced.append(q._run.executor.progress()[0])  # type: ignore[union-attr]
            rss.append(sum(_rss_mb(p.pid) for p in multiprocessing.active_children()))
        if i == 120:
            break
    it.close()
    # The sources are held back: what they read stays within the buffers' reach of what
    # the consumer took, and the workers' memory stays flat.
    assert produced[-1] - consumed < 40 * 8192
    assert max(rss[1:]) - min(rss[1:]) < 40, rss


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def test_metrics_per_task_with_latency_markers() -> None:
    s = session(20_000, {"parallelism.default": "2", "metrics.latency.interval": "10 ms",
                         "table.optimizer.agg-phase-strategy": "ONE_PHASE"})
    q = s.sql("SELECT auction, COUNT(*) AS n FROM bid GROUP BY auction")
    q.collect()
    m = q.metrics()
    tasks = {k: v for k, v in m.items() if "[" in k}
    assert {"v1[1/2]", "v1[2/2]", "v2[1/2]", "v2[2/2]"} <= set(tasks)
    bids = sum(v["records_out"] for k, v in tasks.items() if k.startswith("v1["))
    assert bids == len(tables(20_000)["bid"])
    assert all(v["bytes_out"] > 0 for k, v in tasks.items() if k.startswith("v1["))
    assert any(k.startswith("latency_ms.") for v in tasks.values() for k in v)
    # The aggregate keeps a slot per auction: its state is reported.
    assert m["v2.GroupAggregate"]["state_bytes"] > 8 * len(
        set(tables(20_000)["bid"].column("auction").to_pylist()))


# -- blocking exchanges and processing-time timers -------------------------------------------
def test_batch_mode_shuffles_are_blocking_and_spill_to_disk(tmp_path: Path) -> None:
    sql = "SELECT k % 7 AS b, COUNT(*) AS n, SUM(v) AS s FROM t GROUP BY k % 7"
    data = pa.table({"k": np.arange(200_000), "v": np.arange(200_000) * 3})
    got = {}
    for shuffle in ("ALL_EXCHANGES_BLOCKING", "ALL_EXCHANGES_PIPELINED"):
        s = sqlengine.connect({"parallelism.default": "2", "execution.runtime-mode": "batch",
                               "execution.batch-shuffle-mode": shuffle,
                               "io.tmp.dirs": str(tmp_path)})
        s.register("t", data)
        q = s.sql(sql)
        assert ("[BLOCKING]" in q.explain()) == (shuffle == "ALL_EXCHANGES_BLOCKING")
        got[shuffle] = sorted(tuple(r.values()) for r in q.collect().to_pylist())
    assert got["ALL_EXCHANGES_BLOCKING"] == got["ALL_EXCHANGES_PIPELINED"]
    assert len(got["ALL_EXCHANGES_BLOCKING"]) == 7
    assert list(tmp_path.iterdir()) == []  # the spilled results are gone
    with pytest.raises(SqlEngineError, match=r"execution\.batch-shuffle-mode"):  # (when set)
        sqlengine.connect({"parallelism.default": "2", "execution.runtime-mode": "batch",
                           "execution.batch-shuffle-mode": "sometimes"})


@pytest.mark.parametrize("p", ["1", "2"])
def test_processing_time_windows_fire_by_the_clock_without_new_rows(p: str) -> None:
    schema = pa.schema([("item", pa.string()), ("price", pa.int64())])

    def rows_then_quiet():
        yield pa.RecordBatch.from_pylist([{"item": "a", "price": 1},
                                          {"item": "b", "price": 2}], schema=schema)
        for _ in range(60):  # 1.2 s without a row
            time.sleep(0.02)
            yield None

    s = sqlengine.connect({"parallelism.default": p, "execution.buffer-timeout": "10 ms"})
    s.register("t0", rows_then_quiet())
    s.execute("CREATE VIEW t AS SELECT item, price, PROCTIME() AS pt FROM t0")
    sql = ("SELECT item, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(pt), "
           "INTERVAL '200' MILLISECOND)) GROUP BY item, window_start, window_end")
    started = time.monotonic()
    first = None
    total = 0
    for batch in s.sql(sql).stream():
        first = first if first is not None else time.monotonic() - started
        total += batch.num_rows
    assert total == 2
    assert first is not None and first < 0.9  # long before the input ends


def test_with_late_rows_more_parallelism_only_keeps_more_of_them() -> None:
    # Disorder (3 s) beyond the watermark bound (1 s): some rows are late. Which ones depends
    # on how channels interleave; but a channel's watermark never runs ahead of the single
    # stream's, so every row kept at parallelism 1 is kept at 2 and 4 too. (A window
    # aggregate: the TVF on its own keeps late rows, as Flink's.)
    sql = ("SELECT auction, bidder, price, dateTime, window_start, COUNT(*) AS n FROM "
           "TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '1' SECOND)) "
           "GROUP BY auction, bidder, price, dateTime, window_start, window_end")
    kept = {}
    dropped = {}
    for p in (1, 2, 4):
        q = _disordered_bids(p, 40_000, 3000).sql(sql)
        rows_p = [tuple(r.values()) for r in q.collect().to_pylist()]
        kept[p] = {r[:-1] for r in rows_p}
        dropped[p] = q.late_records_dropped
        # every bid is kept or counted as dropped
        assert sum(r[-1] for r in rows_p) + dropped[p] == 36_800
    assert dropped[1] > 100, dropped  # the input really has late rows
    assert kept[1] <= kept[2] and kept[1] <= kept[4]
    assert dropped[4] <= dropped[1] and dropped[2] <= dropped[1]


def test_range_partitioning_sends_each_key_range_to_its_subtask() -> None:
    from sqlengine.runtime.native.partitioner import RangePartitioner

    keys = (ColumnRef(0, "k", pa.int64()), ColumnRef(1, "s", pa.string()))
    bounds = pa.table({"k": [10, 20, 20], "s": ["m", "b", "x"]})
    part = RangePartitioner(4, keys, bounds)
    batch = pa.record_batch({"k": [5, 10, 10, 15, 20, 20, 20, 25, None],
                             "s": ["z", "a", "m", "a", "a", "c", "x", "a", "q"]})
    # Lexicographic on (k, s): below (10, 'm') -> 0; from it up to (20, 'b') -> 1; ...;
    # a row equal to a boundary goes after it; NULL sorts last.
    assert part.targets(batch).tolist() == [0, 0, 1, 1, 1, 2, 3, 3, 3]
    routed = dict(part.route(batch))
    assert routed[3].column(0).to_pylist() == [20, 25, None]


def test_sink_parallelism_is_honoured_where_the_sink_writes_in_parallel(tmp_path: Path) -> None:
    # A filesystem sink runs at 'sink.parallelism' (else the default), each subtask writing
    # part files of its own; every row is written once.
    s = sqlengine.connect({"parallelism.default": "2"})
    s.execute("CREATE TABLE g (a BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = "
              "'5000', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1', "
              "'fields.a.end' = '5000')")
    s.execute(f"CREATE TABLE out (a BIGINT) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path}/o', 'format' = 'csv', 'sink.parallelism' = '2')")
    plan = s.execute("EXPLAIN INSERT INTO out SELECT a * 2 FROM g")[0].message
    assert "parallelism=2]: Source(g) -> Project" in plan and "Sink(out)" in plan
    s.execute("INSERT INTO out SELECT a * 2 FROM g")
    parts = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert parts == ["part-0-0", "part-1-0"]
    values = sorted(int(line) for p in (tmp_path / "o").iterdir()
                    for line in p.read_text().splitlines())
    assert values == list(range(2, 10_001, 2))
    # INSERT OVERWRITE at another parallelism leaves only the new parts.
    s.execute("SET 'parallelism.default' = '1'")
    s.execute("INSERT OVERWRITE out SELECT a FROM g WHERE a <= 3")
    rows = sorted(int(line) for p in (tmp_path / "o").iterdir()
                  for line in p.read_text().splitlines())
    assert rows == [1, 2, 3]


def test_sink_parallelism_given_is_kept_behind_a_parallelism_1_input(tmp_path: Path) -> None:
    # (it was 1 then, the option ignored): the input is rebalanced to the sink's subtasks
    s = sqlengine.connect({"parallelism.default": "1"})
    s.register("t", pa.table({"a": list(range(1000))}))
    s.execute(f"CREATE TABLE out (a BIGINT) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path}/o', 'format' = 'csv', 'sink.parallelism' = '2')")
    plan = s.execute("EXPLAIN INSERT INTO out SELECT a FROM t")[0].message
    assert "--REBALANCE-->" in plan and "[parallelism=2]: Sink(out)" in plan
    s.execute("INSERT INTO out SELECT a FROM t")
    assert sorted(int(line) for p in (tmp_path / "o").iterdir()
                  for line in p.read_text().splitlines()) == list(range(1000))


def test_sink_parallelism_above_one_is_refused_where_the_sink_writes_once(tmp_path: Path
                                                                          ) -> None:
    s = sqlengine.connect({"parallelism.default": "2"})
    s.register("t", pa.table({"a": [1, 2]}))
    s.execute("CREATE TABLE out (a BIGINT) WITH ('connector' = 'print', "
              "'sink.parallelism' = '2')")
    with pytest.raises(SqlEngineError, match=r"'sink\.parallelism' = '2'"):
        s.execute("INSERT INTO out SELECT a FROM t")


# -- slot-sharing groups ---------------------------------------------------------------------
SHARING_SQL = ("SELECT k % 13 AS b, COUNT(*) AS n, SUM(v) AS s FROM t WHERE v % 5 > 0 "
               "GROUP BY k % 13 ORDER BY s DESC")


@pytest.mark.parametrize("mode", ["process", "thread"])
def test_batch_jobs_share_slots_per_pipelined_region(mode: str) -> None:
    from sqlengine.runtime.native.parallel import ParallelExecutor

    data = pa.table({"k": np.arange(100_000), "v": np.arange(100_000) * 3})
    got = {}
    for sharing in ("PER_REGION", "ALL"):
        s = sqlengine.connect({"execution.runtime-mode": "batch", "parallelism.default": "2",
                               "execution.native.task-mode": mode,
                               "execution.slot-sharing": sharing})
        s.register("t", data)
        q = s.sql(SHARING_SQL)
        job = s.job_graph(q.logical_plan)
        groups = {v.slot_sharing_group for v in job.vertices}
        # Vertices joined by a pipelined edge are in one region; blocking edges divide them.
        for e in job.edges:
            same = job.vertex(e.source).slot_sharing_group == \
                job.vertex(e.target).slot_sharing_group
            assert same == (sharing == "ALL" or not e.blocking), job.explain()
        assert (len(groups) > 2) == (sharing == "PER_REGION")
        slots = ParallelExecutor(job, s.options, s.memory_tables()).slots
        widest = {g: max(v.parallelism for v in job.vertices if v.slot_sharing_group == g)
                  for g in groups}
        assert slots == (sum(widest.values()) if mode == "process" else 1)
        got[sharing] = [tuple(r.values()) for r in q.collect().to_pylist()]
    assert got["PER_REGION"] == got["ALL"]
    assert len(got["ALL"]) == 13


def test_streaming_jobs_share_one_slot_group_and_the_option_is_checked() -> None:
    s = sqlengine.connect({"parallelism.default": "2"})
    s.register("t", pa.table({"k": [1, 2, 3], "v": [4, 5, 6]}))
    text = s.sql("SELECT k, COUNT(*) AS n FROM t GROUP BY k").explain()
    assert "slot-sharing" not in text
    with pytest.raises(SqlEngineError, match=r"'execution\.slot-sharing' must be one of "
                                             r"'ALL', 'PER_REGION', got 'SOMETIMES'"):
        s.execute("SET 'execution.slot-sharing' = 'SOMETIMES'")


@pytest.mark.parametrize(("connector", "key"), [
    ("filesystem", "sink.parallelism"), ("filesystem", "scan.parallelism"),
    ("datagen", "scan.parallelism"), ("print", "sink.parallelism")])
def test_a_parallelism_option_of_zero_is_refused(tmp_path: Path, connector: str,
                                                 key: str) -> None:
    """'0' was taken as the default parallelism; Flink refuses a parallelism below 1."""
    extra = {"filesystem": f", 'path' = '{tmp_path}', 'format' = 'csv'"}.get(connector, "")
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t (v INT) WITH ('connector' = '{connector}'{extra}, "
              f"'{key}' = '1')")
    with pytest.raises(sqlengine.SqlEngineError,
                       match=f"option '{key}' must be a positive integer, got '0'"):
        s.execute(f"CREATE TABLE u (v INT) WITH ('connector' = '{connector}'{extra}, "
                  f"'{key}' = '0')")
