"""SQL of other engines that sqlengine took and gave another meaning, without a word (found by
a probe against DuckDB and PostgreSQL): now refused as Flink refuses it, naming the place."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _refused(sql: str, words: str) -> SqlEngineError:
    s = sqlengine.connect()
    s.execute("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, 20), (2, 10)) AS v(a, b)")
    s.execute("CREATE TEMPORARY VIEW u AS SELECT * FROM (VALUES (1, 5), (2, 6)) AS v(a, c)")
    with pytest.raises(SqlEngineError) as e:
        s.sql(sql).collect()
    assert words in e.value.message
    return e.value


@pytest.mark.parametrize(("sql", "name"), [
    ("SELECT CAST(300 AS INT8)", "INT8"),  # (was 44: sqlglot's 8-bit INT8; PostgreSQL's 300)
    ("SELECT 3000000000::int8", "int8"),  # (was 0)
    ("SELECT CAST(1.5 AS NUMBER)", "NUMBER"),  # (was 2: a DECIMAL(10, 0); Oracle's 1.5)
    ("SELECT CAST(1 AS HUGEINT)", "HUGEINT")])
def test_type_names_of_another_meaning_are_unknown(sql: str, name: str) -> None:
    _refused(sql, f"unknown type {name!r}")


@pytest.mark.parametrize("sql", [
    # (PostgreSQL's unit inside the string: its first part was taken, the rest dropped;
    # '3 days 4:05:06' added 3 days, '1 day ago' +1 day. Flink needs the unit after it.)
    "SELECT TIMESTAMP '2024-01-31 10:00:00' + INTERVAL '3 days 4:05:06'",
    "SELECT INTERVAL '1 day ago'", "SELECT INTERVAL '1 day'"])
def test_an_interval_needs_its_unit_after_the_string(sql: str) -> None:
    e = _refused(sql, "needs its unit after the string")
    assert e.span is not None and sql[e.span.column - 1] == "'"


@pytest.mark.parametrize("sql", [
    # (a fraction of an hour, a day, a year was taken at face value: 90 minutes; Flink
    # refuses it, PostgreSQL and DuckDB cut it)
    "SELECT INTERVAL '1.5' HOUR", "SELECT INTERVAL '2.5' MINUTE", "SELECT INTERVAL '1.5' DAY",
    "SELECT INTERVAL '1.5' YEAR", "SELECT INTERVAL '2 10.5' DAY TO HOUR"])
def test_only_seconds_take_a_fraction(sql: str) -> None:
    _refused(sql, "invalid interval value")


def test_fractions_of_seconds_still_read() -> None:
    s = sqlengine.connect()
    got = s.sql("SELECT INTERVAL '1.5' SECOND AS a, INTERVAL '1 02:03:04.5' DAY TO SECOND AS b"
                ).collect().to_pylist()[0]
    assert (got["a"].total_seconds(), got["b"].total_seconds()) == (1.5, 93784.5)


@pytest.mark.parametrize("sql", [
    # PyFlink 2.3: "Column 'k' is ambiguous" for each (the first item was taken)
    "SELECT a AS k, b AS k FROM t ORDER BY k DESC",
    "SELECT t.a, u.a FROM t LEFT JOIN u ON t.a = u.a ORDER BY a",
    "SELECT a, a FROM t ORDER BY a DESC",
    "SELECT a AS k, COUNT(*) AS k FROM t GROUP BY a ORDER BY k",
    "SELECT DISTINCT a AS k, b AS k FROM t ORDER BY k"])
def test_order_by_a_name_two_items_carry_is_ambiguous(sql: str) -> None:
    _refused(sql, "is ambiguous")


def test_order_by_a_name_a_star_repeats_takes_the_first() -> None:
    """A star's repeated column is renamed (a0): ORDER BY a is the first, as in PyFlink 2.3
    ((2, 10, 2, 6), (1, 20, 1, 5))."""
    s = sqlengine.connect()
    s.execute("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (1, 20), (2, 10)) AS v(a, b)")
    s.execute("CREATE TEMPORARY VIEW u AS SELECT * FROM (VALUES (1, 5), (2, 6)) AS v(a, c)")
    rows = s.sql("SELECT * FROM t LEFT JOIN u ON t.a = u.a ORDER BY a DESC").collect()
    assert [tuple(r.values()) for r in rows.to_pylist()] == [(2, 10, 2, 6), (1, 20, 1, 5)]
