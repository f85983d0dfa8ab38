"""A whole jdbc scan of PostgreSQL: sqlengine at parallelism 1 and 2 next to the physical limit.

    python -m bench.jdbc_scan [--rows 10000000] [--repeat 1]

Creates (once, when missing or of another size) the table ``bench_jdbc_scan_<rows>`` in the
local PostgreSQL (127.0.0.1:5432, database test): ``id BIGINT`` 1..rows, ``k INT``, ``v DOUBLE
PRECISION`` (every 10th NULL), ``s TEXT``, written by ADBC's bulk ingest (COPY) from Arrow
chunks generated with numpy, then ``id`` made its PRIMARY KEY (so that a range of the
partitioned scan is an index range scan, not a scan of the whole table with a filter).
Then times, reading the columns ``k`` and ``v``:

- ``copy csv -> pyarrow``: ``psql -c "COPY (SELECT k, v FROM t) TO STDOUT (FORMAT csv)"``
  parsed by pyarrow's csv reader as it streams (the server's COPY, the physical limit);
- ``adbc fetch_arrow_table``: the plain SELECT through the ADBC driver (COPY binary into Arrow:
  what the connector reads with, no engine around it);
- ``adbc 2 threads``: the same, two threads each reading half of ``id``'s range on its own
  connection (what two subtasks of a partitioned scan could reach at most, on this machine);
- ``sqlengine p=1``: ``SELECT COUNT(*), SUM(CAST(k AS BIGINT)), SUM(v)`` over the jdbc
  table in batch mode, one unpartitioned scan;
- ``sqlengine p=P num=N``: the same query with 'scan.partition.column' = 'id' over [1, rows]
  in N ranges, at 'parallelism.default' P.
Prints each one's best wall time (of ``--repeat``), rows a second and its ratio to the COPY
reference; the engine's answers are checked against the ADBC table's.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

URL = "jdbc:postgresql://127.0.0.1:5432/test"
PSQL = ["psql", "-h", "127.0.0.1", "-p", "5432", "-U", "root", "-d", "test", "-X", "-q"]
CHUNK = 1_000_000


def connect() -> Any:
    import adbc_driver_postgresql.dbapi as dbapi

    return dbapi.connect("postgresql://root@127.0.0.1:5432/test")


def ensure_table(rows: int) -> str:
    """The benchmark's table of ``rows`` rows, created (by COPY through ADBC) if missing."""
    name = f"bench_jdbc_scan_{rows}"
    con = connect()
    try:
        with con.cursor() as cur:
            cur.execute(f"SELECT to_regclass('{name}') IS NOT NULL")
            if cur.fetchone()[0]:
                cur.execute(f"SELECT COUNT(*) FROM {name}")
                if cur.fetchone()[0] == rows:
                    cur.execute(f"SELECT COUNT(*) FROM pg_indexes WHERE tablename = '{name}'")
                    if cur.fetchone()[0] == 0:  # (a table made before the key was)
                        cur.execute(f"ALTER TABLE {name} ADD PRIMARY KEY (id)")
                        con.commit()
                    return name
                cur.execute(f"DROP TABLE {name}")
            con.commit()
            started = time.perf_counter()
            rng = np.random.default_rng(7)
            words = pa.array([f"w{i}" for i in range(1000)])
            for first in range(0, rows, CHUNK):
                n = min(CHUNK, rows - first)
                ids = np.arange(first + 1, first + n + 1, dtype=np.int64)
                v = rng.random(n) * 1000
                chunk = pa.table({
                    "id": ids,
                    "k": pa.array((ids % 1000).astype(np.int32)),
                    "v": pa.array(v, mask=ids % 10 == 0),
                    "s": words.take(pa.array(ids % 1000)),
                })
                cur.adbc_ingest(name, chunk, mode="create" if first == 0 else "append")
            cur.execute(f"ALTER TABLE {name} ADD PRIMARY KEY (id)")
            cur.execute(f"ANALYZE {name}")
            con.commit()
            print(f"created {name}: {rows:,} rows in {time.perf_counter() - started:.1f} s")
    finally:
        con.close()
    return name


