"""A union of an input whose rows carry row watermarks (a table with a WATERMARK) and one
whose rows do not, or carry row kinds (a debezium changelog), shuffled at parallelism 2:
the exchange combined their batches into one and failed ("Schema at index 1 was different:
s: string, $wm: int64, $row_kind: int8 vs s: string, $row_kind: int8"). Rows as at
parallelism 1, which PyFlink 2.3 gave too."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine


@pytest.mark.parametrize("sql, expected", [
    ("SELECT s FROM d1 UNION SELECT s FROM r1", [("a",), ("b",), ("c",)]),
    ("SELECT DISTINCT s FROM (SELECT s FROM d1 UNION ALL SELECT s FROM r1)",
     [("a",), ("b",), ("c",)]),
    ("SELECT s, COUNT(*) AS n FROM (SELECT s FROM d1 UNION ALL SELECT s FROM r1) GROUP BY s",
     [("a", 2), ("b", 1), ("c", 2)]),
    ("SELECT s FROM r1 INTERSECT SELECT s FROM d1", [("a",), ("c",)]),
    ("SELECT s FROM r1 EXCEPT SELECT s FROM d1", []),
])
@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_union_of_a_watermarked_table_and_a_changelog(tmp_path: Path, parallelism: str,
                                                      sql: str, expected: list) -> None:
    (tmp_path / "r1.csv").write_text("1,10,a,2024-01-01 00:00:01\n"
                                     "2,20,c,2024-01-01 00:00:02\n")
    (tmp_path / "d1.json").write_text(
        '{"before":null,"after":{"k":1,"v":5,"s":"a"},"op":"c"}\n'
        '{"before":null,"after":{"k":2,"v":6,"s":"b"},"op":"c"}\n'
        '{"before":null,"after":{"k":3,"v":7,"s":"c"},"op":"c"}\n'
        '{"before":{"k":2,"v":6,"s":"b"},"after":{"k":2,"v":8,"s":"b"},"op":"u"}\n')
    s = sqlengine.connect({"parallelism.default": parallelism})
    s.execute(f"CREATE TABLE r1 (k INT, v INT, s STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS "
              f"ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path / 'r1.csv'}', 'format' = 'csv')")
    s.execute(f"CREATE TABLE d1 (k INT, v INT, s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'd1.json'}', 'format' = 'debezium-json')")
    got = sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())
    assert got == expected
