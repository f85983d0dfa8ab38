"""Text files a careless producer writes (issue 15): invalid UTF-8, DECIMAL values past a
float's precision, line breaks inside quoted csv fields. On main invalid UTF-8 in json raised
a raw UnicodeDecodeError (and was kept as U+FFFD with ignore-parse-errors), csv could not skip
it, the json sink wrote DECIMAL as a float and could not read its own output back, and an
error after a quoted line break named the wrong line."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import ConnectorError


def _table(path: Path, fmt: str, columns: str, ignore: bool = False) -> sqlengine.Session:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = '{fmt}', '{fmt}.ignore-parse-errors' = "
              f"'{str(ignore).lower()}')")
    return s


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_invalid_utf8_is_located_or_skipped(tmp_path: Path, fmt: str) -> None:
    path = tmp_path / f"t.{fmt}"
    rows = [b"1,ok", b"2,bad \xff\xfe", b"3,fine"] if fmt == "csv" else \
        [b'{"a": 1, "s": "ok"}', b'{"a": 2, "s": "bad \xff\xfe"}', b'{"a": 3, "s": "fine"}']
    path.write_bytes(b"\n".join(rows) + b"\n")
    column = 7 if fmt == "csv" else 20
    with pytest.raises(ConnectorError, match=rf"t\.{fmt}:2:{column}: invalid UTF-8 \(byte 0xff\)"):
        _table(path, fmt, "a INT, s STRING").sql("SELECT * FROM t").collect()
    q = _table(path, fmt, "a INT, s STRING", ignore=True).sql("SELECT * FROM t")
    assert q.collect().to_pylist() == [{"a": 1, "s": "ok"}, {"a": 3, "s": "fine"}]
    assert q.skipped_rows == 1


def test_invalid_utf8_line_of_a_one_column_csv_is_skipped_not_read_as_empty(
        tmp_path: Path) -> None:
    """A skipped line is no row; a blank line of a one-column table is the value '' (the
    skipped line was read as '' too)."""
    path = tmp_path / "t.csv"
    path.write_bytes(b"ok\nbad \xff\nfine\n\nlast\n")
    q = _table(path, "csv", "s STRING", ignore=True).sql("SELECT * FROM t")
    assert q.collect().column(0).to_pylist() == ["ok", "fine", "", "last"]
    assert q.skipped_rows == 1


def test_json_sink_round_trips_every_type_exactly(tmp_path: Path) -> None:
    s = sqlengine.connect()
    cols = ("i INT, b BIGINT, f DOUBLE, ok BOOLEAN, s STRING, d DECIMAL(20, 4), "
            "e DECIMAL(38, 10), day DATE, ts TIMESTAMP(3)")
    s.execute(f"CREATE TABLE o ({cols}) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path}/o', 'format' = 'json')")
    s.execute("""INSERT INTO o VALUES
        (1, 9007199254740993, 0.1, TRUE, 'quote " and é', CAST('1234567890123456.1234' AS
         DECIMAL(20, 4)), CAST('1234567890123456789012.0123456789' AS DECIMAL(38, 10)),
         DATE '2024-02-29', TIMESTAMP '2024-01-01 10:00:00.123'),
        (NULL, NULL, NULL, NULL, NULL, NULL, CAST('-0.0000000001' AS DECIMAL(38, 10)), NULL,
         NULL)""")
    back = s.sql("SELECT * FROM o ORDER BY i NULLS LAST").collect().to_pylist()
    assert back == [
        {"i": 1, "b": 9007199254740993, "f": 0.1, "ok": True, "s": 'quote " and é',
         "d": Decimal("1234567890123456.1234"),
         "e": Decimal("1234567890123456789012.0123456789"), "day": dt.date(2024, 2, 29),
         "ts": dt.datetime(2024, 1, 1, 10, 0, 0, 123000)},
        {"i": None, "b": None, "f": None, "ok": None, "s": None, "d": None,
         "e": Decimal("-0.0000000001"), "day": None, "ts": None}]


def test_json_decimals_read_exactly_and_rounded_to_their_scale(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text('{"v": 1.235}\n{"v": -1.235}\n{"v": "999.994"}\n{"v": 12345678.5}\n')
    with pytest.raises(ConnectorError, match="d.json:4: .*column 'v': '12345678.5' is not a "
                                             r"valid DECIMAL\(5, 2\)"):
        _table(path, "json", "v DECIMAL(5, 2)").sql("SELECT * FROM t").collect()
    # (ignoring parse errors, the value is NULL and its row stays: Flink's json format)
    q = _table(path, "json", "v DECIMAL(5, 2)", ignore=True).sql("SELECT * FROM t")
    assert [str(r["v"]) for r in q.collect().to_pylist()] == ["1.24", "-1.24", "999.99", "None"]
    assert q.skipped_rows == 0


def test_a_bad_record_after_a_quoted_line_break_names_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    path.write_text('1,"two\nlines",5\n2,"ok",notanint\n')
    with pytest.raises(ConnectorError, match=r"q\.csv:3: .*'notanint' is not a valid INT"):
        _table(path, "csv", "a INT, s STRING, b INT").sql("SELECT * FROM t").collect()


def test_json_with_one_percent_bad_lines_keeps_every_good_one(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    quoted_x = '"x"'
    lines = [f'{{"id": {i}, "v": {quoted_x if i % 97 == 5 else i}}}' for i in range(5000)]
    lines[1234] = '{"id": 1234, "v": '  # truncated
    path.write_text("\n".join(lines) + "\n")
    q = _table(path, "json", "id INT, v INT", ignore=True).sql("SELECT id, v FROM t")
    got = [(r["id"], r["v"]) for r in q.collect().to_pylist()]
    # A value its column cannot hold is NULL (Flink's json format); a line that is no JSON
    # object is skipped and counted.
    assert got == [(i, None if i % 97 == 5 else i) for i in range(5000) if i != 1234]
    assert q.skipped_rows == 1


def test_json_key_given_twice_keeps_its_last_value_as_flink(tmp_path: Path) -> None:
    """PyFlink 2.3 (Jackson) reads {"id": 2, "id": 3} as id 3; the read failed here ("Column(/id)
    was specified twice in row 0")."""
    path = tmp_path / "t.json"
    path.write_text('{"id": 1, "v": "a"}\n{"id": 2, "id": 3}\n')
    q = _table(path, "json", "id INT, v STRING").sql("SELECT * FROM t")
    assert q.collect().to_pylist() == [{"id": 1, "v": "a"}, {"id": 3, "v": None}]


def test_a_csv_record_longer_than_arrows_block_is_read(tmp_path: Path) -> None:
    """A line of 3 MB (Arrow's csv reader parses 1 MB blocks) failed with Arrow's 'straddling
    object straddles two block boundaries' and no line; it is read whole now."""
    path = tmp_path / "long.csv"
    path.write_text("1," + "x" * 3_000_000 + '\n2,b\n3,"' + "y\n" * 1_000_000 + '"\n')
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (i INT, s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    got = s.sql("SELECT i, CHAR_LENGTH(s) AS n FROM t").collect().to_pylist()
    assert got == [{"i": 1, "n": 3_000_000}, {"i": 2, "n": 1}, {"i": 3, "n": 2_000_000}]


def test_a_fifo_as_path_is_named_as_such(tmp_path: Path) -> None:
    """A named pipe as 'path' was said not to exist."""
    import os

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (i INT) WITH ('connector' = 'filesystem', 'path' = '{fifo}', "
              "'format' = 'csv')")
    with pytest.raises(ConnectorError, match="is neither a file nor a directory"):
        s.sql("SELECT * FROM t").collect()


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_io_error_names_the_file(fmt: str) -> None:
    """Reading /proc/self/mem from its start fails with EIO: the error came as 'OSError:
    [Errno 5] Input/output error (in operator Source ...)' without the path."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE t (a STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '/proc/self/mem', 'format' = '{fmt}')")
    with pytest.raises(ConnectorError, match="/proc/self/mem: cannot read the file: "
                                             "Input/output error"):
        s.sql("SELECT * FROM t").collect()
