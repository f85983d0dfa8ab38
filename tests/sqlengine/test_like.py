"""[NOT] LIKE (with and without ESCAPE), [NOT] ILIKE and IS [NOT] DISTINCT FROM give DuckDB's
answers (x NOT LIKE p was once evaluated as LIKE); SIMILAR TO gives Flink's (hand-checked: its
``%`` and ``_`` are LIKE's, the rest a regular expression)."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine

ROWS = ["abc", "bcd", "ABx", "a", "", "xa%", None, "a\\b", "a\\", "\\%", "A\\_"]
PREDICATES = [
    "x LIKE 'a%'", "x NOT LIKE 'a%'", "NOT (x LIKE 'a%')", "NOT x NOT LIKE 'a%'",
    "x NOT LIKE '%c%'", "x NOT LIKE '_'", "x ILIKE 'A%'", "x NOT ILIKE 'A%'",
    "x NOT ILIKE '%X'", "x LIKE 'xa!%' ESCAPE '!'", "x NOT LIKE '%!%' ESCAPE '!'",
    "x LIKE '_a!%' ESCAPE '!'", "x LIKE '%a#%' ESCAPE '#'", "x LIKE 'a%' ESCAPE '!'",
    # Without ESCAPE a backslash is an ordinary character (it once escaped, as in Arrow)
    "x LIKE 'a\\b'", "x LIKE '%\\'", "x LIKE '\\%'", "x NOT LIKE 'a\\_'",
    "x ILIKE 'a\\%'", "x LIKE 'a\\%' ESCAPE '!'", "x LIKE 'a\\\\b' ESCAPE '\\'",
]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("predicate", PREDICATES)
def test_like_predicates_match_duckdb(mode: str, predicate: str) -> None:
    table = pa.table({"i": list(range(len(ROWS))), "x": pa.array(ROWS, pa.string())})
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", table)
    sql = f"SELECT i, {predicate} AS p FROM t"
    ours = s.sql(sql).collect().sort_by("i").to_pydict()
    con = duckdb.connect()
    con.register("t", table)
    theirs = con.sql(sql + " ORDER BY i").fetchall()
    assert ours["p"] == [p for _, p in theirs]
    where = s.sql(f"SELECT i FROM t WHERE {predicate}").collect()
    expected = [i for i, p in theirs if p]
    assert sorted(where.column("i").to_pylist()) == expected


PAIRS = pa.table({"i": [0, 1, 2, 3, 4, 5],
                  "a": pa.array([1, 1, None, None, 2, 3], pa.int32()),
                  "b": pa.array([1, None, 1, None, 3, 3], pa.int64())})


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("predicate", ["a IS DISTINCT FROM b", "a IS NOT DISTINCT FROM b",
                                       "NOT (a IS DISTINCT FROM b)"])
def test_is_distinct_from_matches_duckdb(mode: str, predicate: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", PAIRS)
    sql = f"SELECT i, {predicate} AS p FROM t"
    ours = s.sql(sql).collect().sort_by("i").to_pydict()["p"]
    con = duckdb.connect()
    con.register("t", PAIRS)
    assert ours == [p for _, p in con.sql(sql + " ORDER BY i").fetchall()]
    assert None not in ours


@pytest.mark.parametrize(("predicate", "expected"), [
    ("x SIMILAR TO 'a(b|c)+'", [True, False, False, False, False, False, None]),
    ("x SIMILAR TO '%b%'", [True, True, False, False, False, False, None]),
    ("x SIMILAR TO '_'", [False, False, False, True, False, False, None]),
    ("x NOT SIMILAR TO '[a-b]%'", [False, False, True, False, True, True, None]),
    ("x SIMILAR TO 'xa!%' ESCAPE '!'", [False, False, False, False, False, True, None]),
    ("x SIMILAR TO 'a.c'", [True, False, False, False, False, False, None]),
])
def test_similar_to(predicate: str, expected: list[bool | None]) -> None:
    rows = ROWS[:7]
    table = pa.table({"i": list(range(len(rows))), "x": pa.array(rows, pa.string())})
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", table)
    got = s.sql(f"SELECT i, {predicate} AS p FROM t").collect().sort_by("i")
    assert got.column("p").to_pylist() == expected


@pytest.mark.parametrize(("pattern", "expected"), [
    # Without ESCAPE a backslash is an ordinary character, as in Flink (PyFlink 2.3: '\\d+'
    # does not match '123', '1\\23' matches nothing); it once escaped the next character in
    # the regular expression, and '1\\23' failed the query ("invalid group reference").
    ("%\\%%", [False, False, False, False, False, False, None, True, True, True, True]),
    ("a\\b", [False, False, False, False, False, False, None, True, False, False, False]),
    ("\\%", [False, False, False, False, False, False, None, False, False, True, False]),
    ("\\d+", [False] * 6 + [None] + [False] * 4),
    ("1\\23", [False] * 6 + [None] + [False] * 4),
])
def test_similar_to_takes_a_backslash_for_itself(pattern: str, expected: list) -> None:
    table = pa.table({"i": list(range(len(ROWS))), "x": pa.array(ROWS, pa.string())})
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", table)
    got = s.sql(f"SELECT i, x SIMILAR TO '{pattern}' AS p FROM t").collect().sort_by("i")
    assert got.column("p").to_pylist() == expected


def test_bad_escape_is_an_error_naming_it() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(sqlengine.SqlEngineError, match="escape"):
        s.sql("SELECT 'a' LIKE 'a!' ESCAPE '!'").collect()
    with pytest.raises(sqlengine.SqlEngineError, match="one character"):
        s.sql("SELECT 'a' LIKE 'a' ESCAPE '!!'").collect()


def test_null_pattern_gives_null() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    row = s.sql("SELECT 'abc' LIKE CAST(NULL AS STRING) AS a, "
                "'abc' SIMILAR TO CAST(NULL AS STRING) AS b").collect().to_pylist()
    assert row == [{"a": None, "b": None}]
