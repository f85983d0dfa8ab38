"""Clauses of other engines' SQL that the parser knows but the engine does not run are refused
by name with the place; they were accepted and ignored (QUALIFY, DISTINCT ON, * EXCLUDE,
LIMIT ... PERCENT, FOR UPDATE, CAST ... FORMAT all returned rows as if not written).
``SELECT * EXCLUDE (...)`` and QUALIFY now run."""

from __future__ import annotations

import re

import pytest

import sqlengine
from sqlengine.errors import BindError, NotSupportedError, ParseError

T = "(VALUES (1, 2, 3), (1, 5, 6)) AS t(x, y, z)"


def key(row: tuple[object, ...]) -> tuple[tuple[bool, str], ...]:
    """A sort key for rows holding NULLs."""
    return tuple((v is None, str(v)) for v in row)


@pytest.mark.parametrize(("sql", "words"), [
    (f"SELECT DISTINCT ON (x) x, y FROM {T}", "DISTINCT ON"),
    (f"SELECT x FROM {T} LIMIT 1 PERCENT", "LIMIT ... PERCENT"),
    (f"SELECT x FROM {T} ORDER BY x LIMIT 1 WITH TIES", "LIMIT ... WITH TIES"),
    (f"SELECT x FROM {T} FOR UPDATE", "FOR UPDATE"),
    (f"SELECT x FROM {T} DISTRIBUTE BY x", "DISTRIBUTE BY"),
    ("SELECT CAST('1' AS INT FORMAT '9')", "CAST ... FORMAT"),
    ("SELECT CAST('a' AS INT DEFAULT 0 ON CONVERSION ERROR)", "CAST ... DEFAULT"),
    (f"SELECT * REPLACE (1 AS x) FROM {T}", "REPLACE"),
    ("SELECT 1 AS a, 2 AS b UNION ALL BY NAME SELECT 3 AS b, 4 AS a", "BY NAME"),
    ("SELECT 1 AS a UNION CORRESPONDING SELECT 2 AS a", "CORRESPONDING"),
    ("SELECT 1 AS a EXCEPT SELECT 2 FOR UPDATE", "FOR UPDATE"),
    (f"SELECT x, COUNT(*) AS n FROM {T} GROUP BY x WITH TOTALS", "WITH TOTALS"),
    (f"SELECT *, COUNT(*) AS n FROM {T} GROUP BY ALL", "GROUP BY ALL over a star"),
    (f"SELECT x FROM {T} ORDER BY x WITH FILL", "WITH FILL"),
    # (PostgreSQL's array form; it failed as "unsupported query PAREN")
    (f"SELECT x FROM {T} WHERE x = ANY (ARRAY[1, 2])", "ARRAY_CONTAINS"),
    # (named as written, not as sqlglot's ARGMAX)
    (f"SELECT ARG_MAX(x, y) FROM {T}", "aggregate function ARG_MAX"),
    (f"SELECT MODE(x) FROM {T}", "aggregate function MODE"),
    (f"SELECT PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY y, z) FROM {T}",
     "PERCENTILE_CONT ... WITHIN GROUP"),
    # (after a table: each returned the table as if not written)
    ("SELECT * FROM v PIVOT (SUM(y) FOR x IN (1 AS a, 2 AS b))", "PIVOT / UNPIVOT"),
    ("SELECT * FROM v UNPIVOT (val FOR col IN (y, z))", "PIVOT / UNPIVOT"),
    ("SELECT * FROM v AT (TIMESTAMP => TIMESTAMP '2000-01-01 00:00:00')", "AT / BEFORE"),
    ("SELECT * FROM v CHANGES (INFORMATION => DEFAULT)", "CHANGES"),
    ("SELECT * FROM v WITH (NOLOCK)", "WITH (table hints)"),
    # (LIMIT 1 BY x returned one row)
    (f"SELECT x FROM {T} LIMIT 1 BY x", "LIMIT ... BY"),
    (f"SELECT * FROM {T} CROSS JOIN LATERAL (SELECT 1 AS w) WITH ORDINALITY",
     "WITH ORDINALITY after a LATERAL subquery"),
    # (DuckDB's; it failed as "unknown column 'ALL'")
    (f"SELECT x FROM {T} ORDER BY ALL", "ORDER BY ALL is not supported"),
])
def test_a_clause_not_run_is_refused_by_name(sql: str, words: str) -> None:
    _refused(sql, words, NotSupportedError)


