"""Catalog statements as PyFlink 2.3 runs them (each difference was found by running the same
statements on both; on main):

- a computed column went to the end of the table's columns: SELECT *, DESCRIBE and SHOW
  CREATE TABLE of (id INT, c AS id + 100, name STRING) gave id, name, c;
- DROP TEMPORARY TABLE / VIEW dropped a permanent table or view of that name (Flink: "does not
  exist"; with IF EXISTS it leaves it);
- a created in-memory catalog's database was 'default_database' (Flink: 'default').
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _session(tmp_path: Path) -> sqlengine.Session:
    (tmp_path / "src.csv").write_text("1,alice,10.5\n2,bob,3.0\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE src (id INT, c AS id + 100, name STRING, amt DOUBLE, "
              f"PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'src.csv'}', 'format' = 'csv')")
    return s


def test_computed_columns_keep_their_declared_place(tmp_path: Path) -> None:
    s = _session(tmp_path)
    assert s.sql("SELECT * FROM src").collect().to_pylist()[0] == {
        "id": 1, "c": 101, "name": "alice", "amt": 10.5}
    described = s.execute("DESCRIBE src")[0].table.to_pylist()
    assert [(r["name"], r["null"]) for r in described] == [  # (a key column is NOT NULL)
        ("id", False), ("c", True), ("name", True), ("amt", True)]
    text = s.execute("SHOW CREATE TABLE src")[0].table.column(0)[0].as_py()
    assert text.index("`id` INT") < text.index("`c` AS") < text.index("`name` STRING")
    s.execute("CREATE TABLE copy WITH ('connector' = 'blackhole') AS SELECT * FROM src")
    assert [r["name"] for r in s.execute("DESCRIBE copy")[0].table.to_pylist()] == [
        "id", "c", "name", "amt"]
    s.execute("ALTER TABLE src ADD d AS id * 2 FIRST")
    s.execute("ALTER TABLE src ADD e AS id * 3 AFTER name")
    assert s.sql("SELECT * FROM src").collect().to_pylist()[0] == {
        "d": 2, "id": 1, "c": 101, "name": "alice", "e": 3, "amt": 10.5}


def test_drop_temporary_drops_only_temporary_objects(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute("CREATE VIEW v AS SELECT id FROM src")
    for stmt in ("DROP TEMPORARY TABLE src", "DROP TEMPORARY VIEW v"):
        with pytest.raises(SqlEngineError, match=r"temporary (table|view) '(src|v)' does not "
                           "exist"):
            s.execute(stmt)
    s.execute("DROP TEMPORARY TABLE IF EXISTS src")
    s.execute("DROP TEMPORARY VIEW IF EXISTS v")
    assert sorted(r["table name"] for r in s.execute("SHOW TABLES")[0].table.to_pylist()) == [
        "src", "v"]
    s.execute("CREATE TEMPORARY VIEW tv AS SELECT 1 AS x")
    s.execute("ALTER TABLE src SET ('csv.ignore-parse-errors' = 'true')")
    s.execute("DROP TEMPORARY VIEW tv")
    s.execute("DROP VIEW v")
    s.execute("DROP TABLE src")
    assert s.execute("SHOW TABLES")[0].table.num_rows == 0


def test_a_created_catalog_holds_the_database_default(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute("CREATE CATALOG c2 WITH ('type' = 'generic_in_memory')")
    s.execute("CREATE CATALOG c3 WITH ('type' = 'generic_in_memory', "
              "'default-database' = 'mine')")
    s.execute("CREATE TABLE c2.`default`.t (id INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '3')")
    assert s.sql("SELECT COUNT(*) AS n FROM c2.`default`.t").collect().to_pylist() == [
        {"n": 3}]
    s.execute("USE CATALOG c3")
    assert s.execute("SHOW CURRENT DATABASE")[0].table.column(0).to_pylist() == ["mine"]


def test_a_table_with_computed_columns_takes_its_physical_ones(tmp_path: Path) -> None:
    """As PyFlink 2.3 (main refused the INSERT: "it has computed columns")."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (id INT, c AS id + 100, name STRING) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path / 't'}', 'format' = 'csv')")
    s.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    s.execute("INSERT INTO t (name, id) VALUES ('z', 9)")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM t").collect().to_pylist()) \
        == [(1, 101, "a"), (2, 102, "b"), (9, 109, "z")]
    with pytest.raises(SqlEngineError, match="column 'c' of 't' is a computed column"):
        s.execute("INSERT INTO t (id, c) VALUES (1, 2)")
    with pytest.raises(SqlEngineError, match="lists 2 columns but the query returns 3"):
        s.execute("INSERT INTO t VALUES (1, 2, 'x')")


