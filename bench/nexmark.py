"""Run the Nexmark suite on the native runtime and print, per query, events/s, wall time,
output rows and peak memory (RSS), as a table and as JSON.

    python -m bench.nexmark [--events 1000000] [--queries q0,q5] [--json results.json]

Each query runs in its own process so that its peak RSS is its own. Results are consumed as a
stream (counted, not kept), so memory reflects the engine's state, not the output.
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


# Not a Nexmark query: the state check. Its memory must not grow with the number of events.
TUMBLE_STATE_CHECK = (
    "SELECT auction, window_start, COUNT(*) AS n, MAX(price) AS top FROM TABLE(TUMBLE(TABLE "
    "bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) GROUP BY auction, window_start, "
    "window_end")


def run_one(name: str, events: int) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from tests.nexmark import queries, query, session

    sql = TUMBLE_STATE_CHECK if name == "tumble" else queries()[name]
    s = session(events)
    start = time.perf_counter()
    rows = 0
    q = query(s, sql)
    for batch in q.stream():
        rows += batch.num_rows
    secs = time.perf_counter() - start
    return {"query": name, "events": events, "seconds": round(secs, 3),
            "events_per_s": int(events / secs), "output_rows": rows,
            "late_dropped": q.late_records_dropped,
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--queries", default="")
    parser.add_argument("--json", default="")
    parser.add_argument("--state-check", action="store_true",
                        help="run a tumbling-window aggregation at 1x and 10x --events")
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.events)))
        return
    sys.path.insert(0, str(ROOT))
    from tests.nexmark import queries

    names = [q for q in args.queries.split(",") if q] or list(queries())
    runs = [(n, args.events) for n in names]
    if args.state_check:
        runs = [("tumble", args.events), ("tumble", args.events * 10)]
    results = []
    print(f"{'query':<6}{'events':>10}{'seconds':>9}{'events/s':>12}{'rows out':>11}"
          f"{'late':>6}{'RSS MB':>8}", flush=True)
    for name, events in runs:
        proc = subprocess.run([sys.executable, "-m", "bench.nexmark", "--one", name,
                               "--events", str(events)], cwd=ROOT, capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            print(f"{name:<6} failed: {proc.stderr.strip().splitlines()[-1]}", flush=True)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"{r['query']:<6}{r['events']:>10}{r['seconds']:>9}{r['events_per_s']:>12,}"
              f"{r['output_rows']:>11}{r['late_dropped']:>6}{r['peak_rss_mb']:>8}", flush=True)
    print(json.dumps(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
