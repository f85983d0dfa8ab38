"""The csv format reads values as Flink 2.3's does (CsvToRowDataConverters, compared in
PyFlink on this file under 'csv.ignore-parse-errors'): BOOLEAN is Java's parseBoolean (any
text but 'true' is FALSE, never an error), INT a whole number, DOUBLE Java's parseDouble (a
'f' / 'd' suffix, NaN, Infinity), DATE / TIME / TIMESTAMP as strictly as Flink reads them.
One difference is kept: Flink reads 2023-02-30 as 2023-03-02 (java.sql.Date rolls over),
here it does not read as a DATE."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

ROWS = """\
1,2023-01-01 10:00:00,true, 12 ,150,5,2023-01-02,10:11:12,1.5
2,2023-01-01T10:00:00,TRUE,12.7,3.25,x,2023-1-2,10:11,2.5e3
3,2023-01-01 10:00:00.123456,1,2147483648,1e-3,,2023-01-02 ,25:00:00,NaN
4,2023-1-1 1:2:3,yes,-0,-0.0,"q,r",20230102,10:11:12.5,Infinity
5,2023-01-01 10:00,FALSE,+7,NaN,\\N,2023-02-30,1:2:3, 3
6, 2023-01-01 10:00:00,False,0x10,1.5d,"",0023-01-02,10:11:12 ,1.5f
"""
EXPECTED = {
    "ts": [dt.datetime(2023, 1, 1, 10), None, dt.datetime(2023, 1, 1, 10, 0, 0, 123000), None,
           None, dt.datetime(2023, 1, 1, 10)],
    "b": [True, True, False, False, False, False],
    "n": [12, None, None, 0, 7, None],
    "d": [Decimal("150.000"), Decimal("3.250"), Decimal("0.001"), Decimal("0.000"), None,
          None],
    "dt": [dt.date(2023, 1, 2), dt.date(2023, 1, 2), None, None, None, dt.date(23, 1, 2)],
    "t": [dt.time(10, 11, 12), dt.time(10, 11), None, dt.time(10, 11, 12), None, None],
}
TABLE = ("CREATE TABLE c (id INT, ts TIMESTAMP(3), b BOOLEAN, n INT, d DECIMAL(10, 3), "
         "s STRING, dt DATE, t TIME, f DOUBLE) WITH ('connector' = 'filesystem', "
         "'path' = '{path}', 'format' = 'csv', 'csv.null-literal' = '\\N'{more})")


def test_values_read_as_flinks_csv_format_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(ROWS)
    s = sqlengine.connect()
    s.execute(TABLE.format(path=path, more=", 'csv.ignore-parse-errors' = 'true'"))
    rows = s.sql("SELECT * FROM c").collect().to_pylist()
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5, 6]
    for name, want in EXPECTED.items():
        assert [r[name] for r in rows] == want, name
    f = [r["f"] for r in rows]
    assert f[:2] == [1.5, 2500.0] and math.isnan(f[2]) and f[3:] == [math.inf, 3.0, 1.5]


def test_a_boolean_never_fails_and_a_fraction_is_no_int(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text("1,yes\n2,1\n3,True\n")
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE b (id INT, v BOOLEAN) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    assert [r["v"] for r in s.sql("SELECT v FROM b").collect().to_pylist()] == \
        [False, False, True]
    path.write_text("1,12\n2,12.7\n")
    s.execute(f"CREATE TABLE i (id INT, v INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match=r"c\.csv:2\b.*12\.7"):
        s.sql("SELECT v FROM i").collect()


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_empty_lines_of_a_one_column_table_are_rows(tmp_path: Path, parallelism: str) -> None:
    """A one-column table's empty line is a row of '' (PyFlink 2.3 reads 'x', '', '', 'y';
    the lines were skipped, so a table written with '' and NULL lost those rows)."""
    (tmp_path / "one.csv").write_text("x\n\n\ny\n")
    (tmp_path / "int.csv").write_text("1\n\n3\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": parallelism})
    s.execute(f"CREATE TABLE a (v STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'one.csv'}', 'format' = 'csv')")
    s.execute(f"CREATE TABLE n (v INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'int.csv'}', 'format' = 'csv', "
              "'csv.ignore-parse-errors' = 'true')")
    assert s.sql("SELECT v FROM a").collect().column(0).to_pylist() == ["x", "", "", "y"]
    assert s.sql("SELECT v FROM n").collect().column(0).to_pylist() == [1, None, 3]
