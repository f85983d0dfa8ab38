"""DECIMAL(38, s) operands whose exact results pass 38 digits, against PyFlink 2.3's answers
for the same csv rows: ``b * b`` of a DECIMAL(38, 37) failed ("Decimal precision out of range
[1, 76]: 77") and of 0 with "Python int too large to convert to C long"; DECIMAL(38, 18)
beside DECIMAL(38, 0) in =, IN, COALESCE, CASE and GREATEST failed with Arrow's "Rescaling
Decimal value would cause data loss" (their common type was DECIMAL(38, 6), Flink's is
DECIMAL(38, 0)); CEIL / FLOOR of a DECIMAL(38, 37) whose result needs one more integral digit
was 0 (9.5 -> 0, Flink 10)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine

NINES = "-" + "9" * 38


@pytest.fixture
def session(tmp_path: Path) -> sqlengine.Session:
    return make_session(tmp_path, {})


def make_session(tmp_path: Path, options: dict[str, str]) -> sqlengine.Session:
    """A session with table t of the two rows (``options`` beside batch mode)."""
    (tmp_path / "d.csv").write_text(f"1.5,0,1.5,{NINES},9.5,-9.5,5\n0,0,0,1,0.5,0,7\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch", **options})
    s.execute(f"CREATE TABLE t (b DECIMAL(38, 37), z DECIMAL(38, 37), c DECIMAL(38, 18), "
              f"n DECIMAL(38, 0), y DECIMAL(38, 37), x DECIMAL(38, 37), e DECIMAL(5, 0)) WITH "
              f"('connector' = 'filesystem', 'path' = '{tmp_path / 'd.csv'}', 'format' = 'csv')")
    return s


# (PyFlink 2.3, batch mode, the same rows)
CASES = [
    ("b * b", [Decimal("2.25000000000000000000000000000000000"), Decimal("0E-35")]),
    ("z * z", [Decimal("0E-35"), Decimal("0E-35")]),
    ("n * n", [None, Decimal("1")]),
    ("c * n", [None, Decimal("0.000000")]),
    ("c = n", [False, False]),
    ("c IN (n, 1)", [False, False]),
    ("COALESCE(c, n)", [Decimal("2"), Decimal("0")]),
    ("CASE WHEN e > 6 THEN c ELSE n END", [Decimal(NINES), Decimal("0")]),
    ("GREATEST(c, n)", [Decimal("2"), Decimal("1")]),
    ("CEIL(y)", [Decimal("10"), Decimal("1")]),
    ("FLOOR(x)", [Decimal("-10"), Decimal("0")]),
    ("c + n", [None, Decimal("1.000000")]),
]


@pytest.mark.parametrize(("expr", "want"), CASES)
def test_as_pyflink(session: sqlengine.Session, expr: str, want: list[object]) -> None:
    got = session.sql(f"SELECT {expr} AS v FROM t").collect().column("v").to_pylist()
    assert got == want
    assert [str(v) for v in got] == [str(v) for v in want]  # (the scale too)


def test_an_exact_comparison_where_flinks_common_type_rounds(session: sqlengine.Session
                                                             ) -> None:
    # (Flink compares in the common DECIMAL(38, 0): 1.5 = 2 would be TRUE; compared exactly)
    got = session.sql("SELECT c = CAST(2 AS DECIMAL(38, 0)) AS a, c < CAST(2 AS DECIMAL(38, 0))"
                      " AS b FROM t").collect().to_pylist()
    assert got == [{"a": False, "b": True}, {"a": False, "b": True}]


def test_a_product_past_76_digits_keeps_all_its_digits(tmp_path: Path) -> None:
    # (its digits went through Python's default 28-digit context: 1.2345678901234567890123456789
    # 012345678 squared came out 1.52415787532388367504953515600000000; the exact square is
    # 1.5241578753238836750495351562566681942..., rounded HALF_UP to 35 digits)
    x = "1.2345678901234567890123456789012345678"
    (tmp_path / "x.csv").write_text(f"{x}\n-{x}\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE x (b DECIMAL(38, 37)) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'x.csv'}', 'format' = 'csv')")
    got = s.sql("SELECT b * b AS v FROM x").collect().column("v").to_pylist()
    assert [str(v) for v in got] == ["1.52415787532388367504953515625666819"] * 2
