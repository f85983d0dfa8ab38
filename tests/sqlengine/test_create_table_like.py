"""CREATE TABLE ... LIKE source [(options)]: the source's columns first, then the new ones;
constraints, partitions, computed columns, options and the watermark merged by Flink's rules
(INCLUDING ALL, OVERWRITING OPTIONS by default); conflicts refused with the option to use."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

SOURCE = ("CREATE TABLE src (id INT, ts TIMESTAMP(3), c AS id * 2, "
          "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) "
          "WITH ('connector' = 'datagen', 'number-of-rows' = '5')")


def _same(s: sqlengine.Session, name: str, ddl: str) -> None:
    """The LIKE table equals the table its spelled-out DDL makes."""
    other = sqlengine.connect()
    other.execute(ddl)
    assert s.catalog.table(name) == other.catalog.table(name)


@pytest.mark.parametrize(("like", "spelled"), [
    ("CREATE TABLE a LIKE src",
     "CREATE TABLE a (id INT, ts TIMESTAMP(3), c AS id * 2, WATERMARK FOR ts AS ts - "
     "INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen', "
     "'number-of-rows' = '5')"),
    # (the source's columns in their order, its computed ones too, then the new ones, as
    # PyFlink 2.3 orders them; the new physical columns came before the computed ones)
    ("CREATE TABLE b (extra STRING) WITH ('number-of-rows' = '7') LIKE src",
     "CREATE TABLE b (id INT, ts TIMESTAMP(3), c AS id * 2, extra STRING, WATERMARK FOR ts AS "
     "ts - INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
     "'datagen', 'number-of-rows' = '7')"),
    ("CREATE TABLE c (x INT) WITH ('connector' = 'blackhole') LIKE src (EXCLUDING OPTIONS "
     "EXCLUDING CONSTRAINTS)",
     "CREATE TABLE c (id INT, ts TIMESTAMP(3), c AS id * 2, x INT, WATERMARK FOR ts AS ts - "
     "INTERVAL '5' SECOND) WITH ('connector' = 'blackhole')"),
    # (an overwritten computed column keeps its place)
    ("CREATE TABLE c2 (x INT, c AS id * 3) LIKE src (OVERWRITING GENERATED)",
     "CREATE TABLE c2 (id INT, ts TIMESTAMP(3), c AS id * 3, x INT, WATERMARK FOR ts AS ts - "
     "INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen', "
     "'number-of-rows' = '5')"),
    ("CREATE TABLE d (WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) LIKE src "
     "(OVERWRITING WATERMARKS EXCLUDING GENERATED)",
     "CREATE TABLE d (id INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '1' SECOND, "
     "PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '5')"),
    ("CREATE TABLE e LIKE src (EXCLUDING ALL INCLUDING OPTIONS)",
     "CREATE TABLE e (id INT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen', "
     "'number-of-rows' = '5')"),
])
def test_like_merges_as_flink(like: str, spelled: str) -> None:
    s = sqlengine.connect()
    s.execute(SOURCE)
    s.execute(like)
    _same(s, like.split()[2], spelled)


@pytest.mark.parametrize(("ddl", "message"), [
    ("CREATE TABLE f (id INT) LIKE src", "column 'id' is in both tables"),
    ("CREATE TABLE g (WATERMARK FOR ts AS ts) LIKE src", "use OVERWRITING WATERMARKS"),
    ("CREATE TABLE h WITH ('number-of-rows' = '1') LIKE src (INCLUDING OPTIONS)",
     "use OVERWRITING OPTIONS"),
    ("CREATE TABLE i LIKE nope", "an unknown table"),
    ("CREATE TABLE j LIKE src (OVERWRITING ALL)", "OVERWRITING ALL is not allowed"),
    # (the last one won, without a word; Flink: "can be declared only once")
    ("CREATE TABLE j2 WITH ('number-of-rows' = '9') LIKE src (OVERWRITING OPTIONS INCLUDING "
     "OPTIONS)", "OPTIONS is given more than once"),
    ("CREATE TABLE j3 LIKE src (EXCLUDING ALL INCLUDING ALL)", "ALL is given more than once"),
    ("CREATE TABLE k (PRIMARY KEY (id) NOT ENFORCED) LIKE src", "both tables define a primary"),
    ("CREATE TABLE m (c AS id + 1) LIKE src", "use OVERWRITING GENERATED"),
])
def test_like_conflicts(ddl: str, message: str) -> None:
    s = sqlengine.connect()
    s.execute(SOURCE)
    with pytest.raises(SqlEngineError, match=message):
        s.execute(ddl)
    assert s.catalog.table(ddl.split()[2]) is None


def test_like_metadata_columns() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE msrc (a INT, p STRING METADATA FROM 'file.path' VIRTUAL) WITH "
              "('connector' = 'filesystem', 'path' = '/tmp', 'format' = 'csv')")
    s.execute("CREATE TABLE without_meta LIKE msrc (EXCLUDING METADATA)")
    s.execute("CREATE TABLE with_meta LIKE msrc")
    names = [r["name"] for r in s.execute("DESCRIBE without_meta")[0].table.to_pylist()]
    assert names == ["a"]
    rows = s.execute("DESCRIBE with_meta")[0].table.to_pylist()
    assert [(r["name"], r["extras"]) for r in rows] == [
        ("a", None), ("p", "METADATA FROM 'file.path' VIRTUAL")]


def test_an_error_of_the_merged_table_points_at_its_name() -> None:
    """(it had no place: the merged statement's text is not the user's)"""
    s = sqlengine.connect()
    s.execute(SOURCE)
    with pytest.raises(SqlEngineError, match="option 'connector' is missing") as info:
        s.execute("CREATE TABLE l17 WITH ('number-of-rows' = '3') LIKE src (EXCLUDING ALL "
                  "INCLUDING GENERATED)")
    assert info.value.span is not None and (info.value.span.line, info.value.span.column) == \
        (1, 14)
