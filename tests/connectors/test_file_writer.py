"""The filesystem connector's file sink (filesystem_files.py, csv_format.py): part files, csv
quoting, json text."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors.csv_format import csv_text
from sqlengine.connectors.filesystem_files import FileWriter, sink_path_ok
from sqlengine.errors import ConnectorError


def test_csv_text_quotes_only_where_needed() -> None:
    cols = [pa.array(["a", "b,c", None]), pa.array(['x"y', "z", "w"])]
    assert csv_text(cols) == 'a,"x""y"\n"b,c",z\n,w\n'
    assert csv_text(cols, delim=";", null="NULL") == 'a;"x""y"\nb,c;z\nNULL;w\n'
    assert csv_text([]) == ""
    assert csv_text([pa.array([], pa.string())]) == ""


def test_csv_part_files_and_overwrite(tmp_path: Path) -> None:
    schema = pa.schema([("a", pa.int64()), ("s", pa.string())])
    batch = pa.record_batch([pa.array([1, 2]), pa.array(["x", None])], schema=schema)
    opts = {"path": str(tmp_path / "out"), "format": "csv", "csv.null-literal": "N"}
    for _ in range(2):
        w = FileWriter("t", opts, schema, overwrite=False)
        w.write(batch)
        w.end_input()
        w.close()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["part-0-0", "part-0-1"]
    w = FileWriter("t", opts, schema, overwrite=True)
    w.write(batch)
    w.end_input()
    w.close()
    # (OVERWRITE's part never takes an old part's name: another subtask removing the old one
    # by name removed the new one too, at times every row of a parallel INSERT OVERWRITE)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["part-0-2"]
    assert (tmp_path / "out" / "part-0-2").read_text() == "1,x\n2,N\n"
    assert (w.name, w.rows) == ("FileSink", 2)


def test_json_writes_temporal_values_as_sql_text(tmp_path: Path) -> None:
    schema = pa.schema([("ts", pa.timestamp("ms")), ("n", pa.int32())])
    w = FileWriter("t", {"path": str(tmp_path / "j"), "format": "json"}, schema, False)
    w.write(pa.record_batch([pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5)],
                                      pa.timestamp("ms")), pa.array([7], pa.int64())],
                            names=["ts", "n"]))  # (cast to the sink's schema)
    w.end_input()
    w.close()
    line = (tmp_path / "j" / "part-0-0").read_text().splitlines()[0]
    # (as Flink's json format writes it: no fraction of zeros, compact, PyFlink 2.3)
    assert line == '{"ts":"2024-01-02 03:04:05","n":7}'


def test_sink_path_ok(tmp_path: Path) -> None:
    sink_path_ok({"path": str(tmp_path / "new" / "dir")})
    (tmp_path / "f").write_text("")
    with pytest.raises(ConnectorError, match="is a file, not a directory"):
        sink_path_ok({"path": str(tmp_path / "f" / "x")})


def test_csv_bytes_quotes_as_flinks_csv_format() -> None:
    from sqlengine.connectors.csv_format import csv_bytes

    batch = pa.record_batch({
        "n": pa.array([1, None, -3]), "s": pa.array(["x,y", None, 'q"r']),
        "l": pa.array(["a", "b", "c"], pa.large_string()),
        "t": pa.array([0, 1500, None], pa.timestamp("ms"))})
    # (as PyFlink 2.3 writes them: a value holding a character below the delimiter and the
    # quote character, a timestamp's space, is quoted; the fraction's trailing zeros cut)
    assert csv_bytes(batch, {}) == (b'1,"x,y",a,"1970-01-01 00:00:00"\n'
                                    b',,b,"1970-01-01 00:00:01.5"\n-3,"q""r",c,\n')
    # '-' as the delimiter: negative numbers and dates hold it, so they are quoted.
    assert csv_bytes(batch.slice(1), {"csv.field-delimiter": "-",
                                      "csv.null-literal": "N"}) == (
        b'N-N-b-"1970-01-01 00:00:01.5"\n"-3"-"q""r"-c-N\n')
    assert csv_bytes(batch.slice(0, 0), {}) == b""


@pytest.mark.parametrize("options", [
    {}, {"csv.null-literal": "N"}, {"csv.field-delimiter": "-"},
    {"csv.field-delimiter": "\x02", "csv.quote-character": "\x01"},
    {"csv.quote-character": ":"}, {"csv.quote-character": "'", "csv.escape-character": "2"},
    {"csv.disable-quote-character": "true"}])
def test_repeated_times_are_written_as_each_row_alone(options: dict[str, str]) -> None:
    """A batch of few distinct times (window bounds) is written once per distinct value, and
    a timestamp quoted without a look at each value: the bytes are those of the times' texts
    (made a row at a time) written as strings, quoted by what they hold, whatever the
    delimiter, quote and escape."""
    from sqlengine.connectors.csv_format import _ltz_text, _time_text, csv_bytes

    n = 300
    ticks = [None if i % 7 == 3 else (i % 5) * 86_400_123 - 2_000_000 for i in range(n)]
    batch = pa.record_batch({
        "k": pa.array(range(n)),
        "ts": pa.array(ticks, pa.timestamp("ms")),
        "ltz": pa.array(ticks, pa.timestamp("ms", tz="UTC")),
        "ts6": pa.array([None if t is None else t * 1000 + 120 for t in ticks],
                        pa.timestamp("us")),
        "t": pa.array([None if t is None else t % 86_400_000 for t in ticks], pa.time32("ms")),
        "s": pa.array([f"a b{i % 3}" for i in range(n)])})
    whole = csv_bytes(batch, options)
    texts = pa.record_batch(
        [col if name in ("k", "s") else pa.concat_arrays(
            [(_ltz_text if name == "ltz" else _time_text)(col.slice(i, 1)) for i in range(n)])
         for name, col in zip(batch.schema.names, batch.columns)], names=batch.schema.names)
    assert whole == csv_bytes(texts, options)
    assert len(set(whole.split(b"\n"))) == n + 1  # (the k column keeps rows apart)
    if not options:
        assert whole.split(b"\n")[:2] == [
            b'0,"1969-12-31 23:26:40","1969-12-31 23:26:40Z","1969-12-31 23:26:40.00012",'
            b'23:26:40,"a b0"',
            b'1,"1970-01-01 23:26:40.123","1970-01-01 23:26:40.123Z",'
            b'"1970-01-01 23:26:40.12312",23:26:40.123,"a b1"']


def test_a_relative_path_reaches_spark_resolved_against_our_working_directory(
        tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from sqlengine.connectors.filesystem import spark_path

    monkeypatch.chdir(tmp_path)
    assert spark_path("out/x") == str(tmp_path / "out" / "x")
    assert spark_path("/data/t") == "/data/t"
    for uri in ("file:/data/t", "hdfs://nn:8020/t", "s3a://bucket/t"):
        assert spark_path(uri) == uri


def test_json_lines_are_the_text_flinks_json_format_writes(tmp_path: Path) -> None:
    """The lines PyFlink 2.3 writes for these values (its DECIMAL text, 12.5 for 12.500, is
    not copied: the value's own digits are written)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE j (a DOUBLE, b FLOAT, d TIMESTAMP(3), e TIMESTAMP_LTZ(3), "
              f"k TIMESTAMP(6), n ARRAY<INT>, r ROW<x INT, y STRING>) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'j'}', 'format' = 'json')")
    s.execute("INSERT INTO j VALUES (1.0E-5, CAST(1.5 AS FLOAT), TIMESTAMP '2023-01-02 "
              "10:00:00.120', TO_TIMESTAMP_LTZ(1672653600123, 3), TIMESTAMP '2023-01-02 "
              "10:00:00.123456', ARRAY[1, 2], ROW(1, 'z')), (1.0E20, CAST(-0.0 AS FLOAT), "
              "TIMESTAMP '2023-01-02 10:00:00', TO_TIMESTAMP_LTZ(0, 3), TIMESTAMP "
              "'2023-01-02 10:00:00', ARRAY[CAST(NULL AS INT)], ROW(CAST(NULL AS INT), "
              "CAST(NULL AS STRING)))")
    text = "".join(p.read_text() for p in sorted((tmp_path / "j").glob("part-*")))
    assert text.splitlines() == [
        '{"a":1.0E-5,"b":1.5,"d":"2023-01-02 10:00:00.12","e":"2023-01-02 10:00:00.123Z",'
        '"k":"2023-01-02 10:00:00.123456","n":[1,2],"r":{"x":1,"y":"z"}}',
        '{"a":1.0E20,"b":0.0,"d":"2023-01-02 10:00:00","e":"1970-01-01 00:00:00Z",'
        '"k":"2023-01-02 10:00:00","n":[null],"r":{"x":null,"y":null}}']


