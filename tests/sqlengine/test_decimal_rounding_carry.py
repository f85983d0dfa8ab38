"""A DECIMAL rounded to fewer digits whose carry no longer fits its precision (999.995 to two
digits is 1000.00): over a column of several values Arrow's rounding gave 0.000 without an
error. CAST to a type it does not fit is NULL, as in Flink 2.3 (DecimalData.fromBigDecimal);
ROUND widens its type; DECIMAL division rounds to its result's scale."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa

import sqlengine
from sqlengine.cast import cast_array, round_decimal


def test_cast_of_a_column_whose_carry_overflows_is_null() -> None:
    s = sqlengine.connect()
    got = s.sql("SELECT CAST(x AS DECIMAL(5, 2)) AS v FROM (VALUES (999.995), (1.5), "
                "(-999.995), (999.994)) AS t(x)").collect().column("v").to_pylist()
    assert got == [None, Decimal("1.50"), None, Decimal("999.99")]


def test_round_of_a_column_carries() -> None:
    s = sqlengine.connect()
    got = s.sql("SELECT ROUND(x, 2) AS v FROM (VALUES (999.995), (1.5), (-99.999)) AS t(x)"
                ).collect().column("v").to_pylist()
    assert got == [Decimal("1000.00"), Decimal("1.50"), Decimal("-100.00")]


def test_round_decimal_at_full_precision() -> None:
    nines = Decimal("9" * 36 + ".95")
    arr = pa.array([nines, Decimal("1.25")], pa.decimal128(38, 2))
    assert round_decimal(arr, 1).to_pylist() == [Decimal("1" + "0" * 36 + ".00"),
                                                 Decimal("1.30")]
    assert cast_array(arr, pa.decimal128(38, 1)).to_pylist() == [
        Decimal("1" + "0" * 36 + ".0"), Decimal("1.3")]
    assert cast_array(arr, pa.decimal128(37, 1)).to_pylist() == [None, Decimal("1.3")]