def test_positions_inside_an_add_list_as_flink(tmp_path: Path) -> None:
    """ADD (c FIRST, c AFTER x, ...): each column placed in turn (main: a parse error at
    'FIRST'); the order is PyFlink 2.3's."""
    s = _session(tmp_path)
    s.execute("ALTER TABLE src ADD (c1 AS id + 1 FIRST, c2 AS id + 2 AFTER name, c3 AS id + 3, "
              "c4 AS id + 4 AFTER c1)")
    assert s.sql("SELECT * FROM src").collect().column_names == [
        "c1", "c4", "id", "c", "name", "c2", "amt", "c3"]
    with pytest.raises(SqlEngineError, match="no column 'nope'"):
        s.execute("ALTER TABLE src ADD (y AS id FIRST, z AS id AFTER nope)")


def test_insert_with_static_partition_values(tmp_path: Path) -> None:
    """INSERT INTO | OVERWRITE t PARTITION (k = 'v', ...) [(cols)] query: the query gives the
    other columns (main: a parse error at 'PARTITION'). Rows and directories are PyFlink
    2.3's for the same statements."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (a INT, b STRING, dt STRING, hr INT) PARTITIONED BY (dt, hr) "
              f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 't'}', "
              "'format' = 'csv')")
    s.execute("INSERT INTO t PARTITION (dt = '2024-01-01', hr = 10) SELECT 1, 'x'")
    s.execute("INSERT INTO t PARTITION (dt = '2024-01-02') SELECT 2, 'y', 7")
    s.execute("INSERT INTO t PARTITION (dt = '2024-01-03') (b, a, hr) VALUES ('z', 3, 8)")
    s.execute("INSERT OVERWRITE t PARTITION (dt = '2024-01-01', hr = 10) SELECT 4, 'w'")
    assert sorted(tuple(r.values()) for r in s.sql("SELECT * FROM t").collect().to_pylist()) \
        == [(2, "y", "2024-01-02", 7), (3, "z", "2024-01-03", 8), (4, "w", "2024-01-01", 10)]
    assert sorted(str(p.parent.relative_to(tmp_path / "t")) for p in (tmp_path / "t").rglob("*")
                  if p.is_file() and not p.name.startswith(".")) == [
        "dt=2024-01-01/hr=10", "dt=2024-01-02/hr=7", "dt=2024-01-03/hr=8"]
    with pytest.raises(SqlEngineError, match="'a' is not a partition column"):
        s.execute("INSERT INTO t PARTITION (a = 1) SELECT 'x', 'd', 1")
    with pytest.raises(SqlEngineError, match="column 'dt' has a static value"):
        s.execute("INSERT INTO t PARTITION (dt = 'x') (dt, a) VALUES ('x', 1)")


def test_a_temporary_object_shadows_a_permanent_one() -> None:
    """Temporary tables and views are a layer over the permanent ones (main refused the
    temporary view: "already exists"); each step's outcome is PyFlink 2.3's."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TEMPORARY TABLE tt (id INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '2')")
    with pytest.raises(SqlEngineError, match="a temporary table 'tt' exists: drop it first"):
        s.execute("DROP TABLE tt")
    s.execute("CREATE TABLE src (id INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '3')")
    s.execute("CREATE TEMPORARY VIEW src AS SELECT 42 AS id")
    assert s.sql("SELECT * FROM src").collect().to_pylist() == [{"id": 42}]
    assert s.execute("SHOW TABLES")[0].table.column(0).to_pylist() == ["src", "tt"]
    assert s.execute("SHOW VIEWS")[0].table.column(0).to_pylist() == ["src"]
    s.execute("DROP TABLE src")  # (the permanent table: Flink drops it under the view too)
    s.execute("DROP TEMPORARY VIEW src")
    with pytest.raises(SqlEngineError, match="unknown table 'src'"):
        s.sql("SELECT COUNT(*) FROM src").collect()


