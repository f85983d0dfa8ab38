"""Generated queries (tests/querygen.py: every shape, subqueries, set operations, grouping
sets, window functions, every join form) against DuckDB, in batch and streaming mode.

    python -m bench.differential [--queries 1000] [--seed 2026]

Prints per shape and mode how many agreed, mismatched or failed, and each mismatch or error;
exits non-zero when any did. (CI runs a slice of the same generator in
tests/test_differential.py.)
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import duckdb

    import sqlengine
    from tests.querygen import Gen, make_tables
    from tests.test_differential import _key, _rows, same_rows

    data = make_tables()
    con = duckdb.connect()
    for name, table in data.items():
        con.register(name, table)
    gen = Gen(args.seed)
    counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
    problems = []
    start = time.perf_counter()
    for _ in range(args.queries):
        shape = gen.pick(sorted(n.removeprefix("q_") for n in dir(gen) if n.startswith("q_")))
        pair = getattr(gen, f"q_{shape}")()
        for mode in ("batch", "streaming"):
            reference = pair.duck_streaming if mode == "streaming" and pair.duck_streaming \
                else pair.duck
            want = _rows(con.sql(reference).fetchall())
            s = sqlengine.connect({"execution.runtime-mode": mode})
            for name, table in data.items():
                s.register(name, table)
            try:
                got = _rows([tuple(r.values()) for r in s.sql(pair.flink).collect().to_pylist()])
            except sqlengine.errors.NotSupportedError as e:
                counts[(shape, mode, "refused")] += 1
                problems.append((mode, pair.flink, f"refused: {e.message}"))
                continue
            except Exception as e:  # a benchmark reports every failure and goes on
                counts[(shape, mode, "error")] += 1
                problems.append((mode, pair.flink, f"{type(e).__name__}: {e}"))
                continue
            a, b = (got, want) if pair.ordered else (sorted(got, key=_key), sorted(want, key=_key))
            verdict = "agree" if same_rows(a, b) else "mismatch"
            counts[(shape, mode, verdict)] += 1
            if verdict == "mismatch":
                problems.append((mode, pair.flink, f"{len(got)} rows vs DuckDB's {len(want)}"))
    secs = time.perf_counter() - start
    shapes = sorted({s for s, _, _ in counts})
    print(f"{'shape':18} {'mode':10} {'agree':>6} {'mismatch':>9} {'error':>6} {'refused':>8}")
    for shape in shapes:
        for mode in ("batch", "streaming"):
            c = [counts[(shape, mode, v)] for v in ("agree", "mismatch", "error", "refused")]
            print(f"{shape:18} {mode:10} {c[0]:6} {c[1]:9} {c[2]:6} {c[3]:8}")
    total = {v: sum(n for (_, _, k), n in counts.items() if k == v)
             for v in ("agree", "mismatch", "error", "refused")}
    print(f"{args.queries} queries x 2 modes in {secs:.0f} s: {total}")
    for mode, sql, what in problems:
        print(f"[{mode}] {what}\n    {sql}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
