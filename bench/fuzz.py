"""The grammar-based SQL fuzzer (tests/fuzz.py) at scale: statements drawn with a seed, each
giving rows or a SqlEngineError; prints the tally and every crash, bug report and hang.

    python -m bench.fuzz [--statements 20000] [--seed 1]
"""

from __future__ import annotations

import argparse
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from tests.fuzz import run

    start = time.perf_counter()
    tally = run(args.seed, args.statements)
    took = time.perf_counter() - start
    errors = sum(tally.errors.values())
    print(f"{tally.statements:,} statements in {took:.1f} s (seed {args.seed}): "
          f"{tally.statements - errors - len(tally.crashes) - len(tally.hangs):,} ran "
          f"({tally.rows:,} rows), {errors:,} refused with a SqlEngineError, "
          f"{len(tally.crashes)} crashed, {len(tally.hangs)} hung past 10 s, "
          f"{len(tally.bugs)} reported a bug; slowest {tally.slowest:.2f} s")
    print("  errors:", ", ".join(f"{k} {v:,}" for k, v in tally.errors.most_common()))
    for sql, e in tally.crashes + tally.bugs:
        print(f"  {e}\n    {sql[:300]!r}")
    for sql in tally.hangs:
        print(f"  hang: {sql[:300]!r}")


if __name__ == "__main__":
    main()
