"""The cost model's choices, measured: each workload runs with the plan the optimizer chose
and with the rejected alternative forced by a switch; prints wall time per plan.

    python -m bench.optimizer [--rows 2000000] [--repeat 3]

Workloads (parallelism 2, in memory, batch mode with pipelined and with blocking shuffles, the
aggregation in streaming mode too; each run in its own process, best of --repeat, after a
warm-up query):
- join: a large table joined with a small one; chosen: broadcast the small side; rejected:
  hash-repartition both ('table.optimizer.join.broadcast-threshold' = '-1').
- aggregation: GROUP BY over 1000 groups; chosen: two phases (local pre-aggregation chained
  before the shuffle); rejected: one phase ('table.optimizer.agg-phase-strategy' =
  'ONE_PHASE'). In streaming mode the rows counted are the changelog's.
- sort: ORDER BY over the large table; the range-partitioned sort against one sorting
  subtask ('table.exec.range-sort.enabled' = 'false'). Not a costed choice: the rewrite is
  made whenever the input is parallel.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKLOADS = {
    # The wide payload must reach the join (the condition reads it with the small side's
    # columns), the result is small: what differs is what crosses the exchange.
    "join large x small": (
        "SELECT d.name, f.v FROM facts AS f JOIN dim AS d ON f.k = d.k "
        "WHERE CHAR_LENGTH(f.payload) + d.k > 1395",
        {"table.optimizer.join.broadcast-threshold": "-1"}),
    # Few groups, many rows: the local pre-aggregation ships one partial per group and batch.
    "aggregation": (
        "SELECT k, COUNT(*) AS n, SUM(v) AS s, AVG(v) AS a, MIN(v) AS lo, MAX(v) AS hi "
        "FROM facts GROUP BY k",
        {"table.optimizer.agg-phase-strategy": "ONE_PHASE"}),
    # Range-partitioned sort (a rewrite, not a costed choice) against one sorting subtask.
    "sort": (
        "SELECT k, v, payload FROM facts ORDER BY k, v",
        {"table.exec.range-sort.enabled": "false"}),
}


def run_one(name: str, rows: int, forced: bool, shuffle: str) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    import numpy as np
    import pyarrow as pa

    import sqlengine

    sql, switch = WORKLOADS[name]
    options = {"parallelism.default": "2", **(switch if forced else {})}
    if shuffle == "STREAMING":
        options["execution.runtime-mode"] = "streaming"
    else:
        options.update({"execution.runtime-mode": "batch",
                        "execution.batch-shuffle-mode": shuffle})
    s = sqlengine.connect(options)
    rng = np.random.default_rng(1)
    payload = pa.array(["x" * 400] * 1000).take(pa.array(rng.integers(0, 1000, rows)))
    s.register("facts", pa.table({"k": rng.integers(0, 1000, rows),
                                  "v": np.arange(rows), "payload": payload}))
    s.register("dim", pa.table({"k": np.arange(1000),
                                "name": [f"name-{i}" for i in range(1000)]}))
    for _ in s.sql("SELECT COUNT(*) FROM dim").stream():  # warm-up
        pass
    q = s.sql(sql)
    plan = q.explain().split("== Job Graph ==")[1]
    start = time.perf_counter()
    out = sum(b.num_rows for b in q.stream())
    secs = round(time.perf_counter() - start, 3)
    return {"workload": name, "forced": forced, "shuffle": shuffle, "seconds": secs,
            "rows": out, "strategy": "RANGE_SORT" if "RangeSample" in plan else
            "ONE_SORT" if "Sort(" in plan else
            "BROADCAST" if "--BROADCAST" in plan else
            "TWO_PHASE" if "LocalAggregate" in plan else
            "ONE_PHASE" if "GroupAggregate" in plan else "HASH"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    parser.add_argument("--forced", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--shuffle", default="ALL_EXCHANGES_PIPELINED", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.rows, args.forced, args.shuffle)))
        return
    print(f"{'workload':<22} {'shuffles':<10} {'plan':<26} {'best s':>7} {'rows':>9}")
    modes = {"join large x small": ("ALL_EXCHANGES_PIPELINED", "ALL_EXCHANGES_BLOCKING"),
             "aggregation": ("ALL_EXCHANGES_PIPELINED", "ALL_EXCHANGES_BLOCKING", "STREAMING"),
             "sort": ("ALL_EXCHANGES_BLOCKING", "STREAMING")}
    for name, shuffle in [(n, m) for n in WORKLOADS for m in modes[n]]:
        best = {}
        short = shuffle.removeprefix("ALL_EXCHANGES_").lower()
        for forced in (False, True):
            runs = []
            for _ in range(args.repeat):
                cmd = [sys.executable, "-m", "bench.optimizer", "--one", name, "--rows",
                       str(args.rows), "--shuffle", shuffle] + (["--forced"] if forced else [])
                out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                     check=True)
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = min(runs, key=lambda x: x["seconds"])
            best[forced] = r
            label = ("rejected, forced: " if forced else "chosen: ") + str(r["strategy"])
            print(f"{name:<22} {short:<10} {label:<26} {r['seconds']:>7.2f} {r['rows']:>9}")
        print(f"{'':<22} {'':<10} {'chosen is faster by':<26} "
              f"{best[True]['seconds'] / best[False]['seconds']:>6.2f}x")


if __name__ == "__main__":
    main()
