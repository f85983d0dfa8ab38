"""``U&'...' [UESCAPE 'c']`` string literals (were a parse error, "unsupported expression U &
'...'"), each as PyFlink 2.3 answers the same SQL: Calcite reads the escape's next four
characters as Java's Integer.parseInt(s, 16) does, so a '+' counts among them."""

from __future__ import annotations

import pytest

import sqlengine


@pytest.mark.parametrize(("sql", "expected"), [
    ("SELECT U&'\\00e9\\0001'", "é\x01"),
    ("SELECT u&'\\0041'", "A"),
    ("SELECT U&'a\\\\b'", "a\\b"),
    ("SELECT U&'d!0061t!+000061' UESCAPE '!'", "dat\x00061"),
    ("SELECT CONCAT(U&'\\0041', 'b')", "Ab"),
    ("SELECT CHAR_LENGTH(U&'\\+01F600x')", 5),
])
def test_values_as_flinks(sql: str, expected: object) -> None:
    s = sqlengine.connect()
    assert list(s.sql(sql).collect().to_pylist()[0].values()) == [expected]


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT U&'\\00g1'", "is not followed by 4 hex digits"),
    ("SELECT U&'x' UESCAPE '+'", "UESCAPE '\\+': the escape must be one character"),
])
def test_bad_escapes_are_refused(sql: str, message: str) -> None:
    with pytest.raises(sqlengine.SqlEngineError, match=message):
        sqlengine.connect().sql(sql).collect()
