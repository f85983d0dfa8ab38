"""Which query types INSERT writes into which column types without a CAST: Flink 2.3's
(PyFlink, explain of each INSERT into a blackhole table), so that no value is narrowed
without a word (300 into a TINYINT was 44, 5000000000 into an INT 705032704)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import BindError

VALUES = {"TINYINT": "CAST(1 AS TINYINT)", "SMALLINT": "CAST(1 AS SMALLINT)", "INT": "1",
          "BIGINT": "CAST(1 AS BIGINT)", "FLOAT": "CAST(1.5 AS FLOAT)",
          "DOUBLE": "CAST(1.5 AS DOUBLE)", "DECIMAL(10, 2)": "CAST(1.5 AS DECIMAL(10,2))",
          "BOOLEAN": "TRUE", "STRING": "'1'", "DATE": "DATE '2024-01-01'",
          "TIMESTAMP(3)": "TIMESTAMP '2024-01-01 10:00:00'", "TIME": "TIME '10:00:00'",
          "TIMESTAMP_LTZ(3)": "TO_TIMESTAMP_LTZ(0, 3)", "BYTES": "X'01'"}
COLUMNS = {**{t: t for t in VALUES}, "DECIMAL(10, 2)": "DECIMAL(5, 1)"}
INTEGERS = ["TINYINT", "SMALLINT", "INT", "BIGINT"]
# column type -> the value types Flink 2.3 writes into it without a CAST
FLINK = {
    "TINYINT": INTEGERS[:1], "SMALLINT": INTEGERS[:2], "INT": INTEGERS[:3],
    "BIGINT": INTEGERS,
    "FLOAT": [*INTEGERS, "FLOAT", "DECIMAL(10, 2)"],
    "DOUBLE": [*INTEGERS, "FLOAT", "DOUBLE", "DECIMAL(10, 2)"],
    "DECIMAL(10, 2)": [*INTEGERS, "FLOAT", "DOUBLE", "DECIMAL(10, 2)"],
    "BOOLEAN": ["BOOLEAN"], "STRING": ["STRING"], "BYTES": ["BYTES"],
    "DATE": ["DATE", "TIMESTAMP(3)"], "TIME": ["TIMESTAMP(3)", "TIME"],
    "TIMESTAMP(3)": ["TIMESTAMP(3)", "TIMESTAMP_LTZ(3)"],
    "TIMESTAMP_LTZ(3)": ["TIMESTAMP(3)", "TIMESTAMP_LTZ(3)"],
}
# sqlengine also takes a DATE into a TIMESTAMP column (midnight: nothing is lost)
EXTRA = {("TIMESTAMP(3)", "DATE")}


@pytest.mark.parametrize("column", list(COLUMNS))
def test_insert_accepts_what_flink_accepts(column: str) -> None:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE k (x {COLUMNS[column]}) WITH ('connector' = 'blackhole')")
    for value, literal in VALUES.items():
        expected = value in FLINK[column] or (column, value) in EXTRA
        try:
            s.execute(f"INSERT INTO k SELECT {literal}")
            accepted = True
        except BindError as e:
            assert "(use CAST)" in e.message
            accepted = False
        assert accepted == expected, (column, value)


def test_narrowing_is_refused_and_named(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE k (a TINYINT, b INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'k'}', 'format' = 'csv')")
    with pytest.raises(BindError, match=r"column 'a' of 'k' is TINYINT, but the query "
                                        r"gives INT \(use CAST\)"):
        s.execute("INSERT INTO k SELECT 300, 1")
    with pytest.raises(BindError, match="column 'b' of 'k' is INT, but the query gives BIGINT"):
        s.execute("INSERT INTO k SELECT CAST(1 AS TINYINT), CAST(5000000000 AS BIGINT)")
    s.execute("INSERT INTO k SELECT CAST(300 AS TINYINT), CAST(5000000000 AS INT)")
    assert s.sql("SELECT * FROM k").collect().to_pylist() == [{"a": 44, "b": 705032704}]


def test_nested_values_are_stored_element_by_element(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE n (a ARRAY<BIGINT>, r ROW<x DOUBLE>) WITH ('connector' = "
              f"'filesystem', 'path' = '{tmp_path / 'n'}', 'format' = 'json')")
    s.execute("INSERT INTO n SELECT ARRAY[1, 2], ROW(1.5)")
    assert s.sql("SELECT * FROM n").collect().to_pylist() == [{"a": [1, 2], "r": {"x": 1.5}}]
    with pytest.raises(BindError, match="ARRAY<BIGINT>, but the query gives ARRAY<DOUBLE>"):
        s.execute("INSERT INTO n SELECT ARRAY[1.5e0], ROW(1.5)")


def test_a_values_column_of_nulls_takes_the_target_type(tmp_path: Path) -> None:
    """INSERT INTO t VALUES (1, NULL): a VALUES column of NULLs only is typed by its target
    column, as the SQL standard, DuckDB and PostgreSQL read it (it was INT, so a DATE, BYTES
    or ARRAY column refused it: "column 'd' is DATE, but the query gives INT"; Flink 2.3
    refuses an untyped NULL in VALUES altogether, "Illegal use of 'NULL'")."""
    duckdb = pytest.importorskip("duckdb")
    columns = ("id INT, name STRING, d DATE, p DECIMAL(10, 2), b BYTES, ts TIMESTAMP(3), "
               "a ARRAY<INT>")
    inserts = ["INSERT INTO t (id, d) VALUES (1, NULL)",
               "INSERT INTO t VALUES (3, NULL, NULL, NULL, NULL, NULL, NULL), "
               "(4, 'x', NULL, 1.5, NULL, NULL, NULL)",
               "INSERT INTO t (d, id, b) VALUES (NULL, 5, NULL)"]
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 't'}', 'format' = 'json')")
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id INT, name VARCHAR, d DATE, p DECIMAL(10, 2), b BLOB, "
                "ts TIMESTAMP, a INT[])")
    for sql in inserts:
        s.execute(sql)
        con.execute(sql)
    ours = [tuple(r.values()) for r in s.sql("SELECT * FROM t ORDER BY id").collect()
            .to_pylist()]
    assert ours == con.execute("SELECT * FROM t ORDER BY id").fetchall()
    assert len(ours) == 4
