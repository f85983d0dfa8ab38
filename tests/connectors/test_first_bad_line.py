"""A file with a bad value on one line and a line that is no row after it names the first:
the rows are parsed before their values are checked, so the later line was named (json,
debezium-json and csv; also for NATS messages, read by the same readers)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import ConnectorError

_DEBEZIUM = ('{"before":null,"after":{"id":1,"v":10},"op":"c"}\n'
             '{"before":null,"after":{"id":3,"v":30},"op":"x"}\n')


@pytest.mark.parametrize(("fmt", "columns", "good", "bad_value", "no_row", "why"), [
    ("json", "a DATE", '{"a": "2020-01-01"}\n', '{"a": "2020-13-45"}\n', "{garbage\n",
     "'2020-13-45' is not a valid DATE"),
    ("json", "a INT, m MAP<STRING, INT>", '{"a": 1, "m": {}}\n', '{"a": "x", "m": {}}\n',
     "[1\n", "'x'"),
    ("debezium-json", "id INT, v INT", _DEBEZIUM.splitlines(True)[0],
     _DEBEZIUM.splitlines(True)[1], "garbage\n", "unknown Debezium operation 'x'"),
    ("csv", "a INT, b STRING", "1,a\n", "x,b\n", "3,c,extra\n", "'x' is not a valid INT"),
    ("csv", "a INT, b STRING", "1,a\n", "x,b\n", '3,"c"d\n', "'x' is not a valid INT"),
])
def test_the_first_bad_line_is_named(tmp_path: Path, fmt: str, columns: str, good: str,
                                     bad_value: str, no_row: str, why: str) -> None:
    path = tmp_path / "data.txt"
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = '{fmt}')")
    path.write_text(good + bad_value + no_row)
    with pytest.raises(ConnectorError) as e:
        s.sql("SELECT * FROM t").collect()
    assert f"{path}:2: " in e.value.message and why in e.value.message
    # (the line that is no row is named when the lines before it are good)
    path.write_text(good + good + no_row)
    with pytest.raises(ConnectorError) as e:
        s.sql("SELECT * FROM t").collect()
    assert f"{path}:3: " in e.value.message
