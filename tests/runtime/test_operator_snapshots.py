"""Every stateful operator's declared state survives a checkpoint, operator by operator.

A query runs once (planned at its parallelism, run with one subtask per vertex) while every
operator's calls are recorded: its batches (with their row watermarks and row kinds), its
watermarks and ends of input. Each stateful operator's calls are then replayed into operators
built from the same spec: at every point of the sequence (after the first batch, in the
middle, after a watermark that fired windows, after the end) one operator's
``snapshot_state()`` is pickled and restored into a fresh, opened operator, which gets the
rest. Its output must be the uninterrupted operator's, call by call (rows, row kinds and row
watermarks); right after the restore, and at the end, every attribute of the restored operator
must equal the other's, so a field missing from ``state_fields`` fails here even when the
output does not show it (a counter of late rows). ``tests/checkpoint`` covers the same from
end to end, through the executors and the checkpoint files.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import functools
import importlib
import inspect
import pickle
import pkgutil
import random
import types
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import sqlengine
import sqlengine.runtime.native.executor as executor
import sqlengine.runtime.operators as operators_package
from sqlengine.optimizer.specs import OperatorSpec
from sqlengine.optimizer.specs_windows import MatchRecognizeSpec
from sqlengine.plan.expressions import AggCall, ColumnRef
from sqlengine.plan.nodes import SortKey
from sqlengine.query import collect_sink
from sqlengine.runtime.elements import (
    INSERT,
    ROWKIND,
    ROWKIND_NAMES,
    Watermark,
    has_rowkind,
)
from sqlengine.runtime.native import factory
from sqlengine.runtime.native.factory import SinkOperator, build_operator
from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
from sqlengine.runtime.operators.base import NotCheckpointable, Operator, OperatorContext
from sqlengine.runtime.operators.join import SMALL_BUILD, JoinOperator
from sqlengine.runtime.operators.range_sort import RangeSampleOperator
from sqlengine.runtime.operators.sink import ConnectorSink
from sqlengine.runtime.operators.sort import SortOperator
from sqlengine.runtime.operators.source import SourceOperator
from sqlengine.runtime.operators.two_phase import GlobalAggregateOperator
from tests.harness import TestStream

S = 1000  # one second in ms
BIDS = pa.schema([("item", pa.string()), ("price", pa.int64()), ("ts", pa.timestamp("ms"))])
CALLS = ("process_batch", "process_watermark", "end_input", "on_processing_time")
# Attributes that are caches of other state (rebuilt on demand), or the task's context.
NOT_STATE = {"_key_table", "_built_size", "_indexes", "ctx"}  # (caches, made again)


# -- inputs -----------------------------------------------------------------------------------
def bids(seed: int, batches: int = 7, rows: int = 5, disorder: int = 3 * S,
         items: str = "abcd") -> list[list[tuple]]:
    """Rows (item, price, ts ms) in batches, times rising with some disorder (rows behind the
    watermark of their batch: late)."""
    r = random.Random(seed)
    t = 0
    out = []
    for _ in range(batches):
        batch = []
        for _ in range(rows):
            t += r.randint(0, 1200)
            batch.append((r.choice(items), r.randint(1, 20), max(0, t - r.randint(0, disorder))))
        out.append(batch)
    return out


def stream(batches: list[list[tuple]], schema: pa.Schema = BIDS, lag: int = S) -> TestStream:
    """The batches with a watermark after each (the batch's latest time - ``lag``)."""
    out = TestStream(schema)
    wm = 0
    for rows in batches:
        out.add_batch(rows)
        wm = max(wm, max(r[-1] for r in rows) - lag)
        out.advance_watermark_to(wm)
    return out.advance_watermark_to_infinity()


def bounded(batches: list[list[tuple]], schema: pa.Schema = BIDS) -> Iterable[pa.RecordBatch]:
    """The batches as a plain bounded input (batch mode): no watermarks."""
    return iter([pa.RecordBatch.from_pylist([dict(zip(schema.names, r)) for r in rows],
                                            schema=schema) for rows in batches])


# -- recording and replaying -------------------------------------------------------------------
@dataclasses.dataclass
class Recorded:
    """One operator of a run: how to build another like it, and the calls it got."""

    make: Callable[[], Operator]
    options: dict[str, str]
    kind: str
    calls: list[tuple[str, tuple]]


def record(monkeypatch: pytest.MonkeyPatch, sql: str, tables: dict[str, tuple[Any, dict]],
           options: dict[str, str], ddl: str = "") -> list[Recorded]:
    """Run ``sql`` over ``tables`` (name -> (data, register keywords)) and the tables of
    ``ddl``; every operator's calls recorded. Planned at the options' parallelism (two-phase
    aggregation and range partitioned sorts appear only above 1), run with one subtask per
    vertex (the executor of this process: recording reaches its operators)."""
    recorded: list[Recorded] = []

    def recording(spec: OperatorSpec, built_tables: dict[str, object]) -> Operator:
        op = build_operator(spec, built_tables)
        calls: list[tuple[str, tuple]] = []
        recorded.append(Recorded(functools.partial(build_operator, spec, built_tables),
                                 options, type(op).__name__, calls))
        for name in CALLS:
            setattr(op, name, _logged(calls, name, getattr(op, name)))
        return op

    monkeypatch.setattr(factory, "build_operator", recording)  # (build_chain calls it)
    s = sqlengine.connect(options)
    for name, (data, keywords) in tables.items():
        s.register(name, data, **keywords)
    if ddl:
        s.execute(ddl)
    graph = s.job_graph(collect_sink(s.sql(sql).logical_plan))
    graph = dataclasses.replace(graph, vertices=tuple(
        dataclasses.replace(v, parallelism=1) for v in graph.vertices))
    list(executor.Executor(graph, dict(s.options), s.memory_tables()).run())
    return recorded


def _logged(calls: list[tuple[str, tuple]], name: str, inner: Callable[..., Any]
            ) -> Callable[..., Any]:
    def call(*args: Any) -> Any:
        calls.append((name, args))
        return inner(*args)
    return call


def fresh(r: Recorded) -> Operator:
    """A new operator like the recorded one, opened."""
    op = r.make()
    op.open(OperatorContext("test", "op", dict(r.options)))
    return op


def rows(out: Iterable[pa.RecordBatch]) -> list[tuple]:
    """Each row as (its kind, every other column: row watermarks included; by position, as a
    join's columns may share a name)."""
    result: list[tuple] = []
    for b in out:
        kinds = b.column(ROWKIND).to_pylist() if has_rowkind(b) else [INSERT] * b.num_rows
        cols = [c.to_pylist() for name, c in zip(b.schema.names, b.columns) if name != ROWKIND]
        result += [(ROWKIND_NAMES[k], *row) for k, row in zip(kinds, zip(*cols))]
    return result


def replay(op: Operator, calls: list[tuple[str, tuple]]) -> list[list[tuple]]:
    """The output of each call (its iterable consumed: some are lazy)."""
    return [rows(getattr(op, name)(*args)) for name, args in calls]


def restored(op: Operator, r: Recorded) -> Operator:
    """A fresh operator with ``op``'s state, through pickle (as a checkpoint stores it)."""
    blob = pickle.dumps(op.snapshot_state(), protocol=5)
    again = fresh(r)
    again.restore_state(pickle.loads(blob))
    return again


def difference(x: object, y: object, path: str = "") -> str | None:
    """Where two values differ (None: nowhere); objects by their pickled state."""
    if isinstance(x, types.FunctionType | types.MethodType | types.BuiltinFunctionType |
                  functools.partial | types.ModuleType):
        return None  # (functions compiled from the spec; the clock module)
    if isinstance(x, type):
        return None if x is y else f"{path}: {x} != {y}"
    if type(x) is not type(y):
        return f"{path}: {type(x).__name__} != {type(y).__name__}"
    if type(x).__module__.startswith("pyarrow"):
        return None if x.equals(y) else f"{path}: {x} != {y}"
    if isinstance(x, np.ndarray):
        if x.dtype != y.dtype or x.shape != y.shape:
            return f"{path}: {x.dtype}{x.shape} != {y.dtype}{y.shape}"
        return difference(x.tolist(), y.tolist(), path)
    if isinstance(x, np.random.Generator):
        return difference(x.bit_generator.state, y.bit_generator.state, path)
    if isinstance(x, dict):
        if list(x) != list(y):
            return f"{path}: keys {list(x)} != {list(y)}"
        return next((d for k in x if (d := difference(x[k], y[k], f"{path}[{k!r}]"))), None)
    if isinstance(x, list | tuple):
        if len(x) != len(y):
            return f"{path}: {len(x)} items != {len(y)}"
        return next((d for i, (a, b) in enumerate(zip(x, y))
                     if (d := difference(a, b, f"{path}[{i}]"))), None)
    if isinstance(x, float):
        return None if x == y or (x != x and y != y) else f"{path}: {x} != {y}"
    if isinstance(x, set | frozenset | str | bytes | int | decimal.Decimal | dt.datetime |
                  dt.date | type(None)):
        return None if x == y else f"{path}: {x!r} != {y!r}"
    return difference(x.__getstate__(), y.__getstate__(), f"{path}.")  # type: ignore[attr-defined]


def state_difference(a: Operator, b: Operator) -> str | None:
    return difference({k: v for k, v in vars(a).items() if k not in NOT_STATE},
                      {k: v for k, v in vars(b).items() if k not in NOT_STATE})


def check_restores(r: Recorded) -> tuple[Operator, list[list[tuple]]]:
    """Restored at every point of the recorded calls (and once after each call, one restore
    after the other), the operator emits what the uninterrupted one does and ends in its
    state."""
    reference_op = fresh(r)
    reference = replay(reference_op, r.calls)
    assert any(reference), f"{r.kind}: the case emits nothing (it tests nothing)"
    calls = r.calls
    for k in range(len(calls) + 1):
        op = fresh(r)
        got = replay(op, calls[:k])
        again = restored(op, r)
        where = f"{r.kind} restored after call {k} of {len(calls)}" + (
            f" ({calls[k - 1][0]})" if k else "")
        assert state_difference(op, again) is None, \
            f"{where}: differs right after the restore: {state_difference(op, again)}"
        got += replay(again, calls[k:])
        for i, (mine, theirs) in enumerate(zip(got, reference)):
            assert mine == theirs, f"{where}: call {i} ({calls[i][0]}) emitted otherwise"
        assert state_difference(again, reference_op) is None, \
            f"{where}: ends otherwise: {state_difference(again, reference_op)}"
    op = fresh(r)
    got = []
    for call in calls:  # (restored before every call: a restored state snapshots again)
        op = restored(op, r)
        got += replay(op, [call])
    assert got == reference, f"{r.kind}: restored before every call, emitted otherwise"
    return reference_op, reference


# -- the cases ---------------------------------------------------------------------------------
STREAMING = {"execution.runtime-mode": "streaming"}
BATCH = {"execution.runtime-mode": "batch"}
TUMBLE = "TABLE(TUMBLE(TABLE {t}, DESCRIPTOR(ts), INTERVAL '4' SECOND))"
LATE = {"table.exec.emit.allow-lateness": "3 s", "table.exec.emit.late-fire.enabled": "true"}


def ticker(seed: int) -> list[list[tuple]]:
    """Prices per symbol as a random walk, a row per 100 ms, in batches of 8."""
    r = random.Random(seed)
    price = {"x": 10, "y": 10}
    out, t = [], 0
    for _ in range(8):
        batch = []
        for _ in range(8):
            t += 100
            sym = r.choice("xy")
            price[sym] = max(1, price[sym] + r.randint(-3, 3))
            batch.append((sym, price[sym], t))
        out.append(batch)
    return out


def rates() -> list[list[tuple]]:
    """Versions of each item's rate (item, rate, ts)."""
    r = random.Random(5)
    return [[(r.choice("abcd"), r.randint(1, 9), t * 600 + i * 150) for i in range(4)]
            for t in range(7)]


def _streams(*seeds: int, disorder: int = 3 * S) -> dict[str, tuple[Any, dict]]:
    """bids (and asks) as scripted streams."""
    names = ("bids", "asks")
    return {names[i]: (stream(bids(seed, disorder=disorder)), {"rowtime": "ts",
                                                               "bounded": True})
            for i, seed in enumerate(seeds)}


def _watermarked(seed: int, disorder: int = 3 * S) -> dict[str, tuple[Any, dict]]:
    """bids with a WATERMARK expression: each row carries the watermark before it, so the
    watermark also moves inside a batch (sessions close there)."""
    return {"bids": (bounded(bids(seed, disorder=disorder)),
                     {"rowtime": "ts", "watermark": "ts - INTERVAL '1' SECOND"})}


def _tables(*seeds: int, batches: tuple[int, int] = (7, 7)) -> dict[str, tuple[Any, dict]]:
    """bids (and asks) as bounded inputs of so many batches."""
    names = ("bids", "asks")
    return {names[i]: (bounded(bids(seed, batches=batches[i])), {})
            for i, seed in enumerate(seeds)}


@dataclasses.dataclass
class Case:
    options: dict[str, str]
    tables: Callable[[], dict[str, tuple[Any, dict]]]
    sql: str
    expected: set[str]  # the stateful operators it must exercise
    ddl: Callable[[Path], str] | None = None  # tables in files (under the test's directory)
    late: bool = False  # one of the operators drops late rows
    updates: bool = False  # one of the operators emits -U / -D rows


def _stamp(ms: int) -> str:
    return (dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms)).isoformat(
        sep=" ", timespec="milliseconds")


