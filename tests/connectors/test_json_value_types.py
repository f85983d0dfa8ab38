"""The json format reads a value whose JSON type is not its column's as Flink 2.3's does
(compared in PyFlink): a STRING column takes any value as its JSON text, a number or BOOLEAN
column a string holding one; a string that holds none names its line, value and column."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

LINES = [
    {"id": 1, "price": 1.5, "tags": ["x", "y"], "addr": {"city": "P", "zip": 75},
     "flag": True, "big": 12345678901, "dd": 12.345},
    {"id": 2, "price": 2, "tags": [], "addr": None, "flag": False, "big": -1, "dd": "1.5"},
    {"id": 3, "price": "3.25", "tags": None, "addr": {"city": None}, "flag": "true",
     "big": 5, "dd": 7},
]


def _file(tmp_path: Path, lines: list[dict], repeat: int = 1) -> Path:
    path = tmp_path / "j.json"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) * repeat)
    return path


def test_string_columns_take_any_value_as_its_json_text(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE k (id STRING, price STRING, flag STRING, tags STRING, "
              f"addr STRING, dd STRING, big STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{_file(tmp_path, LINES)}', 'format' = 'json')")
    got = [tuple(r.values()) for r in s.sql("SELECT * FROM k").collect().to_pylist()]
    # (PyFlink 2.3's rows for the same file and table)
    assert got == [("1", "1.5", "true", '["x","y"]', '{"city":"P","zip":75}', "12.345",
                    "12345678901"),
                   ("2", "2", "false", "[]", None, "1.5", "-1"),
                   ("3", "3.25", "true", None, '{"city":null}', "7", "5")]


def test_a_number_read_as_a_string_keeps_its_text(tmp_path: Path) -> None:
    """Flink 2.3's json parser gives a number's text as written to a STRING, also in an
    ARRAY or ROW ('1e2' was '1E+2', '1.0e-5' '0.000010', '-0' '0'); PyFlink 2.3's rows for
    the same file and table."""
    path = tmp_path / "n.json"
    path.write_text('{"k":0,"s":1e2,"a":[1E2,-0],"r":{"x":1.0e-5}}\n'
                    '{"k":1,"s":-0,"a":[0.10],"r":{"x":-0}}\n'
                    '{"k":2,"s":1.5E+300,"a":[12345678901234567890123],"r":{"x":2.50}}\n')
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (k INT, s STRING, a ARRAY<STRING>, r ROW<x STRING>) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')")
    got = [tuple(r.values()) for r in s.sql("SELECT k, s, a, r.x FROM t").collect().to_pylist()]
    assert got == [(0, "1e2", ["1E2", "-0"], "1.0e-5"), (1, "-0", ["0.10"], "-0"),
                   (2, "1.5E+300", ["12345678901234567890123"], "2.50")]


def test_numbers_and_booleans_written_as_strings(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE j (id INT, price DOUBLE, flag BOOLEAN, big BIGINT, "
              f"dd DECIMAL(6, 2)) WITH ('connector' = 'filesystem', "
              f"'path' = '{_file(tmp_path, LINES, 700)}', 'format' = 'json')")
    got = s.sql("SELECT id, price, flag, big, dd FROM j").collect().to_pylist()
    assert len(got) == 2100
    assert [tuple(r.values()) for r in got[:3]] == [
        (1, 1.5, True, 12345678901, Decimal("12.35")), (2, 2.0, False, -1, Decimal("1.50")),
        (3, 3.25, True, 5, Decimal("7.00"))]


def test_a_string_that_is_no_number_names_its_line(tmp_path: Path) -> None:
    path = _file(tmp_path, [*LINES, {"id": 4, "price": "cheap"}])
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE j (id INT, price DOUBLE) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json')")
    with pytest.raises(SqlEngineError, match=r"j\.json:4: .*"):
        s.sql("SELECT * FROM j").collect()
    s.execute(f"CREATE TABLE skip (id INT, price DOUBLE) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json', 'json.ignore-parse-errors' = 'true')")
    # (ignoring parse errors: the price is NULL, the row stays, as Flink's json format)
    got = s.sql("SELECT id, price FROM skip").collect().to_pylist()
    assert [r["id"] for r in got] == [1, 2, 3, 4] and got[-1]["price"] is None


def test_map_columns_read_and_written(tmp_path: Path) -> None:
    """MAP<STRING, ...> columns of the json format (refused before): a JSON object's entries,
    read and written back as an object. The values are PyFlink 2.3's for the same file."""
    path = tmp_path / "m.json"
    path.write_text('{"id": 1, "attrs": {"k": "v", "n": "2"}, "counts": {"a": 1, "b": null}, '
                    '"nested": {"x": [1, 2]}}\n'
                    '{"id": 2, "attrs": {}, "counts": null, "nested": {}}\n'
                    '{"id": 3, "attrs": null, "counts": {"c": 7}}\n')
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE m (id INT, attrs MAP<STRING, STRING>, counts MAP<STRING, INT>, "
              f"nested MAP<STRING, ARRAY<INT>>) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json')")
    got = [tuple(r.values()) for r in s.sql(
        "SELECT id, attrs['k'], counts['a'], CARDINALITY(attrs), nested['x'] FROM m")
        .collect().to_pylist()]
    assert got == [(1, "v", 1, 2, [1, 2]), (2, None, None, 0, None),
                   (3, None, None, None, None)]
    pairs = s.sql("SELECT id, k, v FROM m CROSS JOIN UNNEST(counts) AS t(k, v)").collect()
    assert sorted(tuple(r.values()) for r in pairs.to_pylist()) == [
        (1, "a", 1), (1, "b", None), (3, "c", 7)]
    s.execute(f"CREATE TABLE out (id INT, counts MAP<STRING, INT>) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'out'}', 'format' = 'json')")
    s.execute("INSERT INTO out SELECT id, counts FROM m")
    written = [json.loads(line) for f in sorted((tmp_path / "out").rglob("*"))
               if f.is_file() for line in f.read_text().splitlines()]
    assert sorted(written, key=lambda r: r["id"]) == [
        {"id": 1, "counts": {"a": 1, "b": None}}, {"id": 2, "counts": None},
        {"id": 3, "counts": {"c": 7}}]
    back = s.sql("SELECT id, counts['a'], counts['c'] FROM out").collect().to_pylist()
    assert sorted(tuple(r.values()) for r in back) == [(1, 1, None), (2, None, None),
                                                        (3, None, 7)]