def test_declared_lengths_as_flink() -> None:
    """CHAR(n) / VARCHAR(n) columns keep their declared type in DESCRIBE and SHOW CREATE TABLE
    (they showed STRING), and datagen makes strings of that length (PyFlink 2.3: 4, 3 and 100
    characters; here they were 100 each)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE g (x VARCHAR(4), c CHAR(3), b CHAR, s STRING, v VARCHAR) WITH "
              "('connector' = 'datagen', 'number-of-rows' = '3')")
    described = s.execute("DESCRIBE g")[0].table.to_pylist()
    assert [r["type"] for r in described] == ["VARCHAR(4)", "CHAR(3)", "CHAR(1)", "STRING",
                                              "STRING"]
    text = s.execute("SHOW CREATE TABLE g")[0].table.column(0)[0].as_py()
    assert "`x` VARCHAR(4),\n  `c` CHAR(3)," in text
    rows = s.sql("SELECT CHAR_LENGTH(x) AS x, CHAR_LENGTH(c) AS c, CHAR_LENGTH(b) AS b, "
                 "CHAR_LENGTH(s) AS s FROM g").collect().to_pylist()
    assert rows == [{"x": 4, "c": 3, "b": 1, "s": 100}] * 3
    s.execute("CREATE TABLE h (x VARCHAR(30)) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '2', 'fields.x.length' = '5')")
    assert s.sql("SELECT CHAR_LENGTH(x) AS n FROM h").collect().column(0).to_pylist() == [5, 5]


@pytest.mark.parametrize(("sql", "message"), [
    # (each accepted and ignored, or wrong without a word; Flink refuses them)
    ("CREATE TABLE t (a STRING) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', "
     "'format' = 'csv', 'format' = 'json')", "option 'format' is given twice"),
    ("CREATE TABLE t (a STRING) WITH ('connector' = 'filesystem', 'path' = '', "
     "'format' = 'csv')", "option 'path' must be a path"),
    ("CREATE TABLE t (ts TIMESTAMP(3), WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts - "
     "INTERVAL '1' SECOND) WITH ('connector' = 'datagen')", "one WATERMARK"),
    ("CREATE TABLE t (a CHAR(0)) WITH ('connector' = 'datagen')", r"CHAR\(0\) is out of range"),
    ("CREATE TABLE t (a STRING(5)) WITH ('connector' = 'datagen')", "STRING takes no length"),
    ("CREATE TABLE t (a FLOAT(10)) WITH ('connector' = 'datagen')", "FLOAT takes no length"),
    ("CREATE TABLE t (a VARCHAR(4)) WITH ('connector' = 'datagen', 'fields.a.length' = '10')",
     "longer than the column's VARCHAR"),
    ("CREATE TABLE t (a CHAR(4)) WITH ('connector' = 'datagen', 'fields.a.length' = '2')",
     "length of a CHAR"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.a.min' = '5.5')",
     "'fields.a.min' must be an integer"),
    ("CREATE TABLE t (a TINYINT) WITH ('connector' = 'datagen', 'fields.a.max' = '1000')",
     "out of the range of TINYINT"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.a.min' = '9', "
     "'fields.a.max' = '2')", "is greater than 'fields.a.max'"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.a.kind' = 'sequence', "
     "'fields.a.start' = '10', 'fields.a.end' = '5')", "is greater than 'fields.a.end'"),
    ("CREATE TABLE t (a DOUBLE) WITH ('connector' = 'datagen', 'fields.a.kind' = 'sequence', "
     "'fields.a.start' = '1.5', 'fields.a.end' = '3')", "'fields.a.start' must be an integer"),
    ("CREATE TABLE t (a STRING) WITH ('connector' = 'datagen', 'fields.a.length' = '2.5')",
     "'fields.a.length' must be a non-negative integer"),
    ("CREATE TABLE t (a TIMESTAMP(3)) WITH ('connector' = 'datagen', "
     "'fields.a.max-past' = 'soon')", "'fields.a.max-past' must be a duration"),
    # (failed when read with Arrow's "Decimal type with precision 7 does not fit")
    ("CREATE TABLE t (a DECIMAL(5, 2)) WITH ('connector' = 'datagen', 'fields.a.max' = "
     "'99999')", r"out of the range of DECIMAL\(5, 2\) \(-999.99..999.99\)"),
    # (2 made every value NULL and -1 none; Flink's datagen takes them so too)
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.a.null-rate' = '2')",
     "'fields.a.null-rate' is a fraction of the rows, from 0 to 1"),
    ("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'fields.a.null-rate' = '-1')",
     "'fields.a.null-rate' is a fraction of the rows"),
])
def test_refused_by_name(sql: str, message: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(SqlEngineError, match=message):
        s.execute(sql)


def test_insert_and_alter_refuse_a_name_given_twice(tmp_path: Path) -> None:
    s = _session(tmp_path)
    s.execute(f"CREATE TABLE p (a STRING, k STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'p'}', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match="column 'a' is listed twice"):
        s.execute("INSERT INTO p (a, a, k) VALUES ('only', 'x', 'k8')")
    with pytest.raises(SqlEngineError, match="option 'format' is given twice"):
        s.execute("ALTER TABLE p SET ('format' = 'json', 'format' = 'csv')")


def test_max_past_is_a_duration() -> None:
    """'fields.x.max-past' is a Flink Duration ('1 h'): it failed with "invalid literal for
    int()"."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE g (x TIMESTAMP(3)) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '50', 'fields.x.max-past' = '1 h')")
    rows = s.sql("SELECT COUNT(*) AS n FROM g WHERE x <= LOCALTIMESTAMP AND x >= "
                 "LOCALTIMESTAMP - INTERVAL '61' MINUTE").collect().to_pylist()
    assert rows == [{"n": 50}]


