"""TABLESAMPLE (it was accepted and ignored: every row came back) and FETCH FIRST (it failed
with an internal error), against hand-checked expectations."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import BindError, NotSupportedError

ROWS = 200_000


def _within(n: int, p: float) -> bool:
    """``n`` rows of ROWS kept with probability ``p``: within 5 standard deviations."""
    sd = (ROWS * p * (1 - p)) ** 0.5
    return abs(n - ROWS * p) <= 5 * sd


@pytest.fixture(scope="module", params=["batch", "streaming"])
def session(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
            ) -> sqlengine.Session:
    path = Path(tmp_path_factory.mktemp("sample")) / "t.parquet"
    pq.write_table(pa.table({"v": pa.array(range(ROWS), pa.int64()),
                             "s": pa.array(["x", "y"] * (ROWS // 2))}), path)
    s = sqlengine.connect({"execution.runtime-mode": request.param})
    s.execute(f"CREATE TABLE t (v BIGINT, s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'parquet')")
    return s


def _count(s: sqlengine.Session, sql: str) -> int:
    rows = s.sql(sql).collect().to_pylist()
    # (a streaming global aggregate of no rows says nothing, as Flink's)
    return rows[-1]["n"] if rows else 0


@pytest.mark.parametrize(("clause", "p"), [("BERNOULLI(50)", 0.5), ("SYSTEM(10)", 0.1),
                                           ("(25 PERCENT)", 0.25), ("BERNOULLI(0.5)", 0.005)])
def test_a_sample_keeps_its_share_of_the_rows(session: sqlengine.Session, clause: str,
                                              p: float) -> None:
    n = _count(session, f"SELECT COUNT(*) AS n FROM t TABLESAMPLE {clause}")
    assert _within(n, p), n


def test_a_sample_is_taken_before_the_where_clause(session: sqlengine.Session) -> None:
    n = _count(session, "SELECT COUNT(*) AS n FROM t AS a TABLESAMPLE BERNOULLI(50) "
                        "WHERE a.s = 'x'")
    assert abs(n - ROWS / 4) <= 5 * (ROWS * 0.25 * 0.75) ** 0.5
    assert _count(session, "SELECT COUNT(*) AS n FROM t TABLESAMPLE BERNOULLI(0)") == 0
    assert _count(session, "SELECT COUNT(*) AS n FROM t TABLESAMPLE BERNOULLI(100)") == ROWS
    n = _count(session, "SELECT COUNT(*) AS n FROM (SELECT v FROM t) AS q "
                        "TABLESAMPLE BERNOULLI(50)")
    assert _within(n, 0.5)


def test_repeatable_gives_the_same_rows_again(session: sqlengine.Session) -> None:
    sql = "SELECT COUNT(*) AS n, SUM(v) AS total FROM t TABLESAMPLE BERNOULLI(10) REPEATABLE({})"
    first = session.sql(sql.format(7)).collect().to_pylist()[-1]
    assert session.sql(sql.format(7)).collect().to_pylist()[-1] == first
    assert session.sql(sql.format(8)).collect().to_pylist()[-1] != first
    assert _within(first["n"], 0.1)


@pytest.mark.parametrize(("clause", "error", "words"), [
    ("(10 ROWS)", NotSupportedError, "number of rows"),
    ("(BUCKET 1 OUT OF 4 ON v)", NotSupportedError, "BUCKET"),
    ("BERNOULLI(150)", BindError, "from 0 to 100"),
    ("BERNOULLI(5) REPEATABLE(1.5)", BindError, "integer seed"),
])
def test_unsupported_samples_are_refused_by_name(session: sqlengine.Session, clause: str,
                                                  error: type, words: str) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(")):
        session.sql(f"SELECT COUNT(*) AS n FROM t TABLESAMPLE {clause}")


def test_fetch_first_is_limit() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    rows = "(VALUES (3), (1), (4), (1), (5), (9), (2), (6)) AS r(x)"

    def run(tail: str) -> list[int]:
        return [r["x"] for r in s.sql(f"SELECT x FROM {rows} ORDER BY x {tail}").collect()
                .to_pylist()]

    assert run("FETCH FIRST 3 ROWS ONLY") == [1, 1, 2]
    assert run("OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY") == [2, 3, 4]
    assert run("FETCH FIRST ROW ONLY") == [1]
    assert run("DESC FETCH FIRST 0 ROWS ONLY") == []
    union = s.sql("SELECT 2 AS x UNION ALL SELECT 1 ORDER BY x FETCH FIRST 1 ROW ONLY")
    assert union.collect().to_pylist() == [{"x": 1}]
    for tail, words in (("FETCH FIRST 2 ROWS WITH TIES", "WITH TIES"),
                        ("FETCH FIRST 50 PERCENT ROWS ONLY", "PERCENT")):
        with pytest.raises(NotSupportedError, match=words):
            run(tail)