def test_a_map_value_of_the_wrong_type_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"id": 1, "counts": {"a": 1}}\n{"id": 2, "counts": {"a": "many"}}\n')
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE m (id INT, counts MAP<STRING, INT>) WITH ('connector' = "
              f"'filesystem', 'path' = '{path}', 'format' = 'json')")
    with pytest.raises(SqlEngineError, match=r"m\.json:2: cannot parse JSON row"):
        s.sql("SELECT * FROM m").collect()


# Values of the wrong JSON type, nested or not, under 'json.ignore-parse-errors': each
# column's values are PyFlink 2.3's for this file (its JsonToRowDataConverters NULL a value
# that does not convert at its own level, an ARRAY element or ROW field, never its row).
CONFLICTS = [
    '{"id": 1, "ts": "2023-01-01 10:00:00", "b": true, "n": "12", "d": 1.5e2, "s": 5, '
    '"arr": [1,2,null], "m": {"a": 1}, "r": {"x": 1, "y": "q"}, "dt": "2023-01-02", '
    '"t": "10:11:12"}',
    '{"id": 2, "ts": "2023-01-01T10:00:00", "b": "true", "n": 12.7, "d": "3.25", "s": true, '
    '"arr": [], "m": {}, "r": {"x": "7"}, "dt": "2023-1-2", "t": "10:11"}',
    '{"id": 3, "ts": "2023-01-01 10:00:00.123456", "b": 1, "n": 2147483648, "d": 1e-3, '
    '"s": {"k": 1}, "arr": null, "m": null, "r": null, "dt": null, "t": "25:00:00"}',
    '{"id": 4, "ts": 1672567200000, "b": "yes", "n": -0, "d": -0.0, "s": [1, "a"], '
    '"arr": ["3"], "m": {"z": "2"}, "r": {"y": 5}, "dt": "20230102", "t": null}',
    '{"id": 5, "ts": "2023-01-01 10:00", "b": "FALSE", "n": " 7 ", "d": "NaN", "s": "x\\ny", '
    '"arr": [1.5, "q"], "m": {"a": null}, "r": {}, "dt": "2023-01-02T00:00:00", "t": null}',
]
EXPECTED = {
    "ts": [dt.datetime(2023, 1, 1, 10), None, dt.datetime(2023, 1, 1, 10, 0, 0, 123000),
           None, None],
    "b": [True, True, False, False, False],
    "n": [12, 12, None, 0, 7],
    "d": [Decimal("150.000"), Decimal("3.250"), Decimal("0.001"), Decimal("0.000"), None],
    "s": ["5", "true", '{"k":1}', '[1,"a"]', "x\ny"],
    "arr": [[1, 2, None], [], None, [3], [1, None]],
    "m": [[("a", 1)], [], None, [("z", 2)], [("a", None)]],
    "r": [{"x": 1, "y": "q"}, {"x": 7, "y": None}, None, {"x": None, "y": "5"},
          {"x": None, "y": None}],
    "dt": [dt.date(2023, 1, 2), None, None, None, None],
    "t": [dt.time(10, 11, 12), None, None, None, None],
}
COLUMNS = ("ts TIMESTAMP(3), b BOOLEAN, n INT, d DECIMAL(10, 3), s STRING, arr ARRAY<INT>, "
           "m MAP<STRING, INT>, r ROW<x INT, y STRING>, dt DATE, t TIME")


