"""Generated queries over generated data with NULLs, compared with DuckDB as multisets."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

import sqlengine
from tests.querygen import Pair, make_tables, pairs

duckdb = pytest.importorskip("duckdb")

# Hand-written cases for shapes the generator does not make.
EXTRA = [
    Pair("SELECT a.x, b.v FROM t1 AS a RIGHT JOIN t2 AS b ON a.k = b.k",
         "SELECT a.x, b.v FROM t1 AS a RIGHT JOIN t2 AS b ON a.k = b.k"),
    Pair("SELECT k, x, v FROM t1 JOIN t2 USING (k)", "SELECT k, x, v FROM t1 JOIN t2 USING (k)"),
    Pair("SELECT x FROM t1 WHERE x IS NOT NULL ORDER BY x DESC, y LIMIT 5 OFFSET 3",
         "SELECT x FROM t1 WHERE x IS NOT NULL ORDER BY x DESC, y NULLS FIRST LIMIT 5 OFFSET 3",
         ordered=True),
    Pair("SELECT g, COUNT(*) AS c FROM t1 GROUP BY g UNION SELECT name, 1 FROM t2",
         "SELECT g, COUNT(*) AS c FROM t1 GROUP BY g UNION SELECT name, 1 FROM t2"),
    Pair("SELECT c, COUNT(*) AS n FROM (SELECT g, COUNT(*) AS c FROM t1 GROUP BY g) AS s "
         "GROUP BY c",
         "SELECT c, COUNT(*) AS n FROM (SELECT g, COUNT(*) AS c FROM t1 GROUP BY g) AS s "
         "GROUP BY c"),
    Pair("SELECT s, SUM(x) AS sx, COUNT(DISTINCT g) AS dg FROM t1 GROUP BY s HAVING SUM(x) > 0",
         "SELECT s, SUM(x) AS sx, COUNT(DISTINCT g) AS dg FROM t1 GROUP BY s HAVING SUM(x) > 0"),
    Pair("SELECT n / 1000 AS q, CAST(n AS DOUBLE) / 1000 AS r FROM t1",
         "SELECT n // 1000 AS q, CAST(n AS DOUBLE) / 1000 AS r FROM t1"),
    Pair("SELECT CAST(d AS INT) AS i, CAST(d AS DOUBLE) * 2 AS f, d * 3 AS m, d / 4 AS q FROM t1",
         "SELECT CAST(TRUNC(d) AS INT) AS i, CAST(d AS DOUBLE) * 2 AS f, d * 3 AS m, "
         "ROUND(d / 4, 13) AS q FROM t1"),
]
EXTRA += [
    # A join over aggregated (updating) inputs: retractions flow through the join.
    Pair("SELECT a.g, a.c, b.c2 FROM (SELECT g, COUNT(*) AS c FROM t1 GROUP BY g) AS a "
         "JOIN (SELECT name, COUNT(*) AS c2 FROM t2 GROUP BY name) AS b ON a.g = b.name",
         "SELECT a.g, a.c, b.c2 FROM (SELECT g, COUNT(*) AS c FROM t1 GROUP BY g) AS a "
         "JOIN (SELECT name, COUNT(*) AS c2 FROM t2 GROUP BY name) AS b ON a.g = b.name"),
    Pair("SELECT a.k, a.n, b.v FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) AS a "
         "LEFT JOIN (SELECT k, SUM(v) AS v FROM t2 GROUP BY k) AS b ON a.k = b.k AND b.v > 0",
         "SELECT a.k, a.n, b.v FROM (SELECT k, COUNT(*) AS n FROM t1 GROUP BY k) AS a "
         "LEFT JOIN (SELECT k, SUM(v) AS v FROM t2 GROUP BY k) AS b ON a.k = b.k AND b.v > 0"),
]
EXTRA += [Pair(q, q) for q in (
    # Three-way joins of updating inputs: a join's state compacted after retractions failed
    # in streaming mode when its columns shared a name ('Field "k" exists 2 times').
    "SELECT a.k, a.c, b.c2 FROM (SELECT k, COUNT(*) AS c FROM t1 GROUP BY k) a JOIN "
    "(SELECT k, COUNT(*) AS c2 FROM t2 GROUP BY k) b ON a.k = b.k JOIN "
    "(SELECT k, SUM(x) AS sx FROM t1 GROUP BY k) c ON b.k = c.k",
    "SELECT b.k, COUNT(*) AS n FROM t2 b LEFT JOIN t1 a ON a.k = b.k LEFT JOIN t1 c "
    "ON a.k = c.k GROUP BY b.k")]
PAIRS = pairs(300) + EXTRA
# Keys a FULL JOIN pads with NULL, grouped, made distinct and partitioned at parallelism 2:
# the NULLs sit in every subtask (split into one group per subtask before).
PARALLEL_EXTRA = [Pair(q, q) for q in (
    "SELECT a.k, COUNT(*) AS n, SUM(b.v) AS s FROM t1 AS a FULL JOIN t2 AS b ON a.k = b.k "
    "GROUP BY a.k",
    "SELECT DISTINCT b.k FROM t1 AS a FULL JOIN t2 AS b ON a.k = b.k",
    "SELECT a.k, b.k, COUNT(*) AS n FROM t1 AS a FULL JOIN t2 AS b ON a.k = b.k "
    "GROUP BY a.k, b.k",
    "SELECT a.k, COUNT(*) OVER (PARTITION BY a.k) AS n FROM t1 AS a FULL JOIN t2 AS b "
    "ON a.k = b.k")]


def _norm(v: object) -> object:
    if isinstance(v, decimal.Decimal):
        v = float(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        return round(v, 6) if abs(v) < 1e12 else float(f"{v:.10g}")
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, dt.date | dt.datetime):
        return v.isoformat()
    return v


def _rows(table_rows: list[tuple]) -> list[tuple]:
    return [tuple(_norm(v) for v in row) for row in table_rows]


def _key(row: tuple) -> tuple:
    return tuple((v is None, str(type(v)), v if v is not None else 0) for v in row)


@pytest.fixture(scope="module")
def data() -> dict:
    return make_tables()


@pytest.fixture(scope="module")
def duck(data: dict):  # type: ignore[no-untyped-def]
    con = duckdb.connect()
    for name, table in data.items():
        con.register(name, table)
    return con


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("pair", PAIRS, ids=[f"q{i:03d}" for i in range(len(PAIRS))])
def test_matches_duckdb(pair, mode, data, duck) -> None:  # type: ignore[no-untyped-def]
    s = sqlengine.connect({"execution.runtime-mode": mode})
    for name, table in data.items():
        s.register(name, table)
    ours = s.sql(pair.flink).collect()
    got = _rows([tuple(r.values()) for r in ours.to_pylist()])
    reference = pair.duck_streaming if mode == "streaming" and pair.duck_streaming else pair.duck
    want = _rows(duck.sql(reference).fetchall())
    if not pair.ordered:
        got, want = sorted(got, key=_key), sorted(want, key=_key)
    assert same_rows(got, want), f"\nflink: {pair.flink}\nduck:  {pair.duck}"


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("pair", PAIRS[::4] + PARALLEL_EXTRA,
                         ids=[f"q{i:03d}" for i in range(len(PAIRS[::4]) + 4)])
def test_matches_duckdb_at_parallelism_2(pair, mode, data, duck) -> None:  # type: ignore[no-untyped-def]
    """Every fourth pair again with two subtasks per operator (threads, to keep it quick):
    rows exchanged by hash must meet their groups, partitions and join partners."""
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": "2",
                           "execution.native.task-mode": "thread"})
    for name, table in data.items():
        s.register(name, table)
    got = _rows([tuple(r.values()) for r in s.sql(pair.flink).collect().to_pylist()])
    reference = pair.duck_streaming if mode == "streaming" and pair.duck_streaming else pair.duck
    want = _rows(duck.sql(reference).fetchall())
    if not pair.ordered:
        got, want = sorted(got, key=_key), sorted(want, key=_key)
    assert same_rows(got, want), f"\nflink: {pair.flink}\nduck:  {pair.duck}"


def same_rows(got: list[tuple], want: list[tuple]) -> bool:
    """Equal, except that floats (already rounded to 6 places) may differ in the last place:
    an average of 3-decimal values can fall exactly on a rounding boundary, and DuckDB sums
    in another order."""
    if len(got) != len(want):
        return False
    for a, b in zip(got, want):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if isinstance(x, float) and isinstance(y, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1.5e-6):
                    return False
            elif x != y:
                return False
    return True


def test_corpus_covers_the_subset() -> None:
    text = " ".join(p.flink for p in PAIRS)
    for feature in ("GROUP BY", "LEFT JOIN", " JOIN ", "UNION ALL", "ORDER BY", "LIMIT",
                    "DISTINCT", "HAVING", "WITH ", "CASE", "CAST", "IN (", "BETWEEN", "LIKE",
                    "COUNT(DISTINCT", "AVG(", "COALESCE", "IS NULL", "FILTER (WHERE", " / "):
        assert feature in text, feature


def test_global_aggregate_of_no_rows_follows_flink(data) -> None:  # type: ignore[no-untyped-def]
    # Flink's batch mode (and DuckDB) give one row; its streaming GROUP BY emits a result only
    # when a row arrives, so an empty input gives no row at all.
    sql = "SELECT COUNT(*) AS c, SUM(x) AS s, MIN(s) AS m FROM t1 WHERE x > 1000"
    rows = {}
    for mode in ("batch", "streaming"):
        s = sqlengine.connect({"execution.runtime-mode": mode})
        s.register("t1", data["t1"])
        rows[mode] = s.sql(sql).collect().to_pylist()
    assert rows == {"batch": [{"c": 0, "s": None, "m": None}], "streaming": []}


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("parallelism", ["1", "3"])
def test_nan_keys_are_one_group_in_every_batch(mode: str, parallelism: str) -> None:
    """A streaming GROUP BY / DISTINCT / EXCEPT kept a NaN key of each batch as a group of its
    own (its keys' dict found no NaN: NaN equals nothing); DuckDB's rows."""
    import pyarrow as pa

    nan = float("nan")
    t = pa.table({"y": pa.array([nan, 1.0, nan, 2.0, nan, 1.0, nan]), "i": list(range(7))})
    t = pa.Table.from_batches(t.to_batches(max_chunksize=1))
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": parallelism,
                           "execution.native.task-mode": "thread"})
    s.register("t", t)
    con = duckdb.connect()
    con.register("t", t)
    for sql in ("SELECT y, COUNT(*) AS c FROM t GROUP BY y", "SELECT DISTINCT y FROM t",
                "SELECT y FROM t EXCEPT SELECT y FROM t WHERE i = 0"):
        got = sorted(_rows([tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]),
                     key=_key)
        assert got == sorted(_rows(con.sql(sql).fetchall()), key=_key), sql
