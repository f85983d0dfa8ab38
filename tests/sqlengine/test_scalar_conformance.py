"""Scalar forms that followed Flink 2.3 only after its conformance run (tests/conformance):
result types of FLOAT arithmetic and of FLOOR / CEIL / SIGN over DECIMAL (values checked with
DuckDB), the ROW constructor ``(a, b)``, row IN lists (three-valued, as PostgreSQL), and
CURRENT_CATALOG / CURRENT_DATABASE."""

from __future__ import annotations

import decimal
import math

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import BindError

D = decimal.Decimal


def _one(sql: str, session: sqlengine.Session | None = None) -> tuple[pa.Schema, dict]:
    s = session or sqlengine.connect({"execution.runtime-mode": "batch"})
    q = s.sql(sql)
    rows = q.collect().to_pylist()
    assert len(rows) == 1
    return q.schema, rows[0]


def test_float_with_an_integer_stays_float_with_a_decimal_is_double() -> None:
    # Flink 2.3's TYPEOF: FLOAT + INT is FLOAT; FLOAT * DECIMAL is DOUBLE (it was FLOAT here),
    # the decimal read exactly and the float widened (PyFlink: 3.1f + 3.10 is
    # 6.199999904632568, 3.1f * 0.1 is 0.3099999904632569).
    schema, row = _one("SELECT CAST(1.5 AS FLOAT) + 1 AS a, CAST(1.5 AS FLOAT) * 2.5 AS b, "
                       "CAST(1.5 AS FLOAT) + 1.5E0 AS c, CAST(3.1 AS FLOAT) + "
                       "CAST(3.10 AS DECIMAL(10, 2)) AS d, CAST(3.1 AS FLOAT) * 0.1 AS e")
    assert [f.type for f in schema] == [pa.float32(), pa.float64(), pa.float64(),
                                        pa.float64(), pa.float64()]
    assert row == {"a": 2.5, "b": 3.75, "c": 3.0, "d": 6.199999904632568,
                   "e": 0.3099999904632569}


@pytest.mark.parametrize("value", ["1.25", "-1.25", "99.5", "-99.5", "0.0", "-0.05"])
def test_floor_ceil_sign_of_decimals_match_duckdb(value: str) -> None:
    scale = 2 if abs(D(value)) < 10 else 1
    expr = f"CAST({value} AS DECIMAL(3, {scale}))"
    schema, row = _one(f"SELECT FLOOR({expr}) AS f, CEIL({expr}) AS c, SIGN({expr}) AS s")
    assert schema.field("f").type == pa.decimal128(3, 0)  # Flink keeps the precision
    assert schema.field("c").type == pa.decimal128(3, 0)
    assert schema.field("s").type == pa.decimal128(3, scale)  # SIGN: the input's type
    f, c, s = duckdb.sql(f"SELECT FLOOR({expr}), CEIL({expr}), SIGN({expr})").fetchone()
    assert (row["f"], row["c"], row["s"]) == (D(f), D(c), D(s))


def test_row_constructor() -> None:
    schema, row = _one("SELECT (1, 'a') AS r")
    assert pa.types.is_struct(schema.field("r").type)
    assert row == {"r": {"EXPR$0": 1, "EXPR$1": "a"}}


def test_row_in_list_is_three_valued() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    got = s.sql("SELECT x, y, (x, y) IN ((1, 2), (3, CAST(NULL AS INT))) AS a, "
                "(x, y) NOT IN ((1, 2)) AS b FROM (VALUES (1, 2), (3, 4), (5, 6), "
                "(3, CAST(NULL AS INT))) AS t(x, y)").collect().to_pylist()
    by_row = {(r["x"], r["y"]): (r["a"], r["b"]) for r in got}
    # (3, 4) = (3, NULL) is UNKNOWN, so IN is UNKNOWN (PostgreSQL agrees).
    assert by_row == {(1, 2): (True, False), (3, 4): (None, True), (5, 6): (False, True),
                      (3, None): (None, True)}
    with pytest.raises(BindError, match="rows of 2 values"):
        s.sql("SELECT (1, 2) IN ((1, 2, 3))").collect()


def test_current_catalog_and_database_follow_use() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    assert _one("SELECT CURRENT_CATALOG() AS c, CURRENT_DATABASE() AS d", s)[1] == \
        {"c": "default_catalog", "d": "default_database"}
    s.execute("CREATE DATABASE other")
    s.execute("USE other")
    assert _one("SELECT CURRENT_DATABASE() AS d", s)[1] == {"d": "other"}


def test_simple_case_with_several_values_in_a_when() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = s.sql("SELECT x, CASE x WHEN 1 THEN 'one' WHEN 2, 3 THEN 'two-three' ELSE 'other' "
                "END AS c FROM (VALUES (1), (2), (3), (4), (CAST(NULL AS INT))) AS t(x)"
                ).collect().to_pylist()
    assert {r["x"]: r["c"] for r in got} == {1: "one", 2: "two-three", 3: "two-three",
                                             4: "other", None: "other"}


def test_cast_row_to_row_is_by_position() -> None:
    schema, row = _one("SELECT CAST(ROW(1, ROW(2, 3)) AS ROW<a BIGINT, b ROW<c INT, d "
                       "STRING>>) AS n, CAST((1, 'x') AS ROW(p INT, q STRING)) AS m")
    assert schema.field("n").type == pa.struct([
        ("a", pa.int64()), ("b", pa.struct([("c", pa.int32()), ("d", pa.string())]))])
    assert row == {"n": {"a": 1, "b": {"c": 2, "d": "3"}}, "m": {"p": 1, "q": "x"}}
    fields = _one("SELECT r.x, r.y FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) "
                  "AS r) AS t")[1]
    assert fields == {"x": 1, "y": "a"}


def test_unhex_as_flink() -> None:
    """Flink 2.3's answers (PyFlink): digit pairs from the end; an odd first digit is checked
    and dropped, its byte left 0; a non-hex character gives NULL."""
    _, row = _one("SELECT UNHEX('414243') AS a, UNHEX('123') AS b, UNHEX('zz') AS c, "
                  "UNHEX('') AS d, UNHEX('g12') AS e, UNHEX(CAST(NULL AS STRING)) AS f, "
                  "HEX(UNHEX('0AFF')) AS g")
    assert row == {"a": b"ABC", "b": b"\x00#", "c": None, "d": b"", "e": None, "f": None,
                   "g": "0AFF"}


def test_sign_of_a_double_keeps_a_zeros_sign() -> None:
    # Java's Math.signum, as PyFlink 2.3: SIGN(-v * 0.0E0) is -0.0 ('-0.0' as text); NaN
    # stays NaN. Arrow's sign gave 0.0.
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"i": [0, 1, 2, 3, 4], "x": [-0.0, 0.0, -2.5, 3.0, float("nan")]}))
    rows = s.sql("SELECT i, SIGN(x) AS s, CAST(SIGN(x) AS STRING) AS t FROM t").collect()
    got = sorted(rows.to_pylist(), key=lambda r: r["i"])
    assert [r["t"] for r in got] == ["-0.0", "0.0", "-1.0", "1.0", "NaN"]
    assert [math.copysign(1, r["s"]) for r in got[:2]] == [-1.0, 1.0]