@pytest.mark.parametrize("with_map", [True, False])
def test_values_that_do_not_convert_are_null_at_their_own_level(tmp_path: Path,
                                                                with_map: bool) -> None:
    path = tmp_path / "c.json"
    path.write_text("\n".join(CONFLICTS) + "\n")
    cols = COLUMNS if with_map else COLUMNS.replace("m MAP<STRING, INT>, ", "")
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE c (id INT, {cols}) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json', 'json.ignore-parse-errors' = 'true')")
    q = s.sql("SELECT * FROM c")
    rows = q.collect().to_pylist()
    assert [r["id"] for r in rows] == [1, 2, 3, 4, 5]  # (no row lost)
    for name, want in EXPECTED.items():
        if name == "m" and not with_map:
            continue
        assert [r[name] for r in rows] == want, name


@pytest.mark.parametrize(("value", "column", "shown"), [
    ('"abc"', "INT", "'abc'"), ('"12.5"', "BIGINT", "'12.5'"), ('"NaN"', "DECIMAL(5, 2)", "'NaN'"),
    ('["3", "x"]', "ARRAY<INT>", "'x'"), ('"2023-1-2"', "DATE", "2023-1-2"),
])
def test_without_ignore_a_value_that_does_not_convert_names_its_line(
        tmp_path: Path, value: str, column: str, shown: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"id": 1, "v": null}\n{"id": 2, "v": ' + value + '}\n')
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE c (id INT, v {column}) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json')")
    with pytest.raises(SqlEngineError, match=rf"bad\.json:2\b.*{re.escape(shown)}"):
        s.sql("SELECT * FROM c").collect()


def test_a_number_with_a_fraction_in_an_integer_column_is_cut(tmp_path: Path) -> None:
    """PyFlink 2.3 reads 1.5, 1e2 and -2.7 into an INT as 1, 100 and -2 (Jackson's asInt);
    here the file failed ("Failed to convert JSON to int32")."""
    (tmp_path / "j.json").write_text('{"a":1.5}\n{"a":1e2}\n{"a":-2.7}\n{"a":3}\n')
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'j.json'}', 'format' = 'json')")
    assert s.sql("SELECT a FROM t").collect().column(0).to_pylist() == [1, 100, -2, 3]


def test_a_line_holding_an_array_of_objects_is_one_row_each(tmp_path: Path) -> None:
    """PyFlink 2.3 reads each object of a top-level JSON array as a row; the line failed
    ("not a JSON object")."""
    (tmp_path / "j.json").write_text('[{"a":1,"b":"x"},{"a":2,"b":"y"}]\n{"a":3,"b":"z"}\n')
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE j (a INT, b STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'j.json'}', 'format' = 'json')")
    assert s.sql("SELECT a, b FROM j").collect().to_pylist() == [
        {"a": 1, "b": "x"}, {"a": 2, "b": "y"}, {"a": 3, "b": "z"}]


@pytest.mark.parametrize("connector", ["'connector' = 'filesystem', 'path' = '/tmp'",
                                       "'connector' = 'nats', 'subject' = 'x', 'stream' = 'y'"])
def test_fail_on_missing_field_with_ignore_parse_errors_is_refused(connector: str) -> None:
    # (both were taken; Flink refuses them together)
    s = sqlengine.connect()
    with pytest.raises(sqlengine.SqlEngineError, match=r"options 'json\.fail-on-missing-field' "
                       r"and 'json\.ignore-parse-errors' cannot both be 'true'"):
        s.execute(f"CREATE TABLE j (a INT) WITH ({connector}, 'format' = 'json', "
                  "'json.fail-on-missing-field' = 'true', 'json.ignore-parse-errors' = 'true')")
    s.execute(f"CREATE TABLE k (a INT) WITH ({connector}, 'format' = 'json', "
              "'json.fail-on-missing-field' = 'true', 'json.ignore-parse-errors' = 'false')")


