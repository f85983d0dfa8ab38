"""Spilling in batch mode: a GROUP BY, a join and an ORDER BY over N rows, each in memory
(no budget) and past a small budget (spilled), with DuckDB's time for the same SQL as the
anchor; peak resident memory of each run (a fresh process per run), bytes spilled, rows.

    python -m bench.spill [--rows 4000000] [--budget '16 mb']
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

QUERIES = {
    "group by": "SELECT k, COUNT(*) AS c, SUM(v) AS sv, MAX(s) AS ms FROM t GROUP BY k",
    "join": "SELECT t.k, t.v, u.w FROM t JOIN u ON t.k = u.k",
    "order by": "SELECT k, s, v FROM t ORDER BY s NULLS FIRST, v",
}


def _tables(rows: int):
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng(1)
    keys = pa.array(rng.integers(0, rows // 2, rows))
    t = pa.table({"k": keys, "v": rng.random(rows),
                  "s": pc.binary_join_element_wise("key-", keys.cast(pa.string()), "")})
    u = pa.table({"k": pa.array(rng.integers(0, rows // 2, rows // 2)),
                  "w": rng.random(rows // 2)})
    return (pa.Table.from_batches(t.to_batches(max_chunksize=65536)),
            pa.Table.from_batches(u.to_batches(max_chunksize=65536)))


def _one(engine: str, name: str, rows: int, budget: str) -> dict[str, object]:
    t, u = _tables(rows)
    sql = QUERIES[name]
    start = time.perf_counter()
    if engine == "duckdb":
        import duckdb

        out = duckdb.sql(sql).arrow()
        n = out.num_rows if hasattr(out, "num_rows") else out.read_all().num_rows
        spilled = 0
    else:
        import sqlengine

        s = sqlengine.connect({"execution.runtime-mode": "batch",
                               "taskmanager.memory.managed.size": budget})
        s.register("t", t)
        s.register("u", u)
        q = s.sql(sql)
        n = q.collect().num_rows
        spilled = sum(m.get("spilled_bytes", 0) for m in q.metrics().values())
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "rows": n, "spilled_mb": spilled / 2**20, "peak_mb": peak}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--budget", default="16 mb")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_one(args.one[0], args.one[1], args.rows, args.one[2])))
        return
    print(f"{args.rows:,} rows; budget {args.budget!r} (each run in a fresh process)")
    print(f"{'query':<10} {'run':<22} {'seconds':>8} {'peak MB':>8} {'spilled MB':>11} "
          f"{'rows':>10}")
    for name in QUERIES:
        for label, engine, budget in (("duckdb", "duckdb", "-1"),
                                      ("sqlengine in memory", "sqlengine", "-1"),
                                      ("sqlengine spilled", "sqlengine", args.budget)):
            done = subprocess.run([sys.executable, "-m", "bench.spill", "--rows",
                                   str(args.rows), "--one", engine, name, budget],
                                  capture_output=True, text=True, check=True)
            r = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{name:<10} {label:<22} {r['seconds']:>8.2f} {r['peak_mb']:>8.0f} "
                  f"{r['spilled_mb']:>11.0f} {r['rows']:>10,}")


if __name__ == "__main__":
    main()
