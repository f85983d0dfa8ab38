"""Parallelism 2 against 1 on the native runtime: wall time and speed-up per workload.

    python -m bench.parallel [--events 2000000] [--parallelism 1,2] [--repeat 3]
    python -m bench.parallel --parquet [--events 1000000]

Workloads: a CPU-heavy GROUP BY (many aggregates over computed expressions) and a Nexmark
q5-style HOP window count per auction, both over generated Nexmark bids. Each run is its own
process (best of --repeat), so runs do not share warm caches or memory; the time is the
query's, after a warm-up query in the same process.

``--parquet``: the HOP workload over the bids written to a parquet file, as whole
``sqlengine run`` processes (start-up, planning, workers, writing the result to a csv
directory), streaming mode, at each parallelism; the rows written are compared between runs.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKLOADS = {
    "cpu_group_by": (
        "SELECT auction % 5000 AS k, COUNT(*) AS n, SUM(price * 3 + bidder % 7) AS s, "
        "AVG(CAST(price AS DOUBLE) / 100) AS a, MAX(price - bidder) AS mx, "
        "MIN(CHAR_LENGTH(url)) AS ml, SUM(CASE WHEN price > 5000000 THEN 1 ELSE 0 END) AS big, "
        "COUNT(DISTINCT bidder % 1000) AS bidders FROM bid "
        "WHERE UPPER(channel) <> 'NONE' GROUP BY auction % 5000"),
    "q5_hop": (
        "SELECT auction, window_start, window_end, COUNT(*) AS num FROM TABLE(HOP(TABLE bid, "
        "DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND)) "
        "GROUP BY auction, window_start, window_end"),
}


def run_one(workload: str, events: int, parallelism: int) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from tests.nexmark import session

    s = session(events, {"parallelism.default": str(parallelism)})
    # Warm up (imports, first planning), so that the time is the query's execution.
    for _ in s.sql("SELECT COUNT(*) FROM bid WHERE bidder < 0").stream():
        pass
    start = time.perf_counter()
    rows = 0
    for batch in s.sql(WORKLOADS[workload]).stream():
        rows += batch.num_rows
    secs = time.perf_counter() - start
    return {"workload": workload, "parallelism": parallelism, "seconds": round(secs, 3),
            "output_rows": rows,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            # (ru_maxrss of the children: the largest worker process's peak)
            "worker_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
                                   / 1024, 1)}


def slow_sink(seconds: float) -> None:
    """An endless source at parallelism 2 read by a sink that sleeps 20 ms per batch: prints
    the rows read, rows consumed and the workers' resident memory once a second."""
    import multiprocessing

    sys.path.insert(0, str(ROOT))
    import sqlengine

    s = sqlengine.connect({"parallelism.default": "2"})
    s.execute("CREATE TABLE g (k INT, v BIGINT, s STRING) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '10000000', 'fields.s.length' = '40')")
    q = s.sql("SELECT k % 100 AS b, v, UPPER(s) AS s FROM g WHERE v > 0")
    started = time.monotonic()
    next_report = started + 1
    consumed = 0
    print(f"{'t s':>5} {'read':>10} {'consumed':>10} {'workers RSS MB':>15}")
    for batch in q.stream():
        consumed += batch.num_rows
        time.sleep(0.02)
        now = time.monotonic()
        if now >= next_report:
            next_report += 1
            read = q._run.executor.progress()[0]  # type: ignore[union-attr]
            rss = sum(_rss_mb(c.pid) for c in multiprocessing.active_children())
            print(f"{now - started:>5.1f} {read:>10} {consumed:>10} {rss:>15.1f}")
            if now - started >= seconds:
                break


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# As a user's install: bytecode cached (without it each process compiles ~600 modules).
_ENV = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def whole_process(events: int, levels: list[int], repeat: int) -> None:
    import shutil
    import tempfile

    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT))
    from tests.nexmark import tables

    work = Path(tempfile.mkdtemp(prefix="parallel-"))
    bids = tables(events)["bid"]
    src = work / "bid.parquet"
    pq.write_table(bids, src, row_group_size=65536)
    print(f"{bids.num_rows:,} bids from {events:,} events: {src} "
          f"({src.stat().st_size / 1e6:.0f} MB, {pq.ParquetFile(src).num_row_groups} row groups)")
    # The fixed part of every run: start-up and a trivial statement, whole process.
    one = work / "one.sql"
    one.write_text("SELECT 1;\n")
    fixed = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "sqlengine", "run", str(one)],
                       check=True, capture_output=True, env=_ENV)
        fixed.append(time.perf_counter() - start)
    startup = min(fixed)
    print(f"start-up (`sqlengine run` of SELECT 1): {startup:.2f} s")
    print(f"{'p':>2} {'best s':>8} {'speed-up':>9} {'rows':>9}  same rows  "
          f"{'after start-up':>14} {'speed-up':>9}")
    base = None
    base_work = None
    first: list[str] | None = None
    for p in levels:
        times = []
        for _ in range(repeat):
            out = work / f"out{p}"
            shutil.rmtree(out, ignore_errors=True)
            script = work / f"hop{p}.sql"
            script.write_text(f"""
SET 'parallelism.default' = '{p}';
CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    dateTime TIMESTAMP(3), extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
    WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'parquet');
CREATE TABLE out (auction BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
    num BIGINT) WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
INSERT INTO out {WORKLOADS["q5_hop"]};
""")
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "sqlengine", "run", str(script)],
                           check=True, capture_output=True, env=_ENV)
            times.append(time.perf_counter() - start)
        rows = sorted(line for f in sorted(out.rglob("*")) if f.is_file()
                      for line in f.read_text().splitlines())
        first = first if first is not None else rows
        best = min(times)
        base = base or best
        after = max(best - startup, 1e-3)
        base_work = base_work or after
        print(f"{p:>2} {best:>8.2f} {base / best:>8.2f}x {len(rows):>9}  {rows == first!s:<9}  "
              f"{after:>14.2f} {base_work / after:>8.2f}x")
        if p > 1:
            # The whole-process speed-up p subtasks could give if everything after the
            # start-up divided by p exactly (the start-up does not divide).
            bound = (startup + base_work) / (startup + base_work / p)
            print(f"{'':>2} {'':>8} {bound:>8.2f}x  the bound at p={p}: start-up + "
                  f"(the p=1 run after start-up) / {p}")
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--parallelism", default="1,2")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--slow-sink", type=float, default=0,
                        help="instead: run an endless source into a throttled sink for this "
                        "many seconds and print memory once a second")
    parser.add_argument("--parquet", action="store_true",
                        help="the HOP workload from a parquet file, whole sqlengine run "
                        "processes")
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    parser.add_argument("--p", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.events, args.p)))
        return
    if args.slow_sink:
        slow_sink(args.slow_sink)
        return
    levels = [int(p) for p in args.parallelism.split(",")]
    if args.parquet:
        whole_process(args.events, levels, args.repeat)
        return
    print(f"{'workload':<14} {'p':>2} {'best s':>8} {'speed-up':>9} {'rows':>9} {'rss MB':>7} "
          f"{'worker MB':>9}")
    for w in args.workloads.split(","):
        base = None
        for p in levels:
            runs = []
            for _ in range(args.repeat):
                out = subprocess.run(
                    [sys.executable, "-m", "bench.parallel", "--one", w, "--events",
                     str(args.events), "--p", str(p)],
                    cwd=ROOT, capture_output=True, text=True, check=True)
                runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            best = min(runs, key=lambda r: r["seconds"])
            base = base or best["seconds"]
            print(f"{w:<14} {p:>2} {best['seconds']:>8.2f} {base / best['seconds']:>8.2f}x "
                  f"{best['output_rows']:>9} {best['peak_rss_mb']:>7} "
                  f"{best['worker_rss_mb']:>9}")


if __name__ == "__main__":
    main()
