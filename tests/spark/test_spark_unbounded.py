"""Unbounded sources on Spark Structured Streaming (runtime/spark/unbounded.py): a socket, a
datagen and a nexmark table without an end, read on the driver by our connectors into a folder
Spark streams; each micro-batch's rows yielded as they come; LIMIT ends such a query; a
filesystem sink is written exactly once across restarts from 'execution.checkpoint-location'.
Compared with the native runtime's rows (and late-row counts) on the same input."""

from __future__ import annotations

import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

SPARK = {"execution.target": "spark", "spark.master": "local[2]"}


def _lines(n: int, seed: int) -> list[str]:
    """csv rows (k, v, ts): times rising 100 ms a row, up to 2.5 s out of order (rows come
    behind a 1 s watermark bound)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        t = 1_700_000_000_000 + i * 100 + rng.randrange(-2500, 400)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t // 1000))
        out.append(f"{rng.randrange(5)},{rng.randrange(100)},{stamp}.{t % 1000:03d}")
    return out


def _serve(lines: list[str]) -> int:
    """A server that sends ``lines`` in blocks to its first client, then closes."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def run() -> None:
        conn, _ = srv.accept()
        for i in range(0, len(lines), 50):
            conn.sendall("".join(f"{x}\n" for x in lines[i:i + 50]).encode())
            time.sleep(0.02)
        conn.close()
        srv.close()

    threading.Thread(target=run, daemon=True).start()
    return srv.getsockname()[1]


def _socket_session(options: dict[str, str], port: int) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **options})
    s.execute("CREATE TABLE t (k INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              "INTERVAL '1' SECOND) WITH ('connector' = 'socket', 'hostname' = '127.0.0.1', "
              f"'port' = '{port}', 'format' = 'csv', 'socket.max-retries' = '0')")
    return s


def _final(sql: str, options: dict[str, str], lines: list[str]) -> tuple[list, int]:
    """The changes ``sql`` streams, applied (a multiset of rows), and its late rows."""
    q = _socket_session(options, _serve(lines)).sql(sql)
    rows: Counter = Counter()
    for b in q.stream():
        for r in b.to_pylist():
            op = r.pop("op")
            rows[tuple(r.values())] += 1 if op in ("+I", "+U") else -1
    assert all(n >= 0 for n in rows.values())
    return sorted((k for k, n in rows.items() for _ in range(n)), key=str), \
        q.late_records_dropped


QUERIES = {
    # a window aggregation: late rows judged row by row, as natively
    "tumble": "SELECT window_start, k, COUNT(*) AS c, SUM(v) AS sv FROM TABLE(TUMBLE(TABLE t, "
              "DESCRIPTOR(ts), INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k",
    # a GROUP BY (Spark's complete mode: each micro-batch's result as changes)
    "group-by": "SELECT k, COUNT(*) AS c, MAX(v) AS mv FROM t GROUP BY k",
    # a Top-N (our stateful operator's changes)
    "top-n": "SELECT k, v FROM (SELECT k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v "
             "DESC) AS rn FROM t) WHERE rn <= 2",
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_a_socket_stream_gives_native_rows(name: str) -> None:
    lines = _lines(600, 1)
    native, native_late = _final(QUERIES[name], {}, lines)
    spark, spark_late = _final(QUERIES[name], SPARK, lines)
    assert spark == native and len(native) >= 5
    assert spark_late == native_late
    if name == "tumble":
        assert native_late > 0


def test_limit_ends_a_query_over_an_endless_datagen() -> None:
    got = {}
    for engine, options in (("native", {}), ("spark", SPARK)):
        s = sqlengine.connect({"execution.runtime-mode": "streaming", **options})
        s.execute("CREATE TABLE g (id BIGINT, v INT) WITH ('connector' = 'datagen', "
                  "'rows-per-second' = '500', 'seed' = '7', 'fields.id.min' = '1', "
                  "'fields.id.max' = '1000000', 'fields.v.min' = '0', 'fields.v.max' = '9')")
        got[engine] = [r for b in s.sql("SELECT id, v * 2 AS w FROM g WHERE v < 5 LIMIT 7")
                       .stream() for r in b.to_pylist()]
    assert len(got["spark"]) == 7
    assert sorted(map(str, got["spark"])) == sorted(map(str, got["native"]))


def _rows_in(path: Path) -> list[int]:
    if not any(not f.name.startswith(".") for f in path.iterdir()):
        return []
    return ds.dataset(str(path), format="parquet").to_table().column("id").to_pylist()


def _restarted_run(checkpoint: Path, sink_ddl: str, insert: str,
                   written: Callable[[], int], seen: int) -> None:
    """One run of ``insert`` from the checkpoint location, cancelled once it has written
    more than ``seen`` rows (or after 300 s)."""
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **SPARK,
                           "execution.checkpoint-location": str(checkpoint)})
    s.execute("CREATE TABLE person (id BIGINT, name STRING) WITH ('connector' = "
              "'nexmark', 'nexmark.table' = 'person', 'rows-per-second' = '20000')")
    s.execute(sink_ddl)
    job = s.start(insert)
    deadline = time.monotonic() + 300
    while written() <= seen and time.monotonic() < deadline and not job.done:
        time.sleep(0.5)
    job.cancel()
    assert job.error is None


