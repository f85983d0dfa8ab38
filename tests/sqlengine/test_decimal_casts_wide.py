"""CASTs to DECIMAL at the edges of its 38 digits, and LISTAGG(DISTINCT x, sep), which Flink
2.3 runs and we refused (expected values: PyFlink's): a 38-digit text read with a rounding
digit overflowed 38 digits ("Rescaling Decimal value would cause data loss"); an INT into
DECIMAL(38, 37) wanted room for every INT (47 digits); the separator of LISTAGG(DISTINCT ...)
was read as a second argument."""

from __future__ import annotations

from decimal import Decimal

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _row(sql: str) -> tuple[object, ...]:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    return tuple(s.sql(sql).collect().to_pylist()[0].values())


def test_wide_decimals_as_flink() -> None:
    assert _row("SELECT CAST('99999999999999999999999999999999999999' AS DECIMAL(38, 0)), "
                "CAST(2 AS DECIMAL(38, 37)), CAST('1.5' AS DECIMAL(38, 37)), "
                "CAST(20 AS DECIMAL(38, 37)), CAST(-7 AS DECIMAL(3, 2))") == (
        Decimal("99999999999999999999999999999999999999"),
        Decimal("2.0000000000000000000000000000000000000"),
        Decimal("1.5000000000000000000000000000000000000"), None, Decimal("-7.00"))


def test_out_of_range_text() -> None:
    assert _row("SELECT TRY_CAST('999999999999999999999999999999999999999' AS DECIMAL(38, 0)), "
                "TRY_CAST('1.255' AS DECIMAL(4, 2))") == (None, Decimal("1.26"))
    with pytest.raises(SqlEngineError, match="out of its range"):
        _row("SELECT CAST('999999999999999999999999999999999999999' AS DECIMAL(38, 0))")


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_listagg_distinct_with_a_separator(mode: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    got = s.sql("SELECT LISTAGG(DISTINCT h, '-') AS l FROM (VALUES ('a'), ('b'), ('a'), "
                "(CAST(NULL AS STRING))) AS v(h)").collect().to_pylist()
    assert got == [{"l": "a-b"}]
