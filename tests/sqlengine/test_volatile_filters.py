"""A filter calling RAND() is evaluated once per row, where the query has it: not pushed
into a scan (which judged it on a dictionary's values, and again on the rows: ~25% of the rows
kept for RAND() < 0.5) nor below the projection computing the value it tests (rows with r >=
0.5 passed ``WHERE r < 0.5``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine

ROWS = 200_000
# RAND() < 0.5 keeps a binomial(ROWS, 1/2) count: 5 standard deviations either side.
LOW, HIGH = ROWS // 2 - 5 * 224, ROWS // 2 + 5 * 224


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> sqlengine.Session:
    folder = tmp_path_factory.mktemp("volatile")
    path = Path(folder) / "t.parquet"
    # (s: four values, stored as a parquet dictionary, read as dictionary indices)
    pq.write_table(pa.table({"s": pa.array(["a", "b", "c", "d"] * (ROWS // 4)),
                             "v": pa.array(range(ROWS), pa.int64())}), path)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (s STRING, v BIGINT) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'parquet')")
    return s


def test_rand_filter_keeps_half_the_rows(session: sqlengine.Session) -> None:
    n, kinds = session.sql("SELECT COUNT(*) AS n, COUNT(DISTINCT s) AS kinds FROM "
                           "(SELECT s FROM t WHERE RAND() < 0.5)").collect().to_pylist()[0] \
        .values()
    assert LOW <= n <= HIGH
    assert kinds == 4


def test_rand_filter_beside_a_pushed_one(session: sqlengine.Session) -> None:
    n = session.sql("SELECT COUNT(*) AS n FROM t WHERE RAND() < 0.5 AND s IN ('a', 'b', 'c', "
                    "'d') AND v >= 0").collect().to_pylist()[0]["n"]
    assert LOW <= n <= HIGH


def test_filter_on_a_projected_rand_sees_the_values_it_returns(
        session: sqlengine.Session) -> None:
    row = session.sql("SELECT COUNT(*) AS n, MAX(r) AS top FROM (SELECT v, RAND() AS r FROM t) "
                      "WHERE r < 0.5 AND v >= 0").collect().to_pylist()[0]
    assert row["top"] < 0.5
    assert LOW <= row["n"] <= HIGH
    plan = session.execute("EXPLAIN SELECT v, r FROM (SELECT v, RAND() AS r FROM t) "
                           "WHERE r < 0.5 AND v > 5")[0].message
    optimized = plan.split("== Optimized Logical Plan ==")[1].split("== Job Graph")[0]
    assert "filters=[(v > 5)]" in optimized and "RAND() < 0.5" not in optimized.split(
        "Scan")[1]