def test_insert_fits_values_to_declared_lengths(tmp_path: Path) -> None:
    """INSERT into a VARCHAR(2) column cuts 'abcde' to 'ab', from a literal or a STRING
    column (PyFlink 2.3 writes 'ab' and 'x'; the values were written whole); a CHAR(3) column
    pads to three characters, as CAST to CHAR(3) does."""
    (tmp_path / "src.csv").write_text("abcde\nx\n")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE src (s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'src.csv'}', 'format' = 'csv')")
    s.execute(f"CREATE TABLE v2 (a VARCHAR(2), b STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'v2'}', 'format' = 'csv')")
    s.execute("INSERT INTO v2 SELECT s, s FROM src")
    assert (tmp_path / "v2" / "part-0-0").read_text() == "ab,abcde\nx,x\n"
    s.execute(f"CREATE TABLE c3 (a CHAR(3)) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'c3'}', 'format' = 'csv')")
    s.execute("INSERT INTO c3 VALUES ('a')")
    assert (tmp_path / "c3" / "part-0-0").read_text() == '"a  "\n'  # (quoted, as Flink)


def test_describe_a_sink_with_computed_columns() -> None:
    """DESCRIBE and SHOW COLUMNS of a write-only table with a computed column failed ("cannot
    be read (it only writes)", pointing into a SELECT the statement never held)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE k (a INT, b AS a + 1, c AS UPPER(CAST(a AS STRING))) "
              "WITH ('connector' = 'blackhole')")
    for stmt in ("DESCRIBE k", "SHOW COLUMNS FROM k"):
        rows = s.execute(stmt)[0].table.to_pylist()
        assert [(r["name"], r["type"], r["extras"]) for r in rows] == [
            ("a", "INT", None), ("b", "INT", "AS `a` + 1"),
            ("c", "STRING", "AS UPPER(CAST(`a` AS STRING))")]


@pytest.mark.parametrize("sql", [
    "CREATE TEMPORARY VIEW v AS SELECT 1 AS a, 2 AS a",
    "CREATE TEMPORARY VIEW v (x, X) AS SELECT 1, 2",
    "CREATE TEMPORARY VIEW v AS SELECT u.k, w.k FROM (VALUES (1)) AS u(k), (VALUES (2)) AS w(k)",
])
def test_a_view_column_named_twice_is_refused(sql: str) -> None:
    """PyFlink 2.3: "A column with the same name `a` has been defined"; the view was created,
    its second column renamed a1."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(SqlEngineError, match="is defined twice"):
        s.execute(sql)
    s.execute("CREATE TEMPORARY VIEW ok (x, y) AS SELECT 1 AS a, 2 AS a")
    assert s.sql("SELECT * FROM ok").collect().column_names == ["x", "y"]


def test_show_create_of_the_other_kind_says_which_to_use() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE t (a INT) WITH ('connector' = 'datagen')")
    s.execute("CREATE VIEW v AS SELECT 1 AS a")
    with pytest.raises(SqlEngineError, match="SHOW CREATE VIEW 't': a table, use SHOW CREATE "
                                             "TABLE"):  # (it said "a table view")
        s.execute("SHOW CREATE VIEW t")
    with pytest.raises(SqlEngineError, match="'v': a view, use SHOW CREATE VIEW"):
        s.execute("SHOW CREATE TABLE v")


