"""DATE_FORMAT's Java pattern letters against PyFlink 2.3's answers for the same SQL: the US
week fields Flink's JVM formats with ('w' week of the week-based year, 'Y' that year, 'W'
week of the month, 'e' / 'c' day of the week from Sunday), 'u' year, 'F', 'Q' / 'q'
quarters, 'G' era, and 'D' unpadded ('D' gave '065' where Flink gives '65'). They were
refused ('w', 'W', 'u', 'F', 'Y', 'e', 'c', 'Q', 'q', 'G')."""

from __future__ import annotations

import sqlengine

ROWS = ["2024-03-05 17:04:09.123", "2024-12-30 00:00:00", "2021-01-02 12:00:00",
        "2022-01-01 23:00:00", "2020-12-31 01:00:00", "2023-10-01 00:30:00"]
PATTERNS = ["w", "ww", "W", "u", "uu", "F", "Y", "YY", "e", "c", "Q", "QQQ", "q", "G",
            "k K h H", "D", "DDD"]
FLINK = [  # (PyFlink 2.3, per row of ROWS, per pattern of PATTERNS)
    ["10", "10", "2", "2024", "24", "5", "2024", "24", "3", "3", "1", "Q1", "1", "AD",
     "17 5 5 17", "65", "065"],
    ["1", "01", "5", "2024", "24", "2", "2025", "25", "2", "2", "4", "Q4", "4", "AD",
     "24 0 12 0", "365", "365"],
    ["1", "01", "1", "2021", "21", "2", "2021", "21", "7", "7", "1", "Q1", "1", "AD",
     "12 0 12 12", "2", "002"],
    ["1", "01", "1", "2022", "22", "1", "2022", "22", "7", "7", "1", "Q1", "1", "AD",
     "23 11 11 23", "1", "001"],
    ["1", "01", "5", "2020", "20", "3", "2021", "21", "5", "5", "4", "Q4", "4", "AD",
     "1 1 1 1", "366", "366"],
    ["40", "40", "1", "2023", "23", "1", "2023", "23", "1", "1", "4", "Q4", "4", "AD",
     "24 0 12 0", "274", "274"],
]


def test_pattern_letters_as_flink() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    items = ", ".join(f"DATE_FORMAT(x, '{p}') AS f{i}" for i, p in enumerate(PATTERNS))
    values = ", ".join(f"({i}, TIMESTAMP '{r}')" for i, r in enumerate(ROWS))
    got = s.sql(f"SELECT i, {items} FROM (VALUES {values}) AS t(i, x)").collect().to_pylist()
    got.sort(key=lambda r: r["i"])
    assert [[r[f"f{i}"] for i in range(len(PATTERNS))] for r in got] == FLINK
