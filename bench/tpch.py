"""TPC-H on the native runtime (batch mode) next to DuckDB 1.5.5, over the same parquet files.

    python -m bench.tpch [--sf 1] [--queries q01,q05] [--runs 1] [--data DIR] [--json F]

Per query: sqlengine's wall time, DuckDB's wall time (same machine, same run), the ratio and
whether the answers agree (to 0.01, as TPC-H checks them). The data is generated once per scale
factor under ``--data`` (default ``~/.cache/sqlengine/tpch/sf<sf>``). With ``--runs N`` each
engine runs each query N times in turn and the best time counts on both sides (the first run
of a query pays for reading the files into the page cache and, on our side, for first calls
into pyarrow's kernels).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sf", type=float, default=1.0)
    parser.add_argument("--queries", default="")
    parser.add_argument("--data", default="")
    parser.add_argument("--mode", default="batch", choices=["batch", "streaming"])
    parser.add_argument("--json", default="")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import sqlengine
    from tests import tpch
    from tests.nexmark import query

    folder = Path(args.data or Path.home() / ".cache" / "sqlengine" / "tpch" / f"sf{args.sf:g}")
    t0 = time.perf_counter()
    tpch.data(args.sf, folder)
    print(f"data: {folder} ({time.perf_counter() - t0:.1f} s)")
    con = tpch.duckdb_connection()
    tpch.duckdb_views(con, folder)
    wanted = {q for q in args.queries.split(",") if q}
    results = []
    print(f"{'query':6} {'sqlengine s':>12} {'duckdb s':>9} {'ratio':>7}  answer")
    for name, script in tpch.queries().items():
        if wanted and name not in wanted:
            continue
        duck = ours_s = math.inf
        for _ in range(max(args.runs, 1)):
            start = time.perf_counter()
            theirs = tpch.rows(tpch.duckdb_answer(con, script))
            duck = min(duck, time.perf_counter() - start)
            s = sqlengine.connect({"execution.runtime-mode": args.mode})
            s.execute(tpch.ddl(folder))
            start = time.perf_counter()
            try:
                ours = tpch.rows(query(s, script).collect())
                verdict = tpch.same(ours, theirs, ordered="ORDER BY" in script.upper()) or "same"
            except Exception as e:  # a benchmark reports every failure and goes on
                verdict = f"error: {type(e).__name__}: {str(e).splitlines()[0][:100]}"
            ours_s = min(ours_s, time.perf_counter() - start)
        results.append({"query": name, "sqlengine_s": round(ours_s, 3),
                        "duckdb_s": round(duck, 3), "answer": verdict})
        print(f"{name:6} {ours_s:12.3f} {duck:9.3f} {ours_s / max(duck, 1e-6):7.1f}  {verdict}",
              flush=True)
    same = sum(r["answer"] == "same" for r in results)
    print(f"{same} of {len(results)} queries give DuckDB's answer")
    ratios = [r["sqlengine_s"] / max(r["duckdb_s"], 1e-6) for r in results]
    if ratios:
        geomean = math.exp(sum(math.log(max(x, 1e-9)) for x in ratios) / len(ratios))
        worst = max(range(len(ratios)), key=ratios.__getitem__)
        print(f"sqlengine / DuckDB: geometric mean {geomean:.2f}x, max {ratios[worst]:.1f}x "
              f"({results[worst]['query']}); total "
              f"{sum(r['sqlengine_s'] for r in results):.2f} s vs "
              f"{sum(r['duckdb_s'] for r in results):.2f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