def test_timestamp_with_local_time_zone_without_a_precision() -> None:
    # ('TIMESTAMP WITH LOCAL TIME ZONE' was read as the start of a WITH query: "unexpected
    # 'WITH LOCAL TIME ZONE) ...'"; with a precision it was taken)
    s = sqlengine.connect()
    s.execute("CREATE TABLE d (t TIMESTAMP_LTZ(3), u TIMESTAMP WITH LOCAL TIME ZONE NOT NULL, "
              "v TIMESTAMP WITHOUT TIME ZONE) WITH ('connector' = 'datagen')")
    got = [(r["name"], r["type"], r["null"]) for r in s.execute("DESCRIBE d")[0].table.to_pylist()]
    assert got == [("t", "TIMESTAMP_LTZ(3)", True), ("u", "TIMESTAMP_LTZ(6)", False),
                   ("v", "TIMESTAMP(6)", True)]


def test_a_view_star_keeps_the_columns_it_had(tmp_path: Path) -> None:
    """A view's SELECT * stands for the columns the table had when the view was made, as
    Flink stores the query expanded: PyFlink 2.3 gave (1, 1.5) for a view of
    SELECT * FROM src after ALTER TABLE src ADD w INT (ours gave the new column too)."""
    (tmp_path / "src.json").write_text('{"id": 1, "name": "alice", "amt": 10.5}\n'
                                       '{"id": 2, "name": "bob", "amt": 3.0}\n')
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE src (id INT, c AS id + 100, name STRING, amt DOUBLE) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path / 'src.json'}', "
              "'format' = 'json')")
    s.execute("CREATE VIEW v AS SELECT * FROM src")
    s.execute("CREATE VIEW j (a, b) AS SELECT x.id, y.* FROM src x JOIN (SELECT id AS k FROM "
              "src) y ON x.id = y.k")
    s.execute("CREATE VIEW star2 AS SELECT x.*, y.* FROM src x JOIN src y ON x.id = y.id")
    before = s.sql("SELECT * FROM star2 ORDER BY id").collect().to_pylist()
    s.execute("ALTER TABLE src ADD (w INT FIRST, z STRING)")
    assert s.sql("SELECT * FROM v ORDER BY id").collect().to_pylist() == [
        {"id": 1, "c": 101, "name": "alice", "amt": 10.5},
        {"id": 2, "c": 102, "name": "bob", "amt": 3.0}]
    described = s.execute("DESCRIBE v")[0].table.to_pylist()
    assert [r["name"] for r in described] == ["id", "c", "name", "amt"]
    assert s.sql("SELECT * FROM star2 ORDER BY id").collect().to_pylist() == before
    assert s.sql("SELECT a, b FROM j ORDER BY a").collect().to_pylist() == [
        {"a": 1, "b": 1}, {"a": 2, "b": 2}]
    s.execute("ALTER TABLE src DROP amt")
    with pytest.raises(SqlEngineError, match=r"(?s)1:15: view 'v': its query no longer gives "
                                             r"column 'amt'.*\n {16}\^"):
        s.sql("SELECT * FROM v").collect()


