"""SQL hints: Flink's dynamic table options (``t /*+ OPTIONS('k' = 'v') */``) override a
table's WITH options for one use, checked as WITH options; every other hint is refused at its
place. On main every hint was read as a comment and ignored without a word."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import (
    BindError,
    ConnectorError,
    NotSupportedError,
    ParseError,
    SqlEngineError,
)


@pytest.fixture
def s() -> sqlengine.Session:
    s = sqlengine.connect()
    s.execute("CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5')")
    s.execute("CREATE VIEW v AS SELECT * FROM g")
    return s


def _count(s: sqlengine.Session, sql: str) -> int:
    return s.sql(sql).collect().column(0)[0].as_py()


def test_options_hint_overrides_with_options_for_that_use(s: sqlengine.Session) -> None:
    assert _count(s, "SELECT COUNT(*) FROM g /*+ OPTIONS('number-of-rows' = '3') */") == 3
    assert _count(s, "SELECT COUNT(*) FROM g") == 5
    # each use its own: 3 x 2 rows
    assert _count(s, "SELECT COUNT(*) FROM g /*+ OPTIONS('number-of-rows'='3') */ AS x "
                     "JOIN g /*+ OPTIONS('number-of-rows'='2') */ AS y ON TRUE") == 6


def test_a_plain_comment_and_a_string_are_not_hints(s: sqlengine.Session) -> None:
    rows = s.sql("SELECT '/*+ OPTIONS(1) */' AS c FROM g /* OPTIONS('x'='y') */").collect()
    assert rows.column(0).to_pylist() == ["/*+ OPTIONS(1) */"] * 5


@pytest.mark.parametrize(("sql", "error", "message", "col"), [
    ("SELECT * FROM g /*+ OPTIONS('nope' = '3') */", ConnectorError,
     "unsupported option 'nope' for connector 'datagen'", 29),
    ("SELECT * FROM g /*+ OPTIONS('number-of-rows' = 'x') */", ConnectorError,
     "number-of-rows", 29),
    ("SELECT * FROM g /*+ OPTIONS('connector' = 'filesystem') */", NotSupportedError,
     "cannot change 'connector'", 29),
    ("SELECT * FROM v /*+ OPTIONS('number-of-rows' = '3') */", NotSupportedError,
     "'v' is a view", 17),
    ("WITH w AS (SELECT * FROM g) SELECT * FROM w /*+ OPTIONS('seed' = '1') */",
     NotSupportedError, "WITH query", 45),
    # (a join hint naming no join input: Flink's message; tests/sqlengine/test_join_hints.py)
    ("SELECT /*+ BROADCAST(g) */ * FROM g", BindError, "cannot match the name of input "
     "tables or views: `g` in `BROADCAST`", 22),
    ("SELECT /*+ MERGE_JOIN(g) */ * FROM g", NotSupportedError, "hint MERGE_JOIN is not "
     "supported", 8),
    ("SELECT * FROM g /*+ LOOKUP('table' = 'g') */", NotSupportedError, "a LOOKUP hint goes "
     "right after SELECT", 17),
    ("SELECT * FROM g WHERE a /*+ OPTIONS('seed' = '1') */ > 1", NotSupportedError,
     "goes right after a table's name", 25),
    ("SELECT * FROM g /*+ OPTIONS('seed' = '1' */", ParseError, "a closing", 29),
    ("SELECT * FROM g /*+ OPTIONS('seed' = '1', 'seed' = '2') */", ParseError, "twice", 43),
    ("SELECT * FROM g /*+x*/", NotSupportedError, "hint X", 17),
])
def test_refused_at_its_place(s: sqlengine.Session, sql: str, error: type[SqlEngineError],
                              message: str, col: int) -> None:
    with pytest.raises(error, match=message) as info:
        s.sql(sql).collect()
    assert info.value.span is not None
    assert (info.value.span.line, info.value.span.column) == (1, col)


def test_insert_into_takes_an_options_hint(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE o (a INT) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path}/o', 'format' = 'csv')")
    s.execute("INSERT INTO o /*+ OPTIONS('format' = 'json') */ SELECT 1")
    s.execute("INSERT INTO o SELECT 2")
    texts = sorted(p.read_text() for p in (tmp_path / "o").iterdir())
    assert texts == ["2\n", '{"a":1}\n']
    with pytest.raises(ConnectorError, match="unsupported option 'bad'") as info:
        s.execute("INSERT INTO o /*+ OPTIONS('bad' = 'x') */ SELECT 3")
    assert info.value.span is not None and info.value.span.column == 27
    with pytest.raises(NotSupportedError, match="a BROADCAST hint goes right after SELECT"):
        s.execute("INSERT INTO o /*+ BROADCAST(x) */ SELECT 3")


def test_a_hint_in_a_statement_that_takes_none_is_a_syntax_error() -> None:
    with pytest.raises(ParseError, match="unexpected '/\\*\\+ x \\*/'"):
        sqlengine.connect().execute("CREATE TABLE p /*+ x */ (a INT) WITH ('connector' = "
                                    "'blackhole')")
