"""Throughput of the native runtime on in-memory data: scan/filter/project, GROUP BY at low and
high key cardinality (streaming changelog and batch), join, ORDER BY. Prints a table and JSON.

    python -m bench.spine [--rows 2000000]
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
import pyarrow as pa

import sqlengine


def make(rows: int, keys: int, seed: int = 1) -> pa.Table:
    rng = np.random.default_rng(seed)
    return pa.table({
        "k": rng.integers(0, keys, rows, dtype=np.int64),
        "s": pa.array(rng.integers(0, 50, rows).astype(str)),
        "x": rng.integers(-1000, 1000, rows, dtype=np.int64),
        "y": rng.normal(0, 1, rows),
    })


QUERIES = {
    "filter_project": "SELECT k, x * 2 AS x2, y + 1 AS y1 FROM t WHERE x > 0",
    "group_low": "SELECT s, COUNT(*) AS c, SUM(x) AS sx, MIN(y) AS mn, AVG(x) AS ax FROM t "
                 "GROUP BY s",
    "group_high": "SELECT k, COUNT(*) AS c, SUM(x) AS sx, MAX(y) AS mx FROM t GROUP BY k",
    "count_distinct": "SELECT s, COUNT(DISTINCT k) AS dk FROM t GROUP BY s",
    "join": "SELECT t.k, t.x, d.name FROM t JOIN dim AS d ON t.k = d.id",
    "order_limit": "SELECT k, x FROM t ORDER BY x DESC, k LIMIT 10",
}


def run(rows: int) -> list[dict[str, object]]:
    low = make(rows, 1_000_000)
    dim = pa.table({"id": np.arange(0, 1_000_000, 7, dtype=np.int64),
                    "name": pa.array([f"n{i}" for i in range(0, 1_000_000, 7)])})
    out = []
    for mode in ("streaming", "batch"):
        s = sqlengine.connect({"execution.runtime-mode": mode})
        s.register("t", low)
        s.register("dim", dim)
        for name, sql in QUERIES.items():
            start = time.perf_counter()
            result = s.sql(sql).collect()
            secs = time.perf_counter() - start
            out.append({"query": name, "mode": mode, "rows_in": rows,
                        "rows_out": result.num_rows, "seconds": round(secs, 3),
                        "rows_per_s": int(rows / secs),
                        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=2_000_000)
    args = parser.parse_args()
    results = run(args.rows)
    print(f"{'query':<16}{'mode':<11}{'rows out':>10}{'seconds':>9}{'rows/s':>12}{'RSS MB':>8}")
    for r in results:
        print(f"{r['query']:<16}{r['mode']:<11}{r['rows_out']:>10}{r['seconds']:>9}"
              f"{r['rows_per_s']:>12,}{r['peak_rss_mb']:>8}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
