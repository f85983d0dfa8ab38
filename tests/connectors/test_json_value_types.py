"""The json format reads a value whose JSON type is not its column's as Flink 2.3's does
(compared in PyFlink): a STRING column takes any value as its JSON text, a number or BOOLEAN
column a string holding one; a string that holds none names its line, value and column."""

from __future__ import annotations

import json
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
