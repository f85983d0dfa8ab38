"""PARTITIONED BY on the filesystem connector, laid out as Flink's: hive-style k=v
directories, partition columns only in the directory names, '__DEFAULT_PARTITION__' (option
'partition.default-name') for NULL, pruning of partitions by filters on partition columns."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

FORMATS = ("csv", "json", "parquet")
ROWS = "(1, 'a', DATE '2024-01-01'), (2, 'b', DATE '2024-01-02'), (3, 'a', DATE '2024-01-02')"


def _session(path: Path, fmt: str, mode: str = "batch", extra: str = "",
             columns: str = "v INT, k STRING, d DATE", keys: str = "k, d"
             ) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"CREATE TABLE t ({columns}) PARTITIONED BY ({keys}) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}'{extra})")
    return s


def _rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    """The result's rows, in no particular order (a sorted list; NULLs last)."""
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=_key)


def _key(row: tuple) -> tuple:
    return tuple((x is None, x if x is not None else 0) for x in row)


def _ordered(rows: list[tuple]) -> list[tuple]:
    return sorted(rows, key=_key)


def _files(root: Path) -> list[str]:
    return sorted(str(f.relative_to(root)) for f in root.rglob("*") if f.is_file())


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "t"
    s = _session(root, fmt)
    s.execute(f"INSERT INTO t VALUES {ROWS}")
    assert _files(root) == ["k=a/d=2024-01-01/part-0-0", "k=a/d=2024-01-02/part-0-0",
                            "k=b/d=2024-01-02/part-0-0"]
    assert _rows(s, "SELECT * FROM t") == [
        (1, "a", dt.date(2024, 1, 1)), (2, "b", dt.date(2024, 1, 2)),
        (3, "a", dt.date(2024, 1, 2))]
    assert _rows(s, "SELECT v FROM t WHERE d = DATE '2024-01-02'") == _ordered([(2,), (3,)])
    assert _rows(s, "SELECT k, COUNT(*) FROM t GROUP BY k") == _ordered([("a", 2), ("b", 1)])
    # streaming reads the same
    again = _session(root, fmt, mode="streaming")
    assert _rows(again, "SELECT v, k FROM t WHERE k = 'a'") == _ordered([(1, "a"), (3, "a")])


