"""ALTER TABLE: rename the table or a column, SET / RESET options, ADD columns (at the end,
FIRST or AFTER a column), DROP columns; each result is the table SHOW CREATE TABLE shows
and queries read; what would break the table is refused with the reason."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

DDL = ("CREATE TABLE t (a INT, b STRING, c AS a * 2, ts TIMESTAMP(3), "
       "WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'datagen', "
       "'number-of-rows' = '3')")


def _columns(s: sqlengine.Session, name: str) -> list[tuple[str, str]]:
    return [(r["name"], r["type"]) for r in s.execute(f"DESCRIBE {name}")[0].table.to_pylist()]


def test_alter_table_steps() -> None:
    s = sqlengine.connect()
    s.execute(DDL)
    for stmt in ["ALTER TABLE t ADD d DOUBLE", "ALTER TABLE t ADD (e BIGINT, f BOOLEAN)",
                 "ALTER TABLE t ADD g INT FIRST", "ALTER TABLE t ADD h INT AFTER a",
                 "ALTER TABLE t SET ('rows-per-second' = '5', 'number-of-rows' = '4')",
                 "ALTER TABLE t RESET ('rows-per-second')", "ALTER TABLE t DROP (e, f)",
                 "ALTER TABLE t RENAME b TO bb", "ALTER TABLE t RENAME TO t2"]:
        s.execute(stmt)
    assert s.catalog.table("t") is None
    # (in the declared order, a computed column among the others, as Flink's; main moved
    # c to the end and put d before it)
    assert _columns(s, "t2") == [("g", "INT"), ("a", "INT"), ("h", "INT"), ("bb", "STRING"),
                                 ("c", "INT"), ("ts", "TIMESTAMP(3) *ROWTIME*"),
                                 ("d", "DOUBLE")]
    assert s.sql("SELECT * FROM t2").collect().column_names == ["g", "a", "h", "bb", "c", "ts",
                                                                 "d"]
    assert dict(s.catalog.table("t2").options) == {"connector": "datagen",
                                                   "number-of-rows": "4"}
    assert s.sql("SELECT COUNT(*) AS n FROM t2").collect().to_pylist() == [{"n": 4}]
    # The altered table's SHOW CREATE TABLE makes the same table elsewhere.
    text = s.execute("SHOW CREATE TABLE t2")[0].table.column(0)[0].as_py()
    other = sqlengine.connect()
    other.execute(text)
    assert other.catalog.table("t2") == s.catalog.table("t2")


@pytest.mark.parametrize(("stmt", "message"), [
    ("ALTER TABLE t DROP a", "used by the computed column 'c'"),
    ("ALTER TABLE t DROP ts", "used by the watermark"),
    ("ALTER TABLE t RENAME a TO z", "used by the computed column 'c'"),
    ("ALTER TABLE t RESET ('connector')", "'connector' cannot be reset"),
    ("ALTER TABLE t RESET ('seed')", "has no option 'seed'"),
    ("ALTER TABLE t SET ('nope' = '1')", "unsupported option 'nope'"),
    ("ALTER TABLE t ADD a INT", "column 'a' exists"),
    ("ALTER TABLE t ADD x INT AFTER nope", "no column 'nope'"),
    ("ALTER TABLE nope ADD x INT", "unknown table"),
    ("ALTER TABLE t MODIFY nope BIGINT", "MODIFY: no column 'nope'"),
    ("ALTER TABLE t MODIFY a STRING", "MULTIPLY expects numeric arguments"),
    ("ALTER TABLE t MODIFY (a BIGINT, a INT)", "column 'a' is named twice"),
    ("ALTER TABLE t MODIFY a BIGINT AFTER a", "column 'a' cannot follow itself"),
    ("ALTER TABLE t MODIFY a BIGINT AFTER nope", "no column 'nope' to place 'a' after"),
    ("ALTER TABLE t MODIFY PRIMARY KEY (a) NOT ENFORCED", "MODIFY PRIMARY KEY: the table has "
                                                          "no primary key"),
    ("ALTER TABLE t MODIFY WATERMARK FOR b AS b", "WATERMARK FOR column 'b' must be a "
                                                  "TIMESTAMP"),
    ("ALTER TABLE t DROP PRIMARY KEY", "DROP PRIMARY KEY: the table has no primary key"),
    ("ALTER TABLE t DROP CONSTRAINT pk", "DROP CONSTRAINT pk: the table has no primary key"),
    ("ALTER TABLE t ADD WATERMARK FOR ts AS ts", "ADD WATERMARK: the table has one"),
    ("ALTER TABLE t ADD x AS nope + 1", "unknown column 'nope'"),
    ("ALTER TABLE t ADD x ARRAY<INT>", "does not generate ARRAY<INT>"),
])
def test_refused_changes_leave_the_table(stmt: str, message: str) -> None:
    s = sqlengine.connect()
    s.execute(DDL)
    before = s.catalog.table("t")
    with pytest.raises(SqlEngineError, match=message):
        s.execute(stmt)
    assert s.catalog.table("t") == before


def test_if_exists() -> None:
    s = sqlengine.connect()
    assert "skipped" in s.execute("ALTER TABLE IF EXISTS nope ADD x INT")[0].message


def test_add_a_computed_column_a_watermark_and_a_primary_key() -> None:
    """Flink's ALTER TABLE ADD of a computed column, a WATERMARK and a PRIMARY KEY."""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE e (id INT, ms BIGINT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '5', 'fields.ms.min' = '0', 'fields.ms.max' = '1000000')")
    s.execute("ALTER TABLE e ADD (ts AS TO_TIMESTAMP_LTZ(ms, 3), twice AS id * 2)")
    s.execute("ALTER TABLE e ADD WATERMARK FOR ts AS ts - INTERVAL '1' SECOND")
    s.execute("ALTER TABLE e ADD CONSTRAINT pk PRIMARY KEY (id) NOT ENFORCED")
    text = s.execute("SHOW CREATE TABLE e")[0].table.column(0)[0].as_py()
    assert "`ts` AS TO_TIMESTAMP_LTZ(ms, 3)" in text and "`twice` AS id * 2" in text
    assert "WATERMARK FOR `ts` AS ts - INTERVAL '1' SECOND" in text
    assert "PRIMARY KEY (`id`) NOT ENFORCED" in text
    with pytest.raises(SqlEngineError, match="ADD PRIMARY KEY: the table has one"):
        s.execute("ALTER TABLE e ADD PRIMARY KEY (ms) NOT ENFORCED")
    rows = s.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, "
                 "DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY window_start, window_end"
                 ).collect().to_pylist()
    assert sum(r["n"] for r in rows) <= 5 and rows  # (the first window's rows at least)
