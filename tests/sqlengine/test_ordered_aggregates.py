"""Ordered aggregates: ARRAY_AGG(x ORDER BY ...), LISTAGG(x, sep) WITHIN GROUP (ORDER BY ...)
and STRING_AGG(x, sep ORDER BY ...), which were refused ("unsupported expression", "WITHIN
GROUP ... is not supported"). Against DuckDB (its STRING_AGG for LISTAGG ... WITHIN GROUP), in
both modes and at parallelism 2, over retractions, window TVFs and OVER frames."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

duckdb = pytest.importorskip("duckdb")


def _table(seed: int, n: int = 400) -> pa.Table:
    r = random.Random(seed)
    return pa.table({
        "g": [r.randint(1, 9) for _ in range(n)],
        "k": [None if r.random() < 0.1 else r.randint(0, 30) for _ in range(n)],
        "u": list(range(n)),  # (a unique key: ties broken the same on both sides)
        "s": [None if r.random() < 0.1 else r.choice("abcdefgh") * r.randint(1, 3)
              for _ in range(n)],
        "x": [None if r.random() < 0.1 else r.randint(-100, 100) for _ in range(n)]})


QUERIES = [
    "SELECT g, ARRAY_AGG(x ORDER BY k DESC, u) AS a FROM t GROUP BY g",
    "SELECT g, ARRAY_AGG(x ORDER BY k NULLS LAST, u DESC) FILTER (WHERE x > -50) AS a FROM t "
    "GROUP BY g",
    "SELECT g, {listagg_s_k} AS l, STRING_AGG(s, '|' ORDER BY s DESC, u) AS sa FROM t "
    "GROUP BY g",
    "SELECT g, ARRAY_AGG(DISTINCT k ORDER BY k DESC) AS a, ARRAY_AGG(DISTINCT s ORDER BY s "
    "NULLS LAST) AS b FROM t GROUP BY g",
    # (ascending puts NULLs first here as in ORDER BY, Flink's way; DuckDB puts them last)
    "SELECT ARRAY_AGG(s ORDER BY x NULLS FIRST, u) AS a, COUNT(*) AS n FROM t WHERE g < 3",
    "SELECT g, PERCENTILE_DISC(0.3) WITHIN GROUP (ORDER BY x) AS p, PERCENTILE_DISC(0.2) WITHIN "
    "GROUP (ORDER BY s DESC) AS q, PERCENTILE_DISC(1) WITHIN GROUP (ORDER BY k) AS r, "
    "PERCENTILE_DISC(0.5) WITHIN GROUP (ORDER BY x) FILTER (WHERE g > 4) AS m FROM t GROUP BY g",
]
OURS = "LISTAGG(s, '-') WITHIN GROUP (ORDER BY k NULLS LAST, u)"
DUCK = "STRING_AGG(s, '-' ORDER BY k NULLS LAST, u)"


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("sql", QUERIES)
def test_match_duckdb(sql: str, mode: str, parallelism: int) -> None:
    t = _table(1)
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism)})
    s.register("t", t)
    con = duckdb.connect()
    con.register("t", t)
    ours = sorted((tuple(r.values()) for r in
                   s.sql(sql.format(listagg_s_k=OURS)).collect().to_pylist()), key=repr)
    duck = sorted(con.sql(sql.format(listagg_s_k=DUCK)).fetchall(), key=repr)
    assert ours == duck


def test_over_retractions_windows_and_frames() -> None:
    t = _table(2)
    con = duckdb.connect()
    con.register("t", t)
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", t)
    # An updating input: each g's latest sum moves as rows arrive (retractions).
    sql = ("SELECT ARRAY_AGG(g ORDER BY total DESC, g) AS a FROM (SELECT g, SUM(x) AS total "
           "FROM t GROUP BY g)")
    assert [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()] == \
        con.sql(sql).fetchall()
    # OVER a frame, batch.
    b = sqlengine.connect({"execution.runtime-mode": "batch"})
    b.register("t", t)
    over = ("SELECT u, ARRAY_AGG(x ORDER BY k DESC NULLS LAST, u) OVER (PARTITION BY g ORDER "
            "BY u ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS a FROM t")
    assert sorted(tuple(r.values()) for r in b.sql(over).collect().to_pylist()) == \
        sorted(con.sql(over).fetchall())


def test_in_a_window_tvf(tmp_path: object) -> None:
    path = f"{tmp_path}/e.csv"
    with open(path, "w") as f:
        for i in range(40):
            f.write(f"{i % 3},{(i * 7) % 11},2024-01-01 00:00:{i:02d}\n")
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE e (g INT, v INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH "
              f"('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')")
    rows = s.sql("SELECT SECOND(window_start) AS w, g, ARRAY_AGG(v ORDER BY v DESC) AS a FROM "
                 "TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY "
                 "window_start, window_end, g").collect().to_pylist()
    want = {}
    for i in range(40):
        want.setdefault((i // 10 * 10, i % 3), []).append((i * 7) % 11)
    assert {(r["w"], r["g"]): r["a"] for r in rows} == {
        k: sorted(v, reverse=True) for k, v in want.items()}


def test_nulls_sort_as_in_order_by() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"k": [2, None, 1], "v": ["b", "n", "a"]}))
    assert s.sql("SELECT ARRAY_AGG(v ORDER BY k), ARRAY_AGG(v ORDER BY k DESC), LISTAGG(v) "
                 "WITHIN GROUP (ORDER BY k) FROM t").collect().to_pylist() == [
        {"EXPR$0": ["n", "a", "b"], "EXPR$1": ["b", "a", "n"], "EXPR$2": "n,a,b"}]


def test_percentile_disc_takes_the_exact_position() -> None:
    """k = ceil(n * f) in integers: 0.3 of 10 values is the 3rd (in DOUBLE 0.3 * 10 is
    3.0000000000000004, whose ceiling is 4)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"x": list(range(10, 0, -1))}))
    # (0 is the first value of the order, as PostgreSQL's; DuckDB gives the last of a DESC)
    assert s.sql("SELECT PERCENTILE_DISC(0.3) WITHIN GROUP (ORDER BY x), PERCENTILE_DISC(0.7) "
                 "WITHIN GROUP (ORDER BY x DESC), PERCENTILE_DISC(0) WITHIN GROUP (ORDER BY x "
                 "DESC) FROM t").collect().to_pylist() == [
        {"EXPR$0": 3, "EXPR$1": 4, "EXPR$2": 10}]


