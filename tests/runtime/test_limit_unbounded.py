"""LIMIT over an unbounded source finishes the job once it has its rows (streaming mode, any
parallelism, either task mode): the sources nothing needs any more are cancelled.

Each run takes about a second here; the bounds leave 10x headroom or more for a busy machine.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine

ROOT = Path(__file__).resolve().parents[2]
BOUND_S = 30.0

ENDLESS = "CREATE TABLE g (a INT, b STRING) WITH ('connector' = 'datagen', 'seed' = '7')"
MODES = [{"parallelism.default": "1"},
         {"parallelism.default": "2"},
         {"parallelism.default": "2", "execution.native.task-mode": "thread"}]


def _rows(q: sqlengine.Query) -> pa.Table:
    """The streamed rows (insert-only here), without the op column. (collect() refuses a
    query over an unbounded source at plan time, LIMIT or not.)"""
    batches = list(q.stream())
    assert all(op == "+I" for b in batches for op in b.column("op").to_pylist())
    tables = [pa.Table.from_batches([b]).drop_columns(["op"]) for b in batches]
    return pa.concat_tables(tables) if tables else pa.table({})


def _timed(fn):  # type: ignore[no-untyped-def]
    started = time.monotonic()
    out = fn()
    elapsed = time.monotonic() - started
    assert elapsed < BOUND_S, f"took {elapsed:.1f} s"
    return out


@pytest.mark.parametrize("options", MODES, ids=["p1", "p2-process", "p2-thread"])
def test_limit_over_endless_datagen_finishes(options: dict[str, str]) -> None:
    s = sqlengine.connect(options)
    s.execute(ENDLESS)
    q = s.sql("SELECT a, b FROM g WHERE a IS NOT NULL LIMIT 5")
    table = _timed(lambda: _rows(q))
    assert table.num_rows == 5 and table.column_names == ["a", "b"]
    limit = next(v for k, v in q.metrics().items() if k.endswith(".Limit"))
    assert limit["records_out"] == 5


@pytest.mark.parametrize("options", MODES, ids=["p1", "p2-process", "p2-thread"])
def test_limit_with_offset_over_nexmark_without_an_end(options: dict[str, str]) -> None:
    s = sqlengine.connect(options)
    s.execute("CREATE TABLE bid (auction BIGINT, price BIGINT) WITH ('connector' = 'nexmark', "
              "'nexmark.table' = 'bid')")
    rows = _timed(lambda: list(s.sql("SELECT auction, price FROM bid LIMIT 3 OFFSET 4")
                               .stream()))
    assert sum(b.num_rows for b in rows) == 3


def test_streaming_the_rows_ends_the_iteration() -> None:
    s = sqlengine.connect()
    s.execute(ENDLESS)
    batches = _timed(lambda: list(s.sql("SELECT a FROM g LIMIT 7").stream()))
    assert sum(b.num_rows for b in batches) == 7
    assert all(op == "+I" for b in batches for op in b.column("op").to_pylist())


@pytest.mark.parametrize("p", ["1", "2"])
def test_limit_zero_finishes_without_any_input(p: str) -> None:
    # A socket peer that never sends anything: the job must not wait for it.
    server = socket.create_server(("localhost", 0))
    port = server.getsockname()[1]
    try:
        s = sqlengine.connect({"parallelism.default": p})
        s.execute(f"CREATE TABLE s (name STRING, n INT) WITH ('connector' = 'socket', "
                  f"'port' = '{port}')")
        assert _timed(lambda: _rows(s.sql("SELECT name FROM s LIMIT 0"))).num_rows == 0
    finally:
        server.close()


@pytest.mark.parametrize("p", ["1", "2"])
def test_limit_over_a_socket_that_stays_open(p: str) -> None:
    server = socket.create_server(("localhost", 0))
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"a,1\nb,2\nc,3\n")
            stop.wait(60)  # the peer keeps the connection open, sending nothing more

    threading.Thread(target=serve, daemon=True).start()
    try:
        s = sqlengine.connect({"parallelism.default": p})
        s.execute(f"CREATE TABLE s (name STRING, n INT) WITH ('connector' = 'socket', "
                  f"'port' = '{port}')")
        table = _timed(lambda: _rows(s.sql("SELECT name, n FROM s LIMIT 2")))
        assert table.to_pydict() == {"name": ["a", "b"], "n": [1, 2]}
    finally:
        stop.set()
        server.close()


def test_limit_over_an_endless_registered_iterator() -> None:
    def endless() -> Iterator[pa.RecordBatch]:
        i = 0
        while True:
            yield pa.record_batch({"x": pa.array(range(i, i + 10), pa.int64())})
            i += 10

    s = sqlengine.connect()
    s.register("it", endless(), bounded=False)
    table = _timed(lambda: _rows(s.sql("SELECT x FROM it WHERE x % 3 = 0 LIMIT 4")))
    assert table.column("x").to_pylist() == [0, 3, 6, 9]


@pytest.mark.parametrize("p", ["1", "2"])
def test_a_limited_branch_ends_while_the_other_branch_runs_to_its_end(p: str) -> None:
    s = sqlengine.connect({"parallelism.default": p})
    s.execute(ENDLESS)
    s.execute("CREATE TABLE f (a INT, b STRING) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '100')")
    table = _timed(lambda: _rows(s.sql(
        "SELECT a FROM (SELECT a FROM g LIMIT 3) UNION ALL SELECT a FROM f")))
    assert table.num_rows == 103


@pytest.mark.parametrize("p", ["1", "2"])
def test_insert_with_limit_from_an_endless_source_finishes(tmp_path: Path, p: str) -> None:
    s = sqlengine.connect({"parallelism.default": p})
    s.execute(ENDLESS)
    s.execute(f"CREATE TABLE out (a INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'out'}', 'format' = 'csv')")
    _timed(lambda: s.execute("INSERT INTO out SELECT a FROM g LIMIT 10"))
    s.execute(f"CREATE TABLE back (a INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'out'}', 'format' = 'csv')")
    s.set("execution.runtime-mode", "batch")
    assert s.sql("SELECT COUNT(*) AS n FROM back").collect().to_pydict() == {"n": [10]}


def test_the_cli_finishes_a_limit_over_an_endless_source(tmp_path: Path) -> None:
    script = tmp_path / "limit.sql"
    script.write_text(f"SET 'parallelism.default' = '2';\n{ENDLESS};\n"
                      "SELECT a FROM g LIMIT 5;\n")
    proc = _timed(lambda: subprocess.run(
        [sys.executable, "-m", "sqlengine.shell.cli", "run", "--format", "csv", str(script)],
        cwd=ROOT, capture_output=True, text=True, timeout=BOUND_S * 2, check=False))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "op,a" and len(lines) == 6


class _Recorder:
    """The tail of a chain: keeps its rows and counts the ends of its input."""

    def __init__(self) -> None:
        from sqlengine.runtime.operators.sink import CollectSink

        self.sink = CollectSink()
        self.ends = 0
        self.sink.end_input = self._end  # type: ignore[method-assign]

    def _end(self, input_index: int = 0) -> tuple[()]:
        self.ends += 1
        return ()


def test_a_chain_ends_once_after_its_first_done_limit() -> None:
    from sqlengine.runtime.native.chain import ChainedTask
    from sqlengine.runtime.operators.sort import LimitOperator

    schema = pa.schema([("x", pa.int64())])
    tail = _Recorder()
    chain = ChainedTask("v1", [LimitOperator(5, 0, schema, False),
                               LimitOperator(3, 1, schema, False), tail.sink],
                        ["Limit", "Limit", "Collect"], 1, {})
    chain.process(pa.record_batch({"x": pa.array([0, 1], pa.int64())}))
    assert not chain.finished
    chain.process(pa.record_batch({"x": pa.array([2, 3, 4, 5], pa.int64())}))
    # The second limit (3 rows after 1) is done first, at row 3 of its input.
    assert chain.finished and tail.ends == 1
    chain.process(pa.record_batch({"x": pa.array([6], pa.int64())}))  # dropped
    assert chain.end_input(0) and tail.ends == 1
    rows = [v for b in tail.sink.drain() for v in b.column(0).to_pylist()]
    assert rows == [1, 2, 3]


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_collect_of_a_limit_over_an_unbounded_source(parallelism: str) -> None:
    # collect() refused this before ("needs a bounded result"): the LIMIT bounds the result.
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": parallelism})
    s.execute("CREATE TABLE g (k INT, v STRING) WITH ('connector' = 'datagen')")
    assert s.sql("SELECT k FROM g WHERE k IS NOT NULL LIMIT 7").collect().num_rows == 7
    with pytest.raises(sqlengine.errors.SqlEngineError, match="unbounded"):
        s.sql("SELECT k, COUNT(*) AS c FROM g GROUP BY k LIMIT 5").collect()
