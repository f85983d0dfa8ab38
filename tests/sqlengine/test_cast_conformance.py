"""CAST as Flink 2.3 does it (its answers in tests/conformance/flink_expected.json, and
hand-checked values of Java's conversions): strings to numbers, integer narrowing wrapping
around, doubles saturating, decimal overflow as NULL, Java's text of a double, TIMESTAMP /
INTERVAL / TIME to STRING, strings to DATE / TIMESTAMP(p), STRING <-> BYTES / BINARY(n); and
TRY_CAST agreeing with CAST wherever CAST gives a value."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import sqlengine
from sqlengine.cast import java_double_text
from sqlengine.errors import SqlEngineError


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    return sqlengine.connect({"execution.runtime-mode": "batch"})


def one(s: sqlengine.Session, expr: str) -> object:
    return s.sql(f"SELECT {expr}").collect().column(0)[0].as_py()


CASES = [
    ("CAST('+42' AS INT)", 42), ("CAST(' 42 ' AS INT)", 42), ("CAST('42.5' AS INT)", 42),
    ("CAST('-42.9' AS BIGINT)", -42),
    ("CAST(2147483648 AS INT)", -2147483648), ("CAST(300 AS TINYINT)", 44),
    ("CAST(-129 AS TINYINT)", 127), ("CAST(70000 AS SMALLINT)", 4464),
    ("CAST(1E20 AS BIGINT)", 2**63 - 1), ("CAST(-1E20 AS BIGINT)", -(2**63)),
    ("CAST(1E20 AS INT)", 2**31 - 1), ("CAST(1E10 AS TINYINT)", -1),
    ("CAST(CAST('NaN' AS DOUBLE) AS INT)", 0), ("CAST(-42.9E0 AS INT)", -42),
    # (a number too large for the DECIMAL is NULL, as Flink 2.3 gives over a nullable
    # column; a STRING too large is an error there: see below)
    ("CAST(12345.6 AS DECIMAL(4, 1))", None), ("CAST(123.456 AS DECIMAL(4, 1))",
                                               Decimal("123.5")),
    ("CAST(12345 AS DECIMAL(4, 1))", None), ("CAST(1E10 AS DECIMAL(4, 1))", None),
    ("CAST(0.1E0 AS DECIMAL(20, 18))", Decimal("0.100000000000000000")),
    ("CAST(1.5E0 AS DECIMAL(10, 2))", Decimal("1.50")),
    ("CAST(-0.005 AS DECIMAL(5, 2))", Decimal("-0.01")),
    ("CAST(1.0E0 AS STRING)", "1.0"), ("CAST(1E20 AS STRING)", "1.0E20"),
    ("CAST(1.0E-5 AS STRING)", "1.0E-5"), ("CAST(0.001E0 AS STRING)", "0.001"),
    ("CAST(1E7 AS STRING)", "1.0E7"), ("CAST(1234567.5E0 AS STRING)", "1234567.5"),
    ("CAST(-2.5E-10 AS STRING)", "-2.5E-10"), ("CAST(0.1E0 + 0.2E0 AS STRING)",
                                               "0.30000000000000004"),
    ("CAST(CAST(1.1 AS FLOAT) AS STRING)", "1.1"),
    ("CAST(CAST('NaN' AS DOUBLE) AS STRING)", "NaN"),
    ("CAST(CAST('Infinity' AS DOUBLE) AS STRING)", "Infinity"),
    ("CAST(INTERVAL '2' DAY AS STRING)", "+2 00:00:00.000"),
    ("CAST(INTERVAL '1 02:03:04.5' DAY TO SECOND AS STRING)", "+1 02:03:04.500"),
    ("CAST(INTERVAL '-90' MINUTE AS STRING)", "-0 01:30:00.000"),
    ("CAST(INTERVAL '1-2' YEAR TO MONTH AS STRING)", "+1-02"),
    ("CAST(TIMESTAMP '2020-01-02 10:11:12' AS STRING)", "2020-01-02 10:11:12"),
    ("CAST(TIMESTAMP '2020-01-02 10:11:12.123456' AS STRING)", "2020-01-02 10:11:12.123456"),
    ("CAST('2020-1-2' AS DATE)", dt.date(2020, 1, 2)),
    ("CAST('2020-01-2' AS DATE)", dt.date(2020, 1, 2)),
    ("CAST('2020-1-2 3:04:05' AS TIMESTAMP(0))", dt.datetime(2020, 1, 2, 3, 4, 5)),
    ("CAST('2020-01-02 10:11:12.123456' AS TIMESTAMP(3))",
     dt.datetime(2020, 1, 2, 10, 11, 12, 123000)),
    ("CAST('2020-01-02 10:11:12.9' AS TIMESTAMP(0))", dt.datetime(2020, 1, 2, 10, 11, 12)),
    ("CAST(TIMESTAMP '2020-01-02 10:11:12.123456' AS TIMESTAMP(3))",
     dt.datetime(2020, 1, 2, 10, 11, 12, 123000)),
    ("CAST(TIMESTAMP '1969-12-31 23:59:59.9999' AS TIMESTAMP(3))",
     dt.datetime(1969, 12, 31, 23, 59, 59, 999000)),
    # (Flink 2.3 gives 1.6777216E7: Java's rounding; Arrow's safe cast refused it)
    ("CAST(16777217 AS FLOAT)", 16777216.0),
    ("CAST(9007199254740993 AS DOUBLE)", 9007199254740992.0),
    ("CAST('2020-01-02' AS TIMESTAMP(3))", dt.datetime(2020, 1, 2)),
    ("CAST('abc' AS BYTES)", b"abc"), ("CAST('abc' AS BINARY(5))", b"abc\x00\x00"),
    ("CAST('abcdef' AS BINARY(2))", b"ab"), ("CAST(X'616263' AS STRING)", "abc"),
    # (bytes that are not UTF-8: each malformed sequence is U+FFFD, as PyFlink 2.3 gives)
    ("CAST(X'0aff' AS STRING)", "\n\ufffd"), ("CAST(X'e282' AS STRING)", "\ufffd"),
    ("CAST(X'41c3a9' AS STRING)", "A\u00e9"), ("CHAR_LENGTH(CAST(X'0aff41' AS STRING))", 3),
    ("X'00ff'", b"\x00\xff"), ("CAST('é' AS BYTES)", "é".encode()),
]


@pytest.mark.parametrize(("expr", "value"), CASES)
def test_cast_as_flink(s: sqlengine.Session, expr: str, value: object) -> None:
    assert one(s, expr) == value


@pytest.mark.parametrize(("expr", "value"), [c for c in CASES if c[0].startswith("CAST(")])
def test_try_cast_agrees(s: sqlengine.Session, expr: str, value: object) -> None:
    assert one(s, "TRY_" + expr) == value


@pytest.mark.parametrize("expr", [
    "CAST('2147483648' AS INT)", "CAST('abc' AS INT)", "CAST('' AS INT)",
    "CAST('1e3' AS INT)", "CAST('2020-02-30' AS DATE)", "CAST('garbage' AS TIMESTAMP)",
    "CAST(CAST('NaN' AS DOUBLE) AS DECIMAL(5, 2))", "X'abc'",
    # (Flink 2.3: NumberFormatException 'Overflow'; it was NULL without a word)
    "CAST('12345.6' AS DECIMAL(4, 1))", "CAST(' -99999 ' AS DECIMAL(5, 1))",
    # (as Flink 2.3: an ISO-8601 'T' is not TIMESTAMP text; the error named a mangled
    # '2024-01-01 10:00:00 00:00:00')
    "CAST('2024-01-01T10:00:00' AS TIMESTAMP(3))",
])
def test_cast_errors_and_try_cast_null(s: sqlengine.Session, expr: str) -> None:
    with pytest.raises(SqlEngineError) as e:
        one(s, expr)
    assert "bug in sqlengine" not in str(e.value)
    if expr.startswith("CAST("):
        assert one(s, "TRY_" + expr) is None


def test_casts_over_a_column(s: sqlengine.Session) -> None:
    got = s.sql("SELECT CAST(d AS STRING) AS ds, CAST(d AS INT) AS di, "
                "TRY_CAST(t AS INT) AS ti, CAST(d AS DECIMAL(3, 1)) AS dd FROM (VALUES "
                "(1.0E0, '+7'), (1E20, 'x'), (CAST(NULL AS DOUBLE), '3.9'), (99.95E0, '-1')) "
                "AS v(d, t)").collect().to_pylist()
    assert got == [
        {"ds": "1.0", "di": 1, "ti": 7, "dd": Decimal("1.0")},
        {"ds": "1.0E20", "di": 2**31 - 1, "ti": None, "dd": None},
        {"ds": None, "di": None, "ti": 3, "dd": None},
        {"ds": "99.95", "di": 99, "ti": -1, "dd": None},
    ]


@pytest.mark.parametrize(("v", "text"), [
    (1.0, "1.0"), (100.0, "100.0"), (1e7, "1.0E7"), (9999999.0, "9999999.0"),
    (0.001, "0.001"), (0.0009, "9.0E-4"), (123456789.0, "1.23456789E8"), (-0.0, "-0.0"),
    (1.7976931348623157e308, "1.7976931348623157E308"),
])
def test_java_double_text(v: float, text: str) -> None:
    assert java_double_text(v) == text


# STRING to DATE / TIMESTAMP as PyFlink 2.3 reads them in TRY_CAST over a column (its answers
# for these texts, printed through CAST(... AS STRING)); None: not a date / timestamp.
DATE_TEXT = [
    ("2024-03-06", "2024-03-06"), ("2024-3-6", "2024-03-06"), (" 2024-03-06 ", "2024-03-06"),
    ("2024-03-06 10:00:00", "2024-03-06"), ("2024-03-06 x", "2024-03-06"),
    ("12", "0012-01-01"), ("2024", "2024-01-01"), ("2024-03", "2024-03-01"),
    ("0-1-1", "0000-01-01"), ("0002024-03-06", "2024-03-06"), ("2000-02-29", "2000-02-29"),
    ("2024-03-06T10:00:00", None), ("+2024-03-06", None), ("99999-01-01", None),
    ("2024-03-06abc", None), ("2024-03-06-1", None), ("2024--03", None), ("-2024-03-06", None),
    ("2023-02-29", None), ("1900-02-29", None), ("2024-04-31", None), ("2024-13-01", None),
    ("2024-00-10", None), ("2024- 03 -06", None), (" ", None), ("", None),
]
TIMESTAMP_TEXT = [
    ("2024-03-06 10:00:00.123456789", "2024-03-06 10:00:00.123456"),
    ("2024-03-06 10:00:5", "2024-03-06 10:00:05.000000"),
    ("2024-03-06 1:2:3.5", "2024-03-06 01:02:03.500000"),
    ("2024-3-6 10:00:00", "2024-03-06 10:00:00.000000"),
    ("2024-03-06", "2024-03-06 00:00:00.000000"), ("2024-3-6", "2024-03-06 00:00:00.000000"),
    ("2024-03-06 24:00:00", "2024-03-07 00:00:00.000000"),
    ("2024-02-30 10:00:00", "2024-02-29 10:00:00.000000"),
    ("2024-03-06 10:00:00.", "2024-03-06 10:00:00.000000"),
    (" 2024-03-06 10:00:00 ", None), ("2024-03-06 10:00", None), ("2024-03-06 ", None),
    ("2024-03-06 23:60:00", None), ("02024-03-06 10:00:00", None), ("24-03-06 10:00:00", None),
    ("2024-03-06T10:00:00", None), ("2024-03-06 10:00:00Z", None),
    ("2024-03-06  10:00:00", None), ("2024-03-06 100:00:00", None),
]


@pytest.mark.parametrize(("target", "cases"), [("DATE", DATE_TEXT),
                                               ("TIMESTAMP", TIMESTAMP_TEXT)])
def test_text_to_date_and_timestamp_as_flink(s: sqlengine.Session, target: str,
                                             cases: list[tuple[str, str | None]]) -> None:
    import pyarrow as pa

    s.register("texts", pa.table({"x": [c[0] for c in cases]}))
    got = s.sql(f"SELECT x, CAST(TRY_CAST(x AS {target}) AS STRING) AS v FROM texts"
                ).collect().to_pylist()
    assert [(r["x"], r["v"]) for r in got] == cases
    for text, value in cases:  # CAST: the value, or an error naming the text
        if value is not None:
            continue
        with pytest.raises(SqlEngineError, match="cannot CAST"):
            one(s, f"CAST('{text}' AS {target})")


def test_text_to_boolean_as_flink(s: sqlengine.Session) -> None:
    # (PyFlink 2.3: any case, no trimming)
    got = s.sql("SELECT TRY_CAST(x AS BOOLEAN) AS b FROM (VALUES ('t'), ('f'), ('Y'), ('no'), "
                "('0'), ('2'), ('TRUE '), ('on'), ('True')) AS t(x)").collect().column(0)
    assert got.to_pylist() == [True, False, True, False, False, None, None, None, True]
    with pytest.raises(SqlEngineError, match="cannot CAST ' true' to BOOLEAN"):
        one(s, "CAST(' true' AS BOOLEAN)")


def test_to_date_as_flink(s: sqlengine.Session) -> None:
    # TO_DATE(s): CAST's reading; TO_DATE(s, format): SimpleDateFormat's, a leading match
    # (text after it ignored) and a month past 12 rolling into the next year, as PyFlink
    # 2.3 (which gives 5471-09-27 for text that does not match at all: here NULL).
    got = s.sql("SELECT x, TO_DATE(x) AS a, TO_DATE(x, 'yyyy-MM-dd') AS b, "
                "TO_DATE(x, 'dd/MM/yyyy') AS c FROM (VALUES ('2024-03-06 17:04:09'), "
                "('2024-03-06xyz'), ('06/03/2024 10:00'), ('2024-13-01'), ('2024'), ('bad')) "
                "AS t(x)").collect().to_pylist()
    d = dt.date
    assert [(r["a"], r["b"], r["c"]) for r in got] == [
        (d(2024, 3, 6), d(2024, 3, 6), None), (None, d(2024, 3, 6), None),
        (None, None, d(2024, 3, 6)), (None, d(2025, 1, 1), None), (d(2024, 1, 1), None, None),
        (None, None, None)]


# What PyFlink 2.3's validator refuses ("Cast function cannot convert value of type ... to
# type ..."), each refused here when bound, whatever the rows: they failed only on a row
# that reached them, with Arrow's words, or gave a value (CAST(INTERVAL '2' DAY AS BIGINT)
# gave 172800000; CAST(x'01' AS INT) read the byte as text).
REFUSED_CASTS = [
    ("CAST(b AS DATE) FROM (VALUES (TRUE)) AS t(b) WHERE b = FALSE", "BOOLEAN to DATE"),
    ("CAST(DATE '2024-01-01' AS BOOLEAN)", "DATE to BOOLEAN"),
    ("CAST(ARRAY[1] AS INT)", "ARRAY<INT> to INT"),
    ("CAST(INTERVAL '2' YEAR AS INT)", "INTERVAL YEAR TO MONTH to INT"),
    ("CAST(INTERVAL '2' DAY AS BIGINT)", "to BIGINT"),
    ("CAST(X'01' AS INT)", "BYTES to INT"),
    ("CAST(1 AS BINARY(4))", "INT to BYTES"),
    ("CAST(DATE '2024-01-01' AS TIME)", "DATE to TIME"),
    ("CAST(ROW(1, 'a') AS ROW<x BIGINT>)", "a ROW of 2 fields does not cast to one of 1"),
    ("CAST(TRUE AS TIMESTAMP(3))", "BOOLEAN to TIMESTAMP"),
    ("CAST(ARRAY[DATE '2024-01-01'] AS ARRAY<BOOLEAN>)", "a BOOLEAN only from"),
    ("CAST(MAP['a', 1] AS ARRAY<INT>)", "a MAP casts only to a MAP"),
]


@pytest.mark.parametrize(("expr", "message"), REFUSED_CASTS)
def test_a_cast_flink_refuses_is_refused_when_bound(s: sqlengine.Session, expr: str,
                                                   message: str) -> None:
    from sqlengine.errors import BindError

    for word in ("CAST", "TRY_CAST"):
        with pytest.raises(BindError, match=f"cannot CAST .*{message}"):
            s.sql(f"SELECT {word}{expr[4:]}")


@pytest.mark.parametrize(("expr", "value"), [  # (what PyFlink 2.3 gives of these)
    ("CAST(TRUE AS INT)", 1), ("CAST(1.5 AS BOOLEAN)", True),
    ("CAST(TRUE AS DECIMAL(3, 1))", Decimal("1.0")), ("CAST('abc' AS BYTES)", b"abc"),
    ("CAST(TIME '10:00:00' AS TIMESTAMP(3))", dt.datetime(1970, 1, 1, 10)),
    ("CAST(ARRAY[1, 2] AS ARRAY<STRING>)", ["1", "2"]),
    ("CAST(MAP['a', 1] AS STRING)", "{a=1}"),
    ("CAST(INTERVAL '2' YEAR AS STRING)", "+2-00"),
])
def test_a_cast_flink_allows_is_not(s: sqlengine.Session, expr: str, value: object) -> None:
    assert one(s, expr) == value