@pytest.mark.parametrize(("sql", "words"), [
    # (each was a cross join; Flink refuses them)
    (f"SELECT * FROM {T} JOIN (VALUES (1)) AS u(w)", "a JOIN needs an ON or USING"),
    (f"SELECT * FROM {T} INNER JOIN (VALUES (1)) AS u(w)", "INNER JOIN needs an ON"),
    # (DuckDB's POSITIONAL JOIN read as an alias and a cross join)
    ("SELECT * FROM v POSITIONAL JOIN (VALUES (1)) AS u(w)", "a JOIN needs an ON"),
    # (the arguments were ignored)
    (f"SELECT ROW_NUMBER(x) OVER (ORDER BY y) FROM {T}", "ROW_NUMBER() takes no arguments"),
    (f"SELECT RANK(99) OVER (ORDER BY y) FROM {T}", "RANK() takes no arguments"),
    (f"SELECT DENSE_RANK(x, 3) OVER (ORDER BY y) FROM {T}",
     "DENSE_RANK() takes no arguments"),
])
def test_a_malformed_clause_is_an_error(sql: str, words: str) -> None:
    _refused(sql, words, BindError)


def _refused(sql: str, words: str, cls: type[Exception]) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TEMPORARY VIEW v AS SELECT * FROM {T}")
    with pytest.raises(cls, match=re.escape(words)) as info:
        s.sql(sql).collect()
    assert info.value.span is not None  # type: ignore[attr-defined]  # (line:col)


def test_limit_all_is_no_limit() -> None:
    """The SQL standard's LIMIT ALL (PostgreSQL's too) failed as "unknown column 'ALL'"."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    assert s.sql(f"SELECT y FROM {T} ORDER BY y DESC LIMIT ALL OFFSET 1").collect() \
        .column(0).to_pylist() == [2]
    assert s.sql(f"SELECT y FROM {T} LIMIT ALL").collect().num_rows == 2


def test_joins_without_a_condition_that_stay_cross_joins() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    for sql in (f"SELECT COUNT(*) FROM {T}, (VALUES (1), (2)) AS u(w)",
                f"SELECT COUNT(*) FROM {T} CROSS JOIN (VALUES (1), (2)) AS u(w)"):
        assert s.sql(sql).collect().column(0).to_pylist() == [4]


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_outer_apply_keeps_the_rows_without_a_match(mode: str) -> None:
    """OUTER APPLY is LEFT JOIN LATERAL ... ON TRUE (it ran as CROSS APPLY, dropping them)."""
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TEMPORARY VIEW v AS SELECT * FROM {T}")
    for apply, want in (("OUTER", [(1, 2, 7), (1, 5, None)]), ("CROSS", [(1, 2, 7)])):
        got = s.sql(f"SELECT v.x, v.y, a.w FROM v {apply} APPLY (SELECT w FROM (VALUES (2, 7)) "
                    "AS u(k, w) WHERE u.k = v.y) a").collect().to_pylist()
        assert sorted((tuple(r.values()) for r in got), key=key) == want


def test_star_exclude_leaves_the_columns_out() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    assert s.sql(f"SELECT * EXCLUDE (y) FROM {T}").collect().column_names == ["x", "z"]
    # (names resolve as the rest of a query's: X is x)
    both = s.sql(f"SELECT t.* EXCLUDE (X, z), u.* FROM {T}, (VALUES (7)) AS u(w) "
                 "ORDER BY y").collect()
    assert both.to_pylist() == [{"y": 2, "w": 7}, {"y": 5, "w": 7}]
    with pytest.raises(BindError, match="EXCLUDE names 'q'"):
        s.sql(f"SELECT * EXCLUDE (q) FROM {T}")


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_group_by_with_rollup_and_cube(mode: str) -> None:
    """MySQL's GROUP BY a, b WITH ROLLUP is ROLLUP (a, b) (it was ignored: no subtotals)."""
    s = sqlengine.connect({"execution.runtime-mode": mode})
    rows = "(VALUES (1, 'x'), (1, 'y'), (2, 'x')) AS t(a, b)"

    def run(tail: str) -> list[tuple[object, ...]]:
        got = s.sql(f"SELECT a, b, COUNT(*) AS n FROM {rows} GROUP BY {tail}").collect()
        return sorted((tuple(r.values()) for r in got.to_pylist()), key=key)

    rollup = [(1, "x", 1), (1, "y", 1), (1, None, 2), (2, "x", 1), (2, None, 1),
              (None, None, 3)]
    assert run("a, b WITH ROLLUP") == sorted(rollup, key=key)
    assert run("a, b WITH ROLLUP") == run("ROLLUP (a, b)")
    assert run("a, b WITH CUBE") == run("CUBE (a, b)")
    assert len(run("a, b WITH CUBE")) == len(rollup) + 2  # (+ the b-only subtotals)
    with pytest.raises(NotSupportedError, match="WITH ROLLUP"):
        s.sql(f"SELECT a, COUNT(*) AS n FROM {rows} GROUP BY ROLLUP (a) WITH ROLLUP")