@pytest.mark.parametrize(("sql", "words"), [
    ("SELECT PERCENTILE_DISC(1.5) WITHIN GROUP (ORDER BY x) FROM t",
     "the fraction of PERCENTILE_DISC must be a constant number between 0 and 1"),
    ("SELECT ARRAY_AGG(DISTINCT x ORDER BY k) FROM t",
     "ARRAY_AGG(DISTINCT x ORDER BY ...) is supported only ordered by x itself"),
    ("SELECT LISTAGG(x) WITHIN GROUP (ORDER BY k) FROM t",
     "LISTAGG takes a character string, got BIGINT"),
    ("SELECT STRING_AGG(s, 1 ORDER BY k) FROM t",
     "the separator of STRING_AGG must be a character string"),
])
def test_refused_with_a_reason(sql: str, words: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", _table(3, 10))
    with pytest.raises(SqlEngineError, match="1:") as info:
        s.sql(sql).collect()
    assert words in str(info.value)


def test_refused_on_spark_before_it_starts() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch", "execution.target": "spark"})
    s.register("t", _table(3, 10))
    with pytest.raises(SqlEngineError, match=r"ordered aggregates .* are not supported on the "
                       "Spark runtime yet"):
        s.sql("SELECT g, ARRAY_AGG(x ORDER BY k) FROM t GROUP BY g").collect()


def test_listagg_distinct_with_a_separator_within_group() -> None:
    """(sqlglot reads LISTAGG(DISTINCT s, sep) as DISTINCT of two values: it was refused as
    "unsupported expression")"""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"s": ["b", "a", "b", None, "c"]}))
    assert s.sql("SELECT LISTAGG(DISTINCT s, ';') WITHIN GROUP (ORDER BY s DESC), "
                 "LISTAGG(DISTINCT s) WITHIN GROUP (ORDER BY s) FROM t").collect().to_pylist() \
        == [{"EXPR$0": "c;b;a", "EXPR$1": "a,b,c"}]

