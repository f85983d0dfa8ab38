"""DECIMAL arithmetic whose intermediate result passes Arrow's 76 digits, and casts and rounding
that overflow DECIMAL(38, s). Flink 2.3 answers these (the expected values are PyFlink's, on
the same column values), where we failed: a division of two DECIMAL(38, 37) with "Decimal
precision out of range [1, 76]: 84"; a DECIMAL(10, 2) of 10.50 cast to DECIMAL(38, 37) with
"Rescaling Decimal value would cause data loss" (Flink: NULL, the value does not fit); ROUND
of 38 nines to the tens with "does not fit in precision 38" (Flink: NULL)."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

import sqlengine

NINES = "99999999999999999999999999999999999999"


@pytest.fixture(params=["batch", "streaming"])
def session(request: pytest.FixtureRequest) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": request.param})
    s.register("d", pa.table({
        "k": pa.array([1, 1, 2], pa.int32()),
        "a": pa.array([Decimal("10.50"), Decimal("20.25"), Decimal("5.00")],
                      pa.decimal128(10, 2)),
        "b": pa.array([Decimal("3.25"), Decimal("7.10"), Decimal("0.30")],
                      pa.decimal128(10, 2)),
        "s": pa.array([NINES, "-" + NINES[:-1] + "5", "12345678901234567890123456789012345678"]),
    }))
    return s


def _column(s: sqlengine.Session, expr: str) -> list[object]:
    return [next(iter(r.values())) for r in s.sql(f"SELECT {expr} FROM d").collect().to_pylist()]


def test_division_of_wide_scales(session: sqlengine.Session) -> None:
    assert _column(session, "CAST(CAST(k AS DECIMAL(38, 37)) / CAST(3 AS DECIMAL(38, 37)) "
                            "AS STRING)") == ["0.333333", "0.333333", "0.666667"]
    assert _column(session, "CAST(CAST(a * 1000 AS DECIMAL(38, 0)) / CAST(b AS "
                            "DECIMAL(38, 37)) AS STRING)") == [
        "3230.769231", "2852.112676", "16666.666667"]
    assert _column(session, "CAST(CAST(a AS DECIMAL(20, 0)) / CAST(b AS DECIMAL(38, 37)) "
                            "AS STRING)") == ["3.384615", "2.816901", "16.666667"]
    assert _column(session, "CAST(CAST(s AS DECIMAL(38, 0)) / CAST(s AS DECIMAL(38, 0)) "
                            "AS STRING)") == ["1.000000"] * 3
    assert _column(session, "CAST(-2 AS DECIMAL(38, 37)) / CAST(k AS DECIMAL(38, 37))") == [
        Decimal("-2.000000"), Decimal("-2.000000"), Decimal("-1.000000")]


def test_casts_past_the_integral_digits_are_null(session: sqlengine.Session) -> None:
    assert _column(session, "CAST(a AS DECIMAL(38, 37))") == [
        None, None, Decimal("5.0000000000000000000000000000000000000")]
    assert _column(session, "CAST(CAST(a AS DECIMAL(38, 37)) / CAST(b AS DECIMAL(38, 37)) "
                            "AS STRING)") == [None, None, "16.666667"]
    assert _column(session, "CAST(CAST(s AS DECIMAL(38, 0)) AS DECIMAL(38, 1))") == [
        None, None, None]


def test_rounding_that_carries_past_38_digits_is_null(session: sqlengine.Session) -> None:
    assert _column(session, "ROUND(CAST(s AS DECIMAL(38, 0)), -1)") == [
        None, None, Decimal("12345678901234567890123456789012345680")]
    assert _column(session, "ROUND(CAST(s AS DECIMAL(38, 0)), -37)") == [
        None, None, Decimal("1" + "0" * 37)]
    assert _column(session, "TRUNCATE(CAST(s AS DECIMAL(38, 0)), -1)") == [
        Decimal(NINES[:-1] + "0"), Decimal("-" + NINES[:-2] + "90"),
        Decimal("12345678901234567890123456789012345670")]