def versioned(folder: Path) -> str:
    """bids and the versions of their rates (PRIMARY KEY item) as files, a file per batch
    (the filesystem source reads one batch from each, a watermark after each)."""
    for name, batches in (("bids", bids(27)), ("rates", rates())):
        (folder / name).mkdir()
        for i, rows_ in enumerate(batches):
            text = "".join(f"{a},{b},{_stamp(t)}\n" for a, b, t in rows_)
            (folder / name / f"{i:02}.csv").write_text(text)
    return f"""
        CREATE TABLE bids (item STRING, price BIGINT, ts TIMESTAMP(3),
          WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
          WITH ('connector' = 'filesystem', 'path' = '{folder}/bids', 'format' = 'csv');
        CREATE TABLE rates (item STRING, rate BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts,
          PRIMARY KEY (item) NOT ENFORCED)
          WITH ('connector' = 'filesystem', 'path' = '{folder}/rates', 'format' = 'csv');"""


CASES: dict[str, Case] = {
    "group_aggregate": Case(
        STREAMING, lambda: _streams(1),
        "SELECT item, COUNT(*) AS n, SUM(price) AS s, MIN(price) AS lo, AVG(price) AS a, "
        "COUNT(DISTINCT price) AS d FROM bids GROUP BY item",
        {"GroupAggregateOperator"}, updates=True),
    "group_aggregate_over_retractions": Case(
        STREAMING, lambda: _streams(2),
        "SELECT n, COUNT(*) AS items, MAX(s) AS hi, MIN(s) AS lo, SUM(s) AS total, "
        "COUNT(DISTINCT s) AS d FROM (SELECT item, COUNT(*) AS n, SUM(price) AS s FROM bids "
        "GROUP BY item) GROUP BY n",
        {"GroupAggregateOperator"}, updates=True),
    "group_aggregate_batch": Case(
        BATCH, lambda: _tables(3),
        "SELECT item, COUNT(*) AS n, SUM(price) AS s, MAX(price) AS hi FROM bids GROUP BY item",
        {"GroupAggregateOperator"}),
    "two_phase_batch": Case(  # (and the range-partitioned sort of a parallel ORDER BY)
        {**BATCH, "parallelism.default": "2", "table.optimizer.agg-phase-strategy":
         "TWO_PHASE"}, lambda: _tables(4),
        "SELECT item, COUNT(*) AS n, SUM(price) AS s, MIN(price) AS lo FROM bids GROUP BY item "
        "ORDER BY s DESC",
        {"GlobalAggregateOperator", "RangeSampleOperator", "RangeBoundariesOperator",
         "RangeAssignOperator", "SortOperator", "OrderedConcatOperator"}),
    "two_phase_streaming": Case(
        {**STREAMING, "parallelism.default": "2", "table.optimizer.agg-phase-strategy":
         "TWO_PHASE"}, lambda: _streams(5),
        "SELECT item, COUNT(*) AS n, SUM(price) AS s, MIN(price) AS lo, AVG(price) AS a "
        "FROM bids GROUP BY item",
        {"GroupAggregateOperator"}, updates=True),
    "tumble": Case(
        STREAMING, lambda: _streams(6, disorder=8 * S),
        f"SELECT item, window_start, COUNT(*) AS n, SUM(price) AS s, COUNT(DISTINCT price) AS d "
        f"FROM {TUMBLE.format(t='bids')} GROUP BY item, window_start, window_end",
        {"WindowAssignOperator", "WindowAggregateOperator"}, late=True),
    "tumble_with_allowed_lateness": Case(
        {**STREAMING, **LATE}, lambda: _streams(7, disorder=6 * S),
        f"SELECT item, window_start, COUNT(*) AS n, MAX(price) AS hi, COUNT(DISTINCT price) AS "
        f"d FROM {TUMBLE.format(t='bids')} GROUP BY item, window_start, window_end",
        {"WindowAssignOperator", "WindowAggregateOperator"}, updates=True),
    "hop": Case(
        STREAMING, lambda: _streams(8, disorder=12 * S),
        "SELECT item, window_start, COUNT(*) AS n, SUM(price) AS s FROM TABLE(HOP(TABLE bids, "
        "DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND)) "
        "GROUP BY item, window_start, window_end",
        {"WindowAssignOperator", "WindowAggregateOperator"}, late=True),
    "hop_two_phase": Case(  # (a local pre-aggregation per slice, merged after the shuffle)
        {**STREAMING, "parallelism.default": "2"}, lambda: _streams(10, disorder=12 * S),
        "SELECT item, window_start, COUNT(*) AS n, SUM(price) AS s, MAX(price) AS hi "
        "FROM TABLE(HOP(TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '6' SECOND)) "
        "GROUP BY item, window_start, window_end",
        {"WindowAssignOperator", "GlobalWindowAggregateOperator"}, late=True),
    "tumble_two_phase": Case(
        {**STREAMING, "parallelism.default": "2"}, lambda: _streams(11, disorder=8 * S),
        f"SELECT item, window_start, COUNT(*) AS n, SUM(price) AS s, MIN(price) AS lo "
        f"FROM {TUMBLE.format(t='bids')} GROUP BY item, window_start, window_end",
        {"WindowAssignOperator", "GlobalWindowAggregateOperator"}, late=True),
    "cumulate": Case(
        STREAMING, lambda: _streams(9, disorder=12 * S),
        "SELECT window_start, window_end, COUNT(*) AS n, SUM(price) AS s FROM TABLE(CUMULATE("
        "TABLE bids, DESCRIPTOR(ts), INTERVAL '2' SECOND, INTERVAL '8' SECOND)) "
        "GROUP BY window_start, window_end",
        {"WindowAssignOperator", "WindowAggregateOperator"}, late=True),
    "session_aggregate": Case(
        STREAMING, lambda: _watermarked(10, disorder=8 * S),
        "SELECT item, window_start, window_end, COUNT(*) AS n, SUM(price) AS s FROM TABLE("
        "SESSION(TABLE bids PARTITION BY item, DESCRIPTOR(ts), INTERVAL '2' SECOND)) "
        "GROUP BY item, window_start, window_end",
        {"SessionAggregateOperator"}, late=True),
    "session_tvf": Case(
        STREAMING, lambda: _watermarked(11, disorder=8 * S),
        "SELECT * FROM TABLE(SESSION(TABLE bids PARTITION BY item, DESCRIPTOR(ts), "
        "INTERVAL '2' SECOND))",
        {"SessionAssignOperator"}),
    "deduplicate_first_row": Case(
        STREAMING, lambda: _streams(12),
        "SELECT item, price, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY "
        "ts) AS rn FROM bids) WHERE rn = 1",
        {"FirstRowOperator"}, late=True),
    "deduplicate_last_row": Case(
        STREAMING, lambda: _streams(13),
        "SELECT item, price, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY "
        "ts DESC) AS rn FROM bids) WHERE rn = 1",
        {"TopNOperator"}, updates=True),
    "top_n": Case(
        STREAMING, lambda: _streams(14),
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY price DESC) "
        "AS rn FROM bids) WHERE rn <= 2",
        {"TopNOperator"}, updates=True),
    "top_n_batch": Case(
        BATCH, lambda: _tables(15),
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY price DESC) "
        "AS rn FROM bids) WHERE rn <= 2",
        {"TopNOperator"}),
    "window_top_n": Case(
        STREAMING, lambda: _streams(16),
        f"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY window_start, window_end "
        f"ORDER BY price DESC) AS rn FROM {TUMBLE.format(t='bids')}) WHERE rn <= 2",
        {"WindowTopNOperator"}),
    "window_functions_per_window": Case(
        STREAMING, lambda: _streams(16),
        f"SELECT *, RANK() OVER (PARTITION BY window_start, window_end ORDER BY price DESC) "
        f"AS r, SUM(price) OVER (PARTITION BY window_start, window_end, item ORDER BY ts) AS s "
        f"FROM {TUMBLE.format(t='bids')}",
        {"WindowedFunctionsOperator"}),
    "join_inner": Case(
        STREAMING, lambda: _streams(17, 18),
        "SELECT B.item, B.price, A.price AS ask FROM bids B JOIN asks A ON B.item = A.item "
        "AND B.price < A.price",
        {"JoinOperator"}),
    "join_left_over_retractions": Case(
        STREAMING, lambda: _streams(19, 20),
        "SELECT B.item, B.price, A.hi FROM bids B LEFT JOIN (SELECT item, MAX(price) AS hi "
        "FROM asks WHERE price > 8 GROUP BY item) A ON B.item = A.item AND B.price >= A.hi",
        {"JoinOperator", "GroupAggregateOperator"}, updates=True),
    "join_full": Case(
        STREAMING, lambda: _streams(21, 22),
        "SELECT L.item, L.n, R.n FROM (SELECT item, COUNT(*) AS n FROM bids WHERE price > 5 "
        "GROUP BY item) L FULL JOIN (SELECT item, COUNT(*) AS n FROM asks WHERE price > 12 "
        "GROUP BY item) R ON L.item = R.item AND L.n <= R.n",
        {"JoinOperator"}, updates=True),
    "join_semi": Case(
        STREAMING, lambda: _streams(38, 39),
        "SELECT * FROM bids WHERE item IN (SELECT item FROM (SELECT item, MAX(price) AS hi "
        "FROM asks GROUP BY item) WHERE hi < 18)",
        {"JoinOperator"}, updates=True),
    "join_anti": Case(
        STREAMING, lambda: _streams(40, 41),
        "SELECT * FROM bids B WHERE NOT EXISTS (SELECT * FROM asks A WHERE A.item = B.item "
        "AND A.price > B.price)",
        {"JoinOperator"}, updates=True),
    "join_batch": Case(
        BATCH, lambda: _tables(23, 24, batches=(7, 2)),
        "SELECT B.item, B.price, A.price FROM bids B LEFT JOIN asks A ON B.item = A.item "
        "AND A.price > B.price + 5",
        {"JoinOperator"}),
    "interval_join": Case(
        STREAMING, lambda: _streams(25, 26),
        "SELECT B.item, B.price, A.price FROM bids B LEFT JOIN asks A ON B.item = A.item AND "
        "B.ts BETWEEN A.ts - INTERVAL '1' SECOND AND A.ts + INTERVAL '2' SECOND",
        {"IntervalJoinOperator"}, late=True),
    "temporal_join": Case(
        STREAMING, dict,
        "SELECT B.item, B.price, R.rate FROM bids B LEFT JOIN rates FOR SYSTEM_TIME AS OF "
        "B.ts AS R ON B.item = R.item",
        {"TemporalJoinOperator"}, versioned),
    "temporal_join_batch": Case(
        BATCH, dict,
        "SELECT B.item, B.price, R.rate FROM bids B JOIN rates FOR SYSTEM_TIME AS OF "
        "B.ts AS R ON B.item = R.item AND R.rate > 2",
        {"TemporalJoinOperator"}, versioned),
    "window_join": Case(
        STREAMING, lambda: _streams(28, 29, disorder=8 * S),
        f"SELECT L.item, L.window_start, L.price, R.price FROM (SELECT * FROM "
        f"{TUMBLE.format(t='bids')}) L LEFT JOIN (SELECT * FROM {TUMBLE.format(t='asks')}) R "
        f"ON L.item = R.item AND L.window_start = R.window_start AND "
        f"L.window_end = R.window_end",
        {"WindowJoinOperator"}, late=True),
    "over_rows": Case(
        STREAMING, lambda: _watermarked(30, disorder=5 * S),
        "SELECT item, price, SUM(price) OVER (PARTITION BY item ORDER BY ts ROWS BETWEEN 2 "
        "PRECEDING AND CURRENT ROW) AS s, MAX(price) OVER (PARTITION BY item ORDER BY ts ROWS "
        "BETWEEN 2 PRECEDING AND CURRENT ROW) AS hi FROM bids",
        {"OverAggregateOperator"}),
    "over_range": Case(
        STREAMING, lambda: _streams(31),
        "SELECT item, price, COUNT(*) OVER (PARTITION BY item ORDER BY ts RANGE BETWEEN "
        "INTERVAL '2' SECOND PRECEDING AND CURRENT ROW) AS n FROM bids",
        {"OverAggregateOperator"}, late=True),
    "over_unbounded": Case(
        STREAMING, lambda: _streams(32),
        "SELECT item, price, AVG(price) OVER (PARTITION BY item ORDER BY ts RANGE BETWEEN "
        "UNBOUNDED PRECEDING AND CURRENT ROW) AS a FROM bids",
        {"OverAggregateOperator"}),
    "match_recognize": Case(
        STREAMING, lambda: {"ticker": (stream(ticker(33), lag=150),
                                       {"rowtime": "ts", "bounded": True})},
        "SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY item ORDER BY ts MEASURES "
        "FIRST(A.price) AS first_price, AVG(A.price) AS avg_price, COUNT(A.price) AS n, "
        "LAST(B.price) AS last_price ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW "
        "PATTERN (A+ B) WITHIN INTERVAL '2' SECOND DEFINE A AS AVG(A.price) < 14, "
        "B AS B.price > LAST(A.price, 0) + 1)",
        {"MatchRecognizeOperator"}),
    "iterate_batch": Case(
        BATCH, lambda: _tables(37),
        "WITH RECURSIVE t(item, p) AS (SELECT item, CAST(price AS DOUBLE) FROM bids UNION "
        "SELECT item, p * 2 FROM t WHERE p BETWEEN 1 AND 1000) SELECT item, p FROM t",
        {"IterateOperator"}),
    "temporal_sort": Case(  # (the watermark moving inside batches, late rows)
        STREAMING, lambda: _watermarked(41, disorder=4 * S),
        "SELECT item, price, ts FROM bids ORDER BY ts, price DESC",
        {"TemporalSortOperator"}, late=True),
    "sort_limit_batch": Case(
        BATCH, lambda: _tables(34),
        "SELECT * FROM bids ORDER BY price DESC, ts LIMIT 6 OFFSET 2",
        {"SortOperator"}),
    "limit_streaming": Case(
        STREAMING, lambda: _streams(35),
        "SELECT * FROM bids LIMIT 17",
        {"LimitOperator"}),
    "limit_over_updates_batch": Case(
        BATCH, lambda: _tables(36),
        "SELECT item, COUNT(*) AS n FROM bids GROUP BY item LIMIT 3",
        {"LimitOperator"}),
    "window_functions_batch": Case(
        BATCH, lambda: _tables(37),
        "SELECT item, price, RANK() OVER (PARTITION BY item ORDER BY price) AS r, SUM(price) "
        "OVER (PARTITION BY item ORDER BY ts ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s, "
        "LAG(price) OVER (ORDER BY ts) AS prev FROM bids",
        {"WindowFunctionsOperator"}),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_operator_restores_at_every_point(name: str, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path) -> None:
    case = CASES[name]
    expected = case.expected
    recorded = [r for r in record(monkeypatch, case.sql, case.tables(), case.options,
                                  case.ddl(tmp_path) if case.ddl else "")
                if r.kind not in ("SourceOperator", "SinkOperator")]
    checked = {r.kind for r in recorded if type(fresh(r)).state_fields}
    assert expected <= checked, f"the plan has {sorted(checked)}"
    late = updates = False
    for r in recorded:
        if r.kind in expected:
            op, out = check_restores(r)
            # (an interval join keeps late rows that can still match: Flink's rule)
            late = late or bool(getattr(op, "late_dropped", 0)
                                or getattr(op, "late_arrivals", 0))
            updates = updates or any(row[0] in ("-U", "-D") for call in out for row in call)
    assert (late, updates) >= (case.late, case.updates), "the input misses what it tests"