def test_json_doubles_inside_arrays_rows_and_maps_as_flinks(tmp_path: Path) -> None:
    """The line PyFlink 2.3 writes for these nested values: doubles as Java prints them inside
    an ARRAY, a ROW and a MAP too (they were Python's text: 1e-05, 1e+20)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE o (a ARRAY<DOUBLE>, r ROW<f DOUBLE, g FLOAT, s STRING, n INT>, "
              f"m MAP<STRING, DOUBLE>, x ARRAY<ROW<q DOUBLE>>) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'o'}', 'format' = 'json')")
    s.execute("INSERT INTO o SELECT ARRAY[1.0E-5, 2.0E0, 1.0E20, CAST(NULL AS DOUBLE)], "
              "ROW(3.0E0, CAST(0.1 AS FLOAT), 'a\"b', 7), MAP['k', 1.0E-7, 'z', 123.5E0], "
              "ARRAY[ROW(1.0E0)]")
    text = "".join(p.read_text() for p in sorted((tmp_path / "o").glob("part-*")))
    assert text.splitlines() == [
        '{"a":[1.0E-5,2.0,1.0E20,null],"r":{"f":3.0,"g":0.1,"s":"a\\"b","n":7},'
        '"m":{"k":1.0E-7,"z":123.5},"x":[{"q":1.0}]}']


def test_a_failed_write_publishes_no_part(tmp_path: Path) -> None:
    """A writer closed before its input ended (the job failed or was cancelled) leaves no
    visible part: it left a half-written (or, for orc, empty and unreadable) part-0-0 that
    every later read of the table met."""
    schema = pa.schema([("a", pa.int64())])
    opts = {"path": str(tmp_path / "out"), "format": "csv"}
    w = FileWriter("t", opts, schema, overwrite=False)
    w.write(pa.record_batch([pa.array([1, 2])], schema=schema))
    w.close()
    assert list((tmp_path / "out").iterdir()) == []


def test_a_failed_insert_keeps_the_table_readable(tmp_path: Path) -> None:
    import sqlengine
    from sqlengine.errors import SqlEngineError

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE n (a INT, b STRING NOT NULL) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'n'}', 'format' = 'csv')")
    s.execute("INSERT INTO n VALUES (1, 'x')")
    # (Flink's table.exec.sink.not-null-enforcer = ERROR, naming the column; it was a raw
    # "Casting field 'b' with null values to non-nullable")
    with pytest.raises(SqlEngineError, match="column 'b' of table 'n' is NOT NULL"):
        s.execute("INSERT INTO n SELECT * FROM (VALUES (2, 'y'), (3, CAST(NULL AS STRING))) "
                  "AS t(a, b)")
    assert s.sql("SELECT * FROM n").collect().to_pylist() == [{"a": 1, "b": "x"}]
    assert sorted(p.name for p in (tmp_path / "n").iterdir()) == ["part-0-0"]


def test_csv_without_quoting_writes_values_as_they_are(tmp_path: Path) -> None:
    """'csv.disable-quote-character' = 'true' on write: PyFlink 2.3 writes each value as it
    is (`x|y"z'w,v,1`); here it was quoted as if the option were not there."""
    schema = pa.schema([("a", pa.string()), ("b", pa.int32())])
    opts = {"path": str(tmp_path / "out"), "format": "csv",
            "csv.disable-quote-character": "true"}
    w = FileWriter("t", opts, schema, overwrite=False)
    w.write(pa.record_batch([pa.array(["x|y\"z'w,v", "plain"]), pa.array([1, 3], pa.int32())],
                            schema=schema))
    w.end_input()
    w.close()
    assert (tmp_path / "out" / "part-0-0").read_text() == "x|y\"z'w,v,1\nplain,3\n"


def test_times_in_csv_as_flink(tmp_path: Path) -> None:
    """PyFlink 2.3's csv file for these rows, byte for byte: TIMESTAMP and TIME without their
    fraction's trailing zeros, TIMESTAMP_LTZ in UTC with a space and 'Z' (it was written with
    a 'T', which Flink cannot read), quoted where they hold a space."""
    import sqlengine

    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE o (ts TIMESTAMP(3), l TIMESTAMP_LTZ(3), t TIME(3), "
              f"ts6 TIMESTAMP(6)) WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
              "'format' = 'csv')")
    s.execute("INSERT INTO o VALUES (TIMESTAMP '2024-01-01 10:00:00.100', "
              "TO_TIMESTAMP_LTZ(1704103200123, 3), TIME '10:00:00.100', "
              "CAST('2024-01-01 10:00:00.120000' AS TIMESTAMP(6))), (TIMESTAMP '1900-01-01 "
              "00:00:00', TO_TIMESTAMP_LTZ(0, 3), TIME '10:00:00', CAST('2024-01-01 10:00:00' "
              "AS TIMESTAMP(6)))")
    assert (tmp_path / "part-0-0").read_text() == (
        '"2024-01-01 10:00:00.1","2024-01-01 10:00:00.123Z",10:00:00.1,'
        '"2024-01-01 10:00:00.12"\n'
        '"1900-01-01 00:00:00","1970-01-01 00:00:00Z",10:00:00,"2024-01-01 10:00:00"\n')
    assert len(s.sql("SELECT * FROM o").collect()) == 2


def _written(tmp_path: Path, name: str, options: str, fmt: str = "csv") -> str:
    """The file PyFlink 2.3's rows of test_numbers_and_escapes_as_flink write."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE {name} (d DECIMAL(10, 2), e DECIMAL(20, 10), f DOUBLE, i INT, "
              f"b BOOLEAN, s STRING, t TIME(3)) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / name}', 'format' = '{fmt}'{options})")
    s.execute(f"INSERT INTO {name} VALUES "
              "(100.00, 0.0000000100, 1.5e0, 1, TRUE, 'a', TIME '01:02:03.400'), "
              "(1.50, 120, CAST('NaN' AS DOUBLE), -1, FALSE, 'x;y', TIME '00:00:00'), "
              "(0.00, 0, 1e20, 0, TRUE, 'C:\\temp\\new', TIME '10:00:00.001'), "
              "(-3.00, 0.0000012345, 0.1e0, 5, TRUE, 'a\"b', TIME '10:00:00')")
    text = "".join(p.read_text() for p in sorted((tmp_path / name).iterdir()))
    back = s.sql(f"SELECT * FROM {name}").collect().to_pylist()
    assert [r["d"] for r in back] == [Decimal("100.00"), Decimal("1.50"), Decimal("0.00"),
                                      Decimal("-3.00")]
    assert [r["s"] for r in back] == ["a", "x;y", "C:\\temp\\new", 'a"b']
    return text


