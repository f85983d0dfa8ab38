"""Nexmark from csv files against Apache Flink 2.3 (PyFlink), side by side in one run.

    python -m bench.nexmark_flink [--events 1000000] [--queries q0,q1,q2,q5,q7,q8]
                                  [--flink-python /tmp/flinkvenv/bin/python] [--no-flink]

The generator's person, auction and bid tables are written once as csv files (no header, as
Flink's csv format reads them). Each query then runs in a fresh process per engine:
``sqlengine run`` of a script and a PyFlink script holding the same statements: the three
tables over the csv files (filesystem connector, the same watermarks), a blackhole sink with
the query's columns and ``INSERT INTO sink <query>``; streaming mode, parallelism 1. The time
is the whole process's wall time (Flink's includes its JVM and mini-cluster start, as a user's
would), with each side's peak RSS (of the process tree: for Flink, with its JVM).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_QUERIES = "q0,q1,q2,q3,q4,q5,q7,q8"

FLINK = textwrap.dedent("""
    import sys
    from pyflink.table import EnvironmentSettings, TableEnvironment
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    env.get_config().set("parallelism.default", "1")
    statements = [s for s in open(sys.argv[1]).read().split(";\\n") if s.strip()]
    for stmt in statements[:-1]:
        env.execute_sql(stmt)
    env.execute_sql(statements[-1]).wait()
""")


def _write_tables(events: int, folder: Path) -> dict[str, Path]:
    import pyarrow.csv as pacsv

    sys.path.insert(0, str(ROOT))
    from tests.nexmark import tables

    paths = {}
    for name, table in tables(events).items():
        paths[name] = folder / f"{name}.csv"
        pacsv.write_csv(table, paths[name], pacsv.WriteOptions(include_header=False))
    return paths


def _quoted(sql: str) -> str:
    """``dateTime`` in backticks: a reserved word for Flink's parser (sqlengine takes it bare)."""
    return re.sub(r"(?<!`)\bdateTime\b(?!`)", "`dateTime`", sql)


def _ddl(paths: dict[str, Path]) -> str:
    text = (ROOT / "queries" / "nexmark" / "ddl.sql").read_text()
    out = []
    for line in text.splitlines():
        if line.startswith("--"):
            continue
        for name, path in paths.items():
            marker = f"'nexmark.table' = '{name}'"
            if marker in line:
                line = (f") WITH ('connector' = 'filesystem', 'path' = '{path}', "
                        "'format' = 'csv');")
        out.append(line)
    return _quoted("\n".join(out))


def _query(name: str) -> tuple[str, str]:
    """The statements a query's script runs first (each ending ';\n': views, side tables),
    and the query whose rows go to the blackhole sink: the script's last statement, or the
    SELECT of its INSERT (q10 writes to a file table; here its rows go to the blackhole)."""
    from sqlengine.parser import split_script

    text = (ROOT / "queries" / "nexmark" / f"{name}.sql").read_text()
    text = text.replace("'queries/", f"'{ROOT}/queries/")
    body = "\n".join(ln for ln in text.splitlines() if not ln.startswith("--")).strip()
    statements = [st.strip().rstrip(";") for _, st in split_script(body) if st.strip()]
    inserts = [st for st in statements if st.upper().startswith("INSERT")]
    if inserts:
        target = inserts[0].split()[2]  # INSERT INTO|OVERWRITE <table> SELECT ...
        query = inserts[0][inserts[0].upper().index("SELECT"):]
        prelude = [st for st in statements if st not in inserts and
                   not st.upper().startswith("SELECT") and target not in st.split("(")[0]]
    else:
        query, prelude = statements[-1], statements[:-1]
    return "".join(f"{_quoted(st)};\n" for st in prelude), _quoted(query)


def _sink(ddl: str, query: str, prelude: str = "") -> str:
    """The blackhole sink's DDL, with the query's columns (asked of sqlengine)."""
    import sqlengine
    from sqlengine import types as T

    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(ddl)
    if prelude:
        s.execute(prelude)
    schema = s.sql(query).schema
    columns = ", ".join(f"`{f.name}` {T.type_name(f.type)}" for f in schema)
    return f"CREATE TABLE sink ({columns}) WITH ('connector' = 'blackhole')"


