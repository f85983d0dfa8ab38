"""Batch mode: a window TVF over the rows of an operator that emits them when its input ends
(a join, a GROUP BY, an ORDER BY ... LIMIT) fed its window aggregate or window Top-N rows
that came after the end-of-input watermark had passed that operator, so every row was
behind it: the query returned no rows at all, without a word (found by a probe against
PyFlink 2.3, whose batch windows give the rows below). Such an operator now holds the
watermarks that reach it and lets them go after its rows (Operator.holds_until_end).

Expected rows: DuckDB's over the same data, windows as time_bucket."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

import sqlengine

BASE = dt.datetime(2024, 1, 1)
N = 300
ORDERS = pa.table({
    "id": pa.array(range(N), pa.int32()),
    "k": [f"k{(i * 7) % 11}" for i in range(N)],
    "ts": pa.array([BASE + dt.timedelta(milliseconds=(i * 7919) % 120_000) for i in range(N)],
                   pa.timestamp("ms"))})
KEYS = pa.table({"k": [f"k{i}" for i in range(0, 11, 2)], "w": list(range(6))})

TUMBLE = "TABLE(TUMBLE(({inner}), DESCRIPTOR(ts), INTERVAL '10' SECOND))"
INNER = {
    "join": "SELECT o.id, o.ts FROM o JOIN keys AS c ON o.k = c.k",
    "semi": "SELECT id, ts FROM o WHERE k IN (SELECT k FROM keys)",
    "group_by": "SELECT MIN(id) AS id, MAX(ts) AS ts FROM o GROUP BY k",
    "order_by": "SELECT id, ts FROM o ORDER BY id LIMIT 200",
}
DUCK_INNER = {
    "join": "SELECT o.id, o.ts FROM o JOIN keys AS c ON o.k = c.k",
    "semi": "SELECT id, ts FROM o WHERE k IN (SELECT k FROM keys)",
    "group_by": "SELECT MIN(id) AS id, MAX(ts) AS ts FROM o GROUP BY k",
    "order_by": "SELECT id, ts FROM (SELECT id, ts FROM o ORDER BY id LIMIT 200)",
}


def _ours(sql: str, parallelism: int, tmp_path: Path) -> list[tuple]:
    """``sql`` over csv files of ORDERS and KEYS, ORDERS with a watermark (its source then
    sends watermarks as it reads, not only at its end)."""
    for name, table in (("o", ORDERS), ("keys", KEYS)):
        pacsv.write_csv(table, tmp_path / f"{name}.csv",
                        pacsv.WriteOptions(include_header=False))
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": str(parallelism)})
    s.execute(f"CREATE TABLE o (id INT, k STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
              f"INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 'o.csv'}', 'format' = 'csv')")
    s.execute(f"CREATE TABLE keys (k STRING, w BIGINT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'keys.csv'}', 'format' = 'csv')")
    return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())


def _duck(sql: str) -> list[tuple]:
    con = duckdb.connect()
    con.register("o", ORDERS)
    con.register("keys", KEYS)
    return sorted(con.sql(sql).fetchall())


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("inner", sorted(INNER))
def test_a_window_aggregate_over_a_blocking_operator(inner: str, parallelism: int,
                                                     tmp_path: Path) -> None:
    got = _ours(f"SELECT window_start, COUNT(*) AS c, MAX(id) AS m FROM "
                f"{TUMBLE.format(inner=INNER[inner])} GROUP BY window_start, window_end",
                parallelism, tmp_path)
    want = _duck(f"SELECT time_bucket(INTERVAL '10 seconds', ts) AS s, COUNT(*), MAX(id) "
                 f"FROM ({DUCK_INNER[inner]}) GROUP BY s")
    assert got == want and got


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("inner", ["join", "semi"])
def test_a_window_top_n_over_a_blocking_operator(inner: str, parallelism: int,
                                                 tmp_path: Path) -> None:
    got = _ours(f"SELECT window_start, id FROM (SELECT window_start, id, ROW_NUMBER() OVER ("
                f"PARTITION BY window_start, window_end ORDER BY id DESC) AS rn FROM "
                f"{TUMBLE.format(inner=INNER[inner])}) WHERE rn <= 2", parallelism, tmp_path)
    want = _duck(f"SELECT s, id FROM (SELECT time_bucket(INTERVAL '10 seconds', ts) AS s, id, "
                 f"ROW_NUMBER() OVER (PARTITION BY time_bucket(INTERVAL '10 seconds', ts) "
                 f"ORDER BY id DESC) AS rn FROM ({DUCK_INNER[inner]})) WHERE rn <= 2")
    assert got == want and got