def test_partition_columns_are_not_in_the_files(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for fmt in FORMATS:
        s = _session(root / fmt, fmt)
        s.execute(f"INSERT INTO t VALUES {ROWS}")
    assert (root / "csv/k=b/d=2024-01-02/part-0-0").read_text() == "2\n"
    assert json.loads((root / "json/k=b/d=2024-01-02/part-0-0").read_text()) == {"v": 2}
    assert pq.read_table(root / "parquet/k=b/d=2024-01-02/part-0-0").column_names == ["v"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_null_and_blank_values_go_to_the_default_partition(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "t"
    s = _session(root, fmt, keys="k")
    s.execute("INSERT INTO t VALUES (1, CAST(NULL AS STRING), DATE '2024-01-01'), "
              "(2, '', DATE '2024-01-01'), (3, 'a', DATE '2024-01-01')")
    assert _files(root) == ["k=__DEFAULT_PARTITION__/part-0-0", "k=a/part-0-0"]
    assert _rows(s, "SELECT v, k FROM t") == _ordered([(3, "a"), (1, None), (2, None)])
    assert _rows(s, "SELECT v FROM t WHERE k IS NULL") == _ordered([(1,), (2,)])


def test_partition_default_name_option(tmp_path: Path) -> None:
    root = tmp_path / "t"
    s = _session(root, "csv", extra=", 'partition.default-name' = 'none'", keys="k")
    s.execute("INSERT INTO t VALUES (1, CAST(NULL AS STRING), DATE '2024-01-01')")
    assert _files(root) == ["k=none/part-0-0"]
    assert _rows(s, "SELECT v, k FROM t") == _ordered([(1, None)])


def test_values_are_escaped_in_directory_names(tmp_path: Path) -> None:
    root = tmp_path / "t"
    s = _session(root, "csv", keys="k")
    s.execute("INSERT INTO t VALUES (1, 'x/y=z:%', DATE '2024-01-01')")
    assert _files(root) == ["k=x%2Fy%3Dz%3A%25/part-0-0"]
    assert _rows(s, "SELECT k FROM t WHERE k = 'x/y=z:%'") == _ordered([("x/y=z:%",)])


@pytest.mark.parametrize("fmt", FORMATS)
def test_pruned_partitions_are_not_read(tmp_path: Path, fmt: str) -> None:
    root = tmp_path / "t"
    s = _session(root, fmt)
    s.execute(f"INSERT INTO t VALUES {ROWS}")
    bad = root / "k=zz" / "d=2024-01-03"
    bad.mkdir(parents=True)
    (bad / "part-0-0").write_text("this is not a row of the table\n")
    with pytest.raises(SqlEngineError, match="k=zz"):
        s.sql("SELECT * FROM t").collect()  # the bad directory is read: it fails
    # a filter on partition columns prunes it: never opened
    assert _rows(s, "SELECT v FROM t WHERE k = 'a'") == _ordered([(1,), (3,)])
    assert _rows(s, "SELECT v FROM t WHERE k IN ('a', 'b') AND v > 1") == _ordered([(2,), (3,)])
    assert _rows(s, "SELECT v FROM t WHERE d < DATE '2024-01-03'") == _ordered([(1,), (2,), (3,)])


def test_explain_shows_the_partition_filter(tmp_path: Path) -> None:
    s = _session(tmp_path / "t", "csv")
    text = s.sql("SELECT v FROM t WHERE k = 'a' AND v > 1").explain()
    assert "partitioned=[k, d], partition-filter=[(k = 'a')]" in text


def test_typed_partition_values_and_a_bad_one(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for n in ("1", "20"):
        (root / f"n={n}").mkdir(parents=True)
        (root / f"n={n}" / "f.csv").write_text(f"{n}0\n")
    (root / "stray.csv").write_text("99\n")  # beside the partitions: not part of the table
    (root / "n=1" / ".hidden").write_text("oops\n")
    s = _session(root, "csv", columns="v INT, n INT", keys="n")
    assert _rows(s, "SELECT v, n, n + 1 FROM t") == _ordered([(10, 1, 2), (200, 20, 21)])
    assert _rows(s, "SELECT v FROM t WHERE n > 5") == _ordered([(200,)])
    (root / "n=abc").mkdir()
    (root / "n=abc" / "f.csv").write_text("1\n")
    with pytest.raises(SqlEngineError, match=r"n=abc: partition value 'abc' is not a INT"):
        s.sql("SELECT v FROM t").collect()


def test_insert_overwrite_replaces_only_the_partitions_written(tmp_path: Path) -> None:
    root = tmp_path / "t"
    s = _session(root, "csv", keys="k")
    s.execute(f"INSERT INTO t VALUES {ROWS}")
    s.execute("INSERT OVERWRITE t VALUES (9, 'a', DATE '2024-01-09')")
    assert _rows(s, "SELECT v, k FROM t") == _ordered([(9, "a"), (2, "b")])
    s.execute("INSERT INTO t SELECT v + 10, k, d FROM t WHERE k = 'b'")
    assert _rows(s, "SELECT v, k FROM t") == _ordered([(9, "a"), (12, "b"), (2, "b")])


def test_insert_with_partition_values_from_the_query(tmp_path: Path) -> None:
    root = tmp_path / "t"
    s = _session(root, "parquet", keys="k")
    s.execute("CREATE TABLE src (id INT, name STRING) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '20', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1', "
              "'fields.id.end' = '20', 'fields.name.length' = '1', 'seed' = '7')")
    s.execute("INSERT INTO t (v, k, d) SELECT id, CAST(MOD(id, 3) AS STRING), "
              "DATE '2024-01-01' FROM src")
    assert _files(root) == ["k=0/part-0-0", "k=1/part-0-0", "k=2/part-0-0"]
    assert _rows(s, "SELECT COUNT(*), SUM(v) FROM t WHERE k = '0'") == _ordered([(6, 63)])


def test_parallel_read(tmp_path: Path) -> None:
    root = tmp_path / "t"
    s = _session(root, "parquet")
    s.execute(f"INSERT INTO t VALUES {ROWS}")
    s.execute("SET 'parallelism.default' = '2'")
    s.execute("SET 'execution.native.task-mode' = 'thread'")
    assert _rows(s, "SELECT v, k FROM t WHERE v > 0") == _ordered([(1, "a"), (3, "a"), (2, "b")])


def test_windows_over_a_partitioned_table(tmp_path: Path) -> None:
    root = tmp_path / "t"
    for k, lines in {"a": "1,2024-01-01 00:00:01\n2,2024-01-01 00:00:07\n",
                     "b": "3,2024-01-01 00:00:02\n"}.items():
        (root / f"k={k}").mkdir(parents=True)
        (root / f"k={k}" / "f.csv").write_text(lines)
    s = _session(root, "csv", mode="streaming", columns="v INT, ts TIMESTAMP(3), k STRING, "
                 "WATERMARK FOR ts AS ts - INTERVAL '10' SECOND", keys="k")
    sql = ("SELECT window_start, k, SUM(v) FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
           "INTERVAL '5' SECOND)) GROUP BY window_start, window_end, k")
    w0, w5 = dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 1, 0, 0, 5)
    assert _rows(s, sql) == _ordered([(w0, "a", 1), (w0, "b", 3), (w5, "a", 2)])
    assert _rows(s, "SELECT v FROM t WHERE k = 'b'") == _ordered([(3,)])


@pytest.mark.parametrize(("ddl", "message"), [
    ("CREATE TABLE u (v INT, k STRING) PARTITIONED BY (k) WITH ('connector' = 'datagen')",
     "PARTITIONED BY is supported by the filesystem connector only"),
    ("CREATE TABLE u (v INT, k STRING) PARTITIONED BY (z) WITH ('connector' = 'filesystem', "
     "'path' = '/tmp/u', 'format' = 'csv')", "PARTITIONED BY names unknown column 'z'"),
    ("CREATE TABLE u (v INT, c AS v + 1) PARTITIONED BY (c) WITH ('connector' = "
     "'filesystem', 'path' = '/tmp/u', 'format' = 'csv')",
     "PARTITIONED BY names computed column 'c'"),
    ("CREATE TABLE u (v INT) PARTITIONED BY (v) WITH ('connector' = 'filesystem', "
     "'path' = '/tmp/u', 'format' = 'csv')", "PARTITIONED BY names every column"),
    ("CREATE TABLE u (v INT, k INT) PARTITIONED BY (k, k) WITH ('connector' = 'filesystem', "
     "'path' = '/tmp/u', 'format' = 'csv')", "names column 'k' twice"),
    ("CREATE TABLE u (v INT) WITH ('connector' = 'filesystem', 'path' = '/tmp/u', "
     "'format' = 'csv', '$partition-keys' = '[\"v\"]')",
     "option keys starting with '$' are reserved"),
    ("INSERT INTO t PARTITION (v = 1) SELECT 'a', DATE '2024-01-01'",
     "'v' is not a partition column"),
])
def test_refusals(tmp_path: Path, ddl: str, message: str) -> None:
    s = _session(tmp_path / "t", "csv", keys="k")
    with pytest.raises(SqlEngineError, match=message.replace("(", r"\(").replace("$", r"\$")):
        s.execute(ddl)


def test_timestamp_and_boolean_directories_are_flinks(tmp_path: Path) -> None:
    """TIMESTAMP and BOOLEAN partition values are named as Flink 2.3's writer names them (Java's
    LocalDateTime and Boolean text: 't=2024-01-01T10%3A11', seconds and fraction only when not
    0, 'b=true'; PyFlink 2.3 wrote the same tree from the same rows), and either engine reads
    the other's: main wrote 't=2024-01-01 00%3A00%3A00.000' and 'b=TRUE', which Flink could not
    read, and could not read Flink's ('not a TIMESTAMP(3)')."""
    root = tmp_path / "t"
    s = _session(root, "csv", columns="a INT, t TIMESTAMP(3), b BOOLEAN", keys="t, b")
    s.execute("INSERT INTO t VALUES (1, TIMESTAMP '2024-01-01 00:00:00', TRUE), "
              "(2, TIMESTAMP '2024-01-01 10:11:12.123', FALSE), "
              "(3, TIMESTAMP '2024-01-01 10:11:00', TRUE)")
    assert _files(root) == ["t=2024-01-01T00%3A00/b=true/part-0-0",
                            "t=2024-01-01T10%3A11%3A12.123/b=false/part-0-0",
                            "t=2024-01-01T10%3A11/b=true/part-0-0"]
    want = [(1, dt.datetime(2024, 1, 1), True),
            (2, dt.datetime(2024, 1, 1, 10, 11, 12, 123000), False),
            (3, dt.datetime(2024, 1, 1, 10, 11), True)]
    assert _rows(s, "SELECT a, t, b FROM t") == want
    # (a directory of the form main wrote still reads)
    old = tmp_path / "old" / "t=2024-01-01 10%3A11%3A00.000" / "b=TRUE"
    old.mkdir(parents=True)
    (old / "part-0-0").write_text("3\n")
    s2 = _session(tmp_path / "old", "csv", columns="a INT, t TIMESTAMP(3), b BOOLEAN",
                  keys="t, b")
    assert _rows(s2, "SELECT a, t, b FROM t") == [(3, dt.datetime(2024, 1, 1, 10, 11), True)]
