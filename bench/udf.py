"""Python UDFs: sqlengine against PyFlink 2.3 in the same run, whole processes.

    python -m bench.udf [--rows 1000000] [--flink-python /tmp/flinkvenv/bin/python] [--no-flink]
    python -m bench.udf --udaf [--rows 1000000] [--groups 1000] [--repeat 3]

A csv of ``rows`` rows (id BIGINT, s STRING) is written once. Each case runs as a fresh
process per engine, reading the csv in batch mode into a blackhole sink:
- ``none``: ``SELECT id * 2 + 1, UPPER(TRIM(s))`` with built-in functions (the baseline);
- ``vectorised``: the same through vectorised UDFs (sqlengine: ``kind='arrow'`` on pyarrow
  arrays; PyFlink: ``func_type='pandas'``);
- ``row``: the same through row-at-a-time UDFs (PyFlink's general Python UDF).
Printed: each side's wall time, the ratio, and sqlengine's UDF overhead over its baseline.

``--udaf``: a GROUP BY of ``rows`` rows into ``groups`` groups (an in-memory table read in
batches of 65,536 rows, batch mode, the query's own time, best of ``repeat`` runs) through
the built-in SUM and through a class UDAF with merge() (a Python SUM), at parallelism 1 and
2, in one phase and in two (local pre-aggregation of pickled accumulators, merged after the
shuffle), in the default task mode (process) and with threads.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OURS = textwrap.dedent("""
    import sys
    import pyarrow.compute as pc
    import sqlengine

    case, path = sys.argv[1], sys.argv[2]

    @sqlengine.udf(result_type="BIGINT", kind="arrow")
    def times_two_plus_one(x):
        return pc.add(pc.multiply(x, 2), 1)

    @sqlengine.udf(result_type="STRING", kind="arrow")
    def normalise(s):
        return pc.utf8_upper(pc.utf8_trim_whitespace(s))

    @sqlengine.udf(result_type="BIGINT")
    def times_two_plus_one_row(x):
        return None if x is None else x * 2 + 1

    @sqlengine.udf(result_type="STRING")
    def normalise_row(s):
        return None if s is None else s.strip().upper()

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    for f in (times_two_plus_one, normalise, times_two_plus_one_row, normalise_row):
        s.create_function(f.name, f)
    s.execute(f"CREATE TABLE t (id BIGINT, s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    s.execute("CREATE TABLE sink_out (a BIGINT, b STRING) WITH ('connector' = 'blackhole')")
    query = {"none": "SELECT id * 2 + 1, UPPER(TRIM(s)) FROM t",
             "vectorised": "SELECT times_two_plus_one(id), normalise(s) FROM t",
             "row": "SELECT times_two_plus_one_row(id), normalise_row(s) FROM t"}[case]
    s.execute("INSERT INTO sink_out " + query)
""")

FLINK = textwrap.dedent("""
    import sys
    from pyflink.table import EnvironmentSettings, TableEnvironment, DataTypes
    from pyflink.table.udf import udf

    case, path = sys.argv[1], sys.argv[2]
    env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    env.get_config().set("parallelism.default", "1")

    @udf(result_type=DataTypes.BIGINT(), func_type="pandas")
    def times_two_plus_one(x):
        return x * 2 + 1

    @udf(result_type=DataTypes.STRING(), func_type="pandas")
    def normalise(s):
        return s.str.strip().str.upper()

    @udf(result_type=DataTypes.BIGINT())
    def times_two_plus_one_row(x):
        return None if x is None else x * 2 + 1

    @udf(result_type=DataTypes.STRING())
    def normalise_row(s):
        return None if s is None else s.strip().upper()

    for name, f in (("times_two_plus_one", times_two_plus_one), ("normalise", normalise),
                    ("times_two_plus_one_row", times_two_plus_one_row),
                    ("normalise_row", normalise_row)):
        env.create_temporary_function(name, f)
    env.execute_sql(f"CREATE TABLE t (id BIGINT, s STRING) WITH ('connector' = 'filesystem', "
                    f"'path' = '{path}', 'format' = 'csv')")
    env.execute_sql("CREATE TABLE sink_out (a BIGINT, b STRING) WITH ('connector' = 'blackhole')")
    query = {"none": "SELECT id * 2 + 1, UPPER(TRIM(s)) FROM t",
             "vectorised": "SELECT times_two_plus_one(id), normalise(s) FROM t",
             "row": "SELECT times_two_plus_one_row(id), normalise_row(s) FROM t"}[case]
    env.execute_sql("INSERT INTO sink_out " + query).wait()
""")


def _run(python: str, script: Path, case: str, data: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run([python, str(script), case, str(data)], capture_output=True,
                          text=True, timeout=3600)
    secs = time.perf_counter() - start
    if done.returncode != 0:
        msg = f"{script.name} {case} failed:\n{done.stderr[-3000:]}"
        raise SystemExit(msg)
    return secs


class PySum:
    """SUM as a class UDAF with merge (PyFlink's AggregateFunction)."""

    def create_accumulator(self) -> list[int]:
        return [0, 0]

    def accumulate(self, acc: list[int], v: int | None) -> None:
        if v is not None:
            acc[0] += v
            acc[1] += 1

    def merge(self, acc: list[int], others: list[list[int]]) -> None:
        for o in others:
            acc[0] += o[0]
            acc[1] += o[1]

    def get_value(self, acc: list[int]) -> int | None:
        return acc[0] if acc[1] else None


def udaf_cases(rows: int, groups: int, repeat: int) -> None:
    import numpy as np
    import pyarrow as pa

    import sqlengine

    data = pa.table({"k": np.arange(rows, dtype=np.int64) % groups,
                     "v": np.arange(rows, dtype=np.int64) % 97})
    batches = data.to_batches(max_chunksize=65536)
    cases = [  # (label, function, parallelism, phases, task mode)
        ("SUM", "SUM", 1, "AUTO", "process"),
        ("SUM", "SUM", 2, "ONE_PHASE", "process"),
        ("SUM", "SUM", 2, "TWO_PHASE", "process"),
        ("class UDAF", "py_sum", 1, "AUTO", "process"),
        ("class UDAF", "py_sum", 2, "ONE_PHASE", "process"),
        ("class UDAF", "py_sum", 2, "TWO_PHASE", "process"),
        ("class UDAF", "py_sum", 2, "AUTO", "process"),
        ("class UDAF", "py_sum", 2, "ONE_PHASE", "thread"),
        ("class UDAF", "py_sum", 2, "TWO_PHASE", "thread"),
    ]
    print(f"{rows:,} rows, {groups:,} groups, batch mode, best of {repeat} "
          "(the query's own time)")
    print(f"{'aggregate':11} {'p':>2} {'strategy':10} {'phases':6} {'tasks':8} {'s':>7}")
    want = None
    for label, fn, p, phases, mode in cases:
        s = sqlengine.connect({"execution.runtime-mode": "batch", "parallelism.default": str(p),
                               "table.optimizer.agg-phase-strategy": phases,
                               "execution.native.task-mode": mode})
        s.create_function("py_sum", sqlengine.udaf(PySum, result_type="BIGINT"))
        s.register("t", pa.Table.from_batches(batches))
        query = s.sql(f"SELECT k, {fn}(v) AS s FROM t GROUP BY k")
        local = "LocalAggregate" in query.explain().split("== Job Graph ==")[1]
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            got = query.collect()
            best = min(best, time.perf_counter() - start)
        got = got.sort_by("k")
        want = want or got
        assert got.equals(want.cast(got.schema)), f"{label} p{p} {phases}: other rows"
        print(f"{label:11} {p:2} {phases:10} {'two' if local else 'one':6} {mode:8} "
              f"{best:7.3f}",
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--flink-python", default="/tmp/flinkvenv/bin/python")
    parser.add_argument("--no-flink", action="store_true")
    parser.add_argument("--udaf", action="store_true", help="the aggregate (UDAF) cases")
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.udaf:
        udaf_cases(args.rows, args.groups, args.repeat)
        return
    work = Path(tempfile.mkdtemp(prefix="bench-udf-"))
    data = work / "t.csv"
    with data.open("w") as f:
        for i in range(args.rows):
            f.write(f"{i},  item-{i % 1000} \n")
    ours, flink = work / "ours.py", work / "flink.py"
    ours.write_text(OURS)
    flink.write_text(FLINK)
    print(f"{args.rows:,} rows ({data.stat().st_size / 1e6:.0f} MB csv), batch mode, "
          "parallelism 1, whole processes")
    print(f"{'case':11} {'sqlengine s':>12} {'pyflink s':>10} {'pyflink/ours':>13}")
    base = None
    for case in ("none", "vectorised", "row"):
        t_ours = _run(sys.executable, ours, case, data)
        base = base or t_ours
        t_flink = None if args.no_flink else _run(args.flink_python, flink, case, data)
        ratio = f"{t_flink / t_ours:12.1f}x" if t_flink else "            -"
        print(f"{case:11} {t_ours:12.2f} {t_flink or 0:10.2f} {ratio}"
              + (f"   (ours over baseline: {t_ours / base:.2f}x)" if case != "none" else ""),
              flush=True)


if __name__ == "__main__":
    main()
