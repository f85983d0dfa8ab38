"""Lookup join throughput against PostgreSQL (127.0.0.1:5432, database test, trust auth).

    python -m bench.lookup_join [--dim-rows 1000000] [--probes 2000000] [--hot 100000]

A dimension table of ``dim-rows`` rows is created once (bulk COPY through ADBC). ``probes``
probe rows (keys drawn from ``hot`` keys of the table, 10 % of them absent keys) stream through
``JOIN dim FOR SYSTEM_TIME AS OF o.proc_time`` into a blackhole sink, with Flink's partial
cache on and with no cache; next to them, one query per probe row (what a row-at-a-time
lookup without batching costs; timed on a sample). Printed: probe rows per second each way.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
URI = "postgresql://root@127.0.0.1:5432/test"
URL = "jdbc:postgresql://127.0.0.1:5432/test"


def dimension(rows: int) -> str:
    import adbc_driver_postgresql.dbapi as pg

    name = f"bench_dim_{rows}"
    con = pg.connect(URI)
    with con.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM pg_tables WHERE tablename = '{name}'")
        exists = cur.fetchone()[0]
        if not exists:
            keys = np.arange(rows, dtype=np.int64)
            table = pa.table({"k": keys, "name": pa.array([f"n{k}" for k in keys.tolist()]),
                              "v": pa.array(keys % 1000, pa.int64())})
            cur.adbc_ingest(name, table, mode="create")
            cur.execute(f"ALTER TABLE {name} ADD PRIMARY KEY (k)")
    con.commit()
    con.close()
    return name


def run(dim: str, probes: int, hot: int, cache: bool) -> float:
    import sqlengine

    rng = np.random.default_rng(1)
    keys = rng.integers(0, hot, probes)
    keys[rng.random(probes) < 0.1] += 10**12  # (absent keys)
    data = pa.table({"id": np.arange(probes), "k": keys})
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("probe_data", iter(data.to_batches(max_chunksize=65536)))
    s.execute("CREATE VIEW probe AS SELECT id, k, PROCTIME() AS t FROM probe_data")
    options = ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '1000000'" \
        if cache else ""
    s.execute(f"CREATE TABLE dim (k BIGINT, name STRING, v BIGINT) WITH ('connector' = "
              f"'jdbc', 'url' = '{URL}', 'table-name' = '{dim}', 'username' = 'root'{options})")
    s.execute("CREATE TABLE out (id BIGINT, name STRING, v BIGINT) WITH "
              "('connector' = 'blackhole')")
    start = time.perf_counter()
    s.execute("INSERT INTO out SELECT p.id, d.name, d.v FROM probe AS p JOIN dim FOR "
              "SYSTEM_TIME AS OF p.t AS d ON p.k = d.k")
    return probes / (time.perf_counter() - start)


def per_row(dim: str, sample: int, hot: int) -> float:
    import adbc_driver_postgresql.dbapi as pg

    con = pg.connect(URI)
    rng = np.random.default_rng(2)
    start = time.perf_counter()
    with con.cursor() as cur:
        for k in rng.integers(0, hot, sample).tolist():
            cur.execute(f"SELECT name, v FROM {dim} WHERE k = {int(k)}")
            cur.fetchall()
    con.close()
    return sample / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim-rows", type=int, default=1_000_000)
    parser.add_argument("--probes", type=int, default=2_000_000)
    parser.add_argument("--hot", type=int, default=100_000)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    dim = dimension(args.dim_rows)
    print(f"dimension {dim}: {args.dim_rows:,} rows; {args.probes:,} probe rows over "
          f"{args.hot:,} keys (10 % absent)")
    print(f"  lookup join, partial cache: {run(dim, args.probes, args.hot, True):12,.0f} rows/s")
    print(f"  lookup join, no cache:      {run(dim, args.probes, args.hot, False):12,.0f} "
          "rows/s")
    print(f"  one query per probe row:    {per_row(dim, 3000, args.hot):12,.0f} rows/s")


if __name__ == "__main__":
    main()
