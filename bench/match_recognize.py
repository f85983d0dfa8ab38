"""MATCH_RECOGNIZE over Nexmark bids: a price-drop pattern per auction, sqlengine next to
Apache Flink 2.3 (PyFlink) on the same csv file, in the same run, with the rows compared.

    python -m bench.match_recognize [--events 1000000] [--flink-python /tmp/flinkvenv/bin/python]

Both sides: streaming mode, parallelism 1, a watermark after every row
(pipeline.auto-watermark-interval 0), the matches written to a csv file; the time is the whole
statement's (PyFlink's includes its mini-cluster's start, as a user's would).
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pyarrow.csv as pacsv

DDL = """CREATE TABLE bid (auction BIGINT, price BIGINT, `dateTime` TIMESTAMP(3),
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND)
    WITH ('connector' = 'filesystem', 'path' = '{src}', 'format' = 'csv');
CREATE TABLE drops (auction BIGINT, start_price BIGINT, bottom BIGINT, end_price BIGINT,
    n BIGINT, t TIMESTAMP(3))
    WITH ('connector' = 'filesystem', 'path' = '{out}', 'format' = 'csv')"""

QUERY = """INSERT INTO drops SELECT * FROM bid MATCH_RECOGNIZE (
    PARTITION BY auction ORDER BY `dateTime`
    MEASURES A.price AS start_price, LAST(B.price) AS bottom, C.price AS end_price,
        COUNT(B.price) AS n, MATCH_ROWTIME() AS t
    ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
    PATTERN (A B+ C)
    DEFINE B AS B.price < LAST(B.price, 1) OR (LAST(B.price, 1) IS NULL AND B.price < A.price),
        C AS C.price >= LAST(B.price))"""

FLINK = textwrap.dedent("""
    import sys, time
    from pyflink.table import EnvironmentSettings, TableEnvironment
    ddl, query = sys.argv[1], sys.argv[2]
    start = time.perf_counter()
    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    conf.set("parallelism.default", "1")
    conf.set("pipeline.auto-watermark-interval", "0")
    for stmt in ddl.split(";"):
        env.execute_sql(stmt)
    env.execute_sql(query).wait()
    print(time.perf_counter() - start)
""")


def _bids(events: int, path: Path) -> int:
    from tests.nexmark import tables

    bid = tables(events)["bid"].select(["auction", "price", "dateTime"])
    pacsv.write_csv(bid, path, pacsv.WriteOptions(include_header=False))
    return bid.num_rows


def _lines(folder: Path) -> list[str]:
    """The csv rows written, with each engine's way of writing a timestamp made one
    (Flink quotes it and drops trailing zeros of the fraction)."""
    out: list[str] = []
    for f in sorted(folder.rglob("*")):
        if f.is_file() and not f.name.startswith("."):
            for line in f.read_text().splitlines():
                if line:
                    fields = [_time(v.strip('"').replace("T", " ")) for v in line.split(",")]
                    out.append(",".join(fields))
    return sorted(out)


def _time(v: str) -> str:
    if len(v) > 19 and v[4] == "-" and "." in v:
        v = v.rstrip("0").rstrip(".")
    return v


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--flink-python", default="/tmp/flinkvenv/bin/python")
    args = parser.parse_args()
    import sqlengine

    work = Path(tempfile.mkdtemp())
    src = work / "bid.csv"
    rows = _bids(args.events, src)
    print(f"{rows:,} bids from {args.events:,} Nexmark events: {src}")

    ours_out = work / "ours"
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "pipeline.auto-watermark-interval": "0"})
    start = time.perf_counter()
    s.execute(DDL.format(src=src, out=ours_out))
    s.execute(QUERY)
    ours = time.perf_counter() - start
    ours_rows = _lines(ours_out)
    print(f"sqlengine  {ours:8.2f} s  {len(ours_rows):,} matches")

    flink_python = Path(args.flink_python)
    if not flink_python.exists():
        print(f"PyFlink: {flink_python} not found (pip install apache-flink==2.3.0 in its own "
              "venv); no comparison")
        return
    flink_out = work / "flink"
    start = time.perf_counter()
    done = subprocess.run([str(flink_python), "-c", FLINK, DDL.format(src=src, out=flink_out),
                           QUERY], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        causes = [ln for ln in done.stderr.splitlines() if "Exception" in ln]
        print("PyFlink failed:", causes[-3:] or done.stderr.strip().splitlines()[-3:])
        return
    flink_rows = _lines(flink_out)
    print(f"Flink 2.3  {wall:8.2f} s  {len(flink_rows):,} matches (whole process; "
          f"{float(done.stdout.split()[-1]):.2f} s in the statement)")
    same = "the same rows" if ours_rows == flink_rows else "DIFFERENT rows"
    print(f"ratio Flink/sqlengine: {wall / ours:.2f}x; {same}")
    if ours_rows != flink_rows:
        a, b = set(ours_rows), set(flink_rows)
        print("  only sqlengine:", sorted(a - b)[:5])
        print("  only Flink:", sorted(b - a)[:5])


if __name__ == "__main__":
    main()