def test_ddl_findings_of_a_probe_against_pyflink() -> None:
    """What PyFlink 2.3 does with these, which differed (a helper's DDL probe)."""
    s = sqlengine.connect()
    # Flink's postfix collection types and an explicit NULL (were parse errors)
    s.execute("CREATE TABLE p (v INT ARRAY, w INT NULL, m STRING MULTISET, x INT ARRAY "
              "ARRAY NOT NULL) WITH ('connector' = 'blackhole')")
    described = s.execute("DESCRIBE p")[0].table.to_pylist()
    assert [(r["name"], r["type"], r["null"]) for r in described] == [
        ("v", "ARRAY<INT>", True), ("w", "INT", True), ("m", "MULTISET<STRING>", True),
        ("x", "ARRAY<ARRAY<INT>>", False)]
    with pytest.raises(SqlEngineError, match="unexpected 'FOO' after the type INT"):
        s.execute("CREATE TABLE q (v INT FOO) WITH ('connector' = 'blackhole')")
    # IF NOT EXISTS of an existing table still checks the statement (it was skipped unread)
    with pytest.raises(SqlEngineError, match="unknown type 'FOO'"):
        s.execute("CREATE TABLE IF NOT EXISTS p (a FOO)")
    assert "already exists, skipped" in s.execute(
        "CREATE TABLE IF NOT EXISTS p (a INT) WITH ('connector' = 'blackhole')")[0].message
    # SHOW CREATE of a temporary table / view says TEMPORARY (run again, it made a permanent
    # one)
    s.execute("CREATE TEMPORARY TABLE tt (a INT) WITH ('connector' = 'blackhole')")
    s.execute("CREATE TEMPORARY VIEW tv AS SELECT 1 AS x")
    table = s.execute("SHOW CREATE TABLE tt")[0].table.column(0)[0].as_py()
    assert table.startswith("CREATE TEMPORARY TABLE `tt`")
    assert s.execute("SHOW CREATE VIEW tv")[0].table.column(0)[0].as_py().startswith(
        "CREATE TEMPORARY VIEW `tv`")
    s.execute("DROP TEMPORARY TABLE tt")
    s.execute(table)
    assert s.catalog.is_temporary("tt")
    # DROP ... IF EXISTS of the other kind does nothing, as Flink's (it failed)
    s.execute("CREATE VIEW pv AS SELECT 1 AS x")
    assert "pv is a view, kept" in s.execute("DROP TABLE IF EXISTS pv")[0].message
    assert s.catalog.view("pv") is not None
    with pytest.raises(SqlEngineError, match="'pv' is a view; use DROP VIEW"):
        s.execute("DROP TABLE pv")
    with pytest.raises(SqlEngineError, match=r"expected NOT \(a key is PRIMARY KEY \.\.\. NOT "
                       "ENFORCED"):
        s.execute("CREATE TABLE k (a INT, PRIMARY KEY (a)) WITH ('connector' = 'blackhole')")
    # A key of a computed column is named as such (it was "unknown column")
    with pytest.raises(SqlEngineError, match="'m' is a computed column: a key is of physical"):
        s.execute("CREATE TABLE k (a INT, m AS a + 1, PRIMARY KEY (m) NOT ENFORCED) WITH "
                  "('connector' = 'blackhole')")


def test_describe_as_pyflink() -> None:
    """PyFlink 2.3's DESCRIBE of this table, cell for cell, but the PROCTIME() column's type
    (ours is a TIMESTAMP(3); Flink's a TIMESTAMP_LTZ(3); both NOT NULL, ours was NULL): time
    attributes marked, the watermark by its expression, names quoted, empty cells NULL (they
    were '', the watermark "`ts` AS ts - ...")."""
    s = sqlengine.connect()
    s.execute("CREATE TABLE t2 (id INT NOT NULL, name VARCHAR(20), amount DOUBLE, ts "
              "TIMESTAMP(3), cost AS amount * 2, proc AS PROCTIME(), WATERMARK FOR ts AS ts - "
              "INTERVAL '5' SECOND, PRIMARY KEY (id) NOT ENFORCED) WITH ('connector' = "
              "'datagen')")
    rows = [tuple(r.values()) for r in s.execute("DESCRIBE t2")[0].table.to_pylist()]
    assert rows == [
        ("id", "INT", False, "PRI(id)", None, None),
        ("name", "VARCHAR(20)", True, None, None, None),
        ("amount", "DOUBLE", True, None, None, None),
        ("ts", "TIMESTAMP(3) *ROWTIME*", True, None, None, "`ts` - INTERVAL '5' SECOND"),
        ("cost", "DOUBLE", True, None, "AS `amount` * 2", None),
        ("proc", "TIMESTAMP(3) *PROCTIME*", False, None, "AS PROCTIME()", None)]
    s.execute("CREATE VIEW v AS SELECT ts, proc, id FROM t2")
    assert [(r["type"], r["null"]) for r in s.execute("DESCRIBE v")[0].table.to_pylist()] == [
        ("TIMESTAMP(3) *ROWTIME*", True), ("TIMESTAMP(3) *PROCTIME*", False), ("INT", False)]
    assert s.execute("SHOW CURRENT CATALOG")[0].table.column_names == ["current catalog name"]
    assert s.execute("SHOW CURRENT DATABASE")[0].table.column_names == [
        "current database name"]


