"""Reading files with bad values: 1M lines, 1 % of them holding a value that is no INT, csv
and json, read with '<format>.ignore-parse-errors' = 'true' (as Flink: the value NULL, the row
kept); rows kept, rows skipped and the time of each.

    python -m bench.bad_rows [--lines 1000000]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path


def _files(folder: Path, lines: int) -> tuple[Path, Path, int]:
    r = random.Random(1)
    csv, json, bad = [], [], 0
    for i in range(lines):
        if r.random() < 0.01:
            bad += 1
            csv.append(f"{i},oops,2024-01-01 00:00:00")
            json.append(f'{{"id": {i}, "v": "oops", "ts": "2024-01-01 00:00:00"}}')
        else:
            v = r.randint(0, 10**6)
            csv.append(f"{i},{v},2024-01-01 00:00:{i % 60:02d}")
            json.append(f'{{"id": {i}, "v": {v}, "ts": "2024-01-01 00:00:{i % 60:02d}"}}')
    (folder / "t.csv").write_text("\n".join(csv) + "\n")
    (folder / "t.json").write_text("\n".join(json) + "\n")
    return folder / "t.csv", folder / "t.json", bad


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    import sqlengine

    folder = Path(tempfile.mkdtemp())
    csv, json, bad = _files(folder, args.lines)
    print(f"{args.lines:,} lines, {bad:,} bad ({folder})")
    for fmt, path in (("csv", csv), ("json", json)):
        s = sqlengine.connect()
        s.execute(f"CREATE TABLE t (id BIGINT, v INT, ts TIMESTAMP(3)) WITH ('connector' = "
                  f"'filesystem', 'path' = '{path}', 'format' = '{fmt}', "
                  f"'{fmt}.ignore-parse-errors' = 'true')")
        q = s.sql("SELECT COUNT(*) AS n FROM t")
        start = time.perf_counter()
        n = q.collect().column(0)[0].as_py()
        took = time.perf_counter() - start
        print(f"{fmt:5} {took:7.2f} s  {n:,} rows kept, {q.skipped_rows:,} skipped"
              f"{'' if n + q.skipped_rows == args.lines else '  (rows lost!)'}")


if __name__ == "__main__":
    main()
