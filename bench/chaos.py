"""Chaos benchmark of checkpoints: kill the job, restore it, and check the committed output.

A windowed aggregation over the Nexmark bids from csv (TUMBLE 10 s, COUNT and MAX per
auction) writes into a filesystem csv sink with a checkpoint every second. Figures, side by
side in one run:

  * the uninterrupted run without checkpoints (the reference output, and the throughput
    anchor) and with checkpoints every second (the overhead);
  * ``sqlengine run --restore DIR``'s whole process group SIGKILLed ``--kills`` times at random
    moments and restarted each time: lost and duplicated lines of the committed output
    against the reference;
  * the same at parallelism 2 (process mode), and a worker process (not the job's own)
    killed ``--worker-kills`` times under 'restart-strategy.type' = 'fixed-delay'.

    python -m bench.chaos                    # 10M events (about 9.2M bids)
    python -m bench.chaos --events 1000000 --kills 5
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SQLENGINE = [str(Path(sys.executable).with_name("sqlengine"))]

QUERY = """
SET 'execution.runtime-mode' = 'streaming';
{settings}
CREATE TABLE bid (
    auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    dateTime TIMESTAMP(3), extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{bids}', 'format' = 'csv');
CREATE TABLE out_t (auction BIGINT, window_start TIMESTAMP(3), window_end TIMESTAMP(3),
                    cnt BIGINT, max_price BIGINT)
WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv');
INSERT INTO out_t
SELECT auction, window_start, window_end, COUNT(*) AS cnt, MAX(price) AS max_price
FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
GROUP BY auction, window_start, window_end;
"""


def _write_bids(events: int, path: Path) -> int:
    import pyarrow.csv as pacsv

    sys.path.insert(0, str(ROOT))
    from tests.nexmark import tables

    bids = tables(events)["bid"]
    pacsv.write_csv(bids, path, pacsv.WriteOptions(include_header=False))
    return bids.num_rows


def _script(work: Path, name: str, bids: Path, out: Path, checkpoints: Path | None,
            extra: str = "") -> Path:
    settings = extra
    if checkpoints is not None:
        settings += (f"\nSET 'execution.checkpointing.interval' = '1 s';\n"
                     f"SET 'execution.checkpointing.dir' = '{checkpoints}';")
    path = work / f"{name}.sql"
    path.write_text(QUERY.format(settings=settings, bids=bids, out=out))
    return path


def _lines(out: Path) -> collections.Counter[str]:
    """The committed output: the visible part files' lines."""
    lines: collections.Counter[str] = collections.Counter()
    for f in sorted(out.glob("part-*")):
        lines.update(f.read_text().splitlines())
    return lines


def _hidden(out: Path) -> int:
    return sum(1 for f in out.iterdir() if f.name.startswith("."))


def _run(script: Path, restore: Path | None = None) -> tuple[float, int, str]:
    argv = [*SQLENGINE, "run", str(script)]
    if restore is not None:
        argv += ["--restore", str(restore)]
    start = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    return time.perf_counter() - start, p.returncode, p.stderr + p.stdout


def _compare(reference: collections.Counter[str], got: collections.Counter[str]
             ) -> tuple[int, int]:
    lost = sum((reference - got).values())
    duplicated = sum((got - reference).values())
    return lost, duplicated


def _chaos(script: Path, restore: Path, kills: int, window: tuple[float, float],
           rng: random.Random) -> tuple[int, int, float]:
    """Run, SIGKILL the process group at a random moment, restart with --restore; ``kills``
    times, then to the end. Returns (kills done, runs, seconds)."""
    done = 0
    runs = 0
    start = time.perf_counter()
    while True:
        runs += 1
        p = subprocess.Popen([*SQLENGINE, "run", str(script), "--restore", str(restore)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        if done < kills:
            try:
                p.wait(timeout=rng.uniform(*window))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
                done += 1
                continue
        out, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"run {runs} failed ({p.returncode}):\n{out}")
        return done, runs, time.perf_counter() - start


def _worker_chaos(script: Path, kills: int, window: tuple[float, float],
                  rng: random.Random) -> tuple[int, str, float]:
    """Kill a worker process of a running job (not the job's own process) ``kills`` times;
    the restart strategy brings it back from its last checkpoint."""
    start = time.perf_counter()
    p = subprocess.Popen([*SQLENGINE, "run", str(script)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, start_new_session=True)
    done = 0
    while done < kills and p.poll() is None:
        time.sleep(rng.uniform(*window))
        children = _children(p.pid)
        if not children:
            continue
        try:
            os.kill(rng.choice(children), signal.SIGKILL)
            done += 1
        except ProcessLookupError:
            continue
    out, _ = p.communicate()
    if p.returncode != 0:
        raise SystemExit(f"the job failed ({p.returncode}):\n{out}")
    return done, out, time.perf_counter() - start


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--worker-kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-parallel", action="store_true")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs with and without checkpoints, alternating, for the overhead")
    parser.add_argument("--bids", type=Path, default=None,
                        help="a bids csv written by an earlier run (else generated)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="sqlengine-chaos-"))
    start = time.perf_counter()
    if args.bids is not None:
        bids = args.bids
        with open(bids, "rb") as f:
            rows = sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 24), b""))
    else:
        bids = work / "bid.csv"
        rows = _write_bids(args.events, bids)
    print(f"{rows:,} bids as csv ({bids.stat().st_size / 2**20:,.0f} MiB) in "
          f"{time.perf_counter() - start:.1f} s; work directory {work}")

    # The overhead: runs without and with checkpoints alternate (--repeat pairs; medians),
    # so that a machine busy for a while weighs on both alike.
    plains, timeds = [], []
    for i in range(args.repeat):
        ref_out = work / f"out-reference-{i}"
        took, code, text = _run(_script(work, f"reference-{i}", bids, ref_out, None))
        if code:
            raise SystemExit(text)
        plains.append(took)
        cp_out = work / f"out-checkpointed-{i}"
        took, code, text = _run(_script(work, f"checkpointed-{i}", bids, cp_out,
                                        work / f"ck-plain-{i}"))
        if code:
            raise SystemExit(text)
        timeds.append(took)
    reference = _lines(ref_out)
    plain, timed = statistics.median(plains), statistics.median(timeds)
    print(f"uninterrupted, no checkpoints:       {plain:5.1f} s  {rows / plain:12,.0f} rows/s  "
          f"{sum(reference.values()):,} result lines (median of {args.repeat}: "
          f"{', '.join(f'{t:.1f}' for t in plains)})")
    lost, dup = _compare(reference, _lines(cp_out))
    print(f"uninterrupted, checkpoint every 1 s: {timed:5.1f} s  {rows / timed:12,.0f} rows/s  "
          f"overhead {100 * (timed - plain) / plain:+.1f} %  lost {lost} duplicated {dup} "
          f"(median of {args.repeat}: {', '.join(f'{t:.1f}' for t in timeds)})")

    window = (0.5, max(1.5, plain / 8))
    cases = [("parallelism 1", "")]
    if not args.skip_parallel:
        cases.append(("parallelism 2", "SET 'parallelism.default' = '2';"))
    for label, extra in cases:
        out = work / f"out-chaos-{label[-1]}"
        ck = work / f"ck-chaos-{label[-1]}"
        script = _script(work, f"chaos-{label[-1]}", bids, out, ck, extra)
        kills, runs, took = _chaos(script, ck, args.kills, window, rng)
        lost, dup = _compare(reference, _lines(out))
        print(f"{label}: {kills} SIGKILLs of the process group, {runs} runs, {took:.1f} s: "
              f"lost {lost} duplicated {dup} of {sum(reference.values()):,} lines "
              f"({_hidden(out)} hidden uncommitted files left)")
    if not args.skip_parallel and args.worker_kills:
        out = work / "out-workers"
        script = _script(work, "workers", bids, out, work / "ck-workers",
                         "SET 'parallelism.default' = '2';\n"
                         "SET 'restart-strategy.type' = 'fixed-delay';\n"
                         f"SET 'restart-strategy.fixed-delay.attempts' = "
                         f"'{args.worker_kills * 2}';\n"
                         "SET 'restart-strategy.fixed-delay.delay' = '200 ms';")
        kills, text, took = _worker_chaos(script, args.worker_kills, window, rng)
        lost, dup = _compare(reference, _lines(out))
        restarts = text.count("restarted")
        print(f"parallelism 2, worker processes SIGKILLed {kills} times under fixed-delay "
              f"restarts ({took:.1f} s): lost {lost} duplicated {dup}; {restarts} restart "
              "lines reported")


if __name__ == "__main__":
    main()