def test_the_cases_cover_every_stateful_operator() -> None:
    stateful = {c.__name__ for c in _operator_classes() if c.state_fields}
    covered = set().union(*(case.expected for case in CASES.values()))
    assert stateful - covered == set()


# -- by hand -----------------------------------------------------------------------------------
class Clock:
    """A monotonic clock set by hand (each process's starts elsewhere)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


K = ColumnRef(0, "k", pa.string())
V = ColumnRef(1, "v", pa.int64())
KV = pa.schema([("k", pa.string()), ("v", pa.int64())])


def _kv(rows_: list[tuple]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{"k": k, "v": v} for k, v in rows_], schema=KV)


def test_a_long_match_pickles() -> None:
    """A partial match of 400 rows: its chain of nodes is pickled flat (pickle recursing
    once per row would exceed the recursion limit past about 240)."""
    rows_ = [("x", 0 if i == 0 else 10 + i % 7, i * 10) for i in range(400)]
    s = sqlengine.connect(STREAMING)
    s.register("ticker", stream([rows_[i:i + 100] for i in range(0, 400, 100)], lag=0),
               rowtime="ts", bounded=True)
    sql = ("SELECT * FROM ticker MATCH_RECOGNIZE (PARTITION BY item ORDER BY ts MEASURES "
           "COUNT(A.price) AS n, SUM(A.price) AS s ONE ROW PER MATCH PATTERN (Z A+ B) DEFINE "
           "Z AS Z.price = 0, A AS A.price > 0, B AS B.price < 0)")
    graph = s.job_graph(collect_sink(s.sql(sql).logical_plan))
    spec = next(sp for v in graph.vertices for sp in v.chain
                if isinstance(sp, MatchRecognizeSpec))
    r = Recorded(functools.partial(build_operator, spec, {}), STREAMING,
                 "MatchRecognizeOperator", [])
    op = fresh(r)
    batch = pa.RecordBatch.from_pylist([dict(zip(BIDS.names, row)) for row in rows_], BIDS)
    op.process_batch(batch)
    op.process_watermark(Watermark(10_000))
    (key,) = op.keys.values()  # type: ignore[attr-defined]
    assert max(p.last.length for p in key.partials) == 400
    again = restored(op, r)
    assert state_difference(op, again) is None
    (key,) = again.keys.values()  # type: ignore[attr-defined]
    assert max(p.last.length for p in key.partials) == 400


def test_a_batch_join_restores_its_probing_rows() -> None:
    """A built side of more than SMALL_BUILD rows: probing rows wait (``pending``) until they
    are as many; a FULL join tracks the built side's matched rows too."""
    def join() -> Operator:
        return JoinOperator("full", (K,), (K,), None, KV, KV, pa.schema([*KV, *KV]), "final")

    build = _kv([(f"k{i % 5000}", i) for i in range(SMALL_BUILD + 1000)])
    probes = [_kv([(f"k{(i * 7 + j) % 6000}", j) for j in range(2500)]) for i in range(5)]
    r = Recorded(join, BATCH, "JoinOperator",
                 [("process_batch", (build, 1)), ("end_input", (1,)),
                  *[("process_batch", (b, 0)) for b in probes], ("end_input", (0,))])
    _, out = check_restores(r)
    assert [len(o) for o in out[2:5]] == [0, 0, 0]  # (the first probing rows waited)


