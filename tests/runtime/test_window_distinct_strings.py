"""COUNT(DISTINCT x) of a STRING (or DATE, BOOLEAN) in a window aggregate failed with Arrow's
"hash_sum has no kernel matching (string, uint32)": the distinct values' per-group SUM was
computed for COUNT too (runtime/operators/partials.py). TUMBLE, HOP and CUMULATE, batch and
streaming, one and two subtasks, against the windows computed here in Python (PyFlink 2.3
gave the same counts for the CUMULATE case)."""

from __future__ import annotations

import datetime as dt
import random
from collections import defaultdict

import pyarrow as pa
import pytest

import sqlengine

START = dt.datetime(2024, 1, 1)


def _rows() -> pa.Table:
    r = random.Random(11)
    # (in time order: a registered table's watermark follows its rows, no row is late)
    ts = sorted(START + dt.timedelta(seconds=r.randint(0, 3600)) for _ in range(400))
    return pa.table({"k": [r.choice(["a", "b", "c", None]) for _ in ts],
                     "d": [dt.date(2024, 1, r.randint(1, 3)) for _ in ts],
                     "f": [r.random() < 0.5 for _ in ts],
                     "ts": pa.array(ts, pa.timestamp("ms"))})


def _windows(kind: str, t: dt.datetime) -> list[tuple[dt.datetime, dt.datetime]]:
    minute = dt.timedelta(minutes=1)
    offset = t - START
    if kind == "TUMBLE":  # 10 minutes
        s = START + offset // (10 * minute) * (10 * minute)
        return [(s, s + 10 * minute)]
    if kind == "HOP":  # slide 10, size 30
        last = START + offset // (10 * minute) * (10 * minute)
        return [(last - i * 10 * minute, last - i * 10 * minute + 30 * minute)
                for i in range(3)]
    s = START + offset // (30 * minute) * (30 * minute)  # CUMULATE: step 10, max 30
    return [(s, s + i * 10 * minute) for i in (1, 2, 3) if s + i * 10 * minute > t]


TVF = {"TUMBLE": "TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE)",
       "HOP": "HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE, INTERVAL '30' MINUTE)",
       "CUMULATE": "CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE, "
                   "INTERVAL '30' MINUTE)"}


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("kind", sorted(TVF))
def test_count_distinct_of_strings_dates_and_booleans(kind: str, mode: str,
                                                      parallelism: str) -> None:
    table = _rows()
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism})
    s.register("t", table, rowtime="ts")
    got = {(r["window_start"], r["window_end"]): (r["nk"], r["nd"], r["nf"]) for r in s.sql(
        f"SELECT window_start, window_end, COUNT(DISTINCT k) AS nk, COUNT(DISTINCT d) AS nd, "
        f"COUNT(DISTINCT f) AS nf FROM TABLE({TVF[kind]}) GROUP BY window_start, window_end"
    ).collect().to_pylist()}
    seen: dict[tuple[dt.datetime, dt.datetime], list[set[object]]] = defaultdict(
        lambda: [set(), set(), set()])
    for row in table.to_pylist():
        for w in _windows(kind, row["ts"]):
            for i, c in enumerate("kdf"):
                if row[c] is not None:
                    seen[w][i].add(row[c])
    assert got == {w: tuple(len(v) for v in sets) for w, sets in seen.items()}
