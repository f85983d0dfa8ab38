"""A parquet or orc file read as declared types narrower than the file's: the values that fit
are read, the first that does not is an error naming the file, column and value, as the csv
and json readers refuse '3000000000' for an INT. A SQL CAST wrapped or cut them silently
(3000000000 as INT was -1294967296, 1.9 as BIGINT 1, 123456.50 as DECIMAL(5, 2) NULL)."""

from __future__ import annotations

import decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import ConnectorError

D = decimal.Decimal
FILE = pa.table({
    "big": pa.array([1, 3000000000, None], pa.int64()),
    "small": pa.array([1, -2, 3], pa.int64()),
    "d": pa.array([1.9, 2.0, None], pa.float64()),
    "whole": pa.array([1.0, -2.0, 3.0], pa.float64()),
    "m": pa.array([D("1.25"), D("123456.50"), None], pa.decimal128(10, 2)),
})


def _read(tmp_path: Path, fmt: str, column: str) -> list[object]:
    path = tmp_path / f"f.{fmt}"
    if not path.exists():
        (pq.write_table if fmt == "parquet" else orc.write_table)(FILE, path)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t ({column}) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = '{fmt}')")
    return s.sql("SELECT * FROM t").collect().column(0).to_pylist()


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize(("column", "message"), [
    ("big INT", "the file's BIGINT value 3000000000 does not fit the table's INT"),
    ("big DECIMAL(5, 0)", "the file's BIGINT value 3000000000 does not fit the table's "
                          "DECIMAL(5, 0)"),
    ("d BIGINT", "the file's DOUBLE value 1.9 does not fit the table's BIGINT"),
    ("m DECIMAL(5, 2)", "the file's DECIMAL(10, 2) value Decimal('123456.50') does not fit "
                        "the table's DECIMAL(5, 2)"),
    ("m DECIMAL(10, 1)", "the file's DECIMAL(10, 2) value Decimal('1.25') does not fit the "
                         "table's DECIMAL(10, 1)"),
    ("m INT", "the file's DECIMAL(10, 2) value Decimal('1.25') does not fit the table's INT"),
])
def test_a_value_the_declared_type_does_not_hold_is_an_error(tmp_path: Path, fmt: str,
                                                             column: str, message: str) -> None:
    with pytest.raises(ConnectorError, match=rf"f\.{fmt}: column '{column.split()[0]}': "
                                             + message.replace("(", r"\(").replace(")", r"\)")):
        _read(tmp_path, fmt, column)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
@pytest.mark.parametrize(("column", "values"), [
    ("big BIGINT", [1, 3000000000, None]),
    ("small TINYINT", [1, -2, 3]),
    ("small DECIMAL(3, 0)", [D(1), D(-2), D(3)]),
    ("whole INT", [1, -2, 3]),
    ("m DECIMAL(12, 3)", [D("1.250"), D("123456.500"), None]),
])
def test_values_that_fit_are_read(tmp_path: Path, fmt: str, column: str,
                                  values: list[object]) -> None:
    assert _read(tmp_path, fmt, column) == values


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_columns_match_the_files_in_another_case(tmp_path: Path, fmt: str) -> None:
    # (a parquet file's ID read as NULLs for a table's id without a word; orc refused it)
    path = tmp_path / f"f.{fmt}"
    table = pa.table({"ID": [1, 2], "Name": ["a", "b"], "name2": ["x", "y"]})
    (pq.write_table if fmt == "parquet" else orc.write_table)(table, path)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (id BIGINT, name STRING, NAME2 STRING) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}')")
    assert s.sql("SELECT * FROM t").collect().to_pylist() == [
        {"id": 1, "name": "a", "NAME2": "x"}, {"id": 2, "name": "b", "NAME2": "y"}]
    assert s.sql("SELECT name FROM t WHERE id = 2").collect().to_pylist() == [{"name": "b"}]