def copy_to_arrow(name: str) -> pa.Table:
    proc = subprocess.Popen([*PSQL, "-c", f"COPY (SELECT k, v FROM {name}) TO STDOUT "
                             "(FORMAT csv)"], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    table = pcsv.read_csv(
        io.BufferedReader(proc.stdout, buffer_size=1 << 20),
        read_options=pcsv.ReadOptions(column_names=["k", "v"], block_size=1 << 22),
        convert_options=pcsv.ConvertOptions(column_types={"k": pa.int32(), "v": pa.float64()}))
    if proc.wait() != 0:
        msg = "psql COPY failed"
        raise RuntimeError(msg)
    return table


def adbc_table(name: str) -> pa.Table:
    con = connect()
    try:
        with con.cursor() as cur:
            cur.execute(f"SELECT k, v FROM {name}")
            return cur.fetch_arrow_table()
    finally:
        con.close()


def adbc_halves(name: str, rows: int) -> pa.Table:
    from concurrent.futures import ThreadPoolExecutor

    def half(where: str) -> pa.Table:
        con = connect()
        try:
            with con.cursor() as cur:
                cur.execute(f"SELECT k, v FROM {name} WHERE {where}")
                return cur.fetch_arrow_table()
        finally:
            con.close()

    mid = rows // 2
    with ThreadPoolExecutor(2) as pool:
        parts = list(pool.map(half, [f"id BETWEEN 1 AND {mid}",
                                     f"id BETWEEN {mid + 1} AND {rows}"]))
    return pa.concat_tables(parts)


def engine(name: str, rows: int, parallelism: int, num: int) -> dict[str, Any]:
    import sqlengine

    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": str(parallelism)})
    parts = (f", 'scan.partition.column' = 'id', 'scan.partition.num' = '{num}', "
             f"'scan.partition.lower-bound' = '1', 'scan.partition.upper-bound' = '{rows}'"
             if num else "")
    s.execute(f"CREATE TABLE t (id BIGINT, k INT, v DOUBLE, s STRING) WITH ('connector' = "
              f"'jdbc', 'url' = '{URL}', 'table-name' = '{name}', 'username' = 'root'{parts})")
    query = "SELECT COUNT(*) AS n, SUM(CAST(k AS BIGINT)) AS sk, SUM(v) AS sv FROM t"
    return s.sql(query).collect().to_pylist()[0]


def timed(fn: Any, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - started)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    name = ensure_table(args.rows)

    results: list[tuple[str, float]] = []
    secs, copied = timed(lambda: copy_to_arrow(name), args.repeat)
    results.append(("copy csv -> pyarrow", secs))
    secs, fetched = timed(lambda: adbc_table(name), args.repeat)
    results.append(("adbc fetch_arrow_table", secs))
    secs, halves = timed(lambda: adbc_halves(name, args.rows), args.repeat)
    results.append(("adbc 2 threads", secs))
    assert copied.num_rows == fetched.num_rows == halves.num_rows == args.rows
    want = {"n": args.rows, "sk": pc.sum(fetched.column("k")).as_py(),
            "sv": pc.sum(fetched.column("v")).as_py()}
    del copied, fetched, halves
    import sqlengine  # (warm: the first query's imports and planning are not the scan's)

    sqlengine.connect({}).sql("SELECT 1").collect()
    for p, num in [(1, 0), (1, 4), (2, 2), (2, 4)]:
        label = f"sqlengine p={p}" + (f" num={num}" if num else " unpartitioned")
        secs, got = timed(lambda p=p, num=num: engine(name, args.rows, p, num), args.repeat)
        assert got["n"] == want["n"] and got["sk"] == want["sk"], (label, got, want)
        assert abs(got["sv"] - want["sv"]) <= 1e-9 * abs(want["sv"]), (label, got, want)
        results.append((label, secs))

    reference = results[0][1]
    print(f"\nwhole scan of {args.rows:,} rows (columns k INT, v DOUBLE), best of "
          f"{args.repeat}:")
    print(f"{'':28} {'seconds':>8} {'rows/s':>12} {'x COPY':>7}")
    for label, secs in results:
        print(f"{label:28} {secs:8.2f} {args.rows / secs:12,.0f} {secs / reference:7.2f}")


if __name__ == "__main__":
    main()