def test_a_range_sample_restores_its_random_state() -> None:
    """A reservoir of 6 over 60 rows: which rows replace which depends on the generator's
    state, restored with the sample."""
    r = Recorded(lambda: RangeSampleOperator((SortKey(V),), 6), BATCH, "RangeSampleOperator",
                 [("process_batch", (_kv([(f"k{i}", i * 10 + j) for j in range(10)]),))
                  for i in range(6)] + [("end_input", (0,))])
    check_restores(r)


def test_a_join_with_ttl_keeps_its_rows_ages_across_processes() -> None:
    """State rows expire by how long ago they were written: a restore on a clock that reads
    something else entirely keeps their ages."""
    def join(clock: Clock) -> JoinOperator:
        op = JoinOperator("inner", (K,), (K,), None, KV, KV, pa.schema([*KV, *KV]), "stream",
                          ttl_ms=10_000, clock=clock)
        op.open(OperatorContext())
        return op

    before = Clock(5_000.0)
    op = join(before)
    op.process_batch(_kv([("a", 1)]), 0)
    before.now += 4.0
    state = pickle.loads(pickle.dumps(op.snapshot_state(), protocol=5))
    assert state["state"][0]["$t"].to_pylist() == [4.0]  # (its age)
    after = Clock(12.0)  # (another process)
    again = join(after)
    again.restore_state(state)
    after.now += 5.0  # 9 s old: still there
    assert rows(again.process_batch(_kv([("a", 2)]), 1)) == [("+I", "a", 1, "a", 2)]
    after.now += 2.0  # 11 s old: expired
    assert rows(again.process_batch(_kv([("a", 3)]), 1)) == []


