"""FLOOR / CEIL(t TO unit) of TIMESTAMP and DATE columns against PyFlink 2.3's answers for the
same SQL: DECADE / CENTURY / MILLENNIUM (they were refused; decades start in years ...0,
centuries and millennia in years ...01, and CEIL is the FLOOR plus the unit even on a
boundary, as Flink's), and CEIL of a value already on a YEAR / QUARTER / MONTH boundary, which
stays (Arrow's ceil gave the next one: CEIL(TIMESTAMP '2024-01-01 00:00:00' TO YEAR) was
2025-01-01).

Left different on purpose, where Flink 2.3 is inconsistent with itself: it gives 2024-07-01
for CEIL(TIMESTAMP '2024-04-01 00:00:00' TO QUARTER) (but keeps 2024-01-01), 2024-05-01 for
CEIL(TIMESTAMP '2024-05-01 00:00:00.001' TO MONTH) (ignoring the time of day) and the next
day for CEIL(DATE d TO DAY); here those are 2024-04-01, 2024-06-01 and d."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

TS = ["2024-05-17 13:45:12", "2020-01-01 00:00:00", "2000-06-01 00:00:00",
      "2001-01-01 00:00:00", "1999-12-31 23:59:59", "1969-07-20 20:17:00"]
# (PyFlink 2.3: FLOOR / CEIL TO DECADE, CENTURY, MILLENNIUM per row of TS)
LONG_UNITS = [
    ("2020-01-01", "2030-01-01", "2001-01-01", "2101-01-01", "2001-01-01", "3001-01-01"),
    ("2020-01-01", "2030-01-01", "2001-01-01", "2101-01-01", "2001-01-01", "3001-01-01"),
    ("2000-01-01", "2010-01-01", "1901-01-01", "2001-01-01", "1001-01-01", "2001-01-01"),
    ("2000-01-01", "2010-01-01", "2001-01-01", "2101-01-01", "2001-01-01", "3001-01-01"),
    ("1990-01-01", "2000-01-01", "1901-01-01", "2001-01-01", "1001-01-01", "2001-01-01"),
    ("1960-01-01", "1970-01-01", "1901-01-01", "2001-01-01", "1001-01-01", "2001-01-01"),
]
_LONG = ", ".join(f"{f}(x TO {u})" for u in ("DECADE", "CENTURY", "MILLENNIUM")
                  for f in ("FLOOR", "CEIL"))


def _rows(sql: str) -> list[tuple[str, ...]]:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    return [tuple(str(v) for v in r.values()) for r in s.sql(sql).collect().to_pylist()]


def test_decade_century_millennium_of_timestamps() -> None:
    values = ", ".join(f"(TIMESTAMP '{t}')" for t in TS)
    got = _rows(f"SELECT {_LONG} FROM (VALUES {values}) AS t(x)")
    assert got == [tuple(f"{d} 00:00:00" for d in row) for row in LONG_UNITS]


def test_decade_century_millennium_of_dates() -> None:
    values = ", ".join(f"(DATE '{t[:10]}')" for t in TS)
    got = _rows(f"SELECT {_LONG} FROM (VALUES {values}) AS t(x)")
    assert got == LONG_UNITS


def test_ceil_on_a_boundary_stays() -> None:
    got = _rows("SELECT CEIL(x TO YEAR), CEIL(x TO QUARTER), CEIL(x TO MONTH), "
                "CEIL(x TO WEEK), CEIL(x TO DAY), CEIL(x TO HOUR) FROM (VALUES "
                "(TIMESTAMP '2024-01-01 00:00:00'), (TIMESTAMP '2024-01-07 00:00:00'), "
                "(TIMESTAMP '2024-05-01 00:00:00'), (TIMESTAMP '2024-12-31 23:59:59')) AS t(x)")
    assert got == [  # (PyFlink 2.3's answers)
        ("2024-01-01 00:00:00",) * 3 + ("2024-01-07 00:00:00",) + ("2024-01-01 00:00:00",) * 2,
        ("2025-01-01 00:00:00", "2024-04-01 00:00:00", "2024-02-01 00:00:00") +
        ("2024-01-07 00:00:00",) * 3,
        ("2025-01-01 00:00:00", "2024-07-01 00:00:00", "2024-05-01 00:00:00",
         "2024-05-05 00:00:00", "2024-05-01 00:00:00", "2024-05-01 00:00:00"),
        ("2025-01-01 00:00:00",) * 3 + ("2025-01-05 00:00:00",) + ("2025-01-01 00:00:00",) * 2,
    ]
    dates = _rows("SELECT CEIL(x TO YEAR), CEIL(x TO MONTH), CEIL(x TO WEEK) FROM (VALUES "
                  "(DATE '2024-01-01'), (DATE '2024-05-02')) AS t(x)")
    assert dates == [("2024-01-01", "2024-01-01", "2024-01-07"),
                     ("2025-01-01", "2024-06-01", "2024-05-05")]


def test_long_units_need_a_date_or_timestamp() -> None:
    with pytest.raises(SqlEngineError, match=r"FLOOR\(\.\.\. TO DECADE\) takes a DATE or"):
        _rows("SELECT FLOOR(TIME '10:00:00' TO DECADE)")