def test_control_characters_are_written_as_jacksons_escapes(tmp_path: Path) -> None:
    """A control character in a written string: \\u001F, capital hex digits, as Flink's
    Jackson writes it (PyFlink 2.3 wrote exactly these bytes for the same INSERT); a
    backslash followed by 'u001f' stays as it is."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    out = tmp_path / "o"
    s.execute(f"CREATE TABLE o (a STRING, m MAP<STRING, STRING>) WITH ('connector' = "
              f"'filesystem', 'path' = '{out}', 'format' = 'json')")
    s.execute("INSERT INTO o SELECT CHR(31) || 'x' || CHR(10) || 'é/', MAP[CHR(1), CHR(127)]")
    s.execute("INSERT INTO o SELECT '\\u001f' || CHR(2), CAST(NULL AS MAP<STRING, STRING>)")
    lines = sorted(line for f in out.iterdir() if f.name.startswith("part-")
                   for line in f.read_text(encoding="utf-8").splitlines())
    assert lines == ['{"a":"\\\\u001f\\u0002","m":null}',
                     '{"a":"\\u001Fx\\né/","m":{"\\u0001":"\x7f"}}']
    # (read back as they were)
    got = {r["a"] for r in s.sql("SELECT a FROM o").collect().to_pylist()}
    assert got == {"\x1fx\né/", "\\u001f\x02"}


def test_a_wide_decimal_rounds_its_extra_digits(tmp_path: Path) -> None:
    """DECIMAL(38, 2) refused 1.005 ('requires scale 3': it was read as decimal128(38, 2))
    where Flink rounds it HALF_UP, as a narrower DECIMAL's values were."""
    texts = ["1.005", "-1.005", '"2.675"', "123456789012345678901234567890123456.784", "7"]
    path = tmp_path / "d.json"
    path.write_text("".join(f'{{"k":{i},"d":{t}}}\n' for i, t in enumerate(texts)))
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (k INT, d DECIMAL(38, 2)) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json')")
    got = [r["d"] for r in s.sql("SELECT k, d FROM t ORDER BY k").collect().to_pylist()]
    context = decimal.Context(prec=80, rounding=decimal.ROUND_HALF_UP)
    assert got == [Decimal(t.strip('"')).quantize(Decimal("0.01"), context=context)
                   for t in texts]


def test_a_number_past_a_doubles_range_is_infinite(tmp_path: Path) -> None:
    """1e400 failed the read ('Number too big to be stored in double'); Flink's json
    format reads it as Infinity (Jackson's getDoubleValue), as Python's float() does."""
    path = tmp_path / "x.json"
    path.write_text('{"k":1,"x":1e400}\n{"k":2,"x":-1e400}\n{"k":3,"x":1.5}\n')
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (k INT, x DOUBLE) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'json')")
    got = [r["x"] for r in s.sql("SELECT k, x FROM t ORDER BY k").collect().to_pylist()]
    assert got == [float("1e400"), float("-1e400"), 1.5]


@pytest.mark.parametrize("lines", [['{"k":1}', '{"k":2}{"k":3}', '{"k":4}'],
                                   ['{"k":1}', '{"k":', '2}', '{"k":4}'],
                                   ['{"k":1}', '{"k":2}{"k":3}', '{"k":', '2}', '{"k":4}']])
def test_a_line_is_one_object(tmp_path: Path, lines: list[str]) -> None:
    """A line of two objects gave two rows (Flink's format reads one object a line), and an
    object spread over lines was read (Flink's fails): a bad line is named now, or skipped
    under ignore-parse-errors (the third case's errors made the row count come out right)."""
    path = tmp_path / "l.json"
    path.write_text("\n".join(lines) + "\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (k INT) WITH ('connector' = 'filesystem', 'path' = '{path}', "
              "'format' = 'json')")
    with pytest.raises(SqlEngineError, match=r"l\.json:2: cannot parse JSON row"):
        s.sql("SELECT k FROM t").collect()
    s.execute("ALTER TABLE t SET ('json.ignore-parse-errors' = 'true')")
    assert [r["k"] for r in s.sql("SELECT k FROM t").collect().to_pylist()] == [1, 4]
