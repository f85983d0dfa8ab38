"""Which late rows an OVER aggregation drops, as Flink 2.3 decides it (three rules: UNBOUNDED
PRECEDING drops rows at or behind the watermark; ROWS n PRECEDING keeps a row unless its key
already emitted one at or after its time; RANGE ... PRECEDING also counts Flink's cleanup
timers). On main every row at or behind the watermark was dropped, whatever the frame (Flink's
UNBOUNDED rule): the ROWS and RANGE cases here failed.

tests/fixtures/flink/over_lateness.json holds PyFlink 2.3's answers for the same files
(streaming, parallelism 1, pipeline.auto-watermark-interval 0: a watermark after every row).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest

import sqlengine

FLINK = json.loads((Path(__file__).parent.parent / "fixtures" / "flink" /
                    "over_lateness.json").read_text())

QUERIES = {
    "range": "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN INTERVAL '1' "
             "MINUTE PRECEDING AND CURRENT ROW) AS s FROM e",
    "rows": "SELECT k, v, COUNT(*) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 PRECEDING "
            "AND CURRENT ROW) AS c, MAX(v) OVER (PARTITION BY k ORDER BY ts ROWS BETWEEN 3 "
            "PRECEDING AND CURRENT ROW) AS m FROM e",
    "unbounded": "SELECT k, v, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN UNBOUNDED "
                 "PRECEDING AND CURRENT ROW) AS s FROM e",
}


def _write(path: Path, seed: int) -> None:
    """300 rows over 3 keys, 15 % of them up to 2 minutes behind (the file PyFlink read)."""
    r = random.Random(seed)
    base = dt.datetime(2024, 1, 1, 8, 0)
    rows, t = [], 0
    for i in range(300):
        t += r.randint(0, 20)
        ts = t - (r.randint(0, 120) if r.random() < 0.15 else 0)
        when = base + dt.timedelta(seconds=max(ts, 0))
        rows.append(f"{r.choice('abc')},{i},{when.strftime('%Y-%m-%d %H:%M:%S')}")
    path.write_text("\n".join(rows) + "\n")


@pytest.mark.parametrize("frame", sorted(QUERIES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_late_rows_as_flink(tmp_path: Path, seed: int, frame: str) -> None:
    _write(tmp_path / "e.csv", seed)
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "pipeline.auto-watermark-interval": "0"})
    s.execute(f"CREATE TABLE e (k STRING, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '30' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path}/e.csv', 'format' = 'csv')")
    got = sorted([list(r.values()) for r in s.sql(QUERIES[frame]).collect().to_pylist()])
    assert got == FLINK[f"{seed}-{frame}"]