def test_numbers_and_escapes_as_flink(tmp_path: Path) -> None:
    """The texts PyFlink 2.3 writes for the same rows: a DECIMAL is Jackson's number of its
    BigDecimal without trailing zeros ('1E+2', '0', '1.2E+2', '1E-8'; all its digits with
    'json.encode.decimal-as-plain-number'), numbers and booleans are never quoted (a ';'
    delimiter quoted them), the escape character is doubled in a quoted value (it was
    written as it is, and read back as an escape: 'C:\\temp\\new' came back 'C:tempnew'),
    a json TIME has no trailing zeros. Each file reads back as written."""
    assert _written(tmp_path, "c", "") == (
        '1E+2,1E-8,1.5,1,true,a,01:02:03.4\n'
        '1.5,1.2E+2,NaN,-1,false,x;y,00:00:00\n'
        '0,0,1.0E20,0,true,"C:\\temp\\new",10:00:00.001\n'
        '-3,0.0000012345,0.1,5,true,"a""b",10:00:00\n')
    assert _written(tmp_path, "c2", ", 'csv.field-delimiter' = ';', "
                                    "'csv.escape-character' = '\\'") == (
        '1E+2;1E-8;1.5;1;true;a;"01:02:03.4"\n'
        '1.5;1.2E+2;NaN;-1;false;"x;y";"00:00:00"\n'
        '0;0;1.0E20;0;true;"C:\\\\temp\\\\new";"10:00:00.001"\n'
        '-3;0.0000012345;0.1;5;true;"a""b";"10:00:00"\n')
    assert _written(tmp_path, "j", "", "json").splitlines()[:2] == [
        '{"d":1E+2,"e":1E-8,"f":1.5,"i":1,"b":true,"s":"a","t":"01:02:03.4"}',
        '{"d":1.5,"e":1.2E+2,"f":"NaN","i":-1,"b":false,"s":"x;y","t":"00:00:00"}']
    plain = _written(tmp_path, "j2", ", 'json.encode.decimal-as-plain-number' = 'true'",
                     "json")
    assert plain.splitlines()[1].startswith('{"d":1.50,"e":120.0000000000,')


@pytest.mark.parametrize("iso", [False, True])
def test_repeated_times_in_json_are_written_as_each_row_alone(iso: bool) -> None:
    """Times made once per distinct value (a batch of few distinct ones) are the texts each
    row gets alone."""
    from sqlengine.connectors.json_format import json_bytes

    n = 300
    ticks = [None if i % 7 == 3 else (i % 5) * 86_400_123 - 2_000_000 for i in range(n)]
    batch = pa.record_batch({
        "k": pa.array(range(n)), "ts": pa.array(ticks, pa.timestamp("ms")),
        "ltz": pa.array(ticks, pa.timestamp("ms", tz="UTC")),
        "t": pa.array([None if t is None else t % 86_400_000 for t in ticks], pa.time32("ms"))})
    whole = json_bytes(batch, iso=iso)
    assert whole == b"".join(json_bytes(batch.slice(i, 1), iso=iso) for i in range(n))
    assert b'"ts":"1970-01-01%s23:26:40.123"' % (b"T" if iso else b" ") in whole
