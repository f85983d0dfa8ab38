"""EXECUTE STATEMENT SET BEGIN ... END (and the SQL client's BEGIN STATEMENT SET; ... END;):
the INSERTs are one statement, planned before any runs, and one job in which equal sources
are read once."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine import ddl
from sqlengine.errors import SqlEngineError
from sqlengine.optimizer.specs import TableScanSpec
from sqlengine.parser import parse_statement, split_script
from sqlengine.plan.nodes import StatementSet

TABLES = """
CREATE TABLE g (id BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '100',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '100');
CREATE TABLE a (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '{a}', 'format' = 'csv');
CREATE TABLE b (k BIGINT, n BIGINT) WITH ('connector' = 'filesystem', 'path' = '{b}',
  'format' = 'csv');
"""


def _session(tmp_path: Path, mode: str = "batch") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(TABLES.format(a=tmp_path / "a", b=tmp_path / "b"))
    return s


@pytest.mark.parametrize(("begin", "end"), [("EXECUTE STATEMENT SET BEGIN", "END;"),
                                            ("BEGIN STATEMENT SET;", "END;"),
                                            ("execute statement set begin", "end;")])
def test_statement_set_runs_every_insert(tmp_path: Path, begin: str, end: str) -> None:
    s = _session(tmp_path)
    results = s.execute(f"""{begin}
INSERT INTO a SELECT id FROM g WHERE id % 2 = 0;
-- a comment; with a semicolon
INSERT INTO b SELECT id % 3, COUNT(*) FROM g GROUP BY id % 3;
{end}
SELECT 1;""")
    assert [r.message for r in results[:1]] == [
        "[INFO] Inserted 50 rows into a\n[INFO] Inserted 3 rows into b"]
    assert s.sql("SELECT COUNT(*) AS n FROM a").collect().to_pylist() == [{"n": 50}]
    assert sorted(map(tuple, (r.values() for r in s.sql("SELECT * FROM b").collect()
                              .to_pylist()))) == [(0, 33), (1, 34), (2, 33)]
    assert len(results) == 2


def test_the_set_is_one_statement_of_the_script() -> None:
    parts = split_script("SELECT 1; EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT 1; "
                         "INSERT INTO a SELECT 'END'; END; SELECT 2")
    assert [t.split()[0] for _, t in parts] == ["SELECT", "EXECUTE", "SELECT"]


def test_equal_sources_are_read_once(tmp_path: Path) -> None:
    s = _session(tmp_path, "streaming")
    text = ("EXECUTE STATEMENT SET BEGIN INSERT INTO a SELECT id FROM g; "
            "INSERT INTO b SELECT id, id * 10 FROM g; END")
    stmt = parse_statement(text)
    graph = s.job_graph(StatementSet(tuple(ddl.bind_insert(s.catalog, i, text)
                                           for i in stmt.inserts)))
    scans = [op for v in graph.vertices for op in v.chain if isinstance(op, TableScanSpec)]
    assert len(scans) == 1
    results = s.execute(text)
    assert results[0].sink_rows == {"a": 100, "b": 100}


@pytest.mark.parametrize(("body", "message"), [
    ("INSERT INTO a SELECT id FROM g; SELECT 1;", "INSERT statements only"),
    ("INSERT INTO a SELECT id FROM g;", "no END"),
    ("", "no INSERT"),
    ("INSERT INTO a SELECT id FROM g; INSERT INTO b SELECT nope FROM g;", "nope"),
])
def test_bad_statement_sets_run_nothing(tmp_path: Path, body: str, message: str) -> None:
    s = _session(tmp_path)
    end = "" if message == "no END" else "END;"
    with pytest.raises(SqlEngineError, match=message):
        s.execute(f"EXECUTE STATEMENT SET BEGIN {body} {end}")
    assert not (tmp_path / "a").exists() or not any((tmp_path / "a").iterdir())


def test_the_shell_waits_for_the_end_of_a_statement_set() -> None:
    from sqlengine.shell.app import statement_complete

    assert not statement_complete("EXECUTE STATEMENT SET BEGIN")
    assert not statement_complete("EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1;")
    assert statement_complete("EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT 1;\nEND;")
    assert not statement_complete("SELECT 1 /* open")
    assert statement_complete("SELECT 1;")
