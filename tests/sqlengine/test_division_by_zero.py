"""NULL / 0 is NULL (Flink's generated code tests the operands for NULL before dividing; DuckDB
and Spark agree); a value divided by an integer or DECIMAL 0 fails. NULL / 0 failed with
"division by zero" as well."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

VIEW = ("CREATE TEMPORARY VIEW t AS SELECT * FROM (VALUES (CAST(NULL AS INT), "
        "CAST(NULL AS DECIMAL(5, 2))), (4, 1.50)) AS v(x, d)")


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_null_divided_by_zero_is_null(mode: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(VIEW)
    got = s.sql("SELECT x / 0 AS a, MOD(x, 0) AS m, d / 0 AS q, x % 0 AS r, "
                "CAST(x AS DOUBLE) / 0 AS f FROM t WHERE x IS NULL").collect().to_pylist()
    assert got == [{"a": None, "m": None, "q": None, "r": None, "f": None}]


@pytest.mark.parametrize("expr", ["x / 0", "d / 0", "MOD(x, 0)"])
def test_a_value_divided_by_zero_fails(expr: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    with pytest.raises(SqlEngineError, match="division by zero"):
        s.sql(f"SELECT {expr} FROM t").collect()
