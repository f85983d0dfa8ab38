"""Scalar semantics over Arrow arrays, checked by hand against Flink's documented behaviour."""

from __future__ import annotations

import decimal

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def one(sql: str) -> object:
    table = sqlengine.connect().sql(sql).collect()
    return table.column(0)[0].as_py()


@pytest.mark.parametrize(("sql", "want"), [
    ("SELECT 7 / 2", 3),
    ("SELECT -7 / 2", -3),                      # integer division truncates toward zero
    ("SELECT MOD(-7, 3)", -1),                  # sign of the dividend (Java %)
    ("SELECT 7.0 / 2", decimal.Decimal("3.500000000000")),
    ("SELECT CAST(7 AS DOUBLE) / 2", 3.5),
    ("SELECT CAST(-1.7 AS BIGINT)", -1),         # DECIMAL -> BIGINT truncates
    ("SELECT CAST(CAST(-1.7 AS DOUBLE) AS INT)", -1),
    ("SELECT CAST(' 42 ' AS INT)", 42),
    ("SELECT CAST(TRUE AS STRING)", "TRUE"),
    ("SELECT CAST(1.005 AS DECIMAL(5, 2))", decimal.Decimal("1.01")),  # HALF_UP
    ("SELECT CAST(-1.005 AS DECIMAL(5, 2))", decimal.Decimal("-1.01")),
    ("SELECT ROUND(-2.5)", decimal.Decimal("-3")),
    ("SELECT ROUND(2.45, 1)", decimal.Decimal("2.5")),
    ("SELECT CAST(CAST('2024-03-01 09:00:01.5' AS TIMESTAMP(3)) AS STRING)",
     "2024-03-01 09:00:01.500"),
    ("SELECT CAST(DATE '2024-03-01' AS STRING)", "2024-03-01"),
    ("SELECT TRY_CAST('abc' AS INT)", None),
    ("SELECT 1 IN (2, NULL)", None),            # not found, and the list has NULL
    ("SELECT 2 IN (2, NULL)", True),
    ("SELECT NULL IN (1)", None),
    ("SELECT 3 NOT IN (1, 2)", True),
    ("SELECT CASE WHEN NULL THEN 1 ELSE 2 END", 2),
    ("SELECT 'abc' LIKE 'a_c'", True),
    ("SELECT SUBSTRING('hello', 0, 2)", "he"),  # Flink: position 0 is 1 (PyFlink 2.3)
    ("SELECT SUBSTRING('hello', 2)", "ello"),
    ("SELECT SUBSTRING('hello' FROM 2 FOR 3)", "ell"),
    ("SELECT POSITION('l' IN 'hello')", 3),
    ("SELECT POSITION('z' IN 'hello')", 0),
    ("SELECT TRIM('  x  ')", "x"),
    ("SELECT CONCAT('a', NULL)", None),
    ("SELECT 'a' || 'b' || 'c'", "abc"),
    ("SELECT LPAD('7', 3, '0')", "007"),
    ("SELECT LPAD('hello', 2, '*')", "he"),
    ("SELECT RPAD('ab', 5, 'xy')", "abxyx"),
    ("SELECT CHAR_LENGTH('héllo')", 5),
    ("SELECT UPPER('héllo')", "HÉLLO"),
    ("SELECT COALESCE(NULL, NULL, 3)", 3),
    ("SELECT NULLIF(1, 1)", None),
    ("SELECT IF(NULL, 1, 2)", 2),
    ("SELECT GREATEST(1, NULL, 3)", None),
    ("SELECT LEAST(4, 2, 3)", 2),
    ("SELECT 2147483647 + 1", -2147483648),      # INT arithmetic overflows as in Java
    ("SELECT TRUE AND NULL", None),
    ("SELECT FALSE AND NULL", False),
    ("SELECT TRUE OR NULL", True),
    ("SELECT NULL IS NULL", True),
    ("SELECT NULL = NULL", None),                # (a bare NULL on both sides; PyFlink 2.3)
    ("SELECT NULL < NULL", None),
    ("SELECT NULL AND FALSE", False),
    ("SELECT NULL OR NULL", None),
    ("SELECT (1 > 2) IS NOT TRUE", True),
    ("SELECT EXTRACT(HOUR FROM CAST('2024-03-05 17:04:09.123' AS TIMESTAMP(3)))", 17),
    ("SELECT DAYOFWEEK(DATE '2024-03-03')", 1),  # Sunday
    ("SELECT DATE_FORMAT(CAST('2024-03-05 17:04:09.123' AS TIMESTAMP(3)), "
     "'yyyy-MM-dd HH:mm:ss.SSS')", "2024-03-05 17:04:09.123"),
    ("SELECT DATE_FORMAT(CAST('2024-03-05 17:04:09' AS TIMESTAMP(3)), 'HH:mm')", "17:04"),
    ("SELECT REGEXP_EXTRACT('a?channel_id=42&b=1', '(&|^|\\?)channel_id=([^&]*)', 2)", "42"),
    ("SELECT REGEXP_EXTRACT('abc', 'z(.)')", None),
    ("SELECT SPLIT_INDEX('https://www.nexmark.com/a/b', '/', 3)", "a"),
    ("SELECT SPLIT_INDEX('a/b', '/', 5)", None),
])
def test_scalar(sql: str, want: object) -> None:
    assert one(sql) == want


def test_decimal_result_types_follow_flink() -> None:
    s = sqlengine.connect()
    q = s.sql("SELECT CAST(1 AS DECIMAL(10, 2)) / CAST(3 AS DECIMAL(10, 0)) AS q, "
              "CAST(1 AS DECIMAL(10, 2)) * CAST(3 AS DECIMAL(5, 1)) AS m, "
              "CAST(1 AS DECIMAL(10, 2)) + CAST(3 AS DECIMAL(5, 1)) AS a")
    types = {f.name: str(f.type) for f in q.schema}
    assert types == {"q": "decimal128(21, 13)", "m": "decimal128(16, 3)",
                     "a": "decimal128(11, 2)"}
    row = q.collect().to_pylist()[0]
    assert row["q"] == decimal.Decimal("0.3333333333333")
    assert row["m"] == decimal.Decimal("3.000")


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT 1 / (1 - 1)", "division by zero"),
    ("SELECT CAST('abc' AS INT)", "cannot CAST 'abc' to INT"),
    ("SELECT CAST('2024-13-45' AS DATE)", "cannot CAST '2024-13-45' to DATE"),
])
def test_runtime_errors(sql: str, message: str) -> None:
    with pytest.raises(SqlEngineError) as info:
        one(sql)
    assert message in str(info.value)