@pytest.mark.parametrize("sql", [
    "SELECT x, y, SUM(z) AS s FROM t GROUP BY ALL",
    "SELECT x + 1 AS x1, COUNT(*) AS n, MAX(y) AS m FROM t GROUP BY ALL",
    "SELECT SUM(z) AS s, COUNT(*) AS n FROM t GROUP BY ALL",
    "SELECT x, SUM(z) AS s FROM t GROUP BY ALL HAVING SUM(z) > 4",
    "SELECT y FROM t GROUP BY ALL",
])
def test_group_by_all_as_duckdb(sql: str) -> None:
    """GROUP BY ALL (DuckDB's, Spark's): every SELECT item without an aggregate is a key (it
    was refused with "column must appear in GROUP BY")."""
    import duckdb

    rows = [(1, 2, 3), (1, 5, 6), (2, 2, 1), (None, 2, 4), (1, 2, 2)]
    values = ", ".join("(" + ", ".join("NULL" if v is None else str(v) for v in r) + ")"
                       for r in rows)
    table = f"(VALUES {values}) AS t(x, y, z)"
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    ours = s.sql(sql.replace("FROM t", f"FROM {table}")).collect().to_pylist()
    theirs = duckdb.sql(sql.replace("FROM t", f"FROM {table}")).fetchall()

    assert sorted((tuple(r.values()) for r in ours), key=key) == sorted(theirs, key=key)


def test_case_when_without_a_condition_is_a_parse_error() -> None:
    """sqlglot lets ``CASE WHEN THEN 1`` through with no condition; it failed with an
    AttributeError (the fuzzer, seed 2026)."""
    s = sqlengine.connect()
    with pytest.raises(ParseError, match="CASE WHEN needs a condition"):
        s.sql("SELECT CASE WHEN THEN 1 END AS v")


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT COUNT(DISTINCT ROW(k, s)) FROM (VALUES (1, 'a')) AS t(k, s)", [(1,)]),
    ("SELECT r, COUNT(*) FROM (SELECT (k, s) AS r FROM (VALUES (1, 'a')) AS t(k, s)) "
     "GROUP BY r", [({"EXPR$0": 1, "EXPR$1": "a"}, 1)]),
    ("SELECT DISTINCT (k, s) FROM (VALUES (1, 'a'), (1, 'a')) AS t(k, s)",
     [({"EXPR$0": 1, "EXPR$1": "a"},)]),
    ("SELECT ARRAY[k] FROM (VALUES (1)) AS t(k) UNION SELECT ARRAY[2]", [([1],), ([2],)]),
])
def test_grouping_by_nested_values(sql: str, expected: list[tuple[object, ...]]) -> None:
    """They failed while running with Arrow's 'Keys of type struct<...>', then were refused;
    they group by the value's bytes now (tests/sqlengine/test_nested_values_as_keys.py)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
    assert sorted(got, key=repr) == expected


def test_grouping_by_nested_values_of_types_without_key_bytes_is_refused() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(NotSupportedError,
                       match=r"grouping by the ARRAY<INTERVAL YEAR.*element types"):
        s.sql("SELECT a, COUNT(*) FROM (VALUES (ARRAY[INTERVAL '1' YEAR])) AS t(a) GROUP BY a")