def test_a_group_by_with_ttl_keeps_its_groups_ages_across_processes() -> None:
    """A group's last row is kept as its age in a checkpoint: after a restore on a clock
    that reads something else entirely (and at another parallelism) the group expires when
    it would have, counting the time the job was up only."""
    aggs = (AggCall("count_star", (), pa.int64()),)
    out = pa.schema([("k", pa.string()), ("n", pa.int64())])

    def agg(clock: Clock) -> GroupAggregateOperator:
        op = GroupAggregateOperator((K,), aggs, out, "changelog", ttl_ms=10_000, clock=clock)
        op.open(OperatorContext())
        return op

    for parallelism in (1, 2):
        before = Clock(5_000.0)
        op = agg(before)
        list(op.process_batch(_kv([("a", 1)])))
        before.now += 4.0
        list(op.process_batch(_kv([("b", 1)])))  # (b: 0 s old, a: 4 s)
        state = pickle.loads(pickle.dumps(op.snapshot_state(), protocol=5))
        after = Clock(12.0)  # (another process)
        again = agg(after)
        if parallelism == 1:
            again.restore_state(state)
        else:  # (from two old subtasks, one of them empty)
            again.restore_from([state, agg(Clock(0.0)).snapshot_state()], 0, 1)
        after.now += 5.0  # a 9 s old, b 5 s: both there
        assert rows(again.process_batch(_kv([("b", 1)]))) == [("-U", "b", 1), ("+U", "b", 2)]
        after.now += 2.0  # a 11 s old: expired, its next row an INSERT; b 2 s: there
        assert rows(again.process_batch(_kv([("a", 1), ("b", 1)]))) == [
            ("+I", "a", 1), ("-U", "b", 2), ("+U", "b", 3)]


