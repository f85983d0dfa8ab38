"""MOD of DECIMAL values: Java's BigDecimal.remainder (the dividend's sign), the result scale the
larger of the two. Refused at run time on main ("MOD of DECIMAL values is not supported yet");
the expected values are PyFlink 2.3's."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


@pytest.mark.parametrize(("expr", "want"), [
    ("MOD(CAST(1.50 AS DECIMAL(15, 2)), CAST(2.25 AS DECIMAL(15, 2)))", "1.50"),
    ("MOD(CAST(-7.5 AS DECIMAL(5, 1)), CAST(2 AS DECIMAL(5, 0)))", "-1.5"),
    # Wide operands take the exact (Python decimal) path.
    ("MOD(CAST(7.25 AS DECIMAL(30, 2)), CAST(-2.1 AS DECIMAL(30, 1)))", "0.95"),
])
def test_matches_flink(expr: str, want: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    assert s.sql(f"SELECT {expr} AS m").collect().column(0)[0].as_py() == decimal.Decimal(want)


def test_over_columns_with_nulls_and_zero() -> None:
    t = pa.table({"a": pa.array([decimal.Decimal("7.25"), decimal.Decimal("-7.25"), None],
                                pa.decimal128(10, 2)),
                  "b": pa.array([decimal.Decimal("2.0"), decimal.Decimal("2.0"),
                                 decimal.Decimal("1.0")], pa.decimal128(5, 1))})
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", t)
    got = [r["m"] for r in s.sql("SELECT MOD(a, b) AS m FROM t").collect().to_pylist()]
    assert got == [decimal.Decimal("1.25"), decimal.Decimal("-1.25"), None]
    with pytest.raises(SqlEngineError, match="division by zero"):
        s.sql("SELECT MOD(a, b - b) AS m FROM t").collect()
