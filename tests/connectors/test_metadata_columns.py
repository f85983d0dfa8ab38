"""METADATA columns of the filesystem connector (file.path, file.name, file.size,
file.modification-time), declared with or without FROM and VIRTUAL: values per file, through
filters, aggregation and parallel reads, round-tripped by SHOW CREATE TABLE; a key or type the
connector does not have, and writing such a table, are refused."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

DDL = ("CREATE TABLE t (name STRING, n INT, path STRING METADATA FROM 'file.path' VIRTUAL, "
       "`file.name` STRING METADATA, size BIGINT METADATA FROM 'file.size', "
       "mt TIMESTAMP(3) METADATA FROM 'file.modification-time') WITH ('connector' = "
       "'filesystem', 'path' = '{path}', 'format' = '{fmt}')")


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "x.csv").write_text("a,1\nb,2\n")
    (tmp_path / "y.csv").write_text("c,3\n")
    os.utime(tmp_path / "y.csv", (1_600_000_000, 1_600_000_000))
    return tmp_path


@pytest.mark.parametrize("parallelism", ["1", "2"])
def test_values_per_file(files: Path, parallelism: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": parallelism})
    s.execute(DDL.format(path=files, fmt="csv"))
    got = sorted(tuple(r.values()) for r in s.sql(
        "SELECT name, n, path, `file.name`, size, mt FROM t").collect().to_pylist())
    x_time = dt.datetime.fromtimestamp((files / "x.csv").stat().st_mtime_ns // 1_000_000
                                       / 1000, dt.UTC).replace(tzinfo=None)
    y_time = dt.datetime(2020, 9, 13, 12, 26, 40)
    assert got == [("a", 1, str(files / "x.csv"), "x.csv", 8, x_time),
                   ("b", 2, str(files / "x.csv"), "x.csv", 8, x_time),
                   ("c", 3, str(files / "y.csv"), "y.csv", 4, y_time)]
    grouped = s.sql("SELECT `file.name`, COUNT(*) AS c FROM t WHERE size > 5 GROUP BY "
                    "`file.name`").collect().to_pylist()
    assert grouped == [{"file.name": "x.csv", "c": 2}]


def test_round_trip_and_describe(files: Path) -> None:
    s = sqlengine.connect()
    s.execute(DDL.format(path=files, fmt="csv"))
    text = s.execute("SHOW CREATE TABLE t")[0].table.column(0)[0].as_py()
    assert "`path` STRING METADATA FROM 'file.path' VIRTUAL" in text
    other = sqlengine.connect()
    other.execute(text)
    assert other.catalog.table("t") == s.catalog.table("t")
    extras = {r["name"]: r["extras"] for r in s.execute("DESCRIBE t")[0].table.to_pylist()}
    assert extras["size"] == "METADATA FROM 'file.size'"


@pytest.mark.parametrize(("column", "message"), [
    ("x STRING METADATA FROM 'file.owner'", "has no metadata 'file.owner'"),
    ("x INT METADATA FROM 'file.path'", "is a STRING, not INT"),
])
def test_bad_metadata(files: Path, column: str, message: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=message) as info:
        s.execute(f"CREATE TABLE b (v STRING,\n  {column}) WITH ('connector' = "
                  f"'filesystem', 'path' = '{files}', 'format' = 'csv')")
    # (at the column's METADATA key, on its line; it was the statement's start, 1:1)
    key = column.split("FROM ")[1]
    assert (info.value.span.line, info.value.span.column) == (2, 3 + column.index(key))
    with pytest.raises(SqlEngineError, match="has no metadata"):
        s.execute("CREATE TABLE d (x STRING METADATA FROM 'file.path') WITH "
                  "('connector' = 'datagen')")


def test_writing_is_refused(files: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(DDL.format(path=files, fmt="csv"))
    with pytest.raises(SqlEngineError, match="METADATA columns is not supported"):
        s.execute("INSERT INTO t SELECT 'z', 9")