def test_top_n_and_deduplication_with_ttl_keep_their_ages_across_processes() -> None:
    """As a GROUP BY's: a partition's last write is checkpointed as its age, kept by a
    restore on another clock and at another parallelism."""
    from sqlengine.runtime.operators.deduplicate import FirstRowOperator
    from sqlengine.runtime.operators.rank import TopNOperator

    out = pa.schema([*KV, ("rn", pa.int64())])
    makers = {
        "top": lambda c: TopNOperator((K,), (SortKey(V),), 1, out, "changelog", False,
                                      keep="LastRow", time_kind="PROCTIME", ttl_ms=10_000,
                                      clock=c),
        "first": lambda c: FirstRowOperator((K,), out, None, ttl_ms=10_000, clock=c)}
    for name, make in makers.items():
        for parallelism in (1, 2):
            before = Clock(5_000.0)
            op = make(before)
            op.open(OperatorContext())
            list(op.process_batch(_kv([("a", 1)])))
            before.now += 4.0
            list(op.process_batch(_kv([("b", 1)])))  # (b: 0 s old, a: 4 s)
            state = pickle.loads(pickle.dumps(op.snapshot_state(), protocol=5))
            after = Clock(12.0)
            again = make(after)
            again.open(OperatorContext())
            if parallelism == 1:
                again.restore_state(state)
            else:
                empty = make(Clock(0.0))
                empty.open(OperatorContext())
                again.restore_from([state, empty.snapshot_state()], 0, 1)
            after.now += 7.0  # a 11 s old: forgotten; b 7 s: there
            got = rows(again.process_batch(_kv([("a", 2), ("b", 2)])))
            if name == "top":
                assert got == [("-U", "b", 1, 1), ("+U", "b", 2, 1), ("+I", "a", 2, 1)]
            else:
                assert got == [("+I", "a", 2, 1)]


