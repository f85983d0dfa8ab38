"""Recursive queries (WITH RECURSIVE): sqlengine next to DuckDB 1.5.5 in the same run.

    python -m bench.iteration [--edges 100000] [--count 100000] [--mode batch]
        [--parallelism 1,2] [--task-mode process|thread] [--cases closure] [--runs 3]
        [--target spark] [--spark-local-rows 0]

Cases (the same SQL on both engines, over the same in-memory Arrow tables; answers compared):
- ``counting``: ``t(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM t WHERE n < count)``, one
  row a round (``count`` rounds: the cost of a round);
- ``closure``: the transitive closure (UNION) of a random graph of ``edges`` edges in
  clusters of 20 nodes (each cluster a small graph with cycles; the closure stays within it);
- ``hops``: hop-count shortest paths from the clusters' first node, up to 6 legs;
- ``bom``: a bill-of-materials explosion (UNION ALL) down a 4-level tree.
Printed: each engine's wall time for the query (warm process, best of ``--runs``), the ratio,
the rows, and the iteration's rounds (sqlengine's metrics).

``--target spark``: sqlengine runs the queries on Spark (``local[p]`` at parallelism p, a
query run first so that the JVM is up; batch mode, or Structured Streaming with ``--mode
streaming``); the rounds column then also says how many ran on the driver (rounds of at most
'table.exec.iteration.spark.local-rows' rows, runtime/spark/iteration.py; set by
``--spark-local-rows``, 0: every round a Spark job). The streaming closure below is native
only.

Then, in streaming mode, the closure maintained as edges arrive: the ``edges`` edges, then
``--added`` more (100) in a later batch, against the closure of all of them computed at once:
the rows the iteration's step was fed (its 'rows_fed' metric) and the time, for the added
edges alone and for the recomputation; the final pairs are checked against DuckDB's.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent


def tables(edges: int) -> dict[str, pa.Table]:
    rng = random.Random(42)
    clusters = max(edges // 20, 1)
    a, b = [], []
    for c in range(clusters):
        base = c * 20
        for _ in range(20):
            a.append(base + rng.randrange(20))
            b.append(base + rng.randrange(20))
    parts = [(p, p * 4 + k, k) for p in range(1 + 4 + 16 + 64) for k in range(1, 5)]
    return {
        "e": pa.table({"a": pa.array(a[:edges], pa.int64()), "b": pa.array(b[:edges], pa.int64())}),
        "bom": pa.table({"assembly": pa.array([p[0] for p in parts], pa.int64()),
                         "part": pa.array([p[1] for p in parts], pa.int64()),
                         "qty": pa.array([p[2] for p in parts], pa.int64())}),
    }


def queries(count: int) -> dict[str, str]:
    return {
        "counting": f"WITH RECURSIVE t(n) AS (VALUES (CAST(1 AS BIGINT)) UNION ALL SELECT n + 1 "
                    f"FROM t WHERE n < {count}) SELECT COUNT(*) AS c, SUM(n) AS s FROM t",
        "closure": "WITH RECURSIVE r(x, y) AS (SELECT a, b FROM e UNION SELECT r.x, e.b FROM r "
                   "JOIN e ON r.y = e.a) SELECT COUNT(*) AS c, SUM(x) AS sx, SUM(y) AS sy "
                   "FROM r",
        "hops": "WITH RECURSIVE p(src, dst, hops) AS (SELECT a, b, 1 FROM e WHERE a % 20 = 0 "
                "UNION SELECT p.src, e.b, p.hops + 1 FROM p JOIN e ON p.dst = e.a "
                "WHERE p.hops < 6) SELECT COUNT(*) AS c, SUM(h) AS s FROM (SELECT src, dst, "
                "MIN(hops) AS h FROM p GROUP BY src, dst)",
        "bom": "WITH RECURSIVE x(part, qty) AS (SELECT part, qty FROM bom WHERE assembly = 0 "
               "UNION ALL SELECT bom.part, x.qty * bom.qty FROM x JOIN bom ON "
               "bom.assembly = x.part) SELECT COUNT(*) AS c, SUM(qty) AS s FROM x",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--mode", default="batch", choices=["batch", "streaming"])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--added", type=int, default=100)
    parser.add_argument("--parallelism", default="1",
                        help="comma-separated: each case at each (e.g. 1,2); a step with an "
                             "equi-join of the recursive table runs partitioned at p > 1")
    parser.add_argument("--task-mode", default="process", choices=["process", "thread"])
    parser.add_argument("--cases", default="", help="comma-separated subset of the cases")
    parser.add_argument("--no-incremental", action="store_true")
    parser.add_argument("--target", default="native", choices=["native", "spark"])
    parser.add_argument("--spark-local-rows", default="",
                        help="'table.exec.iteration.spark.local-rows' (0: no round on the "
                             "driver)")
    args = parser.parse_args()
    parallelisms = [int(p) for p in args.parallelism.split(",")]
    wanted = set(args.cases.split(",")) if args.cases else None
    sys.path.insert(0, str(ROOT))
    import duckdb

    import sqlengine

    data = tables(args.edges)
    con = duckdb.connect()
    for name, t in data.items():
        con.register(name, t)
    print(f"{'case':13} {'sqlengine s':>12} {'duckdb s':>9} {'ratio':>6} {'rounds':>7}  answer")
    runs = [(case, sql, p) for case, sql in queries(args.count).items()
            if wanted is None or case in wanted for p in parallelisms]
    for case, sql, parallelism in runs:
        theirs = ours = None
        duck = mine = float("inf")
        rounds = local = 0
        for _ in range(args.runs):
            start = time.perf_counter()
            theirs = con.sql(sql).fetchall()
            duck = min(duck, time.perf_counter() - start)
            options = {"execution.runtime-mode": args.mode,
                       "parallelism.default": str(parallelism),
                       "execution.native.task-mode": args.task_mode}
            if args.target == "spark":  # (the task mode is the native runtime's)
                del options["execution.native.task-mode"]
                options.update({"execution.target": "spark",
                                "spark.master": f"local[{parallelism}]"})
                if args.spark_local_rows:
                    options["table.exec.iteration.spark.local-rows"] = args.spark_local_rows
            s = sqlengine.connect(options)
            for name, t in data.items():
                s.register(name, t)
            if args.target == "spark":  # (the JVM up, and its first query's costs paid)
                s.sql("SELECT COUNT(*) FROM bom").collect()
            start = time.perf_counter()
            q = s.sql(sql)
            ours = [tuple(r.values()) for r in q.collect().to_pylist()]
            mine = min(mine, time.perf_counter() - start)
            rounds = sum(m.get("rounds", 0) for m in q.metrics().values())
            local = sum(m.get("local_rounds", 0) for m in q.metrics().values())
        same = "same" if [tuple(int(v) for v in r) for r in ours or []] == \
            [tuple(int(v) for v in r) for r in theirs or []] else f"DIFFERENT {ours} {theirs}"
        label = f"{case} p{parallelism}" if parallelisms != [1] else case
        on_driver = f" ({local} on the driver)" if args.target == "spark" else ""
        print(f"{label:13} {mine:12.3f} {duck:9.3f} {mine / duck:6.1f} {rounds:7d}  {same} "
              f"{theirs}{on_driver}")
    if args.target == "spark" and not args.no_incremental:
        print("\n(the streaming closure's incremental run is native only)")
    elif not args.no_incremental:
        incremental(data["e"], args.added, con)


def _streamed(batches: list[pa.Table]) -> tuple[list[tuple], int, float]:
    import sqlengine

    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("e", iter([b for t in batches for b in t.to_batches()]))
    start = time.perf_counter()
    q = s.sql(queries(0)["closure"])
    rows = [tuple(r.values()) for r in q.collect().to_pylist()]
    fed = sum(m.get("rows_fed", 0) for m in q.metrics().values())
    return rows, fed, time.perf_counter() - start


def incremental(edges: pa.Table, added: int, con: object) -> None:
    """The closure maintained as ``added`` edges arrive after ``edges``, next to computing
    the closure of all of them at once."""
    rng = random.Random(7)
    clusters = max(len(edges) // 20, 1)
    more = [(c * 20 + rng.randrange(20), c * 20 + rng.randrange(20))
            for c in (rng.randrange(clusters) for _ in range(added))]
    extra = pa.table({"a": pa.array([m[0] for m in more], pa.int64()),
                      "b": pa.array([m[1] for m in more], pa.int64())})
    _, fed_first, t_first = _streamed([edges])
    rows, fed_both, t_both = _streamed([edges, extra])
    whole, fed_whole, t_whole = _streamed([pa.concat_tables([edges, extra])])
    con.register("e", pa.concat_tables([edges, extra]))  # type: ignore[attr-defined]
    theirs = con.sql(queries(0)["closure"]).fetchall()  # type: ignore[attr-defined]
    same = "same" if rows == whole and [tuple(int(v) for v in r) for r in rows] == \
        [tuple(int(v) for v in r) for r in theirs] else "DIFFERENT"
    print(f"\nstreaming closure, {len(edges):,} edges then {added} more ({same} as DuckDB):")
    # (times of separate runs: their difference is within the noise of a busy machine, so
    # both are printed; the rows fed are exact)
    print(f"  the {added} added edges: step fed {fed_both - fed_first:,} rows (the stream "
          f"with them {t_both:.3f} s, without them {t_first:.3f} s)")
    print(f"  recomputed from scratch: step fed {fed_whole:,} rows, {t_whole:.3f} s")


if __name__ == "__main__":
    main()
