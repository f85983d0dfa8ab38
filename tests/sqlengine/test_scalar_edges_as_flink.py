"""Scalar functions at their edges, each value as PyFlink 2.3 gave it for the same SQL over a
one-row table (k = 1, so nothing is folded away by Flink's planner). Before: PARSE_URL gave
NULL for mailto: / file: / http:/x URLs and answered for unknown protocols, bad ports and
lower-case part names; URL_DECODE gave NULL for bytes that are not UTF-8; CAST to
VARBINARY(n) did not cut; GREATEST / LEAST of BOOLEANs failed; 'a!b' LIKE ... ESCAPE '!'
matched 'ab'; SHA2(s, 0) was SHA-256."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _url(text: str, part: str, key: str | None = None) -> str:
    extra = f", '{key}'" if key is not None else ""
    return f"PARSE_URL(CONCAT('{text}', CAST(k AS STRING)), '{part}'{extra})"


CASES = [
    (_url("mailto:x@y.com", "PATH"), "x@y.com1"),
    (_url("mailto:x@y.com", "HOST"), ""),
    (_url("mailto:x@y.com", "AUTHORITY"), None),
    (_url("mailto:x@y.com", "FILE"), "x@y.com1"),
    (_url("mailto:x@y.com", "USERINFO"), None),
    (_url("mailto:x@y.com", "QUERY"), None),
    (_url("mailto:x@y.com?subject=hi#r", "PATH"), "x@y.com"),
    (_url("mailto:x@y.com?subject=hi#r", "QUERY"), "subject=hi"),
    (_url("mailto:x@y.com?subject=hi#r", "REF"), None),
    (_url("mailto:x@y.com?subject=hi#r", "QUERY", "subject"), "hi"),
    (_url("mailto:x@y.com?subject=hi#r", "FILE"), "x@y.com?subject=hi"),
    (_url("file:/tmp/a", "PATH"), "/tmp/a1"),
    (_url("file:/tmp/a", "HOST"), ""),
    (_url("file:///tmp/a", "PATH"), "/tmp/a1"),
    (_url("file:///tmp/a", "AUTHORITY"), ""),
    (_url("foo:bar", "PATH"), None),
    (_url("foo://h/bar", "HOST"), None),
    (_url("http:/x", "PATH"), "/x1"),
    (_url("http:/x", "HOST"), ""),
    (_url("http:x", "PATH"), "x1"),
    ("PARSE_URL(CONCAT('http://a.com:abc', CAST(k AS STRING), '/x'), 'HOST')", None),
    ("PARSE_URL(CONCAT('http://a.com:', CAST(k AS STRING), '/x'), 'HOST')", "a.com"),
    ("PARSE_URL(CONCAT('http://a.com:', '/x', CAST(k AS STRING)), 'HOST')", "a.com"),
    (_url("http://a.com/", "host"), None),
    (_url("http://a.com/", "Host"), None),
    (_url("ftp://u:p@h.com:21/x", "USERINFO"), "u:p"),
    (_url("https://h.com", "PATH"), ""),
    (_url("jar:file:/a.jar!/b", "PATH"), "file:/a.jar!/b1"),
    (_url("HTTP://H.com/", "PROTOCOL"), "http"),
    (_url("http://a.com:-1/", "HOST"), "a.com"),
    ("URL_DECODE(CONCAT('%e2%82', CAST(k AS STRING)))", "\ufffd1"),
    ("URL_DECODE(CONCAT('%ff%fe', CAST(k AS STRING)))", "\ufffd\ufffd1"),
    ("URL_DECODE(CONCAT('a%F0%9F%98', CAST(k AS STRING)))", "a\ufffd1"),
    ("URL_DECODE(CONCAT('%C3%A9', CAST(k AS STRING)))", "é1"),
    ("CAST(CONCAT('hell', CAST(k AS STRING)) AS VARBINARY(2))", b"he"),
    ("CAST(CAST(CONCAT('é', CAST(k AS STRING)) AS VARBINARY(1)) AS STRING)", "\ufffd"),
    ("CAST(CAST(CONCAT('ab', CAST(k AS STRING)) AS BINARY(2)) AS STRING)", "ab"),
    ("CAST(CAST(CONCAT('a', CAST(k AS STRING)) AS BINARY(4)) AS BYTES)", b"a1\x00\x00"),
    ("GREATEST(k > 0, k < 0)", True),
    ("LEAST(k > 0, k < 0)", False),
    ("GREATEST(k > 0, CAST(NULL AS BOOLEAN))", None),
    ("'a_b' LIKE 'a!_b' ESCAPE '!'", True),
    ("'a!b' LIKE 'a!!b' ESCAPE '!'", True),
]


@pytest.fixture(scope="module")
def session() -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TEMPORARY VIEW g AS SELECT * FROM (VALUES (1)) AS t(k)")
    return s


@pytest.mark.parametrize("expr, expected", CASES, ids=[c[0][:70] for c in CASES])
def test_as_flink(session: sqlengine.Session, expr: str, expected: object) -> None:
    assert session.sql(f"SELECT {expr} AS v FROM g").collect().to_pylist() == [{"v": expected}]


@pytest.mark.parametrize("expr, message", [
    # (Flink: "Invalid escape sequence 'a!b', 1"; its job fails on a pattern made at run time)
    ("'ab' LIKE CONCAT('a!', 'b') ESCAPE '!'", "invalid escape sequence in LIKE pattern 'a!b': "
                                               "'!' before 'b'"),
    ("'ab' LIKE 'ab!' ESCAPE '!'", "invalid escape sequence in LIKE pattern 'ab!'"),
    ("'ab' SIMILAR TO CONCAT('a!', 'b') ESCAPE '!'", "invalid escape sequence in SIMILAR TO"),
    # (Flink: "NoSuchAlgorithmException: SHA-0 MessageDigest not available")
    ("SHA2(CONCAT('a', CAST(k AS STRING)), k - 1)", "unsupported bit length 0"),
])
def test_refused_as_flink(session: sqlengine.Session, expr: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message.replace("(", r"\(")):
        session.sql(f"SELECT {expr} FROM g").collect()