def test_operators_that_spilled_refuse_a_snapshot(tmp_path: Path) -> None:
    """Rows on disk are not in a checkpoint (spilling is batch mode's)."""
    aggs = (AggCall("count_star", (), pa.int64()),)
    agg = GroupAggregateOperator((K,), aggs, pa.schema([("k", pa.string()),
                                                        ("n", pa.int64())]), "final")
    agg.open(OperatorContext())
    agg.process_batch(_kv([("a", 1)]))
    agg.snapshot_state()  # (in memory: fine)
    assert agg.spill(str(tmp_path))
    agg.process_batch(_kv([("b", 1)]))  # (a group not in memory: to disk)
    with pytest.raises(NotCheckpointable):
        agg.snapshot_state()
    list(agg.end_input())  # (even once the spilled groups are out)
    with pytest.raises(NotCheckpointable):
        agg.snapshot_state()

    join = JoinOperator("inner", (K,), (K,), None, KV, KV, pa.schema([*KV, *KV]), "final")
    join.open(OperatorContext())
    join.process_batch(_kv([("a", 1)]), 0)
    join.snapshot_state()
    assert join.spill(str(tmp_path))
    with pytest.raises(NotCheckpointable):
        join.snapshot_state()
    join.close()

    partial = pa.schema([("k0", pa.string()), ("c0", pa.int64())])
    glob = GlobalAggregateOperator((K,), aggs, partial, pa.schema([("k", pa.string()),
                                                                   ("n", pa.int64())]))
    glob.open(OperatorContext())
    glob.process_batch(pa.RecordBatch.from_pylist([{"k0": "a", "c0": 2}], schema=partial))
    glob.snapshot_state()
    assert glob.spill(str(tmp_path))
    with pytest.raises(NotCheckpointable):
        glob.snapshot_state()
    glob.close()

    sort = SortOperator((SortKey(V),), None, 0, KV)
    sort.open(OperatorContext())
    sort.process_batch(_kv([("a", 2), ("b", 1)]))
    sort.snapshot_state()
    assert sort.spill(str(tmp_path))
    with pytest.raises(NotCheckpointable):
        sort.snapshot_state()
    assert rows(sort.end_input()) == [("+I", "b", 1), ("+I", "a", 2)]
    with pytest.raises(NotCheckpointable):
        sort.snapshot_state()


