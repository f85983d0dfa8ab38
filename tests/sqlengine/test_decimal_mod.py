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


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_integer_mod_is_of_the_divisors_type(mode: str) -> None:
    """PyFlink 2.3's TYPEOF: MOD(BIGINT, INT) is INT NOT NULL, MOD(INT, BIGINT) BIGINT,
    MOD(SMALLINT, INT) INT; % too. It was the wider type (a BIGINT), so
    LPAD(s, CHAR_LENGTH(s) + MOD(id, 4), '.') over a BIGINT id was refused."""
    s = sqlengine.connect({"execution.runtime-mode": mode})
    got = s.sql("SELECT MOD(CAST(9000000000 AS BIGINT), 7) AS a, MOD(7, CAST(4 AS BIGINT)) AS b, "
                "CAST(9000000000 AS BIGINT) % 7 AS c, MOD(CAST(-9000000001 AS BIGINT), "
                "CAST(4 AS SMALLINT)) AS d, MOD(CAST(7 AS SMALLINT), 4) AS e").collect()
    assert [f.type for f in got.schema] == [pa.int32(), pa.int64(), pa.int32(), pa.int16(),
                                            pa.int32()]
    assert got.to_pylist() == [{"a": 5, "b": 3, "c": 5, "d": -1, "e": 3}]