def _tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants now (0 once gone)."""
    total = 0
    stack = [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as f:
                total += int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


# Both sides run as installed programs do: with bytecode caching on (this machine sets
# PYTHONDONTWRITEBYTECODE, which would have every run compile sqlengine's modules again).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _package_dirs() -> list[str]:
    import importlib

    return [p for name in ("sqlengine", "sqlengine.runtime", "sqlengine.optimizer",
                           "sqlengine.shell")
            for p in importlib.import_module(name).__path__]


def _run(argv: list[str]) -> tuple[float, float, str]:
    """Wall seconds, peak RSS in MB of the process tree (sampled every 50 ms: Flink's JVM is a
    child of its Python process) and an error text ('' if it worked)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, text=True,
                                env=_ENV)
        peak = 0
        while proc.poll() is None:
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.05)
        wall = time.perf_counter() - start
        err.seek(0)
        lines = [ln for ln in err.read().splitlines() if ln.strip()]
    if proc.returncode != 0:
        causes = [ln for ln in lines if "Exception" in ln or "rror" in ln]
        return wall, peak / 2**20, (causes or lines or ["failed"])[-1][:160]
    return wall, peak / 2**20, ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--queries", default=DEFAULT_QUERIES)
    parser.add_argument("--flink-python", default="/tmp/flinkvenv/bin/python")
    parser.add_argument("--no-flink", action="store_true")
    parser.add_argument("--parallelism", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nexmark-csv-"))
    start = time.perf_counter()
    paths = _write_tables(args.events, work)
    sizes = ", ".join(f"{n} {p.stat().st_size / 1e6:.0f} MB" for n, p in paths.items())
    print(f"{args.events:,} events as csv in {time.perf_counter() - start:.1f} s: {sizes}")
    ddl = _ddl(paths)
    flink = Path(args.flink_python)
    with_flink = not args.no_flink and flink.exists()
    if not with_flink:
        print(f"PyFlink: not run ({flink} missing or --no-flink)")
    sqlengine_bin = [sys.executable, "-m", "sqlengine.shell.cli"]
    # (bytecode of every module and the grammar's cache written once, untimed)
    subprocess.run([sys.executable, "-m", "compileall", "-q", *_package_dirs()], env=_ENV,
                   stdout=subprocess.DEVNULL, check=False)
    warm = work / "warm.sql"
    warm.write_text("SELECT 1;\n")
    _run([*sqlengine_bin, "run", str(warm)])
    print(f"{'query':<6}{'sqlengine s':>12}{'RSS MB':>8}{'Flink s':>10}{'RSS MB':>8}"
          f"{'Flink/ours':>12}")
    for name in args.queries.split(","):
        prelude, query = _query(name)
        try:
            sink = _sink(ddl, query, prelude)
        except Exception as e:  # the bench reports, it does not stop
            print(f"{name:<6} cannot plan: {e}")
            continue
        script = (f"SET 'execution.runtime-mode' = 'streaming';\n"
                  f"SET 'parallelism.default' = '{args.parallelism}';\n"
                  f"{ddl}\n{prelude}{sink};\nINSERT INTO sink {query};\n")
        ours_file = work / f"{name}.sql"
        ours_file.write_text(script)
        ours, ours_rss, ours_err = _run([*sqlengine_bin, "run", str(ours_file)])
        row = f"{name:<6}{ours:>12.2f}{ours_rss:>8.0f}"
        if ours_err:
            row += f"  sqlengine failed: {ours_err}"
        if with_flink:
            flink_file = work / f"{name}.flink.sql"
            flink_file.write_text(f"{ddl}\n{prelude}{sink};\nINSERT INTO sink {query}\n")
            theirs, rss, err = _run([str(flink), "-c", FLINK, str(flink_file)])
            if err:
                row += f"  Flink failed: {err}"
            else:
                row += f"{theirs:>10.2f}{rss:>8.0f}{theirs / ours:>11.2f}x"
        print(row, flush=True)
    if not os.environ.get("KEEP"):
        for f in work.iterdir():
            f.unlink()
        work.rmdir()


if __name__ == "__main__":
    main()
