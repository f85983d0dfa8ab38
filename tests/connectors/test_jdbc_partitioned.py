"""The jdbc connector's partitioned scan (Flink's 'scan.partition.*') against the real
PostgreSQL 15 (127.0.0.1:5432, trust auth, database test): the ranges Flink's
JdbcNumericBetweenParametersProvider makes, a 50,000-row table with NULLs read at parallelism 1
and 2 giving the rows DuckDB selects from the same rows under Flink's bounds (rows outside
[lower, upper] or NULL in the partition column are not read), each subtask its own ranges, DATE /
TIMESTAMP / DOUBLE partition columns, and the option combinations refused naming the key."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Any

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.connectors import ReadStats, SourceRead
from sqlengine.connectors.jdbc import CONNECTOR
from sqlengine.connectors.jdbc_splits import Partitioning
from sqlengine.errors import SqlEngineError
from tests.connectors.test_jdbc_postgres import URL, _sql, pg  # noqa: F401  (the fixture)

duckdb = pytest.importorskip("duckdb")

ROWS = 50_000
DDL = ("id BIGINT, grp INT, v DOUBLE, name STRING, d DATE, ts TIMESTAMP(6)")


@pytest.mark.parametrize(("lower", "upper", "num", "expected"), [
    # (Flink's NumericBetweenParametersProviderTest)
    (-5, 8, 4, [(-5, -2), (-1, 2), (3, 5), (6, 8)]),
    (0, 2, 4, [(0, 0), (1, 1), (2, 2)]),  # (more partitions than values: one per value)
    (-5, -5, 1, [(-5, -5)]),
    (0, 9, 3, [(0, 3), (4, 6), (7, 9)]),
    (1, 10, 2, [(1, 5), (6, 10)]),
])
def test_ranges_are_flinks(lower: int, upper: int, num: int,
                           expected: list[tuple[int, int]]) -> None:
    assert Partitioning("c", num, lower, upper).ranges() == expected


def test_ranges_cover_wide_bounds_without_a_gap() -> None:
    """In integers: no value is lost to floating point however wide the bounds (the bug
    FLINK-38046 fixes in Flink)."""
    lo, hi = 2260418954055131340, 3875220057236942850
    ranges = Partitioning("c", 3, lo, hi).ranges()
    assert ranges[0][0] == lo and ranges[-1][1] == hi
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(ranges))


@pytest.fixture(scope="module")
def table(pg: Any) -> Any:  # noqa: F811
    """50,000 rows: id 1..50,000 with every 97th NULL, a DOUBLE with fractions, NULLs in
    every column."""
    name = f"part_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {name} (id BIGINT, grp INT, v DOUBLE PRECISION, name TEXT, d DATE, "
             "ts TIMESTAMP)",
         f"INSERT INTO {name} SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g END, g % 13, "
         "CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 1000) / 4.0 END, "
         "CASE WHEN g % 7 = 0 THEN NULL ELSE 'n' || (g % 100) END, "
         "CASE WHEN g % 17 = 0 THEN NULL ELSE DATE '2020-01-01' + (g % 800) END, "
         "CASE WHEN g % 19 = 0 THEN NULL ELSE TIMESTAMP '2020-01-01 00:00:00' "
         "+ (g::BIGINT * 1234567) * INTERVAL '1 microsecond' END "
         f"FROM generate_series(1, {ROWS}) AS g")
    with pg.cursor() as cur:
        cur.execute(f"SELECT id, grp, v, name, d, ts FROM {name}")
        everything = cur.fetch_arrow_table()
    pg.commit()
    yield name, everything
    _sql(pg, f"DROP TABLE IF EXISTS {name}")


def _session(name: str, parallelism: int, options: str) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": str(parallelism)})
    s.execute(f"CREATE TABLE t ({DDL}) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
              f"'table-name' = '{name}', 'username' = 'root', {options})")
    return s


def _key(row: tuple) -> tuple:
    return tuple((x is None, x if x is not None else 0) for x in row)


def _rows(table: pa.Table) -> list[tuple]:
    cols = [c.to_pylist() for c in table.columns]
    return sorted(zip(*cols, strict=True), key=_key)


def _duckdb(everything: pa.Table, where: str) -> list[tuple]:
    con = duckdb.connect()
    con.register("src", everything)
    got = con.execute(f"SELECT id, grp, v, name, d, ts FROM src WHERE {where}").to_arrow_table()
    return _rows(got)


def _options(column: str, num: int, lower: int, upper: int) -> str:
    return (f"'scan.partition.column' = '{column}', 'scan.partition.num' = '{num}', "
            f"'scan.partition.lower-bound' = '{lower}', "
            f"'scan.partition.upper-bound' = '{upper}'")


@pytest.mark.parametrize("parallelism", [1, 2])
def test_partitioned_scan_reads_flinks_rows(table: Any, parallelism: int) -> None:
    name, everything = table
    # Bounds inside the data: rows below 100, above 45,000 and with a NULL id are not read.
    s = _session(name, parallelism, _options("id", 7, 100, 45_000))
    got = s.sql("SELECT id, grp, v, name, d, ts FROM t").collect()
    expected = _duckdb(everything, "id BETWEEN 100 AND 45000")
    assert len(expected) == 45_000 - 100 + 1 - sum(1 for g in range(100, 45_001) if g % 97 == 0)
    assert _rows(got) == expected
    # An aggregate over a projection of it, at this parallelism.
    agg = s.sql("SELECT COUNT(*) AS n, SUM(grp) AS g, COUNT(v) AS nv FROM t").collect()
    con = duckdb.connect()
    con.register("src", everything)
    n, g, nv = con.execute("SELECT COUNT(*), SUM(grp), COUNT(v) FROM src "
                           "WHERE id BETWEEN 100 AND 45000").fetchone()
    assert agg.to_pylist() == [{"n": n, "g": g, "nv": nv}]


@pytest.mark.parametrize("parallelism", [1, 2])
def test_bounds_covering_the_table_read_every_non_null_row(table: Any,
                                                           parallelism: int) -> None:
    name, everything = table
    s = _session(name, parallelism, _options("id", 4, -10, ROWS + 10))
    got = s.sql("SELECT id, grp, v, name, d, ts FROM t WHERE name IS NOT NULL").collect()
    assert _rows(got) == _duckdb(everything, "id IS NOT NULL AND name IS NOT NULL")


def test_each_subtask_reads_its_own_ranges(table: Any) -> None:
    name, everything = table
    schema = pa.schema([("id", pa.int64()), ("grp", pa.int32()), ("v", pa.float64()),
                        ("name", pa.string()), ("d", pa.date32()),
                        ("ts", pa.timestamp("us"))])
    options = {"connector": "jdbc", "url": URL, "table-name": name,
               "scan.partition.column": "id", "scan.partition.num": "5",
               "scan.partition.lower-bound": "1", "scan.partition.upper-bound": str(ROWS)}
    ranges = Partitioning("id", 5, 1, ROWS).ranges()
    seen: list[set[int]] = []
    for subtask in range(2):
        read = SourceRead("t", options, schema, ReadStats(), split=(subtask, 2), columns=[0])
        ids = {i for b in CONNECTOR.open_source(read) for i in b.column(0).to_pylist()}
        mine = ranges[subtask::2]
        assert ids and all(any(lo <= i <= hi for lo, hi in mine) for i in ids)
        seen.append(ids)
    assert not seen[0] & seen[1]
    assert seen[0] | seen[1] == {i for i in everything.column("id").to_pylist()
                                 if i is not None}
    # More subtasks than ranges: the extra subtask reads nothing.
    options["scan.partition.num"] = "1"
    read = SourceRead("t", options, schema, ReadStats(), split=(1, 2), columns=[0])
    assert list(CONNECTOR.open_source(read)) == []


@pytest.mark.parametrize("parallelism", [1, 2])
def test_date_timestamp_and_double_partition_columns(table: Any, parallelism: int) -> None:
    name, everything = table
    # DATE: days since 1970-01-01 (2020-01-01 is day 18262).
    s = _session(name, parallelism, _options("d", 3, 18262 + 10, 18262 + 500))
    got = s.sql("SELECT id, grp, v, name, d, ts FROM t").collect()
    assert _rows(got) == _duckdb(
        everything, "d BETWEEN DATE '2020-01-11' AND DATE '2021-05-15'")
    # TIMESTAMP: milliseconds since 1970-01-01 UTC; microsecond values between two ranges'
    # milliseconds are read (a range [a, b] reads a <= ts < b + 1 ms).
    start = int(dt.datetime(2020, 1, 1, tzinfo=dt.UTC).timestamp() * 1000)
    lo, hi = start + 1_000_000, start + 40_000_000
    s = _session(name, parallelism, _options("ts", 6, lo, hi))
    got = s.sql("SELECT id, grp, v, name, d, ts FROM t").collect()
    assert _rows(got) == _duckdb(
        everything, "ts >= TIMESTAMP '2020-01-01 00:16:40' AND "
                    "ts < TIMESTAMP '2020-01-01 11:06:40.001'")
    # DOUBLE: Flink's BETWEEN on integer bounds, so a fraction strictly between one range's
    # end and the next one's start is not read (as in Flink).
    s = _session(name, parallelism, _options("v", 4, 0, 99))
    ranges = Partitioning("v", 4, 0, 99).ranges()
    got = s.sql("SELECT id, grp, v, name, d, ts FROM t").collect()
    where = " OR ".join(f"v BETWEEN {a} AND {b}" for a, b in ranges)
    assert _rows(got) == _duckdb(everything, where)
    assert 24.5 not in got.column("v").to_pylist()  # (between [0, 24] and [25, 49])
    assert 24.0 in got.column("v").to_pylist()


@pytest.mark.parametrize(("options", "key", "message"), [
    ("'scan.partition.column' = 'id'", "scan.partition.num",
     "'scan.partition.num', 'scan.partition.lower-bound', 'scan.partition.upper-bound' are "
     "missing"),
    ("'scan.partition.column' = 'id', 'scan.partition.num' = '2', "
     "'scan.partition.lower-bound' = '0'", "scan.partition.upper-bound",
     "'scan.partition.upper-bound' is missing"),
    ("'scan.partition.num' = '2', 'scan.partition.lower-bound' = '0', "
     "'scan.partition.upper-bound' = '9'", "scan.partition.column",
     "'scan.partition.column' is missing"),
    (_options("id", 0, 0, 9), "scan.partition.num", "must be a positive integer"),
    (_options("id", 2, 0, 9).replace("'0'", "'zero'"), "scan.partition.lower-bound",
     "must be an integer"),
    (_options("id", 2, 0, 9).replace("'9'", "'9.5'"), "scan.partition.upper-bound",
     "must be an integer"),
    (_options("d", 2, 0, 9).replace("'0'", "'2020-01-01'"), "scan.partition.lower-bound",
     "must be an integer"),
    (_options("id", 2, 10, 9), "scan.partition.lower-bound",
     "'scan.partition.lower-bound'='10' must not be larger than "
     "'scan.partition.upper-bound'='9'"),
    (_options("name", 2, 0, 9), "scan.partition.column",
     "column 'name' is STRING; a partitioned scan needs a numeric, DATE or TIMESTAMP column"),
    (_options("nope", 2, 0, 9), "scan.partition.column", "names no column of the table"),
    ("'scan.auto-commit' = 'true'", "scan.auto-commit", "not implemented"),
])
def test_refused_naming_the_key(options: str, key: str, message: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(SqlEngineError) as e:
        s.execute(f"CREATE TABLE t ({DDL}) WITH ('connector' = 'jdbc', 'url' = '{URL}', "
                  f"'table-name' = 'x', {options})")
    assert key in str(e.value) and message in str(e.value)
    if "missing" in message:
        assert "partitioned scans need all or none of" in str(e.value)


@pytest.mark.parametrize("parallelism", [1, 3])
def test_bounds_past_years_1_to_9999_read_each_row_once(pg: Any, parallelism: int  # noqa: F811
                                                        ) -> None:
    """Ranges past what a DATE / TIMESTAMP holds were clamped to its limits, so they
    overlapped there (rows of year 1 and 9999 read twice) and the last range stopped a
    millisecond short of 9999-12-31 23:59:59.999 (rows from there lost)."""
    name = f"edge_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {name} (id INT, d DATE, ts TIMESTAMP)",
         f"INSERT INTO {name} VALUES (1, '0001-01-01', '0001-01-01 00:00:00'), "
         "(2, '2020-01-01', '2020-01-01 00:00:00'), "
         "(3, '9999-12-31', '9999-12-31 23:59:59.999'), "
         "(4, '9999-12-30', '9999-12-31 23:59:59.9995'), (5, NULL, NULL)")
    try:
        for column, lower, upper, num in [("d", -10_000_000, 10_000_000, 3),
                                          ("d", -10_000_000, 10_000_000, 7),
                                          ("ts", 0, 253402300799999, 2),
                                          ("ts", -(2**63), 2**63 - 1, 5)]:
            s = sqlengine.connect({"execution.runtime-mode": "batch",
                                   "parallelism.default": str(parallelism)})
            s.execute(f"CREATE TABLE t (id INT, d DATE, ts TIMESTAMP(6)) WITH ('connector' = "
                      f"'jdbc', 'url' = '{URL}', 'table-name' = '{name}', 'username' = "
                      f"'root', {_options(column, num, lower, upper)})")
            ids = sorted(r["id"] for r in s.sql("SELECT id FROM t").collect().to_pylist())
            want = [1, 2, 3, 4] if lower < 0 else [2, 3, 4]
            assert ids == want, (column, lower, upper, num)
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {name}")