def test_a_filesystem_sink_is_written_exactly_once_across_restarts(tmp_path: Path) -> None:
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    out.mkdir()
    seen = 0
    for run in range(3):
        _restarted_run(checkpoint, f"CREATE TABLE sink (id BIGINT, name STRING) WITH ("
                       f"'connector' = 'filesystem', 'path' = '{out}', 'format' = 'parquet')",
                       "INSERT INTO sink SELECT id, name FROM person",
                       lambda: len(_rows_in(out)), seen)
        ids = _rows_in(out)
        assert len(ids) > seen, f"run {run} wrote nothing"
        seen = len(ids)
        # (every person once: the ids run on without a gap or a repeat)
        assert sorted(ids) == list(range(1000, 1000 + len(ids)))


@pytest.mark.parametrize(("sql", "options", "message"), [
    ("SELECT k, v FROM t LIMIT 3 OFFSET 2", {},
     r"Limit\(fetch=3, offset=2\) over an unbounded source"),
    ("SELECT k, v FROM t", {"execution.checkpoint-location": "{tmp}"},
     "a socket cannot be read again"),
    ("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND)) AS a JOIN "
     "TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' SECOND)) AS b ON a.k = b.k AND "
     "a.window_start = b.window_start AND a.window_end = b.window_end", {},
     "may have rows behind its watermark"),
])
def test_refused_over_an_unbounded_source_by_name(sql: str, options: dict[str, str],
                                                  message: str, tmp_path: Path) -> None:
    options = {k: v.format(tmp=tmp_path) for k, v in options.items()}
    s = _socket_session({**SPARK, **options}, _serve(_lines(10, 2)))
    with pytest.raises(SqlEngineError, match=message):
        for _ in s.sql(sql).stream():
            pass


def _partitioned_rows(path: Path) -> list[tuple[int, str]]:
    files = [f for f in path.rglob("part-*") if not f.name.startswith(".")]
    rows = []
    for f in files:
        day = f.parent.name.removeprefix("d=")
        rows += [(i, day) for i in pq.read_table(f).column("id").to_pylist()]
    return rows


def test_a_partitioned_filesystem_sink_is_written_exactly_once(tmp_path: Path) -> None:
    """A PARTITIONED BY table as the sink (it was refused on Spark): each micro-batch writes
    a part file per partition it reaches, named by its batch, and commits the partitions it
    wrote (success files); across restarts every row lands once, in its partition."""
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    out.mkdir()
    seen = 0
    for run in range(2):
        _restarted_run(checkpoint, f"CREATE TABLE sink (id BIGINT, d STRING) PARTITIONED BY "
                       f"(d) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = "
                       "'parquet', 'sink.partition-commit.policy.kind' = 'success-file')",
                       "INSERT INTO sink SELECT id, CAST(MOD(id, 3) AS STRING) FROM person",
                       lambda: len(_partitioned_rows(out)), seen)
        rows = _partitioned_rows(out)
        assert len(rows) > seen, f"run {run} wrote nothing"
        seen = len(rows)
        ids = sorted(i for i, _ in rows)
        assert ids == list(range(1000, 1000 + len(ids)))
        assert all(d == str(i % 3) for i, d in rows)
        written = {f.parent for f in out.rglob("part-*")}
        assert written and all((d / "_SUCCESS").exists() for d in written)


def test_a_partition_commit_the_micro_batches_cannot_keep_is_refused(tmp_path: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **SPARK,
                           "execution.checkpoint-location": str(tmp_path / "chk")})
    s.execute("CREATE TABLE person (id BIGINT, name STRING) WITH ('connector' = "
              "'nexmark', 'nexmark.table' = 'person', 'rows-per-second' = '20000')")
    s.execute(f"CREATE TABLE sink (id BIGINT, d STRING) PARTITIONED BY (d) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = "
              "'parquet', 'sink.partition-commit.policy.kind' = 'success-file', "
              "'sink.partition-commit.delay' = '1 h')")
    with pytest.raises(SqlEngineError, match="a partition commit policy with a delay"):
        s.execute("INSERT INTO sink SELECT id, CAST(MOD(id, 3) AS STRING) FROM person")