# Views and what PyFlink 2.3's DESCRIBE shows NOT NULL of each column, in order (ours showed
# every view column nullable and made every CREATE TABLE ... AS column nullable).
NOT_NULL_VIEWS = {
    "SELECT a, b, a + 1 AS c, 1 AS `one`, CAST(a AS STRING) AS d, k, COALESCE(b, 'x') AS e, "
    "b IS NULL AS f, a / 2 AS g, CASE WHEN a > 1 THEN 1 ELSE 2 END AS h, CASE WHEN a > 1 THEN "
    "1 END AS i, TRY_CAST(b AS INT) AS j, UPPER(b) AS l, UPPER(CAST(a AS STRING)) AS m, "
    "a IN (1, 2) AS n2, 'xy' AS o FROM s": "TFTTTTTTTTFFFTTT",
    "SELECT a, COUNT(*) AS n, SUM(a) AS t, MIN(a) AS mi, COUNT(b) AS cb FROM s GROUP BY a":
        "TTTTT",
    "SELECT COUNT(*) AS n, SUM(a) AS t FROM s": "TF",
    "SELECT s1.a, s2.a AS a2 FROM s s1 LEFT JOIN s s2 ON s1.k = s2.k": "TF",
    "SELECT a FROM s UNION ALL SELECT 5": "T",
    "SELECT a FROM s UNION ALL SELECT CAST(NULL AS INT)": "F",
    "SELECT * FROM (VALUES (1, 'a'), (2, CAST(NULL AS STRING))) AS T(p, q)": "TF",
    "SELECT a, b FROM s WHERE b IS NOT NULL": "TF",
    "SELECT a, k, COUNT(*) AS n FROM s GROUP BY GROUPING SETS ((a), (a, k))": "TFT",
    "SELECT ABS(a) AS x1, CHAR_LENGTH(CAST(a AS STRING)) AS x2, -a AS x3, a % 2 AS x4, "
    "NOT (a > 1) AS x5, a = 1 AND a > 0 AS x6 FROM s": "TTTTTT",
    "SELECT a, AVG(a) AS av, SUM(a) FILTER (WHERE a > 1) AS sf, MAX(a) AS mx, FIRST_VALUE(a) "
    "AS fv, COUNT(DISTINCT a) AS cd, SUM(DISTINCT a) AS sdd FROM s GROUP BY a": "TTFTTTT",
    "SELECT a, b FROM s UNION SELECT a, 'z' FROM s": "TF",
    "SELECT a, ROW_NUMBER() OVER (PARTITION BY a ORDER BY k) AS rn FROM s": "TT",
}


@pytest.mark.parametrize("query", NOT_NULL_VIEWS)
def test_a_view_keeps_not_null_as_flink(query: str) -> None:
    """A column no row can leave NULL is NOT NULL in DESCRIBE of a view and in the table a
    CREATE TABLE ... AS makes, as PyFlink 2.3 shows them (a key column is NOT NULL too)."""
    s = sqlengine.connect()
    s.execute("CREATE TABLE s (a INT NOT NULL, b STRING, k BIGINT, PRIMARY KEY (k) NOT "
              "ENFORCED) WITH ('connector' = 'datagen', 'number-of-rows' = '3')")
    s.execute(f"CREATE VIEW v AS {query}")
    want = [c == "F" for c in NOT_NULL_VIEWS[query]]
    assert [r["null"] for r in s.execute("DESCRIBE v")[0].table.to_pylist()] == want
    s.execute(f"CREATE TABLE c WITH ('connector' = 'blackhole') AS {query}")
    assert [r["null"] for r in s.execute("DESCRIBE c")[0].table.to_pylist()] == want


@pytest.mark.parametrize(("ddl", "second"), [
    ("CREATE TABLE b (a INT, PRIMARY KEY (a) NOT ENFORCED, PRIMARY KEY (a) NOT ENFORCED) WITH "
     "('connector' = 'datagen')", ", PRIMARY KEY"),
    ("CREATE TABLE b (a INT PRIMARY KEY NOT ENFORCED, b INT PRIMARY KEY NOT ENFORCED) WITH "
     "('connector' = 'datagen')", ", b INT"),
    ("CREATE TABLE b (ts TIMESTAMP(3), WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts) WITH "
     "('connector' = 'datagen')", ", WATERMARK"),
])
def test_a_second_key_or_watermark_is_pointed_at(ddl: str, second: str) -> None:
    """(the error was placed at 1:1)"""
    with pytest.raises(SqlEngineError, match="a table has one") as info:
        sqlengine.connect().execute(ddl)
    assert info.value.span is not None
    assert info.value.span.column == ddl.rindex(second) + 3  # (1-based, after ", ")
