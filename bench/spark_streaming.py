"""The Nexmark suite in streaming mode on Spark Structured Streaming (local[2]) against the
native runtime: per query, both wall times, whether the final rows are equal, and the late
rows each dropped.

    python -m bench.spark_streaming [--events 1000000] [--disorder | --batch] [--queries q0,q5]
                                    [--json out.json] [--timeout 1800]

``--disorder``: 3 s of disorder and a 1 s WATERMARK bound at 200 events/s, so rows arrive
behind the watermark (as tests/spark's disordered cases). Each query runs in its own process
(one Spark session each); a query's times are taken after the session started (the Spark
side's time includes reading the source natively to judge lateness and writing it to
parquet for Spark). ``--batch``: both sides in batch mode (``execution.runtime-mode``; Spark
batch DataFrames, no watermarks). q12 (processing time) is compared as bids per bidder (its windows
depend on the clock).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPARK = {"execution.target": "spark", "spark.master": "local[2]"}


def _session(events: int, options: dict[str, str] | None, disorder: bool,  # type: ignore[no-untyped-def]
             batch: bool = False):
    import sqlengine
    from tests.nexmark import SUITE

    mode = {"execution.runtime-mode": "batch"} if batch else {}
    s = sqlengine.connect({**(options or {}), **mode})
    ddl = (SUITE / "ddl.sql").read_text().replace("NEXMARK_EVENTS", str(events))
    if disorder:
        ddl = ddl.replace("INTERVAL '4' SECOND", "INTERVAL '1' SECOND")
    s.execute(ddl)
    if disorder:
        for t in ("person", "auction", "bid"):
            s.execute(f"ALTER TABLE {t} SET ('nexmark.events-per-second' = '200', "
                      "'nexmark.out-of-orderness' = '3000')")
    return s


def run_one(name: str, events: int, disorder: bool, batch: bool = False) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from sqlengine.runtime.spark.session import spark_session
    from tests.nexmark import queries, query, result_rows

    spark_session(SPARK)  # (started before the clock)
    out: dict[str, object] = {"query": name, "events": events, "disorder": disorder,
                              "batch": batch}
    got = {}
    for side, options in (("native", None), ("spark", SPARK)):
        start = time.perf_counter()
        try:
            q = query(_session(events, options, disorder, batch), queries()[name])
            table = q.collect()
        except Exception as e:  # (reported, not raised: the other queries go on)
            out[f"{side}_error"] = f"{type(e).__name__}: {str(e).splitlines()[0]}"
            continue
        out[f"{side}_s"] = round(time.perf_counter() - start, 2)
        out[f"{side}_rows"] = table.num_rows
        out[f"{side}_late"] = q.late_records_dropped
        got[side] = result_rows(name, table)
    if len(got) == 2:
        out["equal"] = got["native"] == got["spark"] and \
            out["native_late"] == out["spark_late"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--queries", default="")
    parser.add_argument("--disorder", action="store_true")
    parser.add_argument("--batch", action="store_true")
    parser.add_argument("--json", default="")
    parser.add_argument("--timeout", type=int, default=1800)
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.events, args.disorder, args.batch)))
        return
    sys.path.insert(0, str(ROOT))
    from tests.nexmark import queries

    names = [q for q in args.queries.split(",") if q] or list(queries())
    results = []
    print(f"{'query':<6}{'events':>9}{'native s':>10}{'spark s':>9}{'ratio':>7}"
          f"{'rows':>9}{'late n/s':>14}  equal", flush=True)
    for name in names:
        cmd = [sys.executable, "-m", "bench.spark_streaming", "--one", name,
               "--events", str(args.events), *(["--disorder"] if args.disorder else []),
               *(["--batch"] if args.batch else [])]
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                                  check=False, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            r = {"query": name, "events": args.events, "error": f"over {args.timeout} s"}
            results.append(r)
            print(f"{name:<6} timed out after {args.timeout} s", flush=True)
            continue
        if proc.returncode != 0:
            tail = (proc.stderr.strip().splitlines() or ["?"])[-1]
            results.append({"query": name, "events": args.events, "error": tail})
            print(f"{name:<6} failed: {tail}", flush=True)
            continue
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        results.append(r)
        errors = [r[k] for k in ("native_error", "spark_error") if k in r]
        if errors:
            print(f"{name:<6} {'; '.join(str(e) for e in errors)}", flush=True)
            continue
        ratio = float(r["spark_s"]) / max(float(r["native_s"]), 1e-9)  # type: ignore[arg-type]
        late = f"{r['native_late']}/{r['spark_late']}"
        print(f"{name:<6}{r['events']:>9}{r['native_s']:>10}{r['spark_s']:>9}{ratio:>7.1f}"
              f"{r['native_rows']:>9}{late:>14}  {r['equal']}", flush=True)
    print(json.dumps(results))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
