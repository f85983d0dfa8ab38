r"""Java's regex classes, REGEXP_INSTR across lines, REPEAT of a NULL count and CONVERT_TZ's
lenient parsing, each as PyFlink 2.3 answers the same SELECT: ``\p{Alpha}`` and its kin are
Java's (RE2 refused them and the functions gave NULL or FALSE), ``[[:alpha:]]`` is Java's
nested class of the characters ':', 'a', 'l', 'p', 'h' (RE2's POSIX class matched every
letter); REGEXP_INSTR counted a match on a later line from that line's start; REPEAT took a
NULL count as 0; CONVERT_TZ gave NULL for a time with fractional seconds."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import BindError

CASES = [
    (r"SELECT REGEXP_REPLACE(s, '\p{Alpha}+', 'A'), REGEXP_EXTRACT(s, '\p{Alpha}+', 0), "
     r"REGEXP(s, '\p{Digit}'), REGEXP_COUNT(s, '\P{Alpha}'), "
     r"REGEXP_EXTRACT(s, '[\p{Lower}9]+', 0) FROM (VALUES ('ab9')) AS v(s)",
     [("A9", "ab", True, 1, "ab9")]),
    ("SELECT REGEXP_EXTRACT(s, '[[:alpha:]]+', 0) FROM (VALUES ('Hello World 2'), ('ab9'), "
     "('xyz')) AS v(s)", [("ll",), ("a",), (None,)]),
    (r"SELECT REGEXP_INSTR(s, '\d'), REGEXP_INSTR(s, 'x'), POSITION('x' IN s), "
     "REGEXP_INSTR(s, 'o.x') FROM (VALUES (CONCAT('Hello', CHR(10), 'x2'))) AS v(s)",
     [(8, 7, 7, 0)]),
    ("SELECT REPEAT(s, k), REPEAT(s, CAST(NULL AS INT)), REPEAT(s, -1) "
     "FROM (VALUES ('ab', CAST(NULL AS INT))) AS v(s, k)", [(None, None, "")]),
    ("SELECT CONVERT_TZ('2020-03-08 01:30:00.000', 'UTC', 'America/New_York'), "
     "CONVERT_TZ('2020-03-08 01:30:00.5', 'UTC', 'Asia/Tokyo'), "
     "CONVERT_TZ('2020-3-8 1:30:00', 'UTC', 'Asia/Tokyo'), "
     "CONVERT_TZ('2020-03-08', 'UTC', 'Asia/Tokyo'), "
     "CONVERT_TZ('2020-02-30 01:00:00', 'UTC', 'Asia/Tokyo')",
     [("2020-03-07 20:30:00", "2020-03-08 10:30:00", "2020-03-08 10:30:00", None,
       "2020-03-01 10:00:00")]),
]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize(("sql", "expected"), CASES)
def test_as_flink(sql: str, expected: list[tuple[object, ...]]) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    got = [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
    assert got == expected


@pytest.mark.parametrize("sql", [
    "SELECT REPEAT('ab', 4294967298)",
    "SELECT LPAD('x', 4294967299, 'y')",
    "SELECT SUBSTRING('abcdef', 4294967298, 2)",
    "SELECT LEFT('abcdef', CAST(2 AS BIGINT))",
    "SELECT SUBSTRING('abcdef', 1.5)",
])
def test_a_count_or_position_wider_than_int_is_refused_as_in_flink(sql: str) -> None:
    """PyFlink 2.3 refuses a BIGINT count or position; here it was cut to 32 bits
    (REPEAT('ab', 4294967298) gave 'abab')."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(BindError, match="expects INT position and length arguments"):
        s.sql(sql).collect()