def test_a_group_aggregate_snapshot_holds_its_keys_once() -> None:
    """The key table is a cache of the key chunks: not in the snapshot (every key twice)."""
    aggs = (AggCall("sum", (V,), pa.int64()),)
    op = GroupAggregateOperator((K,), aggs, pa.schema([("k", pa.string()), ("s", pa.int64())]),
                                "changelog")
    op.open(OperatorContext())
    op.process_batch(_kv([(f"key-{i:05}", i) for i in range(2000)]))
    assert op._key_table is not None  # (built to emit the changes)
    state = op.snapshot_state()
    assert "_key_table" not in state
    assert sum(b.nbytes for b in state["key_chunks"]) == op.key_bytes  # type: ignore[attr-defined]


# -- declarations ------------------------------------------------------------------------------
def _operator_classes() -> set[type[Operator]]:
    modules = [importlib.import_module(f"{operators_package.__name__}.{m.name}")
               for m in pkgutil.iter_modules(operators_package.__path__)]
    return {c for m in [*modules, factory] for _, c in inspect.getmembers(m, inspect.isclass)
            if issubclass(c, Operator) and c is not Operator}


# Sources and sinks take part in checkpoints by a protocol of their own (split positions; a
# writer's two-phase commit): they override snapshot_state and restore_from instead.
OWN_PROTOCOL = {SourceOperator, ConnectorSink, SinkOperator}


def test_every_operator_declares_its_state() -> None:
    classes = _operator_classes()
    assert len(classes) > 30
    undeclared = sorted(c.__name__ for c in classes - OWN_PROTOCOL if c.state_fields is None)
    assert undeclared == []
    for c in OWN_PROTOCOL:
        assert "snapshot_state" in vars(c) and "restore_from" in vars(c), c.__name__
