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


def test_a_decimal_with_blanks_around_is_named_as_flinks_fails(tmp_path: Path) -> None:
    """Flink's csv format reads a DECIMAL with Java's new BigDecimal(text), which takes no
    blanks (PyFlink 2.3: NumberFormatException); it failed here with Arrow's message, no file
    or line. Under ignore-parse-errors the value is NULL, as Flink's."""
    path = tmp_path / "d.csv"
    path.write_text("1,2.5\n2, 2.5 \n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE d (id INT, v DECIMAL(5, 2)) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match=r"d\.csv:2: .*' 2\.5 ' is not a valid DECIMAL"):
        s.sql("SELECT v FROM d").collect()
    s.execute("ALTER TABLE d SET ('csv.ignore-parse-errors' = 'true')")
    assert s.sql("SELECT id, v FROM d").collect().to_pylist() == [
        {"id": 1, "v": Decimal("2.50")}, {"id": 2, "v": None}]


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
    # (sorted: at parallelism 2 the file's parts are read side by side)
    assert sorted(s.sql("SELECT v FROM a").collect().column(0).to_pylist()) == \
        ["", "", "x", "y"]
    assert sorted(s.sql("SELECT v FROM n").collect().column(0).to_pylist(),
                  key=lambda v: (v is None, v or 0)) == [1, 3, None]


def test_bytes_booleans_and_nan_are_written_as_flink(tmp_path: Path) -> None:
    """PyFlink 2.3's files: BYTES as base64 in csv and json (csv wrote the raw bytes, and
    failed on a byte that is no UTF-8; json failed on every BYTES value), BOOLEAN as 'true'
    in csv (it was 'TRUE'), a DOUBLE NaN / -Infinity in json as a string (a bare NaN is no
    JSON: Flink refused the file). Each reads back as written."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    for fmt in ("csv", "json"):
        s.execute(f"CREATE TABLE {fmt}_t (k INT, v BYTES, b BOOLEAN, d DOUBLE) WITH "
                  f"('connector' = 'filesystem', 'path' = '{tmp_path / fmt}', "
                  f"'format' = '{fmt}')")
        s.execute(f"INSERT INTO {fmt}_t VALUES (1, X'00FF10', TRUE, CAST('NaN' AS DOUBLE)), "
                  f"(2, CAST('a b' AS BYTES), FALSE, CAST('-Infinity' AS DOUBLE))")
        rows = s.sql(f"SELECT k, v, b, CAST(d AS STRING) AS d FROM {fmt}_t").collect()
        assert sorted(tuple(r.values()) for r in rows.to_pylist()) == [
            (1, b"\x00\xff\x10", True, "NaN"), (2, b"a b", False, "-Infinity")]
    assert (tmp_path / "csv" / "part-0-0").read_text() == \
        "1,AP8Q,true,NaN\n2,YSBi,false,-Infinity\n"
    assert (tmp_path / "json" / "part-0-0").read_text() == \
        ('{"k":1,"v":"AP8Q","b":true,"d":"NaN"}\n'
         '{"k":2,"v":"YSBi","b":false,"d":"-Infinity"}\n')
    (tmp_path / "bad.csv").write_text("1,not base64!\n")
    s.execute(f"CREATE TABLE bad (k INT, v BYTES) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'bad.csv'}', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match=r"bad.csv:1: .*'not base64!' is not a valid "
                                             r"base64 BYTES"):
        s.sql("SELECT * FROM bad").collect()


def test_missing_fields_of_a_short_row_are_null(tmp_path: Path) -> None:
    """Under 'csv.ignore-parse-errors' a row with too few fields keeps them NULL (PyFlink
    2.3: '2' into (i INT, s STRING) is (2, NULL)); they were read as ''."""
    (tmp_path / "s.csv").write_text("1,a\n2\n3,c\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (i INT, s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 's.csv'}', 'format' = 'csv', "
              "'csv.ignore-parse-errors' = 'true')")
    assert s.sql("SELECT i, s FROM t").collect().to_pylist() == [
        {"i": 1, "s": "a"}, {"i": 2, "s": None}, {"i": 3, "s": "c"}]


def test_a_trailing_delimiter_is_read_without_its_empty_field(tmp_path: Path) -> None:
    """PyFlink 2.3 reads '1,a,' into (i INT, s STRING) as (1, 'a') and fails on '1,a,,';
    here both failed ("Expected 2 columns, got 3")."""
    (tmp_path / "t.csv").write_text("1,a,\n2,b\n3,c,\n")
    (tmp_path / "u.csv").write_text("1,a,,\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    for name in ("t", "u"):
        s.execute(f"CREATE TABLE {name} (i INT, s STRING) WITH ('connector' = 'filesystem', "
                  f"'path' = '{tmp_path / (name + '.csv')}', 'format' = 'csv')")
    assert s.sql("SELECT i, s FROM t").collect().to_pylist() == [
        {"i": 1, "s": "a"}, {"i": 2, "s": "b"}, {"i": 3, "s": "c"}]
    with pytest.raises(SqlEngineError, match=r"u.csv:1: .*Expected 2 columns, got 4"):
        s.sql("SELECT * FROM u").collect()


def test_nested_nan_and_infinities_are_written_as_strings(tmp_path: Path) -> None:
    """NaN and the infinities inside ARRAY / ROW / MAP values are json strings, as PyFlink
    2.3 writes them ('"ad":["NaN","Infinity"]', '"rd":{"v":"-Infinity"}'; they were bare
    tokens, no JSON, and the file did not read back). The file reads back as written."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE j (d DOUBLE, f DOUBLE, ad ARRAY<DOUBLE>, rd ROW<v DOUBLE>, "
              "md MAP<STRING, DOUBLE>) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'j'}', 'format' = 'json')")
    s.execute("INSERT INTO j SELECT CAST('NaN' AS DOUBLE), CAST('-Infinity' AS DOUBLE), "
              "ARRAY[CAST('NaN' AS DOUBLE), CAST('Infinity' AS DOUBLE), 1.5E0], "
              "ROW(CAST('-Infinity' AS DOUBLE)), MAP['k', CAST('NaN' AS DOUBLE)]")
    assert (tmp_path / "j" / "part-0-0").read_text() == (
        '{"d":"NaN","f":"-Infinity","ad":["NaN","Infinity",1.5],"rd":{"v":"-Infinity"},'
        '"md":{"k":"NaN"}}\n')
    got = s.sql("SELECT CAST(d AS STRING) AS d, CAST(f AS STRING) AS f, "
                "CAST(ad AS STRING) AS ad, CAST(rd.v AS STRING) AS v, "
                "CAST(md['k'] AS STRING) AS m FROM j").collect().to_pylist()
    assert got == [{"d": "NaN", "f": "-Infinity", "ad": "[NaN, Infinity, 1.5]",
                    "v": "-Infinity", "m": "NaN"}]
