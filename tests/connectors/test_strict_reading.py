"""A value that does not read as its column's type is a bad row (an error naming file:line, the
column and the value, or with '<format>.ignore-parse-errors' a NULL, as Flink), never a
silent NULL or an out-of-range value: on main INT 99999999999, TINYINT 300, TIMESTAMP
2020-02-30 and 2020-01-01T10:00:00 read as NULL with nothing skipped, and DECIMAL(5, 2) kept
123456.79."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import ConnectorError

COLUMNS = "id INT, i INT, ti TINYINT, ts TIMESTAMP(3), d DECIMAL(5, 2)"
GOOD = "2,5,3,2020-01-01 00:00:00,1.25"


def _session(path: Path, fmt: str, ignore: bool, columns: str = COLUMNS) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = '{fmt}', '{fmt}.ignore-parse-errors' = "
              f"'{str(ignore).lower()}')")
    return s


@pytest.mark.parametrize(("row", "column", "value"), [
    ("1,99999999999,3,2020-01-01 00:00:00,1.25", "i", "99999999999"),
    ("1,5,300,2020-01-01 00:00:00,1.25", "ti", "300"),
    ("1,5,3,2020-02-30 00:00:00,1.25", "ts", "2020-02-30 00:00:00"),
    ("1,5,3,2020-01-01T10:00:00,1.25", "ts", "2020-01-01T10:00:00"),
    ("1,5,3,2020-01-01 00:00:00,123456.789", "d", "123456.789"),
    ("1,5,3,2020-01-01 00:00:00,-1000", "d", "-1000"),
])
def test_csv_values_out_of_their_type(tmp_path: Path, row: str, column: str,
                                      value: str) -> None:
    f = tmp_path / "t.csv"
    f.write_text(f"{GOOD}\n{row}\n")
    with pytest.raises(ConnectorError) as info:
        _session(f, "csv", False).sql("SELECT * FROM t").collect()
    assert f"{f}:2:" in info.value.message
    assert f"column {column!r}: {value!r} is not a valid" in info.value.message
    # Ignoring parse errors, the value is NULL and its row stays (Flink's csv format).
    q = _session(f, "csv", True).sql(f"SELECT id, {column} FROM t")
    got = {r["id"]: r[column] for r in q.collect().to_pylist()}
    assert set(got) == {1, 2} and got[1] is None and got[2] is not None
    assert q.skipped_rows == 0
    # Read without the bad column, the row is whole (Flink's csv decodes projected fields).
    kept = _session(f, "csv", True).sql(
        f"SELECT id FROM t WHERE {'i > 0' if column != 'i' else 'ti > 0'}")
    assert sorted(kept.collect().column(0).to_pylist()) == [1, 2]
    assert kept.skipped_rows == 0


def test_json_impossible_date(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text('{"id": 2, "ts": "2020-01-01 00:00:00"}\n{"id": 1, "ts": "2020-02-30 00:00:00"}\n')
    with pytest.raises(ConnectorError, match="column 'ts': '2020-02-30 00:00:00' is not a valid"):
        _session(f, "json", False, "id INT, ts TIMESTAMP(3)").sql("SELECT * FROM t").collect()
    q = _session(f, "json", True, "id INT, ts TIMESTAMP(3)").sql("SELECT id, ts FROM t")
    assert [r["id"] for r in q.collect().to_pylist()] == [2, 1] and q.skipped_rows == 0
    assert q.collect().to_pylist()[1]["ts"] is None


def test_decimal_rounds_to_its_scale_as_flink(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("1,5,3,2020-01-01 00:00:00,1.239\n1,5,3,2020-01-01 00:00:00,999.99\n")
    got = _session(f, "csv", False).sql("SELECT d FROM t").collect().column(0).to_pylist()
    assert [str(v) for v in got] == ["1.24", "999.99"]


def test_csv_converts_only_the_columns_a_query_reads(tmp_path: Path) -> None:
    # As Flink's csv format with projection push-down: a value of a column the query does not
    # read is not decoded, so it is not an error; read, it is.
    f = tmp_path / "t.csv"
    f.write_text(f"{GOOD}\n1,oops,3,2020-01-01 00:00:00,1.25\n")
    s = _session(f, "csv", False)
    assert s.sql("SELECT id, d FROM t").collect().column(0).to_pylist() == [2, 1]
    with pytest.raises(ConnectorError, match="column 'i': 'oops' is not a valid INT"):
        s.sql("SELECT id, i FROM t").collect()


@pytest.mark.parametrize("text", ["null\n", '{"a":1,"b":"x"}\nnull\n{"a":2,"b":"y"}\n'])
def test_a_json_null_line_is_not_a_row(tmp_path: Path, text: str) -> None:
    """A line of JSON null was a row of NULLs (Arrow's reader), and as the first line it
    crashed the process (a segmentation fault in pyarrow's read_json). Flink's format fails
    on it, or skips it with 'json.ignore-parse-errors'."""
    f = tmp_path / "t.json"
    f.write_text(text)
    with pytest.raises(ConnectorError, match=r"t\.json:\d: cannot parse JSON row: not a JSON "):
        _session(f, "json", False, "a INT, b STRING").sql("SELECT * FROM t").collect()
    got = _session(f, "json", True, "a INT, b STRING").sql("SELECT * FROM t").collect()
    assert got.to_pylist() == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}][:got.num_rows]
    assert got.num_rows == text.count("{")


def test_a_json_value_not_an_object_is_no_map(tmp_path: Path) -> None:
    """``{"mp": 5}`` into a MAP column was an empty map, without a word; Flink's format fails
    ("Fail to deserialize at field: mp"), or reads NULL with 'json.ignore-parse-errors'."""
    f = tmp_path / "t.json"
    f.write_text('{"id":1,"mp":5}\n{"id":2,"mp":{"k":3}}\n')
    columns = "id INT, mp MAP<STRING, INT>"
    with pytest.raises(ConnectorError, match=r"t\.json:1: .*'5' does not read as MAP"):
        _session(f, "json", False, columns).sql("SELECT * FROM t").collect()
    got = _session(f, "json", True, columns).sql("SELECT * FROM t").collect().to_pylist()
    assert got == [{"id": 1, "mp": None}, {"id": 2, "mp": [("k", 3)]}]


@pytest.mark.parametrize(("text", "line", "why", "kept"), [
    ('1,"abc\n2,x\n', 1, "a quoted field has no closing quote", []),
    ('1,a\n2,"abc\n', 2, "a quoted field has no closing quote", [(1, "a")]),
    ('1,a\n2,"ab"cd\n3,z\n', 2, "text after the closing quote", [(1, "a"), (3, "z")]),
])
def test_csv_broken_quotes_are_bad_rows(tmp_path: Path, text: str, line: int, why: str,
                                        kept: list[tuple[int, str]]) -> None:
    """A quoted field never closed swallowed the rest of the file into one value, and text
    after a closing quote joined the field ('"ab"cd' read 'abcd'), without a word. Flink's
    reader fails on both, or skips the record with ignore-parse-errors (PyFlink 2.3: the
    rows kept below)."""
    f = tmp_path / "t.csv"
    f.write_text(text)
    with pytest.raises(ConnectorError, match=rf"t\.csv:{line}: malformed CSV row: {why}"):
        _session(f, "csv", False, "id INT, s STRING").sql("SELECT * FROM t").collect()
    got = _session(f, "csv", True, "id INT, s STRING").sql("SELECT * FROM t").collect()
    assert [(r["id"], r["s"]) for r in got.to_pylist()] == kept


def test_csv_quotes_flink_reads(tmp_path: Path) -> None:
    """(PyFlink 2.3 reads these so: doubled quotes, a quoted newline and delimiter, a quote
    inside an unquoted field, an empty quoted field.)"""
    f = tmp_path / "t.csv"
    f.write_text('1,"a ""q"" b"\n2,"multi\nline"\n3,5" screen\n4,"x,""y"""\n5,""\n')
    got = _session(f, "csv", False, "id INT, s STRING").sql("SELECT * FROM t").collect()
    assert [r["s"] for r in got.to_pylist()] == ['a "q" b', "multi\nline", '5" screen',
                                                 'x,"y"', ""]


def test_an_empty_csv_bytes_field_is_empty_bytes(tmp_path: Path) -> None:
    """It was NULL; Flink's csv format reads the empty base64 text as b'' (PyFlink 2.3: b''
    for '1,' and '1,""' alike, as for a STRING's '')."""
    f = tmp_path / "t.csv"
    f.write_text('1,\n2,""\n3,AAE=\n')
    got = _session(f, "csv", False, "id INT, b BYTES").sql("SELECT * FROM t").collect()
    assert [r["b"] for r in got.to_pylist()] == [b"", b"", b"\x00\x01"]
