"""CAST and TRY_CAST of ARRAY, MAP and ROW values cast each element with CAST's own rules;
the expected values are PyFlink 2.3's (batch mode, printed with CAST(... AS STRING))."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.cast import cast_array
from sqlengine.errors import SqlEngineError


@pytest.mark.parametrize(("expr", "flink"), [
    ("CAST(ARRAY[1.5, 2.7] AS ARRAY<INT>)", "[1, 2]"),
    ("CAST(ARRAY[-1.5] AS ARRAY<BIGINT>)", "[-1]"),
    ("CAST(ARRAY[1.25] AS ARRAY<DECIMAL(5,1)>)", "[1.3]"),
    ("CAST(ARRAY['2024-01-01'] AS ARRAY<DATE>)", "[2024-01-01]"),
    ("CAST(ARRAY[1.9e0] AS ARRAY<INT>)", "[1]"),
    ("CAST(ARRAY[TRUE] AS ARRAY<INT>)", "[1]"),
    ("CAST(ARRAY[300] AS ARRAY<TINYINT>)", "[44]"),
    ("CAST(ROW(1.5, 'a') AS ROW<x INT, y STRING>)", "(1, a)"),
    ("CAST(MAP['a', 1.5] AS MAP<STRING, INT>)", "{a=1}"),
    ("CAST(MAP[1.5, 'a'] AS MAP<INT, STRING>)", "{1=a}"),
    ("CAST(ARRAY[ARRAY[1.5]] AS ARRAY<ARRAY<INT>>)", "[[1]]"),
    ("CAST(ARRAY[ROW(1.5)] AS ARRAY<ROW<x INT>>)", "[(1)]"),
    ("CAST(ARRAY[1, 2] AS ARRAY<DECIMAL(3,1)>)", "[1.0, 2.0]"),
    ("CAST(ARRAY[1.25e0] AS ARRAY<DECIMAL(3,1)>)", "[1.3]"),
    ("CAST(ARRAY['true', 'no'] AS ARRAY<BOOLEAN>)", "[TRUE, FALSE]"),
    ("CAST(ARRAY[' 12 '] AS ARRAY<INT>)", "[12]"),
    # TRY_CAST: one element that does not fit makes the whole value NULL
    ("TRY_CAST(ARRAY['1', 'x'] AS ARRAY<INT>)", None),
    ("TRY_CAST(MAP['a', 'x'] AS MAP<STRING, INT>)", None),
    ("TRY_CAST(ROW('1', 'x') AS ROW<a INT, b INT>)", None),
])
def test_nested_cast_as_flink(expr: str, flink: str | None) -> None:
    s = sqlengine.connect()
    got = s.sql(f"SELECT CAST({expr} AS STRING) AS v").collect().column("v").to_pylist()
    assert got == [flink]


def test_a_bad_element_names_its_value() -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match="'x'"):
        s.sql("SELECT CAST(ARRAY['1', 'x'] AS ARRAY<INT>)").collect()


def test_sliced_and_null_values_keep_their_rows() -> None:
    """A slice of a list / map / struct column (a batch cut from a bigger one) casts only its
    own elements and keeps its NULLs where they were."""
    lists = pa.array([[1.5], None, [2.5, -3.5], [], [None, 9.9]], pa.list_(pa.float64()))
    got = cast_array(lists.slice(1, 4), pa.list_(pa.int32()))
    assert got.to_pylist() == [None, [2, -3], [], [None, 9]]
    maps = pa.array([[("a", 1.5)], None, [("b", 2.5), ("c", None)]],
                    pa.map_(pa.string(), pa.float64()))
    got = cast_array(maps.slice(1), pa.map_(pa.string(), pa.int64()))
    assert got.to_pylist() == [None, [("b", 2), ("c", None)]]
    rows = pa.array([{"x": "1"}, None, {"x": "y"}, {"x": "3"}], pa.struct([("x", pa.string())]))
    got = cast_array(rows.slice(1), pa.struct([("n", pa.int32())]), safe=True)
    assert got.to_pylist() == [None, None, {"n": 3}]
    bad = pa.array([["1"], ["x", "2"], None, ["4"]], pa.list_(pa.string()))
    got = cast_array(bad.slice(1), pa.list_(pa.int32()), safe=True)
    assert got.to_pylist() == [None, None, [4]]


def test_nested_cast_over_a_table_column(tmp_path) -> None:
    import pyarrow.parquet as pq

    t = pa.table({"a": pa.array([[1.25, 2.75], None, [-0.5]], pa.list_(pa.float64()))})
    pq.write_table(t, tmp_path / "t.parquet")
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t (a ARRAY<DOUBLE>) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 't.parquet'}', 'format' = 'parquet')")
    got = s.sql("SELECT CAST(a AS ARRAY<DECIMAL(4, 1)>) AS d, CAST(a AS ARRAY<INT>) AS i "
                "FROM t").collect().to_pylist()
    import decimal as d

    assert got == [{"d": [d.Decimal("1.3"), d.Decimal("2.8")], "i": [1, 2]},
                   {"d": None, "i": None}, {"d": [d.Decimal("-0.5")], "i": [0]}]
