"""Casts and DECIMAL arithmetic as PyFlink 2.3 answers them (a helper's probe of types and
coercion; each difference re-run on both): text with more decimals than the target's scale
is rounded HALF_UP (it failed, or TRY_CAST gave NULL), DECIMAL arithmetic past 38 digits is
NULL (it failed), a FLOAT widens to DOUBLE before a DECIMAL (0.1f is 0.100000001 at scale
9; it was 0.100000000), and text is a DOUBLE as Java's Double.parseDouble reads it ('1d' is
1.0, 'inf' no number), a BIGINT rounded past its limit wraps round."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

BIG = "99999999999999999999999999999999999999"


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    session = sqlengine.connect({"execution.runtime-mode": "batch"})
    session.register("t", pa.table({
        "i": pa.array([7], pa.int32()),
        "m": pa.array([Decimal("7.50")], pa.decimal128(5, 2)),
        "f": pa.array([0.1], pa.float32()),
        "g": pa.array([2.675], pa.float32()),
        "s": ["12.345"], "n": ["-12.355"], "e": ["1.5e-2"]}))
    return session


@pytest.mark.parametrize(("expr", "want"), [
    ("CAST('12.345' AS DECIMAL(3, 1))", Decimal("12.3")),
    ("TRY_CAST(s AS DECIMAL(3, 1))", Decimal("12.3")),
    ("TRY_CAST(n AS DECIMAL(3, 1))", Decimal("-12.4")),
    ("TRY_CAST(e AS DECIMAL(3, 1))", Decimal("0.0")),
    ("TRY_CAST(s AS DECIMAL(2, 0))", Decimal("12")),
    ("TRY_CAST(n AS DECIMAL(2, 0))", Decimal("-12")),
    (f"CAST('{BIG}' AS DECIMAL(38, 0)) + i", None),
    (f"-CAST('{BIG}' AS DECIMAL(38, 0)) - i", None),
    (f"CAST('{BIG[:-1]}.9' AS DECIMAL(38, 1)) * m", None),
    ("m * 2 + 1", Decimal("16.00")),
    ("CAST(f AS DECIMAL(10, 9))", Decimal("0.100000001")),
    ("CAST(f AS DECIMAL(20, 19))", Decimal("0.1000000014901161200")),
    ("CAST(g AS DECIMAL(3, 2))", Decimal("2.67")),
    ("TRY_CAST('inf' AS DOUBLE)", None),
    ("TRY_CAST('1d' AS DOUBLE)", 1.0),
    ("TRY_CAST('1f' AS DOUBLE)", 1.0),
    ("CAST(' 2.5e1D ' AS DOUBLE)", 25.0),
    # (the BIGINT result of a rounding past its limit wraps round, as Java's longValue; it
    # came out as 9223372036854775806)
    ("ROUND(CAST(9223372036854775807 AS BIGINT), -1)", -9223372036854775806),
    ("ROUND(CAST(1234567 AS BIGINT), -3)", 1235000),
    # (a DECIMAL's text is plain, with its scale's digits; it was 0E-18, -1E-18, 1.0E-7)
    ("CAST(CAST(0 AS DECIMAL(38, 18)) AS STRING)", "0.000000000000000000"),
    ("CAST(CAST('-0.000000000000000001' AS DECIMAL(38, 18)) AS STRING)",
     "-0.000000000000000001"),
    ("CAST(CAST('0.0000001' AS DECIMAL(10, 8)) AS STRING)", "0.00000010"),
    ("CAST(m AS STRING)", "7.50"),
])
def test_as_flink(s: sqlengine.Session, expr: str, want: object) -> None:
    assert s.sql(f"SELECT {expr} AS v FROM t").collect().column(0).to_pylist() == [want]


@pytest.mark.parametrize("sql", [
    "SELECT CAST(CAST('0001-01-01 00:00:00' AS TIMESTAMP(9)) AS STRING)",
    "SELECT YEAR(TIMESTAMP '2300-01-01 00:00:00.000000001')",
    "SELECT CAST(ts AS TIMESTAMP(9)) FROM (VALUES (TIMESTAMP '1600-01-01 00:00:00')) AS t(ts)",
])
def test_nanoseconds_out_of_their_range_are_refused(s: sqlengine.Session, sql: str) -> None:
    """TIMESTAMP(7..9) are nanoseconds in an int64 here: a time before 1677-09-21 or after
    2262-04-11 wrapped round silently (0001-01-01 read as 1754-08-30; YEAR of 2300 gave
    1715). Flink holds them; here the CAST fails naming the range, TRY_CAST is NULL."""
    with pytest.raises(SqlEngineError, match="out of the range TIMESTAMP"):
        s.sql(sql).collect()
    assert s.sql("SELECT TRY_CAST('0001-01-01 00:00:00' AS TIMESTAMP(9)) AS v, "
                 "CAST('2262-04-11 23:47:16.854775807' AS TIMESTAMP(9)) AS w").collect() \
        .to_pylist()[0]["v"] is None


@pytest.mark.parametrize("value, target", [("999999999999999999991", "BIGINT"),
                                           ("99999999991", "INT")])
def test_a_number_past_its_type_names_the_value(value: str, target: str) -> None:
    """Flink fails too; the message named Arrow's parser ("Failed to parse string: ... as a
    scalar of type int64")."""
    s = sqlengine.connect()
    s.execute("CREATE TEMPORARY VIEW g(k) AS VALUES (1)")
    with pytest.raises(SqlEngineError, match=f"cannot CAST '{value}' to {target}: out of its "
                                             "range"):
        s.sql(f"SELECT CAST(CONCAT('{value[:-1]}', CAST(k AS STRING)) AS {target}) FROM g"
              ).collect()
